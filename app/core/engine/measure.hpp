#pragma once
// [SECTION] The measuring policy and the one sampling loop every backend runs.
// A MeasurePolicy says how to warm up and when to stop taking samples. Two named policies:
// - quick (the GUI's interactive runs and `tilescope run`): a few warm-up launches, a fixed number of timed
//   launches, a short wall-clock cap, no noise rule: an answer within a frame or two of a typical kernel;
// - bench (`tilescope bench`, sweeps), after NVIDIA/nvbench: warm-up of at least 3 launches and 50 ms, then
//   samples until there are at least 10 of them AND 0.5 s of kernel time AND the noise (relative standard
//   deviation) is under 0.5 %, or a time limit is hit; optionally with a cold L2 before every sample.
// measure() runs that policy over three callbacks a backend provides (an untimed launch, a timed launch, a
// clock reading), so the CUDA and the CPU backend warm up, sample, stop and summarise identically. With
// interleave_reference, the backend also gives it the reference (cuBLAS of the kernel's precision) to time
// sample by sample between the kernel's samples: a GPU at its power limit slows both alike, so "% of cuBLAS"
// compares two kernels measured under the same conditions, not whichever ran first against the later one.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/base/cancel.hpp"
#include "core/engine/stats.hpp"

namespace ts {

struct MeasurePolicy {
  std::string name = "quick";  // "quick", "bench" or "fixed": carried into every result
  int warmup_launches = 2;     // untimed launches first, at least this many ...
  double warmup_seconds = 0;   // ... and at least this long (wall clock)
  int min_samples = 10;
  double min_seconds = 0;   // of measured kernel time (sum of the samples)
  double max_noise = 0;     // stop once stddev / mean is below this; 0: no noise rule
  double max_seconds = 10;  // wall-clock limit per point (sampling; warm-up gets the same again)
  int max_samples = 100000;
  bool cold_l2 = false;     // flush the L2 cache before every sample (outside the timing)
  bool time_failed = true;  // time a kernel that failed verification (GUI: show the teaching variants' speed)
  // Time the reference (cuBLAS of the same shape and precision, into a scratch buffer) after every kernel
  // sample, in the same loop (measure(), MeasureHooks::reference_timed). The backend decides where there is
  // one: not for cuBLAS itself, a person's kernel in the worker process, or the CPU backend.
  bool interleave_reference = false;
  // Short launches: a sample times as many back-to-back launches as last at least this long together (the
  // fastest of three single launches decides how many, at most kMaxLaunchesPerSample) and is their mean, so
  // that a 25 us launch is not timed alone against the event timer's resolution and the launch's own jitter.
  // Each launch in a sample includes the gap to the next (the GPU's time between two launches on a stream,
  // about a microsecond), the interleaved reference is timed the same way, and the result records how many
  // launches each sample held. 0, or cold_l2 (a flush before every launch would be needed): one launch per
  // sample.
  double min_sample_ms = 0;
  // Also time the kernel on inputs that change between samples (issue 30): kChangingInputSets sets of A and
  // B, made before the timing and switched between launches outside the timed region (measure_changing), and
  // check C against the reference of those inputs, so that a kernel that caches its answer (computes C once
  // and returns early on later launches), or one timed on the same A and B whose results a cache holds, is
  // caught. The result carries both timings (RunRecord::changing).
  bool changing_inputs = false;
  static constexpr int kChangingInputSets = 3;  // the run's own A and B (set 0) and two more

  static constexpr int kMaxLaunchesPerSample = 1000;
  // The launches one sample holds under min_sample_ms, given the fastest single launch (1 when off).
  int launches_per_sample(double single_launch_ms) const;
  static MeasurePolicy quick();  // 2 warm-ups, exactly 10 samples, 2 s cap (3x that with fewer than 10)
  static MeasurePolicy bench();  // nvbench-style, as described above; failed kernels are not timed;
                                 // interleave_reference on; samples of at least 1 ms (min_sample_ms)
  // bench for a CPU (the CPU backend's Backend::bench_policy()): a CPU shared with the operating system and
  // other programs never holds a kernel's time to 0.5 %, so under bench() every point runs to its sample or
  // time limit. Instead, as benchmark tools do on a CPU (Google Benchmark's fixed time budget, hyperfine's
  // minimum runs): a short warm-up, at least kCpuBenchMinSamples samples and 0.05 s of kernel time, a noise
  // target that ends a point early when the CPU is quiet (kCpuBenchNoise), and a time budget per point
  // (kCpuBenchSeconds), so that a sweep point costs a fraction of a second whatever the CPU is doing; a
  // launch so slow that the minimum samples take longer stops at 3 x the budget (should_stop).
  static MeasurePolicy cpu_bench();
  static constexpr int kCpuBenchMinSamples = 10;
  static constexpr double kCpuBenchNoise = 0.02, kCpuBenchSeconds = 0.5;
  static MeasurePolicy fixed(int samples, int warmup = 0);  // exactly `samples` samples (tests, --samples)
  std::string describe() const;                             // one line for outputs and figure captions
};

// Throws ValidationError naming the field and its allowed range (min_samples >= 1, max_samples >=
// min_samples, times finite and >= 0, max_seconds > 0, noise in [0, 1)).
void validate_policy(const MeasurePolicy& p);

// Why sampling stopped. Converged only where the policy has a noise target and met it (with its minimum
// samples and time); a policy without one (quick, fixed) stops at CountReached once its minimum is in.
enum class StopReason { Continue, Converged, TimeLimit, SampleLimit, CountReached };
// "running", "converged", "time limit", "sample limit", "samples taken": the `stop` field of results,
// sessions and bench tables.
const char* to_string(StopReason r);
// The reason in words for people, with the noise (stddev / mean) of the `samples` taken: "converged: noise
// 0.21 %, under the policy's target", "3 samples, as many as the policy takes (it has no noise target)",
// "stopped at the time limit with noise 57 %". `stop` is to_string() of the reason (other text is returned
// as it is).
std::string describe_stop(const std::string& stop, double noise, int samples);

// noise = stddev / mean of the samples (0 for fewer than 2).
double noise(const std::vector<double>& samples);

// The stop rule, asked after each sample (samples in ms, each the mean of launches_per_sample launches;
// wall_s = wall-clock time spent sampling):
// - Converged: a noise rule (max_noise > 0), at least min_samples, at least min_seconds of kernel time (every
//   launch counted), and noise under max_noise;
// - CountReached: no noise rule, at least min_samples and at least min_seconds of kernel time;
// - SampleLimit: max_samples reached without converging;
// - TimeLimit: wall_s >= max_seconds once min_samples are in, or wall_s >= 3 max_seconds in any case (a
//   kernel so slow that the minimum itself would take forever);
// - otherwise Continue.
StopReason should_stop(const std::vector<double>& samples_ms, double wall_s, const MeasurePolicy& p,
                       int launches_per_sample = 1);

// What a backend reads after each sample: the SM clock (0: unknown) and the active throttle reasons (power or
// thermal limits, named; empty when none).
struct ClockReading {
  double sm_mhz = 0;
  std::string throttle;
};

// The clock over one measured point.
struct ClockRecord {
  bool available = false;  // the backend could read the SM clock (NVML on the GPU; never on the CPU)
  double min_mhz = 0, median_mhz = 0, max_mhz = 0;
  double device_max_mhz = 0;     // the device's maximum SM clock (the throttle rule's reference)
  bool throttled = false;        // a throttle reason was seen, or the clock fell under 90 % of the maximum
  std::string throttle_reasons;  // every reason seen, joined with ','
  std::string note;              // why there is no clock (e.g. "CPU backend: no SM clock")
};
ClockRecord summarize_clocks(const std::vector<ClockReading>& readings, double device_max_mhz);

// A kernel and its interleaved reference ran at different clocks when their median SM clocks differ by more
// than kClocksDifferPct percent of the reference's median (false when either clock is unknown). Their ratio
// then compares more than the two kernels.
inline constexpr double kClocksDifferPct = 1.0;
bool clocks_differ(const ClockRecord& kernel, const ClockRecord& reference);

// What the sampling loop needs from a backend. `timed` launches once and returns its time in milliseconds
// (measured on the device where there is one); `untimed` launches once and waits; `flush` empties the L2
// cache (only called with cold_l2); `clock` reads the clock after a sample (may be empty).
// The reference (optional; empty: none): `reference_timed` launches it once, waits, and returns its time in
// milliseconds; `reference_clock` reads the clock after it (may be empty). It must not touch the kernel's
// output.
struct MeasureHooks {
  // Launches each `timed` (and `reference_timed`) call makes; what it returns is their mean
  // (MeasurePolicy::min_sample_ms).
  int launches_per_sample = 1;
  std::function<void()> untimed;
  std::function<double()> timed;
  // measure_changing with launches_per_sample > 1: a timed batch that calls `before_each` before each of its
  // launches (outside the GPU's work: it picks the next input set), so every launch of a batch reads another
  // set. Without it, a sample on changing inputs is one launch.
  std::function<double(const std::function<void()>& before_each)> timed_each;
  std::function<void()> flush;
  std::function<ClockReading()> clock;
  std::function<double()> reference_timed;
  std::function<ClockReading()> reference_clock;
};

struct Measurement {
  std::vector<double> samples_ms;  // per launch: each the mean of launches_per_sample launches
  int launches_per_sample = 1;
  SampleStats stats;
  double noise = 0;
  StopReason stop = StopReason::Continue;
  int warmups = 0;
  double wall_s = 0;  // sampling only
  std::vector<ClockReading> clocks;
  int64_t frames_drawn = 0;  // frames the window drew while this point warmed up and sampled (TimingGate)
  // The interleaved reference (empty without MeasureHooks::reference_timed): one sample right after each of
  // the kernel's, and its clock reading after each.
  std::vector<double> reference_samples_ms;
  SampleStats reference_stats;
  double reference_noise = 0;
  int reference_warmups = 0;
  std::vector<ClockReading> reference_clocks;
  int last_input_set = 0;  // measure_changing: the input set of the last launch (0: the run's own)
};

// [SECTION] Timing and drawing. A window that draws while a kernel is timed shares the GPU with it: every
// frame is an OpenGL context switch (and the heatmaps' CUDA work), and on the H100 a window drawing 336
// frames a second made 4096^3 tiled kernels 40 % slower than `tilescope bench` measured them. So measure()
// holds the gate while it samples; a window asks pace() before each frame and draws at most
// kTimingFrameInterval apart while the gate is held (it keeps its input alive in between), and counts the
// frames it drew. Every measurement carries the frames drawn during it, so a point that was measured while
// drawing says so.
class TimingGate {
 public:
  static constexpr double kTimingFrameInterval = 0.25;  // seconds between frames while timing (4 a second)
  static TimingGate& instance();

  struct Hold {  // RAII: timing in progress (nests; several measuring threads may hold it at once)
    Hold();
    ~Hold();
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
  };
  bool timing() const { return m_holds.load() > 0; }
  // Seconds the window should wait before its next frame (0: draw now); `now_s` is a steady clock in
  // seconds. Without timing, always 0.
  double pace(double now_s) const;
  void frame_drawn(double now_s);  // the window drew (and submitted) a frame at now_s
  int64_t frames() const { return m_frames.load(); }
  double last_frame_s() const { return m_last_frame_s.load(); }  // clock_s() of the last frame_drawn()
  // The clock pace() and frame_drawn() are given, in seconds: the steady clock, or the one a test installed
  // with set_clock (nullptr: the steady clock again), so that pacing is checked against counted clock
  // readings instead of the machine's speed.
  static double clock_s();
  using Clock = double (*)();
  static void set_clock(Clock clock);

 private:
  static std::atomic<Clock> s_clock;
  std::atomic<int> m_holds{0};
  std::atomic<int64_t> m_frames{0};
  std::atomic<double> m_last_frame_s{-1e9};
};

// Warm-up (at least warmup_launches and warmup_seconds; cut short after max_seconds), then samples until
// should_stop says so. `already_warm` launches were made just before (the verification launch) and count
// towards warmup_launches. Checks `cancel` between launches (throws Cancelled).
// With a reference hook: the reference is first launched as often as the kernel already was
// (`already_warm`), then every warm-up launch of the kernel is followed by one of the reference, and every
// sample of the kernel (after its clock reading) by one sample of the reference (after a flush of its own
// with cold_l2) and its clock reading: K R K R ... The stop rule reads the kernel's samples only; the wall
// clock it is given counts both.
Measurement measure(const MeasurePolicy& p, const MeasureHooks& hooks, const CancelToken& cancel,
                    int already_warm = 0);

// [SECTION] Changing inputs (MeasurePolicy::changing_inputs). The input set of the n-th launch (from 0) of a
// measurement on `sets` input sets: 1, 2, ..., sets - 1, 0, 1, ... (the verification launch before it was on
// the run's own set 0, so the first launch already sees other inputs).
inline int changing_input_set(int64_t launch, int sets) {
  return sets > 1 ? int((launch + 1) % sets) : 0;
}
// measure() on `sets` input sets: `use(set)` is called before every launch, warm-up or sample, to make that
// set the one the next launch reads: outside the timing (after the L2 flush) for a sample of one launch, and
// between the launches of a batch (MeasureHooks::timed_each, with launches_per_sample > 1: short launches are
// timed as the fixed inputs' are, so the two timings compare). No interleaved reference (the policy's is
// ignored); `already_warm` launches made before it (the batch's probes) count as warm-ups.
// Measurement::last_input_set: the last launch's set.
Measurement measure_changing(const MeasurePolicy& p, const MeasureHooks& hooks,
                             const std::function<void(int)>& use, int sets, const CancelToken& cancel,
                             int already_warm = 0);

}  // namespace ts

#pragma once
// [SECTION] Sweeps: one measurement per size x kernel x tile, through the engine (Backend::run) under one
// policy (MeasurePolicy::bench() by default), for `tilescope bench --sizes` and the GUI's Sweep panel.
//   parse_sizes      "256:8192:256", "256:8192:x2", "1000,1024,4099": the sizes, validated
//   SweepSpec        sizes, square or M / K fixed, ragged sizes, kernels x tiles -> expand_sweep() -> points
//   run_sweep        blocking, with a callback per point (the command line)
//   SweepRunner      the same on a thread of its own, for a frame loop: start, progress(), take_finished(),
//                    cancel() (finished points are kept)
//   wave_marks       where a configuration's grid needs one more wave: the wave-quantisation sawtooth
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/engine/backend.hpp"

namespace ts {

inline constexpr int kMaxSweepSizes = 1024;   // sizes in one sweep
inline constexpr int kMaxSweepPoints = 4096;  // sizes x configurations in one sweep

// Parses comma-separated items, each a size N, a linear range FROM:TO:STEP (FROM, FROM + STEP, ... while <=
// TO) or a geometric range FROM:TO:xF (FROM, FROM F, FROM F^2, ... while <= TO; x2 from a power of two gives
// powers of two). Returns the sizes sorted, without duplicates. Throws ValidationError naming the item for:
// an empty list or item, text that is not a whole number, 0 or a negative number, a size above kMaxDim,
// FROM > TO, STEP 0, a factor under 2 (or above 1024), and more than kMaxSweepSizes sizes (counted before any
// is generated).
std::vector<int64_t> parse_sizes(const std::string& text);

// Which dimensions follow the swept size s.
enum class SweepShape {
  Square,  // M = N = K = s
  FixedM,  // M fixed, N = K = s
  FixedK,  // K fixed, M = N = s
};
const char* to_string(SweepShape s);  // "square", "fixed-m", "fixed-k"

struct KernelTile {
  std::string kernel;
  int tile = 0;  // 0: the kernel has no tile parameter
  bool operator==(const KernelTile& o) const { return kernel == o.kernel && tile == o.tile; }
  std::string label() const;  // "tiled T=32", "cublas"
};

struct SweepSpec {
  std::vector<int64_t> sizes;  // parse_sizes()
  SweepShape shape = SweepShape::Square;
  int64_t fixed = 0;  // M (FixedM) or K (FixedK)
  int ragged = 0;     // > 0: every size s also as s + ragged (a partial tile at every size), 1..1024
  std::vector<KernelTile> configs;
  InputKind input = InputKind::Random;
  uint64_t seed = 1;

  // The problem for size s and one configuration.
  ProblemSpec problem(int64_t s, const KernelTile& c) const;
  // The sizes measured: `sizes`, plus the ragged ones, sorted (the x axis of the plots).
  std::vector<int64_t> all_sizes() const;
  // "N = 256..8192 step 256 (32 sizes), M = N = K, 5 configurations"
  std::string describe() const;
  // The axis the sizes are on: "M = N = K", "N = K (M = 1024)", "M = N (K = 1024)".
  std::string axis_label() const;
  // The swept size of a point of this sweep (N for Square and FixedM, M = N for FixedK).
  int64_t size_of(const ProblemSpec& p) const;
};

// The points in measuring order: size-major (every configuration at a size before the next size), so a
// cancelled sweep leaves whole columns. Throws ValidationError: no sizes or configurations, a fixed M or K
// missing or out of 1..kMaxDim, ragged outside 0..1024, or more than kMaxSweepPoints points.
std::vector<ProblemSpec> expand_sweep(const SweepSpec& spec);

// [SECTION] Shards: one sweep spread over several machines (`tilescope bench --shard I/N`, a Slurm job
// array), its parts joined again by `tilescope merge` (core/io/merge.hpp). Interleaved: point p of the whole
// sweep's point list (0-based, in measuring order) belongs to shard (p mod N) + 1, so every shard gets small
// and large shapes alike.
inline constexpr int kMaxShards = kMaxSweepPoints;  // more shards than points leaves some empty, never more

struct Shard {
  int index = 1;  // 1..count
  int count = 1;
  bool operator==(const Shard& o) const { return index == o.index && count == o.count; }
  std::string text() const;  // "2/4"
};
// Parses "I/N" (1 <= I <= N <= kMaxShards; spaces around the numbers allowed). Throws ValidationError naming
// `what` and the text: not I/N, a number that is not whole, N = 0, I = 0 (shards count from 1; a job array
// numbered from 0 is told how to shift it) or I above N.
Shard parse_shard(const std::string& text, const std::string& what = "--shard");
// The whole sweep's indices (0-based, ascending) that belong to `shard` among `total` points.
std::vector<size_t> shard_points(size_t total, const Shard& shard);
// The shard (1-based) that point `p` of the whole sweep belongs to among `count` shards.
inline int shard_of(size_t p, int count) {
  return int(p % size_t(count)) + 1;
}

// A sweep's identity: SHA-256 (64 hex digits) of its point list in order, each point's kernel, tile, M, N, K,
// input and seed. Two runs measured the same sweep when their identities are equal; the policy and the
// device are not part of it (merge checks those apart, and can be told to accept a mix).
std::string sweep_sha256(const std::vector<ProblemSpec>& points);
// The configurations in words: "tiled T=8, tiled T=16, cublas".
std::string describe_configs(const std::vector<KernelTile>& configs);

// A wave mark of one configuration (kernel x tile), as a bench table and its session keep it.
struct ConfigWaveMark {
  std::string kernel;
  int tile = 0;
  int64_t size = 0, waves = 0;
};

// One finished point of a sweep: its result, or why it has none.
struct SweepPointResult {
  size_t index = 0;  // in the expanded points
  ProblemSpec spec;
  std::optional<RunResult> result;
  std::string error;  // the backend refused the point (bad_input) or failed (a CUDA error)
  bool bad_input = false;
  double wall_s = 0;  // time this point took, validation to result
};

using SweepCallback = std::function<void(const SweepPointResult& point, int done, int total)>;

// Checks the policy and every point against the backend (kernel, tile, shape, memory) before anything is
// measured. Throws ValidationError naming the first bad point ("sweep point 3 of 40 (tiled T=8 ...): ...").
void validate_sweep(const Backend& backend, const std::vector<ProblemSpec>& points,
                    const MeasurePolicy& policy);

// Measures the points one after the other under `policy`. Every point is validated first (all refusals
// before anything is measured: throws ValidationError naming the first bad point). A point that fails on the
// device is reported with its error and the sweep goes on. Cancelling `cancel` stops after the current
// sample: the point in flight is dropped, the finished ones were reported. on_start(index) is called before a
// point is measured. `base`: what every point's request carries besides its problem and the policy (e.g.
// RunRequest::memcheck_new_builds). Returns the number of points finished.
int run_sweep(Backend& backend, const std::vector<ProblemSpec>& points, const MeasurePolicy& policy,
              const CancelToken& cancel, const SweepCallback& on_point,
              const std::function<void(size_t index)>& on_start = {}, const RunRequest& base = {});

// [SECTION] One plan split across identical devices (the window's "split across identical devices", one
// SweepRunner per engine): each runner takes the next point no runner has taken yet, so a device that
// finishes early takes more, and the plan ends when its last point does (a plan dealt in fixed halves waits
// for the half that held the largest points). Thread-safe.
class SharedPlan {
 public:
  SharedPlan(std::vector<ProblemSpec> points, int runners);
  const std::vector<ProblemSpec>& points() const { return m_points; }
  int runners() const { return m_runners; }
  std::optional<size_t> take();  // the next point's index; none once every point is taken
  // The points no runner has taken yet, in order.
  std::vector<ProblemSpec> untaken() const;

 private:
  std::vector<ProblemSpec> m_points;
  int m_runners = 1;
  std::atomic<size_t> m_next{0};
};

// The same as run_sweep, measuring the points of `plan` this runner takes (every point is validated against
// `backend` first). SweepPointResult::index is the point's index in the plan.
int run_shared_sweep(Backend& backend, SharedPlan& plan, const MeasurePolicy& policy,
                     const CancelToken& cancel, const SweepCallback& on_point,
                     const std::function<void(size_t index)>& on_start = {}, const RunRequest& base = {});

// [SECTION] Time left. A point's time grows with its work (M N K): the estimate scales the work of every
// point still to come by the seconds per unit of work that the finished points of its configuration (kernel x
// tile) took, or all finished points while none of its configuration has finished. No point is expected to be
// quicker than the quickest finished one of its configuration (the policy's fixed costs: warm-up, minimum
// samples). The point in flight counts with its estimate less the time it has run. Once it has run longer
// than its estimate it is overdue: its own rest is unknown (never "0 s"), and the points after it are scaled
// by at least the rate it has shown so far.
struct SweepPointTime {
  double seconds = 0;     // wall time, validation to result (SweepPointResult::wall_s)
  bool measured = false;  // it has a result (a refused or failed point's time says nothing about the rest)
};
struct SweepTimeLeft {
  double seconds = -1;   // -1: unknown (no point measured yet)
  bool overdue = false;  // the point in flight ran past its estimate: `seconds` is for the points after it
};
double point_work(const ProblemSpec& p);  // M N K
// `finished[i]` is points[i] (in order); the point in flight, if any, is points[finished.size()] and has run
// for `in_flight_s`. Pure: no clock.
SweepTimeLeft estimate_time_left(const std::vector<ProblemSpec>& points,
                                 const std::vector<SweepPointTime>& finished, bool in_flight,
                                 double in_flight_s);

// Where a sweep stands, for a progress bar.
struct SweepProgress {
  enum class State { Idle, Running, Done, Cancelled, Refused };
  State state = State::Idle;
  int done = 0, total = 0, failed = 0;  // failed: finished points without a result (counted in done)
  std::optional<ProblemSpec> in_flight;
  double elapsed_s = 0;
  // estimate_time_left() while running (-1: unknown until a point is measured); 0 once the sweep ended.
  double remaining_s = -1;
  bool overdue = false;  // the point in flight ran past its estimate: remaining_s is for the points after it
  std::string error;     // Refused: why the plan was refused before anything was measured
  bool running() const { return state == State::Running; }
  double fraction() const { return total > 0 ? double(done) / double(total) : 0.0; }
};
const char* to_string(SweepProgress::State s);
// What a cancelled sweep leaves, in words that fit the count: "cancelled: the 1 point finished is kept".
std::string cancelled_note(int kept);
// A duration as a person reads it: "less than a second", "about 40 s", "about 2 min 05 s", "about 1 h 10
// min".
std::string about_duration(double seconds);
// "12 s", "3 min 05 s", "1 h 02 min": an elapsed or estimated time.
std::string format_duration(double seconds);
// What is left of a running sweep, in words: "about 2 min 05 s left", "time left after the first point",
// "the last point is taking longer than expected", "about 40 s left after the point in flight, which is
// taking longer than expected". Empty when the sweep is not running.
std::string describe_time_left(const SweepProgress& p);
// One sweep run by several runners (on every connected device, or split across identical ones): running
// while any runs; done, failed and the total added up; the time left and elapsed of the slowest; the point in
// flight of the first runner that has one; refused with the first refusal when every runner was refused.
SweepProgress combine_progress(const std::vector<SweepProgress>& runners);

// A sweep on a thread of its own. The frame loop calls progress() and take_finished() every frame (neither
// blocks on the measurement) and cancel() when asked; the window keeps drawing while the engine measures.
// The backend serialises run() calls, so the GUI's RunQueue can share it (its runs wait between points).
class SweepRunner {
 public:
  explicit SweepRunner(std::shared_ptr<Backend> backend);
  ~SweepRunner();  // cancels a sweep in flight and waits for its thread
  SweepRunner(const SweepRunner&) = delete;
  SweepRunner& operator=(const SweepRunner&) = delete;

  // Starts measuring `points` under `policy`. Throws ValidationError when a sweep is already running, or the
  // plan is empty or longer than kMaxSweepPoints. Refusals of single points (a size that does not fit) come
  // back through progress(): state Refused with the reason.
  void start(std::vector<ProblemSpec> points, MeasurePolicy policy, RunRequest base = {});
  // Takes its share of `plan` beside the plan's other runners (SharedPlan). progress() counts this runner's
  // points (total: the points it has taken so far and its share of those not taken yet), and its time left
  // is its point in flight plus its share of the points not taken yet, at its own pace.
  void start(std::shared_ptr<SharedPlan> plan, MeasurePolicy policy, RunRequest base = {});
  void cancel();  // stops after the current sample; the points finished stay in take_finished()
  SweepProgress progress() const;
  // The points finished since the last call, in order.
  std::vector<SweepPointResult> take_finished();
  bool running() const;
  void wait();  // until the sweep's thread has finished (headless use, tests)

 private:
  void loop(std::vector<ProblemSpec> points, MeasurePolicy policy, RunRequest base, CancelToken token);
  void shared_loop(std::shared_ptr<SharedPlan> plan, MeasurePolicy policy, RunRequest base,
                   CancelToken token);
  void finish(bool cancelled, const std::string& refused);  // the state at the end of either loop
  // Either loop's progress as a point starts (`taken`: from a shared plan) and finishes.
  void point_started(const ProblemSpec& p, bool taken);
  void point_finished(const SweepPointResult& p, int done);

  std::shared_ptr<Backend> m_backend;
  mutable std::mutex m_mu;
  SweepProgress m_progress;
  std::vector<SweepPointResult> m_finished;
  std::vector<ProblemSpec> m_points;  // the plan (a shared plan: the points taken so far), for the time left
  std::shared_ptr<SharedPlan> m_shared;  // the plan split with other runners (none: m_points is the plan)
  std::vector<SweepPointTime> m_times;   // of the finished points, in order
  double m_started = 0, m_point_started = 0;
  CancelToken m_token;
  std::thread m_thread;
};

// [SECTION] Wave quantisation. A grid of G blocks with B blocks per SM on S SMs runs in ceil(G / (B S))
// waves; the last one may be nearly empty. Sweeping N, throughput drops right after the grid passes a whole
// number of waves and recovers as the new wave fills: the sawtooth a plot shows.
int64_t grid_blocks(int64_t m, int64_t n, int tile_m, int tile_n);  // ceil(m / tile_m) x ceil(n / tile_n)

struct WaveMark {
  int64_t size = 0;   // the first size of the sweep's axis whose grid needs `waves` waves
  int64_t waves = 0;  // whole waves from here on (the size before fitted in waves - 1)
  int64_t grid = 0;   // grid blocks at `size`
};
// Every size s in [from, to] (integers) at which the configuration's grid first needs one more wave than at
// s - 1, for the sweep's shape (sizes mapped to M, N, K as SweepSpec::problem does). Empty when tile_m,
// tile_n, blocks_per_sm or sm_count is <= 0, or from > to. Cost: one division per size.
// blocks_per_tile: blocks launched per tile of C (split-K's slices of K; 1 for every other kernel).
std::vector<WaveMark> wave_marks(const SweepSpec& spec, int64_t from, int64_t to, int tile_m, int tile_n,
                                 int blocks_per_sm, int sm_count, int blocks_per_tile = 1);

}  // namespace ts

#pragma once
// [SECTION] The engine's interface: one Backend per device kind (CUDA, CPU), the same for the GUI, the
// command line, sweeps, `tilescope bench` and the tests. A backend's run() is the one measuring function: it
// validates a request (before allocating anything), produces the inputs, runs the chosen kernel once and
// verifies it against its reference, then times it under a MeasurePolicy (measure.hpp), recording the SM
// clock and throttle reasons, and returns a RunResult. It throws ValidationError for bad requests, Cancelled
// when its token is cancelled, and std::runtime_error (or a subclass, e.g. a CUDA error) when the device
// fails. run() calls on one backend are serialised (one measurement at a time per device), so a sweep thread
// and the GUI's run queue may share a backend.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/base/cancel.hpp"
#include "core/engine/dims.hpp"
#include "core/engine/feeding.hpp"
#include "core/engine/matrix.hpp"
#include "core/engine/measure.hpp"
#include "core/engine/matrix_store.hpp"
#include "core/engine/occupancy.hpp"
#include "core/engine/schedule.hpp"
#include "core/engine/problem.hpp"
#include "core/engine/sass.hpp"
#include "core/engine/verify.hpp"

namespace ts {

class KernelWorkshop;

// What the CPU backend calls for a kernel (nullptr: the kernel has no CPU implementation).
using CpuGemmFn = void (*)(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                           int tile, const CancelToken* cancel);

// Metadata of one matmul variant: a built-in one (its entry beside its launcher,
// kernels/rungs/kernel_entry.hpp) or a person's own (your_kernel.hpp), registered by the backend's kernel
// workshop (kernel_workshop.hpp).
struct KernelInfo {
  std::string id;           // command-line name, e.g. "tiled"
  std::string title;        // its name, without its role (label() adds that)
  std::string description;  // one sentence: what it buys, what it costs
  // The tile parameter: allowed values (block tile edge, or TILE for the classic kernel) and, for each, the
  // block / warp / thread tiles it stands for. Empty when the kernel has no tile parameter.
  std::vector<int> tiles;
  std::vector<std::string> tile_labels;
  // The same tiles as the launcher builds them (block, k step, stages, warp and thread tiles): what the
  // Matrices panel outlines as the pieces feeding a tile of C. Empty, or shorter than tiles: not described.
  std::vector<TileGeometry> geometry;
  int default_tile = 0;
  std::string threads_per_block;  // e.g. "TILE x TILE"
  bool is_reference = false;      // the trusted result others are checked against
  bool teaching = false;          // has a bug on purpose
  bool tf32 = false;              // rounds inputs to TF32 (tensor cores): checked with the TF32 tolerance
  bool traceable = false;         // has an instrumented build for the tile schedule
  int min_sm = 0;                 // oldest compute capability it runs on (major * 10 + minor), 0: any
  bool has_cuda = false;          // a CUDA implementation was compiled in
  CpuGemmFn cpu = nullptr;        // CPU implementation, if any
  bool cpu_elsewhere = false;     // a remote engine's kernel that has a CPU implementation there
  // Its CPU implementation takes C in tile x tile blocks, as its CUDA kernel does: a CPU run says so in its
  // tile_m and tile_n (the roofline's traffic estimate, the Matrices panel's tile grid).
  bool cpu_blocks_c = false;
  bool user = false;         // a person's own kernel ("yours: <name>"), run in the worker process
  bool square_only = false;  // it is told one size only, so it runs on M = N = K
  std::string source;        // user kernels: the file it comes from

  std::string tile_label(int tile) const;             // "" when unknown
  const TileGeometry* tile_geometry(int tile) const;  // nullptr when not described
  bool has_cpu() const { return cpu != nullptr || cpu_elsewhere; }
  // It can run on a backend of this kind ("cuda": it has a CUDA implementation; "cpu": a CPU one).
  bool runs_on(const std::string& backend_kind) const {
    return backend_kind == "cuda" ? has_cuda : has_cpu();
  }
  // The title and the role the flags give, said once: "Reference: cuBLAS SGEMM (FP32)", "Teaching, wrong on
  // purpose: tiled with K / TILE steps", else the title.
  std::string label() const;
};

const KernelInfo* find_kernel(const std::vector<KernelInfo>& registry, const std::string& id);
// Refused at compile time: the pointer would outlive the temporary list (Backend::kernels() returns a copy).
const KernelInfo* find_kernel(std::vector<KernelInfo>&& registry, const std::string& id) = delete;

// Checks the kernel name and tile against the registry (and fixes spec.tile to 0 for tile-less kernels).
// `tile_given`: the person set the tile explicitly (then a tile-less kernel refuses it).
void validate_kernel(ProblemSpec& spec, const std::vector<KernelInfo>& registry, bool tile_given);

// The device a backend measures on, for every output that carries figures (bench tables, sessions, figure
// captions) and for the roofline and occupancy arithmetic.
struct DeviceInfo {
  std::string backend;  // "cuda" or "cpu"
  std::string name;     // e.g. "NVIDIA H100 80GB HBM3", or "CPU (16 threads)"
  std::string label;    // device_name(): name with compute capability and SM count
  int sm = 0;           // compute capability major * 10 + minor (0 on the CPU)
  int sm_count = 0;
  double max_sm_clock_mhz = 0;  // cudaDevAttrClockRate
  std::string driver;           // "580.159.04, CUDA 13.0" (NVML driver version and the CUDA driver API)
  std::string cuda_runtime;     // "13.0"
  int64_t l2_bytes = 0, memory_bytes = 0;
  double datasheet_bandwidth_gbs = 0;                 // 2 x memory clock x bus width (0: unknown)
  double peak_fp32_tflops = 0, peak_tf32_tflops = 0;  // at max_sm_clock_mhz (0: unknown)
  DeviceLimits limits;  // for the occupancy arithmetic (sm_count == 0 on the CPU)
};

// DRAM bandwidth measured on the device by a copy kernel (every byte read once and written once).
struct BandwidthResult {
  double gbs = 0;       // 2 x bytes / median time, in GB/s (1e9 bytes per second)
  double best_gbs = 0;  // at the fastest sample
  int64_t bytes = 0;    // size of the buffer copied (read and written once per sample)
  SampleStats ms;       // per copy
  std::string method;   // what was measured, in a few words
};

// Where a launch puts C's tiles and how it fills the device, known before running (occupancy arithmetic).
struct LaunchInfo {
  int tile_m = 0, tile_n = 0;  // rows and columns of C per block
  int64_t grid_blocks = 0;
  int blocks_per_tile = 1;  // split-K: one block per slice of K for each tile of C
  // The blocks are planned for this device's SMs, some tiles made whole and others shared by K segments
  // (stream-K, wgmma_tf32's tail): grid_blocks is not blocks_per_tile blocks per tile.
  bool k_segments = false;
  OccupancyReport occupancy;  // on this device, with api_blocks_per_sm from the CUDA occupancy API
};

// cuBLAS of a kernel's precision at its shape, timed interleaved with it sample by sample
// (MeasurePolicy::interleave_reference), writing into a scratch buffer, never into C.
struct InterleavedReference {
  std::string kernel;              // "cublas" (FP32 kernels) or "cublas_tf32" (TF32 kernels)
  std::vector<double> samples_ms;  // one per kernel sample, each taken right after it
  SampleStats stats;               // of samples_ms
  ClockRecord clock;               // SM clock read after each of its samples
  bool measured() const { return stats.count > 0 && stats.median > 0; }
  double noise() const { return relative_stddev(stats); }  // stddev / mean
};

// The kernel timed again on input sets that change between samples (MeasurePolicy::changing_inputs), and C
// checked against the reference of those inputs: the last sample's set, and one more set when that was the
// run's own (engine.hpp: run_pipeline).
struct ChangingInputs {
  int sets =
      0;  // input sets the kernel was timed on, the run's own among them (0: not asked for or not timed)
  std::vector<double> samples_ms;  // each sample on the next set
  SampleStats stats;               // of samples_ms
  std::string stop;                // to_string(StopReason)
  bool passed = true;              // C matched the reference of every changed set checked
  std::string verdict;  // what was checked and found, in words ("C did not change when A and B did: ...")
  bool measured() const { return sets > 0 && stats.count > 0 && stats.median > 0; }
};

struct RunRequest {
  ProblemSpec spec;
  std::shared_ptr<const HostMatrix> a, b;  // given inputs (spec.input == File), else generated
  std::optional<MeasurePolicy> policy;     // empty: the backend's default_policy() (quick)
  bool keep_output = false;                // return the full C in RunResult::c
  bool profile = false;  // GPU: occupancy of every tile, a tile trace, and cuBLAS timed on its own where the
                         // policy does not interleave it
  bool keep_store = false;  // keep A, B, C and C - reference where they are (RunResult::store)
  // A person's kernel: the first launch of every new build runs under compute-sanitizer memcheck at a small
  // shape like this one (small_dim_like) before it runs on the GPU for real, so an out-of-bounds access is
  // reported with its line instead of faulting the GPU (a fault broke OpenGL for every program on an H100).
  // The run is refused when memcheck finds errors.
  bool memcheck_new_builds = true;
};

// What a run measured that outlives it: the sources only (a session keeps it as its MeasurementRecord, a
// point of `tilescope bench` and `run --json` are written from it). Derived figures are methods, never
// stored beside what they come from.
struct RunRecord {
  ProblemSpec spec;
  std::string backend;  // "cuda" or "cpu"
  std::string device;   // e.g. "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)" or "CPU (16 threads)"
  bool tf32 = false;    // the kernel rounds its inputs to TF32 (checked and compared as such)
  // Of the verification launch, before any timing; with changing inputs, of the changed set that failed (the
  // note says which) when the kernel passed on its own inputs but not on the changed ones.
  ErrorStats error;
  // Timing under the policy: every timed launch, their statistics and why sampling stopped.
  std::string policy;  // MeasurePolicy::describe() of the policy used
  bool timed = true;   // false: verification failed and the policy does not time failed kernels
  std::vector<double> samples_ms;
  SampleStats stats;           // of samples_ms
  std::string stop;            // to_string(StopReason)
  ClockRecord clock;           // SM clock and throttle reasons while sampling
  int64_t frames_drawn = 0;    // frames a window drew while this was timed (at most 4 a second; TimingGate)
  int tile_m = 0, tile_n = 0;  // rows and columns of C per block (0: not a blocked kernel)
  int blocks_per_tile = 1;     // blocks per tile of C (split-K: the slices of K)
  // Each sample is the mean of this many launches back to back (MeasurePolicy::min_sample_ms: short launches
  // are timed in batches), and so is each of the interleaved reference's.
  int launches_per_sample = 1;
  // cuBLAS (same precision) at the same shape, the median of 5 launches after the samples (profile, where
  // there is no interleaved reference; 0: not run). Read cublas_ms() for "% of cuBLAS".
  double reference_ms = 0;
  // cuBLAS timed between the samples (empty: not asked for, or none here; interleaved_note says why, e.g.
  // "CPU backend: no cuBLAS").
  InterleavedReference interleaved;
  std::string interleaved_note;
  // Why the median time cannot be right on this device (core/engine/impossible.hpp: above the compute roof
  // of its precision, or under the DRAM floor), or empty. A flagged point is drawn apart and never counted as
  // a record or the best point.
  std::string impossible;
  // MeasurePolicy::changing_inputs: the timing on inputs that change between samples beside the one above (on
  // the run's own A and B), and what C was checked against; sets == 0 when not asked for.
  ChangingInputs changing;
  std::string date;  // UTC, ISO 8601, when the point was measured

  double median_ms() const { return stats.median; }
  double tflops() const;                                   // of the median (0: not timed)
  double noise() const { return relative_stddev(stats); }  // stddev / mean of the samples
  bool is_impossible() const { return !impossible.empty(); }
  // The cuBLAS time "% of cuBLAS" divides: the interleaved reference's median where there is one, else
  // reference_ms (0: neither).
  double cublas_ms() const { return interleaved.measured() ? interleaved.stats.median : reference_ms; }
  bool cublas_interleaved() const { return interleaved.measured(); }
};

// A run as the backend returns it: its record and what stays in memory (the matrices, the occupancy
// reports, the trace) or is said about it.
struct RunResult : RunRecord {
  std::string reference;  // what the result was verified against
  int warmups = 0;        // untimed launches before the samples (the verification launch counts as one)
  std::shared_ptr<const HostMatrix> c;
  std::shared_ptr<const MatrixStore> store;  // keep_store: the matrices, for heatmaps at any zoom
  double peak_tflops = 0;                    // of the device, at this kernel's precision (0: unknown)
  // GPU only (empty on the CPU backend, which has neither):
  std::optional<OccupancyReport> occupancy;                        // the launch that was timed
  std::vector<std::pair<int, OccupancyReport>> occupancy_by_tile;  // every tile the kernel supports (profile)
  std::shared_ptr<const TileTrace> trace;  // one instrumented launch, separate from the timed ones
  std::string trace_note;                  // why there is no trace (e.g. cuBLAS cannot be instrumented)
  std::string note;  // what the person should know about this run (e.g. "C was left untouched"), or empty
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string kind() const = 0;           // "cuda" or "cpu"
  virtual std::string device_name() const = 0;    // shown in the status bar and every output
  virtual int cuda_device() const { return -1; }  // the CUDA device ordinal, -1 for the CPU backend
  // Every kernel it knows now, built-in and the person's own (a copy: user kernels come and go at run time).
  virtual std::vector<KernelInfo> kernels() const = 0;
  // The same list, shared and never changed: made from kernels() when first asked and again only after its
  // workshop published or withdrew a kernel, so it is cheap enough to read every frame. A list read stays
  // valid for the backend's life.
  std::shared_ptr<const std::vector<KernelInfo>> kernel_list() const;
  // Grows whenever kernels() may have changed (the workshop's serial; a remote engine's list after a
  // reconnect): kernel_list() makes its list again then.
  virtual uint64_t kernels_serial() const;
  virtual DeviceInfo device_info() const = 0;
  // Where a person's own kernels are built, checked and registered for this backend (kernel_workshop.hpp);
  // nullptr: this backend takes none.
  virtual KernelWorkshop* workshop() const { return nullptr; }
  // The policy of a request that names none: MeasurePolicy::quick() (the CPU backend: 3 samples).
  virtual MeasurePolicy default_policy() const { return MeasurePolicy::quick(); }
  // The policy of this device's benchmarks (the window's sweeps and tile searches): MeasurePolicy::bench()
  // (nvbench-style) on a GPU, MeasurePolicy::cpu_bench() on the CPU backend.
  virtual MeasurePolicy bench_policy() const { return MeasurePolicy::bench(); }
  // Versions of what runs the kernels, for Help > About (e.g. "CUDA driver 13.0, runtime 13.0").
  virtual std::string version_info() const { return ""; }
  // What this backend can run now (the size sliders' range); validate() refuses what does not fit.
  virtual Capacity capacity() const { return {}; }
  // Everything about the request this backend can check before running: kernel, tile, shape, capacity
  // (free GPU memory, CPU work limit). Throws ValidationError naming the value and the limit.
  virtual void validate(RunRequest& req, bool tile_given = false) const = 0;
  virtual RunResult run(const RunRequest& req, const CancelToken& cancel) = 0;
  // DRAM bandwidth of this device from a copy kernel (a threaded copy on the CPU); a few tenths of a second.
  // Like run(), it waits for a measurement in flight: call both off the UI thread.
  virtual BandwidthResult measure_bandwidth(const CancelToken& cancel) = 0;
  // Faults and hangs of a person's kernel so far on this device (the worker was killed or restarted), the
  // latest in words. After one, OpenGL on the same GPU may draw wrong pictures (driver 580 on an H100 did),
  // so the window checks its pictures again (ui/gl_health.hpp). Never waits for a measurement.
  struct Incidents {
    uint64_t count = 0;
    std::string latest;  // e.g. "the kernel faulted: an illegal memory access ..."
  };
  virtual Incidents incidents() const { return {}; }
  // Where the engine runs: in this process (remote false), or behind an engine command
  // (core/remote/remote_backend.hpp), with the state of its link.
  struct Link {
    bool remote = false;
    std::string command;    // e.g. "ssh gpu-box tilescope serve"
    bool connected = true;  // false: the link is gone (lost says why); reconnect() starts it again
    std::string lost;
    double rtt_ms = 0;  // the last round trip (0: not measured yet)
    uint64_t bytes_in = 0, bytes_out = 0;
    std::string engine_version;  // the engine's TileScope version and commit
    // A link can stall without dropping (a hung ssh, a network that stopped carrying): then nothing comes,
    // however long. silent_s: seconds since the engine last sent a byte (or the link last took one of a
    // matrix going up) while something is awaited (a request in flight or a ping unanswered); 0 while nothing
    // is. stalled once that reaches kStalledAfterS; it clears when bytes move again.
    static constexpr double kStalledAfterS = 5;  // a healthy link answers the 1 s pings well within it
    double silent_s = 0;
    bool stalled = false;
    double bytes_per_s = 0;  // the rate the engine's long frames arrived at lately (0: not measured yet)
  };
  virtual Link link() const { return {}; }
  // A remote engine: starts the engine command again after the link was lost (the kernels and device of the
  // new engine replace the old). Throws what starting it threw; a local backend throws std::logic_error.
  virtual void reconnect() {
    throw std::logic_error("the engine runs in this process: nothing to reconnect");
  }
  // `m` where this backend keeps matrices (as A with K = its columns, C and the error; B is K x K zeros): the
  // GL self-check draws it through the heatmaps' own path, CUDA-GL interop included on a GPU. Throws.
  virtual std::shared_ptr<const MatrixStore> probe_store(std::shared_ptr<const HostMatrix> m) const;
  // The launch a problem would get on this device, without running it (nullopt: no occupancy here, e.g. the
  // CPU backend or cuBLAS). Never waits for a measurement; cheap enough for a frame. Throws ValidationError
  // for a kernel or tile the registry does not know.
  virtual std::optional<LaunchInfo> launch_info(const ProblemSpec& spec) const {
    (void)spec;
    return std::nullopt;
  }
  // The machine code (SASS) of `kernel` at `tile` for compute capability `arch` (0: this device's, else the
  // newest compiled), with where it comes from (sass.hpp). A built-in kernel's comes from the program's
  // archive of listings (program_listings(); none: not available, and why says so); a person's kernel is
  // built by the workshop (or taken from its cache) and its cubin disassembled now by cuobjdump, when one is
  // found (sass_tool.hpp). Not available (why says so) for closed kernels (cuBLAS). A person's kernel may
  // take seconds (a build): call it off the UI thread. Throws Cancelled, and what a build throws.
  virtual SassListing sass_listing(const std::string& kernel, int tile, int arch,
                                   const CancelToken* cancel = nullptr) const;

 private:
  mutable std::mutex m_list_mu;  // kernel_list()'s cache
  mutable std::shared_ptr<const std::vector<KernelInfo>> m_list;
  mutable std::vector<std::shared_ptr<const std::vector<KernelInfo>>> m_retired;  // lists it replaced
  mutable uint64_t m_list_serial = 0;  // the workshop's serial it was made at
};

// Fills the timing fields of a result from a measurement (stats, median, TFLOP/s, noise, stop reason, clock,
// date) the same way for every backend, and the interleaved reference from the measurement's reference
// samples (named `reference_kernel`) where it has any.
void record_measurement(RunResult& r, const Measurement& m, const MeasurePolicy& p, double device_max_mhz,
                        const std::string& reference_kernel = "");

// "2025-01-31T12:34:56Z", now.
std::string utc_now();

// Checks given inputs against each other and sets spec.m/n/k from them.
void adopt_given_inputs(RunRequest& req);

}  // namespace ts

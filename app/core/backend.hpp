#pragma once
// [SECTION] The engine's interface: one Backend per device kind (CUDA, CPU), the same for the GUI, the
// command line and the tests. A backend validates a request, produces the inputs, runs the chosen kernel,
// verifies it against its reference, times it and returns a RunResult. It throws ValidationError for bad
// requests and std::runtime_error (or a subclass, e.g. a CUDA error) when the device fails.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cancel.hpp"
#include "dims.hpp"
#include "matrix.hpp"
#include "matrix_store.hpp"
#include "occupancy.hpp"
#include "schedule.hpp"
#include "problem.hpp"
#include "verify.hpp"

namespace ts {

// What the CPU backend calls for a kernel (nullptr: the kernel has no CPU implementation).
using CpuGemmFn = void (*)(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                           int tile, const CancelToken* cancel);

// Metadata of one matmul variant, registered once in kernels/registry.cpp.
struct KernelInfo {
  std::string id;           // command-line name, e.g. "tiled"
  std::string title;        // shown in the GUI
  std::string description;  // one sentence: what it buys, what it costs
  // The tile parameter: allowed values (block tile edge, or TILE for the classic kernel) and, for each, the
  // block / warp / thread tiles it stands for. Empty when the kernel has no tile parameter.
  std::vector<int> tiles;
  std::vector<std::string> tile_labels;
  int default_tile = 0;
  std::string threads_per_block;  // e.g. "TILE x TILE"
  bool is_reference = false;      // the trusted result others are checked against
  bool teaching = false;          // has a bug on purpose
  bool tf32 = false;              // rounds inputs to TF32 (tensor cores): checked with the TF32 tolerance
  bool traceable = false;         // has an instrumented build for the tile schedule
  int min_sm = 0;                 // oldest compute capability it runs on (major * 10 + minor), 0: any
  bool has_cuda = false;          // a CUDA implementation was compiled in
  CpuGemmFn cpu = nullptr;        // CPU implementation, if any

  std::string tile_label(int tile) const;  // "" when unknown
};

const KernelInfo* find_kernel(const std::vector<KernelInfo>& registry, const std::string& id);

// Checks the kernel name and tile against the registry (and fixes spec.tile to 0 for tile-less kernels).
// `tile_given`: the person set the tile explicitly (then a tile-less kernel refuses it).
void validate_kernel(ProblemSpec& spec, const std::vector<KernelInfo>& registry, bool tile_given);

struct RunRequest {
  ProblemSpec spec;
  std::shared_ptr<const HostMatrix> a, b;  // given inputs (spec.input == File), else generated
  int samples = 0;                         // timed launches (0: the backend's default)
  int warmup = -1;                         // untimed launches first (-1: the backend's default)
  bool keep_output = false;                // return the full C in RunResult::c
  int view_size = 0;                       // > 0: return heatmap views of at most view_size^2 values
  bool profile = false;                    // GPU: also time cuBLAS, report occupancy, record a tile trace
  bool keep_store = false;                 // keep A, B, C and C - reference where they are (RunResult::store)
};

struct MatrixViews {
  HeatmapView a, b, c, err;
};

struct RunResult {
  ProblemSpec spec;
  std::string backend;    // "cuda" or "cpu"
  std::string device;     // e.g. "NVIDIA H100 80GB HBM3" or "CPU (16 threads)"
  std::string reference;  // what the result was verified against
  std::vector<double> times_ms;
  double median_ms = 0, tflops = 0;
  ErrorStats error;
  std::shared_ptr<const MatrixViews> views;
  std::shared_ptr<const HostMatrix> c;
  std::shared_ptr<const MatrixStore> store;  // keep_store: the matrices, for heatmaps at any zoom
  int tile_m = 0, tile_n = 0;                // rows and columns of C per block (0: not a blocked kernel)
  double reference_ms =
      0;                   // cuBLAS (same precision) at the same shape, median of a few launches (0: not run)
  double peak_tflops = 0;  // of the device, at this kernel's precision (0: unknown)
  // GPU only (empty on the CPU backend, which has neither):
  std::optional<OccupancyReport> occupancy;                        // the launch that was timed
  std::vector<std::pair<int, OccupancyReport>> occupancy_by_tile;  // every tile the kernel supports
  std::shared_ptr<const TileTrace> trace;  // one instrumented launch, separate from the timed ones
  std::string trace_note;                  // why there is no trace (e.g. cuBLAS cannot be instrumented)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string kind() const = 0;           // "cuda" or "cpu"
  virtual std::string device_name() const = 0;    // shown in the status bar and every output
  virtual int cuda_device() const { return -1; }  // the CUDA device ordinal, -1 for the CPU backend
  virtual const std::vector<KernelInfo>& kernels() const = 0;
  // Versions of what runs the kernels, for Help > About (e.g. "CUDA driver 13.0, runtime 13.0").
  virtual std::string version_info() const { return ""; }
  // What this backend can run now (the size sliders' range); validate() refuses what does not fit.
  virtual Capacity capacity() const { return {}; }
  // Everything about the request this backend can check before running: kernel, tile, shape, capacity
  // (free GPU memory, CPU work limit). Throws ValidationError naming the value and the limit.
  virtual void validate(RunRequest& req, bool tile_given = false) const = 0;
  virtual RunResult run(const RunRequest& req, const CancelToken& cancel) = 0;
};

// Fills views / error stats the same way for every backend: a, b, c, ref are full host matrices.
void finish_result(RunResult& r, const RunRequest& req, const HostMatrix& a, const HostMatrix& b,
                   const HostMatrix& c, const float* ref, bool tf32 = false);

// Checks given inputs against each other and sets spec.m/n/k from them.
void adopt_given_inputs(RunRequest& req);

}  // namespace ts

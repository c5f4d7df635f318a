#pragma once
// [SECTION] Sizes a person can pick: what a backend can run (its capacity), the largest M, N or K that fits,
// where the size sliders snap, and the preset problems. Plain arithmetic, shared by the Controls panel, the
// Run menu and the tests; the backends' validate() stays the authority and uses the same byte count.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/problem.hpp"

namespace ts {

// What a backend can run. A zero field sets no limit of that kind.
struct Capacity {
  double max_work = 0;   // M * N * K (the CPU backend: what it serves in seconds)
  double max_bytes = 0;  // device memory for one run's matrices (the CUDA backend: 90 % of free memory)
  std::string what;      // says where the limit comes from, for tooltips ("CPU backend: M N K <= 2048^3")
};

// Bytes a run holds on the device: A (M x K), B (K x N), and C, the reference and C - reference (M x N).
double run_bytes(int64_t m, int64_t n, int64_t k);
bool fits(const Capacity& cap, int64_t m, int64_t n, int64_t k);

enum class Dim { M, N, K };
// The largest value (<= kMaxDim, >= 1) of the dimension `which` for which the problem fits, the other two as
// given; square: M = N = K all change together. 0 when not even 1 fits.
int64_t max_dim(const Capacity& cap, bool square, Dim which, int64_t m, int64_t n, int64_t k);

// [SECTION] What a GPU run may use: the device's memory and CUDA's index range, nothing else (the .npy
// reader's limit is its own). The CUDA backend's validate() asks these with the device's figures; the rule
// needs no GPU, so a unit test checks it.
struct GpuRunNeeds {
  double matrices = 0;        // run_bytes(): A, B, C, the reference and C - reference
  double l2_flush = 0;        // a cold-L2 policy's flush buffer
  double worker_copies = 0;   // a person's kernel: the worker process's own A and B
  double workspace = 0;       // a built-in kernel's workspace (split-K's partial tiles)
  std::string workspace_for;  // "pipelined tile 128"
  double input_sets = 0;      // changing inputs: the other sets of A and B (and the worker's copies of them)
  double total() const { return matrices + l2_flush + worker_copies + workspace + input_sets; }
};
// A launch's grid may hold at most 2^31 - 1 blocks across and 65535 down and deep (CUDA's limits).
inline constexpr std::array<int64_t, 3> kCudaMaxGrid = {(int64_t(1) << 31) - 1, 65535, 65535};
// Throws ValidationError when a dimension of `grid` (the kernel's launch at this shape and tile; 0: not
// known, e.g. cuBLAS) is over kCudaMaxGrid: the kernel cannot cover C in one launch.
void check_gpu_grid(const ProblemSpec& s, const std::array<int64_t, 3>& grid);
// The run fits when it needs at most 90 % of the memory free (a margin for cuBLAS's workspace and the
// display).
bool gpu_memory_fits(const GpuRunNeeds& need, double free_bytes);
// Throws ValidationError naming the shape, what it needs and what `device` has free when it does not fit.
void check_gpu_memory(const ProblemSpec& s, const GpuRunNeeds& need, double free_bytes,
                      const std::string& device);

// Where a slider snaps. A raw value (from a logarithmic slider) within 3 % of a power of two snaps to it;
// otherwise to the nearest multiple of `step` (the kernel's tile, or 8 without one), or to a power of two
// below `step`. The result stays in [lo, hi].
int64_t snap_dim(double raw, int step, int64_t lo, int64_t hi);

// A problem worth one click: the shapes the classic kernel was first measured on, and ragged sizes that show
// the teaching kernels' bugs.
struct Preset {
  std::string name;  // menu label, e.g. "4096^3, random"
  std::string why;   // tooltip
  int64_t m = 0, n = 0, k = 0;
  InputKind input = InputKind::Random;
  std::string kernel;  // empty: keep the current kernel
  int tile = 0;        // 0: keep (or the kernel's default when the kernel changes)
};
const std::vector<Preset>& presets();

}  // namespace ts

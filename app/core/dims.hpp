#pragma once
// [SECTION] Sizes a person can pick: what a backend can run (its capacity), the largest M, N or K that fits,
// where the size sliders snap, and the preset problems. Plain arithmetic, shared by the Controls panel, the
// Run menu and the tests; the backends' validate() stays the authority and uses the same byte count.
#include <cstdint>
#include <string>
#include <vector>

#include "problem.hpp"

namespace ts {

// What a backend can run. A zero field sets no limit of that kind.
struct Capacity {
  double max_work = 0;   // M * N * K (the CPU backend: what it serves in seconds)
  double max_bytes = 0;  // device memory for one run's matrices (the CUDA backend: 90 % of free memory)
  std::string what;      // says where the limit comes from, for tooltips ("CPU backend: M N K <= 1024^3")
};

// Bytes a run holds on the device: A (M x K), B (K x N), and C, the reference and C - reference (M x N).
double run_bytes(int64_t m, int64_t n, int64_t k);
bool fits(const Capacity& cap, int64_t m, int64_t n, int64_t k);

enum class Dim { M, N, K };
// The largest value (<= kMaxDim, >= 1) of the dimension `which` for which the problem fits, the other two as
// given; square: M = N = K all change together. 0 when not even 1 fits.
int64_t max_dim(const Capacity& cap, bool square, Dim which, int64_t m, int64_t n, int64_t k);

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

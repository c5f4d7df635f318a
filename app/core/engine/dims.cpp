#include "core/engine/dims.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/io/files.hpp"

namespace ts {

double run_bytes(int64_t m, int64_t n, int64_t k) {
  return 4.0 * (double(m) * double(k) + double(k) * double(n) + 3.0 * double(m) * double(n));
}

bool fits(const Capacity& cap, int64_t m, int64_t n, int64_t k) {
  if (m < 1 || n < 1 || k < 1 || m > kMaxDim || n > kMaxDim || k > kMaxDim) return false;
  if (cap.max_work > 0 && double(m) * double(n) * double(k) > cap.max_work) return false;
  if (cap.max_bytes > 0 && run_bytes(m, n, k) > cap.max_bytes) return false;
  return true;
}

int64_t max_dim(const Capacity& cap, bool square, Dim which, int64_t m, int64_t n, int64_t k) {
  auto ok = [&](int64_t v) {
    if (square) return fits(cap, v, v, v);
    return fits(cap, which == Dim::M ? v : m, which == Dim::N ? v : n, which == Dim::K ? v : k);
  };
  if (!ok(1)) return 0;
  int64_t lo = 1, hi = kMaxDim;  // ok(lo) holds; find the largest
  if (ok(hi)) return hi;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

void check_gpu_grid(const ProblemSpec& s, const std::array<int64_t, 3>& grid) {
  const char* axes[3] = {"x", "y", "z"};
  for (size_t i = 0; i < 3; ++i)
    if (grid[i] > kCudaMaxGrid[i]) {
      std::ostringstream os;
      os << "M x N x K = " << s.m << " x " << s.n << " x " << s.k << " needs a grid of " << grid[0] << " x "
         << grid[1] << " x " << grid[2] << " blocks for " << s.kernel
         << (s.tile ? " tile " + std::to_string(s.tile) : std::string()) << ", but a CUDA grid's " << axes[i]
         << " may be at most " << kCudaMaxGrid[i] << " (a larger tile covers C with fewer blocks)";
      throw ValidationError(os.str());
    }
}

bool gpu_memory_fits(const GpuRunNeeds& need, double free_bytes) {
  return need.total() <= 0.9 * free_bytes;
}

void check_gpu_memory(const ProblemSpec& s, const GpuRunNeeds& need, double free_bytes,
                      const std::string& device) {
  if (gpu_memory_fits(need, free_bytes)) return;
  std::ostringstream os;
  os << "M x N x K = " << s.m << " x " << s.n << " x " << s.k << " needs " << format_bytes(need.total())
     << " of GPU memory for A, B, C, the reference and C - reference"
     << (need.l2_flush > 0 ? " and the L2 flush buffer" : "")
     << (need.worker_copies > 0 ? " and the worker's copies of A and B" : "")
     << (need.input_sets > 0 ? " and the changing inputs' other sets of A and B" : "")
     << (need.workspace > 0
             ? " and " + format_bytes(need.workspace) + " of workspace for " + need.workspace_for
             : std::string())
     << ", but " << device << " has " << format_bytes(free_bytes) << " free (limit: 90% of free memory)";
  throw ValidationError(os.str());
}

int64_t snap_dim(double raw, int step, int64_t lo, int64_t hi) {
  if (hi < lo) hi = lo;
  if (!std::isfinite(raw)) raw = double(lo);
  raw = std::clamp(raw, double(lo), double(hi));
  if (step < 1) step = 8;
  // A power of two close by (in ratio) wins: 4096 is easy to hit on a logarithmic slider.
  const double p2 = std::exp2(std::round(std::log2(std::max(raw, 1.0))));
  int64_t v;
  if (std::fabs(raw / p2 - 1.0) <= 0.03) {
    v = int64_t(p2);
  } else if (raw < double(step)) {
    v = int64_t(p2);  // below one tile: powers of two (1, 2, 4, ...)
  } else {
    v = int64_t(std::llround(raw / double(step))) * step;
  }
  return std::clamp<int64_t>(v, lo, hi);
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> p = {
      {"4096^3, random", "the square shape the classic tiled kernel was first measured on", 4096, 4096, 4096,
       InputKind::Random, "", 0},
      {"4096^3, symmetric A and B",
       "A and B symmetric: A B is still not symmetric (they need not commute), which the third classic bug "
       "assumes",
       4096, 4096, 4096, InputKind::Symmetric, "", 0},
      {"M x N x K = 2048 x 4096 x 8192", "a rectangular shape: C is 2048 x 4096, each dot product 8192 deep",
       2048, 4096, 8192, InputKind::Random, "", 0},
      {"1000^3, identity, tiled_floork T=32",
       "K = 1000 is not a multiple of 32: K / TILE steps drop the last 8 columns of A, so with A = I rows "
       "992-999 of C are wrong (the bottom band of the error map)",
       1000, 1000, 1000, InputKind::Identity, "tiled_floork", 32},
      {"1024^3, symmetric, tiled_mirror T=32",
       "the third classic bug: C assumed symmetric because A and B are, so only its upper triangle is "
       "computed "
       "and mirrored; the lower triangle gets B A instead of A B (the error map is a triangle)",
       1024, 1024, 1024, InputKind::Symmetric, "tiled_mirror", 32},
      {"4099^3, random (ragged)",
       "4099 is prime: every tile size leaves a partial tile at the right and bottom edges", 4099, 4099, 4099,
       InputKind::Random, "", 0},
      {"1000^3, ramp", "A[i][j] = i, B[i][j] = j: row 0 at the top and column 0 at the left at a glance",
       1000, 1000, 1000, InputKind::Ramp, "", 0},
  };
  return p;
}

}  // namespace ts

#include "core/engine/cpu_gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/base/parallel.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TS_X86 1
#endif

namespace ts {

namespace {
void check_tile(int tile) {
  if (tile != 8 && tile != 16 && tile != 32)
    throw std::invalid_argument("tile " + std::to_string(tile) + " is not one of 8, 16, 32");
}
inline void poll(const CancelToken* c) {
  if (c) c->throw_if_cancelled();
}

// [SECTION] The reference: OpenBLAS's dgemm on the inputs widened to double. A product of two floats is
// exact in double (24 + 24 significant bits), so the only rounding before the final one is the sums', in
// double; C is computed in row bands so that a cancelled run stops between bands.
constexpr int64_t kReferenceBandRows = 256;

std::vector<double> widen(const float* p, int64_t count) {
  std::vector<double> d(static_cast<size_t>(count));
  parallel_for(count, int64_t(1) << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) d[size_t(i)] = double(p[i]);
  });
  return d;
}

// OpenBLAS takes 32-bit dimensions (Debian's build is not ILP64). Past them (a CPU run allows, say,
// 1 x 2^31 x 1), the same sums in a plain loop.
void reference_loop(const float* A, const float* B, double* C, int64_t m, int64_t n, int64_t k,
                    const CancelToken* cancel) {
  parallel_for(m, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      poll(cancel);
      double* c = C + size_t(i) * size_t(n);
      std::fill(c, c + n, 0.0);
      for (int64_t p = 0; p < k; ++p) {
        const double a = A[size_t(i) * size_t(k) + size_t(p)];
        const float* b = B + size_t(p) * size_t(n);
        for (int64_t j = 0; j < n; ++j) c[j] += a * double(b[j]);
      }
    }
  });
}

void reference_into(const float* A, const float* B, double* C, int64_t m, int64_t n, int64_t k,
                    const CancelToken* cancel) {
  constexpr int64_t kBlasMax = std::numeric_limits<blasint>::max();
  if (m > kBlasMax || n > kBlasMax || k > kBlasMax) return reference_loop(A, B, C, m, n, k, cancel);
  const std::vector<double> a = widen(A, m * k), b = widen(B, k * n);
  for (int64_t r0 = 0; r0 < m; r0 += kReferenceBandRows) {
    poll(cancel);
    const int64_t rows = std::min(kReferenceBandRows, m - r0);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(rows), blasint(n), blasint(k), 1.0,
                a.data() + size_t(r0) * size_t(k), blasint(k), b.data(), blasint(n), 0.0,
                C + size_t(r0) * size_t(n), blasint(n));
  }
}
}  // namespace

void cpu_gemm_reference(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                        const CancelToken* cancel) {
  std::vector<double> d(size_t(m) * size_t(n));
  reference_into(A, B, d.data(), m, n, k, cancel);
  parallel_for(m * n, int64_t(1) << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) C[i] = float(d[size_t(i)]);
  });
}

std::vector<double> cpu_gemm_reference_f64(const float* A, const float* B, int64_t m, int64_t n, int64_t k) {
  std::vector<double> C(size_t(m) * size_t(n));
  reference_into(A, B, C.data(), m, n, k, nullptr);
  return C;
}

// [SECTION] The twins. The naive and the tiled kernel give every element of C one float accumulator that
// starts at 0 and takes acc = fma(a[p], b[p], acc) for p = 0, 1, ... in order (nvcc contracts acc += a * b
// into one FFMA); the tiled kernel's zero-padded last step adds fma(0, 0, acc) = acc past K (acc is never
// -0: it starts at +0, and a sum that cancels exactly is +0). So every element's arithmetic is a chain of
// fused multiply-adds over p in order, and any loop nest that keeps that chain per element gives the GPU
// kernel's bits. Here it is the loop nest of a BLAS (packed panels of A and B, a register tile of kMr x kNr
// accumulators, K in blocks of kKc walked in order, the accumulators stored in C between blocks, which is
// exact), with SIMD lanes across columns and the row panels shared among the hardware threads.
namespace {
constexpr int64_t kMr = 6, kNr = 16, kKc = 256,
                  kMc = 96;  // kMc: rows of A packed at once (a multiple of kMr)

struct Operands {
  const float* A;
  const float* B;
  float* C;
  int64_t m, n, k;  // k: A's row length (and B's rows)
  int64_t steps;    // the products each element takes: k, or fewer (tiled_floork)
};

// B's first `steps` rows in panels of kNr columns: panel j, row p holds columns j*kNr .. j*kNr + kNr - 1
// (zero past n).
std::vector<float> pack_b(const Operands& o) {
  const int64_t panels = (o.n + kNr - 1) / kNr;
  std::vector<float> packed(size_t(panels * o.steps * kNr));
  parallel_for(panels, 1, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t c0 = j * kNr, cols = std::min(kNr, o.n - c0);
      float* dst = packed.data() + size_t(j * o.steps * kNr);
      for (int64_t p = 0; p < o.steps; ++p, dst += kNr) {
        const float* src = o.B + size_t(p) * size_t(o.n) + size_t(c0);
        std::memcpy(dst, src, size_t(cols) * sizeof(float));
        std::fill(dst + cols, dst + kNr, 0.0f);
      }
    }
  });
  return packed;
}

// Rows r0 .. r0 + rows - 1 of A, columns p0 .. p0 + kc - 1, in panels of kMr rows: panel i, column p holds
// kMr floats (zero past the last row).
void pack_a(const Operands& o, int64_t r0, int64_t rows, int64_t p0, int64_t kc, float* dst) {
  for (int64_t i = 0; i < rows; i += kMr) {
    const int64_t live = std::min(kMr, rows - i);
    for (int64_t p = 0; p < kc; ++p, dst += kMr) {
      int64_t r = 0;
      for (; r < live; ++r) dst[r] = o.A[size_t(r0 + i + r) * size_t(o.k) + size_t(p0 + p)];
      for (; r < kMr; ++r) dst[r] = 0.0f;
    }
  }
}

// One register tile: c (kMr rows of kNr, row stride ldc) = first ? chain from 0 : continue the chain in c,
// over kc products.
void micro_portable(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool first) {
  float acc[kMr][kNr];
  for (int64_t r = 0; r < kMr; ++r)
    for (int64_t j = 0; j < kNr; ++j) acc[r][j] = first ? 0.0f : c[r * ldc + j];
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr)
    for (int64_t r = 0; r < kMr; ++r)
      for (int64_t j = 0; j < kNr; ++j) acc[r][j] = std::fma(a[r], b[j], acc[r][j]);
  for (int64_t r = 0; r < kMr; ++r)
    for (int64_t j = 0; j < kNr; ++j) c[r * ldc + j] = acc[r][j];
}

#if TS_X86
__attribute__((target("avx2,fma"))) void micro_avx2(int64_t kc, const float* a, const float* b, float* c,
                                                    int64_t ldc, bool first) {
  static_assert(kMr == 6 && kNr == 16, "the AVX2 tile is 6 x 16");
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  if (first) {
    c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
  } else {
    c00 = _mm256_loadu_ps(c), c01 = _mm256_loadu_ps(c + 8);
    c10 = _mm256_loadu_ps(c + ldc), c11 = _mm256_loadu_ps(c + ldc + 8);
    c20 = _mm256_loadu_ps(c + 2 * ldc), c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
    c30 = _mm256_loadu_ps(c + 3 * ldc), c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
    c40 = _mm256_loadu_ps(c + 4 * ldc), c41 = _mm256_loadu_ps(c + 4 * ldc + 8);
    c50 = _mm256_loadu_ps(c + 5 * ldc), c51 = _mm256_loadu_ps(c + 5 * ldc + 8);
  }
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    __m256 x = _mm256_broadcast_ss(a);
    c00 = _mm256_fmadd_ps(x, b0, c00), c01 = _mm256_fmadd_ps(x, b1, c01);
    x = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(x, b0, c10), c11 = _mm256_fmadd_ps(x, b1, c11);
    x = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(x, b0, c20), c21 = _mm256_fmadd_ps(x, b1, c21);
    x = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(x, b0, c30), c31 = _mm256_fmadd_ps(x, b1, c31);
    x = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(x, b0, c40), c41 = _mm256_fmadd_ps(x, b1, c41);
    x = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(x, b0, c50), c51 = _mm256_fmadd_ps(x, b1, c51);
  }
  _mm256_storeu_ps(c, c00), _mm256_storeu_ps(c + 8, c01);
  _mm256_storeu_ps(c + ldc, c10), _mm256_storeu_ps(c + ldc + 8, c11);
  _mm256_storeu_ps(c + 2 * ldc, c20), _mm256_storeu_ps(c + 2 * ldc + 8, c21);
  _mm256_storeu_ps(c + 3 * ldc, c30), _mm256_storeu_ps(c + 3 * ldc + 8, c31);
  _mm256_storeu_ps(c + 4 * ldc, c40), _mm256_storeu_ps(c + 4 * ldc + 8, c41);
  _mm256_storeu_ps(c + 5 * ldc, c50), _mm256_storeu_ps(c + 5 * ldc + 8, c51);
}
#endif

using MicroFn = void (*)(int64_t, const float*, const float*, float*, int64_t, bool);

MicroFn pick_micro() {
#if TS_X86
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &micro_avx2;
#endif
  return &micro_portable;
}

// C = the fma chains of o.steps products per element (every element of C written).
void fma_chains(const Operands& o, const CancelToken* cancel) {
  if (o.m <= 0 || o.n <= 0) return;
  if (o.steps == 0) {  // no product: every accumulator stays 0
    parallel_for(o.m, 64, [&](int64_t r0, int64_t r1) {
      std::fill(o.C + size_t(r0) * size_t(o.n), o.C + size_t(r1) * size_t(o.n), 0.0f);
    });
    return;
  }
  static const MicroFn micro = pick_micro();
  const std::vector<float> bp = pack_b(o);
  const int64_t col_panels = (o.n + kNr - 1) / kNr, row_panels = (o.m + kMr - 1) / kMr;
  // Threads take bands of row panels; each band walks K in order, so each element's chain stays in order.
  parallel_for(row_panels, 4, [&](int64_t i0, int64_t i1) {
    std::vector<float> ap(size_t(kMc * kKc));
    float edge[kMr * kNr];
    const int64_t band0 = i0 * kMr, band1 = std::min(o.m, i1 * kMr);
    for (int64_t p0 = 0; p0 < o.steps; p0 += kKc) {
      const int64_t kc = std::min(kKc, o.steps - p0);
      const bool first = p0 == 0;
      for (int64_t r0 = band0; r0 < band1; r0 += kMc) {
        poll(cancel);
        const int64_t rows = std::min(kMc, band1 - r0);
        pack_a(o, r0, rows, p0, kc, ap.data());
        for (int64_t j = 0; j < col_panels; ++j) {
          const float* b = bp.data() + size_t(j * o.steps * kNr + p0 * kNr);
          const int64_t c0 = j * kNr, cols = std::min(kNr, o.n - c0);
          for (int64_t i = 0; i < rows; i += kMr) {
            const int64_t live = std::min(kMr, rows - i);
            float* c = o.C + size_t(r0 + i) * size_t(o.n) + size_t(c0);
            const float* a = ap.data() + size_t(i * kc);
            if (live == kMr && cols == kNr) {
              micro(kc, a, b, c, o.n, first);
              continue;
            }
            // A tile at the edge of C: through a full-size scratch tile, copying only C's own elements.
            if (!first)
              for (int64_t r = 0; r < live; ++r) std::memcpy(edge + r * kNr, c + r * o.n, size_t(cols) * 4);
            micro(kc, a, b, edge, kNr, first);
            for (int64_t r = 0; r < live; ++r) std::memcpy(c + r * o.n, edge + r * kNr, size_t(cols) * 4);
          }
        }
      }
    }
  });
}

void tiled_impl(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k, int tile,
                const CancelToken* cancel, bool ceil_steps) {
  check_tile(tile);
  const int64_t steps = ceil_steps ? k : k / tile * tile;
  fma_chains({A, B, C, m, n, k, steps}, cancel);
}

}  // namespace

void cpu_gemm_naive(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k, int tile,
                    const CancelToken* cancel) {
  check_tile(tile);
  fma_chains({A, B, C, m, n, k, k}, cancel);
}

void cpu_gemm_tiled(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k, int tile,
                    const CancelToken* cancel) {
  tiled_impl(A, B, C, m, n, k, tile, cancel, true);
}

void cpu_gemm_tiled_floork(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                           int tile, const CancelToken* cancel) {
  tiled_impl(A, B, C, m, n, k, tile, cancel, false);
}

void cpu_gemm_tiled_mirror(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                           int tile, const CancelToken* cancel) {
  tiled_impl(A, B, C, m, n, k, tile, cancel, true);
  // Below the diagonal, the mirror of the upper triangle: C[i][j] = C[j][i] where (j, i) is inside C; the
  // rest keeps the bytes of a poisoned C (0xff), as on the GPU, where the kernel never writes them.
  float unwritten;
  const uint32_t poison = 0xffffffffu;
  std::memcpy(&unwritten, &poison, sizeof unwritten);
  parallel_for(m, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < std::min(i, n); ++j)
        C[size_t(i) * size_t(n) + size_t(j)] =
            (i < n && j < m) ? C[size_t(j) * size_t(n) + size_t(i)] : unwritten;
  });
}

}  // namespace ts

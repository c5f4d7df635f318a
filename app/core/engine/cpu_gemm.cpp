#include "core/engine/cpu_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/base/parallel.hpp"

namespace ts {

namespace {
void check_tile(int tile) {
  if (tile != 8 && tile != 16 && tile != 32)
    throw std::invalid_argument("tile " + std::to_string(tile) + " is not one of 8, 16, 32");
}
inline void poll(const CancelToken* c) {
  if (c) c->throw_if_cancelled();
}
}  // namespace

void cpu_gemm_reference(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                        const CancelToken* cancel) {
  parallel_for(m, 1, [&](int64_t r0, int64_t r1) {
    std::vector<double> acc(static_cast<size_t>(n));
    for (int64_t i = r0; i < r1; ++i) {
      poll(cancel);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t p = 0; p < k; ++p) {
        const double a = A[size_t(i) * size_t(k) + size_t(p)];
        const float* b = B + size_t(p) * size_t(n);
        for (int64_t j = 0; j < n; ++j) acc[size_t(j)] += a * double(b[j]);
      }
      for (int64_t j = 0; j < n; ++j) C[size_t(i) * size_t(n) + size_t(j)] = float(acc[size_t(j)]);
    }
  });
}

std::vector<double> cpu_gemm_reference_f64(const float* A, const float* B, int64_t m, int64_t n, int64_t k) {
  std::vector<double> C(size_t(m) * size_t(n), 0.0);
  parallel_for(m, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      double* c = C.data() + size_t(i) * size_t(n);
      for (int64_t p = 0; p < k; ++p) {
        const double a = A[size_t(i) * size_t(k) + size_t(p)];
        const float* b = B + size_t(p) * size_t(n);
        for (int64_t j = 0; j < n; ++j) c[j] += a * double(b[j]);
      }
    }
  });
  return C;
}

void cpu_gemm_naive(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k, int tile,
                    const CancelToken* cancel) {
  check_tile(tile);
  parallel_for(m, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      poll(cancel);
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (int64_t p = 0; p < k; ++p)
          acc += A[size_t(i) * size_t(k) + size_t(p)] * B[size_t(p) * size_t(n) + size_t(j)];
        C[size_t(i) * size_t(n) + size_t(j)] = acc;
      }
    }
  });
}

namespace {
void tiled_impl(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k, int tile,
                const CancelToken* cancel, bool ceil_steps) {
  check_tile(tile);
  const int64_t T = tile;
  const int64_t block_rows = (m + T - 1) / T, block_cols = (n + T - 1) / T;
  const int64_t steps = ceil_steps ? (k + T - 1) / T : k / T;
  parallel_for(block_rows, 1, [&](int64_t br0, int64_t br1) {
    // The two "shared memory" tiles and one block of accumulators, as one GPU thread block holds them.
    std::vector<float> As(size_t(T * T)), Bs(size_t(T * T)), acc(size_t(T * T));
    for (int64_t br = br0; br < br1; ++br) {
      poll(cancel);
      for (int64_t bc = 0; bc < block_cols; ++bc) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t s = 0; s < steps; ++s) {
          for (int64_t ty = 0; ty < T; ++ty)
            for (int64_t tx = 0; tx < T; ++tx) {
              int64_t ar = br * T + ty, ac = s * T + tx;  // element of A this thread loads
              int64_t brow = s * T + ty, bcol = bc * T + tx;
              As[size_t(ty * T + tx)] = (ar < m && ac < k) ? A[size_t(ar) * size_t(k) + size_t(ac)] : 0.0f;
              Bs[size_t(ty * T + tx)] =
                  (brow < k && bcol < n) ? B[size_t(brow) * size_t(n) + size_t(bcol)] : 0.0f;
            }
          // Each (ty, tx) accumulates p = 0..T-1 in order, as its GPU thread does; the loop order only
          // lets the compiler vectorise across tx.
          for (int64_t ty = 0; ty < T; ++ty)
            for (int64_t p = 0; p < T; ++p) {
              const float a = As[size_t(ty * T + p)];
              float* row = acc.data() + ty * T;
              const float* b = Bs.data() + p * T;
              for (int64_t tx = 0; tx < T; ++tx) row[tx] += a * b[tx];
            }
        }
        for (int64_t ty = 0; ty < T; ++ty)
          for (int64_t tx = 0; tx < T; ++tx) {
            int64_t r = br * T + ty, c = bc * T + tx;
            if (r < m && c < n) C[size_t(r) * size_t(n) + size_t(c)] = acc[size_t(ty * T + tx)];
          }
      }
    }
  });
}

}  // namespace

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

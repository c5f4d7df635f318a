#pragma once
// [SECTION] GEMM on the CPU: the reference every check trusts, and the CPU backend's kernels.
// All compute C (m x n) = A (m x k) * B (k x n), row-major, and use every hardware thread.
#include <cstdint>
#include <vector>

#include "core/base/cancel.hpp"

namespace ts {

// Reference: products accumulated in double, rounded once. What every kernel is checked against on the CPU
// and what the GPU tests use as their double-precision reference.
void cpu_gemm_reference(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                        const CancelToken* cancel = nullptr);
// Same, keeping the double result.
std::vector<double> cpu_gemm_reference_f64(const float* A, const float* B, int64_t m, int64_t n, int64_t k);

// The naive kernel's algorithm: one float dot product per output element, k in order.
void cpu_gemm_naive(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k, int tile,
                    const CancelToken* cancel = nullptr);

// The classic tiled kernel's algorithm: for each tile x tile block of C, walk ceil(k / tile) steps, copy one
// tile of A and one of B (zero-padded past the edges, like the bounds-checked shared-memory loads) and
// accumulate in float in the same order as the GPU thread does.
void cpu_gemm_tiled(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k, int tile,
                    const CancelToken* cancel = nullptr);
// The teaching variant that walks k / tile steps (drops the last partial tile when tile does not divide k).
void cpu_gemm_tiled_floork(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                           int tile, const CancelToken* cancel = nullptr);
// The teaching variant that assumes C is symmetric: the tiled result on and above the diagonal (col >= row),
// mirrored below it where the mirror lies inside C; elements it never writes are NaN (as the GPU's poisoned
// C).
void cpu_gemm_tiled_mirror(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                           int tile, const CancelToken* cancel = nullptr);

}  // namespace ts

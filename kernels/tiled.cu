// The classic shared-memory tiled SGEMM (the textbook kernel TileScope grew from).
// A TILE x TILE thread block computes a TILE x TILE tile of C. For each of ceil(K / TILE) steps it stages one
// tile of A and one of B in shared memory, waits, accumulates TILE products per thread, and waits again.
// What it buys: every value loaded from global memory is used TILE times from shared memory.
// What it costs: two block-wide barriers per step, one output per thread (so every FMA still needs two
// shared-memory loads), and TILE^2 threads per block, which limits resident blocks per SM.
#include "cuda_check.cuh"
#include "launch.hpp"

namespace ts {

template <int T>
__global__ void tiled_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             int64_t m, int64_t n, int64_t k) {
  __shared__ float As[T][T];
  __shared__ float Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = int64_t(blockIdx.y) * T + ty;
  const int64_t col = int64_t(blockIdx.x) * T + tx;
  const int64_t steps = (k + T - 1) / T;  // ceil: the last, partial tile counts too
  float acc = 0.0f;
  for (int64_t s = 0; s < steps; ++s) {
    // Bounds-checked loads: past the edge of A or B, load zero, which adds nothing to the dot product.
    const int64_t a_col = s * T + tx, b_row = s * T + ty;
    As[ty][tx] = (row < m && a_col < k) ? A[row * k + a_col] : 0.0f;
    Bs[ty][tx] = (b_row < k && col < n) ? B[b_row * n + col] : 0.0f;
    __syncthreads();  // the whole tile must be loaded before anyone reads it
#pragma unroll
    for (int p = 0; p < T; ++p) acc += As[ty][p] * Bs[p][tx];
    __syncthreads();  // and fully read before the next step overwrites it
  }
  if (row < m && col < n) C[row * n + col] = acc;
}

template <int T>
static void launch_tiled_t(const GemmArgs& a, cudaStream_t s) {
  dim3 block(T, T), grid(unsigned((a.n + T - 1) / T), unsigned((a.m + T - 1) / T));
  tiled_kernel<T><<<grid, block, 0, s>>>(a.A, a.B, a.C, a.m, a.n, a.k);
  CUDA_CHECK_LAUNCH();
}

void launch_tiled(const GemmArgs& a, int tile, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (tile) {
    case 8:
      return launch_tiled_t<8>(a, s);
    case 16:
      return launch_tiled_t<16>(a, s);
    case 32:
      return launch_tiled_t<32>(a, s);
  }
  throw std::invalid_argument("tiled: unsupported tile " + std::to_string(tile));
}

}  // namespace ts

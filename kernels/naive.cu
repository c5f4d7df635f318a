// Naive SGEMM: one thread per element of C, a dot product straight out of global memory.
// Why it is slow: each multiply-add needs a load of A and a load of B; threads of a warp read A's row
// at the same address (a broadcast) and B's row coalesced, but nothing is reused from on-chip memory, so
// the kernel is bound by L1/L2 bandwidth far below the FP32 peak.
#include "cuda_check.cuh"
#include "launch.hpp"

namespace ts {

template <int T>
__global__ void naive_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             int64_t m, int64_t n, int64_t k) {
  const int64_t row = int64_t(blockIdx.y) * T + threadIdx.y;
  const int64_t col = int64_t(blockIdx.x) * T + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int64_t p = 0; p < k; ++p) acc += A[row * k + p] * B[p * n + col];
  C[row * n + col] = acc;
}

template <int T>
static void launch_naive_t(const GemmArgs& a, cudaStream_t s) {
  dim3 block(T, T), grid(unsigned((a.n + T - 1) / T), unsigned((a.m + T - 1) / T));
  naive_kernel<T><<<grid, block, 0, s>>>(a.A, a.B, a.C, a.m, a.n, a.k);
  CUDA_CHECK_LAUNCH();
}

void launch_naive(const GemmArgs& a, int tile, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (tile) {
    case 8:
      return launch_naive_t<8>(a, s);
    case 16:
      return launch_naive_t<16>(a, s);
    case 32:
      return launch_naive_t<32>(a, s);
  }
  throw std::invalid_argument("naive: unsupported block edge " + std::to_string(tile));
}

}  // namespace ts

// Rung 5: 2-D register blocking. Each thread computes a TM x TN sub-tile of C as an outer product: per k it
// loads TM values of A and TN values of B from shared memory into registers and does TM * TN FMAs.
// What it buys: shared-memory loads per FMA fall to (TM + TN) / (TM * TN) (1/4 for 8 x 8), and larger block
// tiles (128 x 128) halve global traffic per FLOP again.
// What it costs: TM * TN accumulators plus TM + TN operands in registers (about 100 per thread for 8 x 8),
// fewer threads per block, and scalar loads that leave memory bandwidth on the table (the next rung).
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include "kernels/rungs/gemm_common.cuh"

namespace ts {

template <int BM, int BN, int BK, int TM, int TN, bool kTrace>
__global__ void __launch_bounds__(BM* BN / (TM * TN))
    blocktile2d_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                       int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  trace_begin<kTrace>(trace);
  constexpr int NT = BM * BN / (TM * TN);
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  const int tid = threadIdx.x;
  const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;
  float acc[TM][TN] = {};
  float ra[TM], rb[TN];
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    for (int i = tid; i < BM * BK; i += NT) As[i] = load_or_zero(A, row0 + i / BK, k0 + i % BK, m, k, k);
    for (int i = tid; i < BK * BN; i += NT) Bs[i] = load_or_zero(B, k0 + i / BN, col0 + i % BN, k, n, n);
    __syncthreads();
#pragma unroll
    for (int d = 0; d < BK; ++d) {
#pragma unroll
      for (int i = 0; i < TM; ++i) ra[i] = As[(trow * TM + i) * BK + d];
#pragma unroll
      for (int j = 0; j < TN; ++j) rb[j] = Bs[d * BN + tcol * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = row0 + trow * TM + i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int64_t col = col0 + tcol * TN + j;
      if (row < m && col < n) C[row * n + col] = acc[i][j];
    }
  }
  trace_end<kTrace>(trace);
}

template <int BM, int BN, int BK, int TM, int TN>
static void go(const GemmArgs& a, cudaStream_t s, LaunchQuery* q) {
  const dim3 grid(blocks_for(a.n, BN), blocks_for(a.m, BM));
  launch_or_query(blocktile2d_kernel<BM, BN, BK, TM, TN, false>, blocktile2d_kernel<BM, BN, BK, TM, TN, true>,
                  grid, dim3(BM * BN / (TM * TN)), 0, s, q, BM, BN, a);
}

void launch_blocktile2d(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  auto s = static_cast<cudaStream_t>(stream);
  if (tile == 64) return go<64, 64, 8, 4, 4>(a, s, q);
  if (tile == 128) return go<128, 128, 8, 8, 8>(a, s, q);
  bad_tile("blocktile2d", tile);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_blocktile2d() {
  KernelInfo k = kernel_info(
      "blocktile2d", "5. 2-D register blocking",
      "Each thread computes an outer product (up to 8 x 8) per k: 1/4 of a shared-memory "
      "load per FMA, paid for with about 100 registers per thread.",
      {64, 128},
      {"block 64 x 64 x 8, thread 4 x 4, 256 threads", "block 128 x 128 x 8, thread 8 x 8, 256 threads"}, 128,
      "256");
  TileGeometry g64 = block_tile(64, 64, 8), g128 = block_tile(128, 128, 8);
  k.geometry = {thread_pieces(g64, 4, 4), thread_pieces(g128, 8, 8)};  // one square of outputs per thread
  return {k, TS_LAUNCHER(launch_blocktile2d)};
}

}  // namespace ts

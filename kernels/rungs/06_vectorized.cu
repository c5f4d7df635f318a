// Rung 6: vectorized loads. The 2-D blocked kernel, with 128-bit (float4) global loads and stores and A
// stored transposed in shared memory (As[k][m]) so that a thread's TM values of A are contiguous: two LDS.128
// instead of eight scalar loads, for A and for B alike. What it buys: a quarter of the load instructions,
// wider memory transactions. What it costs: the transposing store into shared memory, and 16-byte alignment:
// the vector path is taken only when K (for A) and N (for B and C) are multiples of 4; otherwise the same
// kernel loads element by element.
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include "kernels/rungs/gemm_common.cuh"

namespace ts {

template <int BM, int BN, int BK, int TM, int TN, bool kTrace>
__global__ void __launch_bounds__(BM* BN / (TM * TN))
    vectorized_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                      int64_t m, int64_t n, int64_t k, TileRecord* trace, bool vec_a, bool vec_b) {
  trace_begin<kTrace>(trace);
  constexpr int NT = BM * BN / (TM * TN);
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BN % 4 == 0, "float4 tiles");
  __shared__ __align__(16) float As[BK * BM];  // transposed: As[d * BM + row]
  __shared__ __align__(16) float Bs[BK * BN];
  const int tid = threadIdx.x;
  const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;
  float acc[TM][TN] = {};
  float ra[TM], rb[TN];
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    for (int i = tid; i < BM * BK / 4; i += NT) {
      const int r = i / (BK / 4), c = (i % (BK / 4)) * 4;
      const float4 v = load4_or_zero(A, row0 + r, k0 + c, m, k, k, vec_a);
      As[(c + 0) * BM + r] = v.x;
      As[(c + 1) * BM + r] = v.y;
      As[(c + 2) * BM + r] = v.z;
      As[(c + 3) * BM + r] = v.w;
    }
    for (int i = tid; i < BK * BN / 4; i += NT) {
      const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
      *reinterpret_cast<float4*>(&Bs[r * BN + c]) = load4_or_zero(B, k0 + r, col0 + c, k, n, n, vec_b);
    }
    __syncthreads();
#pragma unroll
    for (int d = 0; d < BK; ++d) {
#pragma unroll
      for (int i = 0; i < TM; i += 4)
        *reinterpret_cast<float4*>(&ra[i]) = *reinterpret_cast<const float4*>(&As[d * BM + trow * TM + i]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        *reinterpret_cast<float4*>(&rb[j]) = *reinterpret_cast<const float4*>(&Bs[d * BN + tcol * TN + j]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; j += 4)
      store4_checked(C, row0 + trow * TM + i, col0 + tcol * TN + j, m, n, n, vec_b,
                     make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
  trace_end<kTrace>(trace);
}

template <int BM, int BN, int BK, int TM, int TN>
static void go(const GemmArgs& a, cudaStream_t s, LaunchQuery* q) {
  const dim3 grid(blocks_for(a.n, BN), blocks_for(a.m, BM));
  launch_or_query(vectorized_kernel<BM, BN, BK, TM, TN, false>, vectorized_kernel<BM, BN, BK, TM, TN, true>,
                  grid, dim3(BM * BN / (TM * TN)), 0, s, q, BM, BN, a, a.k % 4 == 0, a.n % 4 == 0);
}

void launch_vectorized(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  auto s = static_cast<cudaStream_t>(stream);
  if (tile == 64) return go<64, 64, 8, 4, 4>(a, s, q);
  if (tile == 128) return go<128, 128, 8, 8, 8>(a, s, q);
  bad_tile("vectorized", tile);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_vectorized() {
  KernelInfo k = kernel_info(
      "vectorized", "6. Vectorized loads",
      "2-D blocking with 128-bit loads and stores and A transposed in shared memory: a "
      "quarter of the load instructions; needs K and N to be multiples of 4 for the vector "
      "path.",
      {64, 128},
      {"block 64 x 64 x 8, thread 4 x 4, 256 threads", "block 128 x 128 x 8, thread 8 x 8, 256 threads"}, 128,
      "256");
  TileGeometry g64 = block_tile(64, 64, 8), g128 = block_tile(128, 128, 8);
  k.geometry = {thread_pieces(g64, 4, 4), thread_pieces(g128, 8, 8)};  // one square of outputs per thread
  return {k, TS_LAUNCHER(launch_vectorized)};
}

}  // namespace ts

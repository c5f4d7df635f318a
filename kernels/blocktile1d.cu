// Rung 4: 1-D register blocking. A block computes a BM x BN tile of C with BM*BN/TM threads; each thread
// computes TM outputs down one column, keeping them in registers.
// What it buys: the B value loaded from shared memory is reused TM times from a register, so shared-memory
// loads per FMA drop from 2 to about 1 + 1/TM, and the tile of A is reused across BN columns.
// What it costs: TM accumulators per thread (registers), and a thread count fixed by the tile shape.
#include "gemm_common.cuh"

namespace ts {

template <int BM, int BN, int BK, int TM, bool kTrace>
__global__ void __launch_bounds__(BM* BN / TM)
    blocktile1d_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                       int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  trace_begin<kTrace>(trace);
  constexpr int NT = BM * BN / TM;
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  const int tid = threadIdx.x;
  const int tcol = tid % BN, trow = tid / BN;  // a warp spans consecutive columns: coalesced C writes
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;
  float acc[TM] = {};
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    for (int i = tid; i < BM * BK; i += NT) As[i] = load_or_zero(A, row0 + i / BK, k0 + i % BK, m, k, k);
    for (int i = tid; i < BK * BN; i += NT) Bs[i] = load_or_zero(B, k0 + i / BN, col0 + i % BN, k, n, n);
    __syncthreads();
#pragma unroll
    for (int d = 0; d < BK; ++d) {
      const float b = Bs[d * BN + tcol];
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += As[(trow * TM + i) * BK + d] * b;
    }
    __syncthreads();
  }
  const int64_t col = col0 + tcol;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = row0 + trow * TM + i;
    if (row < m && col < n) C[row * n + col] = acc[i];
  }
  trace_end<kTrace>(trace);
}

void launch_blocktile1d(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  if (tile != 64) bad_tile("blocktile1d", tile);
  constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
  const dim3 grid(blocks_for(a.n, BN), blocks_for(a.m, BM));
  launch_or_query(blocktile1d_kernel<BM, BN, BK, TM, false>, blocktile1d_kernel<BM, BN, BK, TM, true>, grid,
                  dim3(BM * BN / TM), 0, static_cast<cudaStream_t>(stream), q, BM, BN, a);
}

}  // namespace ts

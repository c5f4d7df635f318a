// Rung 4: 1-D register blocking. A block computes a BM x BN tile of C with BM*BN/TM threads; each thread
// computes TM outputs down one column, keeping them in registers.
// What it buys: the B value loaded from shared memory is reused TM times from a register, so shared-memory
// loads per FMA drop from 2 to about 1 + 1/TM, and the tile of A is reused across BN columns.
// What it costs: TM accumulators per thread (registers), and a thread count fixed by the tile shape.
// Two things this rung must get right to show the gain (measured on an H100 at 4096^3): with the copy loops
// written as `for (i = tid; i < BM * BK; i += NT)` and 64-bit bounds-checked indices per element, the
// compiler kept a general loop with 64-bit multiplies around each copy (6.7 TFLOP/s); one element per thread
// per operand through pointers computed once gives 9.2. And the compiler, free to, spends 118 registers
// hoisting all 64 A values of a step, which leaves room for one 512-thread block per SM, so every
// __syncthreads() idles the SM; __launch_bounds__(512, 2) caps it at 64 and two blocks overlap: 16.4.
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include "kernels/rungs/gemm_common.cuh"

namespace ts {

template <int BM, int BN, int BK, int TM, bool kTrace>
__global__ void __launch_bounds__(BM* BN / TM, 2)
    blocktile1d_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                       int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  trace_begin<kTrace>(trace);
  constexpr int NT = BM * BN / TM;
  static_assert(BM * BK == NT && BK * BN == NT, "each thread copies one element of A and one of B per step");
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  const int tid = threadIdx.x;
  const int tcol = tid % BN, trow = tid / BN;  // a warp spans consecutive columns: coalesced C writes
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;
  // The element this thread copies each step: A[row0 + ar][k0 + ac] into As[tid], B[k0 + br][col0 + bc] into
  // Bs[tid]. The source pointers are computed once and advanced by one step each time; the 64-bit index math
  // stays out of the loop.
  const int ar = tid / BK, ac = tid % BK, br = tid / BN, bc = tid % BN;
  const bool a_ok = row0 + ar < m, b_ok = col0 + bc < n;
  const float* a_src = A + (a_ok ? row0 + ar : 0) * k + ac;
  const float* b_src = B + int64_t(br) * n + (b_ok ? col0 + bc : 0);
  const int64_t b_step = int64_t(BK) * n;
  float acc[TM] = {};
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    As[tid] = a_ok && k0 + ac < k ? *a_src : 0.0f;
    Bs[tid] = b_ok && k0 + br < k ? *b_src : 0.0f;
    a_src += BK;
    b_src += b_step;
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
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_blocktile1d() {
  KernelInfo k =
      kernel_info("blocktile1d", "4. 1-D register blocking",
                  "Each thread computes 8 outputs down a column from registers, reusing each B value 8 "
                  "times: fewer shared-memory loads per FMA, at the cost of 8 accumulators per thread.",
                  {64}, {"block 64 x 64 x 8, thread 8 x 1, 512 threads"}, 64, "512");
  TileGeometry g = block_tile(64, 64, 8);
  k.geometry = {thread_pieces(g, 8, 1)};  // a thread's 8 rows of one column
  return {k, TS_LAUNCHER(launch_blocktile1d)};
}

}  // namespace ts

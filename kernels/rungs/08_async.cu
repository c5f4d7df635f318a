// Rung 8: double-buffered loads with cp.async. Two shared-memory stages: while the warps compute on one, the
// copy engine path (cp.async, sm_80+) fills the other straight from global memory without staging through
// registers, so load latency hides behind FMAs. Same warp tiling as the previous rung, with a deeper K step.
// A is kept untransposed (As[m][k], 16-byte copies need contiguous destinations); a thread reads four k at
// once for each of its rows, and the eight lanes of a 128-bit load phase share one row, so the reads
// broadcast. What it buys: load latency overlapped with compute, one fewer register hop per loaded value.
// What it costs: twice the shared memory, pipeline bookkeeping (commit / wait groups), and 16-byte copies
// only when K (for A) and N (for B) are multiples of 4; otherwise 4-byte copies, element by element.
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include "kernels/rungs/gemm_common.cuh"

namespace ts {

namespace {
constexpr int BM = 128, BN = 128, WM = 32, WN = 64, NT = 256;
static_assert((BM / WM) * (BN / WN) * 32 == NT, "8 warps");

template <int BK>
struct Stage {
  float a[BM][BK];
  float b[BK][BN];
};

// One pipeline stage: the A tile (BM x BK) and the B tile (BK x BN) at k0.
template <int BK, bool kVecA, bool kVecB>
__device__ __forceinline__ void load_stage(Stage<BK>& s, const float* __restrict__ A,
                                           const float* __restrict__ B, int64_t m, int64_t n, int64_t k,
                                           int64_t row0, int64_t col0, int64_t k0, int tid) {
  cp_async_tile<BM, BK, BK, NT, kVecA>(&s.a[0][0], A, m, k, k, row0, k0, tid);
  cp_async_tile<BK, BN, BN, NT, kVecB>(&s.b[0][0], B, k, n, n, k0, col0, tid);
}
}  // namespace

template <int BK, bool kVecA, bool kVecB, bool kTrace>
__global__ void __launch_bounds__(NT)
    async_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int64_t m,
                 int64_t n, int64_t k, TileRecord* trace) {
  trace_begin<kTrace>(trace);
  __shared__ __align__(16) Stage<BK> stages[2];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wr = warp / (BN / WN), wc = warp % (BN / WN);
  const int lr = lane / 8, lc = lane % 8;
  const int a_off = wr * WM + lr * 4;
  const int b_off = wc * WN + lc * 4;
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;
  const int64_t tiles = (k + BK - 1) / BK;

  float acc[8][8] = {};
  float ra[8][4], rb[8];
  load_stage<BK, kVecA, kVecB>(stages[0], A, B, m, n, k, row0, col0, 0, tid);
  cp_async_commit();
  for (int64_t t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      load_stage<BK, kVecA, kVecB>(stages[(t + 1) & 1], A, B, m, n, k, row0, col0, (t + 1) * BK, tid);
      cp_async_commit();
      cp_async_wait<1>();  // everything but the newest group (the next tile) has landed
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const Stage<BK>& s = stages[t & 1];
#pragma unroll
    for (int kk = 0; kk < BK; kk += 4) {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int r = a_off + (i < 4 ? i : WM / 2 + i - 4);
        *reinterpret_cast<float4*>(&ra[i][0]) = *reinterpret_cast<const float4*>(&s.a[r][kk]);
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        *reinterpret_cast<float4*>(&rb[0]) = *reinterpret_cast<const float4*>(&s.b[kk + q][b_off]);
        *reinterpret_cast<float4*>(&rb[4]) = *reinterpret_cast<const float4*>(&s.b[kk + q][b_off + WN / 2]);
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[i][j] += ra[i][q] * rb[j];
      }
    }
    __syncthreads();  // everyone is done with this stage before it is refilled two tiles from now
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t row = row0 + a_off + (i < 4 ? i : WM / 2 + i - 4);
    store4_checked(C, row, col0 + b_off, m, n, n, kVecB,
                   make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
    store4_checked(C, row, col0 + b_off + WN / 2, m, n, n, kVecB,
                   make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
  }
  trace_end<kTrace>(trace);
}

// BK = 16 measured best on an H100 (4096^3: 38-40 TFLOP/s; BK = 8, or forcing 2 blocks per SM through
// __launch_bounds__ at the cost of register spills, was 2-7 % slower).
constexpr int kBK = 16;

template <bool kVecA, bool kVecB>
static void go(const GemmArgs& a, cudaStream_t s, LaunchQuery* q) {
  const dim3 grid(blocks_for(a.n, BN), blocks_for(a.m, BM));
  launch_or_query(async_kernel<kBK, kVecA, kVecB, false>, async_kernel<kBK, kVecA, kVecB, true>, grid,
                  dim3(NT), 0, s, q, BM, BN, a);
}

void launch_async(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  if (tile != 128) bad_tile("async", tile);
  auto s = static_cast<cudaStream_t>(stream);
  const bool va = a.k % 4 == 0, vb = a.n % 4 == 0;
  if (va && vb)
    go<true, true>(a, s, q);
  else if (va)
    go<true, false>(a, s, q);
  else if (vb)
    go<false, true>(a, s, q);
  else
    go<false, false>(a, s, q);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_async() {
  KernelInfo k = kernel_info(
      "async", "8. Double-buffered (cp.async)",
      "Two shared-memory stages filled by cp.async while the other is computed on: load "
      "latency hides behind FMAs, for twice the shared memory and pipeline bookkeeping.",
      {128}, {"block 128 x 128 x 16, warp 32 x 64, thread 8 x 8, 2 stages, 256 threads"}, 128, "256");
  k.min_sm = 80;
  TileGeometry g = block_tile(128, 128, 16, 2);
  thread_pieces(g, 4, 4, 2, 2, 16, 32);
  k.geometry = {warp_tile(g, 32, 64)};
  return {k, TS_LAUNCHER(launch_async)};
}

}  // namespace ts

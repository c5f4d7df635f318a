// Rung 7: warp tiling. The 128 x 128 block tile is split into 32 x 64 warp tiles, and each thread's 8 x 8
// outputs are four 4 x 4 pieces spread over its warp tile (rows r and r + 16, columns c and c + 32).
// What it buys: the eight threads that issue one 128-bit shared-memory load together read either the same
// A address (a broadcast) or eight consecutive float4 of B (all 32 banks, no conflict); the transposed A tile
// is padded so that its transposing stores do not conflict either. A warp's loads also stay inside a small
// region, which helps the L1 and register reuse.
// What it costs: index arithmetic that is harder to read, and the same single-buffered load-sync-compute-sync
// rhythm as before (the next rung overlaps loads with compute).
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include "kernels/rungs/gemm_common.cuh"

namespace ts {

namespace {
constexpr int BM = 128, BN = 128, BK = 8, WM = 32, WN = 64, NT = 256;
constexpr int APAD =
    4;  // As row stride BM + 4: transposing stores of rows r and r + 1 land in different banks
static_assert((BM / WM) * (BN / WN) * 32 == NT, "8 warps");
static_assert(WM == 32 && WN == 64, "lane layout below: 4 x 8 lanes, each 2 x 2 pieces of 4 x 4");
}  // namespace

template <bool kTrace>
__global__ void __launch_bounds__(NT)
    warptile_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                    int64_t m, int64_t n, int64_t k, TileRecord* trace, bool vec_a, bool vec_b) {
  trace_begin<kTrace>(trace);
  __shared__ __align__(16) float As[BK][BM + APAD];
  __shared__ __align__(16) float Bs[BK][BN];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wr = warp / (BN / WN), wc = warp % (BN / WN);
  const int lr = lane / 8, lc = lane % 8;
  const int a_off = wr * WM + lr * 4;  // this thread's rows: a_off + {0..3} and a_off + 16 + {0..3}
  const int b_off = wc * WN + lc * 4;  // its columns: b_off + {0..3} and b_off + 32 + {0..3}
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;

  float acc[8][8] = {};
  float ra[8], rb[8];
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    {  // one float4 of A per thread (128 x 8), stored transposed
      const int r = tid / (BK / 4), c = (tid % (BK / 4)) * 4;
      const float4 v = load4_or_zero(A, row0 + r, k0 + c, m, k, k, vec_a);
      As[c + 0][r] = v.x;
      As[c + 1][r] = v.y;
      As[c + 2][r] = v.z;
      As[c + 3][r] = v.w;
    }
    {  // one float4 of B per thread (8 x 128)
      const int r = tid / (BN / 4), c = (tid % (BN / 4)) * 4;
      *reinterpret_cast<float4*>(&Bs[r][c]) = load4_or_zero(B, k0 + r, col0 + c, k, n, n, vec_b);
    }
    __syncthreads();
#pragma unroll
    for (int d = 0; d < BK; ++d) {
      *reinterpret_cast<float4*>(&ra[0]) = *reinterpret_cast<const float4*>(&As[d][a_off]);
      *reinterpret_cast<float4*>(&ra[4]) = *reinterpret_cast<const float4*>(&As[d][a_off + WM / 2]);
      *reinterpret_cast<float4*>(&rb[0]) = *reinterpret_cast<const float4*>(&Bs[d][b_off]);
      *reinterpret_cast<float4*>(&rb[4]) = *reinterpret_cast<const float4*>(&Bs[d][b_off + WN / 2]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t row = row0 + a_off + (i < 4 ? i : WM / 2 + i - 4);
    store4_checked(C, row, col0 + b_off, m, n, n, vec_b,
                   make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
    store4_checked(C, row, col0 + b_off + WN / 2, m, n, n, vec_b,
                   make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
  }
  trace_end<kTrace>(trace);
}

void launch_warptile(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  if (tile != 128) bad_tile("warptile", tile);
  const dim3 grid(blocks_for(a.n, BN), blocks_for(a.m, BM));
  launch_or_query(warptile_kernel<false>, warptile_kernel<true>, grid, dim3(NT), 0,
                  static_cast<cudaStream_t>(stream), q, BM, BN, a, a.k % 4 == 0, a.n % 4 == 0);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_warptile() {
  KernelInfo k =
      kernel_info("warptile", "7. Warp tiling",
                  "Block tile split into 32 x 64 warp tiles, each thread's 8 x 8 outputs spread as 4 x "
                  "4 pieces: shared-memory reads without bank conflicts, at the cost of harder index "
                  "arithmetic.",
                  {128}, {"block 128 x 128 x 8, warp 32 x 64, thread 8 x 8, 256 threads"}, 128, "256");
  TileGeometry g = block_tile(128, 128, 8);
  thread_pieces(g, 4, 4, 2, 2, 16, 32);  // rows r and r + 16, columns c and c + 32
  k.geometry = {warp_tile(g, 32, 64)};
  return {k, TS_LAUNCHER(launch_warptile)};
}

}  // namespace ts

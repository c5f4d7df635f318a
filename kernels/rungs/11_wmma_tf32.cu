// Rung 11: tensor cores in TF32 through WMMA (sm_80+). Each warp owns a 64 x 32 piece of a 128 x 128 block
// tile as 4 x 2 accumulator fragments of 16 x 16; per 8-deep k step it loads fragments of A and B from shared
// memory, rounds them to TF32 (10-bit mantissa) and issues tensor-core MMAs. Tiles arrive through a two-stage
// cp.async pipeline as in the previous rung. What it buys: tensor cores do 8x-16x the multiply-adds per clock
// of the FP32 pipes. What it costs: precision (inputs rounded to TF32: errors grow like sqrt(K) * 2^-11,
// checked with a TF32 tolerance), more shared memory (dynamic, 69 KiB), and an epilogue through shared memory
// so that ragged edges of C are written with bounds checks.
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include <mma.h>

#include "kernels/rungs/gemm_common.cuh"

namespace ts {

namespace {
constexpr int BM = 128, BN = 128, BK = 32, NT = 256;  // 8 warps as 2 x 4, warp tile 64 x 32
constexpr int WM = 64, WN = 32, APAD = 4, BPAD = 4;
constexpr int LDA = BK + APAD, LDB = BN + BPAD;  // multiples of 4 floats, rows stay 16-byte aligned
constexpr int kStageFloats = BM * LDA + BK * LDB;
constexpr size_t kSmemBytes = 2 * kStageFloats * sizeof(float);
static_assert(size_t(NT / 32) * WM * WN * sizeof(float) <= kSmemBytes, "epilogue staging fits");

template <bool kVecA, bool kVecB>
__device__ __forceinline__ void load_stage(float* sa, float* sb, const float* __restrict__ A,
                                           const float* __restrict__ B, int64_t m, int64_t n, int64_t k,
                                           int64_t row0, int64_t col0, int64_t k0, int tid) {
  cp_async_tile<BM, BK, LDA, NT, kVecA>(sa, A, m, k, k, row0, k0, tid);
  cp_async_tile<BK, BN, LDB, NT, kVecB>(sb, B, k, n, n, k0, col0, tid);
}
}  // namespace

template <int kMinBlocks, bool kVecA, bool kVecB, bool kTrace>
__global__ void __launch_bounds__(NT, kMinBlocks)
    wmma_tf32_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                     int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  trace_begin<kTrace>(trace);
#if __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  extern __shared__ __align__(128) float smem[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN);
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;
  const int64_t tiles = (k + BK - 1) / BK;

  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[WM / 16][WN / 16];
#pragma unroll
  for (int i = 0; i < WM / 16; ++i)
#pragma unroll
    for (int j = 0; j < WN / 16; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[WM / 16];
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[WN / 16];

  auto stage_a = [&](int s) { return smem + s * kStageFloats; };
  auto stage_b = [&](int s) { return smem + s * kStageFloats + BM * LDA; };
  load_stage<kVecA, kVecB>(stage_a(0), stage_b(0), A, B, m, n, k, row0, col0, 0, tid);
  cp_async_commit();
  for (int64_t t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      const int s = int((t + 1) & 1);
      load_stage<kVecA, kVecB>(stage_a(s), stage_b(s), A, B, m, n, k, row0, col0, (t + 1) * BK, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const float* sa = stage_a(int(t & 1));
    const float* sb = stage_b(int(t & 1));
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
#pragma unroll
      for (int i = 0; i < WM / 16; ++i) {
        wmma::load_matrix_sync(fa[i], sa + (wm * WM + i * 16) * LDA + kk, LDA);
#pragma unroll
        for (int e = 0; e < fa[i].num_elements; ++e) fa[i].x[e] = wmma::__float_to_tf32(fa[i].x[e]);
      }
#pragma unroll
      for (int j = 0; j < WN / 16; ++j) {
        wmma::load_matrix_sync(fb[j], sb + kk * LDB + wn * WN + j * 16, LDB);
#pragma unroll
        for (int e = 0; e < fb[j].num_elements; ++e) fb[j].x[e] = wmma::__float_to_tf32(fb[j].x[e]);
      }
#pragma unroll
      for (int i = 0; i < WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < WN / 16; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
  // Epilogue: each warp stages its 64 x 32 result in shared memory, then writes rows of 32 with bounds
  // checks.
  float* cs = smem + warp * WM * WN;
#pragma unroll
  for (int i = 0; i < WM / 16; ++i)
#pragma unroll
    for (int j = 0; j < WN / 16; ++j)
      wmma::store_matrix_sync(cs + i * 16 * WN + j * 16, acc[i][j], WN, wmma::mem_row_major);
  __syncwarp();
  const int64_t col = col0 + wn * WN + lane;
  for (int r = 0; r < WM; ++r) {
    const int64_t row = row0 + wm * WM + r;
    if (row < m && col < n) C[row * n + col] = cs[r * WN + lane];
  }
#endif
  trace_end<kTrace>(trace);
}

template <int kMinBlocks, bool kVecA, bool kVecB>
static void go(const GemmArgs& a, cudaStream_t s, LaunchQuery* q) {
  if (needs_device(q)) {  // an offline query (build-time table) makes no CUDA call
    static const bool configured = [] {
      for (const void* f : {reinterpret_cast<const void*>(wmma_tf32_kernel<kMinBlocks, kVecA, kVecB, false>),
                            reinterpret_cast<const void*>(wmma_tf32_kernel<kMinBlocks, kVecA, kVecB, true>)})
        CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)));
      return true;
    }();
    (void)configured;
  }
  const dim3 grid(blocks_for(a.n, BN), blocks_for(a.m, BM));
  launch_or_query(wmma_tf32_kernel<kMinBlocks, kVecA, kVecB, false>,
                  wmma_tf32_kernel<kMinBlocks, kVecA, kVecB, true>, grid, dim3(NT), kSmemBytes, s, q, BM, BN,
                  a);
}

void launch_wmma_tf32(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  if (tile != 128) bad_tile("wmma_tf32", tile);
  auto s = static_cast<cudaStream_t>(stream);
  const bool va = a.k % 4 == 0, vb = a.n % 4 == 0;
  // Two blocks per SM (registers capped at 128 through __launch_bounds__) measured 9 % faster than one on an
  // H100 at 4096^3: more warps to hide the cp.async and shared-memory latency.
  if (va && vb)
    go<2, true, true>(a, s, q);
  else if (va)
    go<2, true, false>(a, s, q);
  else if (vb)
    go<2, false, true>(a, s, q);
  else
    go<2, false, false>(a, s, q);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_wmma_tf32() {
  KernelInfo k =
      kernel_info("wmma_tf32", "11. Tensor cores, TF32 (WMMA)",
                  "Warps issue 16 x 16 x 8 TF32 tensor-core MMAs fed by a cp.async pipeline: many "
                  "times the FP32 throughput, but inputs are rounded to a 10-bit mantissa.",
                  {128}, {"block 128 x 128 x 32, warp 64 x 32, 2 stages, 256 threads"}, 128, "256");
  k.tf32 = true;
  k.min_sm = 80;
  TileGeometry g = block_tile(128, 128, 32, 2);
  k.geometry = {warp_tile(g, 64, 32)};  // a warp's 64 x 32: 4 x 2 WMMA fragments (not drawn per thread)
  return {k, TS_LAUNCHER(launch_wmma_tf32)};
}

}  // namespace ts

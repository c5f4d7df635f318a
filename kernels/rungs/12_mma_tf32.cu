// Rung 12: TF32 tensor cores through the raw PTX instruction mma.sync.m16n8k8 (sm_80+), which WMMA hides.
// Owning the fragments buys what the WMMA rung could not do: each thread loads exactly the four values of A
// and two of B that the instruction wants, from padded shared memory where those 32-bit loads hit 32
// distinct banks (A rows padded to BK + 4 floats, B rows to BN + 8: the 32 lanes' addresses 4 g + t and
// 8 t + g cover every bank once), rounds them with cvt.rna.tf32, and keeps a 64 x 64 warp tile of
// accumulators in registers (32 MMAs per 32 fragment registers per k step) instead of 64 x 32. A 3- or
// 4-stage cp.async pipeline keeps two or three tiles in flight with one barrier per k tile, and C is
// written from the accumulators directly (pairs of columns, bounds-checked), without a shared-memory pass.
// What it buys: about twice the WMMA rung at 4096^3 (140 vs 65 TFLOP/s on an H100). What it costs: the
// register layout of each fragment is written out by hand, 128 accumulators per thread (one block per SM at
// tile 256), ~200 KiB of shared memory, and on Hopper it is still the pre-Hopper tensor-core path: mma.sync
// is issued by one warp, synchronously, from registers, and tops out well below the wgmma rate that cuBLAS
// uses there.
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include "kernels/rungs/gemm_common.cuh"

namespace ts {

namespace {
constexpr int BK = 32;

__device__ __forceinline__ void mma_m16n8k8(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

template <int BM, int BN, int WM, int WN, int STAGES>
struct Cfg {
  static constexpr int kThreads = (BM / WM) * (BN / WN) * 32;
  static constexpr int LDA = BK + 4;  // == 4 mod 32: A fragment loads (row g, column t) hit bank 4 g + t
  static constexpr int LDB = BN + 8;  // == 8 mod 32: B fragment loads (row t, column g) hit bank 8 t + g
  static constexpr int kStageFloats = BM * LDA + BK * LDB;
  static constexpr size_t kSmem = size_t(STAGES) * kStageFloats * sizeof(float);
  static_assert(WM % 16 == 0 && WN % 8 == 0 && LDA % 32 == 4 && LDB % 32 == 8, "fragment layout");
};
}  // namespace

template <int BM, int BN, int WM, int WN, int STAGES, int kMinBlocks, bool kVecA, bool kVecB, bool kTrace>
__global__ void __launch_bounds__(Cfg<BM, BN, WM, WN, STAGES>::kThreads, kMinBlocks)
    mma_tf32_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                    int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  trace_begin<kTrace>(trace);
#if __CUDA_ARCH__ >= 800
  using Cf = Cfg<BM, BN, WM, WN, STAGES>;
  constexpr int NT = Cf::kThreads, LDA = Cf::LDA, LDB = Cf::LDB;
  constexpr int MI = WM / 16, NJ = WN / 8;  // MMA tiles per warp
  extern __shared__ __align__(128) float smem[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN);
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;
  const int64_t tiles = (k + BK - 1) / BK;

  float acc[MI][NJ][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  auto stage_a = [&](int s) { return smem + s * Cf::kStageFloats; };
  auto stage_b = [&](int s) { return smem + s * Cf::kStageFloats + BM * LDA; };
  auto load_stage = [&](int64_t kt) {
    const int s = int(kt % STAGES);
    cp_async_tile<BM, BK, LDA, NT, kVecA>(stage_a(s), A, m, k, k, row0, kt * BK, tid);
    cp_async_tile<BK, BN, LDB, NT, kVecB>(stage_b(s), B, k, n, n, kt * BK, col0, tid);
  };
#pragma unroll
  for (int p = 0; p < STAGES - 1; ++p) {
    if (p < tiles) load_stage(p);
    cp_async_commit();  // one group per tile, empty past the end: the wait count below stays uniform
  }

  for (int64_t kt = 0; kt < tiles; ++kt) {
    cp_async_wait<STAGES - 2>();  // tile kt has landed ...
    __syncthreads();              // ... for every thread; and everyone is done computing on tile kt - 1,
    if (kt + STAGES - 1 < tiles) load_stage(kt + STAGES - 1);  // whose stage is refilled here
    cp_async_commit();
    const float* sa = stage_a(int(kt % STAGES)) + (wm * WM + g) * LDA + t4;
    const float* sb = stage_b(int(kt % STAGES)) + t4 * LDB + wn * WN + g;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      uint32_t af[MI][4], bf[NJ][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        // a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4) of the 16 x 8 A fragment
        const float* p = sa + i * 16 * LDA + kk;
        af[i][0] = to_tf32(p[0]);
        af[i][1] = to_tf32(p[8 * LDA]);
        af[i][2] = to_tf32(p[4]);
        af[i][3] = to_tf32(p[8 * LDA + 4]);
      }
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        // b0 (k = t, n = g), b1 (t + 4, g) of the 8 x 8 B fragment
        const float* p = sb + kk * LDB + j * 8;
        bf[j][0] = to_tf32(p[0]);
        bf[j][1] = to_tf32(p[4 * LDB]);
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) mma_m16n8k8(acc[i][j], af[i], bf[j]);
    }
  }
  cp_async_wait<0>();  // only empty groups can be left; leave nothing in flight at exit

  // Epilogue: c0, c1 = (g, 2t), (g, 2t + 1); c2, c3 = (g + 8, 2t), (g + 8, 2t + 1). Four lanes write 8
  // consecutive floats (a 32-byte sector) of one row.
  const bool pair = n % 2 == 0;  // 8-byte aligned pairs
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t r = row0 + wm * WM + i * 16 + h * 8 + g;
      if (r >= m) continue;
      float* crow = C + r * n;
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const int64_t c = col0 + wn * WN + j * 8 + 2 * t4;
        const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
        if (pair && c + 1 < n) {
          *reinterpret_cast<float2*>(crow + c) = make_float2(v0, v1);
        } else {
          if (c < n) crow[c] = v0;
          if (c + 1 < n) crow[c + 1] = v1;
        }
      }
    }
#endif
  trace_end<kTrace>(trace);
}

template <int BM, int BN, int WM, int WN, int STAGES, int kMinBlocks, bool kVecA, bool kVecB>
static void go(const GemmArgs& a, cudaStream_t s, LaunchQuery* q) {
  using Cf = Cfg<BM, BN, WM, WN, STAGES>;
  auto plain = mma_tf32_kernel<BM, BN, WM, WN, STAGES, kMinBlocks, kVecA, kVecB, false>;
  auto traced = mma_tf32_kernel<BM, BN, WM, WN, STAGES, kMinBlocks, kVecA, kVecB, true>;
  if (needs_device(q)) {  // an offline query (build-time table) makes no CUDA call
    static const bool configured = [&] {
      for (const void* f : {reinterpret_cast<const void*>(plain), reinterpret_cast<const void*>(traced)})
        CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Cf::kSmem)));
      return true;
    }();
    (void)configured;
  }
  const dim3 grid(blocks_for(a.n, BN), blocks_for(a.m, BM));
  launch_or_query(plain, traced, grid, dim3(Cf::kThreads), Cf::kSmem, s, q, BM, BN, a);
}

template <int BM, int BN, int WM, int WN, int STAGES, int kMinBlocks>
static void dispatch(const GemmArgs& a, cudaStream_t s, LaunchQuery* q) {
  const bool va = a.k % 4 == 0, vb = a.n % 4 == 0;
  if (va && vb)
    go<BM, BN, WM, WN, STAGES, kMinBlocks, true, true>(a, s, q);
  else if (va)
    go<BM, BN, WM, WN, STAGES, kMinBlocks, true, false>(a, s, q);
  else if (vb)
    go<BM, BN, WM, WN, STAGES, kMinBlocks, false, true>(a, s, q);
  else
    go<BM, BN, WM, WN, STAGES, kMinBlocks, false, false>(a, s, q);
}

void launch_mma_tf32(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  auto s = static_cast<cudaStream_t>(stream);
  if (tile == 256)
    dispatch<128, 256, 64, 64, 4, 1>(a, s, q);  // 8 warps of 64 x 64, one block per SM
  else if (tile == 128)
    dispatch<128, 128, 64, 32, 3, 2>(a, s, q);  // 8 warps of 64 x 32, two blocks per SM
  else
    bad_tile("mma_tf32", tile);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_mma_tf32() {
  KernelInfo k =
      kernel_info("mma_tf32", "12. Tensor cores, TF32 (mma.sync)",
                  "The PTX instruction under WMMA, with fragments loaded by hand from padded shared "
                  "memory (no bank conflicts), 64 x 64 warp tiles and a 4-stage cp.async pipeline: "
                  "about twice the WMMA rung, for hand-written register layouts; on Hopper still the "
                  "older, slower tensor-core path.",
                  {128, 256},
                  {"block 128 x 128 x 32, warp 64 x 32, 3 stages, 256 threads, 2 blocks per SM",
                   "block 128 x 256 x 32, warp 64 x 64, 4 stages, 256 threads"},
                  256, "256");
  k.tf32 = true;
  k.min_sm = 80;
  TileGeometry g128 = block_tile(128, 128, 32, 3), g256 = block_tile(128, 256, 32, 4);
  k.geometry = {warp_tile(g128, 64, 32), warp_tile(g256, 64, 64)};
  return {k, TS_LAUNCHER(launch_mma_tf32)};
}

}  // namespace ts

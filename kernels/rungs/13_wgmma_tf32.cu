// Rung 13: Hopper warpgroup MMA (wgmma.mma_async, sm_90a only), TF32. The previous rungs ask the tensor cores
// for one small MMA per warp per instruction, with every operand staged through registers; Hopper's full
// tensor-core rate is reached only through wgmma: four warps (a warpgroup) issue one asynchronous 64 x N x 8
// MMA that reads an operand straight from shared memory and runs while the warps go on loading.
//
// The layout problem, and the trick around it: TF32 wgmma reads shared-memory operands only "K-major" (k
// contiguous). A (M x K, row-major) is K-major; B (K x N, row-major) is not. So the kernel computes
// C^T = B^T A^T: wgmma's register operand is B^T, loaded from a plain row-major B tile (rows padded to 136
// floats, so the 32-bit fragment loads hit 32 distinct banks) and rounded with cvt.rna.tf32, 4 values per
// thread per k step; its shared-memory operand is A^T, whose columns are rows of A: already K-major. The
// accumulators hold C^T and are stored transposed, with bounds checks.
//
// Tile 128: blocks of 128 x 128 (wgmmas of 64 x 128 x 8), for grids too small for the GPU (below).
// Block tile 256 x 128 x 32 (two warpgroups of 64 columns of C, 128 accumulators per thread), one block per
// SM. When K and N are multiples of 4 one thread loads whole tiles with TMA (the tensor memory accelerator):
// A in the 128-byte-swizzled layout wgmma reads without bank conflicts, B as a 136-column box that lands as
// padded rows, completion counted on an mbarrier per stage, 3 of 4 stages in flight. Otherwise (rows not
// 16-byte aligned) every thread issues cp.async copies into the unswizzled "core matrix" layout, zero-filling
// edges element by element, 2 of 4 stages in flight.
// What it buys: the tensor-core rate that mma.sync cannot reach on Hopper, and tile loads that cost one
// thread a few instructions. What it costs: compute capability 9.0 only (sm_90a code runs on no other GPU),
// 196 KiB of shared memory, the asynchronous-register rules (wgmma.fence, commit and wait groups; registers
// an MMA in flight reads must not change), hand-built shared-memory descriptors and tensor maps, and A
// reaches the tensor cores truncated to TF32 by the hardware instead of rounded to nearest (B is rounded).
// Tried and not kept (H100, interleaved with cuBLAS TF32, alternating runs): blocks taken in groups of 4, 8
// or 16 rows of tiles (so the blocks resident at once share A and B in L2, which halves DRAM traffic per wave
// at 8192^3 on paper) measured 87-99 % of cuBLAS at 8192^3 against 92-94 % row by row, and lower at 4096^3;
// both orders ran at the power limit (1425-1485 MHz at 8192^3), so less DRAM traffic bought no clock. Bands
// of 8 rows measured again for tile 256 beside tile 512's (which keeps them, below): 16384 x 16384 x 2048
// 105 against 99-100, but 8192^3 89-92 against 92-96 and 6144^3 96-97 against 102-103.
// Tile 512 (below): at 8192^3 ncu shows tile 256 at 88 % of L2 throughput (48 % of DRAM's); two blocks of a
// cluster sharing A through TMA multicast take that to 78 %. Measured in alternating bench runs (H100,
// TFLOP/s, two rounds each): 8192^3 tile 256 334 / 319, tile 512 353 / 345; elsewhere tile 512 is 0-3 %
// slower (4096^3, 6144^3, 2048 x 4096 x 8192, 8192 x 8192 x 4096, 16384 x 16384 x 2048; 2048^3 3 %). Variants
// measured on the way and not kept: the same pair synchronised by a cluster barrier at every k step
// (barrier.cluster with release semantics waits for the wgmmas in flight: half the speed; relaxed: 2-9 %
// slower than tile 256 except at 8192^3), and tile 256 warp-specialised without a cluster (within 1 % of tile
// 256 at six shapes; at 8192^3, where tile 256 itself moves by 5 % between runs, 316 / 321 against 334 /
// 319). Rows that are 16-byte but not 128-byte aligned (K or N a multiple of 4 but not of 32) are read in
// place, and every TMA box row then spans one more 32-byte sector; tile 512, reading half as much of A, gains
// most there (4100^3: 180 -> 241 TFLOP/s, 2052^3 142 -> 168, 6000^3 277 -> 312; but at 1000^3, one partial
// wave, 70 -> 66). Copying such rows to 128-byte aligned ones first (as for 4099^3) was measured too: faster
// for tile 256 at 4100^3 (217), slower than reading in place at 1000^3, 2052^3 and 6000^3 (the copy costs
// more than it saves), so the copy stays for rows TMA cannot read at all.
// Stream-K over tile 512's pairs (kept on the branch experiment/stream-k, not merged): one wave of clusters
// shares the partial wave's tiles by runs of k tiles, partials added by the last to finish. Slower at every
// shape measured (H100, % of cuBLAS TF32 interleaved, against tile 512 in the same run): 1024^3 73 (107),
// 2048^3 79 (123), 4096^3 87 (105), 8192^3 95 (98), 6144^3 100 (102). Its trace says why: the shared units
// ran 1.4-3.3 us per k tile against 0.7-0.8 for whole tiles. Clusters that run at once are at different k
// offsets of different tiles, so they stop sharing A and B in L2 (at 8192^3 the shared phase reads each
// tile's panels from DRAM), and each unit writes a 128 KiB partial per block (a unit of 1 k tile took 7.4 us
// at 1024^3).
// At 8192 x 8192 x 512 (tile 256 at 91-93 % of cuBLAS TF32 on an H200; K tiles 16, so each tile's 128 KiB
// epilogue and first loads weigh), tried and not kept (H200, two bench rounds, % of cuBLAS TF32 interleaved,
// tile 256 in brackets): tile 256 persistent, the k tiles of all of a block's tiles one pipeline so that the
// next tile's first stages land during the epilogue: 93.0-93.3 (92.5-93.0), and 5-8 points lower at the
// shapes where tile 256 leads (2048^3 98.3-98.5 against 106.1-106.9, 4096^3 93.6 against 101.3-101.5); the
// same with the epilogue through shared memory and TMA stores (3 stages then): 94.1-94.6 there, 87-92
// elsewhere. cuBLAS runs a persistent ping-pong kernel there (ncu: tilesize128x128x32, warpgroupsize1x1x1,
// 132 blocks of 384 threads; 82 % memory throughput against our 55 %). A first ping-pong (branch
// experiment/pingpong: two consumer warpgroups on alternate 128 x 128 tiles, a producer warpgroup, a turn
// barrier between the consumers) is correct and slower: 83.0-83.1 (93.2-93.3), 72-81 elsewhere, with one
// consumer's k loop at a time and one wgmma group in flight.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include <cuda.h>  // CUtensorMap (types only: the encoder comes through the runtime's driver entry point)
#include <cudaTypedefs.h>

#include "kernels/rungs/gemm_common.cuh"
#include "kernels/rungs/side_stream.cuh"
#include "core/engine/tile_order.hpp"

namespace ts {

namespace {
constexpr int BN = 128, BK = 32, NT = 256;  // two warpgroups, 64 columns of C each
constexpr int LDB = BN + 8;                 // floats; == 8 mod 32: fragment loads hit 32 distinct banks

template <int BM, int STAGES>
struct Cfg {
  static constexpr int kABytes = BM * BK * 4;   // A tile in core matrices: [BM / 8][BK / 4][8 rows][16 B]
  static constexpr int kBBytes = BK * LDB * 4;  // B tile row-major, padded
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr size_t kSmem = size_t(STAGES) * kStageBytes;
  static constexpr int kPrefetch = STAGES - 2;  // tiles loaded ahead; one more stage is still read by wgmma
  static_assert(kStageBytes % 128 == 0 && kPrefetch >= 1 && BK == 32,
                "stage layout; wg_fence takes 4 k steps");
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Shared-memory matrix descriptor, no swizzle, K-major: core matrices of 8 rows x 16 bytes; the two core
// matrices of one k8 step lie 128 bytes apart (leading byte offset), 8-row groups 1024 bytes apart (stride
// byte offset = BK / 4 core matrices x 128 bytes).
__device__ __forceinline__ uint64_t a_desc(uint32_t saddr) {
  return uint64_t((saddr & 0x3FFFF) >> 4) | (uint64_t(128 >> 4) << 16) |
         (uint64_t((BK / 4 * 128) >> 4) << 32);
}

// wgmma.fence orders this thread's register writes before the wgmmas that read them. The fragment registers
// pass through it as operands so that the compiler cannot move their conversions below the fence.
__device__ __forceinline__ void wg_fence(uint32_t (&f)[BK / 8][4]) {
  asm volatile("wgmma.fence.sync.aligned;\n"
               : "+r"(f[0][0]), "+r"(f[0][1]), "+r"(f[0][2]), "+r"(f[0][3]), "+r"(f[1][0]), "+r"(f[1][1]),
                 "+r"(f[1][2]), "+r"(f[1][3]), "+r"(f[2][0]), "+r"(f[2][1]), "+r"(f[2][2]), "+r"(f[2][3]),
                 "+r"(f[3][0]), "+r"(f[3][1]), "+r"(f[3][2]), "+r"(f[3][3])
               :
               : "memory");
}
__device__ __forceinline__ void wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Generic-proxy writes (cp.async) made visible to the async proxy that wgmma reads shared memory through.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// D[64 x 256] += A[64 x 8] (registers, TF32) * B[8 x 256] (shared memory, K-major, descriptor `b`).
__device__ __forceinline__ void wgmma_m64n256k8(float (&d)[128], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, {%128, %129, %130, %131}, %132, 1, 1, 1;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]),
        "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
        "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
        "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]),
        "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]),
        "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),
        "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]),
        "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]),
        "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]),
        "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]),
        "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),
        "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
        "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b)
      : "memory");
}

// D[64 x 128] += A[64 x 8] (registers, TF32) * B[8 x 128] (shared memory, K-major, descriptor `b`).
__device__ __forceinline__ void wgmma_m64n128k8(float (&d)[64], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, {%64, %65, %66, %67}, %68, 1, 1, 1;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]),
        "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
        "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
        "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]),
        "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]),
        "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b)
      : "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_m64nNk8(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b) {
  static_assert(N == 256 || N == 128, "wgmma n256 or n128");
  if constexpr (N == 256)
    wgmma_m64n256k8(d, a, b);
  else
    wgmma_m64n128k8(d, a, b);
}

// The A tile (BM x BK at (row0, k0)) into core-matrix order: chunk (r, c) of 4 floats goes to
// [r / 8][c][r % 8]. Eight consecutive threads fill one 128-byte core matrix (no bank conflicts) from eight
// rows of A (16 bytes each, two 32-byte sectors per row per warp). Zero-filled past the edges.
// Epilogue of both kernels: acc holds C^T. acc[4j + {0,1,2,3}] = C^T(nb, 8j + 2 t4 + {0,1}), C^T(nb + 8,
// ...): for each j a warp writes 8 consecutive columns (32 bytes) of 8 rows. c0 = the thread's column of C.
template <int BM>
__device__ __forceinline__ void store_ct(float* __restrict__ C, const float (&acc)[BM / 2], int64_t row0,
                                         int64_t c0, int t4, int64_t m, int64_t n) {
#pragma unroll
  for (int j = 0; j < BM / 8; ++j) {
    const int64_t r = row0 + 8 * j + 2 * t4;
    if (r < m) {
      if (c0 < n) C[r * n + c0] = acc[4 * j];
      if (c0 + 8 < n) C[r * n + c0 + 8] = acc[4 * j + 2];
    }
    if (r + 1 < m) {
      if (c0 < n) C[(r + 1) * n + c0] = acc[4 * j + 1];
      if (c0 + 8 < n) C[(r + 1) * n + c0 + 8] = acc[4 * j + 3];
    }
  }
}

template <int BM, bool kVec>
__device__ __forceinline__ void load_a(uint8_t* sa, const float* __restrict__ A, int64_t m, int64_t k,
                                       int64_t row0, int64_t k0, int tid) {
#pragma unroll
  for (int it = 0; it < BM * (BK / 4) / NT; ++it) {
    const int idx = tid + it * NT, grp = idx / 64, c = (idx / 8) % 8, r = idx % 8;
    float* dst = reinterpret_cast<float*>(sa + grp * 1024 + c * 128 + r * 16);
    const int64_t gr = row0 + grp * 8 + r, gc = k0 + c * 4;
    if (kVec) {
      const bool ok = gr < m && gc < k;
      cp_async16(dst, ok ? A + gr * k + gc : A, ok ? 16 : 0);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ok = gr < m && gc + e < k;
        cp_async4(dst + e, ok ? A + gr * k + gc + e : A, ok ? 4 : 0);
      }
    }
  }
}

// [SECTION] TMA path (K % 4 == 0 and N % 4 == 0): one thread copies whole tiles with the tensor memory
// accelerator, completion counted in bytes on an mbarrier per stage.
// A tile: box of BK = 32 floats (128 bytes) x BM rows with the 128-byte swizzle: row r at r * 128, its
// 16-byte chunk c stored at chunk c ^ (r % 8). That is wgmma's canonical K-major SW128 layout: 8-row atoms of
// 1024 bytes (stride byte offset), and the k8 step kk starts 32 kk bytes into the row (the hardware swizzles
// the final address, so the atom must be 1024-byte aligned).
__device__ __forceinline__ uint64_t a_desc_sw128(uint32_t saddr) {
  return uint64_t((saddr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0,
                                            int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
// The same box written to the same shared-memory offset in every CTA of the cluster named in `mask`, and
// counted on the mbarrier at the same offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                                      int c0, int c1, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every thread of every CTA of the cluster; what each wrote before it is seen by all after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}
// One arrival on the mbarrier at shared-memory offset `bar` in CTA `cta` of the cluster. Release at CTA
// scope, as CUTLASS's pipelines do: a cluster-scope release (barrier.cluster.arrive.release) also waits for
// the wgmmas still in flight, which measured half the speed.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t cta) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}

// [SECTION] The k loop every kernel here shares.
// Zeroed accumulators, each pinned so that the zeros are written before any wgmma reads them; pin() again
// after the last wait keeps the stores after the last group.
template <int N>
__device__ __forceinline__ void pin(float (&acc)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}
template <int N>
__device__ __forceinline__ void zero(float (&acc)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) acc[i] = 0.0f;
  pin(acc);
}
// One k tile of this warpgroup, committed as one wgmma group: the thread's B^T fragments (its column of the B
// stage, `sb` = that column at row t4) rounded to TF32, then 4 wgmmas of 64 x BM x 8 (BM = 2 N: 256 or 128
// rows of C) whose shared-memory operand (A^T) is described by desc(kk).
template <int N, class Desc>
__device__ __forceinline__ void mma_tile(float (&acc)[N], uint32_t (&fr)[BK / 8][4], const float* sb,
                                         Desc desc) {
#pragma unroll
  for (int kk = 0; kk < BK / 8; ++kk) {
    const float* p = sb + kk * 8 * LDB;
    fr[kk][0] = to_tf32(p[0]);
    fr[kk][1] = to_tf32(p[8]);
    fr[kk][2] = to_tf32(p[4 * LDB]);
    fr[kk][3] = to_tf32(p[4 * LDB + 8]);
  }
  wg_fence(fr);  // the fragment registers above are written before the wgmmas read them
#pragma unroll
  for (int kk = 0; kk < BK / 8; ++kk) wgmma_m64nNk8<2 * N>(acc, fr[kk], desc(kk));
  wg_commit();
}
// step(kt, buf) for kt = 0 .. tiles - 1, the fragment buffer (0 or 1, a compile-time constant) alternating:
// the registers one group reads are never rewritten while it may be in flight.
template <class Step>
__device__ __forceinline__ void k_loop(int64_t tiles, Step step) {
  int64_t kt = 0;
  for (; kt + 1 < tiles; kt += 2) {
    step(kt, std::integral_constant<int, 0>());
    step(kt + 1, std::integral_constant<int, 1>());
  }
  if (kt < tiles) step(kt, std::integral_constant<int, 0>());
}
#endif
// The TMA kernels' shared memory for blocks of BM rows of C (BM x BK of A and BK x LDB of B a stage): tile
// 256 and the pairs of tile 512 in 4 stages of 48 KiB, tile 128 in 6 of 33 KiB (the same bytes in flight).
template <int BM>
struct TmaLayout {
  static constexpr int kStages = BM == 256 ? 4 : 6;
  static constexpr int kABytes = BM * BK * 4;  // A tile, SW128
  // B tile: a box of LDB = 136 columns x BK rows lands as padded rows.
  static constexpr int kBBytes = BK * LDB * 4;
  static constexpr int kStageBytes = kABytes + kBBytes;
  // Alignment slack, the stages, then the mbarriers: one "full" per stage (and for the cluster kernel one
  // "empty" per stage).
  static constexpr size_t kSmem = 1024 + size_t(kStages) * kStageBytes + 2 * kStages * 8;
  static_assert((BM == 256 || BM == 128) && kStageBytes % 1024 == 0, "every A tile 1024-byte aligned");
};
constexpr int TBM = 256, TSTAGES = TmaLayout<TBM>::kStages;  // tile 256's block, and each block of a pair
constexpr int kTABytes = TmaLayout<TBM>::kABytes, kTStageBytes = TmaLayout<TBM>::kStageBytes;
constexpr size_t kTSmem = TmaLayout<TBM>::kSmem;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// The shared memory of the TMA kernels: the dynamic allocation rounded up to 1024 bytes (the SW128 atom),
// the stages of A then B, then the mbarriers.
template <int BM>
struct TmaSmem {
  using L = TmaLayout<BM>;
  uint8_t* base;
  __device__ explicit TmaSmem(uint8_t* raw) : base(raw + ((1024 - (smem_u32(raw) & 1023)) & 1023)) {}
  __device__ uint8_t* a(int s) const { return base + s * L::kStageBytes; }
  __device__ float* b(int s) const {
    return reinterpret_cast<float*>(base + s * L::kStageBytes + L::kABytes);
  }
  __device__ uint32_t fulls() const { return smem_u32(base + L::kStages * L::kStageBytes); }  // one per stage
  __device__ uint32_t empties() const { return fulls() + 8 * L::kStages; }                    // one per stage
};
#endif
}  // namespace

template <int BM, int STAGES, int kMinBlocks, bool kVecA, bool kVecB, bool kTrace>
__global__ void __launch_bounds__(NT, kMinBlocks)
    wgmma_tf32_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                      int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  trace_begin<kTrace>(trace);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cf = Cfg<BM, STAGES>;
  constexpr int P = Cf::kPrefetch;
  static_assert(BM == 256, "one wgmma of 64 x 256 per k step");
  extern __shared__ __align__(1024) uint8_t smem[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wg = warp / 4, wq = warp % 4, g = lane / 4, t4 = lane % 4;
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;
  const int64_t tiles = (k + BK - 1) / BK;

  float acc[BM / 2];
  zero(acc);
  uint32_t fr[2][BK / 8]
             [4];  // register operand (B^T), double-buffered: one set is read by the group in flight

  auto stage_a = [&](int s) { return smem + s * Cf::kStageBytes; };
  auto stage_b = [&](int s) { return reinterpret_cast<float*>(smem + s * Cf::kStageBytes + Cf::kABytes); };
  auto load_stage = [&](int64_t kt) {
    const int s = int(kt % STAGES);
    load_a<BM, kVecA>(stage_a(s), A, m, k, row0, kt * BK, tid);
    cp_async_tile<BK, BN, LDB, NT, kVecB>(stage_b(s), B, k, n, n, kt * BK, col0, tid);
  };
#pragma unroll
  for (int p = 0; p < P; ++p) {
    if (p < tiles) load_stage(p);
    cp_async_commit();  // one group per tile, empty past the end, so that wait counts stay uniform
  }
  // This thread's rows of B^T (columns of the B tile): 16 per warp, g and g + 8.
  const int nb = wg * 64 + wq * 16 + g;

  auto step = [&](int64_t kt, auto buf) {
    constexpr int b = decltype(buf)::value;
    cp_async_wait<P - 1>();  // tile kt has landed (this thread's copies) ...
    fence_proxy_async();     // ... is visible to wgmma's shared-memory reads ...
    __syncthreads();         // ... and so are everyone else's. Also: every warpgroup is past wg_wait<1> of
                             // step kt - 1, so the stage of tile kt - 2 is free to refill.
    if (kt + P < tiles) load_stage(kt + P);
    cp_async_commit();
    const int s = int(kt % STAGES);
    const uint32_t sa = smem_u32(stage_a(s));
    mma_tile(acc, fr[b], stage_b(s) + t4 * LDB + nb, [&](int kk) { return a_desc(sa + kk * 256); });
    wg_wait<1>();  // the group of tile kt - 1 is done: its stage and fragment registers may be reused
  };
  k_loop(tiles, step);
  wg_wait<0>();
  cp_async_wait<0>();  // only empty groups can be left; leave nothing in flight at exit
  pin(acc);

  store_ct<BM>(C, acc, row0, col0 + nb, t4, m, n);
#endif
  trace_end<kTrace>(trace);
}

// Split-K's fix-up (kSplit below). Every block writes its partial tile to its slot in `work`, in the threads'
// own register order (float4 j of thread tid at j * NT + tid: each warp writes 512 contiguous bytes), and
// counts itself in on the tile's counter. Then it waits for the tile's other slices (the launch is
// cooperative: every block is resident at once, or the launch fails) and adds and stores its share, 1 /
// splits of the tile, from the slots in slice order: C does not depend on which slice finished first. The
// accumulators are dead once written, so the adding loop holds only the loads in flight: kSplitGroup float4s
// of every slice, all read before any is stored (the compiler cannot move a load above a store to C, which
// may alias the slots).
// Measured on an H100 at 1024^3 in 4 slices (trace, us from the launch): the slices' k loops and partials
// end at 10.5-11.5; where the last slice to arrive added the whole tile (no block waits), its reads of 4 x
// 128 KiB ended at 20-21, and the kernel took 21 us against 17.6 with the work shared (cuBLAS TF32: 16.8).
// Phase marks of thread 0 at 1024^3 (us from the block's start, H100): first K tile landed 1.4, k loop done
// 5.7, partial written and fenced 10.2, every slice in 11.2, share added and stored 14.5: the fix-up is more
// than half of a block (32 MB written and read through L2). Tried on the same H100 and not kept: the
// partials out and the shares in as bulk copies (cp.async.bulk by one thread, through the free stages): the
// same bits, a block 20.4 us against 15.3 in the traces; each block's own share kept in its registers (a
// quarter less written and read, the adding unrolled over every j): behind the launch gate the same 18.1 us
// a launch warm, 25.4 cold against 20.1.
constexpr int kMaxSplits = 4, kSplitGroup = 8;  // slices at most; float4s of each slice read at once
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// `tile` of `tile_count` pieces of BM x BN, slice `z` of `splits`; `threads`: wait_for_tile's (0: the
// block).
template <int BM>
__device__ __forceinline__ void split_store(const float (&acc)[BM / 2], float* __restrict__ work,
                                            float* __restrict__ C, int64_t row0, int64_t c0, int t4,
                                            int64_t m, int64_t n, int tid, int64_t tile, int64_t tile_count,
                                            unsigned z, unsigned splits, unsigned threads = 0) {
  constexpr int kSplitV = BM / 2 / 4;  // float4s of accumulators per thread
  const float4* slots = reinterpret_cast<const float4*>(work) + tile * splits * int64_t(kSplitV * NT) + tid;
  float4* mine = reinterpret_cast<float4*>(work) + (tile * splits + z) * int64_t(kSplitV * NT) + tid;
#pragma unroll
  for (int j = 0; j < kSplitV; ++j)
    __stcg(mine + j * NT, make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
  unsigned long long* count =
      reinterpret_cast<unsigned long long*>(reinterpret_cast<float4*>(work) +
                                            tile_count * splits * int64_t(kSplitV * NT)) +
      tile;
  __threadfence();  // this block's partial is visible to every block before the count says it is there
  wait_for_tile(count, splits, threads);
  const int j_begin = int(z * kSplitV / splits), j_end = int((z + 1) * kSplitV / splits);
  for (int j0 = j_begin; j0 < j_end; j0 += kSplitGroup) {
    float4 p[kSplitGroup][kMaxSplits];
#pragma unroll
    for (int g = 0; g < kSplitGroup; ++g)
#pragma unroll
      for (unsigned i = 0; i < kMaxSplits; ++i)
        if (j0 + g < j_end && i < splits) p[g][i] = __ldcg(slots + (int64_t(i) * kSplitV + j0 + g) * NT);
#pragma unroll
    for (int g = 0; g < kSplitGroup; ++g) {
      if (j0 + g >= j_end) break;
      float4 sum = p[g][0];
#pragma unroll
      for (unsigned i = 1; i < kMaxSplits; ++i)
        if (i < splits) sum.x += p[g][i].x, sum.y += p[g][i].y, sum.z += p[g][i].z, sum.w += p[g][i].w;
      // acc[4j + {0, 1, 2, 3}] = C(r, c0), C(r + 1, c0), C(r, c0 + 8), C(r + 1, c0 + 8) (store_ct)
      const int64_t r = row0 + 8 * (j0 + g) + 2 * t4;
      if (r < m) {
        if (c0 < n) C[r * n + c0] = sum.x;
        if (c0 + 8 < n) C[r * n + c0 + 8] = sum.z;
      }
      if (r + 1 < m) {
        if (c0 < n) C[(r + 1) * n + c0] = sum.y;
        if (c0 + 8 < n) C[(r + 1) * n + c0 + 8] = sum.w;
      }
    }
  }
}
#endif

// The same block tile (BM = 256) and the same wgmma loop, fed by TMA instead of per-thread cp.async: no
// address arithmetic or predicates per 16 bytes, and the copy engine keeps more bytes in flight per SM.
// BM = 128 (tile 128): 128 x 128 of C, wgmmas of 64 x 128 x 8, 6 stages; twice the tiles of tile 256, so
// where the GPU holds few tiles it needs half as many slices of K, and each slice's partial is half as big.
// kSplit (where the tiles fill at most half the SMs: tma_splits): blockIdx.z takes slice z of the K tiles
// (gridDim.z slices, sizes differing by at most one), and the slices' partials are added by split_store.
// row_tiles0: the grid covers the rows of tiles from row_tiles0 on (a tail launch, tma_tail); its records sit
// at those rows of a trace of all the rows. segments: the trace is one of K segments (TileTrace::k_segments,
// a tail launch's), each record naming its first K tile.
template <int BM, bool kTrace, bool kSplit>
__global__ void __launch_bounds__(NT, 1)
    wgmma_tf32_tma_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                          int64_t m, int64_t n, int64_t k, TileRecord* trace,
                          const __grid_constant__ CUtensorMap tma_a,
                          const __grid_constant__ CUtensorMap tma_b, float* __restrict__ work,
                          int64_t row_tiles0, int segments) {
  const int64_t tile_row = int64_t(blockIdx.y) + row_tiles0;
  const size_t record =
      (size_t(blockIdx.z) * size_t((m + BM - 1) / BM) + size_t(tile_row)) * gridDim.x + blockIdx.x;
  trace_begin<kTrace>(trace, record);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  (void)A;
  (void)B;
  extern __shared__ __align__(16) uint8_t smem_raw[];  // aligned to 1024 by TmaSmem
  using L = TmaLayout<BM>;
  const TmaSmem<BM> sm(smem_raw);
  const uint32_t bars = sm.fulls();
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wg = warp / 4, wq = warp % 4, g = lane / 4, t4 = lane % 4;
  const int64_t row0 = tile_row * BM, col0 = int64_t(blockIdx.x) * BN;
  // This block's K tiles: [t_first, t_first + tiles) (all of them without kSplit).
  const int64_t k_tiles = (k + BK - 1) / BK;
  const int64_t t_first = kSplit ? int64_t(blockIdx.z) * k_tiles / gridDim.z : 0;
  const int64_t tiles = kSplit ? int64_t(blockIdx.z + 1) * k_tiles / gridDim.z - t_first : k_tiles;
  if (kTrace && segments && tid == 0) trace[record].k_first = uint32_t(t_first);

  float acc[BM / 2];
  zero(acc);
  uint32_t fr[2][BK / 8][4];

  auto issue = [&](int64_t kt) {  // one thread
    const int s = int(kt % L::kStages);
    const uint32_t bar = bars + 8 * s;
    mbar_expect_tx(bar, L::kStageBytes);
    tma_load_2d(smem_u32(sm.a(s)), &tma_a, bar, int((t_first + kt) * BK), int(row0));
    tma_load_2d(smem_u32(sm.b(s)), &tma_b, bar, int(col0), int((t_first + kt) * BK));
  };
  if (tid == 0) {
    for (int s = 0; s < L::kStages; ++s) mbar_init(bars + 8 * s, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    fence_proxy_async();
  }
  __syncthreads();
  if (tid == 0)
    for (int p = 0; p < L::kStages - 1; ++p)
      if (p < tiles) issue(p);
  const int nb = wg * 64 + wq * 16 + g;

  // All stages but one in flight (3 of 4 for BM = 256): the barrier sits after the wait for the previous
  // wgmma group, so the stage that group read is refilled at once (the cp.async kernel above refills it one
  // step later).
  auto step = [&](int64_t kt, auto buf) {
    constexpr int b = decltype(buf)::value;
    const int s = int(kt % L::kStages);
    mbar_wait(bars + 8 * s, uint32_t((kt / L::kStages) & 1));  // tile kt has landed (TMA writes are visible)
    const uint32_t sa = smem_u32(sm.a(s));
    mma_tile(acc, fr[b], sm.b(s) + t4 * LDB + nb, [&](int kk) { return a_desc_sw128(sa + kk * 32); });
    wg_wait<1>();     // this warpgroup's group kt - 1 is done ...
    __syncthreads();  // ... and everyone's, as are the fragment loads of step kt - 1: refill that stage
    if (tid == 0 && kt + L::kStages - 1 < tiles) issue(kt + L::kStages - 1);
  };
  k_loop(tiles, step);
  wg_wait<0>();
  pin(acc);

  if constexpr (kSplit)
    split_store<BM>(acc, work, C, row0, col0 + nb, t4, m, n, tid,
                    int64_t(blockIdx.y) * gridDim.x + blockIdx.x, int64_t(gridDim.x) * gridDim.y, blockIdx.z,
                    gridDim.z);
  else
    store_ct<BM>(C, acc, row0, col0 + nb, t4, m, n);
#else
  (void)work;
  (void)segments;
#endif
  trace_end<kTrace>(trace, record);
}

// [SECTION] Tile 512: a cluster of two blocks, 256 x 256 of C. The blocks of a cluster (blockIdx.z 0 and 1,
// columns col0 and col0 + 128 of the same 256 rows) read the same A tile: each loads half of it with one TMA
// multicast that lands in both blocks' shared memory, so A costs each block half the L2 traffic (and B, its
// own, is loaded as before). Since a block's copies now write into the other's stages, a stage is refilled
// only when the consumer warps of both blocks have released it: every consumer warp arrives on the "empty"
// mbarrier of that stage in both blocks, and a producer warpgroup (warps 8-11; one thread issues, the others
// give their registers to the consumers with setmaxnreg) waits on it. No barrier joins the warps at each k
// step. A block whose 128 columns lie wholly past N (an edge cluster) still loads and releases its half of A
// for the other block, and computes and stores nothing.
// The clusters take their tiles in bands of kGroupRows = 8 rows, column by column within a band
// (tile_order.hpp), instead of row by row: the 66 clusters resident at once then cover 8 rows x 8 columns of
// tiles and read each B panel once for 8 rows of tiles. Measured on an H100 (% of cuBLAS TF32, interleaved;
// bands in six bench runs, rows in two): 16384 x 16384 x 2048 112.5-114.6 against 99.0-99.7 (B, 128 MB, was
// read from DRAM once per row of tiles), 8192^3 99.7-100.4 against 99.3-100.0, 6144^3 100.8-102.1 against
// 99.9-100.7, 4096^3 101.6-103.6 against 102.5. The trace records each block at its tile's place.
// kSplit (where the pairs fill at most half the SMs: tma_splits): blockIdx.z = kPair * slice + half, K cut
// into gridDim.z / kPair slices as tile 256's are, the two halves of a slice one cluster; each block adds its
// piece of TBM x BN with split_store, and the trace has a record per piece and slice, as tile 256's slices.
constexpr int kPair = 2;
constexpr int kGroupRows = 8;
template <bool kTrace, bool kSplit>
__global__ void __launch_bounds__(NT + 128, 1)
    wgmma_tf32_pair_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                           int64_t m, int64_t n, int64_t k, TileRecord* trace,
                           const __grid_constant__ CUtensorMap tma_a,
                           const __grid_constant__ CUtensorMap tma_b, float* __restrict__ work) {
  // Tiles in bands of kGroupRows rows (tile_order.hpp): a wave's clusters share B's panels in L2.
  const TilePos tile = grouped_tile(blockIdx.x, blockIdx.y, gridDim.x, gridDim.y, kGroupRows);
  const unsigned half = kSplit ? blockIdx.z % kPair : blockIdx.z;
  const unsigned slice = kSplit ? blockIdx.z / kPair : 0, splits = kSplit ? gridDim.z / kPair : 1;
  const int64_t piece = (tile.row * gridDim.x + tile.col) * kPair + half;  // of TBM x BN
  const size_t record = kSplit
                            ? (size_t(slice) * gridDim.y + size_t(tile.row)) * (size_t(gridDim.x) * kPair) +
                                  size_t(tile.col * kPair + half)
                            : trace_index(tile.col, tile.row);
  trace_begin<kTrace>(trace, record);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  (void)A;
  (void)B;
  extern __shared__ __align__(16) uint8_t smem_raw[];  // aligned to 1024 by TmaSmem
  const TmaSmem<TBM> sm(smem_raw);
  const uint32_t fulls = sm.fulls(), empties = sm.empties();
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int64_t row0 = tile.row * TBM, col0 = tile.col * (kPair * BN) + half * BN;
  const bool live = col0 < n;  // false: an edge cluster's second block, past N
  // This block's K tiles: [t_first, t_first + tiles) (all of them without kSplit).
  const int64_t k_tiles = (k + BK - 1) / BK;
  const int64_t t_first = kSplit ? int64_t(slice) * k_tiles / splits : 0;
  const int64_t tiles = kSplit ? int64_t(slice + 1) * k_tiles / splits - t_first : k_tiles;
  if (tid == 0) {
    for (int s = 0; s < TSTAGES; ++s) {
      mbar_init(fulls + 8 * s, 1);
      mbar_init(empties + 8 * s, kPair * NT / 32);  // every consumer warp of both blocks
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    fence_proxy_async();
  }
  cluster_sync();  // both blocks' barriers exist before either multicasts or arrives

  if (warp >= NT / 32) {  // the producer warpgroup
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    if (warp == NT / 32 && lane == 0) {
      const uint32_t rank = cluster_rank();
      for (int64_t j = 0; j < tiles; ++j) {
        const int s = int(j % TSTAGES);
        if (j >= TSTAGES) mbar_wait(empties + 8 * s, uint32_t((j / TSTAGES - 1) & 1));  // j - 4 released
        const uint32_t bar = fulls + 8 * s;
        mbar_expect_tx(bar, live ? kTStageBytes : kTABytes);
        const int kc = int((t_first + j) * BK);
        tma_load_2d_multicast(smem_u32(sm.a(s)) + rank * (kTABytes / kPair), &tma_a, bar, kc,
                              int(row0) + int(rank) * (TBM / kPair), uint16_t((1u << kPair) - 1));
        if (live) tma_load_2d(smem_u32(sm.b(s)), &tma_b, bar, int(col0), kc);
      }
    }
    __syncwarp();
    cluster_sync();
  } else {  // the consumers: two warpgroups, 64 columns of C each
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int wg = warp / 4, wq = warp % 4, g = lane / 4, t4 = lane % 4;
    const int nb = wg * 64 + wq * 16 + g;
    float acc[TBM / 2];
    zero(acc);
    uint32_t fr[2][BK / 8][4];
    auto release = [&](int64_t kt) {  // this warp no longer reads tile kt's stage
      if (lane == 0)
        for (int c = 0; c < kPair; ++c) mbar_arrive_cluster(empties + 8 * int(kt % TSTAGES), uint32_t(c));
    };
    auto step = [&](int64_t kt, auto buf) {
      constexpr int b = decltype(buf)::value;
      const int s = int(kt % TSTAGES);
      mbar_wait(fulls + 8 * s, uint32_t((kt / TSTAGES) & 1));
      const uint32_t sa = smem_u32(sm.a(s));
      mma_tile(acc, fr[b], sm.b(s) + t4 * LDB + nb, [&](int kk) { return a_desc_sw128(sa + kk * 32); });
      wg_wait<1>();  // group kt - 1 is done
      if (kt > 0) release(kt - 1);
    };
    if (live) {
      k_loop(tiles, step);
      wg_wait<0>();
    } else {
      for (int64_t kt = 0; kt < tiles; ++kt) {
        mbar_wait(fulls + 8 * int(kt % TSTAGES), uint32_t((kt / TSTAGES) & 1));
        release(kt);
      }
    }
    pin(acc);
    cluster_sync();  // neither block leaves while the other may still arrive on its barriers
    if constexpr (kSplit) {
      // The producer warps have left: the consumers alone wait for the piece's other slices. A piece wholly
      // past N has no partials (none of its slices is live), so no one waits for it.
      if (live)
        split_store<TBM>(acc, work, C, row0, col0 + nb, t4, m, n, tid, piece,
                         int64_t(gridDim.x) * gridDim.y * kPair, slice, splits, NT);
    } else {
      (void)piece;
      (void)work;
      if (live) store_ct<TBM>(C, acc, row0, col0 + nb, t4, m, n);
    }
  }
#endif
  trace_end<kTrace>(trace, record);
}

// A row-major rows x cols float matrix (row stride ld >= cols, a multiple of 4) as a 2-D tensor map with a
// box_cols x box_rows box. Boxes reaching past rows or cols read zeros (TMA's out-of-bounds fill).
static CUtensorMap tensor_map(const float* p, int64_t rows, int64_t cols, int64_t ld, uint32_t box_cols,
                              uint32_t box_rows, CUtensorMapSwizzle swizzle) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !fn)
      throw std::runtime_error("wgmma_tf32: the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(ld) * sizeof(float)};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(p), dims, strides,
                            box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("wgmma_tf32: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) +
                             ")");
  return map;
}

// Split-K for tile 256 (kSplit): where its tiles fill at most half the SMs (1000^3 and 1024^3: 32 tiles for
// 132 SMs), K is cut into as many slices as the SMs hold copies of the grid, at most kMaxSplits and at
// least kMinSliceTiles K tiles each. 1 = no split. (kMaxSplits is split_store's.) Measured on an H100 (one
// bench run, % of cuBLAS TF32 interleaved; cold L2 in brackets), one block per tile against slices: 1000^3
// 72.5 (74.1) against 84.3 (81.0) in 2 slices and 97.8 (90.2) in 4; 1024^3 70.3 (65.4), 74.6 (74.0), 95.2
// (84.0); 512^3 66.1 against 69.8 (4), 768^3 70.4 against 80.3 (4), 1536 x 1024 x 1024 74.6 against 79.6
// (2), 256 x 256 x 4096 16.7 against 45.0 (4). At 1024^3 in 4 slices the k loops read 48 MB from L2 in
// about 8 us, which looked like L2's bandwidth setting the pace; tile 512's pairs in slices read a third less
// (half of A each) and are slower (below), so it is not: each block's 8 K tiles (1.3 us each, a quarter of
// the tensor cores' rate) and its share of the adding are latency, not bandwidth.
// Tried and not kept: the slices of a tile as one cluster, adding through distributed shared memory (each
// block's partial over its stages, a cluster barrier, each block reading its share from the 4 blocks; no
// workspace, count or cooperative launch). A block took 14.4 us against 15.2 at 1024^3, but this H100 holds
// at most 30 clusters of 4 (120 SMs), so 32 tiles ran in two waves: 26 us against 17.4 (57.8 % of cuBLAS
// TF32 against 86-91 %); where the clusters fit at once it was 8 % faster (768^3 12.8 us against 13.9,
// 512^3 11.0 against 11.9; two bench runs, sanitizers clean).
// Tile 512's pairs the same way (kSplit of the pair kernel): the blocks of a slice are the pairs' halves, so
// at 1000^3 and 1024^3 16 pairs make 32 blocks and 4 slices 128, each reading half of its A tile. Measured
// on an H100 (two bench runs, % of cuBLAS TF32 interleaved; cold in brackets): 1000^3 87.4-89.8 (79.6-82.9)
// against 74.7 (65.5) unsplit in session 2's table, 1024^3 78.3-90.6 (75.6-75.9) against 72.4 (60.1); tile
// 256 in the same runs 97.3-99.8 (90.3-94.6) and 86.9-99.0 (84.1): a pair's block takes 16.8 us, tile 256's
// 15.2 (traces at 1024^3), so tile 256 stays the faster one there.
// Tile 128 (blocks of 128 x 128): 64 tiles at 1000^3 and 1024^3, so 2 slices of 512 K fill 128 SMs, and each
// block writes and reads a partial of 64 KiB instead of 128 (16 MB through L2 in all instead of 32). Measured
// on an H100 (bench behind the launch gate, % of cuBLAS TF32 interleaved; cold in brackets), against tile
// 256 in the same run: 1000^3 111.5 (102.4) against 97.9 (97.3), 1024^3 98.3 (101.1) against 87.2 (86.4);
// on another machine, two rounds: 1000^3 105.2-105.6 (103.9-104.2), 1024^3 91.8-92.0 (88.5-94.7), where
// cuBLAS took 14.7 us against 15.8 on the first (ours 15.6-16.1 on both). Where tile 256 has the SMs'
// worth of tiles, tile 128 is slower (the same run: 2048^3 72.9 %, 3000^3 80.6, 4096^3 66.8, 8192 x 8192 x
// 512 74.8, 512 x 8192 x 8192 65.3; tile 256 89-108): twice the bytes from L2 per flop, and a k tile of 0.26
// us of tensor work, half of tile 256's, pays the same wait and barrier. Tried and not kept: each block's own
// share kept in its registers (half the partial written, half read; the same bits): 17.1-17.8 us against
// 15.6 at 1000^3 and 17.5-17.6 against 16.0 at 1024^3 (two alternating rounds); two K tiles per wgmma group
// and one barrier per two (the same bits): 17.1-17.3 us against 15.6-16.3; and K in 1 slice (64 blocks, no
// fix-up): 16.2-16.3 us against 15.5-16.0 in 2. So the fix-up is no longer what a block waits for: its k
// loop runs at about half the tensor cores' rate (16 K tiles of 0.26 us of wgmmas in about 9 us; ncu: 0.26
// instructions issued per scheduler per cycle, no eligible warp 74 % of the cycles).
constexpr int kMinSliceTiles = 4;
// Rows of C a block of `tile` covers: 128 for tile 128, 256 for tile 256 and for each block of tile 512.
static int block_rows(int tile) {
  return tile == 128 ? 128 : TBM;
}
// The pieces of block_rows x BN a grid of tile 128 or 256, or a pair grid (tile 512), has: one per block of
// a slice.
static int64_t split_pieces(int64_t m, int64_t n, int tile) {
  const int64_t columns = tile == 512 ? kPair * blocks_for(n, kPair * BN) : blocks_for(n, BN);
  return columns * blocks_for(m, block_rows(tile));
}
static int tma_splits(int64_t m, int64_t n, int64_t k, int sms, int tile) {
  const int64_t blocks = split_pieces(m, n, tile);
  const int64_t by_k = (k + BK - 1) / BK / kMinSliceTiles;
  if (2 * blocks > sms) return 1;
  return int(std::max<int64_t>(1, std::min<int64_t>({kMaxSplits, sms / blocks, by_k})));
}
// Where the tiles make whole waves and a partial last one (3000^3 at tile 256: 288 tiles, 2.18 waves of 132
// SMs), the rows of tiles the whole waves hold are made one block a tile, and the remaining rows in slices
// of K, beside them (side_stream.cuh): their blocks start on each SM as it finishes its whole tiles, and the
// last wave's tiles take a fraction of a tile's time instead of a whole one. This is the data-parallel and
// split-K hybrid of the stream-K paper (whole tiles, then the rest shared), cut at a row of tiles so that
// both launches are this kernel on a rectangle of C. Only where the remaining rows' tiles fill at most half
// the SMs (tma_splits gives them 2 slices or more), and for tile 256 only. Measured on an H200 (% of cuBLAS
// TF32 interleaved, two runs each, without the tail in brackets, the same binary): tile 256 at 3000^3 110.0-
// 111.9 (96.4-96.7; cold 103.9 against 98.7), 4099^3 209.8-210.3 (194.3-194.4), 5120^3 119.9-120.2
// (110.5-110.6), 3000 x 3000 x 1000 112.7-113.3 (102.2-102.4), 2600 x 1700 x 700 83.4-83.7 (84.9: the whole
// rows fill less than one wave there). Tile 128 lost with it: 81.8-81.9 (83.5-83.9) at 3000^3, 82.4-83.4
// (89.1-89.2) at 5120^3, 91.9-92.0 (95.2) at 3000 x 3000 x 1000, so it has none; tile 512 neither.
struct TailPlan {
  int64_t whole_rows = 0;  // rows of tiles made whole (one block a tile)
  int splits = 1;          // slices of K of the remaining rows' tiles; 1: no tail launch
};
static TailPlan tma_tail(int64_t m, int64_t n, int64_t k, int sms, int tile) {
  TailPlan p;
  if (tile != 256 || sms <= 0) return p;
  const int bm = block_rows(tile);
  const int64_t rows = blocks_for(m, bm), cols = blocks_for(n, BN), tiles = rows * cols;
  if (tiles <= sms || tiles % sms == 0) return p;
  const int64_t whole = (tiles - tiles % sms) / cols;
  if (whole <= 0 || whole >= rows) return p;
  const int splits = tma_splits(m - whole * bm, n, k, sms, tile);
  if (splits < 2) return p;
  p.whole_rows = whole;
  p.splits = splits;
  return p;
}

// The workspace of a split launch: a partial piece per block, then a count per piece.
static size_t tma_split_bytes(int64_t m, int64_t n, int splits, int tile) {
  if (splits <= 1) return 0;
  const size_t pieces = size_t(split_pieces(m, n, tile));
  return pieces * size_t(splits) * size_t(block_rows(tile)) * BN * sizeof(float) +
         pieces * sizeof(unsigned long long);
}

// Tile 128 or 256 (BM rows a block) through TMA, in `splits` slices of K, or with a tail (tma_tail).
template <int BM>
static void go_tma_blocks(const GemmArgs& a, cudaStream_t s, LaunchQuery* q, const CUtensorMap& ta,
                          const CUtensorMap& tb, int splits, const TailPlan& tail, float* work) {
  constexpr size_t smem = TmaLayout<BM>::kSmem;
  const dim3 grid(blocks_for(a.n, BN), blocks_for(a.m, BM), unsigned(splits));
  const auto plain = wgmma_tf32_tma_kernel<BM, false, false>, traced = wgmma_tf32_tma_kernel<BM, true, false>;
  const auto plain_split = wgmma_tf32_tma_kernel<BM, false, true>,
             traced_split = wgmma_tf32_tma_kernel<BM, true, true>;
  if (tail.splits > 1) {
    // The trace is one of K segments (stream-K's): a record per tile and slice, the whole tiles' in slice 0
    // and the others absent.
    const dim3 whole(grid.x, unsigned(tail.whole_rows)),
        rest(grid.x, grid.y - whole.y, unsigned(tail.splits));
    if (q) {
      launch_or_query(plain, traced, grid, dim3(NT), smem, s, q, BM, BN, a, ta, tb, work, int64_t(0), 1);
      q->grid_z = unsigned(tail.splits);
      q->launch_blocks = int64_t(whole.x) * whole.y + int64_t(rest.x) * rest.y * rest.z;
      q->k_segments = true;
      q->shares_tiles = true;
      q->k_step = BK;
      return;
    }
    launch_beside(
        s,
        [&](cudaStream_t side) {
          (a.trace ? traced : plain)<<<whole, NT, smem, side>>>(a.A, a.B, a.C, a.m, a.n, a.k, a.trace, ta, tb,
                                                                work, int64_t(0), 1);
          CUDA_CHECK_LAUNCH();
        },
        [&](cudaStream_t caller) {
          launch_cooperative(a.trace ? traced_split : plain_split, rest, dim3(NT), smem, caller, a.A, a.B,
                             a.C, a.m, a.n, a.k, a.trace, ta, tb, work, tail.whole_rows, 1);
        });
    return;
  }
  if (splits <= 1)
    return launch_or_query(plain, traced, grid, dim3(NT), smem, s, q, BM, BN, a, ta, tb, work, int64_t(0), 0);
  if (q) {
    launch_or_query(plain_split, traced_split, grid, dim3(NT), smem, s, q, BM, BN, a, ta, tb, work,
                    int64_t(0), 0);
    q->k_step = BK;  // the slices are whole K tiles (t_first in the kernel)
    return;
  }
  // Cooperative: every slice of a tile is resident while the others wait for it (tma_splits launches no
  // more blocks than SMs, one block per SM).
  launch_cooperative(a.trace ? traced_split : plain_split, grid, dim3(NT), smem, s, a.A, a.B, a.C, a.m, a.n,
                     a.k, a.trace, ta, tb, work, int64_t(0), 0);
}

// A and B through TMA, read from A (row stride lda) and B (row stride ldb); both strides multiples of 4.
// In `splits` slices of K, every tile uses `work` (tma_split_bytes).
static void go_tma(const GemmArgs& a, int tile, cudaStream_t s, LaunchQuery* q, const float* A, int64_t lda,
                   const float* B, int64_t ldb, int splits, const TailPlan& tail, float* work) {
  const bool pair = tile == 512;
  if (needs_device(q)) {  // an offline query (build-time table) makes no CUDA call
    static const bool configured = [] {
      auto set = [](const void* f, size_t bytes) {
        CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
      };
      for (const void* f : {reinterpret_cast<const void*>(wgmma_tf32_tma_kernel<TBM, false, false>),
                            reinterpret_cast<const void*>(wgmma_tf32_tma_kernel<TBM, true, false>),
                            reinterpret_cast<const void*>(wgmma_tf32_tma_kernel<TBM, false, true>),
                            reinterpret_cast<const void*>(wgmma_tf32_tma_kernel<TBM, true, true>),
                            reinterpret_cast<const void*>(wgmma_tf32_pair_kernel<false, false>),
                            reinterpret_cast<const void*>(wgmma_tf32_pair_kernel<true, false>),
                            reinterpret_cast<const void*>(wgmma_tf32_pair_kernel<false, true>),
                            reinterpret_cast<const void*>(wgmma_tf32_pair_kernel<true, true>)})
        set(f, kTSmem);
      for (const void* f : {reinterpret_cast<const void*>(wgmma_tf32_tma_kernel<128, false, false>),
                            reinterpret_cast<const void*>(wgmma_tf32_tma_kernel<128, true, false>),
                            reinterpret_cast<const void*>(wgmma_tf32_tma_kernel<128, false, true>),
                            reinterpret_cast<const void*>(wgmma_tf32_tma_kernel<128, true, true>)})
        set(f, TmaLayout<128>::kSmem);
      return true;
    }();
    (void)configured;
  }
  CUtensorMap ta{}, tb{};
  if (!q) {
    ta = tensor_map(A, a.m, a.k, lda, BK, uint32_t(pair ? TBM / kPair : block_rows(tile)),
                    CU_TENSOR_MAP_SWIZZLE_128B);
    tb = tensor_map(B, a.k, a.n, ldb, LDB, BK, CU_TENSOR_MAP_SWIZZLE_NONE);
  }
  if (tile == 128) return go_tma_blocks<128>(a, s, q, ta, tb, splits, tail, work);
  if (!pair) return go_tma_blocks<TBM>(a, s, q, ta, tb, splits, tail, work);
  // Tile 512: a 256 x 256 tile of C per cluster of 2 blocks, blockIdx.z the block's half (the query's
  // blocks per tile); in slices, blockIdx.z = kPair * slice + half, and the query (the trace, occupancy)
  // describes the blocks' pieces of TBM x BN in slices, as tile 256's slices.
  const dim3 grid(blocks_for(a.n, kPair * BN), blocks_for(a.m, TBM), kPair * unsigned(splits)),
      block(NT + 128);
  const bool split = splits > 1;
  auto plain = split ? wgmma_tf32_pair_kernel<false, true> : wgmma_tf32_pair_kernel<false, false>;
  auto traced = split ? wgmma_tf32_pair_kernel<true, true> : wgmma_tf32_pair_kernel<true, false>;
  if (q) {
    if (!split) {
      launch_or_query(plain, traced, grid, block, kTSmem, s, q, TBM, kPair * BN, a, ta, tb, work);
      q->z_splits_columns = true;
      return;
    }
    const dim3 pieces(grid.x * kPair, grid.y, unsigned(splits));
    launch_or_query(plain, traced, pieces, block, kTSmem, s, q, TBM, BN, a, ta, tb, work);
    q->k_step = BK;
    return;
  }
  // In slices the launch is cooperative too: every slice of a piece is resident while the others wait for
  // it (tma_splits launches no more blocks than SMs, one block per SM, in clusters of two).
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 1;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = kPair;
  attr[1].id = cudaLaunchAttributeCooperative;
  attr[1].val.cooperative = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = kTSmem;
  cfg.stream = s;
  cfg.attrs = attr;
  cfg.numAttrs = split ? 2 : 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, a.trace ? traced : plain, a.A, a.B, a.C, a.m, a.n, a.k, a.trace, ta, tb,
                                work));
}

template <int BM, int STAGES, int kMinBlocks, bool kVecA, bool kVecB>
static void go(const GemmArgs& a, cudaStream_t s, LaunchQuery* q) {
  constexpr size_t smem = Cfg<BM, STAGES>::kSmem;
  auto plain = wgmma_tf32_kernel<BM, STAGES, kMinBlocks, kVecA, kVecB, false>;
  auto traced = wgmma_tf32_kernel<BM, STAGES, kMinBlocks, kVecA, kVecB, true>;
  if (needs_device(q)) {  // an offline query (build-time table) makes no CUDA call
    static const bool configured = [&] {
      for (const void* f : {reinterpret_cast<const void*>(plain), reinterpret_cast<const void*>(traced)})
        CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      return true;
    }();
    (void)configured;
  }
  const dim3 grid(blocks_for(a.n, BN), blocks_for(a.m, BM));
  launch_or_query(plain, traced, grid, dim3(NT), smem, s, q, BM, BN, a);
}

template <int BM, int STAGES, int kMinBlocks>
static void dispatch(const GemmArgs& a, cudaStream_t s, LaunchQuery* q) {
  const bool va = a.k % 4 == 0, vb = a.n % 4 == 0;
  if (va && vb)
    go<BM, STAGES, kMinBlocks, true, true>(a, s, q);
  else if (va)
    go<BM, STAGES, kMinBlocks, true, false>(a, s, q);
  else if (vb)
    go<BM, STAGES, kMinBlocks, false, true>(a, s, q);
  else
    go<BM, STAGES, kMinBlocks, false, false>(a, s, q);
}

void launch_wgmma_tf32(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  // sm_90a code runs on compute capability 9.0 only (not on later GPUs): say so instead of failing to launch.
  if (needs_device(q)) {
    static const int cc = [] {
      int dev = 0, major = 0, minor = 0;
      CUDA_CHECK(cudaGetDevice(&dev));
      CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
      CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
      return major * 10 + minor;
    }();
    if (cc != 90)
      throw std::invalid_argument(
          "wgmma_tf32: built for sm_90a, which runs on compute capability 9.0 only (this "
          "GPU is " +
          std::to_string(cc / 10) + "." + std::to_string(cc % 10) + ")");
  }
  auto s = static_cast<cudaStream_t>(stream);
  if (tile != 128 && tile != 256 && tile != 512) bad_tile("wgmma_tf32", tile);
  const int sms = sm_count_for(q);
  const int splits = tma_splits(a.m, a.n, a.k, sms, tile);
  const TailPlan tail = splits > 1 ? TailPlan{} : tma_tail(a.m, a.n, a.k, sms, tile);
  // The workspace of the slices: of the whole launch's, or of the tail's rows.
  const size_t split = tail.splits > 1
                           ? tma_split_bytes(a.m - tail.whole_rows * block_rows(tile), a.n, tail.splits, tile)
                           : tma_split_bytes(a.m, a.n, splits, tile);
  float* work = static_cast<float*>(a.workspace);
  if (a.k % 4 == 0 && a.n % 4 == 0) {  // 16-byte row strides
    if (q) {
      go_tma(a, tile, s, q, a.A, a.k, a.B, a.n, splits, tail, nullptr);
      q->workspace_bytes = split;
      return;
    }
    if (split > 0 && (!work || a.workspace_bytes < split))
      throw std::invalid_argument("wgmma_tf32 tile " + std::to_string(tile) + " at " + std::to_string(a.m) +
                                  " x " + std::to_string(a.n) + " x " + std::to_string(a.k) + " in " +
                                  std::to_string(tail.splits > 1 ? tail.splits : splits) +
                                  " slices of K needs a workspace of " + std::to_string(split) + " bytes");
    return go_tma(a, tile, s, q, a.A, a.k, a.B, a.n, splits, tail, work);
  }
  // TMA needs row strides that are multiples of 16 bytes. Rows of K or N floats that are not (4099^3) are
  // first copied into the workspace with strides rounded up to 32 floats (128-byte rows) (cudaMemcpy2DAsync,
  // a small part of the GEMM's time: 2 x 67 MB at 4099^3), and TMA reads the copies; the boxes at the edges
  // read zeros past K and N. Without a workspace (none given): tile 256 falls back to the cp.async kernel,
  // which reads any stride; tiles 128 and 512 have no such kernel and refuse, naming the bytes they need.
  // With split-K the copies follow the partials (padded_b_offset).
  const int64_t lda = padded_ld(a.k), ldb = padded_ld(a.n);
  const size_t need =
      padded_b_offset(split) + (size_t(a.m) * size_t(lda) + size_t(a.k) * size_t(ldb)) * sizeof(float);
  if (q) {
    go_tma(a, tile, s, q, nullptr, lda, nullptr, ldb, splits, tail, nullptr);
    q->workspace_bytes = need;
    return;
  }
  if (!a.workspace || a.workspace_bytes < need) {
    if (tile != 256)
      throw std::invalid_argument("wgmma_tf32 tile " + std::to_string(tile) +
                                  " at K = " + std::to_string(a.k) + ", N = " + std::to_string(a.n) +
                                  " needs a workspace of " + std::to_string(need) +
                                  " bytes (rows copied to 128-byte strides for TMA)");
    return dispatch<256, 4, 1>(a, s, q);
  }
  float* ap = reinterpret_cast<float*>(reinterpret_cast<char*>(work) + padded_b_offset(split));
  float* bp = ap + size_t(a.m) * size_t(lda);
  copy_to_padded_rows(ap, lda, a.A, a.m, a.k, s);
  copy_to_padded_rows(bp, ldb, a.B, a.k, a.n, s);
  go_tma(a, tile, s, q, ap, lda, bp, ldb, splits, tail, work);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_wgmma_tf32() {
  KernelInfo k = kernel_info(
      "wgmma_tf32", "13. Hopper warpgroup MMA, TF32 (wgmma)",
      "Four warps issue one asynchronous 64 x N x 8 MMA that reads A straight from shared "
      "memory (C^T = B^T A^T, since TF32 wgmma wants k-contiguous tiles), tiles loaded by "
      "TMA: Hopper's full tensor-core rate, for sm_90a-only code, tensor maps and "
      "asynchronous-register rules. Tile 512 pairs two blocks in a cluster that share A "
      "through TMA multicast (half the L2 traffic for A) and takes its tiles in bands of 8 "
      "rows, so the clusters running at once also share B's panels in L2. Measured on an H100 "
      "it pays where L2 is the limit (8192^3: +4-9 %, 16384 x 16384 x 2048: +14-16 %) and at "
      "large shapes whose rows are not 128-byte aligned (4100^3: +34 %, 2052^3: +18 %, "
      "6000^3: +13 %), and costs 1-7 % elsewhere (1024^3 to 6144^3). Where tile 256's tiles "
      "fill at most half the SMs (1024^3: 32 tiles for 132 SMs), K is cut into up to 4 slices, "
      "one block each; the slices of a tile then add a share of it each, in slice order, so C is "
      "the same bits every run (1024^3: 70 -> 95 % of cuBLAS TF32 on an H100); tile 512's pairs "
      "likewise (1000^3: 75 -> 88-90 %). Tile 128 has twice as many tiles as tile 256, so "
      "where the GPU holds few tiles it cuts K into half as many slices, each with half the "
      "partial to add (H100, against tile 256 in the same runs: 1000^3 107-112 against 91-98 %, "
      "1024^3 92-98 against 85-87 % of cuBLAS TF32); elsewhere it is the slower one (46-80 %). "
      "Where tile 256's tiles make whole waves and a partial last one (3000^3: 288 tiles, 2.18 "
      "waves of 132 SMs), the rows the whole waves hold are made one block a tile, and the rows "
      "left in slices of K, started on each SM as it finishes its whole tiles (H200: 3000^3 96 -> "
      "110-112 %, 4099^3 194 -> 210 %, 5120^3 111 -> 120 % of cuBLAS TF32).",
      {128, 256, 512},
      {"block 128 x 128 x 32, 2 warpgroups of 64 x 128 (C^T), 6 stages, TMA; K in up to 4 "
       "slices where the tiles fill at most half the SMs (A and B copied to 16-byte-aligned "
       "rows first when K or N is not a multiple of 4)",
       "block 256 x 128 x 32, 2 warpgroups of 64 x 256 (C^T), 4 stages, TMA (A and B copied "
       "to 16-byte-aligned rows first when K or N is not a multiple of 4); K in up to 4 slices "
       "where the tiles fill at most half the SMs, and for the rows past the whole waves",
       "512 = 2 x 256: a cluster of 2 blocks of tile 256, 256 x 256 of C; each block loads "
       "half of A for both (TMA multicast), a producer warpgroup, 384 threads; tiles in bands "
       "of 8 rows; K in up to 4 slices where the pairs' blocks fill at most half the SMs"},
      256, "256 (tile 512: 384)");
  // Two consumer warpgroups, 64 columns of C each (over all of the block's rows); tile 512 is a cluster's
  // 256 x 256.
  TileGeometry g128 = block_tile(128, 128, 32, 6), g256 = block_tile(256, 128, 32, 4),
               g512 = block_tile(256, 256, 32, 4);
  warp_tile(g128, 128, 64).warpgroup = true;
  warp_tile(g256, 256, 64).warpgroup = true;
  warp_tile(g512, 256, 64).warpgroup = true;
  k.geometry = {g128, g256, g512};
  k.tf32 = true;
  k.min_sm = 90;
  return {k, TS_LAUNCHER(launch_wgmma_tf32)};  // nullptr when built without sm_90 (compiled as C++ then)
}

}  // namespace ts

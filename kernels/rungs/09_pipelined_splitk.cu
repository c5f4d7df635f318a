// Rung 9: a software pipeline. The previous rung overlapped global loads with compute; this one also keeps
// the shared-memory reads, the barriers and the load instructions out of the FFMAs' way:
//  - A is stored transposed in shared memory (As[k][m]), copied element by element with 4-byte cp.async (a
//    warp copies 4 rows x 8 consecutive k: coalesced reads; the row stride BM + 4 puts the transposing stores
//    in 32 different banks). Each k step then reads its fragments with 128-bit loads of 4 consecutive
//    floats and is a pure outer product (rung 8 reads A as 4-k vectors of 8 rows: 32 registers per 4 k,
//    and the four row addresses of one load fall in the same banks).
//  - Three shared-memory stages: tile t + 2 is in flight while tile t is computed, so a copy has two tiles
//    of compute to land, and one __syncthreads() per tile suffices (rung 8 needs two).
//  - The fragments are double-buffered in registers: the loads for step k + 1 (and, at a tile's last step,
//    for the next tile's first) are issued before the FFMAs of step k, so no warp waits for shared memory
//    after a barrier.
//  - Source pointers are computed once (64-bit) and advanced by a tile per copy; the bounds checks run only
//    in edge blocks and on the last, partial k tile (tile 256: in every tile of a block whose last k tile is
//    partial, so that its loop has no branch).
//  - Tile 256: a 128 x 256 block with 8 x 16 outputs per thread: six 128-bit shared-memory loads per 128
//    FFMAs instead of four per 64 (and a quarter fewer bytes from L2 per FFMA). Its main loop is
//    straight-line code, its FFMAs go column by column and C is stored element by element (Cfg::STRAIGHT):
//    that shape of code is what lets ptxas assign registers whose FFMAs do not stall at dispatch.
// What it buys (H100, 4096^3, one run): tile 128 (rung 8's 128 x 128 x 16 block) 44.7 TFLOP/s against rung
// 8's 38.8; tile 256 53 TFLOP/s, 103 % of cuBLAS, whose kernel there has the same block (its 256 x 128 x 8 in
// column-major terms, 3 stages, 254 registers).
// What it costs: registers (tile 256: 226 per thread, one block of 8 warps per SM, so every stall that two
// warps per scheduler cannot cover shows), 3 stages of shared memory, four times as many copy instructions
// for A, and index arithmetic that is harder to follow. Tile 256 needs big matrices: at 1024^3 it has 32
// blocks for 132 SMs, tile 128 64. Tile 64 (64 x 128 blocks of 4 warps, 4 stages of 8 k, the straight loop)
// is for such grids: 128 blocks at 1024^3, 101.5 % of cuBLAS there and 92.4 % at 1000^3 (H100, launch gate;
// see launch_pipelined). When N is not a multiple of 4, B's rows are not
// 16-byte aligned: B is first copied into the workspace with rows padded to a multiple of 32 floats (a copy
// of K x N floats, about 1 % of the GEMM's time at 4099^3), so its tiles are still loaded with 16-byte
// copies; C is stored element by element (4099^3, tile 128: 92 % of cuBLAS; 88 % when B was copied element by
// element).
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/rungs/gemm_common.cuh"
#include "kernels/rungs/pipeline.cuh"

namespace ts {

// kSplit (rung 10, split-K): blockIdx.z takes slice z of the K tiles (gridDim.z slices, sizes differing by at
// most one), and the block's partial sums go to `work` instead of C; the last slice of a tile to finish (an
// atomic count per tile in `work`) adds the slices' partials in slice order, so C does not depend on which
// finished first, and writes C. No block ever waits for another.
// kPadB: N % 4 != 0, so B is a copy whose rows are ldb floats apart (N rounded up to 32) and C is stored
// element by element. Otherwise B's rows are ldb = N floats apart and C is stored with 16-byte stores.
// Register pressure decides which stride variable the loop reads: without split-K the aligned kernel reads n
// (its SASS is the same as before padding existed), with split-K it reads ldb (44 bytes of spills instead of
// 140; split-K at 2 slices, 2048^3: 79 % of cuBLAS before, 85 % after, H100).
template <class G, bool kPadB, bool kTrace, bool kSplit>
__global__ void __launch_bounds__(G::NT, G::MINB)
    pipelined_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                     int64_t m, int64_t n, int64_t k, TileRecord* trace, float* __restrict__ work,
                     int64_t ldb) {
  trace_begin<kTrace>(trace);
  constexpr int BM = G::BM, BN = G::BN, BK = G::BK, WM = G::WM, WN = G::WN, S = G::STAGES;
  constexpr int TM = G::TM, TN = G::TN;
  extern __shared__ __align__(16) float smem[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wr = warp / (BN / WN), wc = warp % (BN / WN);
  const int a_off = wr * WM + (lane / 8) * 4;  // rows a_off + 16 p + {0..3}
  const int b_off = wc * WN + (lane % 8) * 4;  // columns b_off + 32 q + {0..3}
  const int64_t row0 = int64_t(blockIdx.y) * BM, col0 = int64_t(blockIdx.x) * BN;
  // This block's K tiles: [t_first, t_first + tiles) (all of them without kSplit).
  const int64_t k_tiles = (k + BK - 1) / BK;
  const int64_t t_first = kSplit ? int64_t(blockIdx.z) * k_tiles / gridDim.z : 0;
  const int64_t tiles = kSplit ? int64_t(blockIdx.z + 1) * k_tiles / gridDim.z - t_first : k_tiles;
  const bool interior = row0 + BM <= m && col0 + BN <= n;

  // Per-thread source pointers, advanced by one k tile per issue, and which of the thread's rows of A and
  // columns of B exist (out-of-range ones are clamped to row / column 0 and never read).
  const float* pa[G::PA];
  unsigned a_rows = 0;
#pragma unroll
  for (int i = 0; i < G::PA; ++i) {
    const int64_t r = row0 + tid / 8 + G::RPA * i;
    a_rows |= unsigned(r < m) << i;
    pa[i] = A + (r < m ? r : 0) * k + tid % 8 + t_first * BK;
  }
  const int64_t bcol = col0 + (tid % (BN / 4)) * 4;
  unsigned b_cols = 0;
#pragma unroll
  for (int e = 0; e < 4; ++e) b_cols |= unsigned(bcol + e < n) << e;
  const int64_t ld_b = kPadB || kSplit ? ldb : n;
  const int64_t b_pass = int64_t(G::RPB) * ld_b;
  const float* pb = B + (int64_t(tid / (BN / 4)) + t_first * BK) * ld_b + (bcol < n ? bcol : 0);

  float acc[TM][TN] = {};
  float fa[2][TM], fb[2][TN];
  auto load_frag = [&](int buf, const float* st, int kk) {
    const float* as = st + kk * G::ALD + a_off;
    const float* bs = st + G::A_FLOATS + kk * BN + b_off;
#pragma unroll
    for (int p = 0; p < TM / 4; ++p)
      *reinterpret_cast<float4*>(&fa[buf][4 * p]) = *reinterpret_cast<const float4*>(as + 16 * p);
#pragma unroll
    for (int q = 0; q < TN / 4; ++q)
      *reinterpret_cast<float4*>(&fb[buf][4 * q]) = *reinterpret_cast<const float4*>(bs + 32 * q);
  };
  if constexpr (G::STRAIGHT) {
    // The pipeline, with no branch inside its loop: whether copies need bounds checks (kCheck: an edge block,
    // or a last k tile that is partial) is decided once per block, and the last S - 1 tiles, which have
    // nothing left to issue, run in a loop of their own (kMore false), so each loop body is straight-line
    // code.
    auto run = [&](auto check) {
      constexpr bool kCheck = decltype(check)::value;
      auto issue = [&](int stage, int64_t t) {
        load_tile<G, kPadB, kCheck>(smem + stage * G::STAGE_FLOATS, A, B, k, (t_first + t) * BK, tid, pa, pb,
                                    b_pass, a_rows, b_cols);
#pragma unroll
        for (int i = 0; i < G::PA; ++i) pa[i] += BK;
        pb += (BK / G::RPB) * b_pass;
      };
      // Prologue: tiles 0 .. S-2 in flight (one commit group per tile, empty groups past the end keep the
      // count).
#pragma unroll
      for (int s = 0; s < S - 1; ++s) {
        if (s < tiles) issue(s, s);
        cp_async_commit();
      }
      cp_async_wait<S - 2>();
      __syncthreads();
      int rs = 0, ws = S - 1;  // the stage read now, the stage written next
      load_frag(0, smem, 0);
      auto tile = [&](int64_t t, auto more) {
        constexpr bool kMore = decltype(more)::value;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
          if (kk == BK - 1) {
            // Tile t + 1 has landed (this thread's copies) and is visible (everyone's); every thread is also
            // past its last read of the stage that is refilled next.
            cp_async_wait<S - 2>();
            __syncthreads();
            rs = rs + 1 == S ? 0 : rs + 1;
          }
          // The next step's fragments (after the last tile: a stale stage, never used).
          load_frag((kk + 1) % 2, smem + rs * G::STAGE_FLOATS, (kk + 1) % BK);
          if (kk == 0) {
            if constexpr (kMore) issue(ws, t + S - 1);
            cp_async_commit();
            ws = ws + 1 == S ? 0 : ws + 1;
          }
          // The outer product, column by column, down one column and up the next. This order (with C stored
          // element by element, below) is what lets ptxas keep the FFMAs' operands in registers that do not
          // stall the dispatch: see the measurements at launch_pipelined.
#pragma unroll
          for (int j = 0; j < TN; ++j)
#pragma unroll
            for (int r = 0; r < TM; ++r) {
              const int i = j % 2 ? TM - 1 - r : r;
              acc[i][j] += fa[kk % 2][i] * fb[kk % 2][j];
            }
        }
      };
      int64_t t = 0;
      for (; t + S - 1 < tiles; ++t) tile(t, std::true_type{});
      for (; t < tiles; ++t) tile(t, std::false_type{});
    };
    // Only a partial last k tile needs the checked copies: past M and N, the rows of A and the columns of B
    // (whole 16-byte groups of them, or B is a padded copy) are clamped to row and column 0 above, so an edge
    // block reads only memory that exists, and the outputs made of what it read there are never stored. At
    // 1000^3 tile 64's edge blocks (23 of its 128) take the unchecked loop, as the others do: 89.8
    // -> 93.0-94.0 % of cuBLAS (H100, two runs; both timed before the launch gate).
    if ((t_first + tiles) * BK <= k)
      run(std::false_type{});
    else
      run(std::true_type{});
  } else {
    // Rung 9 as it was (tile 128, split-K), kept as written although its step repeats the one above: ptxas
    // assigns registers from the shape of the code, and sharing one k-tile lambda between the two loops
    // (same tile-256 kernels, these ones renumbered) cost split-K 1-2.5 points at 4099^3 in an interleaved
    // run on the H100 (2, 3 and 4 slices; within 0.5 elsewhere). cuobjdump shows these kernels unchanged.
    auto issue = [&](int stage, int64_t t) {
      float* st = smem + stage * G::STAGE_FLOATS;
      const int64_t k0 = (t_first + t) * BK;
      if (interior && k0 + BK <= k)
        load_tile<G, kPadB, false>(st, A, B, k, k0, tid, pa, pb, b_pass, a_rows, b_cols);
      else
        load_tile<G, kPadB, true>(st, A, B, k, k0, tid, pa, pb, b_pass, a_rows, b_cols);
#pragma unroll
      for (int i = 0; i < G::PA; ++i) pa[i] += BK;
      pb += (BK / G::RPB) * b_pass;
    };

    // Prologue: tiles 0 .. S-2 in flight (one commit group per tile, empty groups past the end keep the
    // count).
#pragma unroll
    for (int s = 0; s < S - 1; ++s) {
      if (s < tiles) issue(s, s);
      cp_async_commit();
    }

    cp_async_wait<S - 2>();
    __syncthreads();
    int rs = 0, ws = S - 1;  // the stage read now, the stage written next
    load_frag(0, smem, 0);
    for (int64_t t = 0; t < tiles; ++t) {
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        if (kk == BK - 1) {
          // Tile t + 1 has landed (this thread's copies) and is visible (everyone's); every thread is also
          // past its last read of the stage that is refilled next.
          cp_async_wait<S - 2>();
          __syncthreads();
          rs = rs + 1 == S ? 0 : rs + 1;
        }
        // The next step's fragments (after the last tile: a stale stage, never used).
        load_frag((kk + 1) % 2, smem + rs * G::STAGE_FLOATS, (kk + 1) % BK);
        if (kk == 0) {
          if (t + S - 1 < tiles) issue(ws, t + S - 1);
          cp_async_commit();
          ws = ws + 1 == S ? 0 : ws + 1;
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += fa[kk % 2][i] * fb[kk % 2][j];
      }
    }
  }
  cp_async_wait<0>();

  if constexpr (kSplit) {
    // The partial tile, in the threads' own register order (float4 j of thread tid at j * NT + tid: every
    // warp writes 512 contiguous bytes, and no bounds checks), then a count of the slices done.
    const int64_t tile = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
    const int64_t tile_count = int64_t(gridDim.x) * gridDim.y;
    constexpr int V = TM * TN / 4;  // float4s per thread
    float4* part = reinterpret_cast<float4*>(work) + (tile * gridDim.z + blockIdx.z) * int64_t(V * G::NT);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int q = 0; q < TN / 4; ++q)
        __stcg(part + (i * (TN / 4) + q) * G::NT + tid,
               make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
    unsigned* count = reinterpret_cast<unsigned*>(reinterpret_cast<float4*>(work) +
                                                  tile_count * gridDim.z * int64_t(V * G::NT)) +
                      tile;
    __shared__ bool last;
    __threadfence();  // this block's partial is visible to every block before the count says it is there
    __syncthreads();
    if (tid == 0) {
      last = atomicAdd(count, 1u) == gridDim.z - 1;
      if (last) *count = 0;  // ready for the next launch
    }
    __syncthreads();
    if (last) {
      __threadfence();
      // The slices' partials in slice order, whichever block finished first, this block's own included (it
      // wrote it above): a slice at a time, its TM * TN / 4 float4s loaded at once into the accumulators,
      // then C. Loaded output by output with C stored in between, every load waited for the store before it
      // (C may alias the workspace): one L2 round trip after another, 7 us of the 63 at 1024^3 in 2 slices.
      const float4* first = reinterpret_cast<const float4*>(work) + tile * gridDim.z * int64_t(V * G::NT);
      for (unsigned z = 0; z < gridDim.z; ++z) {
        const float4* src = first + int64_t(z) * (V * G::NT) + tid;
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int q = 0; q < TN / 4; ++q) {
            const float4 p = __ldcg(src + (i * (TN / 4) + q) * G::NT);
            float* a = &acc[i][4 * q];
            if (z == 0) {
              a[0] = p.x, a[1] = p.y, a[2] = p.z, a[3] = p.w;
            } else {
              a[0] += p.x, a[1] += p.y, a[2] += p.z, a[3] += p.w;
            }
          }
      }
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int64_t row = row0 + a_off + 16 * (i / 4) + i % 4;
#pragma unroll
        for (int q = 0; q < TN / 4; ++q)
          store4_checked(C, row, col0 + b_off + 32 * q, m, n, n, !kPadB,
                         make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
      }
    }
  } else {
    // STRAIGHT stores C element by element even where 16-byte stores would do: such a store takes its four
    // values from four consecutive registers, and with every accumulator held in such a group through the
    // loop, ptxas's register assignment stalled the FFMAs' dispatch (tile 256: 93 % of cuBLAS instead of
    // 103).
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int64_t row = row0 + a_off + 16 * (i / 4) + i % 4;
#pragma unroll
      for (int q = 0; q < TN / 4; ++q)
        store4_checked(C, row, col0 + b_off + 32 * q, m, n, n, !kPadB && !G::STRAIGHT,
                       make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
    }
  }
  trace_end<kTrace>(trace);
}

// The workspace of one launch: with split-K, a partial tile per block then a count per tile; when N % 4 != 0,
// B with rows padded to a multiple of 32 floats (256-byte aligned).
using SplitCfg = Cfg<128, 128, 16, 32, 64, 3, 2>;

template <class G>
static size_t split_bytes(int64_t m, int64_t n, int splits) {
  if (splits <= 1) return 0;
  const size_t tiles = size_t(blocks_for(n, G::BN)) * size_t(blocks_for(m, G::BM));
  return tiles * size_t(splits) * G::BM * G::BN * sizeof(float) + tiles * sizeof(unsigned);
}

template <class G, bool kPadB, bool kSplit>
static void go(const GemmArgs& a, cudaStream_t s, LaunchQuery* q, unsigned splits, float* work, int64_t ldb) {
  auto plain = pipelined_kernel<G, kPadB, false, kSplit>;
  auto traced = pipelined_kernel<G, kPadB, true, kSplit>;
  if (needs_device(q)) {  // an offline query (build-time table) makes no CUDA call
    static const bool configured = [&] {
      for (const void* f : {reinterpret_cast<const void*>(plain), reinterpret_cast<const void*>(traced)})
        CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(G::SMEM)));
      return true;
    }();
    (void)configured;
  }
  const dim3 grid(blocks_for(a.n, G::BN), blocks_for(a.m, G::BM), splits);
  launch_or_query(plain, traced, grid, dim3(G::NT), G::SMEM, s, q, G::BM, G::BN, a, work, ldb);
}

// One launch of block G with K in `splits` slices (kSplit; otherwise 1: no partials). When N % 4 != 0, B is
// first copied to padded rows in the workspace (copy_to_padded_rows, on the same stream) and read from there.
template <class G, bool kSplit>
static void go(const GemmArgs& a, cudaStream_t s, LaunchQuery* q, int splits) {
  const size_t split = split_bytes<G>(a.m, a.n, splits);
  const size_t need = workspace_for(split, a.n, a.k);
  float* work = static_cast<float*>(a.workspace);
  if (!q && need > 0 && (!work || a.workspace_bytes < need))
    throw std::invalid_argument("pipelined block " + std::to_string(G::BM) + " x " + std::to_string(G::BN) +
                                " at N = " + std::to_string(a.n) + " with " + std::to_string(splits) +
                                " K slice(s) needs a workspace of " + std::to_string(need) + " bytes");
  const auto u = unsigned(splits);
  if (a.n % 4 == 0) {
    go<G, false, kSplit>(a, s, q, u, work, a.n);
  } else {
    const int64_t ldb = padded_ld(a.n);
    GemmArgs padded = a;
    if (!q) {
      float* bp = reinterpret_cast<float*>(reinterpret_cast<char*>(work) + padded_b_offset(split));
      copy_to_padded_rows(bp, ldb, a.B, a.k, a.n, s);
      padded.B = bp;
    }
    go<G, true, kSplit>(padded, s, q, u, work, ldb);
  }
  if (q) q->workspace_bytes = need;
}

// Rung 10: split-K. The block of tile 128 (128 x 128 x 16, 2 blocks per SM), with the K tiles cut into
// `splits` slices: grid (N / 128, M / 128, splits). Tile 1 is rung 9's tile 128 as it is.
static int splitk_slices(int64_t k, int tile) {
  const int64_t k_tiles = (k + SplitCfg::BK - 1) / SplitCfg::BK;  // no empty slice: at most one per K tile
  return int(std::min<int64_t>(tile, k_tiles));
}

void launch_splitk(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  if (tile != 1 && tile != 2 && tile != 3 && tile != 4 && tile != 6 && tile != 8) bad_tile("splitk", tile);
  const int splits = splitk_slices(a.k, tile);
  if (splits > 1)
    go<SplitCfg, true>(a, static_cast<cudaStream_t>(stream), q, splits);
  else  // no partials: rung 9's tile 128 as it is
    go<SplitCfg, false>(a, static_cast<cudaStream_t>(stream), q, 1);
  if (q && splits > 1) q->k_step = SplitCfg::BK;  // the slices are whole K tiles (t_first in the kernel)
}

// Picked from 14 variants measured in one run on an H100 at 4096^3 (TFLOP/s; cuBLAS 51.0, rung 8 38.8):
//   128 x 128 x 8:  3 stages 41.8 (1 block/SM), 43.3 (2 blocks/SM); 2 stages 43.1, 4 stages 43.5 (2/SM)
//   128 x 128 x 16: 3 stages 42.8 (1/SM), 44.7 (2/SM, 32 bytes of spills)         <- tile 128
//   128 x 256 x 8:  3 stages 47.5, 4 stages 47.5; x 16: 47.2                        <- tile 256 (3 stages)
//   256 x 128 x 8:  43.5; x 16: 45.8. Blocks taken in groups of 8 or 16 rows (for L2 reuse): 0-1.5 % slower.
// Later (H100, alternating runs of both builds): the FFMAs of a step in serpentine order (odd rows of the
// outer product walk the columns backwards) give ptxas more operand-reuse flags (tile 256: 995 of 1024 FFMAs
// instead of 907) and cost 4-5 % at 4096^3, 8192^3 and 2048 x 4096 x 8192, so the plain order stays.
// Warp tiles of tile 256's block, same run style (% of cuBLAS at 4096^3 / 8192^3 / 2048 x 4096 x 8192, two
// rounds): 32 x 128 (kept) 93-94; 4 stages 93-94; 64 x 64 89; 64 x 64 with BK 16 90-91; and the 256 x 128
// block with 64 x 64 warps 85, with 128 x 32 warps 79-80.
// Stream-K over tile 256 (kept on the branch experiment/stream-k, not merged; 253 registers, no spills), one
// wave of blocks sharing the partial wave's tiles by k iterations, same run style, two runs: 4096^3 91.9 %
// against 92.7-93.3, 8192^3 92.9-93.1 against 92.9-93.0, 2048 x 4096 x 8192 91.3-91.5 against 92.1, 6144^3
// 93.6 against 93.7: the last wave's 12 % of idle SMs at 4096^3 bought nothing back. (4099^3: 96.5 %, about
// split-K 3's 96.)
// The inner loop, under ncu at 4096^3 (H100): tile 256 issued 0.83 instructions per scheduler per cycle and
// cuBLAS's kernel 0.91, with the same instruction count; of the warp-stall samples, dispatch stalls were 28.5
// k against cuBLAS's 15.5 k, fixed-latency waits 16.6 k against 1.3 k and long-scoreboard waits 11.1 k
// against 1.9 k (these at the copy issue, where ptxas reused one register pair for four copies' addresses).
// The kept variant issues 0.90 per scheduler per cycle (cuBLAS 0.91, same run).
// Variants of tile 256, each timed against cuBLAS interleaved (% at 4096^3 / 8192^3 / 2048 x 4096 x 8192, one
// to four runs each, in a throwaway harness that linked renamed copies of this file): as it was 92.5-93.1 /
// 93.0 / 92.3-92.4; a main loop without branches (checks decided per block, the last S - 1 tiles apart)
// 93.5-93.8 / 93.7 / 92.4-93.0; plus C stored element by element 95.8-96.0 / 96.4 / 94.9-95.8 (element by
// element alone, in the old loop: 91.7 / 92.0 / 91.3); plus the FFMAs column by column 98.1-98.2 / 98.6 /
// 97.7-97.8; and going down one column and up the next (kept) 102.4-103.3 / 103.5-103.7 /
// 102.3-102.9, 52.8-53.8 TFLOP/s. Slower or no better: the next step's fragment loads spread among the FFMAs
// (89 %), pairs of columns (cuBLAS's order; old loop 90.7 / 90.7 / 89.5, new one 98.5 / 98.8 / 98.1), B's
// fragments loaded before A's (93.4 / 94.1 / 92.7), 4 stages or ptxas -O1 / -O2 (unchanged), BK 16 (90.6
// / 91.5 / 89.3), and one source pointer per thread for A (two threads per row: 84 %, its copies no longer
// coalesce). Tile 128 and split-K keep the old loop: in the same runs the new one was 2-3 points better for
// tile 128 at 2048^3 and up but 2 points worse at 1024^3 and 1000^3, and split-K 2 and 4 lost 5-12 points at
// every shape. ptxas builds each variant's register assignment anew, so these figures hold for the CUDA 13.0
// ptxas they were measured with. Tile 128 keeps rung 8's block and thread tiles, so the two compare the
// pipeline; it asks for two blocks per SM (16 warps: one block's barrier waits are covered by the other's
// FFMAs), which costs a few spilled registers and still wins. Tile 256 cannot have two: its 8 x 16
// accumulators alone take 128 registers.
// Tile 64: 1024^3 has 64 blocks of 128 x 128 for 132 SMs; blocks of 64 x 128 make 128, each over all of K,
// so nothing is added up afterwards (cuBLAS's FP32 kernel there is the same shape: 128 blocks of 128 threads,
// 8 x 8 outputs each). Variants measured in one run on an H100 (% of cuBLAS at 1000^3 / 1024^3 / 2048^3,
// timed interleaved, before the launch gate and before edge blocks took the unchecked loop):
//   64 x 128 x 8,  4 stages, straight          89.8 / 102.8 / 94.6   <- tile 64
//   64 x 128 x 8,  3 stages, straight          89.5 / 101.9 / 94.6;  the old loop 78.6 / 86.3 / 81.4
//   64 x 128 x 16, 3 stages, straight          88.0 / 101.5 / 89.0;  the old loop 80.8 / 88.9 / 86.6
//   128 x 64 x 16, 3 stages, straight          84.7 /  97.1 / 89.9;  the old loop 79.0 / 91.5 / 82.0
//   64 x 128 x 16, 8 warps of 32 x 32 (8 x 4)  85.7 /  95.6 / 85.1
// against tile 128 47.4 / 53.9 / 87.8 and split-K 2 78.2 / 91.8 / 83.6 in the same run. The straight loop
// (column by column, C element by element) matters here as for tile 256.
void launch_pipelined(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  auto s = static_cast<cudaStream_t>(stream);
  //                                     BM   BN   BK  WM   WN  stages  blocks/SM  straight
  if (tile == 64) return go<Cfg<64, 128, 8, 32, 64, 4, 1, true>, false>(a, s, q, 1);
  if (tile == 128) return go<Cfg<128, 128, 16, 32, 64, 3, 2>, false>(a, s, q, 1);
  if (tile == 256) return go<Cfg<128, 256, 8, 32, 128, 3, 1, true>, false>(a, s, q, 1);
  bad_tile("pipelined", tile);
}

// Stream-K's whole tiles (10_streamk.cu): tile 256's own kernel (these very instantiations, no new code)
// over rows [0, a.m) of C, B in rows of ldb floats (ldb != a.n: B already padded by the caller, who owns the
// workspace; no split, so none is touched here).
void launch_pipelined256_rows(const GemmArgs& a, int64_t ldb, void* stream) {
  using G = Cfg<128, 256, 8, 32, 128, 3, 1, true>;
  auto s = static_cast<cudaStream_t>(stream);
  if (ldb == a.n)
    go<G, false, false>(a, s, nullptr, 1u, nullptr, ldb);
  else
    go<G, true, false>(a, s, nullptr, 1u, nullptr, ldb);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entries (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_splitk() {
  KernelInfo k = kernel_info(
      "splitk", "10. Split-K",
      "Rung 9's 128 x 128 block with K cut into slices, one block per slice of each tile, so a grid too "
      "small for the GPU (1024^3: 64 tiles for 132 SMs) fills it and the last wave's idle SMs get work; "
      "the last slice to finish adds the partial tiles in order. Helps when tiles x slices reaches the "
      "SMs' block slots and K is long; costs a partial tile written and read per block, so on grids of "
      "many full waves (4096^3 and up) it only adds traffic: use tile 1 there (no split).",
      {1, 2, 3, 4, 6, 8},
      {"block 128 x 128 x 16, K not split (rung 9, tile 128)", "block 128 x 128 x 16, K in 2 slices",
       "block 128 x 128 x 16, K in 3 slices", "block 128 x 128 x 16, K in 4 slices",
       "block 128 x 128 x 16, K in 6 slices", "block 128 x 128 x 16, K in 8 slices"},
      4, "256");
  k.min_sm = 80;
  for (int slices : k.tiles) {  // SplitCfg = Cfg<128, 128, 16, 32, 64, 3, 2>, rung 9's tile 128, per slice
    TileGeometry g = block_tile(128, 128, 16, 3);
    g.k_slices = slices;
    thread_pieces(g, 4, 4, 2, 2, 16, 32);
    k.geometry.push_back(warp_tile(g, 32, 64));
  }
  return {k, TS_LAUNCHER(launch_splitk)};
}

KernelEntry entry_pipelined() {
  KernelInfo k =
      kernel_info("pipelined", "9. Software pipeline",
                  "Three cp.async stages, A transposed in shared memory, fragments double-buffered in "
                  "registers and one barrier per tile, so loads and barriers hide behind FFMAs; tile "
                  "256 adds 8 x 16 outputs per thread. Costs up to 229 registers per thread and index "
                  "arithmetic that is harder to follow. When N is not a multiple of 4, B is first copied "
                  "to rows padded to 32 floats, so its tiles still load in 16-byte copies. Tile 64 is "
                  "for grids too small for the GPU: 64 x 128 blocks of 4 warps make 128 blocks at 1024^3 "
                  "(tile 128 makes 64), each over all of K, so no partial sums to add up.",
                  {64, 128, 256},
                  {"block 64 x 128 x 8, thread 8 x 8, 4 stages, 128 threads",
                   "block 128 x 128 x 16, thread 8 x 8, 3 stages, 2 blocks/SM, 256 threads",
                   "block 128 x 256 x 8, thread 8 x 16, 3 stages, 256 threads"},
                  256, "256 (tile 64: 128)");
  k.min_sm = 80;
  // Cfg<64, 128, 8, 32, 64, 4, 1, true>, Cfg<128, 128, 16, 32, 64, 3, 2> and Cfg<128, 256, 8, 32, 128, 3, 1,
  // true> (launch_pipelined): a warp's lanes are 4 rows x 8 columns of 4 x 4 pieces, a thread's pieces 16
  // rows and 32 columns apart.
  TileGeometry g64 = block_tile(64, 128, 8, 4), g128 = block_tile(128, 128, 16, 3),
               g256 = block_tile(128, 256, 8, 3);
  thread_pieces(g64, 4, 4, 2, 2, 16, 32);
  thread_pieces(g128, 4, 4, 2, 2, 16, 32);
  thread_pieces(g256, 4, 4, 2, 4, 16, 32);
  k.geometry = {warp_tile(g64, 32, 64), warp_tile(g128, 32, 64), warp_tile(g256, 32, 128)};
  return {k, TS_LAUNCHER(launch_pipelined)};
}

}  // namespace ts

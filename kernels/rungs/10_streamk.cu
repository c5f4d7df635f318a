// Rung 10b: stream-K over rung 9's tile 256 (its block, its main loop, its copies: pipeline.cuh). Where the
// last wave of tiles is partial, one more wave of blocks shares the remaining tiles' k tiles equally, so
// every SM works until the end; a tile made by several blocks is added up, in K order, by the last of them to
// finish. See the StreamK section below; the measurements are at launch_streamk.
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/engine/cuda_raii.cuh"

#include "kernels/rungs/gemm_common.cuh"
#include "kernels/rungs/pipeline.cuh"
#include "kernels/rungs/side_stream.cuh"
#include "kernels/rungs/streamk_plan.hpp"
#include "kernels/rungs/trace.cuh"

namespace ts {

namespace {

// The STRAIGHT pipeline (Cfg::STRAIGHT) over k tiles [t_first, t_first + tiles) of the block tile at (row0,
// col0): acc += its share of A B, once per segment of a tile's K. It is pipelined_kernel's STRAIGHT loop
// (09_pipelined_splitk.cu), repeated here rather than shared, and stream-K lives in a file of its own: ptxas
// assigns registers from the shape of the code, and both pipelined_kernel calling this function and this
// kernel merely compiled in 09's file changed tile 256's SASS (cuobjdump, CUDA 13.0, other registers from the
// prologue on), where its 103 % of cuBLAS comes from that assignment. B's rows are ld_b floats apart. No
// branch inside its loops: whether copies need bounds checks (kCheck: an edge block, or a last k tile that is
// partial) is decided once per call, and the last S - 1 tiles, which have nothing left to issue, run in a
// loop of their own (kMore false), so each loop body is straight-line code. On return, copies may still be in
// flight (empty groups only: every tile's copies have been waited for) and other threads may still read the
// last stage.
template <class G, bool kPadB>
__device__ __forceinline__ void straight_tiles(float (&acc)[G::TM][G::TN], const float* __restrict__ A,
                                               const float* __restrict__ B, int64_t m, int64_t n, int64_t k,
                                               int64_t ld_b, int64_t row0, int64_t col0, int64_t t_first,
                                               int64_t tiles, float* smem, int tid, int a_off, int b_off) {
  constexpr int BN = G::BN, BK = G::BK, S = G::STAGES, TM = G::TM, TN = G::TN;
  const bool interior = row0 + G::BM <= m && col0 + BN <= n;
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
  const int64_t b_pass = int64_t(G::RPB) * ld_b;
  const float* pb = B + (int64_t(tid / (BN / 4)) + t_first * BK) * ld_b + (bcol < n ? bcol : 0);

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
        // element by element) is what lets ptxas keep the FFMAs' operands in registers that do not stall
        // the dispatch: see the measurements at launch_pipelined.
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
  if (interior && (t_first + tiles) * BK <= k)
    run(std::false_type{});
  else
    run(std::true_type{});
}

// [SECTION] Stream-K (rung 10b). The partial last wave is what a fixed tiling cannot fill: at 3000^3 tile
// 256 makes 288 tiles for 132 SMs, 2.18 waves, and the third wave runs 24 tiles on 132 SMs. Stream-K (Osama,
// Merrill, Cecka, Garland, Ravishankar, 2023) cuts the work into k tiles ("iterations") instead of output
// tiles: the P units of one wave share the partial wave's iterations equally, so every SM works until the
// end. Here, as CUTLASS's "data-parallel + one-tile stream-K" does: the tiles of whole waves are made whole,
// one block each, and the rest, R tiles, are shared by P more blocks, unit v taking iterations [v R I / P,
// (v + 1) R I / P) of them in order (I = ceil(K / BK) per tile). The whole tiles are rung 9's, made by rung
// 9's own kernel (launch_streamk says how the two launches share the SMs), so they are exactly as fast. A
// unit's range crosses at most a few tiles; each piece of a tile it makes is a segment. A tile made of
// several segments is fixed up without any block waiting for another: every segment writes its partial tile
// to the workspace, counts itself in, and the last to arrive adds the partials in K order (the first
// segment's, then the next ...), its own from its registers, so C does not depend on which finished first and
// is the same bits run to run. Except where every unit is one segment of one tile (StreamK::wait): there the
// units of a tile wait for each other and each adds its share of the tile, in the same order.
struct StreamK {
  int64_t tiles_n = 0;   // tiles along N (raster order: tile t is row t / tiles_n, column t % tiles_n)
  int64_t dp = 0;        // whole tiles: 0 .. dp - 1, whole rows of tiles (rung 9's kernel makes them)
  int64_t sk_tiles = 0;  // tiles dp .. dp + sk_tiles - 1, shared by `units` blocks (0: none)
  int64_t iters = 0;     // k tiles per tile
  int64_t units = 0;
  // Every shared tile has the same units, each making one segment of one tile (the plan with no whole tiles
  // and at least 4 units per tile): the launch is cooperative, and a tile's units wait for each other and
  // add 1 / units-per-tile of it each (the last to arrive adding all of it took 4 reads of 128 KiB).
  bool wait = false;
  // First iteration (of sk_tiles * iters) of unit v; begin(units) is the end.
  __host__ __device__ int64_t begin(int64_t v) const { return v * (sk_tiles * iters) / units; }
  // The unit whose range holds iteration g: the last v with begin(v) <= g (units left empty when there are
  // fewer iterations than units share none).
  __host__ __device__ int64_t unit_of(int64_t g) const {
    const int64_t total = sk_tiles * iters;
    return ((g + 1) * units + total - 1) / total - 1;
  }
  // Where unit v keeps its partial of shared tile s: slot 0 for the tile its range starts in, 1 for the tile
  // it ends in (a range holds at most these two pieces of tiles that others share).
  __host__ __device__ int slot(int64_t v, int64_t s) const { return begin(v) >= s * iters ? 0 : 1; }
};

// The trace record of a segment: segment z (in K order) of tile (ty, tx), records grid_z per tile (the most
// segments any tile has), its first K step in k_first.
template <bool kTrace>
__device__ __forceinline__ size_t segment_begin(TileRecord* trace, int64_t tx, int64_t ty, int64_t tiles_n,
                                                int64_t tiles_m, int64_t z, int64_t k_first) {
  const size_t index = (size_t(z) * size_t(tiles_m) + size_t(ty)) * size_t(tiles_n) + size_t(tx);
  if (kTrace && threadIdx.x == 0) trace[index].k_first = uint32_t(k_first);
  trace_begin<kTrace>(trace, index);
  return index;
}

// StreamK::wait: once every unit of shared tile s has written its partial, unit z of the tile's `units` adds
// and stores its share of the tile, float4s [z V / units, (z + 1) V / units) of every thread, from the
// partials in K order (each in its unit's slot 0: its range starts in this tile) (as the last to arrive would
// add them: the same bits). kJ float4s of kW partials are loaded before any is added, and all before C is
// stored (a store to C may alias the partials, so the compiler cannot move a load above one).
template <class G, bool kPadB>
__device__ __forceinline__ void add_share(float* __restrict__ C, const float4* __restrict__ work,
                                          int64_t v_first, int units, int z, int64_t row0, int64_t col0,
                                          int a_off, int b_off, int64_t m, int64_t n, int tid) {
  constexpr int TN = G::TN, V = G::TM * G::TN / 4, kJ = 4, kW = 4;
  const int j_begin = z * V / units, j_end = (z + 1) * V / units;
  for (int j0 = j_begin; j0 < j_end; j0 += kJ) {
    float4 sum[kJ];
    for (int w0 = 0; w0 < units; w0 += kW) {
      float4 p[kW][kJ];
#pragma unroll
      for (int w = 0; w < kW; ++w)
#pragma unroll
        for (int g = 0; g < kJ; ++g)
          if (w0 + w < units && j0 + g < j_end) {
            const int64_t unit = v_first + w0 + w;
            p[w][g] = __ldcg(work + 2 * unit * int64_t(V * G::NT) + (j0 + g) * G::NT + tid);  // slot 0
          }
#pragma unroll
      for (int w = 0; w < kW; ++w)
#pragma unroll
        for (int g = 0; g < kJ; ++g)
          if (w0 + w < units && j0 + g < j_end) {
            if (w0 + w == 0)
              sum[g] = p[w][g];
            else
              sum[g].x += p[w][g].x, sum[g].y += p[w][g].y, sum[g].z += p[w][g].z, sum[g].w += p[w][g].w;
          }
    }
#pragma unroll
    for (int g = 0; g < kJ; ++g) {
      const int j = j0 + g;
      if (j >= j_end) break;
      const int i = j / (TN / 4), q = j % (TN / 4);  // float4 j of the thread is acc[i][4 q .. 4 q + 3]
      store4_checked(C, row0 + a_off + 16 * (i / 4) + i % 4, col0 + b_off + 32 * q, m, n, n, !kPadB, sum[g]);
    }
  }
}

template <class G, bool kPadB, bool kTrace, bool kWait>
__global__ void __launch_bounds__(G::NT, G::MINB)
    streamk_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int64_t m,
                   int64_t n, int64_t k, TileRecord* trace, float* __restrict__ work, int64_t ldb,
                   StreamK sk) {
  static_assert(G::STRAIGHT, "stream-K runs the straight pipeline");
  constexpr int BM = G::BM, BN = G::BN, WN = G::WN, TM = G::TM, TN = G::TN;
  constexpr int V = TM * TN / 4;  // float4s per thread
  extern __shared__ __align__(16) float smem[];
  __shared__ bool last;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wr = warp / (BN / WN), wc = warp % (BN / WN);
  const int a_off = wr * G::WM + (lane / 8) * 4;  // rows a_off + 16 p + {0..3}
  const int b_off = wc * WN + (lane % 8) * 4;     // columns b_off + 32 q + {0..3}
  const int64_t ld_b = kPadB ? ldb : n;
  const int64_t tiles_m = (m + BM - 1) / BM;
  // C stored element by element, as rung 9's tile 256 does (see the STRAIGHT store there).
  auto store = [&](const float(&acc)[TM][TN], int64_t row0, int64_t col0) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int64_t row = row0 + a_off + 16 * (i / 4) + i % 4;
#pragma unroll
      for (int q = 0; q < TN / 4; ++q)
        store4_checked(C, row, col0 + b_off + 32 * q, m, n, n, false,
                       make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
    }
  };
  const int64_t v = blockIdx.x;  // the unit
  const int64_t g_end = sk.begin(v + 1);
  unsigned long long* counts = reinterpret_cast<unsigned long long*>(reinterpret_cast<float4*>(work) +
                                                                     2 * sk.units * int64_t(V * G::NT));
  if constexpr (kWait) {
    // StreamK::wait: this unit is segment z of shared tile s, which has `per` units (its own kernel: in the
    // loop below, the waiting and sharing spilled the loop's registers).
    const int per = int(sk.units / sk.sk_tiles), z = int(v % per);
    const int64_t s = v / per, kb = sk.begin(v) - s * sk.iters, ke = g_end - s * sk.iters;
    const int64_t tile = sk.dp + s, ty = tile / sk.tiles_n, tx = tile % sk.tiles_n;
    const int64_t row0 = ty * BM, col0 = tx * BN;
    const size_t rec = segment_begin<kTrace>(trace, tx, ty, sk.tiles_n, tiles_m, z, kb);
    float acc[TM][TN] = {};
    straight_tiles<G, kPadB>(acc, A, B, m, n, k, ld_b, row0, col0, kb, ke - kb, smem, tid, a_off, b_off);
    cp_async_wait<0>();
    float4* mine = reinterpret_cast<float4*>(work) + 2 * v * int64_t(V * G::NT) + tid;  // slot 0
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int q = 0; q < TN / 4; ++q)
        __stcg(mine + (i * (TN / 4) + q) * G::NT,
               make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
    __threadfence();  // the partial is visible to every block before the count says it is there
    wait_for_tile(counts + s, unsigned(per));
    add_share<G, kPadB>(C, reinterpret_cast<const float4*>(work), v - z, per, z, row0, col0, a_off, b_off, m,
                        n, tid);
    trace_end<kTrace>(trace, rec);
  } else {
    for (int64_t g = sk.begin(v); g < g_end;) {
      const int64_t s = g / sk.iters, kb = g - s * sk.iters;   // shared tile s, from its iteration kb ...
      const int64_t ke = min(sk.iters, g_end - s * sk.iters);  // ... to ke
      const int64_t tile = sk.dp + s, ty = tile / sk.tiles_n, tx = tile % sk.tiles_n;
      const int64_t row0 = ty * BM, col0 = tx * BN;
      const int64_t v_first = sk.unit_of(s * sk.iters), v_last = sk.unit_of(s * sk.iters + sk.iters - 1);
      const size_t rec = segment_begin<kTrace>(trace, tx, ty, sk.tiles_n, tiles_m, v - v_first, kb);
      float acc[TM][TN] = {};
      straight_tiles<G, kPadB>(acc, A, B, m, n, k, ld_b, row0, col0, kb, ke - kb, smem, tid, a_off, b_off);
      cp_async_wait<0>();
      __syncthreads();  // every thread is past its last read of shared memory before the next segment's
                        // copies
      if (v_first == v_last) {
        store(acc, row0, col0);  // the whole tile in this unit
      } else {
        // The partial, in the threads' own register order (float4 j of thread tid at j * NT + tid: each warp
        // writes 512 contiguous bytes, no bounds checks), then a count of the segments done.
        const auto part = [&](int64_t w) {
          return reinterpret_cast<float4*>(work) + (2 * w + sk.slot(w, s)) * int64_t(V * G::NT);
        };
        float4* mine = part(v);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int q = 0; q < TN / 4; ++q)
            __stcg(mine + (i * (TN / 4) + q) * G::NT + tid,
                   make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
        __threadfence();  // the partial is visible to every block before the count says it is there
        __syncthreads();
        if (tid == 0) {
          last = atomicAdd(counts + s, 1ull) == unsigned(v_last - v_first);
          if (last) counts[s] = 0;  // ready for the next launch
        }
        __syncthreads();
        if (last) {
          __threadfence();
          // The segments' partials in K order, whichever finished first, this block's own included (it wrote
          // it above): a partial at a time, its 32 float4s loaded at once into the accumulators. Taking the
          // own one from registers instead put a dependent chain of loads in each output's sum, one L2
          // round trip after another: the last 24 blocks at 3000^3 ran alone for 100 us adding up.
          for (int64_t w = v_first; w <= v_last; ++w) {
            const float4* src = part(w);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
              for (int q = 0; q < TN / 4; ++q) {
                const float4 p = __ldcg(src + (i * (TN / 4) + q) * G::NT + tid);
                float* a = &acc[i][4 * q];
                if (w == v_first) {
                  a[0] = p.x, a[1] = p.y, a[2] = p.z, a[3] = p.w;
                } else {
                  a[0] += p.x, a[1] += p.y, a[2] += p.z, a[3] += p.w;
                }
              }
          }
          store(acc, row0, col0);
        }
      }
      trace_end<kTrace>(trace, rec);
      g += ke - kb;
    }
  }
}

}  // namespace

// Stream-K over tile 256's block (StreamK above). P, the units of one wave, is the SMs' count (one block of
// 255 registers x 256 threads per SM; rung 9's tile 256, 226 registers, also one): the device's, or
// LaunchQuery::sm_count for a query (an offline query without it plans for an H100's 132).
using StreamKCfg = Cfg<128, 256, 8, 32, 128, 3, 1, true>;

static StreamK plan_streamk(int64_t m, int64_t n, int64_t k, int64_t units_per_wave) {
  using G = StreamKCfg;
  StreamK sk;
  sk.tiles_n = blocks_for(n, G::BN);
  const int64_t tiles = sk.tiles_n * int64_t(blocks_for(m, G::BM));
  sk.iters = (k + G::BK - 1) / G::BK;
  const int64_t rest = tiles % units_per_wave;
  if (rest == 0 || double(rest) >= kStreamKShareBelowFill * double(units_per_wave)) {
    sk.dp = tiles;  // whole waves, or a last wave nearly full
    return sk;
  }
  // The whole waves' tiles, rounded down to whole rows of tiles (rung 9's grid is rows x columns): the tiles
  // of a partly whole row are shared too.
  sk.dp = (tiles - rest) / sk.tiles_n * sk.tiles_n;
  sk.sk_tiles = tiles - sk.dp;
  // Where every tile is shared (one partial wave: 1000^3 makes 32 tiles for 132 SMs) and each tile has 4
  // units or more, each tile gets the same number of them, so no unit makes pieces of two tiles (two
  // pipelines filled, two partials written, while the others wait to add up): 128 units at 1000^3. Where
  // there are whole tiles, the shared wave starts on each SM as it finishes them, and every SM takes a unit.
  const bool even = sk.dp == 0 && units_per_wave / sk.sk_tiles >= 4;
  const int64_t units = even ? units_per_wave / sk.sk_tiles * sk.sk_tiles : units_per_wave;
  // Never more units than iterations: every unit between a tile's first and last makes a segment of it
  // (the last segment to arrive counts them), so none may be empty.
  sk.units = std::min(units, sk.sk_tiles * sk.iters);
  // The same units per tile, each one segment of one tile, all in one wave: the units of a tile wait for
  // each other and share its adding up.
  sk.wait = even && sk.units == units;
  return sk;
}

// The most segments any shared tile is cut into (the trace's records per tile).
static int streamk_segments(const StreamK& sk) {
  int64_t most = 1;
  for (int64_t s = 0; s < sk.sk_tiles; ++s)
    most = std::max(most, sk.unit_of(s * sk.iters + sk.iters - 1) - sk.unit_of(s * sk.iters) + 1);
  return int(most);
}

// Two partial tiles per unit, then a count per shared tile.
static size_t streamk_bytes(const StreamK& sk) {
  using G = StreamKCfg;
  if (sk.units == 0) return 0;
  return size_t(2 * sk.units) * G::BM * G::BN * sizeof(float) +
         size_t(sk.sk_tiles) * sizeof(unsigned long long);
}

// The whole tiles' launch runs beside the shared tiles' (side_stream.cuh).
template <bool kPadB>
static void go_streamk(const GemmArgs& a, cudaStream_t s, LaunchQuery* q, const StreamK& sk, float* work,
                       int64_t ldb) {
  using G = StreamKCfg;
  auto plain = sk.wait ? streamk_kernel<G, kPadB, false, true> : streamk_kernel<G, kPadB, false, false>;
  auto traced = sk.wait ? streamk_kernel<G, kPadB, true, true> : streamk_kernel<G, kPadB, true, false>;
  if (needs_device(q)) {
    static const bool configured = [&] {
      for (const void* f : {reinterpret_cast<const void*>(streamk_kernel<G, kPadB, false, false>),
                            reinterpret_cast<const void*>(streamk_kernel<G, kPadB, true, false>),
                            reinterpret_cast<const void*>(streamk_kernel<G, kPadB, false, true>),
                            reinterpret_cast<const void*>(streamk_kernel<G, kPadB, true, true>)})
        CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(G::SMEM)));
      return true;
    }();
    (void)configured;
  }
  if (q) {
    q->func = reinterpret_cast<const void*>(a.trace ? traced : plain);
    q->grid_x = unsigned(sk.tiles_n);  // the trace's grid: tiles, and segments per tile
    q->grid_y = blocks_for(a.m, G::BM);
    q->grid_z = unsigned(streamk_segments(sk));
    q->launch_blocks = sk.dp + sk.units;
    q->k_segments = true;
    q->shares_tiles = sk.units > 0;
    q->k_step = G::BK;
    q->threads = G::NT;
    q->dynamic_smem = G::SMEM;
    q->tile_m = G::BM;
    q->tile_n = G::BN;
    return;
  }
  if (sk.dp + sk.units == 0) return;  // an empty C
  if (sk.units > INT32_MAX) throw std::invalid_argument("streamk: more than 2^31 - 1 blocks");
  // Rung 9's kernel over the rows of whole tiles: its trace records (tile row y, column x) are where this
  // kernel's first segment of that tile would put them.
  GemmArgs whole = a;
  whole.m = std::min(a.m, sk.dp / sk.tiles_n * int64_t(G::BM));
  if (sk.units == 0) {
    launch_pipelined256_rows(whole, ldb, s);
    return;
  }
  auto shared = [&] {
    // StreamK::wait: cooperative, so that every unit of a tile is resident while the others wait for it (the
    // plan launches no more units than SMs, one block per SM).
    if (sk.wait)
      return launch_cooperative(a.trace ? traced : plain, dim3(unsigned(sk.units)), dim3(G::NT), G::SMEM, s,
                                a.A, a.B, a.C, a.m, a.n, a.k, a.trace, work, ldb, sk);
    (a.trace ? traced : plain)<<<unsigned(sk.units), G::NT, G::SMEM, s>>>(a.A, a.B, a.C, a.m, a.n, a.k,
                                                                          a.trace, work, ldb, sk);
    CUDA_CHECK_LAUNCH();
  };
  if (sk.dp == 0) return shared();
  launch_beside(
      s, [&](cudaStream_t side) { launch_pipelined256_rows(whole, ldb, side); },
      [&](cudaStream_t) { shared(); });
}

// Measured on an H100 (one bench run, cuBLAS SGEMM interleaved, % of cuBLAS; last wave's fill on 132 SMs):
// whole tiles made by this kernel's own copy of the loop, one launch: 3000^3 99.9, 4099^3 103.0, 2048^3
// 79.5, 4096^3 91.5, 8192^3 95.4 (rung 9: 84.8, 93.8, 102.7, 102.9, 103.8): its whole tiles were 5-8 %
// slower than rung 9's. With rung 9's kernel making them on the side stream and every partial wave shared
// (warm; cold in brackets): 1536^3 (55 %, no whole wave) 102.5 against rung 9's 80.1; 2560^3 (52 %) 100.5
// (101.8) / 87.5; 3000^3 (18 %) 106.5 (108.0) / 84.2; 4099^3 (25 %) 106.4 (106.2) / 93.7; 5120^3 (6 %)
// 113.3 / 101.2; 5632^3 (33 %) 108.1 (108.4) / 100.9; 8192^3 (52 %) 104.3 (104.2) / 103.7; 8192 x 8192 x
// 512 (52 %) 99.4 / 100.6; 6144^3 (73 %) 104.9 / 104.4; 4096^3 (88 %) 96.1 / 102.7; 7168^3 (88 %) 101.3 /
// 104.7; 2048 x 4096 x 8192 (94 %) 92.2 / 103.7. Hence kStreamKShareBelowFill. 1000^3 and 1024^3 (32 tiles,
// all shared): 65.9 and 79.7 on 132 units; 69.2 (cold 78.5) and 83.3 (80.6) with 4 units per tile (128),
// where split-K 2 was 77.2 (87.9) and 89.8 (88.8): a unit's 32 k tiles took 61 us against 41 inside a whole
// tile. With StreamK::wait (the 4 units of a tile add a quarter each, where the last to arrive read 4 x 128
// KiB), two runs: 1000^3 82.6-84.0 (cold 88.9-89.2), 1024^3 88.8-90.5 (92.6-93.8); every unit ends at 59-61
// us.
void launch_streamk(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  if (tile != 256) bad_tile("streamk", tile);
  const int64_t units = sm_count_for(q);
  const StreamK sk = plan_streamk(a.m, a.n, a.k, units);
  const size_t split = streamk_bytes(sk);
  const size_t need = workspace_for(split, a.n, a.k);
  auto s = static_cast<cudaStream_t>(stream);
  float* work = static_cast<float*>(a.workspace);
  if (!q && need > 0 && (!work || a.workspace_bytes < need))
    throw std::invalid_argument("streamk at " + std::to_string(a.m) + " x " + std::to_string(a.n) + " x " +
                                std::to_string(a.k) + " on " + std::to_string(units) +
                                " SMs needs a workspace of " + std::to_string(need) + " bytes");
  if (a.n % 4 == 0) {
    go_streamk<false>(a, s, q, sk, work, a.n);
  } else {
    // B padded once, for both launches.
    const int64_t ldb = padded_ld(a.n);
    GemmArgs padded = a;
    if (!q) {
      float* bp = reinterpret_cast<float*>(reinterpret_cast<char*>(work) + padded_b_offset(split));
      copy_to_padded_rows(bp, ldb, a.B, a.k, a.n, s);
      padded.B = bp;
    }
    go_streamk<true>(padded, s, q, sk, work, ldb);
  }
  if (q) q->workspace_bytes = need;
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_streamk() {
  KernelInfo k = kernel_info(
      "streamk", "10b. Stream-K",
      "Rung 9's tile 256 (128 x 256 x 8) where the last wave is partial: the whole waves' tiles are made "
      "one block each by rung 9's own kernel, and one more wave of blocks shares the remaining tiles' k "
      "tiles equally, starting on each SM as it finishes its whole tiles, so no SM idles at the end "
      "(3000^3: 288 tiles are 2.18 waves of 132 SMs). A tile shared by several blocks is added up by the "
      "last to finish, in K order (where each block makes one piece of one tile, as at 1024^3, by all of "
      "its blocks, a share each, in the same order), so C is the same bits every run. Costs partial tiles "
      "written and read; "
      "where the last wave is 80 % full or more, it is rung 9.",
      {256}, {"block 128 x 256 x 8, thread 8 x 16, 3 stages; the last wave shared by k tiles"}, 256, "256");
  k.min_sm = 80;
  TileGeometry g = block_tile(128, 256, 8, 3);  // StreamKCfg, rung 9's tile 256
  thread_pieces(g, 4, 4, 2, 4, 16, 32);
  k.geometry = {warp_tile(g, 32, 128)};
  return {k, TS_LAUNCHER(launch_streamk)};
}

}  // namespace ts

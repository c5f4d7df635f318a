#pragma once
// [SECTION] The pieces of rung 9's software pipeline that rung 10b (stream-K, 10_streamk.cu) shares with it:
// the block configuration and the copy of one k tile into a shared-memory stage. In an anonymous namespace,
// as they were in 09_pipelined_splitk.cu: each kernel file has its own copy, so adding a kernel that uses
// them in another file leaves 09's kernels (and ptxas's register assignment for them, which their speed
// depends on) exactly as they were. cuobjdump shows 09's SASS unchanged by the move.
#include <cstddef>
#include <cstdint>

#include "kernels/rungs/gemm_common.cuh"

namespace ts {

namespace {

// Block tile BM x BN x BK, warp tile WM x WN, STAGES shared-memory stages, MINB blocks per SM asked of the
// compiler (__launch_bounds__: 2 caps registers at 128). STRAIGHT: the main loop as straight-line code (the
// bounds checks decided once per block, the last S - 1 tiles in a loop of their own), each k step's FFMAs
// column by column (down one column, up the next) and C stored element by element; otherwise the checks are
// decided per k tile, the FFMAs go row by row and C is stored 16 bytes at a time. Which one a block shape
// gets was measured (see launch_pipelined): ptxas assigns the accumulators' registers from this shape of
// code, and the assignment decides how often the FFMAs' dispatch stalls.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MINB_, bool STRAIGHT_ = false>
struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_, MINB = MINB_;
  static constexpr bool STRAIGHT = STRAIGHT_;
  static constexpr int NT = (BM / WM) * (BN / WN) * 32;
  static constexpr int TM = WM / 4, TN = WN / 8;  // a warp's lanes: 4 rows x 8 columns of 4 x 4 pieces
  static constexpr int ALD = BM + 4;              // As[k][m] row stride: transposing stores hit 32 banks
  static constexpr int A_FLOATS = BK * ALD, B_FLOATS = BK * BN, STAGE_FLOATS = A_FLOATS + B_FLOATS;
  static constexpr size_t SMEM = size_t(STAGES) * STAGE_FLOATS * sizeof(float);
  // A loads: 4-byte copies, a warp covers 4 rows x 8 consecutive k (coalesced, and the transposed stores
  // land in 32 different banks because ALD % 32 == 4).
  static constexpr int RPA = NT / 8;                // rows per pass
  static constexpr int PA = BM / RPA, GA = BK / 8;  // passes over rows, groups of 8 k
  // B loads: 16-byte copies, BN / 4 threads per row.
  static constexpr int RPB = NT / (BN / 4), PB = BK / RPB;
  static_assert(WM % 16 == 0 && WN % 32 == 0, "4 x 4 pieces, 4 x 8 lanes");
  static_assert(BK % 8 == 0 && BM % RPA == 0 && BK % RPB == 0 && PB >= 1, "whole load passes");
  static_assert(ALD % 32 == 4, "conflict-free transposing stores");
};

// Copies one k tile of A (transposed to As[k][m]) and of B into one stage, through the per-thread source
// pointers. kCheck: some element may lie past an edge (an edge block, or the last, partial k tile): each
// copy is then predicated on the thread's row / column bits and on k, and zero-fills when out of bounds
// (a zero-byte copy reads nothing; it is pointed at the matrix base). B's rows are 16-byte aligned, so a
// thread's 4 columns of B are one copy: 16 bytes, or with kPadB (N % 4 != 0, B a padded copy) 4 per column
// that exists at the right edge (b_cols: the columns that exist are the first ones).
template <class G, bool kPadB, bool kCheck>
__device__ __forceinline__ void load_tile(float* st, const float* __restrict__ A, const float* __restrict__ B,
                                          int64_t k, int64_t k0, int tid, const float* const (&pa)[G::PA],
                                          const float* pb, int64_t b_pass, unsigned a_rows, unsigned b_cols) {
  float* as = st;
  float* bs = st + G::A_FLOATS;
  const int ak = tid % 8, ar = tid / 8;
#pragma unroll
  for (int i = 0; i < G::PA; ++i)
#pragma unroll
    for (int g = 0; g < G::GA; ++g) {
      float* dst = as + (ak + 8 * g) * G::ALD + ar + G::RPA * i;
      if (kCheck) {
        const bool ok = (a_rows >> i & 1u) && k0 + ak + 8 * g < k;
        cp_async4(dst, ok ? pa[i] + 8 * g : A, ok ? 4 : 0);
      } else {
        cp_async4(dst, pa[i] + 8 * g, 4);
      }
    }
  const int bc = (tid % (G::BN / 4)) * 4, br = tid / (G::BN / 4);
#pragma unroll
  for (int j = 0; j < G::PB; ++j) {
    float* dst = bs + (br + G::RPB * j) * G::BN + bc;
    const float* src = pb + j * b_pass;
    if (kCheck) {
      const bool ok = (b_cols & 1u) && k0 + br + G::RPB * j < k;
      cp_async16(dst, ok ? src : B, ok ? (kPadB ? 4 * __popc(b_cols) : 16) : 0);
    } else {
      cp_async16(dst, src, 16);
    }
  }
}

}  // namespace

// The whole workspace, given the partials' part.
inline size_t workspace_for(size_t split, int64_t n, int64_t k) {
  if (n % 4 == 0) return split;
  return padded_b_offset(split) + size_t(k) * size_t(padded_ld(n)) * sizeof(float);
}

// Rung 9's tile 256 over C's rows [0, a.m) with B in rows of ldb floats (09_pipelined_splitk.cu): stream-K
// runs its whole tiles through it.
void launch_pipelined256_rows(const GemmArgs& a, int64_t ldb, void* stream);

}  // namespace ts

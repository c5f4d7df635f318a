#pragma once
// Tile tracing, compiled into a kernel only when its kTrace template flag is set (the plain build has no
// trace code at all). One thread per block stamps %smid and %globaltimer at block start; at the end every
// warp's lane 0 folds its own end time into the record with a fire-and-forget atomic max (a RED: the warp does
// not wait for the answer), so the record ends up with the last warp's time. No block-wide barrier (GPU.md
// measured a 4 % slowdown at TILE 32 from one), and no warp waits on a round trip to L2 before it may exit.
#include <cstdint>

#include "schedule.hpp"

namespace ts {

__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ uint32_t sm_id() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// The block's record index, read from the special registers through volatile asm: the compiler cannot keep the
// address from the start stamp alive across the kernel's main loop for the end stamp (under a tight register cap
// two extra live registers cost the classic TILE 32 kernel about 6 %); it recomputes it, which is cheap.
__device__ __forceinline__ size_t trace_index() {
  uint32_t x, y, nx;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(x));
  asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(y));
  asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(nx));
  return size_t(y) * nx + x;
}

template <bool kTrace>
__device__ __forceinline__ void trace_begin(TileRecord* trace) {
  if (kTrace && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    TileRecord& r = trace[trace_index()];
    r.smid = sm_id();
    r.start_ns = global_timer_ns();
  }
}

// Every thread of the block must reach this (no early returns before it).
template <bool kTrace>
__device__ __forceinline__ void trace_end(TileRecord* trace) {
  if (!kTrace) return;
  __syncwarp();
  const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  if (tid % 32 == 0) {
    TileRecord& r = trace[trace_index()];
    atomicMax(reinterpret_cast<unsigned long long*>(&r.end_ns), (unsigned long long)global_timer_ns());
  }
}

}  // namespace ts

#pragma once
// Tile tracing, compiled into a kernel only when its kTrace template flag is set (the plain build has no
// trace code at all). One thread per block stamps %smid and %globaltimer at block start; at the end every
// warp checks in with one atomic and the last warp out stamps the end: no extra block-wide barrier (GPU.md
// measured a 4 % slowdown at TILE 32 from one).
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

template <bool kTrace>
__device__ __forceinline__ void trace_begin(TileRecord* trace) {
  if (kTrace && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    TileRecord& r = trace[size_t(blockIdx.y) * gridDim.x + blockIdx.x];
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
    const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    TileRecord& r = trace[size_t(blockIdx.y) * gridDim.x + blockIdx.x];
    if (atomicAdd(&r.warps_done, 1u) == warps - 1) r.end_ns = global_timer_ns();
  }
}

}  // namespace ts

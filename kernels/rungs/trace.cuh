#pragma once
// Tile tracing, compiled into a kernel only when its kTrace template flag is set (the plain build has no
// trace code at all). One thread per block stamps %smid and %globaltimer at block start; at the end every
// warp's lane 0 folds its own end time into the record with a fire-and-forget atomic max (a RED: the warp
// does not wait for the answer), so the record ends up with the last warp's time. No block-wide barrier
// (GPU.md measured a 4 % slowdown at TILE 32 from one), and no warp waits on a round trip to L2 before it may
// exit. Measured on an H100 at 4096^3 (traced / plain): tiled TILE 8 / 16 / 32 1.00 / 1.01 / 0.99,
// blocktile1d 1.01, async, pipelined, wgmma_tf32 1.00. What cost 6 % at TILE 32 before was not the stamps but
// the traced build's
// __launch_bounds__ (now __maxnreg__), which changed the compiler's main loop.
#include <cstdint>

#include "core/engine/schedule.hpp"

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

// The record of the block's tile: (z * grid_y + y) * grid_x + x, schedule.hpp's index. A kernel that takes
// its tiles in another order (tile_order.hpp) passes its tile's x and y, so the record still names the tile.
__device__ __forceinline__ size_t trace_index(int64_t tile_x, int64_t tile_y) {
  return (size_t(blockIdx.z) * gridDim.y + size_t(tile_y)) * gridDim.x + size_t(tile_x);
}
__device__ __forceinline__ size_t trace_index() {
  return trace_index(blockIdx.x, blockIdx.y);
}

template <bool kTrace>
__device__ __forceinline__ void trace_begin(TileRecord* trace, size_t index = trace_index()) {
  if (kTrace && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    TileRecord& r = trace[index];
    r.smid = sm_id();
    r.start_ns = global_timer_ns();
  }
}

// Every thread of the block must reach this (no early returns before it).
template <bool kTrace>
__device__ __forceinline__ void trace_end(TileRecord* trace, size_t index = trace_index()) {
  if (!kTrace) return;
  __syncwarp();
  const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  if (tid % 32 == 0) {
    TileRecord& r = trace[index];
    atomicMax(reinterpret_cast<unsigned long long*>(&r.end_ns), (unsigned long long)global_timer_ns());
  }
}

}  // namespace ts

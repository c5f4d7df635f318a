#pragma once
// [SECTION] Theoretical occupancy: how many blocks of a kernel fit on one SM, which resource stops more from
// fitting, and how the grid falls into waves. The same arithmetic as the CUDA occupancy calculator; the CUDA
// backend fills the inputs from cudaFuncGetAttributes / cudaDeviceGetAttribute and cross-checks the result
// with cudaOccupancyMaxActiveBlocksPerMultiprocessor.
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

struct DeviceLimits {
  int sm_count = 0;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int regs_per_sm = 65536;
  int reg_alloc_unit = 256;  // registers are given to warps in units of 256
  int max_regs_per_thread = 255;
  int smem_per_sm = 0;  // bytes usable by blocks (cudaDevAttrMaxSharedMemoryPerMultiprocessor)
  int reserved_smem_per_block =
      0;  // bytes the system keeps per block (cudaDevAttrReservedSharedMemoryPerBlock)
  int smem_alloc_unit = 128;
  int warp_size = 32;
};

struct KernelResources {
  int threads_per_block = 0;
  int regs_per_thread = 0;
  int static_smem = 0;   // bytes
  int dynamic_smem = 0;  // bytes
};

struct OccupancyReport {
  KernelResources res;
  int by_threads = 0, by_regs = 0, by_smem = 0, by_blocks = 0;  // blocks per SM each resource allows
  int blocks_per_sm = 0;
  std::string limiter;   // "threads", "registers", "shared memory", "blocks per SM"; ties joined by " = "
  double occupancy = 0;  // active warps / maximum warps per SM
  int64_t grid_blocks = 0;
  double waves = 0;  // grid_blocks / (blocks_per_sm * sm_count)
  int64_t full_waves = 0;
  double tail_fill = 0;        // how full the last wave is (1 = the grid is a whole number of waves)
  int api_blocks_per_sm = -1;  // what the CUDA occupancy API said (-1: not asked)
  // The function launched, its mangled name as the build-time table writes it (cudaFuncGetName); "" where
  // unknown (the calculator, a person's kernel).
  std::string function;
  // The blocks are planned for the SMs, some making whole tiles and others K segments of tiles they share
  // (stream-K and wgmma_tf32's tail, at shapes where they share tiles): blocks of unequal length, so the grid
  // does not run in waves of equal blocks. waves, full_waves and tail_fill stay the plain ratios of blocks to
  // resident slots, and describe no real wave: show waves_text, not them.
  bool k_segments = false;
};

OccupancyReport compute_occupancy(const DeviceLimits& d, const KernelResources& k, int64_t grid_blocks);

// The grid's waves in words: "2.18: 2 full waves, then one 18 % full", or for a launch in K segments
// "none: blocks of unequal length (whole tiles and K segments)".
std::string waves_text(const OccupancyReport& o);

}  // namespace ts

#include "core/engine/occupancy.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

namespace ts {

namespace {
int round_up(int v, int unit) {
  return unit > 0 ? (v + unit - 1) / unit * unit : v;
}
}  // namespace

OccupancyReport compute_occupancy(const DeviceLimits& d, const KernelResources& k, int64_t grid_blocks) {
  OccupancyReport r;
  r.res = k;
  r.grid_blocks = grid_blocks;
  if (k.threads_per_block <= 0) return r;
  const int warps = (k.threads_per_block + d.warp_size - 1) / d.warp_size;
  const int max_warps = d.max_threads_per_sm / d.warp_size;

  r.by_threads = max_warps / warps;
  r.by_blocks = d.max_blocks_per_sm;
  if (k.regs_per_thread > 0) {
    const int regs_per_warp = round_up(k.regs_per_thread * d.warp_size, d.reg_alloc_unit);
    r.by_regs = (d.regs_per_sm / regs_per_warp) / warps;
  } else {
    r.by_regs = INT_MAX;
  }
  const int smem = k.static_smem + k.dynamic_smem;
  if (smem > 0) {
    const int per_block = round_up(smem + d.reserved_smem_per_block, d.smem_alloc_unit);
    r.by_smem = per_block > 0 ? d.smem_per_sm / per_block : INT_MAX;
  } else {
    r.by_smem = INT_MAX;
  }
  r.blocks_per_sm = std::min({r.by_threads, r.by_regs, r.by_smem, r.by_blocks});
  // Name every resource that allows no more than that (ties are common: 32 registers per thread and the
  // thread limit both allow 64 warps).
  const std::pair<int, const char*> limits[] = {{r.by_threads, "threads"},
                                                {r.by_regs, "registers"},
                                                {r.by_smem, "shared memory"},
                                                {r.by_blocks, "blocks per SM"}};
  for (const auto& [v, name] : limits)
    if (v == r.blocks_per_sm) r.limiter += (r.limiter.empty() ? "" : " = ") + std::string(name);
  if (r.by_regs == INT_MAX) r.by_regs = -1;  // not a constraint
  if (r.by_smem == INT_MAX) r.by_smem = -1;
  r.occupancy = double(r.blocks_per_sm * warps) / double(max_warps);
  const int64_t per_wave = int64_t(r.blocks_per_sm) * d.sm_count;
  if (per_wave > 0 && grid_blocks > 0) {
    r.waves = double(grid_blocks) / double(per_wave);
    r.full_waves = grid_blocks / per_wave;
    const int64_t rest = grid_blocks % per_wave;
    r.tail_fill = rest == 0 ? 1.0 : double(rest) / double(per_wave);
  }
  return r;
}

std::string waves_text(const OccupancyReport& o) {
  if (o.k_segments) return "none: blocks of unequal length (whole tiles and K segments)";
  if (o.grid_blocks <= 0 || o.waves <= 0) return "none: no blocks";
  // Two decimals, or two significant digits for a grid far smaller than one wave (9 blocks of 4224 slots:
  // "0.0021", not "0.00"); likewise the last wave's fill under 1 %.
  char w[32], fill[32], b[128];
  std::snprintf(w, sizeof w, o.waves < 0.1 ? "%.2g" : "%.2f", o.waves);
  std::snprintf(fill, sizeof fill, 100 * o.tail_fill < 1 ? "%.2g" : "%.0f", 100 * o.tail_fill);
  const char* s = o.full_waves == 1 ? "" : "s";
  if (o.full_waves == 0)
    std::snprintf(b, sizeof b, "%s: one wave, %s %% full", w, fill);
  else if (o.tail_fill >= 1)
    std::snprintf(b, sizeof b, "%s: %lld full wave%s", w, (long long)o.full_waves, s);
  else
    std::snprintf(b, sizeof b, "%s: %lld full wave%s, then one %s %% full", w, (long long)o.full_waves, s,
                  fill);
  return b;
}

}  // namespace ts

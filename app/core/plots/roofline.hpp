#pragma once
// [SECTION] Roofline arithmetic. A point is placed by arithmetic intensity (FLOPs per byte of DRAM traffic)
// against achieved FLOP/s, under two roofs: compute (FP32 or TF32 peak from the SM count and clock) and
// memory (DRAM bandwidth x intensity, with the bandwidth measured on the device by a copy kernel).
//
// DRAM traffic is an ESTIMATE from the kernel's block tiling, not a measurement: a block that computes a
// tile_m x tile_n tile of C reads a tile_m x K panel of A and a K x tile_n panel of B and writes its tile
// once. Counting every block's panels as DRAM traffic assumes no reuse between blocks in the L2 cache, so it
// is an upper bound on the traffic (and the intensity a lower bound); the compulsory traffic (A and B read
// once, C written once) is the other bound. Real kernels land in between, nearer the tiling estimate for
// small tiles.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/backend.hpp"

namespace ts {

struct TrafficEstimate {
  double bytes = 0;             // the estimate the roofline uses
  double tiling_bytes = 0;      // every block's A and B panels from DRAM, C once (0: tiling unknown)
  double compulsory_bytes = 0;  // A, B and C once each: the least any kernel moves
  std::string method;           // how `bytes` was estimated, in words
};
// 4-byte elements. tile_m, tile_n <= 0: the tiling is unknown (cuBLAS): bytes = compulsory.
TrafficEstimate estimate_traffic(int64_t m, int64_t n, int64_t k, int tile_m, int tile_n);

struct Roofs {
  double fp32_flops = 0, tf32_flops = 0;  // FLOP/s at the maximum SM clock (0: unknown)
  double dram_bytes_per_s = 0;            // measured (copy kernel), else the datasheet figure
  double datasheet_bytes_per_s = 0;       // from the memory clock and bus width (0: unknown)
  bool dram_measured = false;
  std::string note;  // where each roof comes from, in words
};
// Roofs of a device; measured_gbs > 0: the DRAM roof is that bandwidth (GB/s), else the datasheet's.
Roofs roofs_for(const DeviceInfo& d, double measured_gbs);

// min(peak, intensity x bandwidth): the roof at an intensity. 0 when either roof is unknown.
double attainable(double intensity, double peak_flops, double bytes_per_s);
// Intensity where the memory roof meets the compute roof (peak / bandwidth; 0 when unknown).
double ridge_point(double peak_flops, double bytes_per_s);

struct RooflinePoint {
  double intensity = 0;             // FLOP per byte, from the estimate
  double intensity_compulsory = 0;  // FLOP per byte if A, B and C moved once (the upper end of the range)
  double flops_per_s = 0;           // achieved
  double roof = 0;                  // attainable at `intensity` under the roof of the kernel's precision
  double fraction_of_roof = 0;      // flops_per_s / roof
  bool memory_bound = false;        // intensity left of the ridge point
  TrafficEstimate traffic;
};
RooflinePoint place_point(const ProblemSpec& spec, int tile_m, int tile_n, double median_ms, bool tf32,
                          const Roofs& roofs);

// The roof as a polyline for log-log axes from intensity lo to hi: (lo, roof(lo)), the ridge when it lies
// inside, (hi, roof(hi)). Empty when a roof is unknown or lo >= hi or lo <= 0.
std::vector<std::pair<double, double>> roof_polyline(double peak_flops, double bytes_per_s, double lo,
                                                     double hi);

}  // namespace ts

#include "core/plots/roofline.hpp"

#include <algorithm>
#include <cstdio>

namespace ts {

TrafficEstimate estimate_traffic(int64_t m, int64_t n, int64_t k, int tile_m, int tile_n) {
  TrafficEstimate t;
  const double M = double(m), N = double(n), K = double(k), e = 4.0;
  t.compulsory_bytes = e * (M * K + K * N + M * N);
  if (tile_m > 0 && tile_n > 0) {
    const double row_blocks = double((m + tile_m - 1) / tile_m),
                 col_blocks = double((n + tile_n - 1) / tile_n);
    // Each of the col_blocks columns of blocks reads all of A; each of the row_blocks rows reads all of B.
    t.tiling_bytes = e * (col_blocks * M * K + row_blocks * K * N + M * N);
    t.bytes = t.tiling_bytes;
    char b[200];
    std::snprintf(
        b, sizeof b,
        "estimate from the %d x %d block tiling, no L2 reuse between blocks (an upper bound on DRAM "
        "traffic)",
        tile_m, tile_n);
    t.method = b;
  } else {
    t.bytes = t.compulsory_bytes;
    t.method = "tiling unknown: compulsory traffic (A, B read once, C written once; a lower bound)";
  }
  return t;
}

Roofs roofs_for(const DeviceInfo& d, double measured_gbs) {
  Roofs r;
  r.fp32_flops = d.peak_fp32_tflops * 1e12;
  r.tf32_flops = d.peak_tf32_tflops * 1e12;
  r.datasheet_bytes_per_s = d.datasheet_bandwidth_gbs * 1e9;
  r.dram_measured = measured_gbs > 0;
  r.dram_bytes_per_s = r.dram_measured ? measured_gbs * 1e9 : r.datasheet_bytes_per_s;
  char b[320];
  std::snprintf(
      b, sizeof b, "compute roofs: %d SMs x FLOP/clock x %.0f MHz; DRAM roof: %s %.0f GB/s%s", d.sm_count,
      d.max_sm_clock_mhz, r.dram_measured ? "copy kernel" : "datasheet", r.dram_bytes_per_s / 1e9,
      r.dram_measured && r.datasheet_bytes_per_s > 0
          ? (" (" + std::to_string(int(r.datasheet_bytes_per_s / 1e9 + 0.5)) + " GB/s theoretical)").c_str()
          : "");
  r.note = b;
  return r;
}

double attainable(double intensity, double peak, double bw) {
  if (!(peak > 0) || !(bw > 0) || !(intensity > 0)) return 0;
  return std::min(peak, intensity * bw);
}

double ridge_point(double peak, double bw) {
  return peak > 0 && bw > 0 ? peak / bw : 0;
}

RooflinePoint place_point(const ProblemSpec& s, int tile_m, int tile_n, double median_ms, bool tf32,
                          const Roofs& roofs) {
  RooflinePoint p;
  p.traffic = estimate_traffic(s.m, s.n, s.k, tile_m, tile_n);
  const double flops = s.flops();
  p.intensity = p.traffic.bytes > 0 ? flops / p.traffic.bytes : 0;
  p.intensity_compulsory = p.traffic.compulsory_bytes > 0 ? flops / p.traffic.compulsory_bytes : 0;
  p.flops_per_s = median_ms > 0 ? flops / (median_ms * 1e-3) : 0;
  const double peak = tf32 ? roofs.tf32_flops : roofs.fp32_flops;
  p.roof = attainable(p.intensity, peak, roofs.dram_bytes_per_s);
  p.fraction_of_roof = p.roof > 0 ? p.flops_per_s / p.roof : 0;
  const double ridge = ridge_point(peak, roofs.dram_bytes_per_s);
  p.memory_bound = ridge > 0 && p.intensity < ridge;
  return p;
}

std::vector<std::pair<double, double>> roof_polyline(double peak, double bw, double lo, double hi) {
  std::vector<std::pair<double, double>> line;
  if (!(peak > 0) || !(bw > 0) || !(lo > 0) || !(lo < hi)) return line;
  line.emplace_back(lo, attainable(lo, peak, bw));
  const double ridge = ridge_point(peak, bw);
  if (ridge > lo && ridge < hi) line.emplace_back(ridge, peak);
  line.emplace_back(hi, attainable(hi, peak, bw));
  return line;
}

}  // namespace ts

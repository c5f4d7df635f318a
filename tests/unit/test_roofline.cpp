// Roofline arithmetic: DRAM traffic from the block tiling (and its bounds), roofs from the device and a
// measured bandwidth, where a point lands and which roof bounds it.
#include <gtest/gtest.h>

#include "core/plots/roofline.hpp"

using namespace ts;

namespace {
DeviceInfo h100() {
  DeviceInfo d;
  d.sm = 90;
  d.sm_count = 132;
  d.max_sm_clock_mhz = 1980;
  d.peak_fp32_tflops = 66.90432;  // 132 x 128 x 2 x 1.98 GHz
  d.peak_tf32_tflops = 535.23456;
  d.datasheet_bandwidth_gbs = 3352.32;
  return d;
}
}  // namespace

TEST(Roofline, TrafficFromTheBlockTilingAndItsBounds) {
  const double n2 = 4096.0 * 4096.0;
  const TrafficEstimate t = estimate_traffic(4096, 4096, 4096, 32, 32);
  // 128 block columns each read all of A, 128 block rows each read all of B, C written once.
  EXPECT_DOUBLE_EQ(t.tiling_bytes, 4.0 * (128 * n2 + 128 * n2 + n2));
  EXPECT_DOUBLE_EQ(t.bytes, t.tiling_bytes);
  EXPECT_DOUBLE_EQ(t.compulsory_bytes, 12.0 * n2);
  EXPECT_NE(t.method.find("32 x 32 block tiling"), std::string::npos);
  EXPECT_NE(t.method.find("upper bound"), std::string::npos);
  // Partial tiles still cost whole panels: 4097 rows need 129 block rows.
  const TrafficEstimate r = estimate_traffic(4097, 4096, 4096, 32, 32);
  EXPECT_DOUBLE_EQ(r.tiling_bytes, 4.0 * (128.0 * 4097 * 4096 + 129.0 * n2 + 4097.0 * 4096));
  // Rectangular blocks: 128 x 256 (pipelined T=256) reads A N/256 times and B M/128 times.
  const TrafficEstimate p = estimate_traffic(4096, 4096, 4096, 128, 256);
  EXPECT_DOUBLE_EQ(p.tiling_bytes, 4.0 * (16 * n2 + 32 * n2 + n2));
  // cuBLAS: tiling unknown, compulsory traffic, said so.
  const TrafficEstimate c = estimate_traffic(4096, 4096, 4096, 0, 0);
  EXPECT_DOUBLE_EQ(c.bytes, c.compulsory_bytes);
  EXPECT_EQ(c.tiling_bytes, 0.0);
  EXPECT_NE(c.method.find("tiling unknown"), std::string::npos);
}

TEST(Roofline, RoofsPreferTheMeasuredBandwidth) {
  const Roofs measured = roofs_for(h100(), 3000);
  EXPECT_TRUE(measured.dram_measured);
  EXPECT_DOUBLE_EQ(measured.dram_bytes_per_s, 3000e9);
  EXPECT_DOUBLE_EQ(measured.datasheet_bytes_per_s, 3352.32e9);
  EXPECT_DOUBLE_EQ(measured.fp32_flops, 66.90432e12);
  EXPECT_NE(measured.note.find("copy kernel 3000 GB/s"), std::string::npos) << measured.note;
  const Roofs sheet = roofs_for(h100(), 0);
  EXPECT_FALSE(sheet.dram_measured);
  EXPECT_DOUBLE_EQ(sheet.dram_bytes_per_s, 3352.32e9);
  EXPECT_DOUBLE_EQ(ridge_point(66.9e12, 3000e9), 66.9e12 / 3000e9);
  EXPECT_DOUBLE_EQ(attainable(10, 66.9e12, 3000e9), 30e12);     // memory roof
  EXPECT_DOUBLE_EQ(attainable(100, 66.9e12, 3000e9), 66.9e12);  // compute roof
  EXPECT_EQ(attainable(10, 0, 3000e9), 0.0);
}

TEST(Roofline, PointsLandByIntensityAndAchievedFlops) {
  const Roofs roofs = roofs_for(h100(), 3000);
  ProblemSpec s;
  s.m = s.n = s.k = 4096;
  // tiled T=32 at 4096^3 in 15.48 ms: intensity N / (2 (N/32 + N/32 + 1)) = 4096 / 514 FLOP/B.
  const RooflinePoint t = place_point(s, 32, 32, 15.48, false, roofs);
  EXPECT_NEAR(t.intensity, 4096.0 / 514.0, 1e-9);
  EXPECT_NEAR(t.intensity_compulsory, 4096.0 / 6.0, 1e-9);
  EXPECT_NEAR(t.flops_per_s, 2.0 * 4096.0 * 4096.0 * 4096.0 / 15.48e-3, 1e3);
  EXPECT_TRUE(t.memory_bound);  // left of the ridge at 22.3 FLOP/B
  EXPECT_NEAR(t.roof, t.intensity * 3000e9, 1);
  EXPECT_NEAR(t.fraction_of_roof, t.flops_per_s / t.roof, 1e-12);
  // cuBLAS: compulsory traffic puts it far right, under the compute roof.
  const RooflinePoint c = place_point(s, 0, 0, 2.69, false, roofs);
  EXPECT_FALSE(c.memory_bound);
  EXPECT_DOUBLE_EQ(c.roof, roofs.fp32_flops);
  // TF32 kernels are held to the TF32 roof.
  EXPECT_DOUBLE_EQ(place_point(s, 0, 0, 0.355, true, roofs).roof, roofs.tf32_flops);
}

TEST(Roofline, PolylineBendsAtTheRidge) {
  const auto line = roof_polyline(66.9e12, 3000e9, 0.1, 1000);
  ASSERT_EQ(line.size(), 3u);
  EXPECT_DOUBLE_EQ(line[0].second, 0.1 * 3000e9);
  EXPECT_DOUBLE_EQ(line[1].first, 66.9e12 / 3000e9);
  EXPECT_DOUBLE_EQ(line[1].second, 66.9e12);
  EXPECT_DOUBLE_EQ(line[2].second, 66.9e12);
  EXPECT_EQ(roof_polyline(66.9e12, 3000e9, 100, 1000).size(), 2u);  // all right of the ridge
  EXPECT_TRUE(roof_polyline(0, 3000e9, 0.1, 1000).empty());
  EXPECT_TRUE(roof_polyline(66.9e12, 3000e9, 10, 1).empty());
}

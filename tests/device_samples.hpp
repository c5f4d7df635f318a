#pragma once
// The H100 the unit tests describe without one: its FP32 and TF32 peaks at the maximum SM clock, its
// datasheet DRAM bandwidth and its L2, rounded as the window prints them (tests compare against those
// figures in words: "66.9 TFLOP/s", "3352 GB/s").
#include "core/engine/backend.hpp"

namespace ts::test {

inline DeviceInfo sample_h100() {
  DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm = 90;
  d.sm_count = 132;
  d.max_sm_clock_mhz = 1980;
  d.peak_fp32_tflops = 66.9;
  d.peak_tf32_tflops = 535.2;
  d.datasheet_bandwidth_gbs = 3352;
  d.l2_bytes = 50 << 20;
  return d;
}

}  // namespace ts::test

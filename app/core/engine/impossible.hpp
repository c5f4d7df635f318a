#pragma once
// [SECTION] Points that cannot be right (issue 30, after KernelBench's and gpu-mode's harnesses, which met
// kernels that skipped work and timers that lied). A measured time is impossible when
// - the FLOP/s it gives (2 M N K / time) is above the device's compute roof for the kernel's precision: FP32
//   or TF32 (DeviceInfo::peak_fp32_tflops / peak_tf32_tflops, at the device's maximum SM clock; no clock the
//   GPU can run at gets more);
// - or it is shorter than the DRAM floor: the bytes every GEMM must move between the SMs and DRAM (A and B
//   read once, C written once: roofline.hpp's compulsory traffic, 4-byte elements) at the DRAM bandwidth.
//   The L2 cache holds at most its size at any moment, so it can spare a launch at most its size of inputs
//   (cached when the launch starts) and its size of C's writes (still in it, dirty, when the launch ends):
//   how much of that can count depends on how the samples were taken (L2Credit), and a small problem served
//   from the L2 is never called impossible:
//   - a warm single launch: twice the L2;
//   - a batch of b warm launches back to back (MeasurePolicy::min_sample_ms): the L2 between two launches
//     holds the first one's dirty C and the next one's inputs together, at most its size, so the b launches
//     are spared at most (b + 1) L2 sizes: (1 + 1/b) per launch;
//   - a cold launch (the L2 overwritten by the flush just before): only the C writes still in it at the end,
//     once the L2.
// The bandwidth is the larger of the datasheet's and the measured one (a copy kernel never beats the
// datasheet, so in practice the datasheet's: the floor a real kernel can never get under). A roof that is
// unknown (0: the CPU backend has none) never flags. Such a point is flagged with the reason in words and the
// figures, drawn apart and never counted as a record or the best point. Plain C++.
#include <string>

#include "core/engine/backend.hpp"

namespace ts {

// The compute roof a point of precision `tf32` is held to on `d`, in TFLOP/s (0: unknown).
double compute_roof_tflops(const DeviceInfo& d, bool tf32);
// The DRAM bandwidth the floor uses, in GB/s: max(datasheet, measured_gbs) (0: neither known).
double floor_bandwidth_gbs(const DeviceInfo& d, double measured_gbs);
// How many L2 sizes of the compulsory bytes one timed launch may have been spared, from how its samples were
// taken (above): 2 for warm single launches, 1 + 1/b for batches of b, 1 with the L2 flushed before each.
double l2_credit(bool cold_l2, int launches_per_sample);
// The bytes the floor counts for an M x N x K GEMM on `d`: A, B and C once each, less `l2_sizes` times the L2
// size (not below 0).
double floor_bytes(const DeviceInfo& d, int64_t m, int64_t n, int64_t k, double l2_sizes = 2);
// The least time an M x N x K GEMM can take on `d` for its DRAM traffic, in ms (0: the bandwidth is unknown,
// or the L2 can hold it all).
double dram_floor_ms(const DeviceInfo& d, int64_t m, int64_t n, int64_t k, double measured_gbs = 0,
                     double l2_sizes = 2);

// Why a point of `spec` (precision `tf32`) whose median time is `median_ms` cannot be right on `d`, or ""
// when it can (or no roof is known, or it was not timed: median_ms <= 0). `measured_gbs` > 0: the DRAM
// bandwidth measured on the device (used where it is above the datasheet's); `l2_sizes`: l2_credit of the
// samples (2, the most, when unknown). E.g.
//   "61.2 TFLOP/s is above the FP32 peak of NVIDIA H100 80GB HBM3, 59.3 TFLOP/s at 1980 MHz: the timing
//    cannot be right (a kernel that skipped work, or a clock that lied)"
std::string impossible_reason(const ProblemSpec& spec, bool tf32, double median_ms, const DeviceInfo& d,
                              double measured_gbs = 0, double l2_sizes = 2);

}  // namespace ts

#pragma once
// [SECTION] Benchmark discipline, after NVIDIA/nvbench: warm-up, then samples until there are at least
// min_samples AND min_seconds of them and the noise (relative standard deviation) is under max_noise, or a
// time limit is hit. Plain C++: the CUDA side (kernels/bench_cuda.cu) measures, this decides and formats.
#include <cstdint>
#include <string>
#include <vector>

#include "stats.hpp"

namespace ts {

struct BenchPolicy {
  int min_samples = 10;
  double min_seconds = 0.5;   // of measured kernel time
  double max_noise = 0.005;   // relative standard deviation to stop at (0.5 %)
  double max_seconds = 10.0;  // wall-clock limit per point
  int max_samples = 100000;
};

enum class StopReason { Continue, Converged, TimeLimit, SampleLimit };
const char* to_string(StopReason r);

// noise = stddev / mean of the samples (0 for fewer than 2).
double noise(const std::vector<double>& samples);
// After each sample: keep going, or why to stop. measured_s = sum of samples; wall_s = time spent on the
// point.
StopReason bench_should_stop(const std::vector<double>& samples_ms, double wall_s, const BenchPolicy& p);

// Peak FLOP/s of a GPU from its compute capability, SM count and SM clock. FP32: FMA lanes per SM x 2.
// TF32: dense tensor-core FLOP per SM per clock. 0 when unknown (or no TF32, before sm_80).
int fp32_lanes_per_sm(int sm);        // sm = major * 10 + minor
int tf32_flops_per_sm_clock(int sm);  // dense
double peak_tflops(int sm, int sm_count, double clock_mhz, bool tf32);

// Parses "1024,4096,2048x4096x8192" (N for N^3, or M x N x K). Throws ValidationError.
struct Shape {
  int64_t m, n, k;
};
std::vector<Shape> parse_shapes(const std::string& text);

struct BenchMeta {
  std::string device;
  int sm = 0;  // compute capability major * 10 + minor
  int sm_count = 0;
  double max_sm_clock_mhz = 0;
  std::string driver, cuda_runtime;
  std::string program_version, commit;
  std::string date;
  double peak_fp32_tflops = 0, peak_tf32_tflops = 0;
  bool cold = false;
  bool interrupted = false;
};

struct BenchPoint {
  std::string kernel;
  int tile = 0;
  bool tf32 = false;
  int64_t m = 0, n = 0, k = 0;
  bool verified = false;
  double max_abs_err = 0, tolerance = 0;
  std::string error;  // why it was not timed (verification failed, refused, CUDA error)
  SampleStats stats;  // milliseconds
  double noise = 0;
  std::string stop;   // StopReason
  double tflops = 0;  // at the median
  double pct_peak = 0;
  double pct_cublas = -1;  // vs cuBLAS at the same shape and precision (-1: not measured)
  double sm_clock_min_mhz = 0, sm_clock_median_mhz = 0;
  bool throttled = false;
  std::string throttle_reasons;
};

std::string format_csv(const BenchMeta& meta, const std::vector<BenchPoint>& points);
std::string format_json(const BenchMeta& meta, const std::vector<BenchPoint>& points);
std::string format_markdown(const BenchMeta& meta, const std::vector<BenchPoint>& points);
// "csv", "json" or "md" (throws ValidationError otherwise).
std::string format_bench(const std::string& format, const BenchMeta& meta,
                         const std::vector<BenchPoint>& points);

// Fills pct_cublas of every point from the cublas (FP32) / cublas_tf32 (TF32) point of the same shape.
void relate_to_cublas(std::vector<BenchPoint>& points);

}  // namespace ts

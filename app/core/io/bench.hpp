#pragma once
// [SECTION] `tilescope bench` tables: device peaks, the shapes syntax, and the points measured (by the
// engine, under MeasurePolicy::bench(), see measure.hpp and sweep.hpp) as CSV, JSON or Markdown.
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/engine/stats.hpp"
#include "core/engine/sweep.hpp"
#include "core/io/session.hpp"

namespace ts {

// Peak FLOP/s of a GPU from its compute capability, SM count and SM clock. FP32: FMA lanes per SM x 2.
// TF32: dense tensor-core FLOP per SM per clock. 0 when unknown (or no TF32, before sm_80). On GA10x and Ada
// (sm_86, 87, 89) the TF32 rate is the product's, not the architecture's: the data-center and professional
// parts (A10, A40, RTX A6000, L4, L40S) run 512, GeForce parts half that (RTX 3090: 35.6 TFLOP/s at 82 SMs x
// 1.695 GHz; RTX 4090: 82.6 at 128 x 2.52), told by `name` ("GeForce"). Where the name does not tell, 512:
// the peak is also the roof a timing is held to (impossible.hpp), which must never be under what a part can
// do (L40 and the Ada workstation cards run 256, so their roof is twice their rate there).
int fp32_lanes_per_sm(int sm);                                      // sm = major * 10 + minor
int tf32_flops_per_sm_clock(int sm, const std::string& name = "");  // dense
double peak_tflops(int sm, int sm_count, double clock_mhz, bool tf32, const std::string& name = "");

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
  std::string backend = "cuda";
  std::string policy;                 // MeasurePolicy::describe()
  bool interleave_reference = false;  // the policy asked for cuBLAS between the samples
  double dram_gbs = 0;                // measured by a copy kernel (0: not measured)
  double dram_gbs_datasheet = 0;      // from the memory clock and bus width (0: unknown)
  double wall_seconds = 0;            // the whole run, validation to the last point
  std::string sweep;                  // the sweep's sizes and shape ("" for --shapes)
  // Sweeps on a GPU: the sizes where a configuration's grid first needs one more wave (sweep.hpp).
  using WaveMarkRow = ConfigWaveMark;
  std::vector<WaveMarkRow> wave_marks;
  // The sweep's identity (sweep_sha256(), sweep.hpp), and which part of it the table is: `bench --shard I/N`
  // measures part I of N; `tilescope merge` joins parts (merged_parts of them, missing_shards absent).
  std::string sweep_sha256;
  int shard = 0, shards = 0;  // 0: not a part
  int merged_parts = 0;       // 0: measured in one run
  std::vector<int> missing_shards;
};
// Device, versions, peaks and date (now) from the backend's DeviceInfo.
BenchMeta bench_meta(const DeviceInfo& d);

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
  // Where pct_cublas comes from (relate_to_cublas): "interleaved" (this point's own reference), "separate"
  // (the cuBLAS point of the same shape, measured on its own), "itself" (a cuBLAS point), "" (none).
  std::string pct_cublas_from;
  double sm_clock_min_mhz = 0, sm_clock_median_mhz = 0, sm_clock_max_mhz = 0;
  bool throttled = false;
  std::string throttle_reasons;
  // cuBLAS of the same precision timed interleaved with the kernel, sample by sample (reference_samples == 0:
  // none; reference_note says why, e.g. "CPU backend: no cuBLAS ...").
  std::string reference_kernel;  // "cublas" or "cublas_tf32"
  int reference_samples = 0;
  int launches_per_sample = 1;  // each sample (and each of the reference's) the mean of this many launches
  double reference_median_ms = 0, reference_iqr_ms = 0;
  double reference_clock_min_mhz = 0, reference_clock_median_mhz = 0, reference_clock_max_mhz = 0;
  bool reference_throttled = false;
  std::string reference_throttle_reasons;
  std::string reference_note;
  bool clocks_differ = false;  // the two median SM clocks differ by more than 1 % (clocks_differ())
  int blocks_per_sm = 0;       // occupancy of the launch (0: unknown, e.g. cuBLAS or the CPU)
  double waves = 0;            // grid blocks / (blocks_per_sm x SMs)
  double intensity = 0;  // FLOP per byte of DRAM traffic, estimated from the block tiling (roofline.hpp)
  // Why the time cannot be right (RunRecord::impossible: above the compute roof or under the DRAM floor), or
  // empty. Such a point is no ratio's reference, and the tables say so beside it.
  std::string impossible;
  // The timing on inputs that change between samples (MeasurePolicy::changing_inputs; samples 0: not asked),
  // and whether C matched their reference (the verdict in words).
  int changing_sets = 0, changing_samples = 0;
  double changing_median_ms = 0, changing_iqr_ms = 0;
  bool changing_passed = true;
  std::string changing_verdict;
  std::string date;
};
// A measured point as a table row; `peak_tflops` at the kernel's precision (0: unknown). A run and the
// session's record of it give the same row (the run's goes through its record).
BenchPoint bench_point(const MeasurementRecord& r, double peak_tflops);
BenchPoint bench_point(const RunResult& r, double peak_tflops);
// The row of a point that ended without a result (the backend refused it, the device failed).
BenchPoint failed_point(const ProblemSpec& spec, const std::string& error);

std::string format_csv(const BenchMeta& meta, const std::vector<BenchPoint>& points);
std::string format_json(const BenchMeta& meta, const std::vector<BenchPoint>& points);
std::string format_markdown(const BenchMeta& meta, const std::vector<BenchPoint>& points);
// "csv", "json" or "md" (throws ValidationError otherwise).
std::string format_bench(const std::string& format, const BenchMeta& meta,
                         const std::vector<BenchPoint>& points);

// Fills pct_cublas of every verified, timed point: from its interleaved reference where it has one, else from
// the cublas (FP32) / cublas_tf32 (TF32) point of the same shape; pct_cublas_from says which.
void relate_to_cublas(std::vector<BenchPoint>& points);

}  // namespace ts

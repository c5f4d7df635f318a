#pragma once
// Summary statistics of timing samples.
#include <vector>

namespace ts {

struct SampleStats {
  int count = 0;
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
  double p25 = 0, p75 = 0;  // IQR = p75 - p25
};

// Quantile with linear interpolation between order statistics (q in [0, 1]); samples need not be sorted.
double quantile(std::vector<double> samples, double q);
SampleStats summarize(const std::vector<double>& samples);

// TFLOP/s of a GEMM with `flops` operations that took `ms` milliseconds (0 when ms <= 0).
double tflops(double flops, double ms);

// The noise of samples: stddev / mean (0 with fewer than two samples or a mean that is not above 0).
inline double relative_stddev(const SampleStats& s) {
  return s.count > 1 && s.mean > 0 ? s.stddev / s.mean : 0.0;
}

}  // namespace ts

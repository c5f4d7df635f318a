#include "core/engine/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ts {

double quantile(std::vector<double> s, double q) {
  if (s.empty()) return 0.0;
  std::sort(s.begin(), s.end());
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * double(s.size() - 1);
  size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
  return s[lo] + (s[hi] - s[lo]) * (pos - double(lo));
}

SampleStats summarize(const std::vector<double>& s) {
  SampleStats r;
  r.count = int(s.size());
  if (s.empty()) return r;
  r.median = quantile(s, 0.5);
  r.p25 = quantile(s, 0.25);
  r.p75 = quantile(s, 0.75);
  r.min = *std::min_element(s.begin(), s.end());
  r.max = *std::max_element(s.begin(), s.end());
  r.mean = std::accumulate(s.begin(), s.end(), 0.0) / double(s.size());
  double var = 0;
  for (double x : s) var += (x - r.mean) * (x - r.mean);
  r.stddev = s.size() > 1 ? std::sqrt(var / double(s.size() - 1)) : 0.0;
  return r;
}

double tflops(double flops, double ms) {
  return ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0.0;
}

}  // namespace ts

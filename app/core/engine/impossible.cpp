#include "core/engine/impossible.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace ts {

namespace {

constexpr const char* kCannot =
    ": the timing cannot be right (a kernel that skipped work, or a clock that lied)";

// `value` and `limit` with as many significant digits as it takes to tell them apart (3 to 9), so that a
// point just over a roof does not read "59.3 is above 59.3".
std::pair<std::string, std::string> apart(double value, double limit, double scale) {
  char a[64], b[64];
  for (int digits = 3;; ++digits) {
    std::snprintf(a, sizeof a, "%.*g", digits, value * scale);
    std::snprintf(b, sizeof b, "%.*g", digits, limit * scale);
    if (std::string(a) != b || digits >= 9) break;
  }
  return {a, b};
}

std::string mb(double bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.4g MB", bytes / 1e6);
  return b;
}

}  // namespace

double compute_roof_tflops(const DeviceInfo& d, bool tf32) {
  const double peak = tf32 ? d.peak_tf32_tflops : d.peak_fp32_tflops;
  return peak > 0 ? peak : 0;
}

double floor_bandwidth_gbs(const DeviceInfo& d, double measured_gbs) {
  return std::max({d.datasheet_bandwidth_gbs, measured_gbs, 0.0});
}

double l2_credit(bool cold_l2, int launches_per_sample) {
  if (cold_l2) return 1;
  return 1 + 1.0 / double(std::max(1, launches_per_sample));
}

double floor_bytes(const DeviceInfo& d, int64_t m, int64_t n, int64_t k, double l2_sizes) {
  const double compulsory = 4.0 * (double(m) * double(k) + double(k) * double(n) + double(m) * double(n));
  const double credit = std::clamp(l2_sizes, 0.0, 2.0);  // never more than twice: see the header
  return std::max(0.0, compulsory - credit * double(std::max<int64_t>(d.l2_bytes, 0)));
}

double dram_floor_ms(const DeviceInfo& d, int64_t m, int64_t n, int64_t k, double measured_gbs,
                     double l2_sizes) {
  const double gbs = floor_bandwidth_gbs(d, measured_gbs);
  if (!(gbs > 0)) return 0;
  return floor_bytes(d, m, n, k, l2_sizes) / (gbs * 1e9) * 1e3;
}

std::string impossible_reason(const ProblemSpec& s, bool tf32, double median_ms, const DeviceInfo& d,
                              double measured_gbs, double l2_sizes) {
  if (!(median_ms > 0)) return "";
  const double roof = compute_roof_tflops(d, tf32);
  const std::string device = d.name.empty() ? std::string("this device") : d.name;
  if (roof > 0) {
    const double achieved = s.flops() / (median_ms * 1e-3) / 1e12;
    if (achieved > roof) {
      const auto [a, b] = apart(achieved, roof, 1);
      char clock[64] = "";
      if (d.max_sm_clock_mhz > 0) std::snprintf(clock, sizeof clock, " at %.0f MHz", d.max_sm_clock_mhz);
      return a + " TFLOP/s is above the " + (tf32 ? "TF32" : "FP32") + " peak of " + device + ", " + b +
             " TFLOP/s" + clock + kCannot;
    }
  }
  const double floor_ms = dram_floor_ms(d, s.m, s.n, s.k, measured_gbs, l2_sizes);
  if (floor_ms > 0 && median_ms < floor_ms) {
    const bool us = floor_ms < 1;
    const auto [a, b] = apart(median_ms, floor_ms, us ? 1e3 : 1);
    const char* unit = us ? " us" : " ms";
    const double gbs = floor_bandwidth_gbs(d, measured_gbs);
    const bool datasheet = d.datasheet_bandwidth_gbs > 0 && d.datasheet_bandwidth_gbs >= measured_gbs;
    char bw[96];
    std::snprintf(bw, sizeof bw, "%.0f GB/s (%s)", gbs, datasheet ? "datasheet" : "measured");
    const double credit = std::clamp(l2_sizes, 0.0, 2.0);
    std::string moved = mb(floor_bytes(d, s.m, s.n, s.k, credit)) + " (A and B read once, C written once";
    if (d.l2_bytes > 0 && credit > 0) {
      char times[32];
      std::snprintf(times, sizeof times, "%.3g times", credit);
      moved += std::string(", less ") +
               (credit == 2   ? "twice"
                : credit == 1 ? "once"
                              : times) +
               " the " + mb(double(d.l2_bytes)) + " L2 that may hold some of it";
      if (credit == 1) moved += " (flushed before each launch: C's writes only)";
      if (credit > 1 && credit < 2) moved += " (launches back to back share what it holds)";
    }
    moved += ")";
    return a + unit + " is below the DRAM floor of " + device + ", " + b + unit + ": a " +
           std::to_string(s.m) + " x " + std::to_string(s.n) + " x " + std::to_string(s.k) +
           " GEMM moves at least " + moved + " at " + bw + kCannot;
  }
  return "";
}

}  // namespace ts

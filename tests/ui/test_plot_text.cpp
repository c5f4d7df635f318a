// The texts the plots show on hover, built from a session as the Timings panel builds them: a point measured
// with cuBLAS interleaved names both SM clocks and says when they differ by more than 1 %. No window needed.
#include <gtest/gtest.h>

#include "ui/plots/plots.hpp"
#include "core/io/session.hpp"

using namespace ts;

namespace {

ScalingPoint point_of(const RunResult& r) {
  Session s;
  s.add(r);
  ProblemSpec at = r.spec;
  const auto series = scaling_series(s, ScaleAxis::Square, at);
  EXPECT_EQ(series.size(), 1u);
  EXPECT_EQ(series.at(0).points.size(), 1u);
  return series.at(0).points.at(0);
}

RunResult tiled_at(double kernel_mhz, double cublas_mhz) {
  RunResult r;
  r.spec.kernel = "tiled";
  r.spec.tile = 32;
  r.spec.m = r.spec.n = r.spec.k = 4096;
  r.timed = true;
  r.error.passed = true;
  r.samples_ms = {15.5, 15.5, 15.5};
  r.stats = summarize(r.samples_ms);
  r.clock = summarize_clocks({{kernel_mhz, ""}}, 1980);
  r.interleaved.kernel = "cublas";
  r.interleaved.samples_ms = {3.1, 3.1, 3.1};
  r.interleaved.stats = summarize(r.interleaved.samples_ms);
  r.interleaved.clock = summarize_clocks({{cublas_mhz, "sw_power_cap"}}, 1980);
  r.date = "2025-01-31T10:00:00Z";
  return r;
}

std::string tooltip(const ScalingPoint& p) {
  TimingsCurve c;
  c.label = "tiled T=32";
  TimingsData d;
  d.time = Unit{1, "ms"};
  d.flops = Unit{1e-12, "TFLOP/s"};
  return ui::point_tooltip(c, p, d);
}

}  // namespace

TEST(PlotText, ATimingsPointNamesBothClocksAndFlagsThemWhenTheyDiffer) {
  const std::string t = tooltip(point_of(tiled_at(1980, 1755)));
  EXPECT_NE(t.find("cuBLAS 3.1 ms (timed interleaved): this point reaches 20.0 % of it"), std::string::npos)
      << t;
  EXPECT_NE(t.find("SM clocks: kernel 1980 MHz, cuBLAS 1755 MHz (throttled)"), std::string::npos) << t;
  EXPECT_NE(t.find("the two clocks differ by more than 1 %"), std::string::npos) << t;
  const std::string same = tooltip(point_of(tiled_at(1980, 1975)));
  EXPECT_NE(same.find("SM clocks: kernel 1980 MHz, cuBLAS 1975 MHz"), std::string::npos) << same;
  EXPECT_EQ(same.find("differ"), std::string::npos) << same;
}

TEST(PlotText, AnOlderPointSaysCublasWasTimedOnItsOwn) {
  RunResult r = tiled_at(1980, 1755);
  r.interleaved = InterleavedReference{};
  r.reference_ms = 3.0;
  const std::string t = tooltip(point_of(r));
  EXPECT_NE(t.find("cuBLAS 3 ms (timed on its own)"), std::string::npos) << t;
  EXPECT_EQ(t.find("SM clocks:"), std::string::npos) << t;
  r.reference_ms = 0;  // no cuBLAS at all: nothing said about it
  EXPECT_EQ(tooltip(point_of(r)).find("cuBLAS"), std::string::npos);
}

// What the plots of issue #11 show, as data: curves along the axis the person varies, wave marks where the
// grid needs one more wave, the ladder against a baseline, roofline placement, and the numbers a figure
// keeps.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "core/engine/gpu_catalog.hpp"
#include "core/engine/impossible.hpp"
#include "core/plots/plot_data.hpp"
#include "kernels/engine/registry.hpp"
#include "core/engine/stats.hpp"
#include "device_samples.hpp"

using namespace ts;

namespace {

RunResult point(const std::string& kernel, int tile, int64_t m, int64_t n, int64_t k, double median_ms,
                const std::string& date, int blocks_per_sm = 2) {
  RunResult r;
  r.spec.kernel = kernel;
  r.spec.tile = tile;
  r.spec.m = m;
  r.spec.n = n;
  r.spec.k = k;
  r.backend = "cuda";
  r.device = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  r.policy = MeasurePolicy::bench().describe();
  r.samples_ms = {median_ms * 0.98, median_ms, median_ms * 1.03};
  r.stats = summarize(r.samples_ms);
  r.error.passed = true;
  r.clock = summarize_clocks({{1980, ""}}, 1980);
  if (kernel != "cublas") {
    r.tile_m = r.tile_n = tile;
    OccupancyReport o;
    o.blocks_per_sm = blocks_per_sm;
    r.occupancy = o;
  }
  r.date = date;
  return r;
}

// A square sweep (tiled T=32 and cuBLAS at 256..2048 step 256) plus a run of tiled T=8 at 1024.
Session square_session() {
  Session s = Session::for_device(test::sample_h100());
  for (int64_t n = 256; n <= 2048; n += 256) {
    s.add(
        point("tiled", 32, n, n, n, 1e-9 * double(n) * double(n) * double(n) / 8.0, "2025-02-01T10:00:00Z"));
    s.add(
        point("cublas", 0, n, n, n, 1e-9 * double(n) * double(n) * double(n) / 40.0, "2025-02-01T10:00:01Z"));
  }
  s.add(point("tiled", 8, 1024, 1024, 1024, 0.9, "2025-02-01T10:00:02Z", 32));
  return s;
}

ProblemSpec spec(const std::string& kernel, int tile, int64_t m, int64_t n, int64_t k) {
  ProblemSpec p;
  p.kernel = kernel;
  p.tile = tile;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

}  // namespace

TEST(PlotData, TimingsFollowTheAxisASweepWithMFixedMoves) {
  Session s = Session::for_device(test::sample_h100());
  for (int64_t n = 512; n <= 2048; n += 512)
    s.add(point("tiled", 32, 1024, n, n, 0.1 * double(n) / 512, "d"));
  s.add(point("tiled", 32, 1024, 1024, 4096, 0.5, "d"));  // K alone differs: not on the N = K axis
  SessionSet set;
  set.current() = s;
  const ProblemSpec at = spec("tiled", 32, 1024, 1536, 1536);
  EXPECT_EQ(infer_axis(s, at), ScaleAxis::NK);
  const TimingsData d = timings_data(set, at, builtin_kernel_infos());
  EXPECT_EQ(d.axis, ScaleAxis::NK);
  EXPECT_EQ(d.axis_label, "N = K (M = 1024)");
  ASSERT_EQ(d.curves.size(), 1u);
  ASSERT_EQ(d.curves[0].series.points.size(), 4u);  // every point with N = K and M = 1024, none other
  EXPECT_EQ(d.curves[0].series.points.front().x, 512);
  EXPECT_EQ(d.curves[0].series.points.back().x, 2048);
  EXPECT_TRUE(d.curves[0].current);
  EXPECT_EQ(d.x_lo, 512);
  EXPECT_EQ(d.x_hi, 2048);
  EXPECT_EQ(d.x_current, 1536);
  // And with K fixed, M = N move together.
  Session t = Session::for_device(test::sample_h100());
  for (int64_t n = 512; n <= 2048; n += 512) t.add(point("tiled", 32, n, n, 777, 0.1, "d"));
  EXPECT_EQ(infer_axis(t, spec("tiled", 32, 1024, 1024, 777)), ScaleAxis::MN);
  EXPECT_EQ(axis_label(ScaleAxis::MN, spec("tiled", 32, 1024, 1024, 777)), "M = N (K = 777)");
}

TEST(PlotData, TimingsHighlightTheCurrentConfigurationAndKeepItsLaunchesAndReadableUnits) {
  SessionSet set;
  set.current() = square_session();
  const ProblemSpec at = spec("tiled", 32, 1024, 1024, 1024);
  const TimingsData d = timings_data(set, at, builtin_kernel_infos());
  EXPECT_EQ(d.axis, ScaleAxis::Square);
  ASSERT_EQ(d.curves.size(), 3u);  // tiled T=8, tiled T=32, cuBLAS: ladder order
  EXPECT_EQ(d.curves[0].label, "tiled T=8");
  EXPECT_EQ(d.curves[1].label, "tiled T=32");
  EXPECT_EQ(d.curves[2].label, "cublas");
  EXPECT_TRUE(d.curves[1].current);
  EXPECT_FALSE(d.curves[0].current);
  EXPECT_TRUE(d.curves[2].series.reference);
  EXPECT_LT(d.curves[0].colour, d.curves[1].colour);  // colours by ladder place
  ASSERT_TRUE(d.current_record.has_value());
  EXPECT_EQ(d.current_samples_ms, set.current().records[*d.current_record].samples_ms);
  EXPECT_EQ(d.current_flops, at.flops());
  // The slowest point, tiled T=32 at 2048^3, takes 2048^3 / 8 fs = 1.07 ms; cuBLAS runs at 80 TFLOP/s.
  EXPECT_EQ(d.time.name, "ms");
  EXPECT_EQ(d.flops.name, "TFLOP/s");
  // A thousand times slower (a CPU): GFLOP/s rather than 0.08 TFLOP/s, and seconds rather than 1070 ms.
  SessionSet slow;
  slow.current() = Session::for_device(test::sample_h100());
  for (auto r : set.current().records) {
    r.stats.median *= 1000;
    slow.current().records.push_back(r);
  }
  const TimingsData s = timings_data(slow, at, builtin_kernel_infos());
  EXPECT_EQ(s.flops.name, "GFLOP/s");
  EXPECT_EQ(s.time.name, "s");
}

TEST(PlotData, MeasuredWaveMarksSitWhereTheGridNeedsOneMoreWave) {
  const Session s = square_session();
  const ProblemSpec at = spec("tiled", 32, 1024, 1024, 1024);
  const WaveMarkSet w = measured_wave_marks(s, ScaleAxis::Square, at, {"tiled", 32}, 256, 2048);
  EXPECT_FALSE(w.theoretical);
  ASSERT_FALSE(w.marks.empty()) << w.note;
  const int64_t per_wave = 2 * 132;  // 2 blocks per SM as recorded, 132 SMs
  for (const WaveMark& m : w.marks) {
    const int64_t g = ((m.size + 31) / 32) * ((m.size + 31) / 32);
    const int64_t before = ((m.size - 1 + 31) / 32) * ((m.size - 1 + 31) / 32);
    EXPECT_EQ((g + per_wave - 1) / per_wave, m.waves) << m.size;
    EXPECT_EQ((before + per_wave - 1) / per_wave, m.waves - 1) << m.size;
  }
  // 8 x 8 blocks at N = 256 fit one wave; 33 x 33 = 1089 blocks at N = 1025 need 5.
  EXPECT_GT(w.marks.front().size, 256);
  // No marks for cuBLAS (its tiling is its own) or along K (the grid does not depend on K), said why.
  EXPECT_TRUE(measured_wave_marks(s, ScaleAxis::Square, at, {"cublas", 0}, 256, 2048).marks.empty());
  const WaveMarkSet k = measured_wave_marks(s, ScaleAxis::K, at, {"tiled", 32}, 256, 2048);
  EXPECT_TRUE(k.marks.empty());
  EXPECT_NE(k.note.find("K"), std::string::npos);
}

// Stream-K plans its blocks for the SMs (whole tiles and K segments): no wave marks, and the note says why,
// where the same sizes of a one-block-a-tile kernel have them.
TEST(PlotData, AKernelWhoseLaunchIsInKSegmentsHasNoWaveMarks) {
  Session s = square_session();
  for (int64_t n = 256; n <= 2048; n += 256) {
    MeasurementRecord r = s.records.front();
    r.spec = spec("streamk", 256, n, n, n);
    r.blocks_per_sm = 1;
    r.tile_m = r.tile_n = 64;  // smaller than stream-K's 128 x 256, so that these sizes pass whole waves
    r.k_segments = true;
    s.records.push_back(r);
  }
  const ProblemSpec at = spec("streamk", 256, 1024, 1024, 1024);
  const WaveMarkSet w = measured_wave_marks(s, ScaleAxis::Square, at, {"streamk", 256}, 256, 2048);
  EXPECT_TRUE(w.marks.empty());
  EXPECT_NE(w.note.find("K segments"), std::string::npos) << w.note;
  EXPECT_NE(w.note.find("at 2048"), std::string::npos) << w.note;  // the launch it read: the largest size
  for (auto& r : s.records)
    if (r.spec.kernel == "streamk") r.k_segments = false;  // the same records, one block a tile
  EXPECT_FALSE(measured_wave_marks(s, ScaleAxis::Square, at, {"streamk", 256}, 256, 2048).marks.empty());
}

TEST(PlotData, CatalogWaveMarksAreLabelledTheoreticalWithTheirGpu) {
  const GpuModel& l4 = find_gpu("l4");
  const ProblemSpec at = spec("tiled", 32, 1024, 1024, 1024);
  const WaveMarkSet w =
      catalog_wave_marks(build_resources(), l4, ScaleAxis::Square, at, {"tiled", 32}, 64, 4096);
  EXPECT_TRUE(w.theoretical);
  EXPECT_EQ(w.gpu, l4.name);
  EXPECT_EQ(w.source.rfind("THEORETICAL", 0), 0u);
  if (build_resources().empty()) {
    EXPECT_TRUE(w.marks.empty());
    EXPECT_FALSE(w.note.empty());
    GTEST_SKIP() << "no build-time resource table in this build: " << build_resources_note();
  }
  SweepSpec sweep;
  const auto expected = theoretical_wave_marks(build_resources(), l4, sweep, {"tiled", 32}, 64, 4096);
  ASSERT_EQ(w.marks.size(), expected.size());
  EXPECT_FALSE(w.marks.empty());
  for (size_t i = 0; i < w.marks.size(); ++i) EXPECT_EQ(w.marks[i].size, expected[i].size);
}

TEST(PlotData, TheLadderIsInRegistryOrderWithSpeedupsAgainstTheBaseline) {
  SessionSet set;
  set.current() = square_session();
  const ProblemSpec at = spec("tiled", 8, 1024, 1024, 1024);
  const BarsData d = bars_data(set, at, builtin_kernel_infos(), std::nullopt);
  ASSERT_EQ(d.labels.size(), 3u);
  EXPECT_EQ(d.labels[0], "tiled T=8");
  EXPECT_EQ(d.labels[1], "tiled T=32");
  EXPECT_EQ(d.labels[2], "cublas");
  EXPECT_EQ(d.baseline, 1);  // tiled T=32 when nothing is pinned
  EXPECT_EQ(d.current, 0);
  EXPECT_EQ(d.speedups[1], "baseline");
  const double t32 = d.bars[0][1]->median_ms, cub = d.bars[0][2]->median_ms;
  EXPECT_EQ(d.speedups[2], speedup_label(cub, t32, "tiled T=32"));
  EXPECT_EQ(d.speedups[2].substr(d.speedups[2].size() - 10), "tiled T=32");
  // Pinned: cuBLAS.
  const BarsData p = bars_data(set, at, builtin_kernel_infos(), KernelTile{"cublas", 0});
  EXPECT_EQ(p.baseline, 2);
  EXPECT_EQ(p.speedups[1], speedup_label(t32, cub, "cublas"));
  // A pinned configuration without a bar here falls back to the default.
  EXPECT_EQ(bars_data(set, at, builtin_kernel_infos(), KernelTile{"pipelined", 256}).baseline, 1);
}

TEST(PlotData, OverlaysAddRowsAndCurvesOfTheirOwn) {
  SessionSet set;
  set.current() = square_session();
  Session other = Session::for_device(test::sample_h100());
  other.label = "other GPU";
  other.add(point("pipelined", 128, 1024, 1024, 1024, 0.05, "d"));
  other.add(point("tiled", 32, 1024, 1024, 1024, 0.3, "d"));
  set.open(other);
  const ProblemSpec at = spec("tiled", 32, 1024, 1024, 1024);
  const BarsData b = bars_data(set, at, builtin_kernel_infos(), std::nullopt);
  ASSERT_EQ(b.labels.size(), 4u);  // pipelined joins in its ladder place, before cuBLAS
  EXPECT_EQ(b.labels[2], "pipelined T=128");
  EXPECT_FALSE(b.bars[0][2].has_value());
  EXPECT_TRUE(b.bars[1][2].has_value());
  const TimingsData t = timings_data(set, at, builtin_kernel_infos());
  bool overlay = false;
  for (const auto& c : t.curves)
    overlay |= c.session == 1 && c.label == "tiled T=32 [other GPU]" && !c.current;
  EXPECT_TRUE(overlay);
}

TEST(PlotData, RooflinePlacesEveryMeasuredPointUnderTheDeviceRoofs) {
  SessionSet set;
  set.current() = square_session();
  const ProblemSpec at = spec("tiled", 32, 1024, 1024, 1024);
  const RooflineData d = roofline_data(set, at, builtin_kernel_infos(), 3000, false);
  EXPECT_EQ(d.points.size(), set.current().records.size());
  EXPECT_TRUE(d.roofs.dram_measured);
  EXPECT_DOUBLE_EQ(d.roofs.dram_bytes_per_s, 3000e9);
  EXPECT_FALSE(d.fp32.empty());
  EXPECT_FALSE(d.tf32.empty());
  for (const auto& p : d.points) {
    EXPECT_GT(p.p.intensity, 0);
    EXPECT_GE(p.p.intensity_compulsory, p.p.intensity);
    EXPECT_GE(p.p.intensity, d.x_lo);
    EXPECT_LE(p.p.intensity_compulsory, d.x_hi);
    EXPECT_GE(p.p.flops_per_s, d.y_lo);
    EXPECT_LE(p.p.flops_per_s, d.y_hi);
  }
  bool estimate = false;
  for (const auto& n : d.notes) estimate |= n.find("ESTIMATE") != std::string::npos;
  EXPECT_TRUE(estimate);
  const RooflineData shape = roofline_data(set, at, builtin_kernel_infos(), 3000, true);
  EXPECT_EQ(shape.points.size(), 3u);  // tiled T=32, cuBLAS and tiled T=8 at 1024^3
  // Without a measured bandwidth the DRAM roof is the datasheet's, and says so.
  EXPECT_FALSE(roofline_data(set, at, builtin_kernel_infos(), 0, false).roofs.dram_measured);
}

TEST(PlotData, FiguresKeepEveryNumberBehindThePlot) {
  SessionSet set;
  set.current() = square_session();
  const ProblemSpec at = spec("tiled", 32, 1024, 1024, 1024);
  TimingsData d = timings_data(set, at, builtin_kernel_infos());
  d.marks = measured_wave_marks(set.current(), d.axis, at, {"tiled", 32}, 256, 2048);
  const FigureData f = timings_figure(d, figure_meta(PlotKind::Timings, set.current(), at, d.records));
  // One series per curve, the wave marks and the current point's launches.
  ASSERT_EQ(f.series.size(), d.curves.size() + 2);
  for (size_t i = 0; i < d.curves.size(); ++i) {
    ASSERT_EQ(f.series[i].rows.size(), d.curves[i].series.points.size());
    for (size_t r = 0; r < f.series[i].rows.size(); ++r)
      EXPECT_EQ(f.series[i].rows[r][1], d.curves[i].series.points[r].median_ms);  // bit for bit
  }
  EXPECT_EQ(f.series[d.curves.size()].rows.size(), d.marks.marks.size());
  EXPECT_EQ(f.series.back().rows.size(), d.current_samples_ms.size());
  EXPECT_EQ(f.series.back().rows[1][1], d.current_samples_ms[1]);
  const BarsData b = bars_data(set, at, builtin_kernel_infos(), std::nullopt);
  const FigureData fb = bars_figure(b, figure_meta(PlotKind::Bars, set.current(), at, b.records));
  ASSERT_EQ(fb.series.size(), 3u);
  EXPECT_EQ(fb.series[2].label, "cublas");
  EXPECT_DOUBLE_EQ(fb.series[2].rows[0][6], b.bars[0][1]->median_ms / b.bars[0][2]->median_ms);
}

TEST(PlotData, TheoreticalOccupancyByTileMatchesTheCalculator) {
  if (build_resources().empty()) GTEST_SKIP() << build_resources_note();
  const GpuModel& t4 = find_gpu("t4");
  const std::vector<KernelInfo> infos = builtin_kernel_infos();
  const KernelInfo* tiled = find_kernel(infos, "tiled");
  ASSERT_NE(tiled, nullptr);
  const OccupancyData d = theoretical_tiles(build_resources(), t4, *tiled, 16, 4096, 4096);
  EXPECT_TRUE(d.theoretical);
  ASSERT_EQ(d.tiles.size(), tiled->tiles.size());
  for (const auto& t : d.tiles) {
    const ResourceLookup l = lookup_resources(build_resources(), "tiled", t.tile, true, t4.sm);
    ASSERT_NE(l.row, nullptr);
    const OccupancyReport o = theoretical_occupancy(t4, inputs_from(*l.row), 4096, 4096);
    EXPECT_EQ(t.report.blocks_per_sm, o.blocks_per_sm) << t.tile;
    EXPECT_EQ(t.report.occupancy, o.occupancy) << t.tile;
  }
}

// A run that fails verification is not a point on the plot; the plot says that is why it is empty.
TEST(PlotData, RunsThatFailVerificationAreLeftOutAndCounted) {
  Session s = Session::for_device(test::sample_h100());
  RunResult bad = point("tiled_floork", 32, 1000, 1000, 1000, 50.0, "d");
  bad.error.passed = false;
  s.add(bad);
  SessionSet set;
  set.current() = s;
  const ProblemSpec at = spec("tiled_floork", 32, 1000, 1000, 1000);
  const TimingsData d = timings_data(set, at, builtin_kernel_infos());
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.unverified, 1);
  ASSERT_TRUE(d.current_record.has_value());  // its launches are still shown beside the plot, labelled
  EXPECT_NE(d.current_label.find("failed verification"), std::string::npos);
  // ... in units of their own that fit them (40 GFLOP/s), although no curve is drawn: not "4e+04 MFLOP/s".
  EXPECT_EQ(d.launch_flops.name, "GFLOP/s");
  EXPECT_EQ(d.launch_time.name, "ms");
  s.add(point("tiled", 32, 1000, 1000, 1000, 40.0, "d"));
  set.current() = s;
  const TimingsData e = timings_data(set, spec("tiled", 32, 1000, 1000, 1000), builtin_kernel_infos());
  EXPECT_FALSE(e.empty());
  EXPECT_EQ(e.unverified, 1);
}

// A window measuring on two engines: every curve names its session (device and engine), the current one's
// too; with an overlay opened from a file only, the current session's curves stay unlabelled.
TEST(PlotData, WithTwoEnginesEveryCurveNamesItsDevice) {
  SessionSet set;
  set.current() = square_session();
  set.current().label = "NVIDIA H100 80GB HBM3 (this machine), 2025-02-01";
  set.current().engine = 1;
  Session other = square_session();
  other.label = "NVIDIA H100 80GB HBM3 (gpu-box), 2025-02-01";
  set.open(other);
  const ProblemSpec at = spec("tiled", 32, 1024, 1024, 1024);
  auto labels = [&] {
    std::vector<std::string> out;
    for (const TimingsCurve& c : timings_data(set, at, builtin_kernel_infos()).curves)
      if (c.series.config == KernelTile{"tiled", 32}) out.push_back(c.label);
    return out;
  };
  std::vector<std::string> l = labels();
  ASSERT_EQ(l.size(), 2u);
  // The overlay read from a file (no engine's): the current session's curve as it always was.
  EXPECT_NE(std::find(l.begin(), l.end(), "tiled T=32"), l.end());
  EXPECT_NE(std::find(l.begin(), l.end(), "tiled T=32 [NVIDIA H100 80GB HBM3 (gpu-box), 2025-02-01]"),
            l.end());
  set.at(1).engine = 2;  // the overlay is a connected engine's
  l = labels();
  ASSERT_EQ(l.size(), 2u);
  EXPECT_NE(std::find(l.begin(), l.end(), "tiled T=32 [NVIDIA H100 80GB HBM3 (this machine), 2025-02-01]"),
            l.end());
  EXPECT_NE(std::find(l.begin(), l.end(), "tiled T=32 [NVIDIA H100 80GB HBM3 (gpu-box), 2025-02-01]"),
            l.end());
}

// A point faster than the device can go (RunRecord::impossible, impossible.hpp) is no record: the Timings
// curve keeps it apart (drawn, flagged) and never draws its line through it, the ladder has no bar of it,
// the roofline leaves it out and says so, and the figure names it in its notes and a series of its own.
TEST(PlotData, AnImpossiblePointIsDrawnApartAndIsNoBarLineOrRooflinePoint) {
  Session s = square_session();
  // tiled T=32 at 2048^3, newest of all, at 90 TFLOP/s on a 66.9 TFLOP/s FP32 roof.
  const ProblemSpec big = spec("tiled", 32, 2048, 2048, 2048);
  RunResult fake = point("tiled", 32, 2048, 2048, 2048, big.flops() / 90e12 * 1e3, "2025-02-01T11:00:00Z");
  fake.impossible = impossible_reason(big, false, fake.stats.median, test::sample_h100());
  ASSERT_FALSE(fake.impossible.empty());
  s.add(fake);
  SessionSet set;
  set.current() = s;
  const TimingsData d = timings_data(set, big, builtin_kernel_infos());
  const TimingsCurve* tiled = nullptr;
  for (const auto& c : d.curves)
    if (c.label == "tiled T=32") tiled = &c;
  ASSERT_NE(tiled, nullptr);
  ASSERT_EQ(tiled->series.impossible.size(), 1u);
  EXPECT_EQ(tiled->series.impossible[0].x, 2048);
  EXPECT_EQ(tiled->series.impossible[0].impossible, fake.impossible);
  EXPECT_EQ(d.impossible, 1);
  for (const auto& p : tiled->series.points) EXPECT_TRUE(p.impossible.empty());
  // The line's point at 2048 is the possible one (older), not the newer impossible one.
  ASSERT_EQ(tiled->line.back().x, 2048);
  EXPECT_GT(tiled->line.back().median_ms, fake.stats.median * 4);
  EXPECT_NE(d.current_label.find("(impossible)"), std::string::npos) << d.current_label;
  // The ladder's bar of tiled T=32 at 2048^3 is the possible point.
  const BarsData b = bars_data(set, big, builtin_kernel_infos(), std::nullopt);
  bool found = false;
  for (size_t r = 0; r < b.configs.size(); ++r)
    if (b.labels[r] == "tiled T=32" && b.bars[0][r]) {
      found = true;
      EXPECT_GT(b.bars[0][r]->median_ms, fake.stats.median * 4);
    }
  EXPECT_TRUE(found);
  // The roofline leaves it out and says so.
  const RooflineData roof = roofline_data(set, big, builtin_kernel_infos(), 3000, true);
  for (const auto& p : roof.points) EXPECT_NE(p.record, s.records.size() - 1);
  bool said = false;
  for (const auto& n : roof.notes) said |= n.find("1 point is left out") != std::string::npos;
  EXPECT_TRUE(said);
  // The figure: a note, and the point in a series of its own beside the curve's.
  const FigureData f = timings_figure(d, figure_meta(PlotKind::Timings, s, big));
  bool noted = false;
  for (const auto& n : f.meta.notes) noted |= n.find("hollow red") != std::string::npos;
  EXPECT_TRUE(noted);
  bool apart = false;
  for (const auto& ser : f.series)
    if (ser.label == std::string("tiled T=32: ") + kImpossibleLabel) {
      apart = true;
      ASSERT_EQ(ser.rows.size(), 1u);
      EXPECT_EQ(ser.rows[0][1], fake.stats.median);
    } else if (ser.label == "tiled T=32") {
      for (const auto& row : ser.rows) EXPECT_NE(row[1], fake.stats.median);
    }
  EXPECT_TRUE(apart);
}

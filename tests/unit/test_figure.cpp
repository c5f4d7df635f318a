// Figure metadata: the caption says where the numbers come from, the sidecar and CSV hold every field and
// every number at full precision, sizes and names are validated, two exports never share a name.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/plots/figure.hpp"
#include "test_util.hpp"

using namespace ts;

namespace {
Session h100_session() {
  DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H100 80GB HBM3";
  d.driver = "580.159.04, CUDA 13.0";
  d.cuda_runtime = "13.0";
  Session s = Session::for_device(d);
  for (double clock : {1980.0, 1965.0, 1755.0}) {
    RunResult r;
    r.spec.m = r.spec.n = r.spec.k = 4096;
    r.spec.tile = 32;
    r.samples_ms = {15.48, 15.5};
    r.stats = summarize(r.samples_ms);
    r.error.passed = true;
    r.clock = summarize_clocks({{clock, clock < 1800 ? "sw_thermal" : ""}}, 1980);
    r.policy = "bench: ...";
    s.add(r);
  }
  return s;
}
}  // namespace

TEST(Figure, CaptionNamesDeviceVersionsClockKernelShapeInputVersionAndDate) {
  const Session s = h100_session();
  ProblemSpec spec;
  spec.m = spec.n = spec.k = 4096;
  spec.kernel = "tiled";
  spec.tile = 32;
  FigureMeta m = figure_meta(PlotKind::Timings, s, spec, {0, 1});
  EXPECT_EQ(m.sm_clock_mhz, 1972.5);  // median of the points shown
  EXPECT_FALSE(m.throttled);
  const std::string c = caption_line(m);
  for (const std::string& part : std::vector<std::string>{
           "NVIDIA H100 80GB HBM3", "driver 580.159.04, CUDA 13.0", "runtime 13.0", "| SM 197", " MHz |",
           "tiled T=32", "4096 x 4096 x 4096", "random, seed 1", "TileScope ", m.commit, m.date})
    EXPECT_NE(c.find(part), std::string::npos) << part << " in " << c;
  m = figure_meta(PlotKind::Timings, s, spec);  // every record: one was throttled
  EXPECT_TRUE(m.throttled);
  EXPECT_NE(caption_line(m).find("(throttled)"), std::string::npos);
  m.sm_clock_mhz = 0;
  EXPECT_NE(caption_line(m).find("SM clock not recorded"), std::string::npos);
  EXPECT_NE(default_title(PlotKind::Bars, spec).find("4096 x 4096 x 4096"), std::string::npos);
}

TEST(Figure, SidecarAndCsvHoldEveryFieldAndEveryNumberAtFullPrecision) {
  FigureData d;
  d.meta = figure_meta(PlotKind::Roofline, h100_session(), ProblemSpec{});
  d.meta.size = {1920, 1080};
  d.meta.notes = {"DRAM traffic estimated from the block tiling"};
  d.meta.overlays = {"NVIDIA A100, 2025-01-30"};
  const double third = 1.0 / 3.0;
  d.series.push_back({"tiled T=32", {"x", "median_ms"}, {{1024, third}, {2048, 2.0 / 7.0}}});
  const nlohmann::json j = figure_sidecar(d);
  EXPECT_EQ(j["format"], "tilescope-figure");
  for (const char* key :
       {"plot",     "title",        "caption",      "theme",     "width",  "height",    "backend", "device",
        "driver",   "cuda_runtime", "sm_clock_mhz", "throttled", "kernel", "tile",      "m",       "n",
        "k",        "input",        "seed",         "policy",    "sweep",  "tilescope", "commit",  "date",
        "overlays", "notes"})
    EXPECT_TRUE(j["meta"].contains(key)) << key;
  EXPECT_EQ(j["meta"]["plot"], "roofline");
  EXPECT_EQ(j["meta"]["width"], 1920);
  // Through text and back, bit for bit.
  const auto back = nlohmann::json::parse(j.dump());
  EXPECT_EQ(back["series"][0]["rows"][0][1].get<double>(), third);
  const std::string csv = figure_csv(d);
  EXPECT_NE(csv.find("# device,NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(csv.find("# caption,"), std::string::npos);
  EXPECT_NE(csv.find("series,x,median_ms\n"), std::string::npos);
  char want[64];
  std::snprintf(want, sizeof want, "tiled T=32,1024,%.17g\n", third);
  EXPECT_NE(csv.find(want), std::string::npos) << csv;
  EXPECT_EQ(std::stod("0.33333333333333331"), third);
  d.series[0].rows.push_back({1.0});  // a short row is a bug, not a figure
  EXPECT_THROW(figure_sidecar(d), std::invalid_argument);
}

TEST(Figure, TwoExportsNeverShareAName) {
  test::TempDir dir;
  FigureData d;
  d.meta.plot = PlotKind::Bars;
  d.series.push_back({"bars", {"position", "median_ms"}, {{0, 1.5}}});
  const NewNames na = figure_names(dir.path(), PlotKind::Bars);
  const FigurePaths a = figure_paths(na);
  EXPECT_EQ(a.png.extension(), ".png");
  EXPECT_EQ(a.png.stem(), a.json.stem());
  EXPECT_NE(a.png.filename().string().find("tilescope-bars-"), std::string::npos);
  write_figure_data(a, d);
  write_file(a.png, "png", Replace::Reserved);
  const NewNames nb = figure_names(dir.path(), PlotKind::Bars);
  const FigurePaths b = figure_paths(nb);
  EXPECT_NE(a.png, b.png);
  EXPECT_NE(a.csv, b.csv);
  write_figure_data(b, d);
  EXPECT_THROW(write_figure_data(a, d), std::runtime_error);  // never replaces
  // Only the PNG of a stem present (a renderer that got that far): the stem is still not reused.
  std::filesystem::remove(b.csv);
  std::filesystem::remove(b.json);
  const NewNames nc = figure_names(dir.path(), PlotKind::Bars);
  EXPECT_NE(figure_paths(nc).png, b.png);
  EXPECT_NE(figure_paths(nc).png, a.png);
}

TEST(Figure, SizesNamesAndThemesAreValidated) {
  EXPECT_EQ(parse_figure_size("1920x1080", {800, 600}).width, 1920);
  const FigureSize s2 = parse_figure_size("2x", {800, 450});
  EXPECT_EQ(s2.width, 1600);
  EXPECT_EQ(s2.height, 900);
  EXPECT_EQ(parse_figure_size("3x", {800, 450}).height, 1350);
  for (const char* bad : {"", "1920", "1920x", "x1080", "axb", "-1920x1080", "100x100", "9000x1000", "4x"})
    EXPECT_THROW(parse_figure_size(bad, {800, 450}), ValidationError) << bad;
  EXPECT_THROW(parse_figure_size("3x", {3000, 2000}), ValidationError);  // 9000 wide
  EXPECT_EQ(parse_plot_kind("roofline"), PlotKind::Roofline);
  EXPECT_THROW(parse_plot_kind("pie"), ValidationError);
  EXPECT_EQ(parse_figure_theme("light"), FigureTheme::Light);
  EXPECT_THROW(parse_figure_theme("blue"), ValidationError);
}

TEST(Figure, UnitsKeepTheLargestValueReadable) {
  EXPECT_EQ(flops_unit(51e12).name, "TFLOP/s");
  const Unit g = flops_unit(4e9);  // 0.004 TFLOP/s reads 4 GFLOP/s
  EXPECT_EQ(g.name, "GFLOP/s");
  EXPECT_DOUBLE_EQ(4e9 * g.scale, 4.0);
  EXPECT_EQ(flops_unit(2e6).name, "MFLOP/s");
  EXPECT_EQ(time_unit(15.48).name, "ms");
  EXPECT_EQ(time_unit(0.004).name, "us");
  EXPECT_DOUBLE_EQ(0.004 * time_unit(0.004).scale, 4.0);
  EXPECT_EQ(time_unit(2500).name, "s");
}

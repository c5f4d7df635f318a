#include <fstream>

#include <gtest/gtest.h>

#include "settings.hpp"
#include "test_util.hpp"

using namespace ts;

TEST(Settings, RoundTripThroughTheConfigFile) {
  test::TempDir dir;
  Settings s;
  s.spec.m = 33;
  s.spec.n = 65;
  s.spec.k = 17;
  s.spec.kernel = "naive";
  s.spec.tile = 8;
  s.spec.input = InputKind::Identity;
  s.spec.seed = 42;
  s.square = false;
  s.auto_run = false;
  s.export_dir = "/tmp/x";
  save_settings(dir.path() / "sub" / "settings.json", s);
  std::string warnings;
  Settings r = load_settings(dir.path() / "sub" / "settings.json", &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings;
  EXPECT_EQ(r.spec, s.spec);
  EXPECT_EQ(r.square, false);
  EXPECT_EQ(r.auto_run, false);
  EXPECT_EQ(r.export_dir, "/tmp/x");
}

TEST(Settings, InvalidEntriesFallBackToDefaultsWithAWarning) {
  test::TempDir dir;
  { std::ofstream(dir.file("s.json")) << R"({"m": -4, "n": "big", "k": 64, "input": "gauss", "tile": "x"})"; }
  std::string warnings;
  Settings r = load_settings(dir.file("s.json"), &warnings);
  EXPECT_EQ(r.spec.m, ProblemSpec{}.m);
  EXPECT_EQ(r.spec.n, ProblemSpec{}.n);
  EXPECT_EQ(r.spec.k, 64);
  EXPECT_NE(warnings.find("m = -4"), std::string::npos);
  EXPECT_NE(warnings.find("input"), std::string::npos);
  { std::ofstream(dir.file("broken.json")) << "{not json"; }
  warnings.clear();
  Settings b = load_settings(dir.file("broken.json"), &warnings);
  EXPECT_EQ(b.spec, ProblemSpec{});
  EXPECT_NE(warnings.find("using defaults"), std::string::npos);
}

TEST(Settings, ConfigDirFollowsXdgAndNeverTheWorkingDirectory) {
  setenv("XDG_CONFIG_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(config_dir(), std::filesystem::path("/tmp/xdg-test/tilescope"));
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(config_dir(), std::filesystem::path("/home/someone/.config/tilescope"));
}

TEST(ExportPath, NeverReturnsAnExistingFile) {
  test::TempDir dir;
  auto a = unique_export_path(dir.path(), "shot", "png");
  { std::ofstream(a) << "x"; }
  auto b = unique_export_path(dir.path(), "shot", "png");
  EXPECT_NE(a, b);
  EXPECT_FALSE(std::filesystem::exists(b));
  EXPECT_EQ(b.extension(), ".png");
}

TEST(Settings, HeatmapDisplayRoundTripsAndBadValuesWarn) {
  test::TempDir dir;
  Settings s;
  s.matrices = {"magma", Reduce::Max, RangeMode::Manual, -2.5f, 7.0f};
  s.error = {"RdBu_r", Reduce::AbsMax, RangeMode::Symmetric, -1, 1};
  save_settings(dir.file("s.json"), s);
  std::string warnings;
  Settings r = load_settings(dir.file("s.json"), &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings;
  EXPECT_EQ(r.matrices.colormap, "magma");
  EXPECT_EQ(r.matrices.reduce, Reduce::Max);
  EXPECT_EQ(r.matrices.range, RangeMode::Manual);
  EXPECT_EQ(r.matrices.lo, -2.5f);
  EXPECT_EQ(r.matrices.hi, 7.0f);
  EXPECT_EQ(r.error.colormap, "RdBu_r");
  EXPECT_EQ(r.error.range, RangeMode::Symmetric);
  {
    std::ofstream(dir.file("bad.json"))
        << R"({"heatmaps": {"reduce": "median", "range": "log", "lo": "x"}, "error_map": 3})";
  }
  warnings.clear();
  Settings b = load_settings(dir.file("bad.json"), &warnings);
  EXPECT_EQ(b.matrices.reduce, Reduce::Mean);
  EXPECT_EQ(b.matrices.range, RangeMode::Auto);
  EXPECT_EQ(b.error.reduce, Reduce::AbsMax);  // the error map's own defaults
  EXPECT_NE(warnings.find("heatmaps.reduce"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("heatmaps.range"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("heatmaps.lo"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("error_map"), std::string::npos) << warnings;
}

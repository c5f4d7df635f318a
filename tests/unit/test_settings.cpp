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

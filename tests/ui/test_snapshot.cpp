// UI smoke test: `tilescope snapshot` renders the whole GUI offscreen; the PNG must show the panels and
// heatmaps that are not flat. Runs under Xvfb (see CMakeLists.txt); reports SKIP when no display exists at
// all.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.hpp"

using namespace ts;

namespace {

const std::string kBin = TILESCOPE_BIN;

struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> px;  // RGBA
  const uint8_t* at(int x, int y) const { return px.data() + (size_t(y) * size_t(w) + size_t(x)) * 4; }
};

Image load_png(const std::string& path) {
  Image im;
  int n = 0;
  uint8_t* data = stbi_load(path.c_str(), &im.w, &im.h, &n, 4);
  if (data) {
    im.px.assign(data, data + size_t(im.w) * size_t(im.h) * 4);
    stbi_image_free(data);
  }
  return im;
}

struct RegionStats {
  size_t distinct = 0;
  double luma_stddev = 0;
};

RegionStats region_stats(const Image& im, double x, double y, double w, double h) {
  std::set<uint32_t> colours;
  double sum = 0, sum2 = 0;
  size_t n = 0;
  for (int yy = int(y) + 2; yy < int(y + h) - 2; ++yy)
    for (int xx = int(x) + 2; xx < int(x + w) - 2; ++xx) {
      const uint8_t* p = im.at(xx, yy);
      colours.insert(uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]);
      const double l = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
      sum += l;
      sum2 += l * l;
      ++n;
    }
  RegionStats s;
  s.distinct = colours.size();
  if (n) s.luma_stddev = std::sqrt(std::max(0.0, sum2 / double(n) - (sum / double(n)) * (sum / double(n))));
  return s;
}

bool have_display() {
  const char* d = std::getenv("DISPLAY");
  return d && *d;
}

}  // namespace

TEST(Snapshot, ShowsEveryPanelAndNonUniformHeatmaps) {
  if (!have_display()) GTEST_SKIP() << "no X display (install xvfb so ctest can start one)";
  test::TempDir dir;
  const std::string png = dir.file("snap.png"), layout = dir.file("layout.json");
  auto r = test::run_cmd(
      kBin + " snapshot --backend cpu --m 150 --n 120 --k 90 --tile 8 --width 1400 --height 900 --out " +
      png + " --layout-json " + layout);
  ASSERT_EQ(r.code, 0) << r.output;
  Image im = load_png(png);
  ASSERT_EQ(im.w, 1400);
  ASSERT_EQ(im.h, 900);

  std::ifstream f(layout);
  nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["backend"], "cpu");
  const auto& rects = j["rects"];
  for (const char* panel : {"Occupancy", "Tile schedule"})
    EXPECT_EQ(j["states"][panel], "needs a GPU") << panel << ": the CPU backend must not show made-up data";
  for (const char* panel :
       {"Controls", "Matrices", "Result", "Status", "Timings", "Occupancy", "Tile schedule"}) {
    ASSERT_TRUE(rects.contains(panel)) << panel;
    const auto& rc = rects[panel];
    const double x = rc[0], y = rc[1], w = rc[2], h = rc[3];
    EXPECT_GE(x, 0);
    EXPECT_GE(y, 0);
    EXPECT_LE(x + w, im.w + 1);
    EXPECT_LE(y + h, im.h + 1);
    EXPECT_GT(w * h, 5000) << panel;
    // A panel with text and widgets in it is not a flat rectangle.
    const RegionStats st = region_stats(im, x, y, w, std::min(h, 200.0));
    EXPECT_GE(st.distinct, 3u) << panel;
    EXPECT_GT(st.luma_stddev, 2.0) << panel;
  }
  for (const char* map : {"heatmap A", "heatmap B", "heatmap C = A B", "heatmap C - reference"}) {
    ASSERT_TRUE(rects.contains(map)) << map;
    const auto& rc = rects[map];
    RegionStats s = region_stats(im, rc[0], rc[1], rc[2], rc[3]);
    EXPECT_GT(s.distinct, 50u) << map << ": the heatmap looks uniform";
    // The signed error map is mostly near the middle of a diverging map (light grey): less contrast.
    EXPECT_GT(s.luma_stddev, std::string(map).find("reference") != std::string::npos ? 2.0 : 10.0) << map;
  }
}

TEST(Snapshot, EglDeviceNeedsNoXServer) {
  test::TempDir dir;
  const std::string png = dir.file("egl.png"), layout = dir.file("layout.json");
  auto r =
      test::run_cmd("env -u DISPLAY -u WAYLAND_DISPLAY " + kBin +
                    " snapshot --gl egl --backend cpu --size 64 --out " + png + " --layout-json " + layout);
  if (r.code == 2 && r.output.find("EGL") != std::string::npos)
    GTEST_SKIP() << "no EGL device on this machine: " << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream f(layout);
  nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["gl_context"].get<std::string>().rfind("EGL device", 0), 0u) << j["gl_context"];
  EXPECT_EQ(j["interop"], false);
  EXPECT_NE(j["states"]["Matrices"].get<std::string>().find("host"), std::string::npos);
  EXPECT_EQ(j["states"]["Status"].get<std::string>().rfind("interop off: ", 0), 0u) << j["states"]["Status"];
  const Image im = load_png(png);
  const auto& rc = j["rects"]["heatmap C = A B"];
  EXPECT_GT(region_stats(im, rc[0], rc[1], rc[2], rc[3]).distinct, 50u);
}

TEST(Snapshot, ZoomShowsARegionAndBadZoomIsRefused) {
  if (!have_display()) GTEST_SKIP() << "no X display";
  test::TempDir dir;
  const std::string png = dir.file("zoom.png"), layout = dir.file("layout.json");
  auto r = test::run_cmd(kBin + " snapshot --backend cpu --size 96 --tile 8 --zoom 8,16,24,24 --out " + png +
                         " --layout-json " + layout);
  ASSERT_EQ(r.code, 0) << r.output;
  const Image im = load_png(png);
  std::ifstream f(layout);
  nlohmann::json j = nlohmann::json::parse(f);
  const auto& rc = j["rects"]["heatmap C = A B"];
  // 24 x 24 elements fill the plot: large blocks of one colour, still many colours overall.
  EXPECT_GT(region_stats(im, rc[0], rc[1], rc[2], rc[3]).distinct, 50u);
  for (const char* bad : {"0,0,0,5", "1,2,3", "90,0,10,10", "a,b,c,d", "-1,0,4,4"}) {
    auto b = test::run_cmd(kBin + " snapshot --backend cpu --size 96 --zoom " + std::string(bad) + " --out " +
                           dir.file("never.png"));
    EXPECT_EQ(b.code, 2) << bad << ": " << b.output;
    EXPECT_NE(b.output.find("--zoom"), std::string::npos) << b.output;
  }
}

TEST(Snapshot, ExportPanelsWritesPngAndCsvPairsAndNeverReplacesOne) {
  if (!have_display()) GTEST_SKIP() << "no X display";
  test::TempDir dir;
  const std::string out = dir.file("exports");
  for (int round = 0; round < 2; ++round) {
    auto r = test::run_cmd(kBin + " snapshot --backend cpu --size 64 --out " +
                           dir.file("s" + std::to_string(round) + ".png") + " --export-panels " + out);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("exported"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("Occupancy: nothing to export (needs a GPU)"), std::string::npos) << r.output;
  }
  // Two rounds of the Timings export: two PNG + CSV pairs with different names, both intact.
  std::vector<std::string> png, csv;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    ASSERT_EQ(name.rfind("tilescope-timings-", 0), 0u) << name;
    (e.path().extension() == ".png" ? png : csv).push_back(e.path().string());
  }
  ASSERT_EQ(png.size(), 2u);
  ASSERT_EQ(csv.size(), 2u);
  for (const auto& p : png) {
    const Image im = load_png(p);
    EXPECT_GT(im.w, 100);
    EXPECT_GT(im.h, 100);
    EXPECT_GT(region_stats(im, 0, 0, im.w, im.h).distinct, 3u) << p;
  }
  for (const auto& c : csv) {
    std::ifstream f(c);
    std::string header, row;
    std::getline(f, header);
    std::getline(f, row);
    EXPECT_NE(header.find("ms"), std::string::npos) << header;
    EXPECT_FALSE(row.empty()) << c << " has no data rows";
  }
  auto bad = test::run_cmd(kBin + " snapshot --backend cpu --size 16 --out " + dir.file("x.png") +
                           " --export-panels " + dir.file("s0.png"));
  EXPECT_EQ(bad.code, 2) << bad.output;
}

TEST(BenchHeatmap, RepeatKeepsRerunningWhileFramesAreDrawn) {
  if (!have_display()) GTEST_SKIP() << "no X display";
  auto r = test::run_cmd(kBin +
                         " bench heatmap --backend cpu --size 96 --view 64 --repeats 3 --frame-seconds 2 "
                         "--format json");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["interop"], false);
  EXPECT_FALSE(j["interop_why"].get<std::string>().empty());
  bool host = false;
  for (const auto& p : j["refresh"]) host |= p["path"] == "host fallback" && p["median_ms"].get<double>() > 0;
  EXPECT_TRUE(host) << j.dump(2);
  EXPECT_GT(j["frames"]["count"].get<int>(), 10);
  EXPECT_GE(j["frames"]["runs"].get<int>(), 2) << "Repeat did not re-run the problem";
  EXPECT_GT(j["frames"]["median_ms"].get<double>(), 0.0);
  for (const char* bad : {"--view 0", "--gl metal", "--frame-seconds -1", "--repeats x"}) {
    auto b = test::run_cmd(kBin + " bench heatmap --backend cpu --size 32 " + std::string(bad));
    EXPECT_EQ(b.code, 2) << bad << ": " << b.output;
  }
}

TEST(Snapshot, RefusesToOverwriteAnExistingFile) {
  if (!have_display()) GTEST_SKIP() << "no X display";
  test::TempDir dir;
  const std::string png = dir.file("exists.png");
  { std::ofstream(png) << "precious"; }
  auto r = test::run_cmd(kBin + " snapshot --backend cpu --size 16 --out " + png);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("already exists"), std::string::npos) << r.output;
  std::ifstream in(png);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
}

// UI smoke test: `tilescope snapshot` renders the whole GUI offscreen; the PNG must show the panels and
// heatmaps that are not flat. Runs under Xvfb (see CMakeLists.txt); reports SKIP when no display exists at
// all.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <stb_image.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/plots/colormap.hpp"
#include "core/plots/heatmap.hpp"
#include "test_util.hpp"

using namespace ts;

namespace {

// The binary under test: the build's, or TILESCOPE_TEST_BIN (a build folder copied to a GPU machine).
const std::string kBin =
    std::getenv("TILESCOPE_TEST_BIN") ? std::getenv("TILESCOPE_TEST_BIN") : TILESCOPE_BIN;
// The simulated link (tests/tools/link_sim): the build's, or TILESCOPE_LINK_SIM (beside it on a GPU machine).
const std::string kLinkSim =
    std::getenv("TILESCOPE_LINK_SIM") ? std::getenv("TILESCOPE_LINK_SIM") : LINK_SIM_BIN;

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

// The layout at a small window's (900 x 560, under the window's minimum; 960 x 600, the minimum), a laptop's,
// a desktop's and a 4K screen's size (and a 4K screen at twice the scale): every panel shown lies inside the
// window and apart from the others, none reports text cut off at its right edge (from 1280 x 720 up), every
// panel is shown or a tab of a shown dock node, and panels and heatmaps hold something (not flat rectangles).
// Every heatmap is at least as large as its colour scale is wide and at least 5.5 em (5 em under the minimum
// window), the plots of the Timings and Roofline panels fit their panel (nothing scrolled out of sight), and
// on the CPU backend the empty Tile schedule is a tab, not a third of the bottom row.
TEST(Snapshot, EveryPanelFitsAtEveryScreenSize) {
  if (!have_display()) GTEST_SKIP() << "no X display (install xvfb so ctest can start one)";
  struct Size {
    int w, h;
    const char* scale;
  };
  // Each size twice: the default arrangement, and with the panels that start as tabs (Sweep behind Controls,
  // Roofline behind Timings, Occupancy behind Result on a laptop) brought to the front.
  for (Size sz : {Size{900, 560, "1"}, Size{960, 600, "1"}, Size{1280, 720, "1"}, Size{1366, 768, "1"},
                  Size{1920, 1080, "1"}, Size{3840, 2160, "1"}, Size{3840, 2160, "2"}})
    for (const std::string front : {"", "Sweep,Roofline,Occupancy"}) {
      const bool readable = sz.w >= 1280 && sz.h >= 720, usual = sz.w >= 960 && sz.h >= 600;
      const double em = 16 * std::stod(sz.scale);
      SCOPED_TRACE(std::to_string(sz.w) + "x" + std::to_string(sz.h) + " at scale " + sz.scale +
                   (front.empty() ? "" : ", in front: " + front));
      test::TempDir dir;
      const std::string png = dir.file("snap.png"), layout = dir.file("layout.json");
      auto r = test::run_cmd(kBin + " snapshot --backend cpu --m 150 --n 120 --k 90 --tile 8 --width " +
                             std::to_string(sz.w) + " --height " + std::to_string(sz.h) + " --scale " +
                             sz.scale + " --out " + png + " --layout-json " + layout +
                             (front.empty() ? "" : " --front " + front));
      ASSERT_EQ(r.code, 0) << r.output;
      Image im = load_png(png);
      ASSERT_EQ(im.w, sz.w);
      ASSERT_EQ(im.h, sz.h);
      std::ifstream f(layout);
      nlohmann::json j = nlohmann::json::parse(f);
      EXPECT_EQ(j["backend"], "cpu");
      struct Shown {
        std::string name;
        double x, y, w, h;
      };
      std::vector<Shown> shown;
      for (const char* panel : {"Controls", "Matrices", "Result", "Status", "Timings", "Occupancy",
                                "Tile schedule", "Messages", "Sweep", "Roofline"}) {
        ASSERT_TRUE(j["panels"].contains(panel)) << panel;
        const auto& p = j["panels"][panel];
        if (!p["visible"].get<bool>()) {
          EXPECT_TRUE(p["docked"].get<bool>()) << panel << " is neither shown nor a tab of the dock space";
          continue;
        }
        const auto& rc = p["rect"];
        const double x = rc[0], y = rc[1], w = rc[2], h = rc[3];
        EXPECT_GE(x, -0.5) << panel;
        EXPECT_GE(y, -0.5) << panel;
        EXPECT_LE(x + w, im.w + 0.5) << panel;
        EXPECT_LE(y + h, im.h + 0.5) << panel;
        EXPECT_GT(w * h, 5000) << panel;
        if (readable)
          EXPECT_EQ(p["clipped_px"].get<double>(), 0.0) << panel << " cuts off text at its right edge";
        if (std::string(panel) == "Timings" || std::string(panel) == "Roofline" ||
            std::string(panel) == "Matrices")
          EXPECT_EQ(p["overflow_px"].get<double>(), 0.0) << panel << " has content scrolled out of sight";
        for (const Shown& o : shown)
          EXPECT_FALSE(x + 1 < o.x + o.w && o.x + 1 < x + w && y + 1 < o.y + o.h && o.y + 1 < y + h)
              << panel << " overlaps " << o.name;
        shown.push_back({panel, x, y, w, h});
        // A panel with text and widgets in it is not a flat rectangle.
        const RegionStats st = region_stats(im, x, y, w, std::min(h, 200.0));
        EXPECT_GE(st.distinct, 3u) << panel;
        EXPECT_GT(st.luma_stddev, 2.0) << panel;
      }
      // In a low window the plots are tabs beside the heatmaps (the same dock node), the heatmaps in front.
      const auto same_node = [&](const char* a, const char* b) {
        return j["panels"][a]["docked"].get<bool>() && j["panels"][a]["rect"] == j["panels"][b]["rect"];
      };
      for (const char* panel :
           front.empty() ? std::vector<const char*>{"Controls", "Matrices", "Result", "Status", "Timings"}
                         : std::vector<const char*>{"Sweep", "Roofline", "Occupancy"})
        EXPECT_TRUE(j["panels"][panel]["visible"].get<bool>() ||
                    (std::string(panel) == "Timings" && same_node("Timings", "Matrices")))
            << panel << " must be in front";
      // The CPU backend never shows a made-up schedule; its occupancy is the calculator's, labelled
      // theoretical.
      if (j["panels"]["Tile schedule"]["visible"].get<bool>())
        EXPECT_EQ(j["panels"]["Tile schedule"]["state"], "needs a GPU");
      if (j["panels"]["Occupancy"]["visible"].get<bool>())
        EXPECT_EQ(j["panels"]["Occupancy"]["state"].get<std::string>().rfind("theoretical: ", 0), 0u);
      if (front.empty()) {
        EXPECT_FALSE(j["panels"]["Tile schedule"]["visible"].get<bool>())
            << "the CPU backend's empty tile schedule must be a tab, not a panel of its own";
        EXPECT_TRUE(j["panels"]["Tile schedule"]["docked"].get<bool>());
      }
      // (Where the plots are tabs beside the heatmaps, the Roofline in front hides them.)
      if (!j["panels"]["Matrices"]["visible"].get<bool>()) continue;
      for (const char* map : {"heatmap A", "heatmap B", "heatmap C = A B", "heatmap C - reference"}) {
        ASSERT_TRUE(j["heatmaps"].contains(map)) << map;
        const auto& rc = j["heatmaps"][map]["plot"];
        // The map keeps its matrix's shape (150 x 90 is drawn tall and narrow): its longer side counts.
        const double least = usual ? std::max(5.5 * em, j["heatmaps"][map]["scale_w"].get<double>()) : 5 * em;
        EXPECT_GE(std::max(rc[2].get<double>(), rc[3].get<double>()), least)
            << map << " is " << rc[2] << " x " << rc[3]
            << ": smaller than its colour scale or too small to read";
        RegionStats s = region_stats(im, rc[0], rc[1], rc[2], rc[3]);
        EXPECT_GT(s.distinct, 50u) << map << ": the heatmap looks uniform";
        // The signed error map is mostly near the middle of a diverging map (light grey): less contrast.
        // Under the minimum window a pixel of C is the mean of about 2 x 2 elements: less spread.
        EXPECT_GT(s.luma_stddev, std::string(map).find("reference") != std::string::npos ? 2.0
                                 : usual                                                 ? 10.0
                                                                                         : 8.0)
            << map;
      }
    }
}

// The launch strip beside the Timings plot labels its axis along the plot's height: at 1366 x 768 the whole
// "launches (GFLOP/s)" is longer than the strip is tall and stood out above its frame; there it says the
// unit alone (whose prefix, G or M, follows the machine's speed). Checked in the layout (the label fits its
// plot's height; the whole label where there is room) and in the pixels: the band just above the strip's plot
// area, right of it where the label runs, holds no text.
TEST(Snapshot, TheLaunchStripsAxisLabelStaysInsideItsPlot) {
  if (!have_display()) GTEST_SKIP() << "no X display (install xvfb so ctest can start one)";
  struct Size {
    int w, h;
    const char* scale;
    bool whole;  // room for the whole label
  };
  for (Size sz : {Size{1366, 768, "1", false}, Size{1920, 1080, "1", true}, Size{3840, 2160, "2", true}}) {
    SCOPED_TRACE(std::to_string(sz.w) + "x" + std::to_string(sz.h));
    const double em = 16 * std::stod(sz.scale);
    test::TempDir dir;
    const std::string png = dir.file("snap.png"), layout = dir.file("layout.json");
    const auto r = test::run_cmd(kBin + " snapshot --backend cpu --size 256 --width " + std::to_string(sz.w) +
                                 " --height " + std::to_string(sz.h) + " --scale " + sz.scale +
                                 " --front Timings --out " + png + " --layout-json " + layout);
    ASSERT_EQ(r.code, 0) << r.output;
    const Image im = load_png(png);
    std::ifstream f(layout);
    const nlohmann::json j = nlohmann::json::parse(f);
    ASSERT_TRUE(j["plots"].contains("launches")) << j["plots"].dump();
    const auto& a = j["plots"]["launches"];
    const double x = a[0], y = a[1], w = a[2], h = a[3];
    const std::string label = j["plot_labels"]["launches"]["text"];
    const double label_px = j["plot_labels"]["launches"]["px"];
    EXPECT_FALSE(label.empty());
    EXPECT_LE(label_px, h) << label;
    // The unit's prefix follows the machine's speed (MFLOP/s under a sanitizer): only the form is checked.
    if (sz.whole)
      EXPECT_TRUE(label.rfind("launches (", 0) == 0 && label.size() > 17 &&
                  label.compare(label.size() - 7, 7, "FLOP/s)") == 0)
          << label;
    // Above the plot area, past the tick labels' half line, in the margin where the label runs, and below the
    // panel's row of controls (in the laptop layout the views' tabs share that row and stand over the strip).
    ASSERT_TRUE(j["plots"].contains("timings controls")) << j["plots"].dump();
    const auto& row = j["plots"]["timings controls"];
    const double below_row = double(row[1]) + double(row[3]) + 1;
    int text_pixels = 0;
    for (int yy = int(std::max(y - 1.25 * em, below_row)); yy < int(y - 0.65 * em); ++yy)
      for (int xx = int(x + w); xx < int(x + w + 3.5 * em) && xx < im.w; ++xx) {
        const uint8_t* p = im.at(xx, yy);
        text_pixels += 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2] > 140;
      }
    EXPECT_EQ(text_pixels, 0) << "the label stands out above the strip (" << label << ")";
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
    EXPECT_NE(r.output.find("Tile schedule: nothing to export (needs a GPU)"), std::string::npos) << r.output;
  }
  // Two rounds of the Timings export: two PNG + CSV pairs with different names, both intact. (The Occupancy
  // calculator exports its theoretical table too.)
  std::vector<std::string> png, csv;
  int occupancy = 0;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    // Names of their own kind: a panel export is never named like a figure (tilescope-timings-...).
    if (name.rfind("tilescope-panel-occupancy-", 0) == 0) {
      ++occupancy;
      continue;
    }
    ASSERT_EQ(name.rfind("tilescope-panel-timings-", 0), 0u) << name;
    (e.path().extension() == ".png" ? png : csv).push_back(e.path().string());
  }
  EXPECT_EQ(occupancy, 4);
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
  // Frames for 2 s and until Repeat re-ran twice; each re-run is taken by a frame of its own.
  EXPECT_GE(j["frames"]["runs"].get<int>(), 2) << "Repeat did not re-run the problem";
  EXPECT_GE(j["frames"]["count"].get<int>(), j["frames"]["runs"].get<int>());
  EXPECT_GT(j["frames"]["median_ms"].get<double>(), 0.0);
  for (const char* bad : {"--view 0", "--gl metal", "--frame-seconds -1", "--repeats x"}) {
    auto b = test::run_cmd(kBin + " bench heatmap --backend cpu --size 32 " + std::string(bad));
    EXPECT_EQ(b.code, 2) << bad << ": " << b.output;
  }
}

// The window's sweep drawn frame by frame (what tests/gpu/issue11ui_device.sh measures on a GPU): every point
// measured, frames recorded while it ran, the session written for `tilescope figure --session`.
TEST(BenchHeatmap, FramesWhileTheWindowsSweepRuns) {
  if (!have_display()) GTEST_SKIP() << "no X display";
  test::TempDir dir;
  auto r = test::run_cmd(kBin +
                         " bench heatmap --backend cpu --size 64 --view 64 --repeats 2 --frame-seconds 0 "
                         "--sweep 32:96:32 --sweep-kernels tiled --sweep-quick --sweep-session-out " +
                         dir.file("s.json") + " --format json");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["sweep"]["state"], "done");
  EXPECT_EQ(j["sweep"]["total"], 9);  // 3 sizes x tiled T=8, 16, 32
  EXPECT_EQ(j["sweep"]["done"], 9);
  EXPECT_GT(j["sweep"]["dram_gbs"].get<double>(), 0);
  EXPECT_EQ(j["frames"]["during"], "the window's sweep");
  EXPECT_GT(j["frames"]["count"].get<int>(), 0);
  std::ifstream f(dir.file("s.json"));
  const auto session = nlohmann::json::parse(f);
  EXPECT_EQ(session["records"].size(), 10u);  // the first run and the 9 points
  // The bench policy with the Sweep panel's seconds per point, and at most 2000 samples a point.
  auto bench = test::run_cmd(kBin +
                             " bench heatmap --backend cpu --size 32 --view 32 --repeats 1 --frame-seconds 0 "
                             "--sweep 32 --sweep-kernels tiled --sweep-min-time 0.05 --sweep-max-time 0.2 "
                             "--sweep-session-out " +
                             dir.file("b.json") + " --format json");
  ASSERT_EQ(bench.code, 0) << bench.output;
  std::ifstream fb(dir.file("b.json"));
  const auto bs = nlohmann::json::parse(fb);
  int swept = 0;
  for (const auto& rec : bs["records"]) {
    const std::string policy = rec["policy"];
    if (policy.rfind("bench", 0) != 0) continue;
    ++swept;
    EXPECT_NE(policy.find("limit 0.2 s"), std::string::npos) << policy;
    EXPECT_NE(policy.find("noise < 2 %"), std::string::npos) << policy;  // the CPU's bench policy
    EXPECT_LE(rec["samples_ms"].size(), 2000u);
  }
  EXPECT_EQ(swept, 3);
  for (const char* bad :
       {"--sweep 96:32:32", "--sweep 32:96:32 --sweep-kernels nope", "--sweep 32 --sweep-limit 0"}) {
    auto b =
        test::run_cmd(kBin + " bench heatmap --backend cpu --size 32 --frame-seconds 0 " + std::string(bad));
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

// [SECTION] Orientation: the pixel at each known (row, col) has the colour of that element. The same test
// covers the host path (CI: the CPU backend, Mesa's EGL) and the interop path (a GPU: the CUDA backend writes
// the textures), whichever the machine has.
namespace {

struct Map {
  double px_x0, px_y0, px_w, px_h, x0, x1, y0, y1;
  float lo, hi;
  // The pixel at the centre of element (row, col).
  std::pair<int, int> pixel(int64_t row, int64_t col) const {
    const double x = px_x0 + (double(col) + 0.5 - x0) / (x1 - x0) * px_w;
    const double y = px_y0 + (double(row) + 0.5 - y0) / (y1 - y0) * px_h;
    return {int(x), int(y)};
  }
};

Map map_of(const nlohmann::json& j, const std::string& name) {
  const auto& h = j["heatmaps"][name];
  return Map{h["plot"][0], h["plot"][1], h["plot"][2], h["plot"][3],  h["x0"],
             h["x1"],      h["y0"],      h["y1"],      h["shown_lo"], h["shown_hi"]};
}

// The colour the shader gives `value` on this map, and how far a pixel is from it (max channel difference).
int colour_distance(const Image& im, std::pair<int, int> px, const Colormap& cmap, const Map& m,
                    float value) {
  const auto want = colormap_color(cmap, value, m.lo, m.hi);
  const uint8_t* got = im.at(px.first, px.second);
  int d = 0;
  for (int c = 0; c < 3; ++c) d = std::max(d, std::abs(int(got[c]) - int(want[size_t(c)])));
  return d;
}

struct Snap {
  int code = 0;
  std::string output;
  Image image;
  nlohmann::json layout;
};

// `engine`: where it runs (this machine's engine by default, or --engine COMMAND).
Snap snapshot(const std::string& args, const test::TempDir& dir,
              const std::string& engine = "--backend auto") {
  Snap s;
  const std::string png = dir.file("o.png"), layout = dir.file("o.json");
  std::filesystem::remove(png);
  std::filesystem::remove(layout);
  auto r = test::run_cmd("env -u DISPLAY " + kBin + " snapshot --gl egl " + engine + " --out " + png +
                         " --layout-json " + layout + " " + args);
  s.code = r.code;
  s.output = r.output;
  if ((r.code == 0 || r.code == 1) && std::filesystem::exists(layout)) {  // 1: no CUDA backend writes none
    s.image = load_png(png);
    std::ifstream f(layout);
    s.layout = nlohmann::json::parse(f);
  }
  return s;
}

// Why a `--backend cuda` snapshot could not run here (no CUDA backend, not an sm_90 GPU for sm_90a code, no
// EGL device), or "" when it could.
std::string why_no_gpu_snapshot(const Snap& s) {
  for (const char* why : {"the CUDA backend is not available", "compute capability 9.0 only"})
    if (s.output.find(why) != std::string::npos) return s.output;
  if (s.code == 2 && s.output.find("EGL") != std::string::npos) return "no EGL device: " + s.output;
  return "";
}

}  // namespace

TEST(Orientation, RampAndIdentityPixelsSitAtTheirRowsAndColumns) {
  test::TempDir dir;
  // Small matrices, so every element is several pixels wide and its centre is clear of the plot's border.
  Snap s = snapshot("--m 24 --n 20 --k 12 --input ramp --width 1600 --height 1000", dir);
  if (s.code == 2 && s.output.find("EGL") != std::string::npos) GTEST_SKIP() << "no EGL device: " << s.output;
  ASSERT_EQ(s.code, 0) << s.output;
  std::printf("heatmaps through %s\n", s.layout["interop"].get<bool>() ? "CUDA-GL interop" : "host memory");
  const Colormap& viridis = *find_colormap("viridis");
  // A[i][j] = i: dark at the top, bright at the bottom; B[i][j] = j: dark at the left, bright at the right.
  const Map a = map_of(s.layout, "heatmap A"), b = map_of(s.layout, "heatmap B");
  EXPECT_EQ(a.lo, 0.0f);
  EXPECT_EQ(a.hi, 23.0f);
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {23, 0}, {0, 11}, {23, 11}, {6, 7}, {17, 2}})
    EXPECT_LE(colour_distance(s.image, a.pixel(row, col), viridis, a, float(row)), 2)
        << "A at " << row << "," << col;
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {11, 0}, {0, 19}, {11, 19}, {5, 8}})
    EXPECT_LE(colour_distance(s.image, b.pixel(row, col), viridis, b, float(col)), 2)
        << "B at " << row << "," << col;
  // C = K i j: zero along row 0 and column 0, its maximum at the bottom-right corner.
  const Map c = map_of(s.layout, "heatmap C = A B");
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {0, 19}, {23, 0}, {23, 19}, {12, 9}})
    EXPECT_LE(colour_distance(s.image, c.pixel(row, col), viridis, c, float(12 * row * col)), 2)
        << "C at " << row << "," << col;

  // Identity A: the diagonal runs from the top-left corner down to the right.
  Snap id = snapshot("--size 20 --input identity", dir);
  ASSERT_EQ(id.code, 0) << id.output;
  const Map ia = map_of(id.layout, "heatmap A");
  for (int64_t i : {0, 7, 13, 19}) {
    EXPECT_LE(colour_distance(id.image, ia.pixel(i, i), viridis, ia, 1.0f), 2) << "diagonal at " << i;
    EXPECT_LE(colour_distance(id.image, ia.pixel(i, 19 - i), viridis, ia, 0.0f), 2)
        << "anti-diagonal at " << i;
  }
}

// A remote engine's heatmaps are in the snapshot, whole: through link_sim (50 ms round trip, 20 Mbit/s) a
// ramp of 512 x 512 is drawn coarse first (nothing is measured on the link yet), and the picture written
// waits for the whole views, the right way up (A grows down the rows, B along the columns).
TEST(Orientation, ARemoteEnginesHeatmapsAreInTheSnapshotWhole) {
  test::TempDir dir;
  Snap s = snapshot("--size 512 --input ramp --kernel tiled --tile 16 --width 1600 --height 1000", dir,
                    std::string("--engine 'exec ") + kLinkSim + " --rtt-ms 50 --mbit 20 -- " + kBin +
                        " serve --backend cpu --quiet'");
  if (s.code == 2 && s.output.find("EGL") != std::string::npos) GTEST_SKIP() << "no EGL device: " << s.output;
  ASSERT_EQ(s.code, 0) << s.output;
  for (const char* name : {"heatmap A", "heatmap B", "heatmap C = A B", "heatmap C - reference"}) {
    SCOPED_TRACE(name);
    const auto& h = s.layout["heatmaps"][name];
    EXPECT_TRUE(h["drawn"].get<bool>());
    EXPECT_FALSE(h["pending"].get<bool>());
    EXPECT_FALSE(h["coarse"].get<bool>());
  }
  const auto& region = s.layout["heatmaps"]["heatmap A"]["region"];
  const int w = region[4], h = region[5];
  ASSERT_GT(int64_t(w) * h * 4, kCoarseFirstUnmeasuredBytes) << "a view the link asks coarse first";
  const Map a = map_of(s.layout, "heatmap A"), b = map_of(s.layout, "heatmap B");
  auto luma = [&](std::pair<int, int> px) {
    const uint8_t* p = s.image.at(px.first, px.second);
    return 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
  };
  for (int64_t i = 0; i + 128 < 512; i += 128) {
    EXPECT_LT(luma(a.pixel(i, 256)), luma(a.pixel(i + 128, 256))) << "A at row " << i;
    EXPECT_LT(luma(b.pixel(256, i)), luma(b.pixel(256, i + 128))) << "B at column " << i;
  }
}

TEST(Orientation, TheFloorKKernelsWrongRowsAreTheBottomBandOfTheErrorMap) {
  // K = 1000 is not a multiple of 32: K / TILE steps skip k = 992..999, so with A = I rows 992..999 of C are
  // zero instead of B's rows: the bottom band of the error map, and nothing above it.
  test::TempDir dir;
  // Rows 900..999 fill the maps (--zoom), so the band of 8 wrong rows is about 8 % of the plot's height.
  Snap s = snapshot("--size 1000 --kernel tiled_floork --tile 32 --input identity --zoom 900,0,100,100", dir);
  if (s.code == 2 && s.output.find("EGL") != std::string::npos) GTEST_SKIP() << "no EGL device: " << s.output;
  ASSERT_EQ(s.code, 1) << "the teaching kernel must fail verification: " << s.output;
  EXPECT_GE(s.layout["result"]["worst_row"].get<int64_t>(), 992);
  // Rows 992-999 (8000 elements), less the few where B's value is itself below the tolerance.
  EXPECT_GE(s.layout["result"]["bad_elements"].get<int64_t>(), 7950);
  EXPECT_LE(s.layout["result"]["bad_elements"].get<int64_t>(), 8000);
  const Map e = map_of(s.layout, "heatmap C - reference");
  const Colormap& map = default_diverging_colormap();
  const auto mid = colormap_color(map, 0.0f, e.lo, e.hi);
  auto off_mid = [&](int64_t row, int64_t col) {
    const auto px = e.pixel(row, col);
    const uint8_t* p = s.image.at(px.first, px.second);
    int d = 0;
    for (int c = 0; c < 3; ++c) d = std::max(d, std::abs(int(p[c]) - int(mid[size_t(c)])));
    return d;
  };
  EXPECT_EQ(e.y0, 900.0) << "the zoom shows rows 900 onwards at the top";
  // Element centres away from the 32 x 32 tile grid's lines (drawn at multiples of 32 at this zoom).
  int coloured_bottom = 0;
  for (int64_t col : {4, 12, 20, 40, 50, 70, 84}) {
    coloured_bottom += off_mid(996, col) > 40;
    EXPECT_LE(off_mid(903, col), 2) << "row 903 is right, so it is drawn in the middle colour";
    EXPECT_LE(off_mid(950, col), 2);
    EXPECT_LE(off_mid(988, col), 2) << "row 988 is right: the band must not reach up here";
  }
  EXPECT_GE(coloured_bottom, 6) << "the wrong rows 992-999 must show at the bottom of the error map";
}

// The tile grid: none over a whole 256^2 matrix of 16-tiles at a laptop's or a desktop's size (a line every
// 9 or 25 px striped A, B and C like data); zoomed in so a tile is many pixels wide, lines at the tile
// boundaries, fainter than the data. Identity A: every element off the diagonal is 0, so any pixel there that
// is not the colour of 0 is a grid line.
TEST(Orientation, TheTileGridShowsOnlyWhereATileIsManyPixelsWideAndIsFainterThanTheData) {
  test::TempDir dir;
  const Colormap& viridis = *find_colormap("viridis");
  auto luma = [](const uint8_t* p) { return 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2]; };
  auto luma_of = [](const std::array<uint8_t, 4>& c) {
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  for (const char* size : {"--width 1366 --height 768", "--width 1920 --height 1080"}) {
    SCOPED_TRACE(size);
    Snap s = snapshot(std::string("--size 256 --kernel tiled --tile 16 --input identity ") + size, dir);
    if (s.code == 2 && s.output.find("EGL") != std::string::npos)
      GTEST_SKIP() << "no EGL device: " << s.output;
    ASSERT_EQ(s.code, 0) << s.output;
    const Map a = map_of(s.layout, "heatmap A");
    ASSERT_EQ(a.x1 - a.x0, 256.0) << "the whole matrix";
    const auto zero = colormap_color(viridis, 0.0f, a.lo, a.hi);
    int off = 0, checked = 0;
    // Inside the plot, clear of the axes' tick marks (drawn inward from its edges).
    for (int y = int(a.px_y0) + 12; y < int(a.px_y0 + a.px_h) - 12; ++y)
      for (int x = int(a.px_x0) + 12; x < int(a.px_x0 + a.px_w) - 12; ++x) {
        const double row = a.y0 + (y + 0.5 - a.px_y0) / a.px_h * (a.y1 - a.y0);
        const double col = a.x0 + (x + 0.5 - a.px_x0) / a.px_w * (a.x1 - a.x0);
        if (std::fabs(row - col) < 6) continue;  // the diagonal, with a few pixels' margin
        const uint8_t* p = s.image.at(x, y);
        int d = 0;
        for (int c = 0; c < 3; ++c) d = std::max(d, std::abs(int(p[c]) - int(zero[size_t(c)])));
        if (d > 2 && off++ < 5)
          ADD_FAILURE() << "pixel " << x << "," << y << " (row " << row << ", col " << col << ") differs by "
                        << d;
        ++checked;
      }
    EXPECT_GT(checked, 5000);
    EXPECT_EQ(off, 0)
        << "pixels off the diagonal that are not the colour of 0: grid lines over the whole matrix";
  }

  // Rows and columns 0..47: 16 elements are about 45 px at this size.
  Snap z = snapshot(
      "--size 256 --kernel tiled --tile 16 --input identity --width 1366 --height 768 "
      "--zoom 0,0,48,48",
      dir);
  ASSERT_EQ(z.code, 0) << z.output;
  const Map a = map_of(z.layout, "heatmap A");
  ASSERT_LE(a.x1 - a.x0, 49.0);
  ASSERT_GE(a.px_w / (a.x1 - a.x0) * 16, 32.0) << "a tile must span many pixels here";
  const auto zero = colormap_color(viridis, 0.0f, a.lo, a.hi),
             one = colormap_color(viridis, 1.0f, a.lo, a.hi);
  const double data_contrast = std::fabs(luma_of(one) - luma_of(zero));
  // On A the grid marks the rows a block reads (every 16 rows): at column 45, rows 16 and 32 (off the
  // diagonal) carry a line, the rows between them none; along row 8 the column boundaries carry none.
  auto pixel_y = [&](double row) { return a.px_y0 + (row - a.y0) / (a.y1 - a.y0) * a.px_h; };
  auto pixel_x = [&](double col) { return a.px_x0 + (col - a.x0) / (a.x1 - a.x0) * a.px_w; };
  const int x = int(pixel_x(45.5));
  for (double boundary : {16.0, 32.0}) {
    SCOPED_TRACE(boundary);
    double step = 0;  // the strongest change from the colour of 0 on the pixels around the boundary
    for (int y = int(pixel_y(boundary)) - 1; y <= int(pixel_y(boundary)) + 1; ++y)
      step = std::max(step, std::fabs(luma(z.image.at(x, y)) - luma_of(zero)));
    EXPECT_GT(step, 10.0) << "no grid line at a tile boundary";
    EXPECT_LT(step, data_contrast / 3) << "the grid line must be fainter than the data (0 against 1)";
  }
  for (double row : {8.5, 24.5})
    EXPECT_LE(std::fabs(luma(z.image.at(x, int(pixel_y(row)))) - luma_of(zero)), 1.0) << "row " << row;
  const int y = int(pixel_y(8.5));
  for (double col : {16.0, 32.0})
    for (int xx = int(pixel_x(col)) - 1; xx <= int(pixel_x(col)) + 1; ++xx)
      EXPECT_LE(std::fabs(luma(z.image.at(xx, y)) - luma_of(zero)), 1.0) << "column " << col;
}

// [SECTION] Through a remote engine (--engine): the problem runs in `tilescope serve` (the CPU backend here),
// its matrices stay there, and each view comes reduced through the link to be drawn here. An engine command
// that is no engine, and --backend beside --engine: tests/unit/test_remote_engine.cpp.
namespace {

// The command's own refusal when it has no offscreen OpenGL (no EGL device, no X server): the test is
// skipped.
bool no_gl(const test::CmdResult& r) {
  return r.code == 2 && r.output.find("draws offscreen") != std::string::npos;
}

std::string text_of(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The number of requests `tilescope serve` says it answered, in its last words on standard error (-1: none).
int requests_answered(const std::string& said) {
  const std::string marker = " requests (";
  const size_t at = said.rfind(marker);
  if (at == std::string::npos) return -1;
  const size_t from = said.rfind(' ', at - 1) + 1;
  return std::stoi(said.substr(from, at - from));
}

}  // namespace

// The ramp problem run by the engine: the pixel of each element has its value's colour, as the Orientation
// test checks it in one process; the layout says the heatmaps came through the link, and the engine started
// on its CPU backend and answered requests.
TEST(Snapshot, ThroughAnEngineShowsTheEnginesMatricesElementByElement) {
  test::TempDir dir;
  const std::string png = dir.file("o.png"), layout = dir.file("o.json"), log = dir.file("serve.log");
  const auto r = test::run_cmd(
      kBin + " snapshot --m 24 --n 20 --k 12 --input ramp --width 1600 --height 1000 --out " + png +
      " --layout-json " + layout + " --engine 'exec " + kBin + " serve --backend cpu 2>" + log + "'");
  if (no_gl(r)) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string said = text_of(log);
  EXPECT_NE(said.find("tilescope serve: cpu engine on "), std::string::npos) << said;
  EXPECT_GE(requests_answered(said), 1) << said;
  std::ifstream lf(layout);
  const auto j = nlohmann::json::parse(lf);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["interop"], false);
  EXPECT_EQ(j["interop_why"], "the engine is remote: each view comes reduced through its link");
  EXPECT_EQ(j["result"]["passed"], true);
  const Image im = load_png(png);
  ASSERT_EQ(im.w, 1600);
  const Colormap& viridis = *find_colormap("viridis");
  // A[i][j] = i, B[i][j] = j, C = K i j (K = 12), as in
  // Orientation.RampAndIdentityPixelsSitAtTheirRowsAndColumns.
  const Map a = map_of(j, "heatmap A"), b = map_of(j, "heatmap B"), c = map_of(j, "heatmap C = A B");
  EXPECT_EQ(a.lo, 0.0f);
  EXPECT_EQ(a.hi, 23.0f);
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {23, 0}, {0, 11}, {23, 11}, {6, 7}, {17, 2}})
    EXPECT_LE(colour_distance(im, a.pixel(row, col), viridis, a, float(row)), 2)
        << "A at " << row << "," << col;
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {11, 0}, {0, 19}, {11, 19}, {5, 8}})
    EXPECT_LE(colour_distance(im, b.pixel(row, col), viridis, b, float(col)), 2)
        << "B at " << row << "," << col;
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {0, 19}, {23, 0}, {23, 19}, {12, 9}})
    EXPECT_LE(colour_distance(im, c.pixel(row, col), viridis, c, float(12 * row * col)), 2)
        << "C at " << row << "," << col;
}

// bench heatmap through an engine behind the tests' simulated link (40 ms round trip, tests/tools/link_sim):
// its report names the engine and the bytes a refresh moves over the link, the views are reduced in the
// engine, and the round trip it measured is at least the link's (a lower bound that holds on any machine).
// Without the link, the Markdown report says the same in its lines.
TEST(BenchHeatmap, ThroughAnEngineReportsTheEngineAndItsLink) {
  const std::string engine =
      "exec " + kLinkSim + " --rtt-ms 40 --mbit 0 -- " + kBin + " serve --backend cpu --quiet";
  auto r = test::run_cmd(kBin +
                         " bench heatmap --size 96 --view 64 --repeats 2 --frame-seconds 0 --format json "
                         "--engine '" +
                         engine + "'");
  if (no_gl(r)) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  const size_t open = r.output.find('{'), close = r.output.rfind('}');
  ASSERT_TRUE(open != std::string::npos && close != std::string::npos) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(open, close - open + 1));
  ASSERT_TRUE(j.contains("engine")) << j.dump(2);
  EXPECT_EQ(j["engine"]["command"], engine);
  EXPECT_GE(j["engine"]["rtt_ms"].get<double>(), 40.0) << "the round trip is the link's at least";
  EXPECT_GT(j["engine"]["refresh_link_bytes"]["in"].get<double>(), 0.0);
  EXPECT_EQ(j["device"].get<std::string>().rfind("CPU (", 0), 0u) << j["device"];
  EXPECT_EQ(j["interop"], false);
  EXPECT_EQ(j["interop_why"], "the engine is remote: each view comes reduced through its link");
  bool reduced_there = false;
  for (const auto& p : j["refresh"])
    reduced_there |= p["what"].get<std::string>().find("LOD in the remote engine") != std::string::npos &&
                     p["median_ms"].get<double>() > 0;
  EXPECT_TRUE(reduced_there) << j["refresh"].dump(2);

  const std::string direct = "exec " + kBin + " serve --backend cpu --quiet";
  r = test::run_cmd(kBin + " bench heatmap --size 96 --view 64 --repeats 2 --frame-seconds 0 --engine '" +
                    direct + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("- engine: `" + direct + "`, round trip "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| host fallback | "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("LOD in the remote engine"), std::string::npos) << r.output;
}

// [SECTION] The feeding tiles, drawn over the maps. tiled_floork, TILE 32, M = N = K = 70, A a ramp
// (A[i][j] = i): tile (1, 0) of C reads A's rows 32-63 in three pieces of K, 0-31, 32-63 and 64-69; the
// kernel makes K / TILE = 2 steps, so the third piece is never loaded. At step 0 the first piece is filled
// in the pieces' yellow, the third in red, and A outside the tile's row panel is drawn as it is.
TEST(Orientation, TheFeedingPiecesOfATileSitOnTheirRowsAndTheDroppedPieceIsRed) {
  test::TempDir dir;
  Snap s = snapshot(
      "--size 70 --kernel tiled_floork --tile 32 --input ramp --feed-tile 1,0,0 --width 1600 "
      "--height 1000",
      dir);
  if (s.code == 2 && s.output.find("EGL") != std::string::npos) GTEST_SKIP() << "no EGL device: " << s.output;
  ASSERT_EQ(s.code, 1) << "the teaching kernel fails verification at K = 70: " << s.output;
  const Colormap& viridis = *find_colormap("viridis");
  const Map a = map_of(s.layout, "heatmap A"), b = map_of(s.layout, "heatmap B");
  ASSERT_EQ(a.x1 - a.x0, 70.0) << "the whole matrix";
  // Outside the row panel (rows 0-31 and 64-69): the heatmap's own colours.
  for (auto [row, col] : {std::pair<int64_t, int64_t>{10, 16}, {20, 66}, {67, 40}, {2, 2}})
    EXPECT_LE(colour_distance(s.image, a.pixel(row, col), viridis, a, float(row)), 2)
        << "A at " << row << "," << col << " is outside the tile's row panel";
  // Step 0's piece (rows 32-63, K 0-31) is tinted yellow: redder and less blue than the element's colour.
  auto tint = [&](const Image& im, const Map& m, int64_t row, int64_t col, float value) {
    const auto want = colormap_color(viridis, value, m.lo, m.hi);
    const uint8_t* got = im.at(m.pixel(row, col).first, m.pixel(row, col).second);
    return std::array<int, 3>{int(got[0]) - int(want[0]), int(got[1]) - int(want[1]),
                              int(got[2]) - int(want[2])};
  };
  for (auto [row, col] : {std::pair<int64_t, int64_t>{40, 8}, {56, 24}}) {
    const auto d = tint(s.image, a, row, col, float(row));
    EXPECT_GT(d[0], 15) << "A at " << row << "," << col << ": step 0's piece, yellow";
    EXPECT_LT(d[2], -5) << "A at " << row << "," << col;
  }
  // The piece at K 32-63 is not in shared memory at step 0 (one stage): untinted inside its outline.
  EXPECT_LE(colour_distance(s.image, a.pixel(40, 48), viridis, a, 40.0f), 2);
  // The never-loaded piece (K 64-69) is red: green down everywhere, red up where the ramp is not red already.
  for (int64_t row : {34, 48, 60}) {
    const auto d = tint(s.image, a, row, 67, float(row));
    EXPECT_LT(d[1], -10) << "A at row " << row << ", K 67: never loaded";
  }
  EXPECT_GT(tint(s.image, a, 34, 67, 34.0f)[0], 30) << "A at row 34, K 67: never loaded";
  // In B (B[i][j] = j), the same piece is rows 64-69 of columns 0-31; rows 0-31 are step 0's.
  const auto bd = tint(s.image, b, 66, 4, 4.0f);
  EXPECT_GT(bd[0], 30) << "B at row 66: never loaded";
  const auto b0 = tint(s.image, b, 12, 20, 20.0f);
  EXPECT_GT(b0[0], 15) << "B's step 0 piece";
  EXPECT_LE(colour_distance(s.image, b.pixel(12, 50), viridis, b, 50.0f), 2) << "B outside the column panel";
}

// The Occupancy panel on an H100 compares the driver's figures with the build-time table's row of the
// function the launch ran. wgmma_tf32 tile 128 at 1000^3 cuts K into 2 slices and runs its split variant
// (162 registers where the unsplit kernel has 122): its own row matches, said as the variant's. At 2048^3 the
// unsplit kernel runs, and its main row matches. Before, the panel compared the split launch with the main
// row and said the figures DIFFER.
TEST(Occupancy, TheBuildsRowIsTheFunctionTheLaunchRan) {
  test::TempDir dir;
  for (const char* size : {"1000", "2048"}) {
    SCOPED_TRACE(size);
    const Snap s = snapshot(std::string("--kernel wgmma_tf32 --tile 128 --size ") + size +
                                " --front Occupancy --width 1920 --height 1080",
                            dir, "--backend cuda");
    if (const std::string why = why_no_gpu_snapshot(s); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(s.code, 0) << s.output;
    const auto& p = s.layout["panels"]["Occupancy"];
    EXPECT_TRUE(p["visible"].get<bool>());
    EXPECT_EQ(p["state"].get<std::string>(), "shown; build's figures: match") << p["text"];
    const std::string text = p["text"];
    const bool split = std::string(size) == "1000";
    EXPECT_EQ(text.find("for the function this launch ran") != std::string::npos, split) << text;
    EXPECT_EQ(text.find("DIFFER"), std::string::npos) << text;
    // The panel is drawn: not a flat rectangle.
    const auto& r = p["rect"];
    EXPECT_GT(region_stats(s.image, r[0], r[1], r[2], r[3]).distinct, 20u);
  }
}

// Stream-K where it shares tiles (3000^3: 24 tiles past two whole waves) plans its blocks for the SMs: the
// panel counts no waves. At 2048^3 (a last wave 97 % full) it is rung 9's launch alone, one block a tile,
// and the panel gives its waves.
TEST(Occupancy, AStreamKLaunchThatSharesTilesHasNoWaves) {
  test::TempDir dir;
  for (const char* size : {"3000", "2048"}) {
    SCOPED_TRACE(size);
    const Snap s = snapshot(std::string("--kernel streamk --tile 256 --size ") + size +
                                " --front Occupancy --width 1920 --height 1080",
                            dir, "--backend cuda");
    if (const std::string why = why_no_gpu_snapshot(s); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(s.code, 0) << s.output;
    const auto& p = s.layout["panels"]["Occupancy"];
    ASSERT_TRUE(p.contains("facts")) << p.dump();
    const std::string waves = p["facts"]["waves"], grid = p["facts"]["grid"];
    const bool shared = std::string(size) == "3000";
    EXPECT_EQ(waves.rfind("none: ", 0) == 0, shared) << waves;
    EXPECT_EQ(grid.find("planned for the SMs") != std::string::npos, shared) << grid;
    if (!shared) EXPECT_NE(waves.find("full"), std::string::npos) << waves;  // "0.97: one wave, 97 % full"
    EXPECT_EQ(p["clipped_px"].get<double>(), 0.0) << grid;
  }
}

TEST(Snapshot, FeedTileAndReplayAtAreChecked) {
  test::TempDir dir;
  for (const char* bad :
       {"--kernel tiled --tile 16 --feed-tile 9,0", "--kernel tiled --tile 16 --feed-tile 0",
        "--kernel tiled --tile 16 --feed-tile a,b", "--kernel tiled --tile 16 --feed-tile 0,0,9",
        "--kernel tiled --tile 16 --feed-tile -1,0", "--backend cpu --kernel tiled --tile 16 --replay-at 5",
        "--backend cpu --kernel tiled --tile 16 --replay-at x",
        "--backend cpu --kernel tiled --tile 16 --replay-at 150%"}) {
    auto r =
        test::run_cmd(kBin + " snapshot --size 64 " + std::string(bad) + " --out " + dir.file("never.png"));
    EXPECT_EQ(r.code, 2) << bad << ": " << r.output;
    EXPECT_TRUE(r.output.find("--feed-tile") != std::string::npos ||
                r.output.find("--replay-at") != std::string::npos)
        << bad << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("never.png")));
  }
}

// `tilescope figure`: one plot, offscreen, as PNG + CSV + JSON. The PNG has the size asked for and shows the
// plotted series (pixels of each series' colour inside the plot area the sidecar names); the sidecar holds
// every field of the figure's metadata and every number behind the plot; exports never overwrite each other;
// bad input is refused with exit code 2 before anything is written. Needs an offscreen GL context (EGL
// through Mesa or a GPU, else the X server ctest starts): SKIP for itself when there is none.
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <stb_image.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/engine/gpu_catalog.hpp"
#include "core/engine/impossible.hpp"
#include "core/plots/plot_data.hpp"
#include "kernels/engine/registry.hpp"
#include "core/io/session.hpp"
#include "core/engine/stats.hpp"
#include "test_util.hpp"

using namespace ts;
namespace fs = std::filesystem;

namespace {

const std::string kBin =
    std::getenv("TILESCOPE_TEST_BIN") ? std::getenv("TILESCOPE_TEST_BIN") : TILESCOPE_BIN;

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

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The figure files in a folder, by extension.
std::map<std::string, std::vector<fs::path>> figure_files(const fs::path& dir) {
  std::map<std::string, std::vector<fs::path>> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out[e.path().extension().string()].push_back(e.path());
  return out;
}

// Pixels inside `area` within `tol` (per channel) of `rgb`.
int pixels_of(const Image& im, const nlohmann::json& area, const nlohmann::json& rgb, int tol = 10) {
  const int x0 = std::max(0, int(area[0].get<double>())), y0 = std::max(0, int(area[1].get<double>()));
  const int x1 = std::min(im.w, int(area[0].get<double>() + area[2].get<double>()));
  const int y1 = std::min(im.h, int(area[1].get<double>() + area[3].get<double>()));
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const uint8_t* p = im.at(x, y);
      bool near = true;
      for (int c = 0; c < 3; ++c) near &= std::abs(int(p[c]) - rgb[size_t(c)].get<int>()) <= tol;
      n += near;
    }
  return n;
}

RunResult point(const std::string& kernel, int tile, int64_t n, double median_ms) {
  RunResult r;
  r.spec.kernel = kernel;
  r.spec.tile = tile;
  r.spec.m = r.spec.n = r.spec.k = n;
  r.backend = "cuda";
  r.device = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  r.policy = MeasurePolicy::bench().describe();
  r.samples_ms = {median_ms * 0.99, median_ms, median_ms * 1.02, median_ms * 1.01};
  r.stats = summarize(r.samples_ms);
  r.error.passed = true;
  r.clock = summarize_clocks({{1980, ""}, {1965, ""}}, 1980);
  if (kernel != "cublas") {
    r.tile_m = r.tile_n = tile;
    OccupancyReport o;
    o.blocks_per_sm = 2;
    r.occupancy = o;
  }
  r.date = "2025-02-01T10:00:00Z";
  return r;
}

// A sweep as `tilescope bench --session-out` would write it on an H100: tiled T=32 and cuBLAS, 256..4096.
Session h100_sweep() {
  DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H100 80GB HBM3";
  d.label = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  d.sm = 90;
  d.sm_count = 132;
  d.max_sm_clock_mhz = 1980;
  d.driver = "580.159.04, CUDA 13.0";
  d.cuda_runtime = "13.0";
  d.peak_fp32_tflops = 66.9;
  d.peak_tf32_tflops = 494.7;
  d.datasheet_bandwidth_gbs = 3352;
  Session s = Session::for_device(d);
  s.dram_gbs = 3010;
  for (int64_t n = 256; n <= 4096; n += 256) {
    const double n3 = double(n) * double(n) * double(n);
    s.add(point("tiled", 32, n, 2 * n3 / 8.9e9 * (1 + 0.1 * double((n / 256) % 3))));
    s.add(point("cublas", 0, n, 2 * n3 / 51e9));
  }
  return s;
}

struct Outcome {
  int code = 0;
  std::string output;
};

Outcome figure(const std::string& args) {
  const auto r = test::run_cmd(kBin + " figure " + args);
  return {r.code, r.output};
}

bool no_gl(const Outcome& r) {
  return r.code == 2 && r.output.find("offscreen") != std::string::npos;
}

}  // namespace

TEST(Figure, OfASessionHasTheRequestedSizeTheSeriesInsideThePlotAndASidecarWithEveryField) {
  test::TempDir dir;
  const Session s = h100_sweep();
  save_session(dir.path() / "h100.json", s, false);
  const fs::path out = dir.path() / "figures";
  const Outcome r =
      figure("--plot timings --session " + dir.file("h100.json") +
             " --kernel tiled --tile 32 --size 1024 --figure-size 1600x900 --out-dir " + out.string());
  if (no_gl(r)) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  auto files = figure_files(out);
  ASSERT_EQ(files[".png"].size(), 1u);
  ASSERT_EQ(files[".csv"].size(), 1u);
  ASSERT_EQ(files[".json"].size(), 1u);
  const Image im = load_png(files[".png"][0].string());
  EXPECT_EQ(im.w, 1600);
  EXPECT_EQ(im.h, 900);
  const nlohmann::json j = nlohmann::json::parse(read_file(files[".json"][0]));
  // Every field of the metadata, with what the figure shows.
  for (const char* key :
       {"plot",     "title",        "caption",      "theme",     "width",  "height",    "backend", "device",
        "driver",   "cuda_runtime", "sm_clock_mhz", "throttled", "kernel", "tile",      "m",       "n",
        "k",        "input",        "seed",         "policy",    "sweep",  "tilescope", "commit",  "date",
        "overlays", "notes"})
    EXPECT_TRUE(j["meta"].contains(key)) << key;
  EXPECT_EQ(j["meta"]["plot"], "timings");
  EXPECT_EQ(j["meta"]["width"], 1600);
  EXPECT_EQ(j["meta"]["height"], 900);
  EXPECT_EQ(j["meta"]["device"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j["meta"]["kernel"], "tiled");
  EXPECT_EQ(j["meta"]["tile"], 32);
  EXPECT_EQ(j["meta"]["n"], 1024);
  EXPECT_NEAR(j["meta"]["sm_clock_mhz"].get<double>(), 1972.5, 1e-9);
  EXPECT_NE(j["meta"]["caption"].get<std::string>().find("580.159.04"), std::string::npos);
  // Every number behind the plot, bit for bit: the tiled T=32 curve's medians are the session's.
  std::map<std::string, nlohmann::json> series;
  for (const auto& x : j["series"]) series[x["label"]] = x;
  ASSERT_TRUE(series.count("tiled T=32"));
  ASSERT_TRUE(series.count("cublas"));
  const auto& rows = series["tiled T=32"]["rows"];
  ASSERT_EQ(rows.size(), 16u);
  EXPECT_EQ(rows[3][1].get<double>(), s.records[6].stats.median);  // N = 1024, the 7th record
  bool marks = false;
  for (const auto& [label, x] : series) marks |= label.rfind("wave marks", 0) == 0 && !x["rows"].empty();
  EXPECT_TRUE(marks) << "the H100 session's records give wave marks";
  // The pixels: each series' colour inside the plot area, many times over (lines and markers).
  const auto& area = j["render"]["plot_area"];
  ASSERT_EQ(area.size(), 4u);
  EXPECT_GT(area[2].get<double>(), 400);
  EXPECT_GT(area[3].get<double>(), 300);
  EXPECT_LE(area[0].get<double>() + area[2].get<double>(), 1600);
  for (const char* label : {"tiled T=32", "cublas"}) {
    ASSERT_TRUE(j["render"]["series_colours"].contains(label)) << label;
    EXPECT_GT(pixels_of(im, area, j["render"]["series_colours"][label]), 150) << label << " is not drawn";
  }
  // And the CSV holds the same rows with the metadata in front.
  const std::string csv = read_file(files[".csv"][0]);
  EXPECT_NE(csv.find("# device,NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(csv.find("series,x,median_ms"), std::string::npos);
}

// The plot's edges do not cut the ringed current point or the markers in half: with the current point the
// highest and rightmost of all (tiled T=32 at 4096, faster at every size) and the slowest point the lowest,
// the ring lies wholly inside the plot area, and no marker or line of the curve touches its bottom edge.
TEST(Figure, TheRingedCurrentPointAndTheEndMarkersAreDrawnWhole) {
  test::TempDir dir;
  Session s = h100_sweep();
  s.records.clear();
  for (int64_t n = 256; n <= 4096; n += 256) {
    const double n3 = double(n) * double(n) * double(n), tflops_at = 5.0 + double(n) / 512.0;
    s.add(point("tiled", 32, n, 2 * n3 / (tflops_at * 1e9)));
  }
  save_session(dir.path() / "rising.json", s, false);
  const fs::path out = dir.path() / "figures";
  const Outcome r =
      figure("--plot timings --session " + dir.file("rising.json") +
             " --kernel tiled --tile 32 --size 4096 --figure-size 1600x900 --out-dir " + out.string());
  if (no_gl(r)) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  const auto files = figure_files(out);
  const Image im = load_png(files.at(".png").at(0).string());
  const nlohmann::json j = nlohmann::json::parse(read_file(files.at(".json").at(0)));
  const auto& a = j["render"]["plot_area"];
  const int x0 = int(std::ceil(a[0].get<double>())), y0 = int(std::ceil(a[1].get<double>()));
  const int x1 = int(a[0].get<double>() + a[2].get<double>()),
            y1 = int(a[1].get<double>() + a[3].get<double>());
  const nlohmann::json ring = {89, 166, 255};  // the dark theme's plot_current (0.35, 0.65, 1.00)
  const nlohmann::json curve = j["render"]["series_colours"]["tiled T=32"];
  auto count = [&](const nlohmann::json& rgb, int xa, int ya, int xb, int yb) {
    return pixels_of(im, nlohmann::json::array({xa, ya, xb - xa, yb - ya}), rgb, 8);
  };
  EXPECT_GT(count(ring, x0, y0, x1, y1), 20) << "the current point is ringed";
  EXPECT_EQ(count(ring, x0, y0, x1, y0 + 2), 0) << "the ring touches the plot's top edge";
  EXPECT_EQ(count(ring, x1 - 2, y0, x1, y1), 0) << "the ring touches the plot's right edge";
  EXPECT_GT(count(curve, x0, y0, x1, y1), 150);
  EXPECT_EQ(count(curve, x0, y1 - 2, x1, y1), 0) << "the lowest marker touches the plot's bottom edge";
  EXPECT_EQ(count(curve, x0, y0, x0 + 2, y1), 0) << "the first marker touches the plot's left edge";
}

// A point faster than the device can go (RunRecord::impossible) is drawn apart: a hollow red circle where its
// FLOP/s puts it (red around the spot, none at its centre), named in the legend's colours and in the notes,
// and the curve's line and its numbers do not take it (the newest point at that size, yet not on the line).
TEST(Figure, AnImpossiblePointIsAHollowRedCircleOffItsCurve) {
  test::TempDir dir;
  Session s = h100_sweep();
  // tiled T=32 at 4096^3, newer than the sweep's, at 90 TFLOP/s on the H100's 66.9 TFLOP/s FP32 roof.
  RunResult fake = point("tiled", 32, 4096, 2.0 * 4096.0 * 4096.0 * 4096.0 / 90e12 * 1e3);
  fake.date = "2025-02-01T11:00:00Z";
  fake.impossible = impossible_reason(fake.spec, false, fake.stats.median, s.device);
  ASSERT_FALSE(fake.impossible.empty());
  s.add(fake);
  save_session(dir.path() / "h100.json", s, false);
  const fs::path out = dir.path() / "figures";
  const Outcome r =
      figure("--plot timings --y flops --session " + dir.file("h100.json") +
             " --kernel tiled --tile 32 --size 1024 --figure-size 1600x900 --out-dir " + out.string());
  if (no_gl(r)) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  const auto files = figure_files(out);
  const Image im = load_png(files.at(".png").at(0).string());
  const nlohmann::json j = nlohmann::json::parse(read_file(files.at(".json").at(0)));
  // Named: in the legend's colours, in the notes, in a series of its own; the curve's rows keep the sweep's.
  ASSERT_TRUE(j["render"]["series_colours"].contains(kImpossibleLabel));
  bool noted = false;
  for (const auto& n : j["meta"]["notes"])
    noted |= n.get<std::string>().find("hollow red") != std::string::npos;
  EXPECT_TRUE(noted);
  std::map<std::string, nlohmann::json> series;
  for (const auto& x : j["series"]) series[x["label"]] = x;
  ASSERT_TRUE(series.count(std::string("tiled T=32: ") + kImpossibleLabel));
  for (const auto& row : series["tiled T=32"]["rows"]) EXPECT_NE(row[1].get<double>(), fake.stats.median);
  // Where 90 TFLOP/s at 4096 lands in the plot (linear axes: the sweep is 256 apart, FLOP/s in TFLOP/s).
  const auto& a = j["render"]["plot_area"];
  ASSERT_TRUE(j["render"].contains("limits"));
  const auto& lim = j["render"]["limits"][0];
  const double x0 = lim[0], x1 = lim[1], y0 = lim[2], y1 = lim[3];
  ASSERT_GT(90.0, y0);
  ASSERT_LT(90.0, y1);
  const int cx = int(a[0].get<double>() + (4096 - x0) / (x1 - x0) * a[2].get<double>());
  const int cy = int(a[1].get<double>() + (y1 - 90.0) / (y1 - y0) * a[3].get<double>());
  const nlohmann::json red = j["render"]["series_colours"][kImpossibleLabel];
  auto count = [&](int half) {
    return pixels_of(im, nlohmann::json::array({cx - half, cy - half, 2 * half + 1, 2 * half + 1}), red, 12);
  };
  EXPECT_GT(count(16), 10) << "no red ring at (" << cx << ", " << cy << ")";
  EXPECT_EQ(count(1), 0) << "the circle is filled: it should be hollow";
  // And that red is the point's alone: none elsewhere in the plot.
  EXPECT_EQ(pixels_of(im, a, red, 12), count(16));
}

TEST(Figure, TheLightThemeAndTheLadderAndTheRooflineOfASession) {
  test::TempDir dir;
  save_session(dir.path() / "h100.json", h100_sweep(), false);
  const fs::path out = dir.path() / "figures";
  for (const char* plot : {"bars", "roofline"}) {
    const Outcome r = figure(std::string("--plot ") + plot + " --theme light --session " +
                             dir.file("h100.json") + " --size 4096 --out-dir " + out.string());
    if (no_gl(r)) GTEST_SKIP() << r.output;
    ASSERT_EQ(r.code, 0) << r.output;
  }
  auto files = figure_files(out);
  ASSERT_EQ(files[".png"].size(), 2u);
  for (const auto& json : files[".json"]) {
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    EXPECT_EQ(j["meta"]["theme"], "light");
    fs::path png = json;
    png.replace_extension(".png");
    const Image im = load_png(png.string());
    EXPECT_EQ(im.w, 1920);
    EXPECT_EQ(im.h, 1080);
    EXPECT_GT(im.at(4, 4)[0], 200) << "a light figure has a light background";
    const auto& area = j["render"]["plot_area"];
    const std::string plot = j["meta"]["plot"];
    const char* label = plot == "bars" ? "tiled T=32" : "cublas";
    EXPECT_GT(pixels_of(im, area, j["render"]["series_colours"][label]), 100) << plot << ": " << label;
    if (plot == "roofline") {
      bool estimate = false;
      for (const auto& n : j["meta"]["notes"])
        estimate |= n.get<std::string>().find("ESTIMATE") != std::string::npos;
      EXPECT_TRUE(estimate);
    } else {
      EXPECT_EQ(j["series"].size(), 2u);  // tiled T=32 and cuBLAS at 4096^3
    }
  }
}

TEST(Figure, TwoExportsNeverOverwriteEachOther) {
  test::TempDir dir;
  save_session(dir.path() / "h100.json", h100_sweep(), false);
  const fs::path out = dir.path() / "figures";
  const std::string args = "--plot bars --figure-size 640x480 --session " + dir.file("h100.json") +
                           " --size 1024 --out-dir " + out.string();
  const Outcome first = figure(args);
  if (no_gl(first)) GTEST_SKIP() << first.output;
  ASSERT_EQ(first.code, 0) << first.output;
  const auto before = figure_files(out);
  ASSERT_EQ(before.at(".png").size(), 1u);
  const std::string png1 = read_file(before.at(".png")[0]), json1 = read_file(before.at(".json")[0]);
  const Outcome second = figure(args + " --title Again");
  ASSERT_EQ(second.code, 0) << second.output;
  const auto after = figure_files(out);
  ASSERT_EQ(after.at(".png").size(), 2u);
  ASSERT_EQ(after.at(".csv").size(), 2u);
  ASSERT_EQ(after.at(".json").size(), 2u);
  EXPECT_EQ(read_file(before.at(".png")[0]), png1) << "the first figure was overwritten";
  EXPECT_EQ(read_file(before.at(".json")[0]), json1);
  int titled = 0;
  for (const auto& j : after.at(".json"))
    titled += nlohmann::json::parse(read_file(j))["meta"]["title"] == "Again";
  EXPECT_EQ(titled, 1);
}

// Names are taken exclusively: a name already taken gives -2 (no race on the clock: the first name of every
// second the run could take is made beforehand), and runs started at once into one folder all succeed.
TEST(Figure, RunsIntoOneFolderInTheSameSecondAllSucceedUnderNamesOfTheirOwn) {
  test::TempDir dir;
  save_session(dir.path() / "h100.json", h100_sweep(), false);
  const fs::path out = dir.path() / "figures";
  fs::create_directories(out);
  const std::string args = "--plot bars --figure-size 640x480 --session " + dir.file("h100.json") +
                           " --size 1024 --out-dir " + out.string();
  // Someone's figure of every second of the next ten minutes: only its PNG (the rest of its set is free).
  const std::time_t t0 = std::time(nullptr);
  auto stamp = [](std::time_t t) {
    std::tm tm{};
    localtime_r(&t, &tm);
    char b[32];
    std::strftime(b, sizeof b, "%Y%m%d-%H%M%S", &tm);
    return std::string(b);
  };
  for (std::time_t t = t0; t <= t0 + 600; ++t)
    std::ofstream(out / ("tilescope-bars-" + stamp(t) + ".png")) << "someone's";
  const Outcome one = figure(args);
  if (no_gl(one)) GTEST_SKIP() << one.output;
  ASSERT_EQ(one.code, 0) << one.output;
  if (std::time(nullptr) > t0 + 600) GTEST_SKIP() << "the figure took over ten minutes";
  std::vector<std::string> mine;
  for (const auto& e : fs::directory_iterator(out))
    if (read_file(e.path()) != "someone's") mine.push_back(e.path().filename().string());
  ASSERT_EQ(mine.size(), 3u);
  for (const auto& name : mine) EXPECT_NE(name.find("-2."), std::string::npos) << name;
  for (const auto& e : fs::directory_iterator(out)) fs::remove(e.path());
  // Four at once, into one folder: four sets of three files, none empty, each sidecar naming its own PNG.
  std::vector<Outcome> runs(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < runs.size(); ++i) threads.emplace_back([&, i] { runs[i] = figure(args); });
  for (auto& t : threads) t.join();
  for (const auto& r : runs) EXPECT_EQ(r.code, 0) << r.output;
  const auto files = figure_files(out);
  ASSERT_EQ(files.count(".png"), 1u);
  EXPECT_EQ(files.at(".png").size(), 4u);
  EXPECT_EQ(files.at(".csv").size(), 4u);
  ASSERT_EQ(files.at(".json").size(), 4u);
  for (const auto& j : files.at(".json")) {
    const nlohmann::json sidecar = nlohmann::json::parse(read_file(j));
    fs::path png = j;
    png.replace_extension(".png");
    EXPECT_EQ(sidecar["render"]["png"].get<std::string>(), png.filename().string());
    EXPECT_GT(load_png(png.string()).w, 0) << png;
  }
}

TEST(Figure, BadInputIsRefusedWithExitCode2AndNothingWritten) {
  test::TempDir dir;
  save_session(dir.path() / "h100.json", h100_sweep(), false);
  std::ofstream(dir.path() / "broken.json") << "{\"format\": \"tilescope-session\", \"version\": 1";
  const fs::path out = dir.path() / "figures";
  const std::string session = " --session " + dir.file("h100.json");
  struct Case {
    std::string args, says;
  };
  for (const Case& c : std::vector<Case>{
           {"--plot pie" + session, "unknown plot"},
           {"--plot timings --figure-size 100x100" + session, "outside"},
           {"--plot timings --figure-size 2x" + session, "WIDTHxHEIGHT"},
           {"--plot timings --figure-size big" + session, "figure size"},
           {"--plot timings --theme blue" + session, "theme"},
           {"--plot timings --y speed" + session, "--y"},
           {"--plot timings --gpu v100" + session, "v100"},
           {"--plot timings --session " + dir.file("missing.json"), "no such file"},
           {"--plot timings --session " + dir.file("broken.json"), "not JSON"},
           {"--plot timings --backend cpu", "--sizes"},
           {"--plot timings --backend cpu --sizes 64:32:8", "64"},
           {"--plot timings --backend cpu --sizes 32:64:32 --kernels nope", "nope"},
           {"--plot occupancy" + session, "session"},
           {"--plot schedule --backend cpu", "needs a GPU"},
           {"--plot bars --backend cpu --size 0", "--size"},
           {"--plot timings --out-dir " + dir.file("h100.json") + session, "not a folder"},
       }) {
    const Outcome r =
        figure(c.args + (c.args.find("--out-dir") == std::string::npos ? " --out-dir " + out.string() : ""));
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_TRUE(figure_files(out).empty()) << "a refused figure wrote files";
}

TEST(Figure, TheReplaysBadInputIsRefusedWithExitCode2AndNothingWritten) {
  test::TempDir dir;
  save_session(dir.path() / "h100.json", h100_sweep(), false);
  const fs::path out = dir.path() / "figures";
  struct Case {
    std::string args, says;
  };
  for (const Case& c : std::vector<Case>{
           {"--plot replay --backend cpu", "--plot replay needs a GPU: the CPU backend has no SMs to trace"},
           {"--plot replay --backend cpu --webp --times 10us", "needs a GPU"},
           {"--plot replay --session " + dir.file("h100.json"), "session"},
           {"--plot replay --times 200%", "past the end of the launch"},
           {"--plot replay --times abc", "--times: 'abc' is not a time"},
           {"--plot replay --times ''", "--times is empty"},
           {"--plot replay --times 1,2,3,4,5,6,7,8,9,10,11,12,13", "more than 12 times"},
           {"--plot replay --times=-5us", "not a time"},
           {"--plot replay --webp --frames 1", "--frames = '1'"},
           {"--plot replay --webp --frames 601", "2 to 600"},
           {"--plot replay --webp --frames ten", "--frames"},
           {"--plot replay --frames 10", "give --webp too"},
           {"--plot bars --backend cpu --webp", "go with --plot replay"},
           {"--plot schedule --times 10us", "go with --plot replay"},
       }) {
    const Outcome r = figure(c.args + " --out-dir " + out.string());
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_TRUE(figure_files(out).empty()) << "a refused figure wrote files";
}

TEST(Figure, MeasuresOnTheCpuBackendAndLabelsTheoreticalFiguresAsSuch) {
  test::TempDir dir;
  const fs::path out = dir.path() / "figures";
  const Outcome sweep = figure(
      "--plot timings --backend cpu --sizes 32:96:32 --kernels tiled --tiles 8,16 --quick "
      "--gpu l4 --figure-size 800x600 --session-out " +
      dir.file("s.json") + " --out-dir " + out.string());
  if (no_gl(sweep)) GTEST_SKIP() << sweep.output;
  ASSERT_EQ(sweep.code, 0) << sweep.output;
  EXPECT_EQ(load_session(dir.path() / "s.json").records.size(), 6u);  // 3 sizes x 2 tiles
  const Outcome occ =
      figure("--plot occupancy --backend cpu --kernel tiled --size 4096 --gpu t4 --out-dir " + out.string());
  ASSERT_EQ(occ.code, 0) << occ.output;
  int found = 0;
  auto files = figure_files(out);
  for (const auto& json : files[".json"]) {
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    std::string notes;
    for (const auto& n : j["meta"]["notes"]) notes += n.get<std::string>() + "\n";
    if (j["meta"]["plot"] == "timings") {
      ++found;
      std::map<std::string, nlohmann::json> series;
      for (const auto& x : j["series"]) series[x["label"]] = x;
      EXPECT_EQ(series["tiled T=8"]["rows"].size(), 3u);
      EXPECT_EQ(series["tiled T=16"]["rows"].size(), 3u);
      EXPECT_NE(notes.find("THEORETICAL"), std::string::npos) << notes;
      EXPECT_NE(notes.find("NVIDIA L4"), std::string::npos) << notes;
    } else {
      ++found;
      EXPECT_EQ(j["meta"]["plot"], "occupancy");
      EXPECT_NE(notes.find("THEORETICAL occupancy on NVIDIA T4"), std::string::npos) << notes;
      EXPECT_NE(j["meta"]["title"].get<std::string>().find("THEORETICAL"), std::string::npos);
      if (!build_resources().empty()) {
        // The bars are app/core's calculator, tile by tile.
        const std::vector<KernelInfo> infos = builtin_kernel_infos();
        const OccupancyData d = theoretical_tiles(build_resources(), find_gpu("t4"),
                                                  *find_kernel(infos, "tiled"), 16, 4096, 4096);
        const auto& rows = j["series"][0]["rows"];
        ASSERT_EQ(rows.size(), d.tiles.size());
        for (size_t i = 0; i < rows.size(); ++i) {
          EXPECT_EQ(rows[i][0].get<double>(), d.tiles[i].tile);
          EXPECT_EQ(rows[i][10].get<double>(), d.tiles[i].report.occupancy);
        }
      }
    }
  }
  EXPECT_EQ(found, 2);
}

// --engine: the point is measured by the engine (`tilescope serve` on the CPU backend, its standard error
// kept in a file) and drawn here. The engine says which device it serves and how many requests it answered;
// the sidecar names that device, with the point, and its bar is drawn in its colour. One bar of one sample
// (no whisker above it): it fills the plot's height whatever the machine's speed. (An engine that is no
// engine, and --backend beside --engine: tests/unit/test_remote_engine.cpp.)
TEST(Figure, MeasuresThroughAnEngineAndNamesTheEnginesDevice) {
  test::TempDir dir;
  const fs::path out = dir.path() / "figures";
  const std::string log = dir.file("serve.log");
  const Outcome r = figure(
      "--plot bars --kernels tiled --tiles 8 --size 48 --max-samples 1 --figure-size 800x600 "
      "--out-dir " +
      out.string() + " --engine 'exec " + kBin + " serve --backend cpu 2>" + log + "'");
  if (no_gl(r)) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  // What the engine said as it started and as it ended: the device it served and the requests it answered.
  const std::string said = read_file(log);
  const std::string started = "tilescope serve: cpu engine on ";
  const size_t at = said.find(started);
  ASSERT_NE(at, std::string::npos) << "the engine did not start: " << said;
  std::string device = said.substr(at + started.size(), said.find('\n', at) - at - started.size());
  device = device.substr(0, device.find("; "));  // a note of the backend's, if it gave one
  std::smatch answered;
  ASSERT_TRUE(std::regex_search(said, answered, std::regex("after ([0-9]+) requests"))) << said;
  EXPECT_GE(std::stoi(answered[1]), 1) << "the point was measured there";

  auto files = figure_files(out);
  ASSERT_EQ(files[".png"].size(), 1u);
  ASSERT_EQ(files[".json"].size(), 1u);
  const nlohmann::json j = nlohmann::json::parse(read_file(files[".json"][0]));
  EXPECT_EQ(j["meta"]["device"], device);
  EXPECT_EQ(j["meta"]["backend"], "cpu");
  EXPECT_EQ(j["meta"]["plot"], "bars");
  ASSERT_EQ(j["series"].size(), 1u) << j["series"].dump();
  const auto& bar = j["series"][0];
  EXPECT_EQ(bar["label"], "tiled T=8");
  ASSERT_EQ(bar["rows"].size(), 1u);
  EXPECT_GT(bar["rows"][0][2].get<double>(), 0.0) << "its median time";
  const Image im = load_png(files[".png"][0].string());
  EXPECT_EQ(im.w, 800);
  EXPECT_EQ(im.h, 600);
  EXPECT_GT(pixels_of(im, j["render"]["plot_area"], j["render"]["series_colours"]["tiled T=8"]), 1000)
      << "its bar is not drawn";
}

// Issue 26: a session that cannot be drawn (a number no double holds, a negative median, deep nesting) is
// refused with exit code 2, its path and the reason, by figure and by snapshot, before anything is drawn.
TEST(Figure, ADamagedSessionIsRefusedWithExitCode2ItsPathAndTheReason) {
  test::TempDir dir;
  const std::string good = session_text(h100_sweep());
  const std::string median = "\"median\":";
  auto damaged = [&](const std::string& name, const std::string& value) {
    std::string text = good;
    // The median of a point's samples (the interleaved reference before it has none: null is its median).
    const size_t at = text.find(median, text.find("\"stats_ms\":{\"count\":4")) + median.size();
    text.replace(at, text.find(',', at) - at, value);
    std::ofstream(dir.file(name), std::ios::binary) << text;
    return dir.file(name);
  };
  const std::string nested = dir.file("nested.json");
  std::ofstream(nested, std::ios::binary) << std::string(100000, '[');
  const std::pair<std::string, std::string> cases[] = {
      {damaged("overflow.json", "1e309"), "number overflow parsing '1e309'"},
      {damaged("negative.json", "-2"), "'median' = -2 is outside 0..1e+09"},
      {damaged("null.json", "null"), "'median' is null, not a number"},
      {nested, "nested more than 16 levels deep"},
  };
  for (const auto& [file, reason] : cases) {
    const Outcome f = figure("--plot timings --session " + file +
                             " --kernel tiled --tile 32 --size 1024 --out-dir " + dir.file("out"));
    EXPECT_EQ(f.code, 2) << f.output;
    EXPECT_NE(f.output.find(file + ": "), std::string::npos) << f.output;
    EXPECT_NE(f.output.find(reason), std::string::npos) << f.output;
    EXPECT_EQ(f.output.find("json.exception"), std::string::npos) << f.output;
    const auto s = test::run_cmd(kBin + " snapshot --backend cpu --size 64 --session " + file + " --out " +
                                 dir.file("s.png"));
    EXPECT_EQ(s.code, 2) << s.output;
    EXPECT_NE(s.output.find(file + ": "), std::string::npos) << s.output;
    EXPECT_NE(s.output.find(reason), std::string::npos) << s.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("s.png")));
  }
}

namespace {
// The cells of a CSV text (RFC 4180: quoted cells may hold commas, quotes and line breaks), '#' lines left
// out.
std::vector<std::vector<std::string>> csv_cells(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false, at_start = true, comment = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (at_start && c == '#') comment = true;
    at_start = false;
    if (comment) {
      if (c == '\n') comment = false, at_start = true;
      continue;
    }
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        cell += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(cell), cell.clear();
    } else if (c == '\n') {
      rows.back().push_back(cell), cell.clear();
      rows.emplace_back();
      at_start = true;
    } else {
      cell += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}
}  // namespace

// Formula injection through the real export: a session labelled and a kernel named =HYPERLINK(...) give
// cells with a ' in front in the figure's CSV, every cell that starts with = + - @ is so defused, and the
// numbers stay numbers.
TEST(Figure, NamesThatLookLikeFormulasAreDefusedInTheCsv) {
  test::TempDir dir;
  const std::string formula = "=HYPERLINK(\"http://x\",\"y\")";
  Session overlay = h100_sweep();
  overlay.label = formula;
  for (auto& r : overlay.records)
    if (r.spec.kernel == "tiled") r.spec.kernel = "@SUM(1+1)";
  save_session(dir.path() / "h100.json", h100_sweep(), false);
  save_session(dir.path() / "formula.json", overlay, false);
  const fs::path out = dir.path() / "figures";
  const Outcome r = figure("--plot timings --figure-size 640x480 --session " + dir.file("h100.json") +
                           " --session " + dir.file("formula.json") + " --out-dir " + out.string());
  if (no_gl(r)) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  const auto files = figure_files(out);
  ASSERT_EQ(files.at(".csv").size(), 1u);
  const std::string csv = read_file(files.at(".csv")[0]);
  EXPECT_NE(csv.find("# overlays,\"[\"\"=HYPERLINK("), std::string::npos) << csv.substr(0, 2000);
  int defused = 0, numbers = 0;
  for (const auto& row : csv_cells(csv))
    for (const std::string& cell : row) {
      if (cell.empty()) continue;
      const bool number = cell.find_first_not_of("0123456789.e+-") == std::string::npos &&
                          cell.find_first_of("0123456789") != std::string::npos;
      numbers += number;
      if (!number)
        EXPECT_EQ(std::string("=+-@\t\r").find(cell[0]), std::string::npos) << "a live formula: " << cell;
      defused += cell.rfind("'" + formula, 0) == 0 || cell.rfind("'@SUM(1+1)", 0) == 0;
    }
  EXPECT_GT(defused, 0) << csv.substr(0, 3000);
  EXPECT_GT(numbers, 100);
  // The JSON sidecar keeps the names as they are (JSON is not run by spreadsheets).
  const nlohmann::json j = nlohmann::json::parse(read_file(files.at(".json")[0]));
  EXPECT_EQ(j["meta"]["overlays"][0], formula);
}

// A figure whose third file cannot be written (the file size limit, as a full disk) leaves none of its three
// files, and says so; sizes from a first, unlimited run of the same figure, so the limit falls between the
// PNG and CSV and the JSON on any machine.
TEST(Figure, AWriteThatFailsMidwayLeavesNoneOfTheSet) {
  test::TempDir dir;
  Session s = h100_sweep();
  s.records.clear();
  for (int64_t n = 64; n <= 64 * 250; n += 64)  // one speed for every point (its plot once hung: AxisTicks)
    s.add(point("tiled", 32, n, 2.0 * double(n) * double(n) * double(n) / 8.9e9));
  save_session(dir.path() / "many.json", s, false);
  const std::string args = "--plot timings --figure-size 400x320 --session " + dir.file("many.json");
  const fs::path first = dir.path() / "first";
  const Outcome whole = figure(args + " --out-dir " + first.string());
  if (no_gl(whole)) GTEST_SKIP() << whole.output;
  ASSERT_EQ(whole.code, 0) << whole.output;
  const auto files = figure_files(first);
  const auto png = fs::file_size(files.at(".png")[0]), csv = fs::file_size(files.at(".csv")[0]),
             json = fs::file_size(files.at(".json")[0]);
  ASSERT_GT(json, std::max(png, csv) + 4096) << png << " " << csv << " " << json;
  const uintmax_t limit_kib = (std::max(png, csv) + json) / 2 / 1024;
  const fs::path out = dir.path() / "second";
  fs::create_directories(out);
  const auto r = test::run_cmd("bash -c \"trap '' XFSZ; ulimit -f " + std::to_string(limit_kib) + "; exec " +
                               kBin + " figure " + args + " --out-dir " + out.string() + "\"");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("write failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the figure's files written before it were removed"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("wrote "), std::string::npos) << r.output;
  EXPECT_TRUE(figure_files(out).empty()) << "files of a figure that failed were left behind";
}

// The replay as a figure (issue 29), rendered in this process from a synthetic traced launch (no GPU needed):
// the still's small multiples show each block's state at its moment where its tile sits in C (row 0 at the
// top), with the counts in the CSV and the sidecar; the animated WebP decodes (libwebp's WebPAnimDecoder) to
// the frames asked for, at the size the sidecar names, the first showing only the first wave running and the
// last none. Needs an offscreen GL context (EGL through Mesa or a GPU, else the X server ctest starts): SKIP
// for itself when there is none. TILESCOPE_REPLAY_FIGURE_DIR keeps the files (and every frame as a PNG)
// there, to look at.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <stb_image.h>
#include <webp/demux.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/engine/schedule_replay.hpp"
#include "gfx/texture.hpp"
#include "gfx/window.hpp"
#include "streamk_sample.hpp"
#include "test_util.hpp"
#include "ui/plots/figure_render.hpp"

using namespace ts;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> px;  // RGBA, top row first
  const uint8_t* at(int x, int y) const { return px.data() + (size_t(y) * size_t(w) + size_t(x)) * 4; }
};

Image load_png(const fs::path& path) {
  Image im;
  int n = 0;
  uint8_t* data = stbi_load(path.string().c_str(), &im.w, &im.h, &n, 4);
  if (data) {
    im.px.assign(data, data + size_t(im.w) * size_t(im.h) * 4);
    stbi_image_free(data);
  }
  return im;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

struct Frames {
  int w = 0, h = 0, count = 0;
  std::vector<Image> images;
  std::vector<int> timestamps_ms;  // each frame's end
};

// Every frame of an animated WebP, through libwebp's animation decoder.
Frames decode_webp(const std::string& bytes) {
  Frames out;
  WebPData data;
  WebPDataInit(&data);
  data.bytes = reinterpret_cast<const uint8_t*>(bytes.data());
  data.size = bytes.size();
  WebPAnimDecoderOptions opt;
  if (!WebPAnimDecoderOptionsInit(&opt)) return out;
  opt.color_mode = MODE_RGBA;
  WebPAnimDecoder* dec = WebPAnimDecoderNew(&data, &opt);
  if (!dec) return out;
  WebPAnimInfo info;
  if (WebPAnimDecoderGetInfo(dec, &info)) {
    out.w = int(info.canvas_width);
    out.h = int(info.canvas_height);
    out.count = int(info.frame_count);
    while (WebPAnimDecoderHasMoreFrames(dec)) {
      uint8_t* buf = nullptr;
      int ts = 0;
      if (!WebPAnimDecoderGetNext(dec, &buf, &ts)) break;
      Image im;
      im.w = out.w;
      im.h = out.h;
      im.px.assign(buf, buf + size_t(out.w) * size_t(out.h) * 4);
      out.images.push_back(std::move(im));
      out.timestamps_ms.push_back(ts);
    }
  }
  WebPAnimDecoderDelete(dec);
  return out;
}

// 8 tiles across, 6 down, on 4 SMs with 3 blocks each at once: 12 blocks a wave, 4 waves. Block i (row i / 8,
// column i % 8) runs in wave i / 12 on SM i % 4, from 1000 * wave to 1000 * wave + 900 ns. The first wave is
// row 0 and the left half of row 1: a picture upside down or mirrored shows other states there.
RunResult four_wave_run() {
  RunResult r;
  r.spec.kernel = "tiled";
  r.spec.tile = 32;
  r.spec.m = 6 * 32;
  r.spec.n = 8 * 32;
  r.spec.k = 64;
  r.backend = "cuda";
  r.device = "a synthetic GPU";
  OccupancyReport o;
  o.blocks_per_sm = 3;
  r.occupancy = o;
  auto t = std::make_shared<TileTrace>();
  t->grid_x = 8;
  t->grid_y = 6;
  t->tile_m = t->tile_n = 32;
  t->sm_count = 4;
  for (uint64_t i = 0; i < 48; ++i) {
    const uint64_t s = 7000 + 1000 * (i / 12);
    t->records.push_back({s, s + 900, uint32_t(i % 4), 0});
  }
  r.trace = t;
  return r;
}

ui::AppState state_with(const RunResult& r) {
  ui::AppState st;
  DeviceInfo d;
  d.backend = "cuda";
  d.name = "a synthetic GPU";
  d.sm_count = 4;
  st.sessions.current() = Session::for_device(d);
  st.settings.spec = r.spec;
  st.result = r;
  st.result_serial = 1;
  return st;
}

ui::FigureRequest replay_request(int frames) {
  ui::FigureRequest req;
  req.plot = PlotKind::Replay;
  req.size = {1280, 720};
  req.scale = 1;
  req.theme = FigureTheme::Dark;
  req.webp = frames > 0;
  if (frames > 0) req.frames = frames;
  return req;
}

// The offscreen GL context and the fonts figures are drawn with; null (the test says SKIP) without one.
std::unique_ptr<ui::FigureHost> host_or_null(std::string& why) {
  try {
    return std::make_unique<ui::FigureHost>(gfx::GlChoice::Auto, -1);
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}

// The colour the sidecar names for `label` ("waiting", "done", "SM 2").
std::array<int, 3> colour_of(const json& sidecar, const std::string& label) {
  const json& c = sidecar.at("render").at("series_colours").at(label);
  return {c[0].get<int>(), c[1].get<int>(), c[2].get<int>()};
}

// The pixel at the centre of tile (row, col) of a picture of 8 x 6 tiles drawn in `area` ([x, y, w, h]).
const uint8_t* tile_pixel(const Image& im, const json& area, int row, int col) {
  const double x = area[0].get<double>() + (col + 0.5) * area[2].get<double>() / 8;
  const double y = area[1].get<double>() + (row + 0.5) * area[3].get<double>() / 6;
  return im.at(int(x), int(y));
}

::testing::AssertionResult is(const uint8_t* p, const std::array<int, 3>& rgb, const std::string& what) {
  for (int c = 0; c < 3; ++c)
    if (std::abs(int(p[c]) - rgb[size_t(c)]) > 3)
      return ::testing::AssertionFailure()
             << what << ": (" << int(p[0]) << ", " << int(p[1]) << ", " << int(p[2]) << ") instead of ("
             << rgb[0] << ", " << rgb[1] << ", " << rgb[2] << ")";
  return ::testing::AssertionSuccess();
}

fs::path keep_dir() {
  const char* d = std::getenv("TILESCOPE_REPLAY_FIGURE_DIR");
  return d && *d ? fs::path(d) : fs::path();
}

}  // namespace

TEST(ReplayFigureRender, TheStillShowsEachMomentsStatesWhereTheTilesSitAndItsCounts) {
  std::string why;
  auto host = host_or_null(why);
  if (!host) GTEST_SKIP() << "no offscreen OpenGL: " << why;
  test::TempDir dir;
  const fs::path out = keep_dir().empty() ? dir.path() : keep_dir();
  ui::AppState st = state_with(four_wave_run());
  const ui::FigureJob job = ui::figure_job(st, replay_request(0));
  EXPECT_FALSE(job.animation) << "no WebP asked for";
  const ui::FigureWritten w = ui::write_figure(job, out);
  EXPECT_TRUE(w.paths.webp.empty());
  const json side = json::parse(slurp(w.paths.json));
  const Image im = load_png(w.paths.png);
  ASSERT_EQ(im.w, 1280);
  ASSERT_EQ(im.h, 720);

  // The moments: the start of each of the 4 waves (12 blocks at once) and the end, with their counts.
  const json* moments = nullptr;
  for (const json& s : side.at("series"))
    if (s.at("label") == "moments") moments = &s;
  ASSERT_NE(moments, nullptr) << side.dump(1);
  const json& rows = moments->at("rows");
  ASSERT_EQ(rows.size(), 5u);
  const std::vector<std::vector<double>> want = {
      {0, 36, 12, 0}, {1.0, 24, 12, 12}, {2.0, 12, 12, 24}, {3.0, 0, 12, 36}, {3.9, 0, 0, 48}};
  for (size_t i = 0; i < 5; ++i)
    for (size_t c = 0; c < 4; ++c) EXPECT_NEAR(rows[i][c].get<double>(), want[i][c], 1e-9) << i << "," << c;
  const std::string csv = slurp(w.paths.csv);
  EXPECT_NE(csv.find("moments,1,24,12,12"), std::string::npos) << csv;
  EXPECT_NE(csv.find("blocks,0,0,0,0,0,0.90000000000000002"), std::string::npos) << csv;

  // Five pictures, each at its moment.
  const json& areas = side.at("render").at("panel_areas");
  ASSERT_EQ(areas.size(), 5u);
  const auto waiting = colour_of(side, "waiting"), done = colour_of(side, "done");
  auto sm = [&](int k) { return colour_of(side, "SM " + std::to_string(k)); };
  // t = 0: row 0 and the left half of row 1 run (tile (r, c) is block 8r + c, on SM (8r + c) % 4).
  EXPECT_TRUE(is(tile_pixel(im, areas[0], 0, 0), sm(0), "t=0, tile (0,0)"));
  EXPECT_TRUE(is(tile_pixel(im, areas[0], 0, 5), sm(1), "t=0, tile (0,5)"));
  EXPECT_TRUE(is(tile_pixel(im, areas[0], 1, 3), sm(3), "t=0, tile (1,3)"));
  EXPECT_TRUE(is(tile_pixel(im, areas[0], 1, 4), waiting, "t=0, tile (1,4)"));
  EXPECT_TRUE(is(tile_pixel(im, areas[0], 5, 0), waiting, "t=0, tile (5,0)"));
  EXPECT_TRUE(is(tile_pixel(im, areas[0], 5, 7), waiting, "t=0, tile (5,7)"));
  // t = 1 us: the first wave done, the second running (blocks 12..23: row 1's right half and row 2).
  EXPECT_TRUE(is(tile_pixel(im, areas[1], 0, 0), done, "t=1us, tile (0,0)"));
  EXPECT_TRUE(is(tile_pixel(im, areas[1], 1, 4), sm(0), "t=1us, tile (1,4)"));
  EXPECT_TRUE(is(tile_pixel(im, areas[1], 2, 7), sm(3), "t=1us, tile (2,7)"));
  EXPECT_TRUE(is(tile_pixel(im, areas[1], 3, 0), waiting, "t=1us, tile (3,0)"));
  // The end: every tile done.
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 8; ++c)
      EXPECT_TRUE(is(tile_pixel(im, areas[4], r, c), done,
                     "the end, tile (" + std::to_string(r) + "," + std::to_string(c) + ")"));
  // The caption every figure carries, and the notes.
  const std::string caption = side.at("meta").at("caption").get<std::string>();
  EXPECT_NE(caption.find("a synthetic GPU"), std::string::npos) << caption;
  EXPECT_NE(side.dump().find("12 blocks resident at once, 4 waves"), std::string::npos);
}

TEST(ReplayFigureRender, TheWebpDecodesToTheFramesAskedForFromTheFirstWaveToNoneRunning) {
  std::string why;
  auto host = host_or_null(why);
  if (!host) GTEST_SKIP() << "no offscreen OpenGL: " << why;
  test::TempDir dir;
  const fs::path out = keep_dir().empty() ? dir.path() : keep_dir();
  ui::AppState st = state_with(four_wave_run());
  const ui::FigureJob job = ui::figure_job(st, replay_request(9));
  ASSERT_TRUE(job.animation);
  const ui::FigureWritten w = ui::write_figure(job, out);
  ASSERT_FALSE(w.paths.webp.empty());
  EXPECT_EQ(w.paths.webp.stem(), w.paths.png.stem()) << "the WebP takes the PNG's name";
  EXPECT_EQ(w.frames, 9);
  const json side = json::parse(slurp(w.paths.json));
  const json& webp = side.at("render").at("webp");
  EXPECT_EQ(webp.at("file").get<std::string>(), w.paths.webp.filename().string());
  const Frames f = decode_webp(slurp(w.paths.webp));
  ASSERT_EQ(f.count, 9) << "frames in the file";
  ASSERT_EQ(f.images.size(), 9u);
  EXPECT_EQ(f.w, webp.at("width").get<int>());
  EXPECT_EQ(f.h, webp.at("height").get<int>());
  EXPECT_EQ(f.w, 1280);
  EXPECT_EQ(f.h, 720);
  // A few seconds: 9 frames of 250 ms, the last held 2 s longer.
  EXPECT_EQ(f.timestamps_ms.front(), 250);
  EXPECT_EQ(f.timestamps_ms.back(), 9 * 250 + 2000);
  if (!keep_dir().empty())
    for (size_t i = 0; i < f.images.size(); ++i)
      gfx::write_png((out / ("frame-" + std::to_string(i) + ".png")).string(), f.w, f.h, f.images[i].px,
                     Replace::RegularFile);

  const json& area = webp.at("plot_area");
  const auto waiting = colour_of(side, "waiting"), done = colour_of(side, "done");
  auto sm = [&](int k) { return colour_of(side, "SM " + std::to_string(k)); };
  // Frame 0 (t = 0): every tile but the first wave's waits.
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 8; ++c) {
      const int block = 8 * r + c;
      const std::string at = "frame 0, tile (" + std::to_string(r) + "," + std::to_string(c) + ")";
      EXPECT_TRUE(is(tile_pixel(f.images[0], area, r, c), block < 12 ? sm(block % 4) : waiting, at));
    }
  // Frame 3 (t = 3900 * 3 / 8 = 1463 ns): the first wave done, the second running, the rest waiting.
  EXPECT_TRUE(is(tile_pixel(f.images[3], area, 0, 7), done, "frame 3, tile (0,7)"));
  EXPECT_TRUE(is(tile_pixel(f.images[3], area, 1, 5), sm(1), "frame 3, tile (1,5)"));
  EXPECT_TRUE(is(tile_pixel(f.images[3], area, 4, 0), waiting, "frame 3, tile (4,0)"));
  // The last frame (the end): none running, every tile done.
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 8; ++c)
      EXPECT_TRUE(is(tile_pixel(f.images[8], area, r, c), done,
                     "last frame, tile (" + std::to_string(r) + "," + std::to_string(c) + ")"));
  // The frames' counts in the data.
  for (const json& s : side.at("series"))
    if (s.at("label") == "frames") {
      ASSERT_EQ(s.at("rows").size(), 9u);
      EXPECT_EQ(s.at("rows")[0][2].get<double>(), 12);  // running at t = 0
      EXPECT_EQ(s.at("rows")[8][2].get<double>(), 0);   // running at the end
      EXPECT_EQ(s.at("rows")[8][3].get<double>(), 48);  // done at the end
    }
}

TEST(ReplayFigureRender, MomentsAfterTheLaunchAndAResultWithoutATraceAreRefused) {
  ui::AppState st = state_with(four_wave_run());
  ui::FigureRequest req = replay_request(0);
  req.replay_times = parse_replay_times("1us,5us");
  try {
    ui::figure_job(st, req);
    ADD_FAILURE() << "5 us accepted in a 3.9 us launch";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("5us is after the launch's end at 3.9 us"), std::string::npos)
        << e.what();
  }
  req.replay_times = parse_replay_times("50%");
  EXPECT_NO_THROW(ui::figure_job(st, req));
  st.result->trace = nullptr;
  try {
    ui::figure_job(st, req);
    ADD_FAILURE() << "a replay without a traced launch";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("no traced launch"), std::string::npos) << e.what();
  }
}

// A launch like a real one: 24 x 32 tiles of 128 x 128, K in 2 slices (1536 blocks) on 132 SMs, one block
// per SM at once (12 waves, 7 of them shown and the end). At 1920 x 1080, 960 x 540 and 480 x 320 every
// picture lies inside the figure, above the caption, beside the others without overlapping, and keeps C's
// shape (32 : 24 across to down); a slice-1 block's strip sits in the lower half of its tile.
TEST(ReplayFigureRender, ASplitKLaunchOfManyBlocksFitsAtFullAndSmallSizesKeepingCsShape) {
  std::string why;
  auto host = host_or_null(why);
  if (!host) GTEST_SKIP() << "no offscreen OpenGL: " << why;
  test::TempDir dir;
  const fs::path out = keep_dir().empty() ? dir.path() : keep_dir();
  RunResult run = four_wave_run();
  run.spec.m = 24 * 128;
  run.spec.n = 32 * 128;
  run.spec.k = 4096;
  run.spec.kernel = "splitk";
  run.occupancy->blocks_per_sm = 1;
  auto t = std::make_shared<TileTrace>();
  t->grid_x = 32;
  t->grid_y = 24;
  t->grid_z = 2;
  t->tile_m = t->tile_n = 128;
  t->sm_count = 132;
  for (uint64_t i = 0; i < 1536; ++i) {
    const uint64_t s = 9000 + 1000 * (i / 132) + 3 * (i % 132);
    t->records.push_back({s, s + 950, uint32_t(i % 132), 0});
  }
  run.trace = t;
  ui::AppState st = state_with(run);
  for (const FigureSize size : {FigureSize{1920, 1080}, FigureSize{960, 540}, FigureSize{480, 320}}) {
    ui::FigureRequest req = replay_request(0);
    req.size = size;
    req.scale = std::clamp(std::min(size.width / 1280.0f, size.height / 720.0f), 0.75f, 4.0f);
    const ui::FigureWritten w = ui::write_figure(ui::figure_job(st, req), out);
    const json side = json::parse(slurp(w.paths.json));
    const json& areas = side.at("render").at("panel_areas");
    ASSERT_EQ(areas.size(), 8u) << size.width;
    std::vector<std::array<double, 4>> boxes;
    for (const json& a : areas) {
      const double x = a[0], y = a[1], wd = a[2], ht = a[3];
      EXPECT_GE(x, 0);
      EXPECT_GE(y, 0);
      EXPECT_LE(x + wd, size.width);
      EXPECT_LE(y + ht, size.height * 0.97) << "above the caption";
      EXPECT_NEAR(wd / ht, 32.0 / 24.0, 0.02) << size.width;
      for (const auto& b : boxes)
        EXPECT_TRUE(x >= b[0] + b[2] || b[0] >= x + wd || y >= b[1] + b[3] || b[1] >= y + ht) << "overlap";
      boxes.push_back({x, y, wd, ht});
    }
    if (size.width == 1920) {
      // Wave 7 of 12 (the 4th moment shown: waves 1, 3, 5, 7, ...) starts with block 6 * 132 = 792, the first
      // of slice 1 at tile (0, 24): its strip is the lower half of that tile, the upper half (slice 0) done.
      const Image im = load_png(w.paths.png);
      const json& a = areas[3];
      const double tw = a[2].get<double>() / 32, th = a[3].get<double>() / 24;
      const uint8_t* upper = im.at(int(a[0].get<double>() + 24.5 * tw), int(a[1].get<double>() + 0.25 * th));
      const uint8_t* lower = im.at(int(a[0].get<double>() + 24.5 * tw), int(a[1].get<double>() + 0.75 * th));
      EXPECT_TRUE(is(upper, colour_of(side, "done"), "slice 0 of tile (0, 24)"));
      EXPECT_TRUE(is(lower, colour_of(side, "SM " + std::to_string(792 % 132)), "slice 1 of tile (0, 24)"));
    }
  }
}

// Stream-K (streamk_sample.hpp: 3 x 4 tiles, tiles 8-11 of row 2 shared in 2 or 3 segments): at 1350 ns after
// the first start each segment shows its state in its own strip of its tile, as tall as its share of K and in
// K order. Tile (2, 1): K steps 0-32 run on SM 1, 32-96 done, 96-128 run on SM 5; tile (2, 3)'s last strip
// (steps 80-128) still waits; the whole tiles of rows 0 and 1 are done. The absent records count nowhere.
TEST(ReplayFigureRender, AStreamKLaunchShowsEachSegmentAsAStripOfItsShareOfK) {
  std::string why;
  auto host = host_or_null(why);
  if (!host) GTEST_SKIP() << "no offscreen OpenGL: " << why;
  test::TempDir dir;
  const fs::path out = keep_dir().empty() ? dir.path() : keep_dir();
  RunResult run = four_wave_run();
  run.spec.kernel = "streamk";
  run.spec.tile = 128;
  run.spec.m = 3 * 128;
  run.spec.n = 4 * 128;
  run.spec.k = 4096;
  run.occupancy->blocks_per_sm = 1;
  run.trace = std::make_shared<TileTrace>(test::streamk_trace());
  ui::AppState st = state_with(run);
  ui::FigureRequest req = replay_request(0);
  req.replay_times = parse_replay_times("1350ns");
  const ui::FigureWritten w = ui::write_figure(ui::figure_job(st, req), out);
  const json side = json::parse(slurp(w.paths.json));
  const Image im = load_png(w.paths.png);
  const json& areas = side.at("render").at("panel_areas");
  ASSERT_EQ(areas.size(), 1u);
  const json& a = areas[0];
  EXPECT_NEAR(a[2].get<double>() / a[3].get<double>(), 4.0 / 3.0, 0.02) << "C's shape";
  // The pixel at (row + f) tile heights down and the middle of tile column col.
  auto at = [&](int row, double f, int col) {
    const double x = a[0].get<double>() + (col + 0.5) * a[2].get<double>() / 4;
    const double y = a[1].get<double>() + (row + f) * a[3].get<double>() / 3;
    return im.at(int(x), int(y));
  };
  const auto waiting = colour_of(side, "waiting"), done = colour_of(side, "done");
  auto sm = [&](int k) { return colour_of(side, "SM " + std::to_string(k)); };
  EXPECT_TRUE(is(at(2, 0.12, 1), sm(1), "tile (2, 1), K steps 0-32"));
  EXPECT_TRUE(is(at(2, 0.5, 1), done, "tile (2, 1), K steps 32-96"));
  EXPECT_TRUE(is(at(2, 0.88, 1), sm(5), "tile (2, 1), K steps 96-128"));
  EXPECT_TRUE(is(at(2, 0.4, 2), sm(2), "tile (2, 2), K steps 0-100"));
  EXPECT_TRUE(is(at(2, 0.9, 2), done, "tile (2, 2), K steps 100-128"));
  EXPECT_TRUE(is(at(2, 0.15, 3), sm(3), "tile (2, 3), K steps 0-40"));
  EXPECT_TRUE(is(at(2, 0.47, 3), sm(7), "tile (2, 3), K steps 40-80"));
  EXPECT_TRUE(is(at(2, 0.8, 3), waiting, "tile (2, 3), K steps 80-128"));
  EXPECT_TRUE(is(at(2, 0.25, 0), sm(0), "tile (2, 0), K steps 0-64"));
  EXPECT_TRUE(is(at(2, 0.75, 0), sm(4), "tile (2, 0), K steps 64-128"));
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c)
      for (double f : {0.1, 0.9})
        EXPECT_TRUE(
            is(at(r, f, c), done, "whole tile (" + std::to_string(r) + ", " + std::to_string(c) + ")"));
  // The numbers: 18 segments (7 running, 10 done, 1 waiting at 1350 ns), each with its K range.
  const json* blocks = nullptr;
  const json* moments = nullptr;
  for (const json& s : side.at("series")) {
    if (s.at("label") == "blocks") blocks = &s;
    if (s.at("label") == "moments") moments = &s;
  }
  ASSERT_TRUE(blocks && moments);
  EXPECT_EQ(blocks->at("columns"), json::array({"tile_row", "tile_col", "k_segment", "k_begin", "k_end", "sm",
                                                "start_us", "end_us"}));
  ASSERT_EQ(blocks->at("rows").size(), 18u);
  const json& last = blocks->at("rows")[16];  // tile 9's segment 2
  EXPECT_EQ(last[0].get<double>(), 2);
  EXPECT_EQ(last[1].get<double>(), 1);
  EXPECT_EQ(last[2].get<double>(), 2);
  EXPECT_EQ(last[3].get<double>(), 3072);
  EXPECT_EQ(last[4].get<double>(), 4096);
  EXPECT_EQ(last[5].get<double>(), 5);
  ASSERT_EQ(moments->at("rows").size(), 1u);
  EXPECT_EQ(moments->at("rows")[0][1].get<double>(), 1);   // waiting
  EXPECT_EQ(moments->at("rows")[0][2].get<double>(), 7);   // running
  EXPECT_EQ(moments->at("rows")[0][3].get<double>(), 10);  // done
  EXPECT_NE(side.dump().find("stream-K: 8 made whole, 4 shared in 10 segments"), std::string::npos);
}

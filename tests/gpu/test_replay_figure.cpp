// `tilescope figure --plot replay --webp` on a GPU (issue 29): the real traced launch of the tiled kernel,
// replayed as a strip of moments and an animated WebP. The sidecar's moments account for every block, the
// first shows blocks running and the last every block done; the WebP decodes (libwebp's WebPAnimDecoder) to
// the frames asked for at the size the sidecar names, its first frame with running blocks, its last with
// none; a moment after the launch's end is refused with exit code 2. SKIP without a CUDA device or an
// offscreen GL context. Nothing here depends on how fast the GPU is.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <webp/demux.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kernels/engine/registry.hpp"
#include "../unit/test_util.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const std::string kBin =
    std::getenv("TILESCOPE_TEST_BIN") ? std::getenv("TILESCOPE_TEST_BIN") : TILESCOPE_BIN;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

fs::path only(const fs::path& dir, const std::string& ext) {
  fs::path found;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ext) found = e.path(), ++n;
  EXPECT_EQ(n, 1) << ext << " files in " << dir;
  return found;
}

struct Rgb {
  int r, g, b;
};
Rgb colour(const json& side, const std::string& label) {
  const json& c = side.at("render").at("series_colours").at(label);
  return {c[0].get<int>(), c[1].get<int>(), c[2].get<int>()};
}
bool near(const uint8_t* p, Rgb c) {
  return std::abs(p[0] - c.r) <= 3 && std::abs(p[1] - c.g) <= 3 && std::abs(p[2] - c.b) <= 3;
}

}  // namespace

TEST(ReplayFigureGpu, TheTracedLaunchOfTiledAsAStillAndAnAnimatedWebp) {
  std::string why;
  if (ts::cuda_device_count(&why) == 0) GTEST_SKIP() << "no CUDA device: " << why;
  ts::test::TempDir dir;
  const fs::path out = dir.path() / "figures";
  const auto r =
      ts::test::run_cmd(kBin +
                        " figure --plot replay --webp --frames 12 --kernel tiled --tile 32 --size 2048 "
                        "--figure-size 1280x720 --out-dir " +
                        out.string());
  if (r.code == 2 && r.output.find("offscreen") != std::string::npos) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  const json side = json::parse(slurp(only(out, ".json")));
  const int tiles = 2048 / 32;  // down and across
  const int64_t blocks = int64_t(tiles) * tiles;
  const json* moments = nullptr;
  for (const json& s : side.at("series"))
    if (s.at("label") == "moments") moments = &s;
  ASSERT_NE(moments, nullptr);
  const json& rows = moments->at("rows");  // time_us, waiting, running, done
  ASSERT_GE(rows.size(), 2u);
  for (const json& row : rows)
    EXPECT_EQ(row[1].get<double>() + row[2].get<double>() + row[3].get<double>(), double(blocks))
        << row.dump();
  EXPECT_GT(rows.front()[2].get<double>(), 0) << "the first wave's start: blocks running";
  EXPECT_EQ(rows.back()[3].get<double>(), double(blocks)) << "the end: every block done";
  EXPECT_NE(side.dump().find("waves from the occupancy arithmetic"), std::string::npos) << side.dump(1);

  const std::string bytes = slurp(only(out, ".webp"));
  WebPData data{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
  WebPAnimDecoderOptions opt;
  ASSERT_TRUE(WebPAnimDecoderOptionsInit(&opt));
  opt.color_mode = MODE_RGBA;
  WebPAnimDecoder* dec = WebPAnimDecoderNew(&data, &opt);
  ASSERT_NE(dec, nullptr) << "not an animated WebP";
  WebPAnimInfo info;
  ASSERT_TRUE(WebPAnimDecoderGetInfo(dec, &info));
  const json& webp = side.at("render").at("webp");
  EXPECT_EQ(int(info.frame_count), 12);
  EXPECT_EQ(int(info.canvas_width), webp.at("width").get<int>());
  EXPECT_EQ(int(info.canvas_height), webp.at("height").get<int>());
  // In the picture of C: running blocks (neither waiting nor done) in the first frame, none in the last.
  const json& a = webp.at("plot_area");
  const Rgb waiting = colour(side, "waiting"), done = colour(side, "done");
  std::vector<int> running;
  while (WebPAnimDecoderHasMoreFrames(dec)) {
    uint8_t* buf = nullptr;
    int ts = 0;
    ASSERT_TRUE(WebPAnimDecoderGetNext(dec, &buf, &ts));
    int n = 0;  // tiles whose centre is neither waiting nor done (a frame draws the tiles' edges too)
    for (int row = 0; row < tiles; ++row)
      for (int col = 0; col < tiles; ++col) {
        const int x = int(a[0].get<double>() + (col + 0.5) * a[2].get<double>() / tiles);
        const int y = int(a[1].get<double>() + (row + 0.5) * a[3].get<double>() / tiles);
        const uint8_t* p = buf + (size_t(y) * info.canvas_width + size_t(x)) * 4;
        n += !near(p, waiting) && !near(p, done);
      }
    running.push_back(n);
  }
  WebPAnimDecoderDelete(dec);
  ASSERT_EQ(running.size(), 12u);
  EXPECT_GT(running.front(), 0) << "the first frame shows the first wave running";
  EXPECT_EQ(running.back(), 0) << "the last frame shows none running";

  // A moment after the launch's end (a 2048^3 tiled launch is far shorter than 10 s): exit 2, nothing
  // written.
  const fs::path refused = dir.path() / "refused";
  const auto late =
      ts::test::run_cmd(kBin +
                        " figure --plot replay --kernel tiled --tile 32 --size 2048 --times 1us,10000ms "
                        "--out-dir " +
                        refused.string());
  EXPECT_EQ(late.code, 2) << late.output;
  EXPECT_NE(late.output.find("after the launch's end"), std::string::npos) << late.output;
  EXPECT_TRUE(!fs::exists(refused) || fs::is_empty(refused)) << "a refused figure wrote files";
}

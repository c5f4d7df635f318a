// The CPU colouring reference: built-in colour maps, table lookup, colorize.
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "colormap.hpp"

using namespace ts;

namespace {
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
}  // namespace

// [SECTION] Colour maps

TEST(Colormap, IndexBoundaries) {
  EXPECT_EQ(colormap_index(0.0f, 0.0f, 1.0f), 0);
  EXPECT_EQ(colormap_index(1.0f, 0.0f, 1.0f), 255);
  EXPECT_EQ(colormap_index(std::nextafter(1.0f, 0.0f), 0.0f, 1.0f), 255);
  EXPECT_EQ(colormap_index(0.5f, 0.0f, 1.0f), 128);
  EXPECT_EQ(colormap_index(std::nextafter(0.5f, 0.0f), 0.0f, 1.0f), 127);
  EXPECT_EQ(colormap_index(1.0f / 256.0f, 0.0f, 1.0f), 1);
  EXPECT_EQ(colormap_index(std::nextafter(1.0f / 256.0f, 0.0f), 0.0f, 1.0f), 0);
  EXPECT_EQ(colormap_index(-2.0f, -2.0f, 6.0f), 0);
  EXPECT_EQ(colormap_index(2.0f, -2.0f, 6.0f), 128);
  EXPECT_EQ(colormap_index(5.99f, -2.0f, 6.0f), 255);
  // Outside the range: clamped, also for quotients far beyond int.
  EXPECT_EQ(colormap_index(-1.0f, 0.0f, 1.0f), 0);
  EXPECT_EQ(colormap_index(7.0f, 0.0f, 1.0f), 255);
  EXPECT_EQ(colormap_index(FLT_MAX, 0.0f, 1e-30f), 255);
  EXPECT_EQ(colormap_index(-FLT_MAX, 0.0f, 1e-30f), 0);
  // Non-finite values.
  EXPECT_EQ(colormap_index(kNaN, 0.0f, 1.0f), -1);
  EXPECT_EQ(colormap_index(kInf, 0.0f, 1.0f), -1);
  EXPECT_EQ(colormap_index(-kInf, 0.0f, 1.0f), -1);
  // A degenerate range (which resolve_range never returns) is still defined.
  EXPECT_EQ(colormap_index(3.0f, 3.0f, 3.0f), 0);
  // The formula, literally, over many values.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3.0f, 5.0f);
  for (int i = 0; i < 10000; ++i) {
    const float v = u(rng), lo = -2.0f, hi = 4.5f;
    const int want = std::min(255, std::max(0, int(std::floor((v - lo) / (hi - lo) * 256.0f))));
    ASSERT_EQ(colormap_index(v, lo, hi), want) << v;
  }
}

TEST(Colormap, BuiltInTablesAreComplete) {
  const std::vector<Colormap>& maps = colormaps();
  ASSERT_GE(maps.size(), 3u);
  EXPECT_EQ(maps.front().name, "viridis");
  EXPECT_EQ(maps.front().kind, "sequential");
  for (const char* name : {"viridis", "magma", "inferno", "RdBu_r", "coolwarm"}) {
    const Colormap* m = find_colormap(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->name, name);
    EXPECT_EQ(m->rgba.size(), 256u);
    for (const auto& c : m->rgba) EXPECT_EQ(c[3], 255) << name;
  }
  EXPECT_EQ(find_colormap("RdBu_r")->kind, "diverging");
  EXPECT_EQ(find_colormap("magma")->kind, "sequential");
  EXPECT_EQ(find_colormap("jet"), nullptr);
  EXPECT_EQ(find_colormap(""), nullptr);
  EXPECT_EQ(default_diverging_colormap().kind, "diverging");
  // Sequential maps come first.
  bool seen_diverging = false;
  for (const Colormap& m : maps) {
    if (m.kind == "diverging") seen_diverging = true;
    EXPECT_TRUE(m.kind == "diverging" || !seen_diverging) << m.name << " after a diverging map";
  }
  // matplotlib's viridis, ends and middle (https://github.com/BIDS/colormap).
  const Colormap& v = *find_colormap("viridis");
  EXPECT_EQ(v.rgba[0], (std::array<uint8_t, 4>{68, 1, 84, 255}));
  EXPECT_EQ(v.rgba[128], (std::array<uint8_t, 4>{33, 145, 140, 255}));
  EXPECT_EQ(v.rgba[255], (std::array<uint8_t, 4>{253, 231, 37, 255}));
}

namespace {
double luminance(const std::array<uint8_t, 4>& c) {
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
}  // namespace

TEST(Colormap, SequentialMapsGetLighterAndDivergingMapsAreLightInTheMiddle) {
  for (const Colormap& m : colormaps()) {
    SCOPED_TRACE(m.name);
    if (m.kind == "sequential") {
      for (size_t i = 1; i < 256; ++i) EXPECT_GE(luminance(m.rgba[i]), luminance(m.rgba[i - 1]) - 1.0) << i;
      for (size_t i = 16; i < 256; i += 16)
        EXPECT_GT(luminance(m.rgba[i]), luminance(m.rgba[i - 16]) + 5) << i;
    } else {
      const double mid = luminance(m.rgba[128]), lo = luminance(m.rgba[0]), hi = luminance(m.rgba[255]);
      EXPECT_GT(mid, 200.0);
      EXPECT_GT(mid, lo + 100.0);
      EXPECT_GT(mid, hi + 100.0);
      for (size_t i = 0; i < 128; ++i) {
        EXPECT_NEAR(luminance(m.rgba[i]), luminance(m.rgba[255 - i]), 40.0) << i;  // symmetric-ish
        if (i < 120) {  // cold below the middle, warm above
          EXPECT_GT(m.rgba[i][2], m.rgba[i][0]) << i;
          EXPECT_GT(m.rgba[255 - i][0], m.rgba[255 - i][2]) << i;
        }
      }
      for (size_t i = 1; i <= 128; ++i) EXPECT_GE(luminance(m.rgba[i]), luminance(m.rgba[i - 1]) - 1.0) << i;
    }
  }
}

TEST(Colormap, ColorAndColorize) {
  const Colormap& v = *find_colormap("viridis");
  EXPECT_EQ(colormap_color(v, -1.0f, -1.0f, 1.0f), v.rgba[0]);
  EXPECT_EQ(colormap_color(v, 1.0f, -1.0f, 1.0f), v.rgba[255]);
  EXPECT_EQ(colormap_color(v, 0.0f, -1.0f, 1.0f), v.rgba[128]);
  EXPECT_EQ(colormap_color(v, kNaN, -1.0f, 1.0f), (std::array<uint8_t, 4>{255, 0, 255, 255}));
  EXPECT_EQ(colormap_color(v, -kInf, -1.0f, 1.0f), kNonFiniteColor);

  const std::vector<float> values = {-1.0f, 0.0f, 1.0f, kNaN, 5.0f};
  std::vector<uint8_t> px(values.size() * 4, 0);
  colorize(values.data(), values.size(), v, -1.0f, 1.0f, px.data());
  // clang-format off
  const std::vector<uint8_t> want = {68,  1,   84,  255,   // rgba[0]
                                     33,  145, 140, 255,   // rgba[128]
                                     253, 231, 37,  255,   // rgba[255]
                                     255, 0,   255, 255,   // magenta
                                     253, 231, 37,  255};  // clamped to rgba[255]
  // clang-format on
  EXPECT_EQ(px, want);

  // Large inputs are split across threads; every pixel still matches colormap_color.
  const Colormap& d = default_diverging_colormap();
  std::vector<float> big(300000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = float(i % 1000) / 500.0f - 1.0f;
  big[777] = kNaN;
  std::vector<uint8_t> out(big.size() * 4);
  colorize(big.data(), big.size(), d, -1.0f, 1.0f, out.data());
  for (size_t i = 0; i < big.size(); i += 997) {
    const auto c = colormap_color(d, big[i], -1.0f, 1.0f);
    ASSERT_EQ((std::array<uint8_t, 4>{out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]}), c) << i;
  }
  EXPECT_EQ(out[4 * 777 + 1], 0);
  EXPECT_EQ(out[4 * 777 + 0], 255);
}

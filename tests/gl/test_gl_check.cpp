// The GL half of the self-check (app/gfx/gl_check.hpp) on whatever OpenGL this machine has (CI: Mesa): the
// known heatmap comes back exactly as the CPU colours it; a corrupted readback (what the broken driver on the
// H100 returned after a fault) is caught and said in words; the context's robustness is reported. SKIP
// without an offscreen GL context.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/plots/colormap.hpp"
#include "gfx/gl_check.hpp"
#include "gfx/headless.hpp"

using namespace ts;

namespace {

std::unique_ptr<gfx::HeadlessGl> g_gl;
std::string g_why;

bool have_gl() {
  if (!g_gl && g_why.empty()) {
    try {
      g_gl = std::make_unique<gfx::HeadlessGl>(gfx::make_headless_gl(gfx::GlChoice::Auto, -1, 64, 64));
    } catch (const std::exception& e) {
      g_why = e.what();
    }
  }
  return g_gl != nullptr;
}

#define REQUIRE_GL() \
  if (!have_gl()) GTEST_SKIP() << "no offscreen OpenGL: " << g_why

struct DamageGuard {
  ~DamageGuard() { gfx::simulate_gl_damage(gfx::GlDamage::None); }
};

}  // namespace

TEST(GlCheck, TheKnownHeatmapIsAsymmetricAndEveryElementHasItsOwnColour) {
  // The picture the check compares against would not catch a flip or a shift if rows or columns repeated.
  const std::vector<uint8_t> want = gfx::HeatmapPatternCheck::expected_picture();
  const int w = gfx::HeatmapPatternCheck::kCols, h = gfx::HeatmapPatternCheck::kRows;
  ASSERT_EQ(want.size(), size_t(w) * h * 4);
  auto px = [&](int x, int y) {
    const uint8_t* p = &want[(size_t(y) * w + x) * 4];
    return (uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | p[2];
  };
  for (int y = 0; y + 1 < h; ++y) {
    EXPECT_NE(px(0, y), px(0, y + 1)) << "row " << y;  // rows differ: a vertical flip shows
    EXPECT_NE(px(y, 0), px(y + 1, 0)) << "column " << y;
  }
  EXPECT_NE(px(0, 0), px(w - 1, h - 1));
  EXPECT_EQ(px(5, h - 3), 0xff00ffu);  // the NaN element is magenta
}

TEST(GlCheck, TheHeatmapPathDrawsTheKnownPictureExactly) {
  REQUIRE_GL();
  gfx::HeatmapPatternCheck check;
  std::string why;
  EXPECT_TRUE(check.run(&why)) << why;
  EXPECT_TRUE(why.empty());
  EXPECT_NE(check.texture(), 0u);
}

TEST(GlCheck, ACorruptedReadbackFailsTheCheckAndSaysWhatDiffered) {
  REQUIRE_GL();
  DamageGuard undo;
  gfx::simulate_gl_damage(gfx::GlDamage::Readback);
  gfx::HeatmapPatternCheck check;
  std::string why;
  EXPECT_FALSE(check.run(&why));
  EXPECT_NE(why.find("known 40 x 24 heatmap came back with"), std::string::npos) << why;
  EXPECT_NE(why.find("pixels wrong"), std::string::npos) << why;
  EXPECT_NE(why.find("instead of"), std::string::npos) << why;  // the first pixels, in numbers
}

TEST(GlCheck, CompareNamesTheFirstDifferingPixelsAndToleratesSmallRounding) {
  std::vector<uint8_t> a(4 * 3 * 2, 100), b = a;
  EXPECT_EQ(gfx::compare_rgba(a, b, 3, 2, 0).differing, 0);
  b[(1 * 3 + 2) * 4 + 1] = 103;  // pixel 2,1: green off by 3
  EXPECT_EQ(gfx::compare_rgba(b, a, 3, 2, 2).differing, 1);
  EXPECT_EQ(gfx::compare_rgba(b, a, 3, 2, 3).differing, 0);
  const gfx::ImageDiff d = gfx::compare_rgba(b, a, 3, 2, 0);
  EXPECT_EQ(d.first, "pixel 2,1 = 100,103,100 instead of 100,100,100");
  EXPECT_EQ(gfx::compare_rgba(std::vector<uint8_t>(8), a, 3, 2, 0).differing, 6);  // a short readback
}

TEST(GlCheck, TheContextSaysWhetherItReportsResetsAndASimulatedResetIsReportedOnce) {
  REQUIRE_GL();
  const gfx::ContextRobustness r = gfx::context_robustness();
  std::printf("robustness: %s, reset notification: %s\n", r.available ? "yes" : "no",
              r.reset_notification ? "yes" : "no");
  if (r.available) {
    EXPECT_EQ(gfx::reset_status(), gfx::ResetStatus::None);
  } else {
    EXPECT_EQ(gfx::reset_status(), gfx::ResetStatus::NotAvailable);
  }
  DamageGuard undo;
  gfx::simulate_gl_damage(gfx::GlDamage::Lost);
  EXPECT_EQ(gfx::reset_status(), gfx::ResetStatus::Guilty);
  EXPECT_NE(gfx::reset_status(), gfx::ResetStatus::Guilty);  // a driver reports a reset once
}

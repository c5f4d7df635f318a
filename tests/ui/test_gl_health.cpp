// The GL self-check as the program runs it (ui/gl_health.hpp): the whole check passes on a working context
// (CI: Mesa under Xvfb or EGL); what a broken driver does is simulated the way it looked on the H100 after a
// kernel faulted (glyphs gone from the font atlas, pictures that come back wrong, a reset context), and each
// is caught by reading the pixels back. The commands that write pictures (snapshot, figure) exit 1 and write
// nothing when the check fails; `tilescope gl-check` says so with its exit code. SKIP without offscreen GL.
#include <filesystem>
#include <string>

#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gfx/gl_check.hpp"
#include "ui/gl_health.hpp"
#include "test_util.hpp"
#include "gfx/window.hpp"

using namespace ts;
namespace fs = std::filesystem;

namespace {

const std::string kBin =
    std::getenv("TILESCOPE_TEST_BIN") ? std::getenv("TILESCOPE_TEST_BIN") : TILESCOPE_BIN;

struct DamageGuard {
  ~DamageGuard() { gfx::simulate_gl_damage(gfx::GlDamage::None); }
};

bool no_gl(const test::CmdResult& r) {
  return r.code == 2 && r.output.find("OpenGL") != std::string::npos &&
         r.output.find("self-check") == std::string::npos;
}

}  // namespace

class GlHealth : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      m_host = std::make_unique<ui::GlCheckHost>(gfx::GlChoice::Auto);
    } catch (const gfx::DisplayError& e) {
      GTEST_SKIP() << "no offscreen OpenGL: " << e.what();
    }
  }
  std::unique_ptr<ui::GlCheckHost> m_host;
  DamageGuard m_undo;
};

TEST_F(GlHealth, TheWholeCheckPassesOnAWorkingContext) {
  const ui::GlSelfCheck r = m_host->check();
  EXPECT_TRUE(r.ok) << r.verdict << ": " << r.detail;
  EXPECT_TRUE(r.pattern_ok);
  EXPECT_TRUE(r.glyphs_ok);
  EXPECT_FALSE(r.context_lost);
  EXPECT_NE(r.detail.find("text 0 of"), std::string::npos) << r.detail;  // every glyph pixel where it belongs
  std::printf("%s (%s; %.1f ms)\n", r.verdict.c_str(), r.detail.c_str(), r.ms);
}

TEST_F(GlHealth, GlyphsWipedFromTheAtlasAreCaughtAndComeBackWhenTheRendererIsMadeAnew) {
  ASSERT_TRUE(m_host->check().ok);
  gfx::simulate_gl_damage(gfx::GlDamage::Glyphs);
  const ui::GlSelfCheck broken = m_host->check();
  EXPECT_FALSE(broken.ok);
  EXPECT_TRUE(broken.pattern_ok);  // the heatmap path is fine: only the text lost its glyphs
  EXPECT_FALSE(broken.glyphs_ok);
  EXPECT_NE(broken.verdict.find("line of text"), std::string::npos) << broken.verdict;
  EXPECT_FALSE(m_host->check().ok);  // the atlas stays wiped
  // What the window does next: the renderer's GL objects made anew (the atlas is uploaded again).
  ImGui_ImplOpenGL3_DestroyDeviceObjects();
  ImGui_ImplOpenGL3_CreateDeviceObjects();
  const ui::GlSelfCheck mended = m_host->check();
  EXPECT_TRUE(mended.ok) << mended.verdict << ": " << mended.detail;
}

TEST_F(GlHealth, PicturesThatComeBackWrongFailBothHalves) {
  gfx::simulate_gl_damage(gfx::GlDamage::Readback);
  const ui::GlSelfCheck r = m_host->check();
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.pattern_ok);
  EXPECT_FALSE(r.glyphs_ok);
  EXPECT_NE(r.verdict.find("known heatmap and a line of text wrong"), std::string::npos) << r.verdict;
  EXPECT_NE(r.detail.find("pixels wrong"), std::string::npos) << r.detail;
}

TEST_F(GlHealth, AResetIsALostContextNotAPictureToCompare) {
  gfx::simulate_gl_damage(gfx::GlDamage::Lost);
  const ui::GlSelfCheck r = m_host->check();
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.context_lost);
  EXPECT_NE(r.verdict.find("reset"), std::string::npos) << r.verdict;
}

// [SECTION] The commands.
TEST(GlCheckCommand, PassesHereAndFailsWithExitCode1WhenPicturesComeBackWrong) {
  const test::CmdResult ok = test::run_cmd(kBin + " gl-check");
  if (no_gl(ok)) GTEST_SKIP() << ok.output;
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_NE(ok.output.find("PASS"), std::string::npos) << ok.output;
  const test::CmdResult bad =
      test::run_cmd("TILESCOPE_SIMULATE_GL_DAMAGE=readback " + kBin + " gl-check --json");
  EXPECT_EQ(bad.code, 1) << bad.output;
  EXPECT_NE(bad.output.find("\"ok\":false"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("nvidia-smi --gpu-reset"), std::string::npos) << bad.output;  // what restores it
  for (const char* args : {"--every 0", "--watch abc", "--gl vulkan", "--backend opencl"}) {
    const test::CmdResult r = test::run_cmd(kBin + " gl-check " + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
  }
}

TEST(GlCheckCommand, ASnapshotIsNotWrittenWhenOpenGlFailsItsSelfCheck) {
  test::TempDir dir;
  const std::string png = dir.file("shot.png");
  const std::string args =
      " snapshot --backend cpu --size 64 --kernel tiled --tile 16 --input identity "
      "--width 1366 --height 768 --out " +
      png;
  const test::CmdResult bad = test::run_cmd("TILESCOPE_SIMULATE_GL_DAMAGE=readback " + kBin + args);
  if (no_gl(bad)) GTEST_SKIP() << bad.output;
  EXPECT_EQ(bad.code, 1) << bad.output;
  EXPECT_FALSE(fs::exists(png)) << "a picture known to be wrong was written";
  EXPECT_NE(bad.output.find("not written: OpenGL failed its self-check"), std::string::npos) << bad.output;
  // Glyphs the driver lost are uploaded again when the renderer is made anew: then the check passes and the
  // snapshot is written.
  const test::CmdResult mended = test::run_cmd("TILESCOPE_SIMULATE_GL_DAMAGE=glyphs " + kBin + args);
  EXPECT_EQ(mended.code, 0) << mended.output;
  EXPECT_TRUE(fs::exists(png)) << mended.output;
  // A context the driver reset: a new one is made (EGL, or a new hidden window), and the snapshot goes on.
  fs::remove(png);
  const test::CmdResult reset = test::run_cmd("TILESCOPE_SIMULATE_GL_DAMAGE=lost " + kBin + args);
  EXPECT_EQ(reset.code, 0) << reset.output;
  EXPECT_TRUE(fs::exists(png)) << reset.output;
}

TEST(GlCheckCommand, AFigureIsNotWrittenWhenOpenGlFailsItsSelfCheck) {
  test::TempDir dir;
  const std::string cmd = kBin +
                          " figure --plot occupancy --backend cpu --kernel tiled --size 4096 --gpu t4 "
                          "--figure-size 800x600 --out-dir " +
                          dir.file("figures");
  const test::CmdResult bad = test::run_cmd("TILESCOPE_SIMULATE_GL_DAMAGE=readback " + cmd);
  if (no_gl(bad)) GTEST_SKIP() << bad.output;
  EXPECT_EQ(bad.code, 1) << bad.output;
  EXPECT_NE(bad.output.find("not written: OpenGL failed its self-check"), std::string::npos) << bad.output;
  size_t files = 0;
  if (fs::exists(dir.file("figures")))
    for (const auto& e : fs::directory_iterator(dir.file("figures"))) files += e.is_regular_file();
  EXPECT_EQ(files, 0u);
  const test::CmdResult ok = test::run_cmd(cmd);
  EXPECT_EQ(ok.code, 0) << ok.output;
}

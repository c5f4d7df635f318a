// The GUI's frame loop driven in-process as a person drives it: a control edits the problem (panels edit the
// settings through pointers, as the test does), and the next frames turn that edit into a run (auto-run), or
// do not (auto-run off) until Run is pressed. Offscreen GL (EGL or the virtual X server); SKIP without any.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "ui/app_state.hpp"
#include "hosts/gui.hpp"
#include "kernels/engine/registry.hpp"
#include "gfx/window.hpp"

using namespace ts;

namespace {

// Frames until `done` holds or `seconds` pass; true when it held.
bool frames_until(ui::OffscreenGui& gui, const std::function<bool()>& done, double seconds = 60) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    gui.frame();
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::unique_ptr<ui::OffscreenGui> offscreen_or_skip(const ProblemSpec& spec, std::string* why) {
  try {
    return std::make_unique<ui::OffscreenGui>(make_backend(BackendChoice::Cpu, nullptr), spec);
  } catch (const gfx::DisplayError& e) {
    *why = e.what();
    return nullptr;
  }
}

}  // namespace

TEST(FrameLoop, AutoRunRunsTheProblemAgainAfterAControlChangesIt) {
  ProblemSpec spec;
  spec.m = spec.n = spec.k = 48;
  spec.tile = 8;
  std::string why;
  auto gui = offscreen_or_skip(spec, &why);
  if (!gui) GTEST_SKIP() << "no offscreen OpenGL: " << why;
  ui::AppState& s = gui->state();
  ASSERT_TRUE(s.settings.auto_run);
  ASSERT_TRUE(frames_until(*gui, [&] { return s.result_serial == 1; })) << s.last_error;
  EXPECT_EQ(s.result->spec.n, 48);

  // The N slider (Square on), as the Controls commit it (M and K follow N where the spec is edited): the next
  // frames submit the new problem by themselves.
  s.settings.spec.n = 64;
  ui::keep_square(s);
  ASSERT_TRUE(frames_until(*gui, [&] { return s.result_serial == 2; })) << s.last_error;
  EXPECT_EQ(s.result->spec.m, 64);
  EXPECT_EQ(s.result->spec.n, 64);
  EXPECT_EQ(s.result->spec.k, 64);
  EXPECT_TRUE(s.result->error.passed);

  // The kernel and tile controls.
  s.settings.spec.kernel = "naive";
  s.settings.spec.tile = 16;
  ASSERT_TRUE(frames_until(*gui, [&] { return s.result_serial == 3; })) << s.last_error;
  EXPECT_EQ(s.result->spec.kernel, "naive");
  EXPECT_EQ(s.result->spec.tile, 16);

  // A refused edit (a tile the kernel does not allow) reaches the status bar, and the window goes on.
  s.settings.spec.tile = 12;
  ASSERT_TRUE(frames_until(*gui, [&] { return !s.last_error.empty(); })) << "the refusal never arrived";
  EXPECT_NE(s.last_error.find("tile 12 is not allowed"), std::string::npos) << s.last_error;
  EXPECT_TRUE(s.last_error_is_input);
  s.settings.spec.tile = 8;
  ASSERT_TRUE(frames_until(*gui, [&] { return s.result_serial == 4; })) << s.last_error;

  // Auto-run off: an edit alone runs nothing; Run does.
  s.settings.auto_run = false;
  s.settings.spec.n = 40;
  EXPECT_FALSE(frames_until(
      *gui, [&] { return s.busy() || s.result_serial != 4; }, 1.0))
      << "a run started without auto-run or the Run button";
  s.ask(ui::rq::Run{});
  ASSERT_TRUE(frames_until(*gui, [&] { return s.result_serial == 5; })) << s.last_error;
  EXPECT_EQ(s.result->spec.n, 40);
}

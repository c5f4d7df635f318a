// The real window, driven like a person would drive it: the Dear ImGui Test Engine moves the mouse, drags,
// types and presses keys inside TileScope's own frame loop (run_gui, the CPU backend, a virtual X server).
// Each test opens a fresh window with its own config folder, and checks what the app did in response.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_te_context.h>
#include <imgui_te_engine.h>

#include <algorithm>
#include <csignal>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <stb_image.h>
#include <nlohmann/json.hpp>
#include <stb_image.h>

#include "ui/app.hpp"
#include "core/engine/schedule_replay.hpp"
#include "core/io/files.hpp"
#include "forwarding_backend.hpp"
#include "core/engine/measure.hpp"
#include "gfx/gl_check.hpp"
#include "gfx/heatmap_set.hpp"
#include "core/engine/gpu_catalog.hpp"
#include "core/io/npy.hpp"
#include "hosts/gui.hpp"
#include "ui/plots/plots.hpp"
#include "kernels/engine/registry.hpp"
#include "core/io/session.hpp"
#include "core/plots/rung_suggest.hpp"
#include "core/io/schedule_trace.hpp"
#include "core/remote/remote_backend.hpp"
#include "streamk_sample.hpp"
#include "test_util.hpp"
#include "core/user_kernel/kernel_workshop.hpp"
#include "kernels/user/nvrtc_compile.hpp"

using namespace ts;
using ts::ui::App;

namespace {

bool have_display() {
  const char* d = std::getenv("DISPLAY");
  return d && *d;
}

// One window session: `body` runs as a Test Engine test inside the frame loop; `resize` (set by a test) is
// applied to the OS window on the frame loop's thread.
struct GuiRun {
  std::function<void(ImGuiTestContext*, App&)> body;
  std::function<void(App&, GLFWwindow*)> first_shown;  // right after the first frame the window shows
  std::function<void(App&)> before_first_frame;        // when the window has started, before any frame
  std::shared_ptr<Backend> backend;                    // the engine (empty: the CPU backend)
  std::optional<ImVec2> resize;
  ImVec2 window_size{0, 0};  // the OS window's size after the last frame
  ImGuiTestEngineResultSummary summary;
  int tested = 0, passed = 0;
};

void run_session(GuiRun& s) {
  ImGuiTestEngine* engine = nullptr;
  ui::GuiOptions go;
  std::string note;
  go.backend = s.backend ? s.backend : make_backend(BackendChoice::Cpu, &note);
  go.hooks.poll_continuously = true;
  go.hooks.unseen = true;  // no test here reads the window's pixels (exports and screenshots still draw)
  go.hooks.started = [&](App& app, GLFWwindow*) {
    if (s.before_first_frame) s.before_first_frame(app);
    engine = ImGuiTestEngine_CreateContext();
    ImGuiTestEngineIO& io = ImGuiTestEngine_GetIO(engine);
    io.ConfigVerboseLevel = ImGuiTestVerboseLevel_Warning;
    io.ConfigVerboseLevelOnError = ImGuiTestVerboseLevel_Debug;
    io.ConfigRunSpeed = ImGuiTestRunSpeed_Fast;
    io.ConfigLogToTTY = true;
    io.ConfigNoThrottle = true;
    io.ConfigSavedSettings = false;
    io.ConfigCaptureEnabled = false;
    io.ConfigWatchdogKillTest = 240;
    io.ConfigWatchdogWarning = 120;
    ImGuiTestEngine_Start(engine, ImGui::GetCurrentContext());
    ImGuiTest* t = ImGuiTestEngine_RegisterTest(engine, "tilescope", "session", __FILE__, __LINE__);
    App* a = &app;
    t->TestFunc = [&s, a](ImGuiTestContext* ctx) { s.body(ctx, *a); };
    ImGuiTestEngine_QueueTest(engine, t, ImGuiTestRunFlags_RunFromCommandLine);
  };
  bool shown = false;
  go.hooks.after_swap = [&](App& app, GLFWwindow* w) {
    if (!shown && s.first_shown) s.first_shown(app, w);
    shown = true;
    ImGuiTestEngine_PostSwap(engine);
    if (s.resize) {
      glfwSetWindowSize(w, int(s.resize->x), int(s.resize->y));
      s.resize.reset();
    }
    int ww = 0, wh = 0;
    glfwGetWindowSize(w, &ww, &wh);
    s.window_size = ImVec2(float(ww), float(wh));
  };
  go.hooks.keep_running = [&](App&) { return !ImGuiTestEngine_IsTestQueueEmpty(engine); };
  go.hooks.before_exit = [&](App&) {
    ImGuiTestEngine_GetResultSummary(engine, &s.summary);
    ImGuiTestEngine_Stop(engine);
  };
  ui::run_gui(go);
  ImGuiTestEngine_DestroyContext(engine);
  s.tested = s.summary.CountTested;
  s.passed = s.summary.CountSuccess;
}

// Frames until `done` holds, for at most `seconds`: runs finish on the engine's thread meanwhile.
bool yield_until(ImGuiTestContext* ctx, const std::function<bool()>& done, double seconds = 60) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done() && std::chrono::steady_clock::now() < end) ctx->Yield();
  return done();
}

// A window (a dialog) lies wholly inside the main window.
bool inside_main_window(const char* name) {
  const ImGuiWindow* w = ImGui::FindWindowByName(name);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  return w && w->Pos.x >= vp->Pos.x && w->Pos.y >= vp->Pos.y &&
         w->Pos.x + w->Size.x <= vp->Pos.x + vp->Size.x && w->Pos.y + w->Size.y <= vp->Pos.y + vp->Size.y;
}

// A message of the log holding both texts.
bool logged(const ui::AppState& st, const std::string& a, const std::string& b = "") {
  for (const auto& m : st.log.messages())
    if (m.text.find(a) != std::string::npos && m.text.find(b) != std::string::npos) return true;
  return false;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

bool wait_for_result(ImGuiTestContext* ctx, App& app, uint64_t after_serial) {
  return yield_until(ctx, [&] { return app.state().result_serial > after_serial && !app.state().busy(); });
}

// The window at `size` in its default arrangement for that size, the Timings tab in front (a tab of the
// bottom row on a laptop). False when the window did not take the size.
bool timings_at(ImGuiTestContext* ctx, GuiRun& s, ImVec2 size) {
  s.resize = size;
  if (!yield_until(
          ctx, [&] { return s.window_size.x == size.x && s.window_size.y == size.y; }, 10))
    return false;
  ctx->MenuClick("//##MainMenuBar/View/Reset layout");
  ctx->Yield(4);
  ctx->WindowFocus("//Timings");
  ctx->Yield(4);
  return true;
}

// A config folder of its own for each test (settings.json and imgui.ini), gone afterwards.
class Gui : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_display()) GTEST_SKIP() << "no X display (install xvfb so ctest can start one)";
    ::setenv("XDG_CONFIG_HOME", m_dir.path().c_str(), 1);
    ::setenv("XDG_PICTURES_DIR", (m_dir.path() / "pictures").c_str(), 1);
    ::setenv("XDG_DATA_HOME", (m_dir.path() / "data").c_str(), 1);  // the window's session file
  }
  std::filesystem::path config_file(const char* name) const { return m_dir.path() / "tilescope" / name; }
  test::TempDir m_dir;
};

bool inside(const ui::Rect& r, ImVec2 window) {
  return r.x >= -0.5f && r.y >= -0.5f && r.x + r.w <= window.x + 0.5f && r.y + r.h <= window.y + 0.5f;
}
bool overlap(const ui::Rect& a, const ui::Rect& b) {
  return a.x + 1 < b.x + b.w && b.x + 1 < a.x + a.w && a.y + 1 < b.y + b.h && b.y + 1 < a.y + a.h;
}

// Every panel shown is inside the window, no two shown panels overlap; from 1280 x 720 up, none has text cut
// off (smaller windows may cut text, never hide a panel).
void check_layout(ImGuiTestContext* ctx, const ui::FrameReport& drawn, ImVec2 window) {
  const bool readable = window.x >= 1280 && window.y >= 720;
  std::vector<std::pair<std::string, ui::Rect>> shown;
  for (const auto& [name, p] : drawn.panels) {
    if (!p.visible) continue;
    IM_CHECK_NO_RET(inside(p.rect, window));
    if (!inside(p.rect, window))
      ctx->LogError("%s at %.0f,%.0f %.0fx%.0f is outside the %.0fx%.0f window", name.c_str(), p.rect.x,
                    p.rect.y, p.rect.w, p.rect.h, window.x, window.y);
    IM_CHECK_NO_RET(!readable || p.clipped_px == 0);
    if (readable && p.clipped_px)
      ctx->LogError("%s cuts off %.0f px of its content", name.c_str(), p.clipped_px);
    for (const auto& [other, r] : shown) {
      IM_CHECK_NO_RET(!overlap(p.rect, r));
      if (overlap(p.rect, r)) ctx->LogError("%s overlaps %s", name.c_str(), other.c_str());
    }
    shown.emplace_back(name, p.rect);
  }
}

}  // namespace

TEST_F(Gui, DraggingTheSizeSliderRunsOnceWhenLetGoWithASnappedSize) {
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    const uint64_t runs = st.runs_submitted, serial = st.result_serial;
    const int64_t before = st.settings.spec.n;
    ctx->SetRef("Controls");
    // A drag of many frames: no run while the hand is still on the slider.
    ctx->MouseMove("$$1/##slider");
    ctx->MouseDown(0);
    for (int i = 0; i < 12; ++i) {
      ctx->MouseMoveToPos(ImGui::GetIO().MousePos + ImVec2(-6, 0));
      IM_CHECK_EQ(st.runs_submitted, runs);
    }
    ctx->MouseUp(0);
    ctx->Yield(2);
    IM_CHECK_EQ(st.runs_submitted, runs + 1);  // exactly one run for the committed value
    IM_CHECK(wait_for_result(ctx, app, serial));
    const int64_t n = st.settings.spec.n;
    IM_CHECK_LT(n, before);
    IM_CHECK_EQ(st.result->spec.n, n);  // the Result and the heatmaps show the committed size
    IM_CHECK_EQ(st.result->spec.m, n);
    // Snapped: a multiple of the tile (16) or a power of two.
    IM_CHECK((n % 16 == 0) || ((n & (n - 1)) == 0));
    IM_CHECK_EQ(st.runs_submitted, runs + 1);
  };
  run_session(s);
  EXPECT_EQ(s.tested, 1);
  EXPECT_EQ(s.passed, 1) << "see the Test Engine log above";
}

TEST_F(Gui, ATypedSizeRunsOnceWhenCommittedAndBadValuesAreRefusedWithAMessage) {
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->SetRef("Controls");
    uint64_t runs = st.runs_submitted, serial = st.result_serial;
    // Typing 1, 10, 100 then Enter is one run at 100, not three.
    ctx->ItemClick("$$1/##text");
    ctx->KeyCharsReplace("100");
    IM_CHECK_EQ(st.runs_submitted, runs);
    ctx->KeyPress(ImGuiKey_Enter);
    ctx->Yield(2);
    IM_CHECK_EQ(st.runs_submitted, runs + 1);
    IM_CHECK(wait_for_result(ctx, app, serial));
    IM_CHECK_EQ(st.result->spec.n, 100);
    // 0 and a size above the CPU backend's limit are refused with a message; nothing runs.
    for (const char* bad : {"0", "5000"}) {
      runs = st.runs_submitted;
      const uint64_t msgs = st.log.latest() ? st.log.latest()->serial : 0;
      ctx->ItemClick("$$1/##text");
      ctx->KeyCharsReplaceEnter(bad);
      ctx->Yield(2);
      IM_CHECK_EQ(st.runs_submitted, runs);
      IM_CHECK_EQ(st.settings.spec.n, 100);
      IM_CHECK(st.log.latest() && st.log.latest()->serial > msgs);
      IM_CHECK(st.log.latest()->text.find("N") != std::string::npos);
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// The square mode is applied where the problem is edited (keep_square), never fixed up every frame: ticking
// Square makes M and K follow N at once and the next run is square; with it off, M, N and K stay as set.
TEST_F(Gui, TickingSquareMakesMAndKFollowNAndUntickingKeepsThem) {
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->SetRef("Controls");
    ctx->ItemUncheck("Square (M = N = K)");
    IM_CHECK(!st.settings.square);
    uint64_t serial = st.result_serial;
    st.settings.spec.m = 40;  // as the M and K fields commit them
    st.settings.spec.k = 56;
    IM_CHECK(wait_for_result(ctx, app, serial));
    IM_CHECK_EQ(st.result->spec.m, 40);
    IM_CHECK_EQ(st.result->spec.k, 56);
    IM_CHECK_EQ(st.settings.spec.m, 40);  // frames later: nothing squared it behind the person's back
    serial = st.result_serial;
    ctx->ItemCheck("Square (M = N = K)");
    IM_CHECK(st.settings.square);
    IM_CHECK_EQ(st.settings.spec.m, st.settings.spec.n);
    IM_CHECK_EQ(st.settings.spec.k, st.settings.spec.n);
    IM_CHECK(wait_for_result(ctx, app, serial));
    IM_CHECK_EQ(st.result->spec.m, st.settings.spec.n);
    IM_CHECK_EQ(st.result->spec.k, st.settings.spec.n);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, SpaceRunsUnlessATextFieldHasTheKeyboard) {
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    uint64_t runs = st.runs_submitted, serial = st.result_serial;
    ctx->MouseMoveToPos(ImGui::GetMainViewport()->GetCenter());
    ctx->KeyPress(ImGuiKey_Space);
    ctx->Yield(2);
    IM_CHECK_EQ(st.runs_submitted, runs + 1);
    IM_CHECK(wait_for_result(ctx, app, serial));
    runs = st.runs_submitted;
    serial = st.result_serial;
    ctx->KeyPress(ImGuiKey_F5);
    ctx->Yield(2);
    IM_CHECK_EQ(st.runs_submitted, runs + 1);
    IM_CHECK(wait_for_result(ctx, app, serial));
    // In the size field, Space is a character, not a run.
    runs = st.runs_submitted;
    ctx->SetRef("Controls");
    ctx->ItemClick("$$1/##text");
    ctx->KeyPress(ImGuiKey_Space);
    ctx->Yield(2);
    IM_CHECK_EQ(st.runs_submitted, runs);
    ctx->KeyPress(ImGuiKey_Escape);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// From the window's minimum size (960 x 600) up, every heatmap is at least as wide and tall as its colour
// scale is wide, and at least 5.5 em; below it (a small screen, a window manager that ignores the minimum) at
// least 5 em: the panels around the Matrices give way when the window shrinks (ImGui alone kept the side
// columns and squeezed the maps to 30 px at 900 x 560).
void check_heatmaps(ImGuiTestContext* ctx, const ui::FrameReport& drawn, ImVec2 window) {
  const bool usual = window.x >= 960 && window.y >= 600;
  const float least = (usual ? 5.5f : 5.0f) * ImGui::GetFontSize();
  for (const char* map : {"heatmap A", "heatmap B", "heatmap C = A B", "heatmap C - reference"}) {
    const ui::HeatmapReport& h = drawn.heatmaps.at(map);
    const float need = usual ? std::max(least, h.scale_w) : least;
    const bool ok = h.plot.w >= need && h.plot.h >= need;
    IM_CHECK_NO_RET(ok);
    if (!ok)
      ctx->LogError("%s is %.0f x %.0f px, its colour scale %.0f px wide (at least %.0f wanted)", map,
                    h.plot.w, h.plot.h, h.scale_w, least);
  }
}

TEST_F(Gui, ResizingKeepsEveryPanelInsideTheWindowWithoutOverlapOrCutText) {
  GuiRun s;
  s.body = [&s](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    // The window opens at 1600 x 1000 on this 1920 x 1200 screen: three columns, Timings beside the tile
    // schedule on a GPU. On the CPU backend the tile schedule (which needs a GPU) is a tab behind Timings,
    // not a third of the bottom row.
    IM_CHECK(drawn.panels.at("Timings").visible);
    IM_CHECK(!drawn.panels.at("Tile schedule").visible);
    IM_CHECK(drawn.panels.at("Tile schedule").docked);
    // Down to 900 x 560, under the window's own minimum (a window manager may allow it, a small screen may
    // force it).
    for (ImVec2 size : {ImVec2(1024, 700), ImVec2(1280, 720), ImVec2(1600, 1000), ImVec2(1366, 768),
                        ImVec2(960, 600), ImVec2(900, 560), ImVec2(1920, 1080)}) {
      s.resize = size;
      IM_CHECK(yield_until(
          ctx, [&] { return s.window_size.x == size.x && s.window_size.y == size.y; }, 10));
      ctx->Yield(6);  // the dock space and the panels settle
      IM_CHECK_EQ(ImGui::GetIO().DisplaySize.x, size.x);
      ctx->LogInfo("%.0f x %.0f: Controls %.0f wide, Matrices %.0f x %.0f, A %.0f px", size.x, size.y,
                   drawn.panels.at("Controls").rect.w, drawn.panels.at("Matrices").rect.w,
                   drawn.panels.at("Matrices").rect.h, drawn.heatmaps.at("heatmap A").plot.w);
      check_layout(ctx, drawn, size);
      check_heatmaps(ctx, drawn, size);
      // The heatmaps, Controls and Result in front, whatever the arrangement became; every panel still one
      // click away: shown, or a tab of a shown node.
      for (const char* p : {"Controls", "Matrices", "Result"}) IM_CHECK(drawn.panels.at(p).visible);
      for (const char* p : {"Timings", "Roofline", "Occupancy", "Tile schedule", "Messages"})
        IM_CHECK(drawn.panels.at(p).visible || drawn.panels.at(p).docked);
      // The plots of the bottom row fit their panel: nothing scrolled out of sight (the Roofline's x axis was
      // at 1366 x 768).
      for (const char* p : {"Timings", "Roofline"}) {
        st.ask(ui::rq::BringToFront{{p}});
        ctx->Yield(6);
        IM_CHECK(drawn.panels.at(p).visible);
        IM_CHECK_EQ(drawn.panels.at(p).overflow_px, 0.0f);
        const ui::Rect& area = drawn.plot_areas.at(p[0] == 'T' ? "timings" : "roofline");
        IM_CHECK(inside(area, ImVec2(size.x, size.y)));
        const ui::Rect& panel = drawn.panels.at(p).rect;
        IM_CHECK_LE(area.y + area.h, panel.y + panel.h);
      }
      st.ask(ui::rq::BringToFront{{"Timings", "Matrices"}});
      ctx->Yield(6);
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// The first frame the window shows has the menu bar at the top, the dock space built and the panels in it: it
// used to show an empty dock, drawn 94 px down (the window had been resized after it was created).
TEST_F(Gui, TheFirstFrameShownHasTheMenuBarAtTheTopAndEveryPanelInPlace) {
  GuiRun s;
  float menu_y = -1, status_bottom = -1, display_h = 0;
  std::set<std::string> shown;
  int window_h = 0, fb_h = 0;
  s.first_shown = [&](App& app, GLFWwindow* w) {
    if (const ImGuiWindow* mb = ImGui::FindWindowByName("##MainMenuBar")) menu_y = mb->Pos.y;
    const ui::Rect& status = app.report().panels.at("Status").rect;
    status_bottom = status.y + status.h;
    display_h = ImGui::GetIO().DisplaySize.y;
    for (const auto& [name, p] : app.report().panels)
      if (p.visible) shown.insert(name);
    int ww = 0;
    glfwGetWindowSize(w, &ww, &window_h);
    glfwGetFramebufferSize(w, &ww, &fb_h);
  };
  s.body = [&](ImGuiTestContext* ctx, App&) {
    ctx->Yield(1);
    IM_CHECK_EQ(menu_y, 0.0f);
    IM_CHECK_EQ(status_bottom, display_h);
    IM_CHECK_EQ(display_h, float(window_h));
    IM_CHECK_EQ(fb_h, window_h);
    for (const char* p : {"Controls", "Matrices", "Result", "Timings", "Status"}) {
      IM_CHECK_NO_RET(shown.count(p) == 1);
      if (!shown.count(p)) ctx->LogError("%s is not drawn in the first frame shown", p);
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, ResetLayoutShowsClosedPanelsAgainInTheirPlace) {
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    const ui::Rect before = drawn.panels.at("Result").rect;
    ctx->MenuClick("//##MainMenuBar/View/Result");  // hide it
    ctx->Yield(3);
    IM_CHECK(!drawn.panels.at("Result").visible);
    IM_CHECK(!st.settings.view.shown("Result"));
    ctx->MenuClick("//##MainMenuBar/View/Reset layout");
    ctx->Yield(6);
    IM_CHECK(drawn.panels.at("Result").visible);
    const ui::Rect after = drawn.panels.at("Result").rect;
    IM_CHECK_EQ(after.x, before.x);
    IM_CHECK_EQ(after.w, before.w);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, ARelaunchRestoresTheWindowSizeTheHiddenPanelsAndTheProblem) {
  GuiRun first;
  first.body = [&first](ImGuiTestContext* ctx, App& app) {
    IM_CHECK(wait_for_result(ctx, app, 0));
    first.resize = ImVec2(1300, 760);
    IM_CHECK(yield_until(
        ctx, [&] { return first.window_size.x == 1300; }, 10));
    ctx->MenuClick("//##MainMenuBar/View/Occupancy");  // hide it
    ctx->SetRef("Controls");
    const uint64_t serial = app.state().result_serial;
    ctx->ItemClick("$$1/##text");
    ctx->KeyCharsReplaceEnter("96");
    IM_CHECK(wait_for_result(ctx, app, serial));
  };
  run_session(first);
  ASSERT_EQ(first.passed, 1);
  ASSERT_TRUE(std::filesystem::exists(config_file("settings.json")));
  ASSERT_TRUE(std::filesystem::exists(config_file("imgui.ini")));

  GuiRun second;
  second.body = [&second](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    ctx->Yield(4);
    IM_CHECK_EQ(second.window_size.x, 1300.0f);
    IM_CHECK_EQ(second.window_size.y, 760.0f);
    IM_CHECK(!st.settings.view.shown("Occupancy"));
    IM_CHECK(!drawn.panels.at("Occupancy").visible);
    IM_CHECK_EQ(st.settings.spec.n, 96);
    IM_CHECK(drawn.panels.at("Controls").docked && drawn.panels.at("Matrices").docked);
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK_EQ(st.result->spec.n, 96);
  };
  run_session(second);
  EXPECT_EQ(second.passed, 1);
}

// Issue 25: at 1366 x 768, with two sizes measured, the wave mark's "k waves" label sat at the top of the
// Timings plot and took part in its auto-fit, so the y axis grew by the label's size every frame (-4 .. 7,
// then -30000, ... -2e204). The limits must stay on the data and still, frame after frame, at a laptop's and
// a desktop's size.
TEST_F(Gui, TheTimingsAxesStayOnTheDataFrameAfterFrameAtLaptopAndDesktopSizes) {
  GuiRun s;
  s.body = [&s](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK_EQ(st.result->spec.n, 256);  // the CPU backend's first size
    // 256, then 736: the catalog H100's THEORETICAL wave mark for tiled T=16 (a second wave above 1056
    // blocks, N = 520) falls between them, with its label at the top of the plot.
    ctx->SetRef("Controls");
    const uint64_t serial = st.result_serial;
    ctx->ItemClick("$$1/##text");
    ctx->KeyCharsReplaceEnter("736");
    IM_CHECK(wait_for_result(ctx, app, serial));
    // A laptop, a desktop, and the laptop again (shrinking back started it again before).
    for (ImVec2 size : {ImVec2(1366, 768), ImVec2(1920, 1080), ImVec2(1366, 768)}) {
      IM_CHECK(timings_at(ctx, s, size));
      IM_CHECK(drawn.panels.at("Timings").visible);
      const TimingsData& td = ui::timings_of(st);
      IM_CHECK_EQ(td.x_lo, 256.0);
      IM_CHECK_EQ(td.x_hi, 736.0);
      bool mark_between = false;
      for (const auto& w : td.marks.marks) mark_between |= w.size > 256 && w.size < 736;
      // The mark comes from the build-time resource table, which a build without CUDA (the sanitizer build)
      // does not have: there the axes are checked without the label.
      IM_CHECK(mark_between || build_resources().empty());
      double lo = 1e300, hi = 0;  // the plotted values, in the axis' unit
      for (const auto& c : td.curves)
        for (const auto& p : c.series.points) {
          lo = std::min(lo, p.tflops * 1e12 * td.flops.scale);
          hi = std::max(hi, p.tflops * 1e12 * td.flops.scale);
        }
      IM_CHECK_GT(hi, 0.0);
      std::optional<std::array<double, 4>> first;
      for (int frame = 0; frame < 180; ++frame) {
        ctx->Yield();
        const auto it = drawn.plot_limits.find("timings");
        IM_CHECK(it != drawn.plot_limits.end() && !it->second.empty());
        const std::array<double, 4> l = it->second.front();  // x_lo, x_hi, y_lo, y_hi of the FLOP/s plot
        IM_CHECK_LE(l[0], 256.0);
        IM_CHECK_GE(l[1], 736.0);
        IM_CHECK_LE(l[2], lo);
        IM_CHECK_GE(l[3], hi);
        IM_CHECK_GE(l[2], lo - (hi - lo) - 0.1 * hi);  // padding around the data, not a runaway
        IM_CHECK_LE(l[3], hi + (hi - lo) + 0.1 * hi);
        if (frame == 10) first = l;
        if (frame > 10) IM_CHECK(l == *first);  // still: nothing feeds on its own size
      }
      // The mark's "k waves" label stands in the top third of the plot or is not drawn (a low plot would
      // have it across the curve): at 1366 x 768 the plot is too low for it, at 1920 x 1080 it is drawn.
      const ui::Rect area = drawn.plot_areas.at("timings");
      const float label_px = ImGui::CalcTextSize("99 waves").x + 0.5f * ImGui::GetFontSize();
      if (mark_between) {
        IM_CHECK_EQ(drawn.timings_wave_labels > 0, area.h >= 3 * label_px);
        IM_CHECK_EQ(drawn.timings_wave_labels > 0, size.x == 1920);
      }
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// With overlays the Timings legend wrapped into three rows under a plot 40 px tall at 1366 x 768. The legend
// keeps to the rows the height allows, the current configuration first, the rest under "+k more"; at 1920 x
// 1080 every entry is shown.
TEST_F(Gui, ALowTimingsPlotKeepsItsHeightAndFoldsTheLegendItCannotHold) {
  GuiRun s;
  s.body = [&s](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    for (const char* gpu : {"Overlay GPU one", "Overlay GPU two"}) {
      DeviceInfo d;
      d.backend = "cuda";
      d.name = d.label = gpu;
      d.sm_count = 132;
      Session other = Session::for_device(d);
      for (const auto& [kernel, tile] : std::vector<std::pair<std::string, int>>{{"tiled", 32}, {"tiled", 8}})
        for (int64_t n : {256, 512, 768}) {
          RunResult r;
          r.spec.m = r.spec.n = r.spec.k = n;
          r.spec.kernel = kernel;
          r.spec.tile = tile;
          r.samples_ms = {0.01 * double(n) / 256, 0.011 * double(n) / 256};
          r.stats = summarize(r.samples_ms);
          r.error.passed = true;
          r.date = "2026-11-28T00:00:00Z";
          other.add(r);
        }
      st.sessions.open(std::move(other));
    }
    ++st.sessions_serial;
    for (ImVec2 size : {ImVec2(1366, 768), ImVec2(1920, 1080)}) {
      IM_CHECK(timings_at(ctx, s, size));
      IM_CHECK_GE(ui::timings_of(st).curves.size(), 5u);  // the live curve and four overlaid
      const ui::Rect area = drawn.plot_areas.at("timings");
      const float em = ImGui::GetFontSize();
      if (size.x == 1366) {
        IM_CHECK_GT(drawn.timings_legend_hidden, 0);
        IM_CHECK_GE(area.h, 4 * em);  // 40 px before
      } else {
        IM_CHECK_EQ(drawn.timings_legend_hidden, 0);
      }
      const ui::Rect panel = drawn.panels.at("Timings").rect;
      IM_CHECK_EQ(drawn.panels.at("Timings").overflow_px, 0.0f);  // the legend's rows are inside the panel
      IM_CHECK_LE(area.y + area.h, panel.y + panel.h);
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// Issue 25: the kernel file that was open is opened again (and said to be gone when it is), and the Sweep
// panel comes back as it was left.
TEST_F(Gui, ARelaunchReopensTheKernelFileAndRestoresTheSweepPanel) {
  const std::string kfile = (m_dir.path() / "mine.cu").string();
  std::ofstream(kfile) << "__global__ void my_mm(float* C, const float* A, const float* B, int N) {}\n";
  SweepSettings left;
  GuiRun first;
  first.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK(st.settings.kernel_file.empty());
    st.ask(ui::rq::OpenKernel{kfile});  // what a drop on the window (or File > Open kernel) does
    IM_CHECK(yield_until(
        ctx, [&] { return st.user.active && st.user.path == kfile; }, 30));
    IM_CHECK_EQ(st.settings.kernel_file, kfile);
    // Its build done (a new build brings the Your kernel panel to the front, which would take the keys typed
    // into the Sweep panel below).
    IM_CHECK(yield_until(
        ctx, [&] { return !st.kernel_working(); }, 60));
    ctx->Yield(3);
    ctx->WindowFocus("//Sweep");
    ctx->Yield(3);
    ctx->SetRef("//Sweep");
    ctx->ItemClick("from/##v");
    ctx->KeyCharsReplaceEnter("48");
    ctx->ItemClick("to/##v");
    ctx->KeyCharsReplaceEnter("480");
    ctx->ItemClick("powers of two (x2)");
    ctx->ItemClick("also + offset");
    ctx->Yield(2);
    ctx->ItemClick("##ragged");
    ctx->KeyCharsReplaceEnter("3");
    ctx->ItemClick("K fixed, M = N");
    ctx->Yield(2);
    ctx->ItemClick("K/##v");
    ctx->KeyCharsReplaceEnter("96");
    // One more configuration: a CPU kernel's tile that is not ticked yet.
    std::string ticked;
    for (const KernelInfo& k : st.kernels())
      if (ticked.empty() && k.cpu && !k.teaching && k.tiles.size() > 1)
        for (int t : k.tiles)
          if (ticked.empty() && !(k.id == st.settings.spec.kernel && t == st.settings.spec.tile)) {
            ticked = k.id + "/" + std::to_string(t) + "##t" + std::to_string(t);
            left.configs.push_back({k.id, t});
          }
    IM_CHECK(!ticked.empty());
    ctx->ItemClick(ticked.c_str());
    ctx->ItemClick("quick");
    ctx->Yield(2);
    IM_CHECK(st.settings.sweep.has_value());
    const SweepSettings& w = *st.settings.sweep;
    IM_CHECK_EQ(w.from, 48);
    IM_CHECK_EQ(w.to, 480);
    IM_CHECK(w.powers_of_two && w.offset_on && w.quick);
    IM_CHECK_EQ(w.offset, 3);
    IM_CHECK(w.shape == SweepShape::FixedK);
    IM_CHECK_EQ(w.fixed, 96);
    IM_CHECK(std::find(w.configs.begin(), w.configs.end(), left.configs.front()) != w.configs.end());
    IM_CHECK_EQ(w.configs.size(), size_t(2));
    left = w;
  };
  run_session(first);
  ASSERT_EQ(first.passed, 1);
  const nlohmann::json saved = nlohmann::json::parse(read_text(config_file("settings.json")));
  EXPECT_EQ(saved["kernel_file"], kfile);
  EXPECT_EQ(saved["sweep"]["from"], 48);

  GuiRun second;
  second.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(yield_until(
        ctx, [&] { return st.user.active && st.user.path == kfile; }, 30));
    IM_CHECK(logged(st, "opened " + kfile));
    IM_CHECK(!logged(st, "is not open in this session"));
    ctx->WindowFocus("//Sweep");
    ctx->Yield(3);
    IM_CHECK(drawn.panels.at("Sweep").visible);
    // The panel took its fields from the settings (had it not, writing its fields back would have changed
    // them).
    IM_CHECK(st.settings.sweep.has_value() && *st.settings.sweep == left);
    IM_CHECK(st.sweep_quick);
  };
  run_session(second);
  ASSERT_EQ(second.passed, 1);

  // Gone by the next launch: said so, nothing opened, and not looked for again.
  std::filesystem::remove(kfile);
  GuiRun third;
  third.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK(logged(st, "the kernel file open last time, " + kfile, "is gone"));
    IM_CHECK(!st.user.active);
    IM_CHECK(st.settings.kernel_file.empty());
  };
  run_session(third);
  EXPECT_EQ(third.passed, 1);
  EXPECT_EQ(nlohmann::json::parse(read_text(config_file("settings.json")))["kernel_file"], "");
}

TEST_F(Gui, HoveringAHeatmapReadsTheElementDrawnThere) {
  // Ramp input: A[i][j] = i and B[i][j] = j, so a value read back names the row (A) or column (B) under the
  // mouse: a flipped or shifted picture would read another.
  std::filesystem::create_directories(m_dir.path() / "tilescope");
  std::ofstream(config_file("settings.json"))
      << R"({"m": 64, "n": 48, "k": 40, "square": false, "input": "ramp"})";
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->Yield(4);
    IM_CHECK_EQ(st.result->spec.input, InputKind::Ramp);
    for (const char* map : {"A", "B"}) {
      const ui::HeatmapReport& h = drawn.heatmaps.at(std::string("heatmap ") + map);
      for (const auto& rc : {std::pair<int64_t, int64_t>{0, 0}, {5, 30}, {39, 2}, {20, 17}}) {
        const int64_t row = rc.first, col = rc.second;  // plain locals: a lambda below captures them
        // The centre of element (row, col) on screen, from the plot's rectangle and its limits.
        const float x = h.plot.x + float((double(col) + 0.5 - h.x0) / (h.x1 - h.x0)) * h.plot.w;
        const float y = h.plot.y + float((double(row) + 0.5 - h.y0) / (h.y1 - h.y0)) * h.plot.h;
        ctx->MouseMoveToPos(ImVec2(x, y));
        IM_CHECK(yield_until(
            ctx, [&] { return drawn.hover.ready && drawn.hover.row == row; }, 10));
        IM_CHECK_EQ(drawn.hover.map, std::string(map));
        IM_CHECK_EQ(drawn.hover.row, row);
        IM_CHECK_EQ(drawn.hover.col, col);
        IM_CHECK_EQ(drawn.hover.value, float(map[0] == 'A' ? row : col));
      }
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

namespace {
// The screen position of element (row, col)'s centre on a heatmap, from its plot rectangle and limits.
ImVec2 element_centre(const ui::HeatmapReport& h, int64_t row, int64_t col) {
  return ImVec2(h.plot.x + float((double(col) + 0.5 - h.x0) / (h.x1 - h.x0)) * h.plot.w,
                h.plot.y + float((double(row) + 0.5 - h.y0) / (h.y1 - h.y0)) * h.plot.h);
}
double px_per_element(const ui::HeatmapReport& h) {
  return double(h.plot.w) / (h.x1 - h.x0);
}
}  // namespace

// The wheel zooms about the element under the cursor: after every click the same element is under it, at the
// same place on the screen, and a 256^2 matrix in a laptop window shows single elements several pixels wide
// within five clicks. Zooming out ends at the whole matrix; C and the error map zoom together.
TEST_F(Gui, TheWheelZoomsAboutTheElementUnderTheCursorDownToSingleElements) {
  // Ramp input: A[i][j] = i, so the value read under the cursor names the row.
  std::filesystem::create_directories(m_dir.path() / "tilescope");
  std::ofstream(config_file("settings.json"))
      << R"({"m": 256, "n": 256, "k": 256, "square": true, "input": "ramp", "kernel": "tiled", "tile": 16})";
  GuiRun s;
  s.body = [&s](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    s.resize = ImVec2(1366, 768);
    IM_CHECK(yield_until(
        ctx, [&] { return s.window_size.x == 1366 && s.window_size.y == 768; }, 10));
    ctx->Yield(8);
    IM_CHECK_EQ(st.result->spec.m, 256);
    const ui::HeatmapReport& a = drawn.heatmaps.at("heatmap A");
    const double whole = a.x1 - a.x0;
    IM_CHECK_GE(whole, 256.0);  // the whole matrix to start with
    // The point under the cursor in element coordinates, from the plot's rectangle and limits.
    auto under = [&](const ui::HeatmapReport& h) {
      const ImVec2 m = ImGui::GetIO().MousePos;
      return std::pair<double, double>{h.y0 + double(m.y - h.plot.y) / h.plot.h * (h.y1 - h.y0),
                                       h.x0 + double(m.x - h.plot.x) / h.plot.w * (h.x1 - h.x0)};
    };
    // Off-centre on purpose: a zoom toward the plot's centre carries these elements away from the cursor.
    for (const auto& rc : {std::pair<int64_t, int64_t>{200, 37}, {20, 230}}) {
      ctx->MouseMoveToPos(element_centre(a, rc.first, rc.second));
      IM_CHECK(yield_until(
          ctx, [&] { return drawn.hover.ready && drawn.hover.map == "A"; }, 10));
      const int64_t row = drawn.hover.row,
                    col = drawn.hover.col;  // the element under the cursor (a pixel is ~2)
      IM_CHECK_LE(std::abs(row - rc.first), 2);
      IM_CHECK_LE(std::abs(col - rc.second), 2);
      const auto at = under(a);
      int clicks = 0;
      while (px_per_element(a) < 4.0 && clicks < 12) {
        ctx->MouseWheelY(1);
        ctx->Yield(2);
        ++clicks;
        IM_CHECK(yield_until(
            ctx, [&] { return drawn.hover.ready && drawn.hover.map == "A"; }, 10));
        IM_CHECK_EQ(drawn.hover.row, row);
        IM_CHECK_EQ(drawn.hover.col, col);
        IM_CHECK_EQ(drawn.hover.value, float(row));
        // The same point of the element stays under the cursor (to within a pixel at this zoom).
        const auto now = under(a);
        const double pixel = (a.x1 - a.x0) / a.plot.w;
        IM_CHECK_LE(std::fabs(now.first - at.first), pixel);
        IM_CHECK_LE(std::fabs(now.second - at.second), pixel);
      }
      ctx->LogInfo("%d clicks to %.1f px per element (%.0f elements across)", clicks, px_per_element(a),
                   a.x1 - a.x0);
      IM_CHECK_LE(clicks, 5);
      IM_CHECK_GE(px_per_element(a), 4.0);
      // Out again: the element stays until the view is the whole matrix, where zooming out stops.
      for (int i = 0; i < clicks + 3; ++i) {
        ctx->MouseWheelY(-1);
        ctx->Yield(2);
      }
      IM_CHECK_EQ(a.x1 - a.x0, whole);
    }
    // C and the error map share one view: clicks over C zoom both, about the element under the cursor.
    const ui::HeatmapReport& c = drawn.heatmaps.at("heatmap C = A B");
    const ui::HeatmapReport& e = drawn.heatmaps.at("heatmap C - reference");
    ctx->MouseMoveToPos(element_centre(c, 60, 180));
    IM_CHECK(yield_until(
        ctx, [&] { return drawn.hover.ready && drawn.hover.map == "C = A B"; }, 10));
    const int64_t row = drawn.hover.row, col = drawn.hover.col;
    ctx->MouseWheelY(2);
    ctx->Yield(3);
    IM_CHECK_LT(c.x1 - c.x0, whole / 2);
    IM_CHECK_EQ(e.x0, c.x0);
    IM_CHECK_EQ(e.x1, c.x1);
    IM_CHECK_EQ(e.y0, c.y0);
    IM_CHECK_EQ(e.y1, c.y1);
    IM_CHECK_EQ(drawn.hover.row, row);
    IM_CHECK_EQ(drawn.hover.col, col);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, FilesOpenThroughTheDialogBadPairsAreRefusedAndSavingAsksBeforeReplacing) {
  // A (3 x 5) and B (5 x 4) as .npy files; a B that does not fit A; and a file of the person's that a save
  // must not replace without asking.
  HostMatrix a(3, 5), b(5, 4), wrong(4, 4);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j) a.at(i, j) = float(i + 1);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 4; ++j) b.at(i, j) = float(j);
  const std::string pa = (m_dir.path() / "a.npy").string(), pb = (m_dir.path() / "b.npy").string(),
                    pw = (m_dir.path() / "wrong.npy").string(), keep = (m_dir.path() / "mine.npy").string();
  write_npy(pa, a);
  write_npy(pb, b);
  write_npy(pw, wrong);
  std::ofstream(keep) << "the person's own file";
  std::ofstream(m_dir.path() / "notes.txt") << "not an array";
  std::filesystem::create_directories(m_dir.path() / "sub");
  GuiRun s;
  s.resize = ImVec2(1366, 768);
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    // The window's own dialog (the desktop's, where zenity or kdialog is installed, is the default).
    IM_CHECK(st.settings.file_dialog == FileDialogChoice::Desktop);
    ctx->MenuClick("//##MainMenuBar/File/Desktop file dialog");
    IM_CHECK(st.settings.file_dialog == FileDialogChoice::Window);
    // The dialog's window is named "<title>###<key>" (ui/dialogs/file_dialogs.cpp's keys).
    auto pick = [&](const char* title, const std::string& path) {
      IM_CHECK(yield_until(
          ctx, [&] { return ImGui::FindWindowByName(title) != nullptr; }, 5));
      ctx->SetRef(ImGui::FindWindowByName(title));
      ctx->ItemClick("##name");
      ctx->KeyCharsReplaceEnter(path.c_str());
      ctx->Yield(3);
    };
    const char* const title_a = "Open A (M x K) from a .npy file###ts-open-a";
    // [SECTION] What the dialog shows, as a Linux file dialog: the test's folder (typed, then Enter goes into
    // it), its folders without a size, its files with one, the file types named right, Linux places only.
    ctx->KeyPress(ImGuiMod_Ctrl | ImGuiKey_O);
    ctx->Yield(2);
    pick(title_a, m_dir.path().string());
    const ui::FileDialogReport& d = drawn.file_dialog;
    IM_CHECK(d.open && !d.desktop);
    IM_CHECK_EQ(s.window_size.x, 1366.0f);
    IM_CHECK(inside_main_window(title_a));
    IM_CHECK_EQ(d.folder, m_dir.path().string());
    auto row = [&](const std::string& name) -> const ui::FileDialogReport::Row* {
      for (const auto& r : d.rows)
        if (r.name == name) return &r;
      return nullptr;
    };
    IM_CHECK(row("sub") && row("sub")->folder);
    IM_CHECK(row("a.npy") && !row("a.npy")->folder);
    IM_CHECK(row("notes.txt") == nullptr);  // not an array: hidden by the type "NumPy arrays"
    for (const auto& r : d.rows) {
      if (r.folder) {
        IM_CHECK_EQ(r.size, std::string());  // never "18014398509481984.000 KiB"
      } else {
        IM_CHECK(!r.size.empty());
        IM_CHECK(r.size.find("18014398509481984") == std::string::npos);
      }
      IM_CHECK(!r.modified.empty());
    }
    IM_CHECK_EQ(row("a.npy")->size, format_bytes(double(std::filesystem::file_size(pa))));
    IM_CHECK_EQ(d.types.size(), size_t(2));
    IM_CHECK_EQ(d.types[0], std::string("NumPy arrays (*.npy)"));
    IM_CHECK_EQ(d.types[1], std::string("All files"));
    IM_CHECK(!d.places.empty() && d.places.back() == "File system");
    for (const auto& p : d.places) {
      IM_CHECK(p.find("This PC") == std::string::npos);
      IM_CHECK(p.find("Quick Access") == std::string::npos);
    }
    // Escape in the type list closes the list only; the dialog stays, and "All files" shows notes.txt.
    ImGuiContext& g = *ImGui::GetCurrentContext();
    const int popups = g.OpenPopupStack.Size;
    ctx->SetRef(ImGui::FindWindowByName(title_a));
    ctx->ItemClick("##type");
    IM_CHECK_EQ(g.OpenPopupStack.Size, popups + 1);
    ctx->KeyPress(ImGuiKey_Escape);
    ctx->Yield(2);
    IM_CHECK_EQ(g.OpenPopupStack.Size, popups);
    IM_CHECK(drawn.file_dialog.open);
    IM_CHECK(ImGui::FindWindowByName(title_a)->Active);
    ctx->ComboClick("##type/All files");
    ctx->Yield(2);
    IM_CHECK_EQ(drawn.file_dialog.type, std::string("All files"));
    IM_CHECK(row("notes.txt") != nullptr);
    // Escape outside the list cancels the dialog: nothing is opened.
    const uint64_t runs_before = st.runs_submitted;
    ctx->KeyPress(ImGuiKey_Escape);
    ctx->Yield(3);
    IM_CHECK(!drawn.file_dialog.open);
    IM_CHECK_EQ(g.OpenPopupStack.Size, popups - 1);
    IM_CHECK_EQ(st.runs_submitted, runs_before);
    // Open: A then B, then one run on the files.
    uint64_t serial = st.result_serial;
    ctx->KeyPress(ImGuiMod_Ctrl | ImGuiKey_O);
    ctx->Yield(2);
    pick("Open A (M x K) from a .npy file###ts-open-a", pa);
    pick("Open B (K x N) from a .npy file###ts-open-b", pb);
    IM_CHECK(yield_until(ctx, [&] {
      return st.result_serial > serial && !st.busy() && st.result->spec.input == InputKind::File;
    }));
    IM_CHECK_EQ(st.result->spec.m, 3);
    IM_CHECK_EQ(st.result->spec.k, 5);
    IM_CHECK_EQ(st.result->spec.n, 4);
    IM_CHECK(st.result->error.passed);
    // A pair whose shapes do not multiply: refused with both shapes named; the problem is unchanged.
    const uint64_t runs = st.runs_submitted;
    ctx->MenuClick("//##MainMenuBar/File/Open A and B (.npy)...");
    ctx->Yield(2);
    pick("Open A (M x K) from a .npy file###ts-open-a", pa);
    pick("Open B (K x N) from a .npy file###ts-open-b", pw);
    IM_CHECK(yield_until(
        ctx, [&] { return st.log.latest() && st.log.latest()->text.find("refused") == 0; }, 10));
    IM_CHECK(st.log.latest()->text.find("3 x 5") != std::string::npos);
    IM_CHECK(st.log.latest()->text.find("4 x 4") != std::string::npos);
    IM_CHECK_EQ(st.runs_submitted, runs);
    IM_CHECK_EQ(st.settings.spec.n, 4);
    // Save C over an existing file: the window asks; Cancel leaves the file as it was.
    ctx->MenuClick("//##MainMenuBar/File/Save C as .npy...");
    ctx->Yield(2);
    pick("Save C (M x N) as a .npy file###ts-save-c", keep);
    IM_CHECK(yield_until(
        ctx, [&] { return ImGui::FindWindowByName("Replace file?") != nullptr; }, 5));
    ctx->SetRef(ImGui::FindWindowByName("Replace file?"));
    ctx->ItemClick("Cancel");
    ctx->Yield(3);
    std::ifstream still(keep);
    std::string text((std::istreambuf_iterator<char>(still)), std::istreambuf_iterator<char>());
    IM_CHECK_EQ(text, std::string("the person's own file"));
    // Replace, when asked and confirmed: the file now holds C (3 x 4).
    ctx->MenuClick("//##MainMenuBar/File/Save C as .npy...");
    ctx->Yield(2);
    pick("Save C (M x N) as a .npy file###ts-save-c", keep);
    IM_CHECK(yield_until(
        ctx, [&] { return ImGui::FindWindowByName("Replace file?") != nullptr; }, 5));
    ctx->SetRef(ImGui::FindWindowByName("Replace file?"));
    ctx->ItemClick("Replace");
    IM_CHECK(yield_until(
        ctx, [&] { return st.log.latest() && st.log.latest()->text.rfind("saved C", 0) == 0; }, 10));
    const HostMatrix c = read_npy(keep);
    IM_CHECK_EQ(c.rows, 3);
    IM_CHECK_EQ(c.cols, 4);
    IM_CHECK_EQ(c.at(2, 3), float(5 * 3 * 3));  // sum over k of (i + 1) * j = 5 (i + 1) j
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// [SECTION] Issue #11: sweeps, sessions, the occupancy calculator and figures, through the window.
namespace {

// Width and height from a PNG's IHDR chunk (0, 0 when it is not a PNG).
std::pair<int, int> png_size(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char h[24] = {};
  f.read(reinterpret_cast<char*>(h), sizeof h);
  if (!f || h[1] != 'P' || h[2] != 'N' || h[3] != 'G') return {0, 0};
  auto be = [&](int o) { return int(h[o]) << 24 | int(h[o + 1]) << 16 | int(h[o + 2]) << 8 | int(h[o + 3]); };
  return {be(16), be(20)};
}

const TimingsCurve* curve(const TimingsData& d, const std::string& label) {
  for (const auto& c : d.curves)
    if (c.label == label) return &c;
  return nullptr;
}

}  // namespace

// [SECTION] Issue 25: the desktop's own file dialog (zenity, kdialog), run beside the frame loop.
namespace {

// $PATH (and the desktop session's name) for one test, put back afterwards.
class EnvFor {
 public:
  EnvFor(const char* name, const std::string& value) : m_name(name) {
    if (const char* v = std::getenv(name)) m_old = v;
    ::setenv(name, value.c_str(), 1);
  }
  ~EnvFor() {
    if (m_old)
      ::setenv(m_name, m_old->c_str(), 1);
    else
      ::unsetenv(m_name);
  }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

// A stand-in for zenity, first on $PATH: it writes its arguments to <dir>/args, then waits until the test
// writes <dir>/go<n> (n: the how-many-th dialog), then prints <dir>/answer<n> as zenity prints the chosen
// file (exit 0), or exits 1 as zenity does on Cancel when the answer is "CANCEL".
std::string fake_zenity(const std::filesystem::path& dir) {
  const std::filesystem::path bin = dir / "bin";
  std::filesystem::create_directories(bin);
  const std::string d = dir.string();
  std::ofstream(bin / "zenity") << "#!/bin/sh\n"
                                << "d='" << d << "'\n"
                                << "printf '%s\\n' \"$@\" >> \"$d/args\"\n"
                                << "n=$(( $(cat \"$d/count\" 2>/dev/null || echo 0) + 1 ))\n"
                                << "echo $n > \"$d/count\"\n"
                                << "while [ ! -e \"$d/go$n\" ]; do sleep 0.02; done\n"
                                << "a=$(cat \"$d/answer$n\")\n"
                                << "[ \"$a\" = CANCEL ] && exit 1\n"
                                << "printf '%s\\n' \"$a\"\n";
  std::filesystem::permissions(bin / "zenity", std::filesystem::perms::owner_all);
  return bin.string();
}

}  // namespace

TEST_F(Gui, TheDesktopsFileDialogRunsBesideTheFrameLoopAndWhatItChoosesIsOpened) {
  HostMatrix a(3, 5), b(5, 4);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j) a.at(i, j) = float(i + 1);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 4; ++j) b.at(i, j) = float(j);
  const std::filesystem::path dir = m_dir.path();
  write_npy((dir / "a.npy").string(), a);
  write_npy((dir / "b.npy").string(), b);
  const EnvFor path("PATH",
                    fake_zenity(dir) + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"));
  const EnvFor desktop("XDG_SESSION_DESKTOP", "test");
  auto answer = [&](int n, const std::string& text) {
    std::ofstream(dir / ("answer" + std::to_string(n))) << text;
    std::ofstream(dir / ("go" + std::to_string(n))) << "";
  };
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK(st.settings.file_dialog == FileDialogChoice::Desktop);
    const uint64_t serial = st.result_serial, runs = st.runs_submitted;
    ctx->KeyPress(ImGuiMod_Ctrl | ImGuiKey_O);
    IM_CHECK(yield_until(
        ctx, [&] { return drawn.file_dialog.desktop && std::filesystem::exists(dir / "count"); }, 30));
    IM_CHECK_EQ(drawn.file_dialog.helper, std::string("zenity"));
    // The helper waits for the test: meanwhile the window draws frame after frame (counted, not timed), and
    // the window's own dialog is not shown.
    const uint64_t frames = drawn.file_dialog.frames_while_desktop;
    for (int i = 0; i < 20; ++i) {
      ctx->Yield();
      IM_CHECK(drawn.file_dialog.desktop);
    }
    IM_CHECK_GE(drawn.file_dialog.frames_while_desktop, frames + 20);
    IM_CHECK(ImGui::FindWindowByName("Open A (M x K) from a .npy file###ts-open-a") == nullptr);
    IM_CHECK_EQ(st.runs_submitted, runs);
    // A, then B from the same kind of dialog; then one run on the files.
    answer(1, (dir / "a.npy").string());
    IM_CHECK(yield_until(
        ctx,
        [&] { return read_text(dir / "count").find('2') != std::string::npos && drawn.file_dialog.desktop; },
        30));
    IM_CHECK_EQ(drawn.file_dialog.title, std::string("Open B (K x N) from a .npy file"));
    answer(2, (dir / "b.npy").string());
    IM_CHECK(yield_until(ctx, [&] {
      return st.result_serial > serial && !st.busy() && st.result->spec.input == InputKind::File;
    }));
    IM_CHECK(!drawn.file_dialog.open);
    IM_CHECK_EQ(st.result->spec.m, 3);
    IM_CHECK_EQ(st.result->spec.k, 5);
    IM_CHECK_EQ(st.result->spec.n, 4);
    const std::string args = read_text(dir / "args");
    IM_CHECK(args.find("--file-selection") != std::string::npos);
    IM_CHECK(args.find("Open A (M x K) from a .npy file") != std::string::npos);
    IM_CHECK(args.find("NumPy arrays (*.npy)|*.npy") != std::string::npos);
    IM_CHECK(args.find("All files|*") != std::string::npos);
    // Cancel in the desktop's dialog: nothing is opened, the window goes on.
    const uint64_t runs_after = st.runs_submitted;
    ctx->KeyPress(ImGuiMod_Ctrl | ImGuiKey_O);
    IM_CHECK(yield_until(
        ctx,
        [&] { return read_text(dir / "count").find('3') != std::string::npos && drawn.file_dialog.desktop; },
        30));
    answer(3, "CANCEL");
    IM_CHECK(yield_until(
        ctx, [&] { return !drawn.file_dialog.open; }, 30));
    ctx->Yield(3);
    IM_CHECK_EQ(st.runs_submitted, runs_after);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, WithoutZenityOrKdialogTheWindowsOwnDialogOpens) {
  const std::filesystem::path empty = m_dir.path() / "empty-bin";
  std::filesystem::create_directories(empty);
  const EnvFor path("PATH", empty.string());
  GuiRun s;
  s.resize = ImVec2(1920, 1080);
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK(st.settings.file_dialog == FileDialogChoice::Desktop);
    ctx->KeyPress(ImGuiMod_Ctrl | ImGuiKey_O);
    IM_CHECK(yield_until(
        ctx,
        [&] { return ImGui::FindWindowByName("Open A (M x K) from a .npy file###ts-open-a") != nullptr; },
        5));
    IM_CHECK(drawn.file_dialog.open && !drawn.file_dialog.desktop);
    IM_CHECK(logged(st, "no desktop file dialog here", "neither zenity nor kdialog is installed"));
    IM_CHECK_EQ(s.window_size.x, 1920.0f);
    IM_CHECK(inside_main_window("Open A (M x K) from a .npy file###ts-open-a"));
    ctx->KeyPress(ImGuiKey_Escape);
    IM_CHECK(yield_until(
        ctx, [&] { return !drawn.file_dialog.open; }, 5));
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// [SECTION] Drawing while a kernel is timed (TimingGate), checked in clock readings and counted frames, never
// against the machine's speed.
namespace {

// The TimingGate's clock for a test: one tick (1/16 s) further each time it is read. The window's frame loop
// reads it once before a frame (pace) and once after it (frame_drawn), and again each time the gate makes it
// wait: time on this clock counts the loop's turns, whatever the machine's speed. It starts at the steady
// clock's time (rounded to a tick, so every reading is exact), so the gate's last frame is never in its
// future.
std::atomic<int64_t> g_ticks{0};
constexpr double kTick = 1.0 / 16;
double ticking_clock() {
  return double(++g_ticks) * kTick;
}
struct TickingClock {
  TickingClock() {
    g_ticks = int64_t(std::ceil(TimingGate::clock_s() / kTick)) + 1;
    TimingGate::set_clock(ticking_clock);
  }
  ~TickingClock() { TimingGate::set_clock(nullptr); }
  TickingClock(const TickingClock&) = delete;
  TickingClock& operator=(const TickingClock&) = delete;
};

// The gaps between the next `frames` frames the window draws, on the gate's clock. The first Yield finishes
// the frame in progress (it passed the gate before the caller's change); the gaps are those after it.
std::vector<double> frame_gaps(ImGuiTestContext* ctx, int frames) {
  TimingGate& gate = TimingGate::instance();
  ctx->Yield();
  double last = gate.last_frame_s();
  std::vector<double> gaps;
  for (int i = 0; i < frames; ++i) {
    const int64_t before = gate.frames();
    ctx->Yield();
    IM_CHECK_NO_RET(gate.frames() == before + 1);  // one frame drawn per turn, none skipped
    gaps.push_back(gate.last_frame_s() - last);
    last = gate.last_frame_s();
  }
  return gaps;
}

// The CPU backend, except that each run first waits, holding the TimingGate as measure() does, until the
// window has drawn `frames` frames since the run began (or the run is cancelled): a point stays in flight for
// a number of frames, not of seconds. A frame loop that waited for the engine's thread would draw none, and
// the run gives up after a minute and says so (starved; later runs then wait no more) instead of hanging
// the test.
class FramesPerRunBackend final : public test::ForwardingBackend {
 public:
  FramesPerRunBackend(std::shared_ptr<Backend> inner, int frames)
      : ForwardingBackend(std::move(inner)), m_frames(frames) {}
  RunResult run(const RunRequest& req, const CancelToken& cancel) override {
    {
      TimingGate::Hold timing;
      const int64_t f0 = TimingGate::instance().frames();
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (TimingGate::instance().frames() < f0 + m_frames && !cancel.cancelled() && m_starved == 0) {
        if (std::chrono::steady_clock::now() > give_up) {
          ++m_starved;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    return ForwardingBackend::run(req, cancel);
  }
  int starved() const { return m_starved.load(); }

 private:
  int m_frames;
  std::atomic<int> m_starved{0};
};

}  // namespace

// While a kernel is timed, a frame shares the GPU with it: the gate lets the window draw one frame each
// kTimingFrameInterval then, none in between and none later than the first turn after it is due; once the
// timing ends the window draws again without waiting for the gate.
TEST_F(Gui, WhileAKernelIsTimedTheGateLetsAFrameThroughEachIntervalAndNoneBetween) {
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    IM_CHECK(wait_for_result(ctx, app, 0));
    TimingGate& gate = TimingGate::instance();
    IM_CHECK(yield_until(ctx, [&] { return !gate.timing(); }));  // no measurement of the window's own
    const TickingClock clock;
    ctx->Yield(2);  // the gate's last frame on the ticking clock
    const double interval = TimingGate::kTimingFrameInterval;
    std::vector<double> held, free;
    {
      TimingGate::Hold timing;  // what measure() holds while it samples
      held = frame_gaps(ctx, 8);
    }
    free = frame_gaps(ctx, 10);
    IM_CHECK_EQ(held.size(), size_t(8));
    IM_CHECK_EQ(free.size(), size_t(10));
    for (const double gap : held) {
      IM_CHECK_GE(gap, interval);  // the gate held every frame back for its interval ...
      // ... and let it through at the first turn after: one reading to see it is due, one as it is drawn.
      IM_CHECK_LE(gap, interval + 2 * kTick);
    }
    for (const double gap : free) IM_CHECK_LE(gap, 2 * kTick);  // no turn spent waiting for the gate
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, ASweepOnTheCpuBackendAdvancesCancelKeepsItsPointsAndFramesKeepComing) {
  // Every point stays in flight until the window has drawn 3 frames while it is timed.
  auto engine = std::make_shared<FramesPerRunBackend>(make_backend(BackendChoice::Cpu, nullptr), 3);
  GuiRun s;
  s.backend = engine;
  s.body = [engine](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    const size_t before = st.sessions.current().records.size();
    ctx->WindowFocus("//Sweep");  // a tab behind Controls
    ctx->Yield(3);
    IM_CHECK(drawn.panels.at("Sweep").visible);
    ctx->SetRef("//Sweep");
    // Bad fields are refused with a message naming them; nothing starts and the window goes on.
    ctx->ItemClick("from/##v");
    ctx->KeyCharsReplaceEnter("512");
    ctx->ItemClick("to/##v");
    ctx->KeyCharsReplaceEnter("64");
    ctx->ItemClick("Start sweep");
    ctx->Yield(2);
    IM_CHECK(!st.sweeping());
    IM_CHECK(logged(st, "sweep refused", "512"));
    ctx->ItemClick("from/##v");
    ctx->KeyCharsReplaceEnter("abc");
    ctx->ItemClick("Start sweep");
    ctx->Yield(2);
    IM_CHECK(!st.sweeping());
    IM_CHECK(logged(st, "sweep refused", "sweep 'from'"));
    // 16, 32, ..., 1024 (64 points) of the current kernel, tiled T=16, with the quick policy.
    ctx->ItemClick("from/##v");
    ctx->KeyCharsReplaceEnter("16");
    ctx->ItemClick("to/##v");
    ctx->KeyCharsReplaceEnter("1024");
    ctx->ItemClick("##step");
    ctx->KeyCharsReplaceEnter("16");
    ctx->ItemClick("quick");
    const TickingClock clock;  // the gate's interval in the loop's turns: 3 frames a point come quickly
    const int64_t frames0 = TimingGate::instance().frames();
    ctx->ItemClick("Start sweep");
    IM_CHECK(yield_until(ctx, [&] { return st.sweeping(); }));
    IM_CHECK_EQ(st.sweep_progress.total, 64);
    // Frames keep coming while the engine measures on the sweep's thread (each point waits for 3 of them),
    // and the progress advances point by point, each step seen: points done, the point in flight, the time
    // left, and the status bar says so instead of "ready".
    std::set<int64_t> in_flight;
    std::set<int> done;
    bool status_says_sweep = true, first = true;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);  // bounds the test only
    while (st.sweep_progress.done < 5 && st.sweeping() && std::chrono::steady_clock::now() < end) {
      ctx->Yield();
      if (st.sweep_progress.in_flight) in_flight.insert(st.sweep_progress.in_flight->n);
      done.insert(st.sweep_progress.done);
      const std::string& status = drawn.panels.at("Status").text;  // as the last frame drew it
      if (!std::exchange(first, false))
        status_says_sweep &= status.find("sweep ") == 0 && status.find(" / 64") != std::string::npos &&
                             status.find("ready") == std::string::npos;
    }
    IM_CHECK_EQ(engine->starved(), 0);  // no point waited in vain for a frame
    IM_CHECK_GE(st.sweep_progress.done, 5);
    IM_CHECK(st.sweeping());
    IM_CHECK(done == (std::set<int>{0, 1, 2, 3, 4, 5}));  // every step seen, frame by frame
    for (const int64_t n : {16, 32, 48, 64, 80}) IM_CHECK(in_flight.count(n) == 1);
    IM_CHECK_GE(TimingGate::instance().frames() - frames0, 3 * 5);  // 3 while each point was timed
    IM_CHECK_GE(st.sweep_progress.remaining_s, 0.0);
    IM_CHECK(status_says_sweep);
    // Cancel: the sweep stops after the current sample and keeps every point finished.
    ctx->ItemClick("Cancel");
    IM_CHECK(yield_until(ctx, [&] { return !st.sweeping(); }));
    IM_CHECK(st.sweep_progress.state == SweepProgress::State::Cancelled);
    const int kept = st.sweep_progress.done - st.sweep_progress.failed;
    IM_CHECK_LT(st.sweep_progress.done, st.sweep_progress.total);
    IM_CHECK_GE(kept, 5);
    IM_CHECK_EQ(st.sessions.current().records.size(), before + size_t(kept));
    ctx->Yield(2);
    IM_CHECK(drawn.panels.at("Status").text.find(" / 64, ") ==
             std::string::npos);  // no progress once it ended
    // They fill the Timings plot: tiled T=16 along M = N = K, one point per size measured.
    const TimingsData& td = ui::timings_of(st);
    IM_CHECK(td.axis == ScaleAxis::Square);
    const TimingsCurve* c = curve(td, "tiled T=16");
    IM_CHECK(c != nullptr);
    if (c) {
      IM_CHECK(c->current);
      IM_CHECK_GE(c->line.size(), size_t(kept));
      IM_CHECK_EQ(c->line.front().x, 16.0);
    }
    // The marks on the CPU backend are a catalog GPU's, labelled theoretical.
    IM_CHECK(td.marks.theoretical);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// The Test Engine's frames are not rasterised (GuiHooks::unseen), but a frame that a screenshot reads is: by
// F12, and when a test's step asks for one itself (the step runs inside ImGui::Render(), after the frame was
// built). Either way the PNG is the window as drawn: its size, and the menu bar's text over its background.
TEST_F(Gui, AScreenshotIsTheWindowAsDrawnWhoeverAsksForIt) {
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    const std::filesystem::path dir = m_dir.path() / "pictures" / "TileScope";
    auto shots = [&] {
      std::vector<std::string> files;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      return files;
    };
    // First (no frame of this window has been rasterised yet), a step's own request; then F12.
    st.ask(ui::rq::Screenshot{});  // as a test's step, inside ImGui::Render()
    IM_CHECK(yield_until(
        ctx, [&] { return shots().size() == 1; }, 10));
    ctx->KeyPress(ImGuiKey_F12);
    IM_CHECK(yield_until(
        ctx, [&] { return shots().size() == 2; }, 10));
    const ImVec2 window = s.window_size;
    for (const std::string& file : shots()) {
      int w = 0, h = 0, n = 0;
      unsigned char* px = stbi_load(file.c_str(), &w, &h, &n, 3);
      IM_CHECK_NO_RET(px != nullptr);
      if (!px) continue;
      IM_CHECK_EQ_NO_RET(w, int(window.x));
      IM_CHECK_EQ_NO_RET(h, int(window.y));
      // The menu bar's first 200 x 16 pixels: its background and the bright letters of "File", "View".
      std::set<int> colours;
      int bright = 0;
      for (int y = 2; y < 18 && y < h; ++y)
        for (int x = 0; x < 200 && x < w; ++x) {
          const unsigned char* p = px + 3 * (size_t(y) * size_t(w) + size_t(x));
          colours.insert(p[0] << 16 | p[1] << 8 | p[2]);
          bright += p[0] > 150 && p[1] > 150 && p[2] > 150;
        }
      stbi_image_free(px);
      IM_CHECK_GE_NO_RET(colours.size(), size_t(3));
      IM_CHECK_GT_NO_RET(bright, 20);
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, MeasurementsAreSavedWhenTheWindowClosesAndReloadedOnTheNextLaunch) {
  size_t measured = 0;
  GuiRun first;
  first.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    for (int i = 0; i < 2; ++i) {
      const uint64_t serial = st.result_serial;
      ctx->KeyPress(ImGuiKey_F5);
      IM_CHECK(wait_for_result(ctx, app, serial));
    }
    measured = st.sessions.current().records.size();
    IM_CHECK_EQ(measured, 3u);
  };
  run_session(first);
  ASSERT_EQ(first.passed, 1);
  const auto file = m_dir.path() / "data" / "tilescope" / "session.json";
  ASSERT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(load_session(file).records.size(), measured);

  GuiRun second;
  second.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    // The points of the last launch are back (the first run of this launch may have joined them already), and
    // on the plot.
    IM_CHECK(logged(st, "session: " + std::to_string(measured) + " points from"));
    IM_CHECK_GE(st.sessions.current().records.size(), measured);
    ctx->Yield(2);
    const TimingsCurve* c = curve(ui::timings_of(st), "tiled T=16");
    IM_CHECK(c != nullptr);
    if (c) IM_CHECK_GE(c->series.points.size(), measured);
    IM_CHECK(wait_for_result(ctx, app, 0));
    // File > Save session writes them now (the new run included).
    ctx->MenuClick("//##MainMenuBar/File/Save session");
    ctx->Yield(2);
    IM_CHECK_EQ(load_session(file).records.size(), st.sessions.current().records.size());
    IM_CHECK_EQ(load_session(file).records.size(), measured + 1);
  };
  run_session(second);
  EXPECT_EQ(second.passed, 1);
}

TEST_F(Gui, ACorruptSessionFileIsRefusedWithItsReasonAndNeverOverwritten) {
  const auto dir = m_dir.path() / "data" / "tilescope";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "session.json")
      << "{\"format\": \"tilescope-session\", \"version\": 1, \"records\": [tru";
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(logged(st, "session refused", "not JSON"));
    IM_CHECK(wait_for_result(ctx, app, 0));  // the window keeps running and measuring
    IM_CHECK_EQ(st.sessions.current().records.size(), 1u);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
  std::ifstream f(dir / "session.json");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"format\": \"tilescope-session\", \"version\": 1, \"records\": [tru");
  // This window's point went to a file of its own beside it.
  int others = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename() != "session.json") {
      ++others;
      EXPECT_EQ(load_session(e.path()).records.size(), 1u) << e.path();
    }
  EXPECT_EQ(others, 1);
}

// Issue 26: two windows on one data folder. While this window runs, another (a writer of its own on the same
// file) saves its points there; this window's save merges them in instead of replacing them.
TEST_F(Gui, AnotherWindowsPointsSavedMeanwhileAreMergedNotReplaced) {
  const auto file = m_dir.path() / "data" / "tilescope" / "session.json";
  GuiRun first;  // a session of this device to start from
  first.body = [&](ImGuiTestContext* ctx, App& app) { IM_CHECK(wait_for_result(ctx, app, 0)); };
  run_session(first);
  ASSERT_EQ(first.passed, 1);
  ASSERT_EQ(load_session(file).records.size(), 1u);
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));  // this window's point: 2 in its session
    IM_CHECK_EQ(st.sessions.current().records.size(), 2u);
    // The other window read the file at its start, measured two points and saved.
    Session other = load_session(file);
    for (int i = 0; i < 2; ++i) {
      MeasurementRecord r = other.records[0];
      r.spec.seed = 1000 + uint64_t(i);
      other.records.push_back(r);
    }
    save_session_merged(file, other);
    ctx->MenuClick("//##MainMenuBar/File/Save session");
    ctx->Yield(2);
    IM_CHECK(logged(st, "2 points saved by another window were merged into this session"));
    IM_CHECK_EQ(st.sessions.current().records.size(), 4u);
    IM_CHECK_EQ(load_session(file).records.size(), 4u);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
  EXPECT_EQ(load_session(file).records.size(), 4u);  // and again at exit: nothing lost
}

// Issue 26: a session.json that is a symbolic link (dotfiles) is written to the file it names; the link
// stays.
TEST_F(Gui, ASymlinkedSessionFileIsSavedToTheFileItNames) {
  const auto dir = m_dir.path() / "data" / "tilescope";
  const auto file = dir / "session.json";
  GuiRun first;
  first.body = [&](ImGuiTestContext* ctx, App& app) { IM_CHECK(wait_for_result(ctx, app, 0)); };
  run_session(first);
  ASSERT_EQ(first.passed, 1);
  std::filesystem::create_directories(m_dir.path() / "dotfiles");
  const auto target = m_dir.path() / "dotfiles" / "session.json";
  std::filesystem::rename(file, target);
  std::filesystem::create_symlink("../../dotfiles/session.json", file);
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(logged(st, "session: 1 point from"));
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK_EQ(st.sessions.current().records.size(), 2u);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
  EXPECT_TRUE(std::filesystem::is_symlink(file));
  EXPECT_EQ(load_session(target).records.size(), 2u);
  // A link to what cannot be written (a folder): the points go beside it, and the window says where.
  std::filesystem::remove(file);
  std::filesystem::create_symlink(m_dir.path() / "dotfiles", file);
  GuiRun t;
  t.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(logged(st, "session refused"));
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->MenuClick("//##MainMenuBar/File/Save session");
    ctx->Yield(2);
    IM_CHECK(logged(st, "session saved: 1 point to " + dir.string() + "/session-"));
  };
  run_session(t);
  EXPECT_EQ(t.passed, 1);
  EXPECT_TRUE(std::filesystem::is_symlink(file));
  int beside = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("session-", 0) == 0 && e.path().extension() == ".json") {
      ++beside;
      EXPECT_EQ(load_session(e.path()).records.size(), 1u) << e.path();
    }
  EXPECT_EQ(beside, 1);
}

// Issue 26: imgui.ini replaced by a link while the window runs is never written through: every save checks
// it, refuses with a message, and the link's target keeps its bytes.
TEST_F(Gui, ImguiIniReplacedByALinkWhileRunningIsNeverWrittenThrough) {
  const auto ini = config_file("imgui.ini");
  const auto victim = m_dir.path() / "victim.txt";
  std::ofstream(victim) << "precious";
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    ImGui::GetIO().IniSavingRate = 0.05f;
    ImGui::MarkIniSettingsDirty();
    IM_CHECK(yield_until(
        ctx, [&] { return std::filesystem::is_regular_file(ini); }, 30));  // written by us
    std::filesystem::remove(ini);
    std::filesystem::create_symlink(victim, ini);
    ImGui::SetWindowPos("Debug##Default", ImVec2(77, 88));  // ImGui's own window: the layout changes
    ImGui::MarkIniSettingsDirty();
    IM_CHECK(yield_until(
        ctx, [&] { return logged(st, "the window layout was not saved", "imgui.ini"); }, 30));
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
  EXPECT_TRUE(std::filesystem::is_symlink(ini));
  EXPECT_EQ(read_text(victim), "precious");
}

TEST_F(Gui, ASessionFromAnotherGpuOpensBesideTheCurrentOneAndIsOverlaid) {
  // A session as `tilescope bench --session-out` writes it on another machine.
  DeviceInfo d;
  d.backend = "cuda";
  d.name = d.label = "Other GPU";
  d.sm_count = 58;
  Session other = Session::for_device(d);
  RunResult r;
  r.spec.m = r.spec.n = r.spec.k = 256;
  r.spec.kernel = "tiled";
  r.spec.tile = 16;
  r.samples_ms = {0.01, 0.011, 0.012};
  r.stats = summarize(r.samples_ms);
  r.error.passed = true;
  r.date = "2025-02-01T00:00:00Z";
  other.add(r);
  const auto path = m_dir.path() / "other.json", bad = m_dir.path() / "bad.json";
  save_session(path, other, false);
  std::ofstream(bad) << "[]";
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->MenuClick("//##MainMenuBar/File/Desktop file dialog");  // the window's own dialog, typed into
    IM_CHECK(st.settings.file_dialog == FileDialogChoice::Window);
    auto open = [&](const std::string& file) {
      ctx->MenuClick("//##MainMenuBar/File/Open session to overlay...");
      const char* title = "Open a session to overlay###ts-open-session";
      IM_CHECK(yield_until(
          ctx, [&] { return ImGui::FindWindowByName(title) != nullptr && drawn.file_dialog.open; }, 5));
      ctx->SetRef(ImGui::FindWindowByName(title));
      ctx->ItemClick("##name");
      ctx->KeyCharsReplaceEnter(file.c_str());
    };
    open(path.string());
    IM_CHECK(yield_until(
        ctx, [&] { return st.sessions.size() == 2; }, 10));
    IM_CHECK(curve(ui::timings_of(st), "tiled T=16 [" + other.label + "]") != nullptr);
    IM_CHECK(curve(ui::timings_of(st), "tiled T=16") != nullptr);
    // A file that is not a session is refused with the reason; the overlay stays.
    open(bad.string());
    IM_CHECK(yield_until(
        ctx, [&] { return logged(st, "session refused", "not a TileScope session"); }, 10));
    IM_CHECK_EQ(st.sessions.size(), 2u);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, TheOccupancyCalculatorShowsAppCoresFiguresForTheChosenGpu) {
  if (build_resources().empty()) GTEST_SKIP() << build_resources_note();
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->WindowFocus("//Occupancy");
    ctx->Yield(3);
    ctx->SetRef("//Occupancy");
    const GpuModel& l4 = find_gpu("l4");
    ctx->ComboClick(("##gpu/" + l4.name).c_str());
    ctx->ComboClick("##kernel/tiled");
    ctx->ComboClick("##tile/T=32");
    ctx->Yield(2);
    const ui::OccupancyCalcReport& c = drawn.occupancy_calc;
    IM_CHECK_EQ(c.gpu, std::string("l4"));
    IM_CHECK_EQ(c.kernel, std::string("tiled"));
    IM_CHECK_EQ(c.tile, 32);
    const ProblemSpec& at = st.settings.spec;
    const ResourceLookup lk = lookup_resources(build_resources(), "tiled", 32, true, l4.sm);
    IM_CHECK(lk.row != nullptr);
    OccupancyInputs in = inputs_from(*lk.row);
    auto check = [&](const OccupancyInputs& want) {
      const OccupancyReport o = theoretical_occupancy(l4, want, at.m, at.n);
      IM_CHECK(c.report.has_value());
      if (!c.report) return;
      IM_CHECK_EQ(c.report->blocks_per_sm, o.blocks_per_sm);
      IM_CHECK_EQ(c.report->occupancy, o.occupancy);
      IM_CHECK_EQ(c.report->limiter, o.limiter);
      IM_CHECK_EQ(c.report->waves, o.waves);
      // What the panel shows is those numbers.
      IM_CHECK_EQ(c.facts.at("resident blocks / SM"), std::to_string(o.blocks_per_sm));
      IM_CHECK_EQ(c.facts.at("limited by"), o.limiter);
      IM_CHECK_EQ(c.facts.at("registers / thread"), std::to_string(want.regs_per_thread));
    };
    check(in);
    // What if: 128 registers per thread.
    ctx->ItemClick("registers/##v");
    ctx->KeyCharsReplaceEnter("128");
    ctx->Yield(2);
    in.regs_per_thread = 128;
    check(in);
    // A block larger than the GPU allows is refused, with the limit; nothing made up.
    ctx->ItemClick("threads/##v");
    ctx->KeyCharsReplaceEnter("5000");
    ctx->Yield(2);
    IM_CHECK(!c.report.has_value());
    IM_CHECK(c.error.find("5000") != std::string::npos);
    // Another GPU, other figures: the choice is what is computed.
    ctx->ItemClick("Back to the build's figures");
    const GpuModel& h100 = find_gpu("h100");
    ctx->ComboClick(("##gpu/" + h100.name).c_str());
    ctx->Yield(2);
    IM_CHECK_EQ(c.gpu, std::string("h100"));
    const OccupancyReport o = theoretical_occupancy(
        h100, inputs_from(*lookup_resources(build_resources(), "tiled", 32, true, h100.sm).row), at.m, at.n);
    IM_CHECK(c.report.has_value());
    if (c.report) IM_CHECK_EQ(c.report->waves, o.waves);
    IM_CHECK_EQ(c.facts.at("waves"), waves_text(o));
    IM_CHECK(c.facts.at("waves").find(":") != std::string::npos && c.facts.at("waves").rfind("none", 0) != 0);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, ExportFigureWritesThePlotAloneAtTheChosenSizeAndNeverOverwrites) {
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    std::vector<std::string> written;
    for (int i = 0; i < 2; ++i) {
      const std::string before = st.last_figure;
      ctx->SetRef("//Timings");
      ctx->ItemClick("timings/Export figure...");
      ctx->Yield(2);
      ctx->SetRef("//$FOCUSED");
      ctx->ItemClick("Export");
      const bool done = yield_until(
          ctx, [&] { return st.last_figure != before; }, 20);
      if (!done && st.log.latest()) ctx->LogError("latest message: %s", st.log.latest()->text.c_str());
      IM_CHECK(done);
      written.push_back(st.last_figure);
    }
    IM_CHECK(written[0] != written[1]);
    for (const auto& png : written) {
      const auto [w, h] = png_size(png);
      IM_CHECK_EQ(w, 1920);
      IM_CHECK_EQ(h, 1080);
      std::filesystem::path json = png;
      json.replace_extension(".json");
      std::ifstream f(json);
      const nlohmann::json j = nlohmann::json::parse(f);
      IM_CHECK_EQ(j["meta"]["plot"].get<std::string>(), std::string("timings"));
      IM_CHECK_EQ(j["meta"]["width"].get<int>(), 1920);
      IM_CHECK(!j["series"].empty());
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// "Export PNG + CSV" pressed with the mouse: its tooltip is on screen in that very frame, over the panel. The
// PNG is the panel as drawn, without it: where the tooltip was, its pixels are those of the same panel
// exported with no tooltip anywhere.
namespace {
struct Rgba {
  int w = 0, h = 0;
  std::vector<unsigned char> px;
};
Rgba read_png(const std::string& path) {
  Rgba im;
  int n = 0;
  unsigned char* data = stbi_load(path.c_str(), &im.w, &im.h, &n, 4);
  if (data) {
    im.px.assign(data, data + size_t(im.w) * size_t(im.h) * 4);
    stbi_image_free(data);
  }
  return im;
}
std::vector<std::string> files_starting(const std::filesystem::path& dir, const std::string& prefix,
                                        const std::string& ext) {
  std::vector<std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ext) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_F(Gui, ExportPngAndCsvWritesThePanelWithoutTheTooltipOfItsButton) {
  const std::filesystem::path pictures = m_dir.path() / "pictures" / "TileScope";
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->SetRef("//Timings");
    ctx->MouseMove("Export PNG + CSV");
    ctx->Yield(3);
    ImRect tip;  // the button's tooltip, on screen now
    for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
      if ((w->Active || w->WasActive) && (w->Flags & ImGuiWindowFlags_Tooltip)) tip = w->Rect();
    IM_CHECK(tip.GetArea() > 0);
    const ImRect button = ctx->ItemInfo("Export PNG + CSV").RectFull;
    const ui::Rect panel = drawn.panels.at("Timings").rect;
    ctx->MouseClick(0);  // pressed: exported in the frame that draws the tooltip
    IM_CHECK(yield_until(
        ctx, [&] { return files_starting(pictures, "tilescope-panel-timings-", ".png").size() == 1; }, 10));
    const std::string first = files_starting(pictures, "tilescope-panel-timings-", ".png").at(0);
    // The same panel, exported with the mouse far from it and no tooltip anywhere.
    ctx->MouseMoveToPos(ImVec2(panel.x + panel.w * 0.5f, 4));  // over the menu bar
    ctx->Yield(4);
    st.ask(ui::rq::PressExport{{"Timings"}});
    IM_CHECK(yield_until(
        ctx, [&] { return files_starting(pictures, "tilescope-panel-timings-", ".png").size() == 2; }, 10));
    const auto pngs = files_starting(pictures, "tilescope-panel-timings-", ".png");
    IM_CHECK_EQ(files_starting(pictures, "tilescope-panel-timings-", ".csv").size(), 2u);
    IM_CHECK(files_starting(pictures, "tilescope-timings-", ".png").empty());  // not a figure's name
    const Rgba pressed = read_png(first), plain = read_png(pngs[0] == first ? pngs[1] : pngs[0]);
    IM_CHECK(pressed.w == plain.w && pressed.h == plain.h && pressed.w > 0);
    // Where the tooltip was (inside the panel, away from the button, whose look follows the mouse).
    ImRect away = button;
    away.Expand(4);
    int compared = 0, differ = 0;
    for (int y = int(tip.Min.y); y < int(tip.Max.y); ++y)
      for (int x = int(tip.Min.x); x < int(tip.Max.x); ++x) {
        const int px = x - int(panel.x), py = y - int(panel.y);
        if (px < 0 || py < 0 || px >= pressed.w || py >= pressed.h ||
            away.Contains(ImVec2(float(x), float(y))))
          continue;
        const size_t at = (size_t(py) * size_t(pressed.w) + size_t(px)) * 4;
        ++compared;
        differ += std::memcmp(&pressed.px[at], &plain.px[at], 3) != 0;
      }
    IM_CHECK_GT(compared, 2000);  // the tooltip lay over the panel
    IM_CHECK_LE(differ, compared / 200);
    if (differ > compared / 200) ctx->LogError("%d of %d pixels under the tooltip differ", differ, compared);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// The Tile schedule's "Export Perfetto trace", pressed with the mouse: tilescope-schedule-<date>-<time>.json
// in the export folder, a valid trace event JSON that reads back as the trace the panel shows, named by the
// run's kernel, tile and shape; pressed again, a second file (never replacing the first). The CPU backend
// traces nothing, so the window's result gets a trace of 2 x 3 tiles in 2 slices of K, and its session is
// taken for a GPU's (the panel draws only there).
TEST_F(Gui, ExportPerfettoTraceWritesTheTracedLaunchAsATraceEventJson) {
  const std::filesystem::path dir = m_dir.path() / "exports";
  auto trace = std::make_shared<TileTrace>();
  trace->grid_x = 3;
  trace->grid_y = 2;
  trace->grid_z = 2;
  trace->k_step = 16;
  trace->tile_m = trace->tile_n = 32;
  trace->sm_count = 4;
  for (uint32_t i = 0; i < 12; ++i)
    trace->records.push_back({1'000'000'007ull + i * 37, 1'000'000'500ull + i * 101, i % 4, 0});
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    st.settings.export_dir = dir.string();
    st.sessions.current().device.backend = "cuda";
    st.result->trace = trace;
    ++st.result_serial;
    st.ask(ui::rq::BringToFront{{"Tile schedule"}});
    ctx->Yield(4);
    ctx->SetRef("//Tile schedule");
    ctx->ItemClick("Export Perfetto trace");
    IM_CHECK(yield_until(
        ctx, [&] { return files_starting(dir, "tilescope-schedule-", ".json").size() == 1; }, 10));
    const std::string first = files_starting(dir, "tilescope-schedule-", ".json").at(0);
    std::ifstream f(first);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    IM_CHECK_EQ(check_trace_event_json(nlohmann::json::parse(text)), std::string());
    const ScheduleTraceFile back = read_schedule_trace_json(text);
    IM_CHECK(back.trace.records.size() == trace->records.size());
    for (size_t i = 0; i < trace->records.size(); ++i) {
      IM_CHECK_EQ(back.trace.records[i].start_ns, trace->records[i].start_ns);
      IM_CHECK_EQ(back.trace.records[i].end_ns, trace->records[i].end_ns);
      IM_CHECK_EQ(back.trace.records[i].smid, trace->records[i].smid);
    }
    IM_CHECK_EQ(back.context.kernel, st.result->spec.kernel);
    IM_CHECK_EQ(back.context.m, st.result->spec.m);
    IM_CHECK_EQ(back.context.k, st.result->spec.k);
    IM_CHECK(logged(st, "Perfetto trace: " + first));
    ctx->ItemClick("Export Perfetto trace");
    IM_CHECK(yield_until(
        ctx, [&] { return files_starting(dir, "tilescope-schedule-", ".json").size() == 2; }, 10));
    std::ifstream again(first);
    IM_CHECK(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()) == text);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// Stream-K in the Tile schedule (a trace made here: streamk_sample.hpp, 3 x 4 tiles, row 2's tiles shared in
// 2 or 3 segments), at 1366 x 768 and 1920 x 1080. The replay counts segments, not the absent records; at
// 1350 ns after the first start it draws each segment as a strip of its tile, as tall as its share of K:
// tile (2, 1)'s first quarter (K steps 0-32) runs on SM 1 and its middle half (32-96) is done (the map's
// colour under it: SM 5, which wrote C); tile (2, 0)'s upper half runs on SM 0 (the map under it: SM 4);
// tile (2, 3)'s first strip (0-40) runs on SM 3 and its last (80-128) waits. TILESCOPE_GUI_KEEP_DIR keeps the
// screenshots there.
TEST_F(Gui, AStreamKTraceReplaysEachSegmentAsAStripOfItsTile) {
  auto trace = std::make_shared<TileTrace>(test::streamk_trace());
  trace->view = std::make_shared<const ScheduleView>(prepare_schedule_view(*trace));
  trace->replay = std::make_shared<const ScheduleReplay>(*trace);
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    st.sessions.current().device.backend = "cuda";
    st.result->trace = trace;
    ++st.result_serial;
    st.ask(ui::rq::BringToFront{{"Tile schedule"}});
    ctx->Yield(4);
    ctx->SetRef("//Tile schedule");
    ctx->ItemClick("replay/Replay");
    IM_CHECK(st.views.replay.shown);
    st.views.replay.t_ns = 1350;
    const std::filesystem::path dir = m_dir.path() / "pictures" / "TileScope";
    auto shots = [&] {
      std::vector<std::string> files;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) files.push_back(e.path().string());
      return files;
    };
    for (const ImVec2 size : {ImVec2(1366, 768), ImVec2(1920, 1080)}) {
      s.resize = size;
      IM_CHECK(yield_until(
          ctx, [&] { return s.window_size.x == size.x && s.window_size.y == size.y; }, 10));
      ctx->Yield(4);
      // At 1366 x 768 the map of C lies partly under the panel's fold: scrolled until its bottom shows.
      if (ImGuiWindow* win = ctx->GetWindowByRef("//Tile schedule")) {
        const ui::Rect map = drawn.plot_areas.at("schedule");
        const float below = map.y + map.h + 8 - (win->InnerClipRect.Max.y);
        if (below > 0) ctx->ScrollToY("//Tile schedule", win->Scroll.y + below);
        ctx->Yield(2);
      }
      const std::string line = drawn.panels.at("replay").state;
      IM_CHECK(line.find("7 running, 10 done, 1 waiting of 18 segments") != std::string::npos);
      if (line.find("of 18 segments") == std::string::npos) ctx->LogError("replay says: %s", line.c_str());
      const std::set<std::string> before = [&] {
        const auto v = shots();
        return std::set<std::string>(v.begin(), v.end());
      }();
      st.ask(ui::rq::Screenshot{});
      IM_CHECK(yield_until(
          ctx, [&] { return shots().size() > before.size(); }, 10));
      std::string shot;
      for (const std::string& f : shots())
        if (!before.count(f)) shot = f;
      const std::string name = "streamk_schedule_" + std::to_string(int(size.x)) + ".png";
      if (const char* keep = std::getenv("TILESCOPE_GUI_KEEP_DIR"); keep && *keep)
        std::filesystem::copy_file(shot, std::filesystem::path(keep) / name,
                                   std::filesystem::copy_options::overwrite_existing);
      int w = 0, h = 0, n = 0;
      unsigned char* px = stbi_load(shot.c_str(), &w, &h, &n, 3);
      IM_CHECK(px != nullptr);
      const ui::Rect area = drawn.plot_areas.at("schedule");  // the tiles of C: 4 across, 3 down
      auto at = [&](int row, double f, int col) {  // left of the tile's middle, where the axis has its tick
        const int x = std::clamp(int(area.x + (col + 0.3) * area.w / 4), 0, w - 1);
        const int y = std::clamp(int(area.y + (row + f) * area.h / 3), 0, h - 1);
        const unsigned char* p = px + 3 * (size_t(y) * size_t(w) + size_t(x));
        return std::array<int, 3>{p[0], p[1], p[2]};
      };
      auto near = [](const std::array<int, 3>& got, uint32_t c, int by) {
        for (int k = 0; k < 3; ++k)
          if (std::abs(got[size_t(k)] - int((c >> (8 * k)) & 0xff)) > by) return false;
        return true;
      };
      const auto sm1 = at(2, 0.12, 1), done = at(2, 0.5, 1), sm0 = at(2, 0.25, 0), sm3 = at(2, 0.15, 3),
                 waiting = at(2, 0.8, 3);
      stbi_image_free(px);
      // Running: the SM's colour at 235 of 255 over the map's; done: the map as it is.
      IM_CHECK(near(sm1, ui::sm_colour(1, 8), 24));
      IM_CHECK(near(done, ui::sm_colour(5, 8), 3));
      IM_CHECK(near(sm0, ui::sm_colour(0, 8), 24));
      IM_CHECK(near(sm3, ui::sm_colour(3, 8), 24));
      IM_CHECK_LT(waiting[0] + waiting[1] + waiting[2], 100);  // near black over the map
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// Input "identity": A is the identity, B is still random, so the seed matters and its field takes input.
TEST_F(Gui, TheSeedIsEnabledForIdentityWhoseBStillDependsOnIt) {
  std::filesystem::create_directories(m_dir.path() / "tilescope");
  std::ofstream(config_file("settings.json")) << R"({"n": 48, "input": "identity"})";
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK_EQ(st.result->spec.input, InputKind::Identity);
    ctx->SetRef("Controls");
    IM_CHECK((ctx->ItemInfo("Seed").ItemFlags & ImGuiItemFlags_Disabled) == 0);
    const uint64_t serial = st.result_serial;
    ctx->ItemClick("Seed");
    ctx->KeyCharsReplaceEnter("7");
    IM_CHECK(wait_for_result(ctx, app, serial));
    IM_CHECK_EQ(st.result->spec.seed, uint64_t(7));
    // Ones: no input depends on the seed; the field is disabled.
    ctx->ComboClick("Input/ones");
    ctx->Yield(3);
    IM_CHECK((ctx->ItemInfo("Seed").ItemFlags & ImGuiItemFlags_Disabled) != 0);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// A person's own kernel in the window (CPU backend: compiled by NVRTC, listed, never run): opened as a file
// dropped on the window would be, built and selected as "yours: <name>"; a save with a compile error shows
// the error at its line and keeps the last good build; a save from another editor is noticed by the watcher
// and rebuilt; a deleted file is reported and its build kept; a file that is not text is refused with a
// message.
// Issue 26: a header of the kernel's folder is part of the kernel: an edit of the header alone is noticed by
// the watcher and builds the kernel again (a compile error in it shows; fixed, a new version is registered).
TEST_F(Gui, AnEditedHeaderOfTheKernelsFolderBuildsTheKernelAgain) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << why;
  const std::string dir = m_dir.path().string();
  ::setenv("TILESCOPE_CACHE_DIR", (dir + "/cache").c_str(), 1);
  const std::string path = dir + "/mine.cu", header = dir + "/scale.h";
  std::ofstream(header) << "#define SCALE 1.0f\n";
  std::ofstream(path) << "#include \"scale.h\"\n#define TILE_WIDTH 16\n"
                         "__global__ void my_mm(float* C, float* A, float* B, int N) {\n"
                         "  C[threadIdx.x] = A[threadIdx.x] * SCALE + B[0] * N;\n}\n";
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    using Build = ui::UserKernelUi::Build;
    st.ask(ui::rq::OpenKernel{path});
    IM_CHECK(yield_until(ctx, [&] { return st.user.build == Build::Ok; }));
    IM_CHECK(st.user.watch.find("and the 1 header it includes") != std::string::npos);
    const uint64_t v1 = st.user.version;
    std::ofstream(header, std::ios::trunc) << "#define SCALE undefined_scale\n";
    IM_CHECK(yield_until(
        ctx, [&] { return st.user.build == Build::Failed; }, 30));
    IM_CHECK(!st.user.errors.empty());
    IM_CHECK(st.user.errors[0].message.find("undefined_scale") != std::string::npos);
    std::ofstream(header, std::ios::trunc) << "#define SCALE 2.0f\n";
    IM_CHECK(yield_until(
        ctx, [&] { return st.user.build == Build::Ok && st.user.version > v1; }, 30));
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// A person's classic kernel, square-only, tile symbol TILE_WIDTH (16 x 16 x 4 bytes of shared memory).
const char* const kMyKernel =
    "#define TILE_WIDTH 16\n__global__ void my_mm(float* C, float* A, float* B, int N) {\n"
    "  __shared__ float s[TILE_WIDTH][TILE_WIDTH];\n  s[threadIdx.y][threadIdx.x] = A[threadIdx.x];\n"
    "  __syncthreads();\n  C[threadIdx.x] = s[threadIdx.x][threadIdx.y] + B[0] * N;\n}\n";

// The Occupancy panel's calculator follows the problem's kernel until the person picks one there, and for a
// person's kernel starts from its NVRTC build's figures (before: the kernel it showed first stayed, and a
// person's kernel, in no build-time table, came up with zeros and "refused: threads per block = 0").
TEST_F(Gui, TheOccupancyCalculatorFollowsTheKernelAndStartsFromYourKernelsBuild) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << why;
  const std::string dir = m_dir.path().string();
  ::setenv("TILESCOPE_CACHE_DIR", (dir + "/cache").c_str(), 1);
  const std::string path = dir + "/mine.cu";
  std::ofstream(path) << kMyKernel;
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK(yield_until(ctx, [&] { return drawn.occupancy_calc.kernel == st.settings.spec.kernel; }));
    st.ask(ui::rq::OpenKernel{path});
    IM_CHECK(yield_until(ctx, [&] {
      return st.user.build == ui::UserKernelUi::Build::Ok && !st.jobs.has(kJobBuildTiles) &&
             !st.user.tiles.empty();
    }));
    const ui::TileBuild* t16 = nullptr;
    for (const auto& t : st.user.tiles)
      if (t.tile == 16 && t.ok) t16 = &t;
    IM_CHECK(t16 != nullptr);
    const OccupancyInputs want = t16->inputs;
    IM_CHECK_EQ(want.threads_per_block, 256);
    IM_CHECK_EQ(want.static_smem, 16 * 16 * 4);
    const auto& c = drawn.occupancy_calc;
    IM_CHECK(yield_until(ctx, [&] {
      return c.kernel == "yours:my_mm" && c.tile == 16 && c.inputs.regs_per_thread == want.regs_per_thread &&
             c.inputs.threads_per_block == 256 && c.inputs.static_smem == want.static_smem;
    }));
    IM_CHECK(c.error.empty());
    IM_CHECK(c.report.has_value());
    // The problem's kernel changes: the calculator follows.
    st.settings.spec.kernel = "naive";
    st.settings.spec.tile = 8;
    IM_CHECK(yield_until(ctx, [&] { return c.kernel == "naive" && c.tile == 8; }));
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

TEST_F(Gui, AKernelFileIsBuiltListedAndRebuiltOnEverySaveAndErrorsKeepTheLastGoodBuild) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << why;
  const std::string dir = m_dir.path().string();
  ::setenv("TILESCOPE_CACHE_DIR", (dir + "/cache").c_str(), 1);
  const std::string path = dir + "/mine.cu";
  const std::string good = kMyKernel;
  std::ofstream(path) << good;
  std::ofstream(dir + "/binary.cu", std::ios::binary) << std::string(
      "\x7f"
      "ELF\0\x01",
      6);
  GuiRun s;
  s.backend = make_backend(BackendChoice::Cpu, nullptr);
  const KernelWorkshop& workshop = *s.backend->workshop();  // where the window registers it
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    using Build = ui::UserKernelUi::Build;
    st.ask(ui::rq::OpenKernel{path});  // what a drop on the window does
    IM_CHECK(yield_until(ctx, [&] { return st.user.build == Build::Ok; }));
    IM_CHECK(find_kernel(st.kernels(), "yours:my_mm") != nullptr);
    IM_CHECK_EQ(st.settings.spec.kernel, std::string("yours:my_mm"));
    IM_CHECK(st.user.square_only);
    IM_CHECK(st.settings.square);
    IM_CHECK_EQ(st.user.form.tile_symbol, std::string("TILE_WIDTH"));
    IM_CHECK(st.user.editor_text.find("my_mm") != std::string::npos);
    const uint64_t v1 = st.user.version;
    IM_CHECK(workshop.find("yours:my_mm") && workshop.find("yours:my_mm")->version() == v1);
    // The per-tile table fills in (every tile compiled for the GPU shown).
    IM_CHECK(yield_until(ctx, [&] { return !st.user.tiles.empty() && !st.jobs.has(kJobBuildTiles); }));
    IM_CHECK_EQ(int(st.user.tiles.size()), 3);
    IM_CHECK(st.user.tiles[2].ok);
    IM_CHECK_EQ(st.user.tiles[2].res.static_smem, 32 * 32 * 4);

    // A save from the window's editor with a compile error on line 4.
    std::string broken = good;
    broken.replace(broken.find("A[threadIdx.x]"), 14, "Q[threadIdx.x]");
    st.user.editor_buffer = broken;
    st.ask(ui::rq::SaveKernel{});
    IM_CHECK(yield_until(ctx, [&] { return st.user.build == Build::Failed; }));
    IM_CHECK(!st.user.errors.empty());
    IM_CHECK_EQ(st.user.errors[0].line, 4);
    IM_CHECK(st.user.errors[0].message.find("\"Q\" is undefined") != std::string::npos);
    IM_CHECK_EQ(workshop.find("yours:my_mm")->version(), v1);  // the last good build stays
    IM_CHECK(st.log.latest() && st.log.latest()->text.find("line 4") != std::string::npos);

    // A save from another editor (TILE_WIDTH 32 now): the watcher notices within its second and rebuilds.
    std::string edited = good;
    edited.replace(edited.find("TILE_WIDTH 16"), 13, "TILE_WIDTH 32");
    std::ofstream(path, std::ios::trunc) << edited;
    IM_CHECK(yield_until(
        ctx, [&] { return st.user.build == Build::Ok && st.user.version > v1; }, 30));
    IM_CHECK_EQ(st.user.form.default_tile, 32);
    IM_CHECK(st.user.editor_text.find("TILE_WIDTH 32") != std::string::npos);

    // Deleted: reported, the build kept, the file watched for.
    std::filesystem::remove(path);
    IM_CHECK(yield_until(
        ctx, [&] { return st.user.file_missing; }, 10));
    IM_CHECK(st.user.watch.find("deleted or renamed") != std::string::npos);
    IM_CHECK(workshop.find("yours:my_mm") != nullptr);

    // A file that is not text: refused with a message, nothing else changes.
    st.ask(ui::rq::OpenKernel{dir + "/binary.cu"});
    IM_CHECK(yield_until(ctx, [&] {
      return st.log.latest() && st.log.latest()->text.find("is not text") != std::string::npos;
    }));
    IM_CHECK_EQ(st.user.path, path);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1) << "see the Test Engine log above";
}

// A kernel's description in the Controls panel is its first sentence until "more..." is clicked: wgmma_tf32's
// whole paragraph of measurements pushed the tiles and the Run button below a 1366 x 768 screen. At that size
// every built-in kernel's Controls fit (nothing scrolled out of sight); the whole description is one click
// away, and "less" folds it again.
TEST_F(Gui, AKernelsDescriptionIsOneSentenceUntilAskedSoTheRunButtonStaysInSight) {
  GuiRun s;
  s.body = [&s](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    st.settings.auto_run = false;  // only the drawing is looked at
    s.resize = ImVec2(1366, 768);
    IM_CHECK(yield_until(
        ctx, [&] { return s.window_size.x == 1366 && s.window_size.y == 768; }, 10));
    st.ask(ui::rq::BringToFront{{"Controls"}});
    ctx->Yield(6);
    int kernels = 0;
    for (const KernelInfo& k : st.kernels()) {
      if (k.user) continue;
      st.settings.spec.kernel = k.id;
      ctx->Yield(3);
      ctx->LogInfo("%s: Controls overflow %.0f px", k.id.c_str(), drawn.panels.at("Controls").overflow_px);
      IM_CHECK_EQ(drawn.panels.at("Controls").overflow_px, 0.0f);
      ++kernels;
    }
    IM_CHECK_GE(kernels, 17);
    st.settings.spec.kernel = "wgmma_tf32";
    ctx->Yield(3);
    ctx->SetRef("//Controls");
    ctx->ItemClick("**/more...##description");
    ctx->Yield(3);
    IM_CHECK_GT(drawn.panels.at("Controls").overflow_px, 0.0f);  // the whole paragraph: scrolled, but there
    ctx->ItemClick("**/less##description");
    ctx->Yield(3);
    IM_CHECK_EQ(drawn.panels.at("Controls").overflow_px, 0.0f);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// The fastest tile from measurements: the Result panel offers to time the kernel's other tiles at this
// shape, then names the fastest from those points (never before) and switches to it on request.
TEST_F(Gui, TheResultPanelTimesEveryTileHereThenOffersTheFastest) {
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    const KernelInfo* k = find_kernel(st.kernels(), st.settings.spec.kernel);
    IM_CHECK(k != nullptr);
    IM_CHECK_GE(int(k->tiles.size()), 2);
    const int others = int(k->tiles.size()) - 1;
    const std::string button = "Time the other " + std::to_string(others) + " tiles";
    ctx->SetRef("Result");
    ctx->ItemClick(("**/" + button).c_str());
    ctx->Yield(2);
    IM_CHECK(st.sweeping());
    IM_CHECK(yield_until(
        ctx, [&] { return !st.sweeping(); }, 120));
    ctx->Yield(3);
    // Every tile is in the session at this shape now: a suggestion from those points.
    int timed = 0;
    for (const MeasurementRecord& r : st.sessions.current().records)
      timed += r.spec.kernel == k->id && r.spec.n == st.settings.spec.n && r.timed;
    IM_CHECK_GE(timed, int(k->tiles.size()));
    std::optional<int> fastest;
    double best = 1e300;
    for (const MeasurementRecord& r : st.sessions.current().records)
      if (r.spec.kernel == k->id && r.spec.n == st.settings.spec.n && r.timed && r.error.passed &&
          r.stats.median < best) {
        best = r.stats.median;
        fastest = r.spec.tile;
      }
    IM_CHECK(fastest.has_value());
    if (*fastest != st.settings.spec.tile) {
      const uint64_t runs = st.runs_submitted;
      ctx->ItemClick(("**/Use tile " + std::to_string(*fastest)).c_str());
      ctx->Yield(2);
      IM_CHECK_EQ(st.settings.spec.tile, *fastest);
      IM_CHECK_EQ(st.runs_submitted, runs + 1);
    } else {
      IM_CHECK(!ctx->ItemExists(("**/Use tile " + std::to_string(*fastest)).c_str()));
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// Which rung for this shape (issue 30): the Result panel's "fastest rung" line, from the session's points at
// this shape. With only the run just made it is the fastest so far and offers to measure the rest of the
// ladder (on the CPU backend: naive, coalesced and tiled, each with its tiles); once they are measured it
// names the fastest kernel and tile with its margin to the next kernel, on one line that fits at 1366 x 768
// and 1920 x 1080, and the whole ranking on hover.
TEST_F(Gui, TheResultPanelNamesTheFastestRungHereFromTheSessionsPoints) {
  GuiRun s;
  s.before_first_frame = [](App& app) {
    ProblemSpec& p = app.state().settings.spec;
    p.m = p.n = p.k = 64;
  };
  s.body = [&s](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->Yield(2);
    const ProblemSpec at = st.result->spec;
    IM_CHECK_EQ(at.n, 64);
    const std::string first = "fastest so far: " + rung_label({at.kernel, at.tile}) + ", ";
    IM_CHECK_EQ(drawn.rung_line.line.rfind(first, 0), size_t(0));
    IM_CHECK(!drawn.rung_line.button.empty());
    ctx->SetRef("Result");
    const std::string button = drawn.rung_line.button;  // "Measure 8 missing"
    ctx->ItemClick(("**/" + button).c_str());
    // Measured like a sweep (at 64^3 on the CPU it may be over within a frame or two).
    auto ranking = [&] { return rank_rungs(st.sessions.current(), st.kernels(), at.m, at.n, at.k, false); };
    IM_CHECK(yield_until(
        ctx, [&] { return !st.sweeping() && ranking().complete(); }, 180));
    const std::string count = button.substr(8, button.find(' ', 8) - 8);  // "Measure N missing"
    IM_CHECK(logged(st, "measuring " + count + " configurations"));
    ctx->Yield(3);
    // Every configuration of the CPU's ladder has a point here now, of several kernels.
    const RungRanking g = ranking();
    IM_CHECK(g.complete());
    std::set<std::string> kernels;
    for (const RungTiming& t : g.measured) kernels.insert(t.config.kernel);
    IM_CHECK_GE(kernels.size(), size_t(2));
    IM_CHECK(g.next_kernel.has_value());
    IM_CHECK_EQ(drawn.rung_line.line, g.line());
    IM_CHECK_EQ(drawn.rung_line.line.rfind("fastest here: " + rung_label(g.fastest()->config) + ", ", 0),
                size_t(0));
    IM_CHECK_NE(drawn.rung_line.line.find(g.next_kernel->against), std::string::npos);
    IM_CHECK(drawn.rung_line.button.empty());
    ctx->LogInfo("%s", drawn.rung_line.line.c_str());
    for (ImVec2 size : {ImVec2(1366, 768), ImVec2(1920, 1080)}) {
      s.resize = size;
      IM_CHECK(yield_until(
          ctx, [&] { return s.window_size.x == size.x && s.window_size.y == size.y; }, 10));
      ctx->Yield(6);
      st.ask(ui::rq::BringToFront{{"Result"}});
      ctx->Yield(4);
      // One line, inside the panel, nothing cut off at its right edge.
      const ui::Rect line = drawn.rung_line.rect, panel = drawn.panels.at("Result").rect;
      IM_CHECK_LE(line.h, ImGui::GetTextLineHeight() + 1);
      IM_CHECK_LE(line.x + line.w, panel.x + panel.w);
      IM_CHECK_EQ(drawn.panels.at("Result").clipped_px, 0.0f);
      ctx->LogInfo("%.0f x %.0f: the line is %.0f px of the panel's %.0f%s", size.x, size.y, line.w, panel.w,
                   drawn.rung_line.elided ? " (cut short; whole on hover)" : "");
      // Hover: the whole ranking, a row a configuration.
      IM_CHECK(!drawn.rung_line.hovered);
      ctx->MouseMoveToPos(ImVec2(line.x + 4, line.y + line.h / 2));
      ctx->Yield(3);
      IM_CHECK(drawn.rung_line.hovered);
      IM_CHECK_EQ(drawn.rung_line.hover_rows, int(g.measured.size()));
      ctx->MouseMoveToPos(ImGui::GetMainViewport()->GetCenter());
      ctx->Yield(2);
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// [SECTION] The GL self-check in the window (issue 25): what a broken driver did on an H100 after a kernel
// faulted, simulated the same way on Mesa (gl_check.hpp), and what the window does about it.

// Pictures that come back wrong, whatever is made anew: the window says so (status bar, the explanation, the
// Messages), draws no heatmaps and writes no screenshot; once OpenGL draws right again, "Check again" brings
// everything back.
TEST_F(Gui, WhenOpenGlFailsItsSelfCheckTheWindowSaysSoDrawsNoHeatmapsAndExportsNoPictures) {
  gfx::simulate_gl_damage(gfx::GlDamage::Readback);
  GuiRun s;
  const std::filesystem::path pictures = m_dir.path() / "pictures";
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK(yield_until(
        ctx, [&] { return st.gl.state == ui::AppState::GlHealth::State::Damaged; }, 20));
    IM_CHECK_EQ(st.gl.rebuilds, 1);  // the GL resources were made anew once before giving up
    IM_CHECK_EQ(st.gl.trigger, std::string("at start"));
    IM_CHECK(!st.pictures_trusted());
    IM_CHECK(st.gl.popup);  // the explanation opens by itself
    ctx->Yield(2);
    IM_CHECK(ctx->WindowInfo("//OpenGL self-check").Window != nullptr);
    IM_CHECK(logged(st, "Heatmaps are not drawn", "nvidia-smi --gpu-reset"));
    IM_CHECK_EQ(drawn.panels.at("Matrices").state, std::string("gl damaged"));
    // F12: no screenshot of a picture known to be wrong.
    ctx->KeyPress(ImGuiKey_F12);
    ctx->Yield(3);
    IM_CHECK(logged(st, "screenshot not written", "self-check"));
    IM_CHECK(!std::filesystem::exists(pictures) || std::filesystem::is_empty(pictures));
    // The driver mends (here: the simulation stops); Check again in the Matrices panel.
    gfx::simulate_gl_damage(gfx::GlDamage::None);
    ctx->SetRef("Matrices");
    ctx->ItemClick("**/Check again");
    IM_CHECK(yield_until(
        ctx, [&] { return st.pictures_trusted(); }, 10));
    IM_CHECK(st.gl.state == ui::AppState::GlHealth::State::Ok);
    IM_CHECK_EQ(st.gl.trigger, std::string("on request"));
    ctx->Yield(3);
    IM_CHECK(drawn.panels.at("Matrices").state != "gl damaged");
    IM_CHECK(logged(st, "the pictures can be trusted again"));
  };
  run_session(s);
  gfx::simulate_gl_damage(gfx::GlDamage::None);
  EXPECT_EQ(s.passed, 1) << "see the Test Engine log above";
}

// Glyphs the driver lost: the first check fails, the renderer's GL objects are made anew (the font atlas is
// uploaded again), the second check passes, and the window goes on.
TEST_F(Gui, GlyphsLostFromTheFontAtlasAreUploadedAgainAndTheWindowGoesOn) {
  gfx::simulate_gl_damage(gfx::GlDamage::Glyphs);
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(yield_until(
        ctx, [&] { return st.gl.checks >= 2; }, 20));
    IM_CHECK(st.gl.state == ui::AppState::GlHealth::State::Ok);
    IM_CHECK_EQ(st.gl.rebuilds, 1);
    IM_CHECK(logged(st, "drew a known line of text", "making the GL resources anew"));
    IM_CHECK(logged(st, "passed after its resources were made anew"));
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->Yield(3);
    IM_CHECK(drawn.panels.at("Matrices").state != "gl damaged");
  };
  run_session(s);
  gfx::simulate_gl_damage(gfx::GlDamage::None);
  EXPECT_EQ(s.passed, 1) << "see the Test Engine log above";
}

// A reset context (the driver says so through GL robustness): the window is made anew with a new context, the
// check passes on it, heatmaps are drawn and runs go on. Driven through the window's hooks, not the Test
// Engine: the engine restores ImGui's IO at the end of each test, and with it the platform and renderer
// backends' data of the window that is gone.
TEST_F(Gui, AfterTheDriverResetsTheContextTheWindowIsMadeAnewAndGoesOn) {
  gfx::simulate_gl_damage(gfx::GlDamage::Lost);
  ui::GuiOptions go;
  std::string note;
  go.backend = make_backend(BackendChoice::Cpu, &note);
  go.hooks.poll_continuously = true;
  int frames = 0, frames_after = 0;
  uint64_t serial = 0;
  bool rerun = false, done = false;
  ui::AppState::GlHealth health;
  std::string matrices;
  bool logged_reset = false, have_heatmaps = false;
  go.hooks.after_swap = [&](App& app, GLFWwindow*) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    ++frames;
    if (!rerun && st.gl.checks >= 2 && st.result_serial > 0 && !st.busy()) {  // a run on the new context
      rerun = true;
      serial = st.result_serial;
      st.ask(ui::rq::Run{});
    }
    if (rerun && st.result_serial > serial && !st.busy()) done = ++frames_after > 3;
  };
  go.hooks.keep_running = [&](App&) { return !done && frames < 20000; };
  go.hooks.before_exit = [&](App& app) {
    const ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    health = st.gl;
    matrices = drawn.panels.count("Matrices") ? drawn.panels.at("Matrices").state : "";
    logged_reset = logged(st, "reset the OpenGL context", "making the GL context anew");
    have_heatmaps = st.heatmaps != nullptr;
  };
  ui::run_gui(go);
  gfx::simulate_gl_damage(gfx::GlDamage::None);
  EXPECT_TRUE(done) << "no second run finished within " << frames << " frames";
  EXPECT_EQ(int(health.state), int(ui::AppState::GlHealth::State::Ok))
      << health.verdict << ": " << health.detail;
  EXPECT_EQ(health.rebuilds, 1);
  EXPECT_GE(health.checks, 2);
  EXPECT_TRUE(logged_reset);
  EXPECT_TRUE(have_heatmaps);
  EXPECT_EQ(matrices.rfind("host", 0), 0u) << matrices;  // drawn, through the host path on Mesa
}

// A window on the CPU backend driven frame by frame: after every swap, `step` gets the app and whether
// OpenGL is settled (its last check passed, nothing requested or being rebuilt) and advances its own phases;
// it returns true when the last one is reached. At most `max_frames` frames; the simulated damage is undone
// at the end. Returns the frames drawn and the GL health as the last frame left it.
namespace {
struct PhasedRun {
  int frames = 0;
  bool finished = false;
  ui::AppState::GlHealth health;
};
PhasedRun run_phases(int max_frames, const std::function<bool(App&, ui::AppState&, bool settled)>& step) {
  ui::GuiOptions go;
  std::string note;
  go.backend = make_backend(BackendChoice::Cpu, &note);
  go.hooks.poll_continuously = true;
  PhasedRun r;
  go.hooks.after_swap = [&](App& app, GLFWwindow*) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    ++r.frames;
    const bool settled = st.gl.state == ui::AppState::GlHealth::State::Ok &&
                         !st.asked.pending<ui::rq::CheckGl>() &&
                         app.gl_rebuild_wanted() == App::GlRebuild::None;
    r.finished = r.finished || step(app, st, settled);
    r.health = st.gl;
  };
  go.hooks.keep_running = [&](App&) { return !r.finished && r.frames < max_frames; };
  ui::run_gui(go);
  gfx::simulate_gl_damage(gfx::GlDamage::None);
  return r;
}
}  // namespace

// On an H100 after a fault, a context made anew passed its check and was lost again once it drew: a reset the
// driver reports at any time is noticed at the next frame (no fault, no request), the context is made anew
// once, and a second loss ends in the window saying its pictures are wrong, until the person checks again.
TEST_F(Gui, AResetReportedAnyTimeIsNoticedAtTheNextFrameAndASecondOneEndsInWrongPicturesUntilCheckedAgain) {
  using State = ui::AppState::GlHealth::State;
  int phase = 0, rebuilds_when_damaged = -1;
  bool noticed = false, refused_shot = false;
  const PhasedRun r = run_phases(3000, [&](App&, ui::AppState& st, bool settled) {
    if (phase == 0 && settled && st.gl.checks >= 1) {  // the check at start passed: a reset, some time later
      gfx::simulate_gl_damage(gfx::GlDamage::Lost);
      phase = 1;
    } else if (phase == 1 && settled && st.gl.rebuilds == 1) {  // made anew and checked: lost again
      noticed = logged(st, "after the driver reset the window's OpenGL context");
      gfx::simulate_gl_damage(gfx::GlDamage::Lost);
      phase = 2;
    } else if (phase == 2 && st.gl.state == State::Damaged) {
      rebuilds_when_damaged = st.gl.rebuilds;
      st.ask(ui::rq::Screenshot{});  // refused: the pictures cannot be trusted
      phase = 3;
    } else if (phase == 3) {
      refused_shot = logged(st, "screenshot not written: OpenGL failed its self-check");
      st.ask(ui::rq::CheckGl{ui::rq::kGlCheckOnRequest});  // the person's "Check again"
      phase = 4;
    } else if (phase == 4 && settled && st.gl.rebuilds == 2) {
      phase = 5;
    }
    return phase == 5;
  });
  EXPECT_EQ(phase, 5) << "stopped after " << r.frames << " frames: " << r.health.verdict << " ("
                      << r.health.detail << ")";
  EXPECT_TRUE(noticed);
  EXPECT_EQ(rebuilds_when_damaged, 1);  // the second loss was not met by another rebuild
  EXPECT_TRUE(refused_shot);
  EXPECT_EQ(int(r.health.state), int(State::Ok)) << r.health.verdict;
  EXPECT_EQ(r.health.rebuilds, 2);
  std::error_code ec;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(m_dir.path() / "pictures" / "TileScope", ec),
                          std::filesystem::directory_iterator()),
            0);  // the refused screenshot left nothing behind
}

// A screenshot whose pixels came back wrong after the check had passed is not written: the check right
// after the read notices, and the window checks (and says) what is wrong; once OpenGL draws right again, the
// next screenshot is written.
TEST_F(Gui, AScreenshotReadBackWrongIsNotWrittenAndTheWindowChecksItsPicturesAgain) {
  using State = ui::AppState::GlHealth::State;
  const std::filesystem::path dir = m_dir.path() / "shots";
  auto shots = [&] {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) n += e.is_regular_file();
    return n;
  };
  int phase = 0;
  size_t shots_while_damaged = 99;
  bool said = false;
  const PhasedRun r = run_phases(3000, [&](App&, ui::AppState& st, bool settled) {
    if (phase == 0 && settled && st.gl.checks >= 1) {
      st.settings.export_dir = dir.string();
      gfx::simulate_gl_damage(gfx::GlDamage::Readback);  // from now on, pixels come back wrong
      st.ask(ui::rq::Screenshot{});
      phase = 1;
    } else if (phase == 1 && st.gl.state == State::Damaged) {
      shots_while_damaged = shots();
      said = logged(st,
                    "the screenshot not written: OpenGL failed its self-check right after the picture was "
                    "read back");
      gfx::simulate_gl_damage(gfx::GlDamage::None);
      st.ask(ui::rq::CheckGl{ui::rq::kGlCheckOnRequest});
      phase = 2;
    } else if (phase == 2 && settled) {
      st.ask(ui::rq::Screenshot{});
      phase = 3;
    } else if (phase == 3 && shots() == 1) {
      phase = 4;
    }
    return phase == 4;
  });
  EXPECT_EQ(phase, 4) << "stopped after " << r.frames << " frames: " << r.health.verdict;
  EXPECT_EQ(shots_while_damaged, 0u);  // not even an empty reservation is left behind
  EXPECT_TRUE(said);
  EXPECT_EQ(shots(), 1u);
}

namespace {
// The colour at the centre of element (row, col) of a heatmap in a screenshot (RGB summed: its brightness).
int brightness_at(const unsigned char* px, int w, int h, const ui::HeatmapReport& r, int64_t row,
                  int64_t col) {
  const ImVec2 c = element_centre(r, row, col);
  const int x = std::clamp(int(c.x), 0, w - 1), y = std::clamp(int(c.y), 0, h - 1);
  const unsigned char* p = px + 3 * (size_t(y) * size_t(w) + size_t(x));
  return p[0] + p[1] + p[2];
}
}  // namespace

// Your own kernel on a remote engine (`tilescope serve --backend cpu` behind the simulated link): the file is
// read and watched here, built in the engine (the form's build and every tile's), listed in the window and
// registered in the engine, its compile errors shown at their lines; the sanitizer's reason is the engine's.
TEST_F(Gui, AKernelFileOnARemoteEngineIsBuiltThereListedAndItsErrorsShownAtTheirLines) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << why;
  const std::string dir = m_dir.path().string();
  ::setenv("TILESCOPE_CACHE_DIR", (dir + "/cache").c_str(), 1);  // the engine inherits it: builds compile
  std::filesystem::create_directories(m_dir.path() / "tilescope");
  std::ofstream(config_file("settings.json"))
      << R"({"m": 64, "n": 48, "k": 40, "square": false, "input": "ramp", "kernel": "tiled", "tile": 8})";
  const std::string path = dir + "/mine.cu";
  std::ofstream(path) << kMyKernel;
  auto remote = std::make_shared<remote::RemoteBackend>(std::string("exec ") + LINK_SIM_BIN +
                                                        " --rtt-ms 40 --mbit 100 -- " + TILESCOPE_BIN +
                                                        " serve --backend cpu --quiet");
  GuiRun s;
  s.backend = remote;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    IM_CHECK(wait_for_result(ctx, app, 0));
    using Build = ui::UserKernelUi::Build;
    st.ask(ui::rq::OpenKernel{path});  // what a drop on the window does
    IM_CHECK(yield_until(ctx, [&] { return st.user.build == Build::Ok; }));
    IM_CHECK(find_kernel(st.kernels(), "yours:my_mm") != nullptr);
    IM_CHECK_EQ(st.settings.spec.kernel, std::string("yours:my_mm"));
    IM_CHECK(remote->workshop()->find("yours:my_mm") != nullptr);
    // The engine has it too: its CPU backend refuses to run it for want of a GPU, not as an unknown kernel.
    RunRequest req;
    req.spec = ProblemSpec{64, 64, 64, "yours:my_mm", 16, InputKind::Random, 1};
    std::string refused;
    try {
      remote->validate(req, true);
    } catch (const ValidationError& e) {
      refused = e.what();
    }
    IM_CHECK(refused.find("needs a GPU to run") != std::string::npos);
    // Every tile built in the engine for the catalog GPU's architecture.
    IM_CHECK(yield_until(ctx, [&] { return !st.user.tiles.empty() && !st.jobs.has(kJobBuildTiles); }));
    IM_CHECK_EQ(int(st.user.tiles.size()), 3);
    IM_CHECK(st.user.tiles[2].ok);
    IM_CHECK_EQ(st.user.tiles[2].res.static_smem, 32 * 32 * 4);
    const uint64_t v1 = st.user.version;

    // A save from the window's editor with a compile error on line 4: the engine's errors, at their lines.
    std::string broken = kMyKernel;
    broken.replace(broken.find("A[threadIdx.x]"), 14, "Q[threadIdx.x]");
    st.user.editor_buffer = broken;
    st.ask(ui::rq::SaveKernel{});
    IM_CHECK(yield_until(ctx, [&] { return st.user.build == Build::Failed; }));
    IM_CHECK(!st.user.errors.empty());
    IM_CHECK_EQ(st.user.errors[0].line, 4);
    IM_CHECK(st.user.errors[0].message.find("\"Q\" is undefined") != std::string::npos);
    IM_CHECK_EQ(st.user.version, v1);  // the last good build stays
    IM_CHECK(logged(st, "line 4"));

    // The sanitizer would run on the engine's GPU; this engine has none, and says so.
    st.ask(ui::rq::SanitizeKernel{});
    IM_CHECK(yield_until(
        ctx, [&] { return logged(st, "compute-sanitizer on the engine:", "needs a GPU"); }, 10));
  };
  run_session(s);
  ::unsetenv("TILESCOPE_CACHE_DIR");
  EXPECT_EQ(s.passed, 1) << "see the Test Engine log above";
}

// The window on a remote engine (`tilescope serve --backend cpu` behind the simulated link of 40 ms round
// trip and 100 Mbit/s): the run, its heatmaps the right way up, hover values and a zoom come through the link
// without a frame waiting for it; the engine killed, the window says so, keeps its result and reconnects.
TEST_F(Gui, ARemoteEngineBehindASlowLinkDrawsRunsAndSurvivesItsDeath) {
  std::filesystem::create_directories(m_dir.path() / "tilescope");
  std::ofstream(config_file("settings.json"))
      << R"({"m": 64, "n": 48, "k": 40, "square": false, "input": "ramp", "kernel": "tiled", "tile": 8})";
  auto remote = std::make_shared<remote::RemoteBackend>(std::string("exec ") + LINK_SIM_BIN +
                                                        " --rtt-ms 40 --mbit 100 -- " + TILESCOPE_BIN +
                                                        " serve --backend cpu --quiet");
  GuiRun s;
  s.backend = remote;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK(st.result->store && st.result->store->remote());
    auto settled = [&](const char* map) {
      auto it = drawn.heatmaps.find(std::string("heatmap ") + map);
      return it != drawn.heatmaps.end() && it->second.drawn && !it->second.pending;
    };
    IM_CHECK(yield_until(
        ctx, [&] { return settled("A") && settled("B") && settled("C = A B"); }, 30));
    // ... and where the pictures lie stays put for a few frames: the frame a picture comes through the link
    // may still show its axes fitted with ImPlot's margin (B's columns 0 and 47 then fell on the plot's
    // border in a screenshot taken at once, under load), and the screenshot is checked with the rectangles
    // and limits of the frame before it.
    auto place = [&] {
      std::vector<double> v;
      for (const char* map : {"A", "B"}) {
        const ui::HeatmapReport& r = drawn.heatmaps.at(std::string("heatmap ") + map);
        v.insert(v.end(), {r.plot.x, r.plot.y, r.plot.w, r.plot.h, r.x0, r.x1, r.y0, r.y1});
      }
      return v;
    };
    std::vector<double> last;
    int same = 0;
    IM_CHECK(yield_until(
        ctx,
        [&] {
          const std::vector<double> now = place();
          same = now == last ? same + 1 : 0;
          last = now;
          return same >= 3;
        },
        30));
    IM_CHECK_NE(drawn.panels.at("Status").state.find(" ms: exec "), std::string::npos);
    // The pictures, the right way up: A[i][j] = i grows down the rows, B[i][j] = j along the columns.
    const std::filesystem::path dir = m_dir.path() / "pictures" / "TileScope";
    st.ask(ui::rq::Screenshot{});
    auto shot = [&] {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) return e.path().string();
      return std::string();
    };
    IM_CHECK(yield_until(
        ctx, [&] { return !shot().empty(); }, 10));
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(shot().c_str(), &w, &h, &n, 3);
    IM_CHECK(px != nullptr);
    IM_CHECK(place() == last);  // the screenshot's frame drew them where the frames around it did
    const ui::HeatmapReport a = drawn.heatmaps.at("heatmap A"), b = drawn.heatmaps.at("heatmap B");
    const int a_top = brightness_at(px, w, h, a, 0, 20), a_bottom = brightness_at(px, w, h, a, 63, 20);
    const int b_left = brightness_at(px, w, h, b, 20, 0), b_right = brightness_at(px, w, h, b, 20, 47);
    stbi_image_free(px);
    IM_CHECK_GT(a_bottom, a_top + 100);  // viridis: dark purple at the low end, yellow at the high end
    IM_CHECK_GT(b_right, b_left + 100);
    // Hover values: asked through the link, shown when they come.
    for (const auto& rc : {std::pair<int64_t, int64_t>{5, 30}, {39, 2}}) {
      const int64_t row = rc.first, col = rc.second;
      ctx->MouseMoveToPos(element_centre(a, row, col));
      IM_CHECK(yield_until(
          ctx, [&] { return drawn.hover.ready && drawn.hover.row == row; }, 20));
      IM_CHECK_EQ(drawn.hover.col, col);
      IM_CHECK_EQ(drawn.hover.value, float(row));
    }
    ctx->MouseMoveToPos(ImVec2(2, 2));
    // A zoom: the region asked for comes, reduced there; frames kept coming meanwhile (we are yielding them).
    st.ask(ui::rq::Zoom{ui::ZoomRequest{10, 4, 16, 12, true}});
    IM_CHECK(yield_until(
        ctx,
        [&] {
          const ui::HeatmapReport& r = drawn.heatmaps.at("heatmap A");
          // Rows 10..25 and columns 4..15 in sight (the plot keeps its aspect, so it may show more), not
          // all 64.
          return r.drawn && !r.pending && r.region.row0 <= 10 && r.region.row0 + r.region.rows >= 26 &&
                 r.region.rows < 40 && r.region.col0 <= 4 && r.region.col0 + r.region.cols >= 16;
        },
        20));
    // The engine dies: the window says so, keeps its result, and comes back with Reconnect.
    const uint64_t results = st.result_serial;
    IM_CHECK_EQ(::kill(remote->connection()->pid(), SIGKILL), 0);
    IM_CHECK(yield_until(
        ctx, [&] { return drawn.panels.at("Status").state.find("engine lost") != std::string::npos; }, 20));
    IM_CHECK(st.result.has_value());
    IM_CHECK_EQ(st.result_serial, results);
    st.ask(ui::rq::Reconnect{});
    IM_CHECK(yield_until(
        ctx, [&] { return remote->link().connected && !st.jobs.has(kJobReconnect); }, 30));
    IM_CHECK(logged(st, "connected to the engine"));
    st.ask(ui::rq::Run{});
    IM_CHECK(wait_for_result(ctx, app, results));
    IM_CHECK(yield_until(
        ctx, [&] { return settled("C = A B"); }, 30));
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// Two engines in one window (issue 28, "several devices"): this machine's CPU engine, then one behind a
// simulated link connected through File > Connect to engine...; the Controls' Device chooses where runs go;
// each engine's points go into its own session; a sweep runs on every connected device, then split across the
// identical ones (both are this machine's CPU); closing the remote engine keeps its points as an overlay and
// saves them beside the window's session file; the command is remembered in the settings.
TEST_F(Gui, TwoEnginesInOneWindowEachWithItsSessionSweepsOnEveryDeviceAndSplit) {
  std::filesystem::create_directories(m_dir.path() / "tilescope");
  std::ofstream(config_file("settings.json"))
      << R"({"m": 40, "n": 40, "k": 40, "square": true, "input": "ramp", "kernel": "tiled", "tile": 8})";
  const std::string command = std::string("exec ") + LINK_SIM_BIN + " --rtt-ms 20 --mbit 100 -- " +
                              TILESCOPE_BIN + " serve --backend cpu --quiet";
  GuiRun s;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK(!st.result->store->remote());
    IM_CHECK_EQ(st.engines.size(), size_t(1));
    const uint64_t local = st.engines[0].id;
    IM_CHECK_EQ(st.sessions.size(), size_t(1));
    const size_t local_points = st.sessions.current().records.size();
    IM_CHECK_GE(local_points, size_t(1));

    // File > Connect to engine...: the command typed, Connect pressed.
    ctx->MenuClick("//##MainMenuBar/File/Connect to engine...");
    IM_CHECK(st.connect.open);
    ctx->SetRef("Connect to engine");
    ctx->ItemClick("Command");
    ctx->KeyCharsReplace(command.c_str());
    ctx->ItemClick("Name");
    ctx->KeyCharsReplace("linked");
    ctx->ItemClick("Connect");
    IM_CHECK(yield_until(
        ctx, [&] { return st.engines.size() == 2 && !st.connecting(); }, 60));
    IM_CHECK(!st.connect.open);  // closed once connected, and the engine chosen
    const ui::AppState::EngineRow* remote = st.current_engine();
    IM_CHECK(remote != nullptr);
    IM_CHECK_EQ(remote->name, std::string("linked"));
    IM_CHECK_EQ(remote->command, command);
    const uint64_t linked = remote->id;
    IM_CHECK_EQ(st.engines[0].device_id, st.engines[1].device_id);  // both this machine's CPU
    // The same problem runs again, there: its result comes through the link, into the engine's own session.
    IM_CHECK(yield_until(
        ctx, [&] { return st.result && st.result->store->remote() && !st.busy(); }, 60));
    IM_CHECK_EQ(st.sessions.size(), size_t(2));
    IM_CHECK_EQ(st.sessions.current().engine, linked);
    IM_CHECK_NE(st.sessions.current().label.find("(linked)"), std::string::npos);
    IM_CHECK_EQ(st.sessions.current().records.size(), size_t(1));
    IM_CHECK_EQ(st.sessions.all()[1].engine, local);
    IM_CHECK_EQ(st.sessions.all()[1].records.size(), local_points);
    IM_CHECK_NE(drawn.panels.at("Status").state.find(" ms: exec "), std::string::npos);
    // The Controls show the Device now; choosing this machine again sends the next run here.
    ctx->SetRef("Controls");
    IM_CHECK(ctx->ItemExists("##device"));
    st.ask(ui::rq::ChooseEngine{local});
    IM_CHECK(yield_until(
        ctx,
        [&] {
          return st.current_engine()->id == local && st.result && !st.result->store->remote() && !st.busy();
        },
        60));
    IM_CHECK_EQ(st.sessions.current().engine, local);
    IM_CHECK_EQ(st.sessions.current().records.size(), local_points + 1);

    // A sweep on every connected device: each engine measures each point into its own session.
    SweepSpec plan;
    plan.sizes = {16, 24, 32};
    plan.configs = {{"tiled", 8}};
    plan.input = InputKind::Ramp;
    st.sweep_quick = true;
    auto points_of = [&](uint64_t engine) {
      const std::optional<size_t> i = st.sessions.of_engine(engine);
      return i ? st.sessions.all()[*i].records.size() : size_t(0);
    };
    const size_t here0 = points_of(local), there0 = points_of(linked);
    st.ask(ui::rq::StartSweep{plan, ui::SweepWhere::EveryDevice});
    IM_CHECK(yield_until(
        ctx, [&] { return st.sweep_progress.state == SweepProgress::State::Done && !st.sweeping(); }, 120));
    IM_CHECK(logged(st, "sweep started", "on every connected device (2)"));
    IM_CHECK_EQ(st.sweep_progress.done, 6);
    IM_CHECK_EQ(points_of(local), here0 + 3);
    IM_CHECK_EQ(points_of(linked), there0 + 3);
    // Split across the identical devices: every point once, all into the current device's session.
    plan.sizes = {8, 16, 24, 32, 40, 48};
    st.ask(ui::rq::StartSweep{plan, ui::SweepWhere::SplitIdentical});
    IM_CHECK(yield_until(
        ctx, [&] { return logged(st, "split across 2 identical devices") && !st.sweeping(); }, 120));
    IM_CHECK_EQ(st.sweep_progress.state, SweepProgress::State::Done);
    IM_CHECK_EQ(st.sweep_progress.done, 6);
    IM_CHECK_EQ(points_of(local), here0 + 3 + 6);
    IM_CHECK_EQ(points_of(linked), there0 + 3);

    // Closing the remote engine: its points stay, as an overlay; it is remembered for the next time.
    st.ask(ui::rq::DisconnectEngine{linked});
    IM_CHECK(yield_until(
        ctx, [&] { return st.engines.size() == 1 && !st.jobs.has(kJobDisconnect); }, 60));
    IM_CHECK_EQ(st.sessions.size(), size_t(2));
    IM_CHECK_EQ(st.sessions.all()[1].engine, uint64_t(0));
    IM_CHECK_EQ(st.sessions.all()[1].records.size(), there0 + 3);
    IM_CHECK_EQ(st.settings.engines.size(), size_t(1));
    IM_CHECK_EQ(st.settings.engines[0].command, command);
    IM_CHECK_EQ(st.settings.engines[0].name, std::string("linked"));
    const std::filesystem::path saved = m_dir.path() / "data" / "tilescope" /
                                        engine_session_file_name(st.sessions.all()[1].device.name, "linked");
    IM_CHECK(std::filesystem::exists(saved));
    IM_CHECK_EQ(load_session(saved).records.size(), there0 + 3);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// A slow link degrades to coarser views first: through link_sim at 1 Mbit/s, C's 512 x 512 heatmap (a view
// of some 200 x 200 values: more than a second of floats on this link, whether the link's rate is measured
// yet or not) is drawn coarse first, over the same elements, and the whole view replaces it; never the other
// way round. Events in the order the frames drew them, not times.
TEST_F(Gui, ASlowLinkDrawsACoarseHeatmapBeforeTheWholeOne) {
  std::filesystem::create_directories(m_dir.path() / "tilescope");
  std::ofstream(config_file("settings.json"))
      << R"({"m": 512, "n": 512, "k": 16, "square": false, "input": "ramp", "kernel": "tiled", "tile": 8})";
  auto remote = std::make_shared<remote::RemoteBackend>(std::string("exec ") + LINK_SIM_BIN +
                                                        " --rtt-ms 20 --mbit 1 -- " + TILESCOPE_BIN +
                                                        " serve --backend cpu --quiet");
  GuiRun s;
  s.backend = remote;
  s.resize = ImVec2(1920, 1080);  // maps of a few hundred pixels each way, whatever the display's default
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    auto settled = [&] {
      auto it = drawn.heatmaps.find("heatmap C = A B");
      return it != drawn.heatmaps.end() && it->second.drawn && !it->second.pending;
    };
    IM_CHECK(yield_until(ctx, settled, 60));
    // The same problem again, in the window at its full size: every frame from its result on is watched.
    const uint64_t serial = st.result_serial;
    st.ask(ui::rq::Run{});
    std::optional<ui::HeatmapReport> coarse, whole;
    bool whole_first = false;
    IM_CHECK(yield_until(
        ctx,
        [&] {
          if (st.result_serial == serial) return false;
          auto it = drawn.heatmaps.find("heatmap C = A B");
          if (it == drawn.heatmaps.end() || !it->second.drawn) return false;
          const ui::HeatmapReport& r = it->second;
          if (r.coarse && !coarse) coarse = r;
          if (!r.coarse && !r.pending) {
            whole = r;
            whole_first = !coarse;
          }
          return whole.has_value();
        },
        60));
    IM_CHECK(!whole_first);
    IM_CHECK(coarse.has_value());
    IM_CHECK(coarse->pending);  // the whole view was on its way while the coarse one was drawn
    // The same elements, a quarter of the values each way (rounded up).
    IM_CHECK_EQ(coarse->region.row0, whole->region.row0);
    IM_CHECK_EQ(coarse->region.rows, whole->region.rows);
    IM_CHECK_EQ(coarse->region.cols, whole->region.cols);
    IM_CHECK_EQ(coarse->region.w, (whole->region.w + kCoarseFactor - 1) / kCoarseFactor);
    IM_CHECK_EQ(coarse->region.h, (whole->region.h + kCoarseFactor - 1) / kCoarseFactor);
    IM_CHECK_GT(view_bytes(whole->region), kCoarseFirstUnmeasuredBytes);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// The status bar says when the engine's link has been silent for longer than Link::kStalledAfterS while
// something is awaited (a hung ssh), and goes back to the round trip when frames come again. The connection's
// clock is the test's, so the silence is counted, not waited for: a run the engine is busy with is awaited
// with no pings, the clock moves 12 s, and then one Pong comes.
TEST_F(Gui, TheStatusBarSaysWhenTheEngineLinkIsSilentAndWhenItMovesAgain) {
  std::filesystem::create_directories(m_dir.path() / "tilescope");
  std::ofstream(config_file("settings.json"))
      << R"({"m": 64, "n": 48, "k": 40, "square": false, "input": "ramp", "kernel": "tiled", "tile": 8})";
  auto now = std::make_shared<std::atomic<double>>(1000.0);
  remote::ConnectOptions o;
  o.clock = [now] { return now->load(); };
  o.ping_interval_s = 0;
  const std::string command = "exec " + std::string(TILESCOPE_BIN) + " serve --backend cpu --quiet";
  auto remote = std::make_shared<remote::RemoteBackend>(command, o);
  GuiRun s;
  s.backend = remote;
  s.body = [&](ImGuiTestContext* ctx, App& app) {
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    auto status = [&] { return drawn.panels.at("Status").state; };
    IM_CHECK(yield_until(ctx, [&] { return !app.state().heatmaps || !app.state().heatmaps->waiting(); }));
    auto conn = remote->connection();
    RunRequest big;
    big.spec = ProblemSpec{1024, 1024, 1024, "tiled", 16, InputKind::Random, 1};
    big.policy = MeasurePolicy::fixed(50);
    const uint64_t id = conn->next_id();
    auto run = conn->send({remote::encode(remote::RunMsg{big, false}, id)}, id);
    now->store(now->load() + 12);
    IM_CHECK(yield_until(
        ctx,
        [&] {
          return status().find("engine silent for 12 s (link stalled?): " + command) != std::string::npos;
        },
        20));
    // A frame comes (a Pong, its ping sent 42 ms ago by this clock): the round trip again, no silence.
    conn->post(remote::encode(remote::PingMsg{(now->load() - 0.042) * 1000}, 0));
    IM_CHECK(yield_until(
        ctx, [&] { return status().find("engine 42 ms: " + command) != std::string::npos; }, 20));
    IM_CHECK_EQ(status().find("silent"), std::string::npos);
    IM_CHECK(!run->ready());
    conn->post(remote::empty(remote::Type::Cancel, id));
    IM_CHECK(yield_until(
        ctx, [&] { return run->ready(); }, 60));
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// The algorithm views, driven by the mouse. A click on C chooses the tile under it and the Matrices panel
// outlines what feeds it; Play walks the k steps to the last and stops. A traced launch (made here: the CPU
// backend traces none) gives the Replay checkbox; the replay's steps land on block starts and its counts are
// those of the trace at that time.
TEST_F(Gui, ClickingATileOfCShowsWhatFeedsItAndTheReplayStepsThroughTheTrace) {
  std::filesystem::create_directories(m_dir.path() / "tilescope");
  std::ofstream(config_file("settings.json"))
      << R"({"m": 64, "n": 64, "k": 64, "kernel": "tiled", "tile": 16, "input": "ramp"})";
  GuiRun s;
  s.body = [](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    ctx->Yield(4);
    IM_CHECK_EQ(st.result->spec.tile, 16);
    // Element (40, 20) is in tile (2, 1) of 16 x 16 tiles.
    const ui::HeatmapReport& c = drawn.heatmaps.at("heatmap C = A B");
    ctx->MouseMoveToPos(element_centre(c, 40, 20));
    ctx->MouseClick(0);
    ctx->Yield(2);
    IM_CHECK(st.views.feed.shown);
    IM_CHECK_EQ(st.views.feed.tile_row, 2);
    IM_CHECK_EQ(st.views.feed.tile_col, 1);
    IM_CHECK_EQ(st.views.feed.step, 0);
    // K = 64 in steps of 16: Play runs to step 3 and stops there.
    ctx->SetRef("Matrices");
    st.views.feed.speed = 20;  // a few frames' worth of steps, however slow the machine's frames are
    ctx->ItemClick("feed/Play");
    IM_CHECK(yield_until(
        ctx, [&] { return !st.views.feed.playing; }, 60));
    IM_CHECK_EQ(st.views.feed.step, 3);
    ctx->ItemClick("feed/Close");
    IM_CHECK(!st.views.feed.shown);

    // A trace of the 4 x 4 tiles on 2 SMs, two at a time: tile i from 100 i to 100 i + 150 ns.
    auto t = std::make_shared<TileTrace>();
    t->grid_x = t->grid_y = 4;
    t->tile_m = t->tile_n = 16;
    t->sm_count = 2;
    for (uint64_t i = 0; i < 16; ++i)
      t->records.push_back({1000 + 100 * i, 1150 + 100 * i, uint32_t(i % 2), 0});
    t->replay = std::make_shared<const ScheduleReplay>(*t);
    st.result->trace = t;
    ctx->Yield(2);
    ctx->ItemClick("replay/Replay");
    IM_CHECK(st.views.replay.shown);
    IM_CHECK_EQ(st.views.replay.t_ns, 0u);
    ctx->ItemClick("replay/>");  // the next block start: 100 ns
    ctx->ItemClick("replay/>");  // 200 ns
    ctx->Yield(2);
    IM_CHECK_EQ(st.views.replay.t_ns, 200u);
    // At 200 ns: block 0 done (150), blocks 1 and 2 running, 13 waiting.
    const std::string line = drawn.panels.at("replay").state;
    IM_CHECK(line.find("2 running, 1 done, 13 waiting of 16 blocks") != std::string::npos);
    if (line.find("2 running, 1 done") == std::string::npos) ctx->LogError("replay says: %s", line.c_str());
    st.views.replay.speed = 10;  // the launch in 0.6 s of frames
    ctx->ItemClick("replay/Play");
    IM_CHECK(yield_until(
        ctx, [&] { return !st.views.replay.playing; }, 60));
    IM_CHECK_EQ(st.views.replay.t_ns, t->replay->duration_ns());
    ctx->Yield(2);
    IM_CHECK(drawn.panels.at("replay").state.find("0 running, 16 done") != std::string::npos);
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// On a GPU the bottom row is split (Timings beside the Tile schedule): a panel the layout does not name (the
// SASS panel) joins the left part's tabs. Docked into the split node itself, it floated over Controls at the
// top-left corner. The session's device says "cuda" here, as a GPU's would; the layout reads nothing else.
TEST_F(Gui, OnAGpusSplitBottomRowEveryPanelIsDockedAndNoneFloats) {
  GuiRun s;
  // From the first frame, as on a GPU: the layout is built before the SASS panel has ever been drawn.
  s.before_first_frame = [](App& app) { app.state().sessions.current().device.backend = "cuda"; };
  s.body = [&s](ImGuiTestContext* ctx, App& app) {
    ui::AppState& st = app.state();
    const ui::FrameReport& drawn = app.report();
    IM_CHECK(wait_for_result(ctx, app, 0));
    IM_CHECK_EQ(st.backend_kind(), std::string("cuda"));
    for (const auto& [name, p] : drawn.panels)
      if (name != "Status" && p.visible && !p.docked)
        ctx->LogError("%s floats in the first layout", name.c_str());
    IM_CHECK(drawn.panels.count("SASS") && drawn.panels.at("SASS").docked);
    for (ImVec2 size : {ImVec2(1920, 1080), ImVec2(1600, 1000), ImVec2(1366, 768)}) {
      s.resize = size;
      IM_CHECK(yield_until(
          ctx, [&] { return s.window_size.x == size.x && s.window_size.y == size.y; }, 10));
      st.ask(ui::rq::ResetLayout{});
      ctx->Yield(8);
      check_layout(ctx, drawn, size);
      for (const auto& [name, p] : drawn.panels) {
        if (name == "Status" || name == "replay" || !(p.visible || p.docked)) continue;
        IM_CHECK_NO_RET(p.docked);
        if (!p.docked) ctx->LogError("%s floats at %.0f x %.0f", name.c_str(), size.x, size.y);
      }
      IM_CHECK(drawn.panels.count("SASS") && drawn.panels.at("SASS").docked);
      st.ask(ui::rq::BringToFront{{"SASS"}});
      ctx->Yield(6);
      IM_CHECK(drawn.panels.at("SASS").visible);
      check_layout(ctx, drawn, size);
    }
  };
  run_session(s);
  EXPECT_EQ(s.passed, 1);
}

// The interactive window (gui.hpp: run_gui).
#include "hosts/gui.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <unistd.h>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <implot.h>
#include <nlohmann/json.hpp>

#include "ui/app.hpp"
#include "core/engine/measure.hpp"
#include "core/io/csv.hpp"
#include "gfx/egl_context.hpp"
#include "gfx/gl.hpp"
#include "gfx/gl_check.hpp"
#include "ui/gl_health.hpp"
#include "core/io/files.hpp"
#include "gfx/heatmap_set.hpp"
#include "core/io/session.hpp"
#include "core/io/settings.hpp"
#include "gfx/texture.hpp"
#include "ui/theme.hpp"
#include "gfx/window.hpp"
#include "core/user_kernel/kernel_workshop.hpp"
#include "hosts/frame_host.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

namespace {

// [SECTION] The window's size and place: the saved geometry when it still lands on a monitor, else a window
// that fits the primary monitor's work area (at most 1600 x 1000).
struct Placement {
  int x = 0, y = 0, w = 1280, h = 800;
  bool place = false, maximize = false;
};

Placement initial_placement(const WindowGeometry& saved) {
  Placement p;
  int count = 0;
  GLFWmonitor** monitors = glfwGetMonitors(&count);
  auto on_some_monitor = [&](int x, int y, int w, int h) {
    for (int i = 0; i < count; ++i) {
      int mx, my, mw, mh;
      glfwGetMonitorWorkarea(monitors[i], &mx, &my, &mw, &mh);
      // The title bar's middle must be on the monitor, and the window no larger than it.
      const int cx = x + w / 2, cy = y + 16;
      if (cx >= mx && cx < mx + mw && cy >= my && cy < my + mh && w <= mw && h <= mh) return true;
    }
    return false;
  };
  if (saved.w > 0 && saved.h > 0 && on_some_monitor(saved.x, saved.y, saved.w, saved.h)) {
    p = Placement{saved.x, saved.y, saved.w, saved.h, true, saved.maximized};
    return p;
  }
  GLFWmonitor* primary = glfwGetPrimaryMonitor();
  if (primary) {
    int mx, my, mw, mh;
    glfwGetMonitorWorkarea(primary, &mx, &my, &mw, &mh);
    if (mw > 0 && mh > 0) {
      p.w = std::min(1600, mw * 92 / 100);
      p.h = std::min(1000, mh * 92 / 100);
      p.x = mx + (mw - p.w) / 2;
      p.y = my + (mh - p.h) / 2;
      p.place = true;
    }
  }
  p.maximize = saved.maximized;
  return p;
}

WindowGeometry current_geometry(GLFWwindow* w, const WindowGeometry& before) {
  WindowGeometry g = before;
  g.maximized = glfwGetWindowAttrib(w, GLFW_MAXIMIZED) == GLFW_TRUE;
  if (!g.maximized) {  // a maximised window keeps the size it will return to
    glfwGetWindowPos(w, &g.x, &g.y);
    glfwGetWindowSize(w, &g.w, &g.h);
  }
  return g;
}

float content_scale(GLFWwindow* w) {
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(w, &sx, &sy);
  return std::clamp(std::max(sx, sy), 0.5f, 4.0f);
}

}  // namespace

namespace {
// SIGINT / SIGTERM close the window as its close button does (settings saved), at the next frame.
std::atomic<bool> g_close_requested{false};
extern "C" void on_close_signal(int) {
  g_close_requested = true;
}

// imgui.ini is used only where it is a regular file or nothing yet at start (a link or device there is kept
// as it is, and the layout neither read nor saved); every save checks the name again
// (ImGuiSession::save_ini).
bool ini_usable(const fs::path& ini, std::string* warnings) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(ini, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    *warnings += (warnings->empty() ? "" : "; ") + ini.string() + " cannot be looked at (" + ec.message() +
                 "): the window layout is neither read nor saved";
    return false;
  }
  if (!fs::exists(st) || fs::is_regular_file(st)) return true;
  *warnings += (warnings->empty() ? "" : "; ") + ini.string() +
               " is not a regular file: the window layout is neither read nor saved (the file is kept)";
  return false;
}

// Files dropped on the window: the first one is opened as a kernel (GLFW passes no user data to this callback
// that ImGui's backend does not already use, hence the one window's state here).
AppState* g_drop_target = nullptr;
extern "C" void on_drop(GLFWwindow*, int count, const char** paths) {
  if (g_drop_target && count > 0 && paths[0]) {
    g_drop_target->ask(ui::rq::OpenKernel{paths[0]});
    if (count > 1)
      g_drop_target->say(Severity::Info,
                         "several files dropped: opening the first, " + std::string(paths[0]));
  }
}
}  // namespace

int run_gui(const GuiOptions& opt) {
  g_close_requested = false;
  auto* old_int = std::signal(SIGINT, on_close_signal);
  auto* old_term = std::signal(SIGTERM, on_close_signal);
  const fs::path cfg = config_dir();
  std::error_code ec;
  fs::create_directories(cfg, ec);
  std::string warnings;
  const fs::path settings_file = cfg / "settings.json";
  Settings defaults;
  if (opt.backend->kind() == "cpu")
    defaults.spec.m = defaults.spec.n = defaults.spec.k = 256;  // a first look that the CPU serves at once
  // A settings file that could not be used whole is kept as it is: this session's settings are not saved.
  bool keep_settings_file = false;
  const Settings settings = load_settings(settings_file, &warnings, &keep_settings_file, defaults);
  const fs::path ini_path = cfg / "imgui.ini";
  const std::string ini = ini_path.string();
  const bool use_ini = !ec && ini_usable(ini_path, &warnings);
  if (!warnings.empty()) std::fprintf(stderr, "tilescope: settings: %s\n", warnings.c_str());

  // The window is created at its size: resized after creation (1280 x 800 to 1256 x 706 on a 1366 x 768
  // screen), its first frame went to a GL surface of the old size, shown 94 px down with the status bar cut
  // off.
  gfx::init_glfw();
  const Placement place = initial_placement(settings.view.window);
  // The window as placed, shown (again, for a window made anew after the driver reset its GL context).
  auto open_window = [](const Placement& p) {
    auto w = std::make_unique<gfx::GlfwWindow>(p.w, p.h, "TileScope", false, p.maximize);
    GLFWwindow* g = w->get();
    if (p.place) glfwSetWindowPos(g, p.x, p.y);
    glfwSetWindowSizeLimits(g, 960, 600, GLFW_DONT_CARE, GLFW_DONT_CARE);  // below this the panels cannot fit
    glfwShowWindow(g);
    glfwSwapInterval(1);
    glfwSetDropCallback(g, on_drop);
    return w;
  };
  auto window = open_window(place);
  GLFWwindow* win = window->get();

  ImGuiSession session(win, use_ini ? ini.c_str() : nullptr);
  if (const std::string why = session.load_ini(); !why.empty()) {
    std::fprintf(stderr, "tilescope: settings: %s\n", why.c_str());
    warnings += (warnings.empty() ? "" : "; ") + why;
  }
  App app(opt.backend, opt.backend_note, settings, window->gl_renderer());
  if (!warnings.empty()) app.state().say(Severity::Warning, "settings: " + warnings);
  std::string ini_refused;  // the last reason imgui.ini was not written (said once per reason)
  app.open_session_file(default_session_path().string());  // the measurements of earlier launches
  g_drop_target = &app.state();
  if (!opt.kernel_file.empty()) app.state().ask(ui::rq::OpenKernel{opt.kernel_file});
  if (opt.log) app.state().log.echo_to(stderr);
  if (opt.engine_factory) app.set_engine_factory(opt.engine_factory);
  for (const std::string& e : opt.also_engines) app.connect_engine("", e, false);
  if (opt.hooks.started) opt.hooks.started(app, win);
  bool trusted_title =
      true;  // the title says when OpenGL failed its self-check (the title is not drawn by GL)

  // The first frames build the dock space and create the panels, which ImGui draws from their second frame on
  // (and sizes their tabs on the next): they are laid out but not shown, so the window never opens on an
  // empty dock.
  int layout_frames = 2;
  while (!window->should_close()) {
    if (g_close_requested) glfwSetWindowShouldClose(win, GLFW_TRUE);
    // Idle: wait for input (low CPU); a job in flight (a run, a sweep, a kernel build, a file, the
    // bandwidth): keep animating its spinner.
    // An answer of a remote engine (a heatmap, a hover value) is drawn the frame it comes.
    const bool awaiting = app.state().heatmaps && app.state().heatmaps->waiting();
    if (!app.state().jobs.running.empty() || app.state().repeat || opt.hooks.poll_continuously ||
        layout_frames > 0 || awaiting)
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(0.25);
    // While a kernel is being timed the window draws at most 4 frames a second (TimingGate): a frame shares
    // the GPU with the kernel. Input still arrives in between and is handled at the next frame.
    if (const double wait = TimingGate::instance().pace(TimingGate::clock_s()); wait > 0) {
      glfwWaitEventsTimeout(std::min(wait, 0.05));
      continue;
    }
    app.pump();
    app.prepare_frame(content_scale(win));
    new_frame(true);
    app.frame();
    if (const std::string why = session.save_ini(false); !why.empty() && why != ini_refused)
      app.state().say(Severity::Warning, ini_refused = why);
    if (layout_frames > 0) {
      --layout_frames;
      ImGui::Render();
      continue;
    }
    int fb_w, fb_h;
    glfwGetFramebufferSize(win, &fb_w, &fb_h);
    render(fb_w, fb_h, [&] {
      return !opt.hooks.unseen || app.state().asked.pending<rq::Screenshot>() ||
             app.state().asked.pending<rq::ExportPanel>();
    });
    if (app.state().asked.take<rq::Screenshot>()) {
      save_screenshot(app.state(), fb_w, fb_h);
    }
    if (app.state().asked.pending<rq::ExportPanel>())
      save_panel_export(app.state(), app.report(), fb_w, fb_h);
    window->swap();
    TimingGate::instance().frame_drawn(TimingGate::clock_s());
    // A failed GL self-check: the renderer's and the app's GL resources made anew, or after a reset the
    // whole window and its context (a GLFW window cannot take a new context), then the check runs again.
    if (app.gl_rebuild_wanted() == App::GlRebuild::Resources) {
      app.release_gl();
      session.rebuild_renderer();
      app.restore_gl(window->gl_renderer());
    } else if (app.gl_rebuild_wanted() == App::GlRebuild::Context) {
      const WindowGeometry g = current_geometry(win, settings.view.window);
      const bool should_close = window->should_close();
      app.release_gl();
      session.detach_window();
      glfwSetDropCallback(win, nullptr);
      window.reset();
      window = open_window(Placement{g.x, g.y, g.w, g.h, true, g.maximized});
      win = window->get();
      glfwSetWindowShouldClose(win, should_close ? GLFW_TRUE : GLFW_FALSE);
      session.attach_window(win);
      app.restore_gl(window->gl_renderer());
      trusted_title = true;
    }
    if (app.state().pictures_trusted() != trusted_title) {
      trusted_title = app.state().pictures_trusted();
      glfwSetWindowTitle(win, trusted_title ? "TileScope"
                                            : "TileScope - OpenGL failed its self-check: the pictures may be "
                                              "wrong (Help > OpenGL self-check)");
    }
    if (opt.hooks.after_swap) opt.hooks.after_swap(app, win);
    if (app.state().asked.take<rq::Quit>() || (opt.hooks.keep_running && !opt.hooks.keep_running(app)))
      glfwSetWindowShouldClose(win, GLFW_TRUE);
  }
  glfwSetDropCallback(win, nullptr);
  g_drop_target = nullptr;
  if (opt.hooks.before_exit) opt.hooks.before_exit(app);
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  if (const std::string why = session.save_ini(true); !why.empty())
    std::fprintf(stderr, "tilescope: %s\n", why.c_str());
  try {  // the measurements, for the next launch (a file refused at start is never overwritten)
    const std::string warnings = app.save_session_file();
    if (!warnings.empty()) std::fprintf(stderr, "tilescope: %s\n", warnings.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilescope: could not save the session: %s\n", e.what());
  }
  if (keep_settings_file) {
    std::fprintf(stderr,
                 "tilescope: settings not saved: %s could not be used whole at start and is kept as it is "
                 "(fix or remove it to save settings again)\n",
                 settings_file.string().c_str());
    return 0;
  }
  Settings out = app.state().settings;
  out.view.window = current_geometry(win, settings.view.window);
  try {
    save_settings(settings_file, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilescope: could not save settings: %s\n", e.what());
  }
  return 0;
}

}  // namespace ts::ui

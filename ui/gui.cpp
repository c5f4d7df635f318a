#include "gui.hpp"

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

#include "app.hpp"
#include "measure.hpp"
#include "csv.hpp"
#include "egl_context.hpp"
#include "gl.hpp"
#include "gl_check.hpp"
#include "gl_health.hpp"
#include "files.hpp"
#include "heatmap_set.hpp"
#include "session.hpp"
#include "settings.hpp"
#include "texture.hpp"
#include "theme.hpp"
#include "window.hpp"
#include "kernel_workshop.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

namespace {

// [SECTION] Dear ImGui + ImPlot contexts and backends, torn down in reverse order.
class ImGuiSession {
 public:
  // window == nullptr: no platform backend (headless EGL): the caller sets the display size and time step.
  // ini_file == nullptr: no saved layout (snapshots are reproducible).
  ImGuiSession(GLFWwindow* window, const char* ini_file) : m_glfw(window != nullptr) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImPlot::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    // ImGui never touches imgui.ini itself (its fopen writes through a link, in place): the layout is read
    // and written here, as every other file (load_ini, save_ini).
    io.IniFilename = nullptr;
    if (ini_file) m_ini = ini_file;
    // Docking on; keyboard navigation off, so Space runs the problem instead of pressing a focused button
    // (Tab still moves between text fields).
    io.ConfigFlags |= ImGuiConfigFlags_DockingEnable;
    io.ConfigWindowsMoveFromTitleBarOnly = true;
    load_fonts();
    if (m_glfw) ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
  }
  ~ImGuiSession() {
    ImGui_ImplOpenGL3_Shutdown();
    if (m_glfw) ImGui_ImplGlfw_Shutdown();
    ImPlot::DestroyContext();
    ImGui::DestroyContext();
  }
  ImGuiSession(const ImGuiSession&) = delete;
  ImGuiSession& operator=(const ImGuiSession&) = delete;
  bool glfw() const { return m_glfw; }

  // The saved layout, before the first frame: a regular file of at most 1 MiB (InputFile: a FIFO is refused,
  // never waited on). Returns why it was not read ("" when read, or when there is none yet); a file not read
  // is kept as it is (the layout is then not saved either).
  std::string load_ini() {
    if (m_ini.empty()) return "";
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(m_ini, ec))) return "";
    std::string why;
    try {
      const InputFile f(m_ini);
      std::string text(size_t(std::min<uint64_t>(f.size(), 1u << 20)), '\0');
      if (f.size() > (1u << 20))
        why = m_ini + " is larger than 1 MiB";
      else if (!f.read_at(0, text.data(), text.size()))
        why = m_ini + " changed while it was read";
      if (why.empty()) {
        ImGui::LoadIniSettingsFromMemory(text.data(), text.size());
        m_saved = text;
        return "";
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
    m_ini.clear();
    return why + ": the window layout is neither read nor saved (the file is kept)";
  }
  // Writes the layout when ImGui asks (its settings changed a few seconds ago) or `now`, and it changed: an
  // exclusive temporary file, fsync, rename; a link, FIFO or anything but a regular file there is refused at
  // every save (never written through). Returns why it was not written ("" when written or unchanged).
  std::string save_ini(bool now) {
    ImGuiIO& io = ImGui::GetIO();
    if (m_ini.empty() || !(io.WantSaveIniSettings || now)) return "";
    io.WantSaveIniSettings = false;
    size_t n = 0;
    const char* data = ImGui::SaveIniSettingsToMemory(&n);
    std::string text(data, n);
    if (text == m_saved) return "";
    try {
      write_file(m_ini, text, Replace::RegularFile);
      m_saved = std::move(text);
    } catch (const std::exception& e) {
      return std::string("the window layout was not saved: ") + e.what();
    }
    return "";
  }

  // The renderer's GL objects made anew on the current context (the font atlas is uploaded again at the next
  // frame): after a failed GL self-check.
  void rebuild_renderer() const {
    ImGui_ImplOpenGL3_DestroyDeviceObjects();
    ImGui_ImplOpenGL3_CreateDeviceObjects();
  }
  // Before the window and its context go (after a GL reset), and with the new one current.
  void detach_window() {
    ImGui_ImplOpenGL3_Shutdown();
    if (m_glfw) ImGui_ImplGlfw_Shutdown();
  }
  void attach_window(GLFWwindow* window) {
    if (m_glfw) ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
  }

 private:
  bool m_glfw;
  std::string m_ini;
  std::string m_saved;  // the layout as last read or written
};

void new_frame(bool glfw, ImVec2 offscreen_size = ImVec2(0, 0), float dt = 1.0f / 60) {
  ImGui_ImplOpenGL3_NewFrame();
  if (glfw) ImGui_ImplGlfw_NewFrame();
  if (offscreen_size.x > 0) {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = offscreen_size;
    io.DisplayFramebufferScale = ImVec2(1, 1);
    io.DeltaTime = dt;
  }
  ImGui::NewFrame();
}

void draw(ImDrawData* data, int fb_w, int fb_h) {
  glViewport(0, 0, fb_w, fb_h);
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(data);
}

// rasterize (optional), asked after ImGui::Render() (the Test Engine runs a test's step inside it, and the
// step may ask for a screenshot): false submits the frame under GL_RASTERIZER_DISCARD, every call made and no
// pixel drawn.
void render(int fb_w, int fb_h, const std::function<bool()>& rasterize = {}) {
  ImGui::Render();
  const bool discard = rasterize && !rasterize();
  if (discard) glEnable(GL_RASTERIZER_DISCARD);
  draw(ImGui::GetDrawData(), fb_w, fb_h);
  if (discard) glDisable(GL_RASTERIZER_DISCARD);
}

// Draws the frame just rendered once more into `fbo` (0: the window's back buffer) without its tooltips,
// which float over the panels and are not part of them (a panel export pressed with the mouse has its
// button's tooltip on screen). False, drawing nothing, when the frame has no tooltip.
bool draw_without_tooltips(int fb_w, int fb_h, GLuint fbo) {
  ImDrawData* all = ImGui::GetDrawData();
  std::vector<const ImDrawList*> tips;
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    const ImGuiWindow* root = w->RootWindow ? w->RootWindow : w;
    if (w->Active && (root->Flags & ImGuiWindowFlags_Tooltip)) tips.push_back(w->DrawList);
  }
  if (!all || tips.empty()) return false;
  ImDrawData without = *all;
  without.CmdLists.resize(0);
  without.TotalVtxCount = without.TotalIdxCount = 0;
  for (ImDrawList* l : all->CmdLists)
    if (std::find(tips.begin(), tips.end(), l) == tips.end()) {
      without.CmdLists.push_back(l);
      without.TotalVtxCount += l->VtxBuffer.Size;
      without.TotalIdxCount += l->IdxBuffer.Size;
    }
  without.CmdListsCount = without.CmdLists.Size;
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  draw(&without, fb_w, fb_h);
  return true;
}

// A picture read back from the window is written only when OpenGL passes its self-check right after: a
// context lost while the frame was drawn leaves a black or garbled picture behind (seen on an H100 after a
// fault). When it fails, the App's check runs next frame (and makes the context anew where it can).
bool read_back_right(AppState& s, const std::string& what) {
  const GlSelfCheck r = run_gl_self_check(nullptr, nullptr);
  if (r.ok) return true;
  s.say(Severity::Error,
        what + " not written: OpenGL failed its self-check right after the picture was read back (" +
            r.verdict + ")");
  s.gl_check_requested = true;
  s.gl_check_trigger = "after " + what + " was read back wrong";
  return false;
}

// A panel's export: the window's rectangle cropped from the frame just rendered (PNG) and its data (CSV),
// under one timestamped stem that does not exist yet. read_fbo: the framebuffer the frame was rendered into
// (0: the window's back buffer). False when the export failed (the status message says why).
bool save_panel_export(AppState& s, int fb_w, int fb_h, GLuint read_fbo = 0) {
  const AppState::ExportRequest req = *s.export_request;
  s.export_request.reset();
  if (!s.pictures_trusted()) {
    s.say(Severity::Error, "export of " + req.panel +
                               " not written: OpenGL failed its self-check, so its picture would be wrong (" +
                               s.gl.verdict + ")");
    return false;
  }
  try {
    auto it = s.panels.find(req.panel);
    if (it == s.panels.end() || !it->second.visible)
      throw std::runtime_error("panel " + req.panel + " is not on screen");
    const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
    const Rect r = it->second.rect;
    const int x0 = std::clamp(int(r.x * scale.x), 0, fb_w), y0 = std::clamp(int(r.y * scale.y), 0, fb_h);
    const int x1 = std::clamp(int((r.x + r.w) * scale.x), 0, fb_w),
              y1 = std::clamp(int((r.y + r.h) * scale.y), 0, fb_h);
    if (x1 <= x0 || y1 <= y0) throw std::runtime_error("panel " + req.panel + " has no visible area");
    fs::path dir = s.settings.export_dir.empty() ? default_export_dir() : fs::path(s.settings.export_dir);
    fs::create_directories(dir);
    // A name of its own kind (Export figure writes tilescope-<plot>-<date>), the pair taken exclusively.
    NewNames names(dir, "tilescope-panel-" + req.stem, {"png", "csv"});
    const fs::path &png = names[0], &csv = names[1];
    // The panel as drawn, without the tooltips over it; then the whole frame again, as the window shows it.
    const bool redrawn = draw_without_tooltips(fb_w, fb_h, read_fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, read_fbo);
    glReadBuffer(read_fbo ? GL_COLOR_ATTACHMENT0 : GL_BACK);
    const std::vector<uint8_t> pixels = gfx::read_pixels_rgba(x0, fb_h - y1, x1 - x0, y1 - y0);
    if (redrawn) draw(ImGui::GetDrawData(), fb_w, fb_h);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (!read_back_right(s, "the export of " + req.panel)) return false;
    // A pair, written whole or not at all: a CSV that cannot be written takes the PNG with it.
    gfx::write_png(png.string(), x1 - x0, y1 - y0, pixels, Replace::Reserved);
    names.written(0);
    write_file(csv, req.csv, Replace::Reserved);
    names.written(1);
    names.complete();
    s.say(Severity::Info, "exported " + png.string() + " and " + csv.filename().string());
  } catch (const std::exception& e) {
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    s.say(Severity::Error, std::string("export failed: ") + e.what());
    return false;
  }
  return true;
}

void save_screenshot(AppState& s, int fb_w, int fb_h) {
  if (!s.pictures_trusted()) {
    s.say(Severity::Error,
          "screenshot not written: OpenGL failed its self-check, so the picture would be wrong (" +
              s.gl.verdict + ")");
    return;
  }
  try {
    fs::path dir = s.settings.export_dir.empty() ? default_export_dir() : fs::path(s.settings.export_dir);
    fs::create_directories(dir);
    const NewNames names(dir, "tilescope", {"png"});
    const fs::path& file = names[0];
    glReadBuffer(GL_BACK);
    const std::vector<uint8_t> pixels = gfx::read_pixels_rgba(0, 0, fb_w, fb_h);
    if (!read_back_right(s, "the screenshot")) return;
    gfx::write_png(file.string(), fb_w, fb_h, pixels, Replace::Reserved);
    s.say(Severity::Info, "screenshot saved: " + file.string());
  } catch (const std::exception& e) {
    s.say(Severity::Error, std::string("screenshot failed: ") + e.what());
  }
}

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
    g_drop_target->user.open_path = paths[0];
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
  if (!opt.kernel_file.empty()) app.state().user.open_path = opt.kernel_file;
  if (opt.log) app.state().log.echo_to(stderr);
  if (opt.hooks.started) opt.hooks.started(app, win);
  bool trusted_title =
      true;  // the title says when OpenGL failed its self-check (the title is not drawn by GL)

  // The first frames build the dock space and create the panels, which ImGui draws from their second frame on
  // (and sizes their tabs on the next): they are laid out but not shown, so the window never opens on an
  // empty dock.
  int layout_frames = 2;
  while (!window->should_close()) {
    if (g_close_requested) glfwSetWindowShouldClose(win, GLFW_TRUE);
    // Idle: wait for input (low CPU); busy (a run, a sweep, a kernel build): keep animating the spinner.
    if (app.state().busy || app.state().repeat || app.state().sweeping || app.state().measuring_bandwidth ||
        app.state().user.working || opt.hooks.poll_continuously || layout_frames > 0)
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
      return !opt.hooks.unseen || app.state().screenshot_requested || app.state().export_request.has_value();
    });
    if (app.state().screenshot_requested) {
      app.state().screenshot_requested = false;
      save_screenshot(app.state(), fb_w, fb_h);
    }
    if (app.state().export_request) save_panel_export(app.state(), fb_w, fb_h);
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
    if (app.state().quit_requested || (opt.hooks.keep_running && !opt.hooks.keep_running(app)))
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

namespace {
// The GUI without a window: an offscreen GL context (EGL device or hidden GLFW window), a framebuffer to draw
// into, ImGui without a platform backend, and the app showing `spec`. Members are torn down in reverse order.
struct Offscreen {
  Offscreen(gfx::GlChoice choice, const std::shared_ptr<Backend>& backend, const std::string& note,
            const ProblemSpec& spec, int width, int height)
      : choice(choice),
        cuda_device(backend->cuda_device()),
        gl(gfx::make_headless_gl(choice, cuda_device, width, height)),
        fbo(std::make_unique<gfx::Framebuffer>(width, height)),
        session(gl.window ? gl.window->get() : nullptr, nullptr),
        app(backend, note, settings_for(spec), gl.gl_renderer()) {
    app.state().gl_context = gl.note;
  }
  static Settings settings_for(const ProblemSpec& spec) {
    Settings s;
    s.spec = spec;
    s.square = spec.m == spec.n && spec.n == spec.k;
    return s;
  }
  // After a failed GL self-check: the GL resources made anew, or after a reset the context too (a new EGL
  // context, or a new hidden window), and the check runs again in the next frame.
  void rebuild(App::GlRebuild kind) {
    app.release_gl();
    if (kind == App::GlRebuild::Context) {
      const int w = fbo->width(), h = fbo->height();
      session.detach_window();
      fbo.reset();
      gl = gfx::HeadlessGl{};  // the old context goes before the new one is made
      gl = gfx::make_headless_gl(choice, cuda_device, w, h);
      fbo = std::make_unique<gfx::Framebuffer>(w, h);
      session.attach_window(gl.window ? gl.window->get() : nullptr);
      app.state().gl_context = gl.note;
    } else {
      session.rebuild_renderer();
    }
    app.restore_gl(gl.gl_renderer());
  }
  gfx::GlChoice choice;
  int cuda_device;
  gfx::HeadlessGl gl;
  std::unique_ptr<gfx::Framebuffer> fbo;
  ImGuiSession session;
  App app;
};

// One offscreen frame of the whole GUI into off.fbo.
// phases (optional): the time spent building the UI and submitting its draw.
// rasterize false: built and submitted, but no pixel drawn (a frame that only lets the layout settle:
// software GL spends most of a snapshot's time on pixels).
void offscreen_frame(Offscreen& off, float scale, float dt, FrameBenchResult::Phases* phases = nullptr,
                     bool rasterize = true) {
  using clock = std::chrono::steady_clock;
  App& app = off.app;
  gfx::Framebuffer& fbo = *off.fbo;
  auto t = clock::now();
  if (off.session.glfw()) glfwPollEvents();
  app.prepare_frame(scale);
  // The GLFW backend sets the display size from the (hidden) window; offscreen it is the framebuffer's, set
  // before NewFrame so panels are placed for it from the first frame.
  new_frame(off.session.glfw(), ImVec2(float(fbo.width()), float(fbo.height())), dt);
  app.frame();
  if (phases) phases->ui_ms = std::chrono::duration<double, std::milli>(clock::now() - t).count();
  t = clock::now();
  fbo.bind();
  render(fbo.width(), fbo.height(), [rasterize] { return rasterize; });
  gfx::Framebuffer::unbind();
  TimingGate::instance().frame_drawn(TimingGate::clock_s());
  if (phases) phases->render_ms = std::chrono::duration<double, std::milli>(clock::now() - t).count();
  if (app.gl_rebuild_wanted() != App::GlRebuild::None) off.rebuild(app.gl_rebuild_wanted());
}

// Checks that OpenGL draws right before a picture is written: one more frame with the check due (and the
// frames after each rebuild, when checks fail). Throws GlDamagedError when it does not.
void require_gl_ok_offscreen(Offscreen& off, float scale, const std::string& what) {
  AppState& st = off.app.state();
  st.gl_check_requested = true;
  st.gl_check_trigger = "before writing " + what;
  for (int frame = 0;
       frame < 6 && (st.gl_check_requested || off.app.gl_rebuild_wanted() != App::GlRebuild::None); ++frame)
    offscreen_frame(off, scale, 1.0f / 60);
  if (st.gl.state != AppState::GlHealth::State::Ok)
    throw GlDamagedError(
        what + " not written: OpenGL failed its self-check, so the picture would be wrong: " + st.gl.verdict +
        " (" + st.gl.detail + "). " + gl_damage_advice());
}

nlohmann::json rect_json(const Rect& r) {
  return {r.x, r.y, r.w, r.h};
}
}  // namespace

int run_snapshot(const SnapshotOptions& opt) {
  Offscreen off(opt.gl, opt.backend, opt.backend_note, opt.request.spec, opt.width, opt.height);
  App& app = off.app;
  AppState& st = app.state();
  st.settings.view.theme = opt.theme;
  if (opt.request.a && opt.request.b) {
    st.file_a = opt.request.a;
    st.file_b = opt.request.b;
    st.file_a_name = "A";
    st.file_b_name = "B";
  }
  std::fprintf(stderr, "tilescope: OpenGL: %s; %s; heatmaps: %s\n", off.gl.note.c_str(),
               off.gl.gl_renderer().c_str(),
               st.heatmaps->interop().on ? "CUDA-GL interop"
                                         : ("host path (" + st.heatmaps->interop().why + ")").c_str());

  for (const std::string& f : opt.front)
    if (std::none_of(app.panels().begin(), app.panels().end(), [&](const auto& p) { return f == p->name(); }))
      throw ValidationError("--front: '" + f + "' is not a panel");
  st.front_requested = opt.front;
  if (!opt.session.empty()) {
    // Its points in the plots, as the window would show them: this device's session continued (the
    // snapshot's run joins it), another device's beside it as an overlay. Nothing is saved.
    Session saved = load_session(opt.session);
    if (saved.device.backend == st.device.backend && saved.device.name == st.device.name)
      st.sessions.current() = std::move(saved);
    else
      st.sessions.open(std::move(saved));
    ++st.sessions_serial;
  }
  // A person's own kernel: shown in its panels as the window shows it (read, built, registered).
  const KernelWorkshop* workshop = opt.backend->workshop();
  if (const auto user = workshop ? workshop->find(opt.request.spec.kernel) : nullptr) {
    st.user.open_path = user->source().path;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (st.user.build != UserKernelUi::Build::Ok && st.user.build != UserKernelUi::Build::Failed &&
           st.user.problem.empty() && std::chrono::steady_clock::now() < limit) {
      offscreen_frame(off, opt.scale, 1.0f / 60);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    st.run_requested = false;  // the snapshot's own run follows
  }
  RunRequest req = opt.request;
  req.keep_store = true;
  req.profile = true;
  app.submit(req);
  RunOutcome outcome = app.queue().wait(1);
  const bool ok = outcome.result && outcome.result->error.passed;
  app.take(std::move(outcome));
  st.busy = false;

  // A few frames: the dock space is built on the first, and ImGui sizes windows and tables from the previous
  // frame's measurements. Only the last one, the picture written, is drawn in pixels.
  auto settle = [&] {
    constexpr int kSettleFrames = 6;
    for (int frame = 0; frame < kSettleFrames; ++frame) {
      if (opt.zoom)
        st.zoom_request = ZoomRequest{(*opt.zoom)[0], (*opt.zoom)[1], (*opt.zoom)[2], (*opt.zoom)[3], true};
      offscreen_frame(off, opt.scale, 1.0f / 60, nullptr, frame == kSettleFrames - 1);
    }
  };
  settle();
  // The picture: OpenGL checked before it is drawn and again right after it is read back. On an H100 after
  // a fault, a new context passed its check, then drew black and was lost: a loss while the picture was drawn
  // or read shows in the second check, and the picture is drawn again on a context made anew (at most three
  // times; the App's rebuilds end with the pictures declared wrong, and then nothing is written).
  std::vector<uint8_t> pixels;
  for (int attempt = 1;; ++attempt) {
    const int rebuilds = st.gl.rebuilds;
    require_gl_ok_offscreen(off, opt.scale, opt.out_png);
    if (st.gl.rebuilds != rebuilds) settle();
    glFinish();
    pixels = off.fbo->read_rgba();
    gfx::damage_readback(pixels);
    const GlSelfCheck after = run_gl_self_check(nullptr, nullptr);
    if (after.ok) break;
    const std::string why =
        "OpenGL failed its self-check right after the picture was read back: " + after.verdict + " (" +
        after.detail + ")";
    if (attempt == 3) throw GlDamagedError(opt.out_png + " not written: " + why + ". " + gl_damage_advice());
    std::fprintf(stderr, "tilescope: %s; drawing it again\n", why.c_str());
  }
  gfx::write_png(opt.out_png, opt.width, opt.height, pixels,
                 opt.overwrite ? Replace::RegularFile : Replace::Never);
  // --export-panels: every panel's "Export PNG + CSV", through the same code as the button (one per frame).
  int export_failures = 0;
  if (!opt.export_dir.empty()) {
    st.settings.export_dir = opt.export_dir;
    for (const char* p : {"Timings", "Occupancy", "Tile schedule"}) st.export_pending.insert(p);
    for (int frame = 0; frame < 18 && (!st.export_pending.empty() || st.export_request); ++frame) {
      // A panel that is a tab behind another is brought to the front for three frames, one after the other.
      if (frame % 3 == 0 && !st.export_pending.empty()) {
        auto next = st.export_pending.begin();
        std::advance(next, (frame / 3) % st.export_pending.size());
        st.front_requested = {*next};
      }
      offscreen_frame(off, opt.scale, 1.0f / 60);
      if (st.export_request) {
        export_failures += !save_panel_export(st, opt.width, opt.height, off.fbo->id());
        std::fprintf(stderr, "tilescope: %s\n", st.log.latest()->text.c_str());
      }
    }
    for (const std::string& p : st.export_pending)
      std::fprintf(stderr, "tilescope: %s: nothing to export (%s)\n", p.c_str(),
                   st.panels.count(p) ? st.panels[p].state.c_str() : "not shown");
  }

  if (!opt.layout_json.empty()) {
    nlohmann::json j;
    j["width"] = opt.width;
    j["height"] = opt.height;
    j["scale"] = opt.scale;
    j["backend"] = st.backend_kind;
    j["gl_renderer"] = st.gl_renderer;
    j["gl_context"] = off.gl.note;
    j["interop"] = st.heatmaps->interop().on;
    j["interop_why"] = st.heatmaps->interop().why;
    for (const auto& [name, p] : st.panels) {
      j["rects"][name] = rect_json(p.rect);
      j["states"][name] = p.state;
      j["panels"][name] = {{"rect", rect_json(p.rect)},  {"visible", p.visible},         {"docked", p.docked},
                           {"clipped_px", p.clipped_px}, {"overflow_px", p.overflow_px}, {"state", p.state}};
    }
    for (const auto& [name, h] : st.heatmap_reports) {
      j["rects"][name] = rect_json(h.plot);
      j["heatmaps"][name] = {{"plot", rect_json(h.plot)},
                             {"x0", h.x0},
                             {"x1", h.x1},
                             {"y0", h.y0},
                             {"y1", h.y1},
                             {"shown_lo", h.shown_lo},
                             {"shown_hi", h.shown_hi},
                             {"scale_w", h.scale_w}};
    }
    for (const auto& [name, r] : st.plot_areas) {
      j["rects"]["plot " + name] = rect_json(r);
      j["plots"][name] = rect_json(r);
    }
    for (const auto& [name, label] : st.plot_labels)
      j["plot_labels"][name] = {{"text", label.first}, {"px", label.second}};
    if (st.result)
      j["result"] = {{"passed", st.result->error.passed},
                     {"worst_row", st.result->error.worst_row},
                     {"worst_col", st.result->error.worst_col},
                     {"bad_elements", st.result->error.bad_elements}};
    write_file(opt.layout_json, j.dump(2) + "\n", opt.overwrite ? Replace::RegularFile : Replace::Never);
  }
  if (export_failures > 0)
    throw std::runtime_error("wrote " + opt.out_png + ", but " + std::to_string(export_failures) +
                             " panel export(s) failed (see above)");
  return ok ? 0 : 1;
}

struct OffscreenGui::Impl {
  Impl(gfx::GlChoice gl, const std::shared_ptr<Backend>& backend, const ProblemSpec& spec, int w, int h)
      : off(gl, backend, "", spec, w, h) {}
  Offscreen off;
};

OffscreenGui::OffscreenGui(std::shared_ptr<Backend> backend, const ProblemSpec& spec, int width, int height,
                           gfx::GlChoice gl)
    : m(std::make_unique<Impl>(gl, backend, spec, width, height)) {}

OffscreenGui::~OffscreenGui() = default;

AppState& OffscreenGui::state() {
  return m->off.app.state();
}

void OffscreenGui::frame() {
  App& app = m->off.app;
  app.pump();
  offscreen_frame(m->off, 1.0f, 1.0f / 60);  // App::frame() submits what changed
}

FrameBenchResult run_frame_bench(const FrameBenchOptions& opt) {
  Offscreen off(opt.gl, opt.backend, "", opt.spec, opt.width, opt.height);
  App& app = off.app;
  AppState& st = app.state();
  FrameBenchResult r;
  r.gl_context = off.gl.note;
  r.gl_renderer = off.gl.gl_renderer();
  r.interop = st.heatmaps->interop().on;
  r.interop_why = st.heatmaps->interop().why;
  using clock = std::chrono::steady_clock;
  FrameBenchResult::Phases ph;
  auto ms_since = [](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(clock::now() - t).count();
  };
  auto frame = [&] {
    const uint64_t serial = st.result_serial;
    auto t = clock::now();
    app.pump();
    ph.pump_ms = ms_since(t);
    ph.new_result = st.result_serial != serial;
    offscreen_frame(off, 1.0f, 1.0f / 60, &ph);
    t = clock::now();
    glFinish();  // the frame is done when the GPU has drawn it
    ph.finish_ms = ms_since(t);
  };

  // The first run (and its heatmaps) before the clock starts (a person's kernel starts its worker first).
  const auto first_limit = clock::now() + std::chrono::seconds(60);
  while (st.result_serial == 0 && st.last_error.empty() && clock::now() < first_limit) {
    frame();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!st.last_error.empty()) throw std::runtime_error("the first run failed: " + st.last_error);
  if (!st.result) throw std::runtime_error("the first run did not finish within 60 s");
  frame();

  // Commit -> picture: the size changes as a released slider changes it, and the clock stops at the end of
  // the first frame that draws the new result (heatmaps refreshed, Result panel updated).
  for (int c = 0; c < opt.commits; ++c) {
    const int64_t n = c % 2 ? opt.spec.n : std::max<int64_t>(1, opt.spec.n - 24);
    const uint64_t serial = st.result_serial;
    const auto t0 = clock::now();
    st.settings.spec.m = st.settings.spec.n = st.settings.spec.k = n;
    const auto limit = t0 + std::chrono::seconds(20);
    while (st.result_serial == serial && st.last_error.empty() && clock::now() < limit) frame();
    if (!st.last_error.empty()) throw std::runtime_error("a commit's run failed: " + st.last_error);
    if (st.result_serial == serial) throw std::runtime_error("a commit's run did not finish within 20 s");
    r.commit_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  }
  // Save -> picture: a copy of the person's kernel file is changed (a comment line more, so the build is new
  // and not in the cache), and the clock stops at the end of the first frame that draws the new build's run.
  if (opt.saves > 0 && !opt.kernel_file.empty()) {
    const fs::path dir = fs::temp_directory_path() / ("tilescope-saves-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path copy = dir / fs::path(opt.kernel_file).filename();
    fs::copy_file(opt.kernel_file, copy, fs::copy_options::overwrite_existing);
    st.user.open_path = copy.string();
    const auto limit = clock::now() + std::chrono::seconds(60);
    while ((st.user.id.empty() || !st.result || st.result->spec.kernel != st.user.id || st.busy) &&
           st.last_error.empty() && clock::now() < limit) {
      frame();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (st.user.id.empty())
      throw std::runtime_error("the kernel file did not build: " + st.user.build_message);
    if (!st.last_error.empty()) throw std::runtime_error("the kernel's first run failed: " + st.last_error);
    std::string text;
    {
      std::ifstream f(copy, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    for (int i = 0; i < opt.saves; ++i) {
      FrameBenchResult::Save sv;
      sv.editor = i % 2 == 1;
      text += "// save " + std::to_string(i) + "\n";
      const uint64_t version = st.user.version, serial = st.result_serial;
      const auto t0 = clock::now();
      if (sv.editor) {
        st.user.editor_buffer = text;
        st.user.save_editor = true;
      } else {
        std::ofstream(copy, std::ios::binary | std::ios::trunc) << text;
      }
      const auto end = t0 + std::chrono::seconds(30);
      auto ms = [&] { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
      while (clock::now() < end && st.last_error.empty()) {
        frame();
        if (sv.noticed_ms == 0 && st.user.build == UserKernelUi::Build::Compiling) sv.noticed_ms = ms();
        if (sv.built_ms == 0 && st.user.version > version) sv.built_ms = ms();
        if (sv.built_ms > 0 && st.result_serial > serial && st.result->spec.kernel == st.user.id &&
            !st.busy) {
          sv.drawn_ms = ms();
          break;
        }
      }
      if (!st.last_error.empty()) throw std::runtime_error("a save's run failed: " + st.last_error);
      if (sv.drawn_ms == 0) {
        std::string where = sv.noticed_ms == 0 ? "the save was never noticed"
                            : sv.built_ms == 0
                                ? "noticed after " + std::to_string(int(sv.noticed_ms)) +
                                      " ms, but no new build (" + st.user.build_message + ")"
                                : "built after " + std::to_string(int(sv.built_ms)) +
                                      " ms, but its run was not drawn (busy " + std::to_string(st.busy) +
                                      ", result " + (st.result ? st.result->spec.kernel : "none") + ")";
        throw std::runtime_error("save " + std::to_string(i + 1) + " of " + std::to_string(opt.saves) +
                                 " was not drawn within 30 s: " + where);
      }
      r.saves.push_back(sv);
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  if (st.result->spec != opt.spec) {  // back to the measured problem for Repeat
    st.settings.spec = opt.spec;
    const uint64_t serial = st.result_serial;
    const auto limit = clock::now() + std::chrono::seconds(20);
    while (st.result_serial == serial && st.last_error.empty() && clock::now() < limit) frame();
  }

  // The window's sweep: frames while the SweepRunner measures on its own thread, every point landing in the
  // session and the plots as it finishes.
  if (opt.sweep) {
    st.bandwidth_requested = true;  // the Roofline panel's DRAM roof, before the sweep holds the device
    for (int i = 0; i < 2000 && !st.bandwidth && (st.measuring_bandwidth || st.bandwidth_requested); ++i) {
      frame();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.sweep.dram_gbs = st.bandwidth ? st.bandwidth->gbs : 0;
    st.sweep_quick = opt.sweep_quick;
    st.sweep_min_s = opt.sweep_min_s;
    st.sweep_max_s = opt.sweep_max_s;
    st.sweep_request = *opt.sweep;
    const auto t0 = clock::now();
    frame();
    r.sweep.ran = true;
    r.sweep.describe = opt.sweep->describe();
    MeasurePolicy bench = opt.backend->bench_policy();  // as App::sweep_policy makes it
    bench.min_seconds = opt.sweep_min_s;
    bench.max_seconds = opt.sweep_max_s;
    bench.max_samples = std::min(bench.max_samples, int(AppState::kWindowSweepMaxSamples));
    r.sweep.policy = (opt.sweep_quick ? opt.backend->default_policy() : bench).describe();
    if (!st.sweeping) {
      r.sweep.state = to_string(st.sweep_progress.state);
      r.sweep.error = st.sweep_progress.error;
      return r;
    }
    bool cancelled = false;
    const int64_t frames0 = TimingGate::instance().frames();
    while (st.sweeping) {
      // As the window does: while a kernel is timed, at most 4 frames a second. A frame's time here is the
      // time it took to draw (what a person waits for), not the pause before it.
      if (const double wait = TimingGate::instance().pace(TimingGate::clock_s()); wait > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(wait, 0.05)));
        continue;
      }
      const auto before = clock::now();
      frame();
      const auto now = clock::now();
      r.frame_ms.push_back(std::chrono::duration<double, std::milli>(now - before).count());
      r.phases.push_back(ph);
      if (!cancelled && std::chrono::duration<double>(now - t0).count() > opt.sweep_limit_s) {
        st.sweep_cancel_requested = true;
        cancelled = true;
      }
    }
    r.sweep.frames = TimingGate::instance().frames() - frames0;
    frame();  // the last points into the session
    r.sweep.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    r.sweep.state = to_string(st.sweep_progress.state);
    r.sweep.error = st.sweep_progress.error;
    r.sweep.done = st.sweep_progress.done;
    r.sweep.failed = st.sweep_progress.failed;
    r.sweep.total = st.sweep_progress.total;
    r.heatmap_state = st.panels["Matrices"].state;
    if (!opt.sweep_session_out.empty()) save_session(opt.sweep_session_out, st.sessions.current(), false);
    if (opt.seconds <= 0) return r;
  }

  // Repeat: the kernel re-runs back to back on the engine's thread while frames are drawn here, for `seconds`
  // and until it has re-run at least twice (on a slow or busy machine a few seconds may not hold two runs).
  st.repeat = true;
  const uint64_t serial0 = st.result_serial;
  const auto t_end = clock::now() + std::chrono::duration<double>(opt.seconds);
  auto last = clock::now();
  while (opt.seconds > 0 && (clock::now() < t_end || st.result_serial < serial0 + 2)) {
    frame();
    const auto now = clock::now();
    r.frame_ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
    r.phases.push_back(ph);
    last = now;
    if (!st.last_error.empty()) throw std::runtime_error("a run failed: " + st.last_error);
  }
  st.repeat = false;
  r.runs = int(st.result_serial - serial0);
  r.heatmap_state = st.panels["Matrices"].state;
  return r;
}

}  // namespace ts::ui

#include "gui.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <implot.h>
#include <nlohmann/json.hpp>

#include "egl_context.hpp"
#include "gl.hpp"
#include "heatmap_gl.hpp"
#include "panel.hpp"
#include "run_queue.hpp"
#include "csv.hpp"
#include "files.hpp"
#include "settings.hpp"
#include "texture.hpp"
#include "window.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

namespace {

// [SECTION] Dear ImGui + ImPlot contexts and backends, torn down in reverse order.
class ImGuiSession {
 public:
  // window == nullptr: no platform backend (headless EGL): the caller sets the display size and time step.
  ImGuiSession(GLFWwindow* window, const char* ini_file) : m_glfw(window != nullptr) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImPlot::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = ini_file;  // nullptr: no saved layout (snapshots are reproducible)
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard | ImGuiConfigFlags_DockingEnable;
    ImGui::StyleColorsDark();
    // Auto-fitted plots keep a margin, so a flat series (every launch the same time) is not drawn on the
    // border.
    ImPlot::GetStyle().FitPadding = ImVec2(0.02f, 0.12f);
    ImGuiStyle& st = ImGui::GetStyle();
    st.WindowRounding = 4;
    st.FrameRounding = 3;
    st.GrabRounding = 3;
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

 private:
  bool m_glfw;
};

// [SECTION] The application: state, panels, and the bridge from edits to RunQueue requests.
class App {
 public:
  App(std::shared_ptr<Backend> backend, const std::string& note, Settings settings, std::string renderer)
      : m_queue(backend), m_panels(register_panels()) {
    m_state.settings = std::move(settings);
    m_state.kernels = backend->kernels();
    m_state.backend_kind = backend->kind();
    m_state.device_name = backend->device_name();
    m_state.backend_note = note;
    m_state.gl_renderer = std::move(renderer);
    // The GL context is current: can the engine's GPU write into it?
    m_state.heatmaps = std::make_shared<gfx::HeatmapContext>(backend->cuda_device());
  }

  AppState& state() { return m_state; }
  RunQueue& queue() { return m_queue; }

  // Turns edits into requests: a changed problem with auto-run, or the Run button.
  void maybe_submit() {
    ProblemSpec& spec = m_state.settings.spec;
    if (m_state.settings.square) spec.m = spec.k = spec.n;
    const bool changed = !m_submitted_any || spec != m_last_submitted;
    if (m_state.run_requested || (m_state.settings.auto_run && changed)) {
      RunRequest req;
      req.spec = spec;
      req.keep_store = true;
      req.profile = true;
      submit(std::move(req));
    } else if (m_state.repeat && !m_state.busy) {
      // Repeat: the same problem again as soon as the last run is in; new inputs are not regenerated on the
      // host, and each run adds its launches to the Timings panel.
      RunRequest req;
      req.spec = spec;
      req.keep_store = true;
      req.profile = true;
      submit(std::move(req));
    }
    m_state.run_requested = false;
  }

  void submit(RunRequest req) {
    m_last_submitted = req.spec;
    m_submitted_any = true;
    m_queue.submit(std::move(req));
    m_state.busy = true;
  }

  // Takes a finished outcome, if any.
  void pump() {
    if (auto o = m_queue.poll()) take(std::move(*o));
    m_state.busy = m_queue.busy();
  }

  void take(RunOutcome o) {
    if (o.result) {
      const KernelInfo* k = find_kernel(m_state.kernels, o.result->spec.kernel);
      m_state.history.add(*o.result, k && k->tf32);
      m_state.result = std::move(*o.result);
      ++m_state.result_serial;
      m_state.last_error.clear();
    } else {
      m_state.last_error = o.error;
      m_state.last_error_is_input = o.bad_input;
      m_state.repeat = false;  // never re-submit a failing request in a loop
    }
  }

  void draw() {
    if (ImGui::IsKeyPressed(ImGuiKey_F12, false)) m_state.screenshot_requested = true;
    if (ImGui::IsKeyChordPressed(ImGuiMod_Ctrl | ImGuiKey_Q)) m_state.quit_requested = true;
    for (auto& p : m_panels) p->draw(m_state);
  }

 private:
  AppState m_state;
  RunQueue m_queue;
  std::vector<std::unique_ptr<Panel>> m_panels;
  ProblemSpec m_last_submitted;
  bool m_submitted_any = false;
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

void render(int fb_w, int fb_h) {
  ImGui::Render();
  glViewport(0, 0, fb_w, fb_h);
  glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

// A panel's export: the window's rectangle cropped from the frame just rendered (PNG) and its data (CSV),
// under one timestamped stem that does not exist yet. read_fbo: the framebuffer the frame was rendered into
// (0: the window's back buffer). False when the export failed (the status message says why).
bool save_panel_export(AppState& s, int fb_w, int fb_h, GLuint read_fbo = 0) {
  const AppState::ExportRequest req = *s.export_request;
  s.export_request.reset();
  try {
    auto it = s.layout.find(req.panel);
    if (it == s.layout.end()) throw std::runtime_error("panel " + req.panel + " is not on screen");
    const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
    const Rect r = it->second;
    const int x0 = std::clamp(int(r.x * scale.x), 0, fb_w), y0 = std::clamp(int(r.y * scale.y), 0, fb_h);
    const int x1 = std::clamp(int((r.x + r.w) * scale.x), 0, fb_w),
              y1 = std::clamp(int((r.y + r.h) * scale.y), 0, fb_h);
    if (x1 <= x0 || y1 <= y0) throw std::runtime_error("panel " + req.panel + " has no visible area");
    fs::path dir = s.settings.export_dir.empty() ? default_export_dir() : fs::path(s.settings.export_dir);
    fs::create_directories(dir);
    fs::path png = unique_export_path(dir, "tilescope-" + req.stem, "png");
    fs::path csv = png;
    csv.replace_extension(".csv");
    for (int i = 2; fs::exists(csv); ++i) {  // the pair shares a stem; find one free for both
      png = dir / (png.stem().string() + "-" + std::to_string(i) + ".png");
      csv = png;
      csv.replace_extension(".csv");
    }
    glBindFramebuffer(GL_READ_FRAMEBUFFER, read_fbo);
    glReadBuffer(read_fbo ? GL_COLOR_ATTACHMENT0 : GL_BACK);
    gfx::write_png(png.string(), x1 - x0, y1 - y0, gfx::read_pixels_rgba(x0, fb_h - y1, x1 - x0, y1 - y0),
                   false);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    write_new_file(csv, req.csv);
    s.status_message = "exported " + png.string() + " and " + csv.filename().string();
  } catch (const std::exception& e) {
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    s.status_message = std::string("export failed: ") + e.what();
    s.status_time = ImGui::GetTime();
    return false;
  }
  s.status_time = ImGui::GetTime();
  return true;
}

void save_screenshot(AppState& s, int fb_w, int fb_h) {
  try {
    fs::path dir = s.settings.export_dir.empty() ? default_export_dir() : fs::path(s.settings.export_dir);
    fs::create_directories(dir);
    fs::path file = unique_export_path(dir, "tilescope", "png");
    glReadBuffer(GL_BACK);
    gfx::write_png(file.string(), fb_w, fb_h, gfx::read_pixels_rgba(0, 0, fb_w, fb_h), false);
    s.status_message = "screenshot saved: " + file.string();
  } catch (const std::exception& e) {
    s.status_message = std::string("screenshot failed: ") + e.what();
  }
  s.status_time = ImGui::GetTime();
}

}  // namespace

namespace {
// SIGINT / SIGTERM close the window as its close button does (settings saved), at the next frame.
std::atomic<bool> g_close_requested{false};
extern "C" void on_close_signal(int) {
  g_close_requested = true;
}

// ImGui reads and writes imgui.ini itself (fopen): let it only where that is a regular file or nothing yet,
// so a FIFO cannot block the start and a link or device is never replaced.
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

  gfx::GlfwWindow window(1600, 1000, "TileScope", true);
  ImGuiSession session(window.get(), use_ini ? ini.c_str() : nullptr);
  App app(opt.backend, opt.backend_note, settings, window.gl_renderer());
  if (!warnings.empty()) {
    app.state().status_message = "settings: " + warnings;
    app.state().status_time = 0;
  }

  while (!window.should_close()) {
    if (g_close_requested) glfwSetWindowShouldClose(window.get(), GLFW_TRUE);
    // Idle: wait for input (low CPU); busy: keep animating the spinner.
    if (app.state().busy)
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(0.25);
    app.pump();
    new_frame(true);
    app.draw();
    app.maybe_submit();
    int fb_w, fb_h;
    glfwGetFramebufferSize(window.get(), &fb_w, &fb_h);
    render(fb_w, fb_h);
    if (app.state().screenshot_requested) {
      app.state().screenshot_requested = false;
      save_screenshot(app.state(), fb_w, fb_h);
    }
    if (app.state().export_request) save_panel_export(app.state(), fb_w, fb_h);
    window.swap();
    if (app.state().quit_requested) glfwSetWindowShouldClose(window.get(), GLFW_TRUE);
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  if (keep_settings_file) {
    std::fprintf(stderr,
                 "tilescope: settings not saved: %s could not be used whole at start and is kept as it is "
                 "(fix or remove it to save settings again)\n",
                 settings_file.string().c_str());
    return 0;
  }
  try {
    save_settings(settings_file, app.state().settings);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilescope: could not save settings: %s\n", e.what());
  }
  return 0;
}

namespace {
// One offscreen frame of the whole GUI into `fbo`.
void offscreen_frame(App& app, const ImGuiSession& session, gfx::Framebuffer& fbo, float dt) {
  if (session.glfw()) glfwPollEvents();
  // The GLFW backend sets the display size from the (hidden) window; offscreen it is the framebuffer's, set
  // before NewFrame so panels are placed for it from the first frame.
  new_frame(session.glfw(), ImVec2(float(fbo.width()), float(fbo.height())), dt);
  app.draw();
  fbo.bind();
  render(fbo.width(), fbo.height());
  gfx::Framebuffer::unbind();
}

// The GUI without a window: an offscreen GL context (EGL device or hidden GLFW window), a framebuffer to draw
// into, ImGui without a platform backend, and the app showing `spec`. Members are torn down in reverse order.
struct Offscreen {
  Offscreen(gfx::GlChoice choice, const std::shared_ptr<Backend>& backend, const std::string& note,
            const ProblemSpec& spec, int width, int height)
      : gl(gfx::make_headless_gl(choice, backend->cuda_device(), width, height)),
        fbo(width, height),
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
  gfx::HeadlessGl gl;
  gfx::Framebuffer fbo;
  ImGuiSession session;
  App app;
};
}  // namespace

int run_snapshot(const SnapshotOptions& opt) {
  Offscreen off(opt.gl, opt.backend, opt.backend_note, opt.request.spec, opt.width, opt.height);
  gfx::HeadlessGl& gl = off.gl;
  gfx::Framebuffer& fbo = off.fbo;
  ImGuiSession& session = off.session;
  App& app = off.app;  // shows the defaults (auto-run on)
  app.state().zoom_request = opt.zoom;
  std::fprintf(stderr, "tilescope: OpenGL: %s; %s; heatmaps: %s\n", gl.note.c_str(), gl.gl_renderer().c_str(),
               app.state().heatmaps->interop().on
                   ? "CUDA-GL interop"
                   : ("host path (" + app.state().heatmaps->interop().why + ")").c_str());

  RunRequest req = opt.request;
  req.keep_store = true;
  req.profile = true;
  app.submit(req);
  RunOutcome outcome = app.queue().wait(1);
  const bool ok = outcome.result && outcome.result->error.passed;
  app.take(std::move(outcome));
  app.state().busy = false;

  // A few frames: ImGui sizes windows and tables from the previous frame's measurements.
  for (int frame = 0; frame < 4; ++frame) offscreen_frame(app, session, fbo, 1.0f / 60);
  glFinish();
  gfx::write_png(opt.out_png, opt.width, opt.height, fbo.read_rgba(), opt.overwrite);
  // --export-panels: every panel's "Export PNG + CSV", through the same code as the button (one per frame).
  int export_failures = 0;
  if (!opt.export_dir.empty()) {
    app.state().settings.export_dir = opt.export_dir;
    for (const char* p : {"Timings", "Occupancy", "Tile schedule"}) app.state().export_pending.insert(p);
    for (int frame = 0; frame < 12 && (!app.state().export_pending.empty() || app.state().export_request);
         ++frame) {
      offscreen_frame(app, session, fbo, 1.0f / 60);
      if (app.state().export_request) {
        export_failures += !save_panel_export(app.state(), opt.width, opt.height, fbo.id());
        std::fprintf(stderr, "tilescope: %s\n", app.state().status_message.c_str());
      }
    }
    for (const std::string& p : app.state().export_pending)
      std::fprintf(stderr, "tilescope: %s: nothing to export (%s)\n", p.c_str(),
                   app.state().panel_state.count(p) ? app.state().panel_state[p].c_str() : "not shown");
  }

  if (!opt.layout_json.empty()) {
    nlohmann::json j;
    j["width"] = opt.width;
    j["height"] = opt.height;
    j["backend"] = app.state().backend_kind;
    j["gl_renderer"] = app.state().gl_renderer;
    j["gl_context"] = gl.note;
    j["interop"] = app.state().heatmaps->interop().on;
    j["interop_why"] = app.state().heatmaps->interop().why;
    for (const auto& [name, r] : app.state().layout) j["rects"][name] = {r.x, r.y, r.w, r.h};
    for (const auto& [name, st] : app.state().panel_state) j["states"][name] = st;
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
  offscreen_frame(app, m->off.session, m->off.fbo, 1.0f / 60);
  app.maybe_submit();
}

FrameBenchResult run_frame_bench(const FrameBenchOptions& opt) {
  Offscreen off(opt.gl, opt.backend, "", opt.spec, opt.width, opt.height);
  gfx::HeadlessGl& gl = off.gl;
  gfx::Framebuffer& fbo = off.fbo;
  ImGuiSession& session = off.session;
  App& app = off.app;
  FrameBenchResult r;
  r.gl_context = gl.note;
  r.gl_renderer = gl.gl_renderer();
  r.interop = app.state().heatmaps->interop().on;
  r.interop_why = app.state().heatmaps->interop().why;

  // The first run (and its heatmaps) before the clock starts; then Repeat: the kernel re-runs back to back on
  // the engine's thread while frames are drawn here.
  app.maybe_submit();
  RunOutcome first = app.queue().wait(1);
  if (!first.result) throw std::runtime_error("the first run failed: " + first.error);
  app.take(std::move(first));
  offscreen_frame(app, session, fbo, 1.0f / 60);
  glFinish();
  app.state().repeat = true;
  const uint64_t serial0 = app.state().result_serial;
  using clock = std::chrono::steady_clock;
  const auto t_end = clock::now() + std::chrono::duration<double>(opt.seconds);
  auto last = clock::now();
  while (clock::now() < t_end) {
    app.pump();
    offscreen_frame(app, session, fbo, 1.0f / 60);
    app.maybe_submit();
    glFinish();  // the frame is done when the GPU has drawn it
    const auto now = clock::now();
    r.frame_ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
    if (!app.state().last_error.empty()) throw std::runtime_error("a run failed: " + app.state().last_error);
  }
  app.state().repeat = false;
  r.runs = int(app.state().result_serial - serial0);
  r.heatmap_state = app.state().panel_state["Matrices"];
  return r;
}

}  // namespace ts::ui

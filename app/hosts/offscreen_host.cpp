// The GUI without a window (gui.hpp): the snapshot, the offscreen GUI of the tests, the frame benchmark.
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
#include "core/engine/schedule_replay.hpp"
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

// What the Matrices panel said it drew last frame ("interop", "host: <why>", ...).
std::string matrices_state(const FrameReport& drawn) {
  const auto it = drawn.panels.find("Matrices");
  return it == drawn.panels.end() ? std::string() : it->second.state;
}

// Checks that OpenGL draws right before a picture is written: one more frame with the check due (and the
// frames after each rebuild, when checks fail). Throws GlDamagedError when it does not.
void require_gl_ok_offscreen(Offscreen& off, float scale, const std::string& what) {
  AppState& st = off.app.state();
  st.ask(rq::CheckGl{"before writing " + what});
  for (int frame = 0;
       frame < 6 && (st.asked.pending<rq::CheckGl>() || off.app.gl_rebuild_wanted() != App::GlRebuild::None);
       ++frame)
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
  const FrameReport& drawn = app.report();  // what the last frame drew
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
  st.ask(rq::BringToFront{opt.front});
  if (!opt.session.empty()) {
    // Its points in the plots, as the window would show them: this device's session continued (the
    // snapshot's run joins it), another device's beside it as an overlay. Nothing is saved.
    Session saved = load_session(opt.session);
    if (saved.device.backend == st.device().backend && saved.device.name == st.device().name)
      st.sessions.current() = std::move(saved);
    else
      st.sessions.open(std::move(saved));
    ++st.sessions_serial;
  }
  // A person's own kernel: shown in its panels as the window shows it (read, built, registered).
  const KernelWorkshop* workshop = opt.backend->workshop();
  if (const auto user = workshop ? workshop->find(opt.request.spec.kernel) : nullptr) {
    st.ask(ui::rq::OpenKernel{user->source().path});
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (st.user.build != UserKernelUi::Build::Ok && st.user.build != UserKernelUi::Build::Failed &&
           st.user.problem.empty() && std::chrono::steady_clock::now() < limit) {
      offscreen_frame(off, opt.scale, 1.0f / 60);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    st.asked.take<rq::Run>();  // the snapshot's own run follows
  }
  RunRequest req = opt.request;
  req.keep_store = true;
  req.profile = true;
  app.submit(req);
  RunOutcome outcome = app.queue().wait(1);
  const bool ok = outcome.result && outcome.result->error.passed;
  app.take(std::move(outcome));
  app.report_jobs();
  if (opt.replay_at_ns || opt.replay_at_fraction) {
    st.views.replay.shown = true;
    st.views.replay.serial = st.result_serial;
    const ScheduleReplay* r = st.result && st.result->trace ? st.result->trace->replay.get() : nullptr;
    st.views.replay.t_ns = opt.replay_at_ns ? *opt.replay_at_ns
                           : r              ? uint64_t(*opt.replay_at_fraction * double(r->duration_ns()))
                                            : 0;
  }
  if (opt.feed) {
    ui::FeedCursor& f = st.views.feed;
    f.shown = true;
    f.serial = st.result_serial;
    f.tile_row = opt.feed->row;
    f.tile_col = opt.feed->col;
    f.step = opt.feed->step;
    f.slice = opt.feed->slice;
  }

  // A few frames: the dock space is built on the first, and ImGui sizes windows and tables from the previous
  // frame's measurements. Only the last one, the picture written, is drawn in pixels. A remote engine's
  // heatmaps come a round trip after they are asked (over a slow link a coarse view first, then the whole
  // one): the frames go on until the whole views are in (60 s at most; then the plots say they are coming).
  // The same for the SASS panel's listings.
  auto settle = [&] {
    constexpr int kSettleFrames = 6;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto awaiting = [&] {
      // (and the SASS panel's listings, when it is shown: a person's kernel is built first)
      const bool sass = st.fetching_sass() || st.asked.pending<rq::FetchSass>();
      return ((st.heatmaps && st.heatmaps->waiting()) || sass) && std::chrono::steady_clock::now() < limit;
    };
    for (int frame = 0;; ++frame) {
      if (opt.zoom)
        st.ask(rq::Zoom{ZoomRequest{(*opt.zoom)[0], (*opt.zoom)[1], (*opt.zoom)[2], (*opt.zoom)[3], true}});
      off.app.pump_sass();
      const bool last = frame >= kSettleFrames - 1 && !awaiting();
      offscreen_frame(off, opt.scale, 1.0f / 60, nullptr, last);
      if (last) break;
      if (frame >= kSettleFrames - 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
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
    st.ask(rq::PressExport{{"Timings", "Occupancy", "Tile schedule"}});
    for (int frame = 0;
         frame < 18 && (st.asked.pending<rq::PressExport>() || st.asked.pending<rq::ExportPanel>());
         ++frame) {
      // A panel that is a tab behind another is brought to the front for three frames, one after the other.
      const rq::PressExport* left = st.asked.peek<rq::PressExport>();
      if (frame % 3 == 0 && left) {
        auto next = left->panels.begin();
        std::advance(next, (frame / 3) % left->panels.size());
        st.ask(rq::BringToFront{{*next}});
      }
      offscreen_frame(off, opt.scale, 1.0f / 60);
      if (st.asked.pending<rq::ExportPanel>()) {
        export_failures += !save_panel_export(st, drawn, opt.width, opt.height, off.fbo->id());
        std::fprintf(stderr, "tilescope: %s\n", st.log.latest()->text.c_str());
      }
    }
    if (const auto left = st.asked.take<rq::PressExport>())
      for (const std::string& p : left->panels) {
        const auto it = drawn.panels.find(p);
        std::fprintf(stderr, "tilescope: %s: nothing to export (%s)\n", p.c_str(),
                     it != drawn.panels.end() ? it->second.state.c_str() : "not shown");
      }
  }

  if (!opt.layout_json.empty()) {
    nlohmann::json j;
    j["width"] = opt.width;
    j["height"] = opt.height;
    j["scale"] = opt.scale;
    j["backend"] = st.backend_kind();
    j["gl_renderer"] = st.gl_renderer;
    j["gl_context"] = off.gl.note;
    j["interop"] = st.heatmaps->interop().on;
    j["interop_why"] = st.heatmaps->interop().why;
    for (const auto& [name, p] : drawn.panels) {
      j["rects"][name] = rect_json(p.rect);
      j["states"][name] = p.state;
      j["panels"][name] = {{"rect", rect_json(p.rect)},
                           {"visible", p.visible},
                           {"docked", p.docked},
                           {"clipped_px", p.clipped_px},
                           {"overflow_px", p.overflow_px},
                           {"state", p.state},
                           {"text", p.text}};
      if (!p.facts.empty()) j["panels"][name]["facts"] = p.facts;
    }
    for (const auto& [name, h] : drawn.heatmaps) {
      j["rects"][name] = rect_json(h.plot);
      j["heatmaps"][name] = {
          {"plot", rect_json(h.plot)},
          {"x0", h.x0},
          {"x1", h.x1},
          {"y0", h.y0},
          {"y1", h.y1},
          {"shown_lo", h.shown_lo},
          {"shown_hi", h.shown_hi},
          {"scale_w", h.scale_w},
          {"drawn", h.drawn},
          {"pending", h.pending},
          {"coarse", h.coarse},
          {"region", {h.region.row0, h.region.col0, h.region.rows, h.region.cols, h.region.w, h.region.h}}};
    }
    for (const auto& [name, r] : drawn.plot_areas) {
      j["rects"]["plot " + name] = rect_json(r);
      j["plots"][name] = rect_json(r);
    }
    for (const auto& [name, label] : drawn.plot_labels)
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
  // the first frame that draws the new result (heatmaps refreshed, Result panel updated). On a remote engine
  // the heatmaps come a round trip after the result: the clock stops when they are drawn too.
  auto awaiting = [&] { return st.heatmaps && st.heatmaps->waiting(); };
  while (awaiting()) frame();
  const Backend::Link before = opt.backend->link();
  for (int c = 0; c < opt.commits; ++c) {
    const int64_t n = c % 2 ? opt.spec.n : std::max<int64_t>(1, opt.spec.n - 24);
    const uint64_t serial = st.result_serial;
    const auto t0 = clock::now();
    st.settings.spec.m = st.settings.spec.n = st.settings.spec.k = n;
    const auto limit = t0 + std::chrono::seconds(20);
    while ((st.result_serial == serial || awaiting()) && st.last_error.empty() && clock::now() < limit)
      frame();
    if (!st.last_error.empty()) throw std::runtime_error("a commit's run failed: " + st.last_error);
    if (st.result_serial == serial) throw std::runtime_error("a commit's run did not finish within 20 s");
    if (awaiting()) throw std::runtime_error("a commit's heatmaps did not come from the engine within 20 s");
    r.commit_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  }
  if (opt.commits > 0 && before.remote) {
    const Backend::Link after = opt.backend->link();
    r.commit_bytes_in = double(after.bytes_in - before.bytes_in) / opt.commits;
    r.commit_bytes_out = double(after.bytes_out - before.bytes_out) / opt.commits;
  }
  // Save -> picture: a copy of the person's kernel file is changed (a comment line more, so the build is new
  // and not in the cache), and the clock stops at the end of the first frame that draws the new build's run.
  if (opt.saves > 0 && !opt.kernel_file.empty()) {
    const fs::path dir = fs::temp_directory_path() / ("tilescope-saves-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path copy = dir / fs::path(opt.kernel_file).filename();
    fs::copy_file(opt.kernel_file, copy, fs::copy_options::overwrite_existing);
    st.ask(ui::rq::OpenKernel{copy.string()});
    const auto limit = clock::now() + std::chrono::seconds(60);
    while ((st.user.id.empty() || !st.result || st.result->spec.kernel != st.user.id || st.busy()) &&
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
        st.ask(ui::rq::SaveKernel{});
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
            !st.busy()) {
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
                                      " ms, but its run was not drawn (busy " + std::to_string(st.busy()) +
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
    st.ask(rq::MeasureBandwidth{});  // the Roofline panel's DRAM roof, before the sweep holds the device
    for (int i = 0;
         i < 2000 && !st.bandwidth && (st.measuring_bandwidth() || st.asked.pending<rq::MeasureBandwidth>());
         ++i) {
      frame();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.sweep.dram_gbs = st.bandwidth ? st.bandwidth->gbs : 0;
    st.sweep_quick = opt.sweep_quick;
    st.sweep_min_s = opt.sweep_min_s;
    st.sweep_max_s = opt.sweep_max_s;
    st.ask(rq::StartSweep{*opt.sweep});
    const auto t0 = clock::now();
    frame();
    r.sweep.ran = true;
    r.sweep.describe = opt.sweep->describe();
    MeasurePolicy bench = opt.backend->bench_policy();  // as App::sweep_policy makes it
    bench.min_seconds = opt.sweep_min_s;
    bench.max_seconds = opt.sweep_max_s;
    bench.max_samples = std::min(bench.max_samples, int(AppState::kWindowSweepMaxSamples));
    r.sweep.policy = (opt.sweep_quick ? opt.backend->default_policy() : bench).describe();
    if (!st.sweeping()) {
      r.sweep.state = to_string(st.sweep_progress.state);
      r.sweep.error = st.sweep_progress.error;
      return r;
    }
    bool cancelled = false;
    const int64_t frames0 = TimingGate::instance().frames();
    while (st.sweeping()) {
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
        st.ask(rq::CancelSweep{});
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
    r.heatmap_state = matrices_state(app.report());
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
  r.heatmap_state = matrices_state(app.report());
  return r;
}

}  // namespace ts::ui

#include "ui/app.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "ui/plots/figure_render.hpp"
#include "ui/dialogs/connect_dialog.hpp"
#include "ui/dialogs/file_dialogs.hpp"
#include "gfx/gl_check.hpp"
#include "ui/gl_health.hpp"
#include "gfx/heatmap_set.hpp"
#include "ui/panels/algorithm_overlays.hpp"
#include "ui/panels/menu_bar.hpp"
#include "core/io/npy.hpp"
#include "core/plots/rung_suggest.hpp"
#include "ui/plots/plots.hpp"
#include "ui/shortcuts.hpp"
#include "ui/panels/status_bar.hpp"
#include "ui/theme.hpp"
#include "ui/user_kernel/user_kernel_controller.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

App::App(std::shared_ptr<Backend> backend, const std::string& note, Settings settings, std::string renderer)
    : m_panels(register_panels()) {
  m_state.settings = std::move(settings);
  Engine& first = add_engine(backend, "", "");  // its session is made below
  first.first = true;
  first.command = backend->link().remote ? backend->link().command : "";
  first.name = first.command.empty() ? "this machine" : first.command;
  m_state.backend = backend.get();  // the engine holds it for as long as the state lives
  // The kernel file that was open when the window last closed: read, built and run again, as if opened now.
  bool reopening = false;
  if (const std::string f = m_state.settings.kernel_file; !f.empty()) {
    std::error_code ec;
    const fs::file_status st = fs::status(f, ec);
    if (fs::is_regular_file(st)) {
      m_state.ask(rq::OpenKernel{f});
      reopening = true;
    } else {
      m_state.say(Severity::Warning, "the kernel file open last time, " + f + ", " +
                                         (fs::exists(st) ? "is not a regular file" : "is gone") +
                                         ": not opened again (File > Open kernel opens one)");
      m_state.settings.kernel_file.clear();
    }
  }
  // A kernel of a file that is not open yet (the settings remember "yours: <name>"), or one unknown: back to
  // the classic one (a reopened file's kernel is chosen again once it is built). A person's kernel is never
  // taken from the registry here: it may hold one of another window of this process whose file is gone.
  const std::string& kernel = m_state.settings.spec.kernel;
  if (kernel.rfind("yours:", 0) == 0 || !find_kernel(m_state.kernels(), kernel)) {
    const std::string was = m_state.settings.spec.kernel;
    m_state.settings.spec.kernel = "tiled";
    m_state.settings.spec.tile = 16;
    if (was.rfind("yours:", 0) == 0 && !reopening)
      m_state.say(Severity::Info,
                  was + " is not open in this session: showing tiled (File > Open kernel opens yours)");
  }
  keep_square(m_state);  // settings written by hand, or before a kernel became square-only
  m_state.backend_note = note;
  m_state.sweep_min_s = m_state.bench_policy().min_seconds;
  m_state.sweep_max_s = m_state.bench_policy().max_seconds;
  m_state.gl_renderer = std::move(renderer);
  try {
    m_state.capacity = backend->capacity();
  } catch (const std::exception& e) {
    m_state.say(Severity::Error, std::string("cannot ask the device how much it can run: ") + e.what());
  }
  // The GL context is current: can the engine's GPU write into it?
  m_state.heatmaps = std::make_shared<gfx::HeatmapSet>(backend->cuda_device(), host_path_why());
  m_dialogs = std::make_unique<FileDialogs>();
  // Every measurement of this window goes into a session of this device; sweeps run on a thread of their own.
  // (The session keeps the device: AppState::device() reads it there.)
  DeviceInfo device;
  try {
    device = backend->device_info();
  } catch (const std::exception& e) {
    device.backend = backend->kind();
    device.name = device.label = backend->device_name();
    m_state.say(Severity::Error, std::string("cannot read the device's figures: ") + e.what());
  }
  m_state.sessions.current() = Session::for_device(device);
  m_state.sessions.current().engine = first.id;
  m_user = std::make_unique<UserKernelController>(*backend, m_jobs);
  m_incidents = backend->incidents().count;
  report_engines();
  m_state.ask(rq::CheckGl{"at start"});  // the first frame checks that OpenGL draws what it is told
}

// [SECTION] The GL self-check
void App::check_gl() {
  AppState& s = m_state;
  const Backend::Incidents inc = current_engine().backend->incidents();
  if (inc.count != m_incidents) {  // a person's kernel faulted or hung: the GPU's OpenGL may be broken now
    m_incidents = inc.count;
    if (s.gl.state == AppState::GlHealth::State::Ok) m_gl_attempt = 0;  // a new cause: a new episode
    s.ask(rq::CheckGl{"after a fault of your kernel (" + inc.latest.substr(0, 160) + ")"});
  }
  if (m_gl_rebuild != GlRebuild::None) return;
  // A reset the driver reports for this window's context, at any time (one cheap GL call a frame): the
  // pictures drawn since may be black or garbage, so the check runs now.
  if (!s.asked.pending<rq::CheckGl>() && s.gl.state == AppState::GlHealth::State::Ok) {
    gfx::reset_status();  // marks the current context lost when a reset is reported
    if (gfx::current_context_lost()) s.ask(rq::CheckGl{"after the driver reset the window's OpenGL context"});
  }
  const std::optional<rq::CheckGl> asked = s.asked.take<rq::CheckGl>();
  if (!asked) return;
  m_gl_trigger = asked->trigger;
  if (m_gl_trigger == rq::kGlCheckOnRequest) m_gl_attempt = 0;  // the person may have reset the GPU
  // The known picture on the heatmaps' device, for the check's interop half (made once).
  if (s.heatmaps && s.heatmaps->interop().on && !m_probe) {
    try {
      m_probe = current_engine().backend->probe_store(gfx::HeatmapPatternCheck::pattern());
    } catch (const std::exception& e) {
      s.say(Severity::Warning,
            std::string("OpenGL self-check: the known picture could not be put on the GPU: ") + e.what());
    }
  }
  const bool interop_was_on = s.heatmaps && s.heatmaps->interop().on;
  const GlSelfCheck r = run_gl_self_check(s.heatmaps.get(), m_probe.get());
  AppState::GlHealth& g = s.gl;
  const bool was_damaged = g.state == AppState::GlHealth::State::Damaged;
  ++g.checks;
  g.verdict = r.verdict;
  g.detail = r.detail;
  g.trigger = m_gl_trigger;
  g.ms = r.ms;
  if (r.ok) {
    g.state = AppState::GlHealth::State::Ok;
    if (was_damaged || m_gl_rebuilt)
      s.say(Severity::Info, "OpenGL self-check " + g.trigger + ": passed" +
                                (m_gl_rebuilt ? " after its resources were made anew" : "") +
                                (m_interop_off_why.empty() ? "" : ", with heatmaps through host memory") +
                                ": the pictures can be trusted again");
    m_gl_rebuilt = false;
    return;
  }
  // A failed check: first the GL resources (the context, after a reset) made anew; then the same without
  // CUDA-GL interop, where the heatmaps took it (after a fault on an H100, OpenGL alone drew right and only
  // what touched interop broke); then the window says the pictures cannot be trusted.
  const std::string what = "OpenGL self-check " + g.trigger + ": " + r.verdict + " (" + r.detail + ")";
  if (m_gl_attempt == 0 || (m_gl_attempt == 1 && (interop_was_on || r.interop_checked))) {
    ++m_gl_attempt;
    m_gl_rebuild = r.context_lost ? GlRebuild::Context : GlRebuild::Resources;
    if (m_gl_attempt == 2)
      m_interop_off_why = "turned off for this session: the GL self-check failed with it (" + r.verdict + ")";
    s.say(Severity::Warning, what + "; making the " + (r.context_lost ? "GL context" : "GL resources") +
                                 " anew" + (m_gl_attempt == 2 ? ", without CUDA-GL interop," : "") +
                                 " and checking again");
    return;
  }
  g.state = AppState::GlHealth::State::Damaged;
  g.popup = !was_damaged;
  s.say(Severity::Error, what +
                             ". Heatmaps are not drawn and pictures are not exported until a check passes. " +
                             gl_damage_advice());
  std::fprintf(stderr, "tilescope: OpenGL self-check failed: %s (%s)\n", r.verdict.c_str(), r.detail.c_str());
}

std::string App::host_path_why() const {
  if (!m_interop_off_why.empty()) return m_interop_off_why;
  if (m_state.backend && m_state.backend->link().remote)
    return "the engine is remote: each view comes reduced through its link";
  return "";
}

void App::release_gl() {
  m_state.heatmaps.reset();
  for (auto& p : m_panels) p->release_gl();
}

void App::restore_gl(const std::string& renderer) {
  AppState& s = m_state;
  s.gl_renderer = renderer;
  s.heatmaps = std::make_shared<gfx::HeatmapSet>(current_engine().backend->cuda_device(), host_path_why());
  ++s.gl_generation;
  ++s.gl.rebuilds;
  m_gl_rebuild = GlRebuild::None;
  m_gl_rebuilt = true;
  s.ask(rq::CheckGl{m_gl_trigger});  // and look again: the same cause
}

App::~App() {
  m_bandwidth_cancel.cancel();
  for (auto& e : m_engines) e->sweep->cancel();
}

void App::prepare_frame(float content_scale) {
  const ViewSettings& v = m_state.settings.view;
  if (v.theme != m_theme || v.font_px != m_font_px || content_scale != m_scale) {
    apply_theme(v.theme, v.font_px, content_scale);
    m_theme = v.theme;
    m_font_px = v.font_px;
    m_scale = content_scale;
  }
}

void App::handle_shortcuts() {
  AppState& s = m_state;
  if (shortcut_pressed(Action::Run)) s.ask(rq::Run{});
  if (shortcut_pressed(Action::Repeat)) s.repeat = !s.repeat;
  if (shortcut_pressed(Action::OpenInputs)) s.ask(rq::OpenInputs{});
  // Ctrl+S in the kernel editor saves the kernel, not C.
  if (!s.user.editor_focused && shortcut_pressed(Action::SaveC)) s.ask(rq::SaveC{});
  if (shortcut_pressed(Action::Screenshot)) s.ask(rq::Screenshot{});
  if (shortcut_pressed(Action::ResetLayout)) s.ask(rq::ResetLayout{});
  if (shortcut_pressed(Action::Shortcuts)) s.show_shortcuts = true;
  if (shortcut_pressed(Action::Quit)) s.ask(rq::Quit{});
  ViewSettings& v = s.settings.view;
  if (shortcut_pressed(Action::FontBigger)) v.font_px = std::min(ViewSettings::kMaxFontPx, v.font_px + 1);
  if (shortcut_pressed(Action::FontSmaller)) v.font_px = std::max(ViewSettings::kMinFontPx, v.font_px - 1);
}

void App::frame() {
  AppState& s = m_state;
  s.now = ImGui::GetTime();
  check_gl();
  handle_shortcuts();
  advance_algorithm_views();
  draw_menu_bar(s, m_panels);
  draw_status_bar(s, m_report);
  if (s.asked.take<rq::ResetLayout>()) {
    m_layout.reset();
    s.say(Severity::Info, "layout reset to the default arrangement for this window size");
  }
  m_layout.dock_space(s, m_report, m_panels);
  if (auto front = s.asked.take<rq::BringToFront>()) m_layout.bring_to_front(std::move(front->panels));
  for (auto& p : m_panels) p->draw(s, m_report);
  m_layout.keep_on_screen(m_panels);
  draw_help_windows(s);
  draw_connect_dialog(s);
  handle_files();
  handle_sessions();
  handle_sweep();
  handle_engines();
  const bool had_kernel = !s.user.id.empty();
  m_user->frame(s);
  // A kernel opened: bring its panel to the front (once).
  if (!had_kernel && !s.user.id.empty()) ImGui::SetWindowFocus("Your kernel");
  maybe_submit();
  report_jobs();
}

// The replay and the k steps move on while they play, once a frame, by the frame's time.
void App::advance_algorithm_views() {
  AppState& s = m_state;
  if (!s.views.replay.playing && !s.views.feed.playing) return;
  const ScheduleReplay* r = current_replay(s);
  const std::optional<FeedPlan> f = s.views.feed.playing ? current_feed_plan(s) : std::nullopt;
  advance_views(s.views, r ? r->duration_ns() : 0, f ? int(f->steps.size()) : 0, ImGui::GetIO().DeltaTime);
}

void App::report_jobs() {
  // The sweep as AppState::sweep_progress last read it (pump_measurements), so the jobs and the progress
  // never disagree within a frame: a sweep that ended between two reads is not "not sweeping" while its
  // progress still says running, nor done before its last points are in the session.
  m_state.jobs = m_jobs.report(
      {{kJobRun, current_engine().queue->busy()}, {kJobSweep, m_state.sweep_progress.running()}});
}

// [SECTION] Files: A and B from .npy (File > Open), C to .npy (File > Save). The reading and writing run in
// the background; the dialogs and the results are handled here, once per frame.
void App::handle_files() {
  AppState& s = m_state;
  if (s.asked.take<rq::OpenInputs>()) {
    if (m_loading.in_flight())
      s.say(Severity::Warning, "still reading the last files");
    else
      m_dialogs->ask_open_inputs(s);
  }
  if (s.asked.take<rq::ChooseKernelFile>()) {
    m_dialogs->ask_open_kernel(s);
  }
  m_dialogs->frame(s, m_report.file_dialog);
  if (auto path = m_dialogs->take_open_kernel()) s.ask(rq::OpenKernel{*path});
  if (s.asked.take<rq::SaveC>()) {
    if (!s.result || !s.result->store)
      s.say(Severity::Warning, "nothing to save yet: run a problem first");
    else if (m_saving.in_flight())
      s.say(Severity::Warning, "still saving C");
    else
      m_dialogs->ask_save_c(s);
  }
  if (auto opened = m_dialogs->take_open()) {
    const std::string a = opened->a, b = opened->b;
    const Capacity cap = s.capacity;
    m_loading.start([a, b, cap] {
      Loaded l;
      try {
        // The shapes from the headers first: a pair that does not multiply, or does not fit what the backend
        // can run, is refused before any data is read.
        const NpyHeader ha = read_npy_header(a), hb = read_npy_header(b);
        if (ha.cols != hb.rows)
          throw ValidationError("A (" + a + ") is " + std::to_string(ha.rows) + " x " +
                                std::to_string(ha.cols) + " and B (" + b + ") is " + std::to_string(hb.rows) +
                                " x " + std::to_string(hb.cols) + ": A's columns must equal B's rows");
        if (!fits(cap, ha.rows, hb.cols, ha.cols))
          throw ValidationError("M x N x K = " + std::to_string(ha.rows) + " x " + std::to_string(hb.cols) +
                                " x " + std::to_string(ha.cols) + " from " + a + " and " + b +
                                " is more than this backend runs (" + cap.what + ")");
        auto ma = std::make_shared<HostMatrix>(read_npy(a));
        auto mb = std::make_shared<HostMatrix>(read_npy(b));
        l.a = std::move(ma);
        l.b = std::move(mb);
        l.a_name = fs::path(a).filename().string();
        l.b_name = fs::path(b).filename().string();
      } catch (const std::exception& e) {
        l.error = e.what();
      }
      return l;
    });
  }
  if (auto to = m_dialogs->take_save()) {
    std::shared_ptr<const MatrixStore> store = s.result->store;
    const std::string p = to->path;
    // Replace a file only when the person said so (and then only a regular file); a file that appeared since
    // the dialog is never replaced.
    const Replace replace = to->replace ? Replace::RegularFile : Replace::Never;
    m_saving.start([store, p, replace]() -> std::string {
      try {
        write_npy(p, store->copy(MatrixId::C), replace);
        return "saved C to " + p;
      } catch (const std::exception& e) {
        return std::string("could not save C: ") + e.what();
      }
    });
  }
  using namespace std::chrono_literals;
  if (m_loading.ready()) {
    Loaded l = m_loading.take();
    if (!l.error.empty()) {
      s.say(Severity::Error, "refused: " + l.error);
    } else {
      s.file_a = l.a;
      s.file_b = l.b;
      s.file_a_name = l.a_name;
      s.file_b_name = l.b_name;
      ProblemSpec& spec = s.settings.spec;
      spec.input = InputKind::File;
      spec.m = l.a->rows;
      spec.k = l.a->cols;
      spec.n = l.b->cols;
      s.settings.square = spec.m == spec.n && spec.n == spec.k;
      s.say(Severity::Info, "A from " + l.a_name + " (" + std::to_string(spec.m) + " x " +
                                std::to_string(spec.k) + "), B from " + l.b_name + " (" +
                                std::to_string(spec.k) + " x " + std::to_string(spec.n) + ")");
      s.ask(rq::Run{});
    }
  }
  if (m_saving.ready()) {
    const std::string msg = m_saving.take();
    s.say(msg.rfind("saved", 0) == 0 ? Severity::Info : Severity::Error, msg);
  }
}

// [SECTION] Requests: a committed change with auto-run, the Run button or key, or Repeat.
RunRequest App::request_for(const ProblemSpec& spec) const {
  RunRequest req;
  req.spec = spec;
  if (spec.input == InputKind::File) {
    req.a = m_state.file_a;
    req.b = m_state.file_b;
  }
  req.keep_store = true;
  req.profile = true;
  req.memcheck_new_builds = m_state.settings.memcheck_new_builds;
  if (m_state.settings.changing_inputs) {  // the device's own policy, with changing inputs
    MeasurePolicy p = current_engine().backend->default_policy();
    p.changing_inputs = true;
    req.policy = p;
  }
  return req;
}

void App::maybe_submit() {
  AppState& s = m_state;
  ProblemSpec& spec = s.settings.spec;
  if (spec.input == InputKind::File && !(s.file_a && s.file_b)) {
    spec.input = InputKind::Random;
    keep_square(s);  // the shape is the person's again
  }
  const bool changed = !m_submitted_any || spec != m_last_submitted;
  // Repeat: the same problem again as soon as the last run is in; each run adds its launches to Timings.
  const bool asked = s.asked.take<rq::Run>().has_value();
  if (asked || (s.settings.auto_run && changed) || (s.repeat && !s.busy())) submit(request_for(spec));
}

void App::submit(RunRequest req) {
  m_last_submitted = req.spec;
  m_submitted_any = true;
  current_engine().queue->submit(std::move(req));
  ++m_state.runs_submitted;
  report_jobs();
}

void App::pump() {
  // The current engine's outcome is the window's result; another engine's (a run in flight when the person
  // chose another device) goes into that engine's session only.
  for (auto& e : m_engines)
    if (auto o = e->queue->poll()) {
      if (e.get() == &current_engine()) {
        take(std::move(*o));
      } else if (o->result) {
        add_to_session(*o->result, *e);
      } else {
        m_state.say(Severity::Warning, "on " + e->name + ": " + o->error);
      }
    }
  report_jobs();
  pump_measurements();
}

void App::take(RunOutcome o) {
  AppState& s = m_state;
  // What fits changes with the memory a run of another size takes or frees (not while Repeat re-runs one).
  const bool new_shape = !o.result || !s.result || o.result->spec.m != s.result->spec.m ||
                         o.result->spec.n != s.result->spec.n || o.result->spec.k != s.result->spec.k;
  if (o.result) {
    add_to_session(*o.result, current_engine());
    s.result = std::move(*o.result);
    ++s.result_serial;
    s.last_error.clear();
    if (!s.result->error.passed)
      s.say(Severity::Warning, "FAIL: " + std::to_string(s.result->error.bad_elements) +
                                   " elements over the tolerance (see the error map)");
  } else {
    s.last_error = o.error;
    s.last_error_is_input = o.bad_input;
    s.say(o.bad_input ? Severity::Warning : Severity::Error,
          (o.bad_input ? "refused: " : "error: ") + o.error);
    s.repeat = false;  // never re-submit a failing request in a loop
  }
  if (new_shape) {
    try {
      s.capacity = current_engine().backend->capacity();
    } catch (const std::exception&) {
    }
  }
}

// [SECTION] Sessions: every run and sweep point lands in the current session; saved sessions open beside it.
void App::add_to_session(const RunResult& r, Engine& e) {
  AppState& s = m_state;
  Session& cur = session_of(e);
  if (cur.records.size() >= size_t(kMaxSessionRecords)) {
    // A session file holds at most kMaxSessionRecords points: the oldest make room, and are saved beside the
    // session file at the next save (said once now, and where they went then).
    e.overflow.push_back(std::move(cur.records.front()));
    cur.records.erase(cur.records.begin());
    if (!e.capped)
      s.say(Severity::Warning, "the session of " + cur.label + " holds " +
                                   std::to_string(kMaxSessionRecords) +
                                   " points, the most a session file keeps: the oldest points make room "
                                   "(they are saved beside the session file when it is saved)");
    e.capped = true;
  }
  cur.add(r);
  ++s.sessions_serial;
  if (std::FILE* f = s.log.echo()) {  // tilescope --log: every point, as the session keeps it
    const MeasurementRecord& p = cur.records.back();
    std::fprintf(f, "point: %s tile %d, %lld x %lld x %lld, median %.6g ms (%zu in this session)\n",
                 p.spec.kernel.c_str(), p.spec.tile, (long long)p.spec.m, (long long)p.spec.n,
                 (long long)p.spec.k, p.stats.median, cur.records.size());
    std::fflush(f);
  }
}

namespace {
std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(c)) : '-';
  return out.substr(0, 40);
}
}  // namespace

void App::open_session_file(const std::string& path) {
  AppState& s = m_state;
  s.session_file = path;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec)) && !fs::exists(path, ec))
    return;  // first launch: nothing saved
  try {
    Session saved = load_session(path);
    if (saved.device.backend == s.device().backend && saved.device.name == s.device().name) {
      const size_t n = saved.records.size();
      // The device as the backend reads it now (driver, clocks, limits), as it was before the session was
      // read: the session's points keep their own device label; the session says where it is measured now.
      saved.device = s.device();
      saved.engine = m_engines.front()->id;
      session_of(*m_engines.front()) = std::move(saved);
      ++s.sessions_serial;
      s.say(Severity::Info,
            "session: " + std::to_string(n) + (n == 1 ? " point from " : " points from ") + path);
      return;
    }
    // Measured on another device: kept under a name of its own and shown beside this device's session.
    // A name taken exclusively, then the file renamed onto its empty reservation.
    const NewNames names(fs::path(path).parent_path(), "session-" + slug(saved.device.name), {"json"});
    const fs::path keep = names[0];
    fs::rename(path, keep);
    const std::string label = saved.label;
    s.sessions.open(std::move(saved));
    ++s.sessions_serial;
    s.say(Severity::Info, "the saved session was measured on " + label +
                              ": opened beside this device's, and kept as " + keep.string());
  } catch (const std::exception& e) {
    // Damaged or foreign: never overwritten; this window's points are saved beside it instead.
    s.session_refused = e.what();
    s.say(Severity::Error, std::string("session refused: ") + e.what() +
                               " (the file is left as it is; this window's points will be saved beside it)");
  }
}

std::string App::save_session_file() {
  AppState& s = m_state;
  if (s.session_file.empty()) return "";
  // The other engines' sessions, each to its own file beside the window's.
  std::string others;
  for (auto& e : m_engines)
    if (!e->first) {
      const std::string w = save_engine_session(*e);
      if (!w.empty()) others += (others.empty() ? "" : "\n") + w;
    }
  Engine& first = *m_engines.front();
  Session& cur = session_of(first);
  const fs::path file = s.session_file;
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::string warnings = others;
  auto warn = [&](const std::string& m) {
    s.say(Severity::Warning, m);
    warnings += (warnings.empty() ? "" : "\n") + m;
  };
  auto points = [](size_t n) { return std::to_string(n) + (n == 1 ? " point" : " points"); };
  std::error_code ec;
  const bool present = fs::exists(fs::symlink_status(file, ec));
  if (!s.session_refused.empty() || (cur.records.empty() && !present)) {
    // The refused file stays untouched: this window's points get a name of their own next to it, taken
    // exclusively (two windows closing in the same second get -2, -3...).
    if (!cur.records.empty()) {
      const fs::path beside = save_session_beside(dir, "session", cur);
      s.session_file = beside.string();
      s.session_refused.clear();
      s.say(Severity::Info, "session saved: " + points(cur.records.size()) + " to " + s.session_file + " (" +
                                file.string() + " was refused and is left as it is)");
    }
  } else {
    try {
      const SessionSave r = save_session_merged(file, cur);
      if (r.merged) {
        ++s.sessions_serial;
        s.say(Severity::Info, points(r.merged) + " saved by another window " +
                                  (r.merged == 1 ? "was" : "were") + " merged into this session");
      }
      first.overflow.insert(first.overflow.end(), r.left_out.begin(), r.left_out.end());
      if (!r.left_out.empty()) ++s.sessions_serial;
      s.say(Severity::Info, "session saved: " + points(r.points) + " to " + r.written.string() +
                                (r.written != file ? " (the file " + file.string() + " links to)" : ""));
    } catch (const SessionError& e) {
      // Not writable there (a link to something that is not a regular file, a file another window damaged):
      // the points are kept beside it, and the window says where.
      const fs::path beside = save_session_beside(dir, "session", cur);
      warn(std::string("the session could not be saved: ") + e.what() + "; its " +
           points(cur.records.size()) + " were saved to " + beside.string() + " instead");
      s.session_file = beside.string();
    }
  }
  if (!first.overflow.empty()) {
    Session aside;
    aside.label = cur.label + " (oldest points)";
    aside.created = cur.created;
    aside.program_version = cur.program_version;
    aside.commit = cur.commit;
    aside.device = cur.device;
    aside.dram_gbs = cur.dram_gbs;
    aside.records = std::move(first.overflow);
    first.overflow.clear();
    const size_t n = aside.records.size();
    try {
      const fs::path beside = save_session_beside(dir, "session-oldest", aside);
      warn("the session file keeps at most " + std::to_string(kMaxSessionRecords) + " points and " +
           std::to_string(kMaxSessionBytes >> 20) + " MiB: its " + points(n) + " oldest were saved to " +
           beside.string() + " (File > Open session to overlay shows them)");
    } catch (...) {
      first.overflow = std::move(aside.records);  // kept for the next save
      throw;
    }
  }
  return warnings;
}

void App::handle_sessions() {
  AppState& s = m_state;
  if (s.asked.take<rq::SaveSession>()) {
    if (s.session_file.empty())
      s.say(Severity::Warning, "this window keeps no session file");
    else
      try {
        (void)save_session_file();
      } catch (const std::exception& e) {
        s.say(Severity::Error, std::string("could not save the session: ") + e.what());
      }
  }
  if (s.asked.take<rq::OpenSession>()) {
    if (m_opening.in_flight())
      s.say(Severity::Warning, "still reading the last session");
    else
      m_dialogs->ask_open_session(s);
  }
  if (auto path = m_dialogs->take_open_session()) {
    const std::string p = *path;
    m_opening.start([p] {
      OpenedSession o;
      o.path = p;
      try {
        o.session = load_session(p);
      } catch (const std::exception& e) {
        o.error = e.what();
      }
      return o;
    });
  }
  using namespace std::chrono_literals;
  if (m_opening.ready()) {
    OpenedSession o = m_opening.take();
    if (!o.session) {
      s.say(Severity::Error, "session refused: " + o.error);
    } else {
      try {
        const size_t n = o.session->records.size();
        const size_t i = s.sessions.open(std::move(*o.session));
        ++s.sessions_serial;
        s.say(Severity::Info, "opened " + s.sessions.all()[i].label + " (" + std::to_string(n) +
                                  " points) beside the current session: overlaid on every plot");
      } catch (const ValidationError& e) {
        s.say(Severity::Warning, std::string("session not opened: ") + e.what());
      }
    }
  }
  if (const auto close = s.asked.take<rq::CloseOverlay>()) {
    if (close->index < s.sessions.size() && s.sessions.all()[close->index].engine != 0) {
      s.say(Severity::Warning,
            "that session is a connected engine's: close the engine instead (File > Connect "
            "to engine...)");
    } else {
      s.sessions.close(close->index);
      ++s.sessions_serial;
    }
  }
}

// [SECTION] Sweeps: the Sweep panel's plan runs on the SweepRunner's thread; its points land in the session.
// The policy of the window's sweeps and tile searches: the device's bench policy (nvbench-style on a GPU, the
// CPU's own on the CPU backend) with the Sweep panel's seconds per point, or the quick one. Every sample goes
// into the session: 2000 per point keep a long sweep's file small (a fast kernel's 0.5 s would otherwise be
// 50000 samples), and pin the median to well under its IQR.
MeasurePolicy App::sweep_policy(bool quick, const Backend& backend) {
  MeasurePolicy policy = quick ? backend.default_policy() : backend.bench_policy();
  policy.changing_inputs = m_state.settings.changing_inputs;
  if (quick) return policy;
  policy.min_seconds = m_state.sweep_min_s;
  policy.max_seconds = m_state.sweep_max_s;
  policy.max_samples = std::min(policy.max_samples, int(AppState::kWindowSweepMaxSamples));
  validate_policy(policy);
  return policy;
}

// Measures the points on the sweep thread; its progress shows in the Sweep panel and the status bar.
void App::start_points(std::vector<ProblemSpec> points, const MeasurePolicy& policy) {
  for (uint64_t id : m_sweeping)
    if (Engine* e = engine(id); e && e->sweep->running())
      throw ValidationError("a sweep is already running on " + e->name + "; cancel it first");
  RunRequest base;
  base.memcheck_new_builds = m_state.settings.memcheck_new_builds;
  Engine& e = current_engine();
  e.sweep->start(std::move(points), policy, base);
  m_sweeping = {e.id};
  m_sweep_into = 0;
  m_sweep_state = SweepProgress::State::Running;
  m_state.sweep_progress = e.sweep->progress();
  report_jobs();
}

// The plan on several engines at once: each engine measures every point under its own device's policy
// (EveryDevice, into its own session), or the engines whose device is the current one's take the points
// one at a time from one shared plan (SplitIdentical, into the current engine's session).
void App::start_everywhere(std::vector<ProblemSpec> points, SweepWhere where, bool quick, std::string* what) {
  for (uint64_t id : m_sweeping)
    if (Engine* e = engine(id); e && e->sweep->running())
      throw ValidationError("a sweep is already running on " + e->name + "; cancel it first");
  const AppState::EngineRow* cur = m_state.current_engine();
  std::vector<Engine*> on;
  for (size_t i = 0; i < m_engines.size(); ++i) {
    Engine& e = *m_engines[i];
    if (!e.backend->link().lost.empty()) continue;  // an engine whose link is gone measures nothing
    if (where == SweepWhere::SplitIdentical && (!cur || m_state.engines[i].device_id != cur->device_id))
      continue;
    on.push_back(&e);
  }
  if (on.empty()) throw ValidationError("no connected engine can take the sweep");
  if (where == SweepWhere::SplitIdentical && on.size() < 2)
    throw ValidationError("no other connected engine has this device (" + m_state.device_name() +
                          "): nothing to split the sweep with");
  RunRequest base;
  base.memcheck_new_builds = m_state.settings.memcheck_new_builds;
  // Every engine checks the plan against its own device before any starts.
  std::vector<MeasurePolicy> policies;
  for (Engine* e : on) policies.push_back(sweep_policy(quick, *e->backend));
  for (size_t i = 0; i < on.size(); ++i) {
    try {
      validate_sweep(*on[i]->backend, points, policies[i]);
    } catch (const ValidationError& v) {
      throw ValidationError("on " + on[i]->name + ": " + v.what());
    }
  }
  m_sweeping.clear();
  if (where == SweepWhere::SplitIdentical) {
    auto plan = std::make_shared<SharedPlan>(points, int(on.size()));
    for (size_t i = 0; i < on.size(); ++i) {
      on[i]->sweep->start(plan, policies[i], base);
      m_sweeping.push_back(on[i]->id);
    }
    m_sweep_into = current_engine().id;
    *what = "split across " + std::to_string(on.size()) + " identical devices";
  } else {
    for (size_t i = 0; i < on.size(); ++i) {
      on[i]->sweep->start(points, policies[i], base);
      m_sweeping.push_back(on[i]->id);
    }
    m_sweep_into = 0;
    *what = "on every connected device (" + std::to_string(on.size()) + ")";
  }
  m_sweep_state = SweepProgress::State::Running;
  m_state.sweep_progress = sweep_progress();
  report_jobs();
}

SweepProgress App::sweep_progress() const {
  std::vector<SweepProgress> all;
  for (uint64_t id : m_sweeping)
    for (const auto& e : m_engines)
      if (e->id == id) all.push_back(e->sweep->progress());
  return combine_progress(all);
}

void App::handle_sweep() {
  AppState& s = m_state;
  if (s.asked.take<rq::CancelSweep>())
    for (uint64_t id : m_sweeping)
      if (Engine* e = engine(id)) e->sweep->cancel();
  if (const auto start = s.asked.take<rq::StartSweep>()) {
    const SweepSpec& sp = start->plan;
    try {
      std::string policy_name, where;
      if (start->where == SweepWhere::ThisDevice || m_engines.size() == 1) {
        const MeasurePolicy policy = sweep_policy(s.sweep_quick, *current_engine().backend);
        start_points(expand_sweep(sp), policy);
        policy_name = policy.name;
      } else {
        start_everywhere(expand_sweep(sp), start->where, s.sweep_quick, &where);
        policy_name = s.sweep_quick ? "each device's quick" : "each device's bench";
      }
      s.sweep_progress = sweep_progress();
      s.sweep = sp;
      // The plots follow the sweep: its axis through the current configuration (else the first one swept), at
      // the swept size nearest the current N.
      const ProblemSpec& cur = s.settings.spec;
      KernelTile c{cur.kernel, cur.tile};
      if (std::find(sp.configs.begin(), sp.configs.end(), c) == sp.configs.end()) c = sp.configs.front();
      const std::vector<int64_t> sizes = sp.all_sizes();
      int64_t at = sizes.front();
      for (int64_t v : sizes)
        if (std::llabs(v - cur.n) < std::llabs(at - cur.n)) at = v;
      s.plot_at = sp.problem(at, c);
      m_spec_at_sweep = cur;
      s.say(Severity::Info, "sweep started: " + sp.describe() + (where.empty() ? "" : " " + where) + " (" +
                                policy_name + " policy)");
    } catch (const ValidationError& e) {
      s.sweep_progress = SweepProgress{};
      s.sweep_progress.state = SweepProgress::State::Refused;
      s.sweep_progress.error = e.what();
      s.say(Severity::Warning, std::string("sweep refused: ") + e.what());
    }
  }
  if (auto tiles = s.asked.take<rq::TimeTiles>()) {
    std::vector<ProblemSpec> points = std::move(tiles->points);
    try {
      if (points.empty()) throw ValidationError("every tile is timed at this shape already");
      const MeasurePolicy policy = sweep_policy(false, *current_engine().backend);
      const size_t n = points.size();
      const std::string what = points.front().kernel;
      start_points(std::move(points), policy);
      s.say(Severity::Info, "timing " + std::to_string(n) + " tile" + (n == 1 ? "" : "s") + " of " + what +
                                " at this shape (" + policy.name + " policy)");
    } catch (const ValidationError& e) {
      s.say(Severity::Warning, std::string("tile search refused: ") + e.what());
    }
  }
  if (auto rungs = s.asked.take<rq::TimeRungs>()) {
    try {
      if (rungs->points.empty()) throw ValidationError("every rung is measured at this shape already");
      Backend& backend = *current_engine().backend;
      const MeasurePolicy policy = sweep_policy(false, backend);
      // A sweep is refused whole for one point the engine cannot run: such a rung (a workspace that does not
      // fit, a grid too large) is named and left out, the others are measured.
      std::vector<ProblemSpec> points;
      for (const ProblemSpec& p : rungs->points) {
        RunRequest one;
        one.spec = p;
        one.policy = policy;
        try {
          backend.validate(one);
          points.push_back(p);
        } catch (const ValidationError& e) {
          s.say(Severity::Warning, rung_label({p.kernel, p.tile}) + " cannot run at this shape: " + e.what());
        }
      }
      if (points.empty()) throw ValidationError("none of the missing rungs can run at this shape here");
      const size_t n = points.size();
      start_points(std::move(points), policy);
      s.say(Severity::Info, "measuring " + std::to_string(n) + " configuration" + (n == 1 ? "" : "s") +
                                " of the ladder at this shape (" + policy.name + " policy)");
    } catch (const ValidationError& e) {
      s.say(Severity::Warning, std::string("rung search refused: ") + e.what());
    }
  }
  // Once the person changes the problem, the plots follow the Controls again.
  if (s.plot_at && s.settings.spec != m_spec_at_sweep) s.plot_at.reset();
}

void App::pump_measurements() {
  AppState& s = m_state;
  // Where the sweep stands first, then its finished points: a runner reports done only after its last point
  // is in take_finished(), so a progress that says done comes with every point in the session.
  const SweepProgress p = sweep_progress();
  Engine* into = engine(m_sweep_into);
  for (uint64_t id : m_sweeping) {
    Engine* e = engine(id);
    if (!e) continue;
    for (SweepPointResult& p : e->sweep->take_finished()) {
      if (p.result)
        add_to_session(*p.result, into ? *into : *e);
      else if (!p.error.empty())
        s.say(Severity::Warning, "sweep point " + KernelTile{p.spec.kernel, p.spec.tile}.label() + " at " +
                                     std::to_string(p.spec.m) + " x " + std::to_string(p.spec.n) + " x " +
                                     std::to_string(p.spec.k) +
                                     (m_sweeping.size() > 1 ? " on " + e->name : "") + ": " + p.error);
    }
  }
  if (!(p.state == SweepProgress::State::Idle && s.sweep_progress.state == SweepProgress::State::Refused))
    s.sweep_progress = p;
  report_jobs();
  if (m_sweep_state == SweepProgress::State::Running && !p.running()) {
    char t[32];
    std::snprintf(t, sizeof t, "%.1f s", p.elapsed_s);
    if (p.state == SweepProgress::State::Done)
      s.say(Severity::Info, "sweep done: " + std::to_string(p.done) + " points in " + t);
    else if (p.state == SweepProgress::State::Cancelled)
      s.say(Severity::Info, "sweep cancelled after " + std::string(t) + ": " +
                                std::to_string(p.done - p.failed) + " finished points kept");
    else if (p.state == SweepProgress::State::Refused)
      s.say(Severity::Warning, "sweep refused: " + p.error);
  }
  m_sweep_state = p.state;

  // The roofline's DRAM bandwidth, measured off the UI thread (it waits for a measurement in flight).
  using namespace std::chrono_literals;
  if (s.asked.take<rq::MeasureBandwidth>()) {
    if (!m_bandwidth.in_flight()) {
      Backend* b = current_engine().backend.get();
      const CancelToken token = m_bandwidth_cancel;
      m_bandwidth.start([b, token] { return b->measure_bandwidth(token); });
    }
  }
  if (m_bandwidth.ready()) {
    try {
      const BandwidthResult r = m_bandwidth.take();
      s.bandwidth = r;
      s.sessions.current().dram_gbs = r.gbs;  // (a bandwidth measured before another device was chosen is
                                              // dropped when it is chosen: choose_engine)
      ++s.sessions_serial;
      s.say(Severity::Info,
            "DRAM bandwidth: " + std::to_string(int(std::lround(r.gbs))) + " GB/s (" + r.method + ")");
    } catch (const std::exception& e) {
      s.say(Severity::Error, std::string("could not measure the bandwidth: ") + e.what());
    }
  }

  pump_sass();

  // A remote engine again, after its link was lost (off the UI thread: ssh may take seconds). The kernels and
  // the device of the new engine are read through the backend as before; the results, sessions and panels
  // stay as they were.
  if (s.asked.take<rq::Reconnect>() && !m_reconnect.in_flight()) {
    Backend* b = current_engine().backend.get();
    s.say(Severity::Info, "connecting to the engine again: " + b->link().command);
    m_reconnect.start([b] {
      b->reconnect();
      return true;
    });
  }
  if (m_reconnect.ready()) {
    try {
      m_reconnect.take();
      s.capacity = current_engine().backend->capacity();
      s.say(Severity::Info, "connected to the engine on " + current_engine().backend->device_name());
    } catch (const std::exception& e) {
      s.say(Severity::Error, std::string("could not connect to the engine: ") + e.what());
    }
  }

  // A figure: one plot rendered offscreen and written with its data (between frames, on this GL context).
  if (const auto figure = s.asked.take<rq::ExportFigure>()) {
    const FigureRequest& r = figure->figure;
    try {
      if (!s.pictures_trusted())
        throw std::runtime_error("not written: OpenGL failed its self-check, so the figure would be wrong (" +
                                 s.gl.verdict + ")");
      const FigureJob job = figure_job(s, r);
      const fs::path dir =
          s.settings.export_dir.empty() ? default_export_dir() : fs::path(s.settings.export_dir);
      const FigureWritten w = write_figure(job, dir);
      s.last_figure = w.paths.png.string();
      s.say(Severity::Info,
            "figure: " + w.paths.png.string() + " (and its .csv and .json" +
                (w.paths.webp.empty() ? "" : ", and the animation " + w.paths.webp.filename().string()) +
                ")");
    } catch (const ValidationError& e) {
      s.say(Severity::Warning, std::string("no figure: ") + e.what());
    } catch (const std::exception& e) {
      s.say(Severity::Error, std::string("figure export failed: ") + e.what());
    }
  }
  // The Tile schedule's traced launch as a trace event JSON (Perfetto, chrome://tracing), under a new name.
  if (const auto trace = s.asked.take<rq::ExportScheduleTrace>()) {
    try {
      if (!trace->trace) throw std::runtime_error("no traced launch");
      const fs::path dir =
          s.settings.export_dir.empty() ? default_export_dir() : fs::path(s.settings.export_dir);
      const fs::path written = write_schedule_trace(dir, *trace->trace, trace->context);
      s.say(Severity::Info,
            "Perfetto trace: " + written.string() + " (open it in ui.perfetto.dev or chrome://tracing)");
    } catch (const std::exception& e) {
      s.say(Severity::Error, std::string("Perfetto trace not written: ") + e.what());
    }
  }
}

void App::pump_sass() {
  AppState& s = m_state;
  // The SASS panel's listings, off the UI thread (a person's kernel is built and disassembled; a remote
  // engine answers over its link). A request that came while one is in flight waits for it.
  if (!m_sass.in_flight()) {
    if (auto want = s.asked.take<rq::FetchSass>()) {
      std::shared_ptr<Backend> b = current_engine().backend;
      s.sass.asked = want->which;
      s.sass.error.clear();
      m_sass.start([b, which = want->which] {
        std::vector<SassListing> out;
        for (const auto& [kernel, tile] : which) out.push_back(b->sass_listing(kernel, tile, 0));
        return out;
      });
      report_jobs();  // fetching_sass() from now on, in this frame already
    }
  }
  if (m_sass.ready()) {
    try {
      s.sass.listings = m_sass.take();
    } catch (const std::exception& e) {
      s.sass.listings.clear();
      s.sass.error = e.what();
    }
    ++s.sass.serial;
    report_jobs();
  }
}

}  // namespace ts::ui

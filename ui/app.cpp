#include "app.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <imgui.h>

#include "file_dialogs.hpp"
#include "heatmap_set.hpp"
#include "menu_bar.hpp"
#include "npy.hpp"
#include "shortcuts.hpp"
#include "status_bar.hpp"
#include "theme.hpp"
#include "user_kernel_controller.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

App::App(std::shared_ptr<Backend> backend, const std::string& note, Settings settings, std::string renderer)
    : m_queue(backend), m_panels(register_panels()) {
  m_state.settings = std::move(settings);
  m_state.kernels = backend->kernels();
  // A kernel of a file that is not open now (the settings remember "yours: <name>"): back to the classic one.
  if (!find_kernel(m_state.kernels, m_state.settings.spec.kernel)) {
    const std::string was = m_state.settings.spec.kernel;
    m_state.settings.spec.kernel = "tiled";
    m_state.settings.spec.tile = 16;
    if (was.rfind("yours:", 0) == 0)
      m_state.say(Severity::Info,
                  was + " is not open in this session: showing tiled (File > Open kernel opens yours)");
  }
  m_state.backend_kind = backend->kind();
  m_state.device_name = backend->device_name();
  m_state.backend_version = backend->version_info();
  m_state.backend_note = note;
  m_state.gl_renderer = std::move(renderer);
  try {
    m_state.capacity = backend->capacity();
  } catch (const std::exception& e) {
    m_state.say(Severity::Error, std::string("cannot ask the device how much it can run: ") + e.what());
  }
  // The GL context is current: can the engine's GPU write into it?
  m_state.heatmaps = std::make_shared<gfx::HeatmapSet>(backend->cuda_device());
  m_dialogs = std::make_unique<FileDialogs>();
  m_user = std::make_unique<UserKernelController>(*backend);
}

App::~App() = default;

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
  if (shortcut_pressed(Action::Run)) s.run_requested = true;
  if (shortcut_pressed(Action::Repeat)) s.repeat = !s.repeat;
  if (shortcut_pressed(Action::OpenInputs)) s.open_inputs_requested = true;
  // Ctrl+S in the kernel editor saves the kernel, not C.
  if (!s.user.editor_focused && shortcut_pressed(Action::SaveC)) s.save_c_requested = true;
  if (shortcut_pressed(Action::Screenshot)) s.screenshot_requested = true;
  if (shortcut_pressed(Action::ResetLayout)) s.reset_layout_requested = true;
  if (shortcut_pressed(Action::Shortcuts)) s.show_shortcuts = true;
  if (shortcut_pressed(Action::Quit)) s.quit_requested = true;
  ViewSettings& v = s.settings.view;
  if (shortcut_pressed(Action::FontBigger)) v.font_px = std::min(ViewSettings::kMaxFontPx, v.font_px + 1);
  if (shortcut_pressed(Action::FontSmaller)) v.font_px = std::max(ViewSettings::kMinFontPx, v.font_px - 1);
}

void App::frame() {
  AppState& s = m_state;
  s.now = ImGui::GetTime();
  handle_shortcuts();
  draw_menu_bar(s, m_panels);
  draw_status_bar(s);
  if (s.reset_layout_requested) {
    s.reset_layout_requested = false;
    m_layout.reset();
    s.say(Severity::Info, "layout reset to the default arrangement for this window size");
  }
  m_layout.dock_space(s, m_panels);
  for (auto& p : m_panels) p->draw(s);
  m_layout.keep_on_screen(m_panels);
  draw_help_windows(s);
  handle_files();
  const bool had_kernel = !s.user.id.empty();
  m_user->frame(s);
  // A kernel opened: bring its panel to the front (once).
  if (!had_kernel && !s.user.id.empty()) ImGui::SetWindowFocus("Your kernel");
  maybe_submit();
}

// [SECTION] Files: A and B from .npy (File > Open), C to .npy (File > Save). The reading and writing run in
// the background; the dialogs and the results are handled here, once per frame.
void App::handle_files() {
  AppState& s = m_state;
  if (s.open_inputs_requested) {
    s.open_inputs_requested = false;
    if (m_loading.valid())
      s.say(Severity::Warning, "still reading the last files");
    else
      m_dialogs->ask_open_inputs();
  }
  if (s.user.open_dialog) {
    s.user.open_dialog = false;
    m_dialogs->ask_open_kernel();
  }
  if (auto path = m_dialogs->draw_open_kernel()) s.user.open_path = *path;
  if (s.save_c_requested) {
    s.save_c_requested = false;
    if (!s.result || !s.result->store)
      s.say(Severity::Warning, "nothing to save yet: run a problem first");
    else if (m_saving.valid())
      s.say(Severity::Warning, "still saving C");
    else
      m_dialogs->ask_save_c();
  }
  if (auto opened = m_dialogs->draw_open()) {
    const std::string a = opened->a, b = opened->b;
    const Capacity cap = s.capacity;
    m_loading = std::async(std::launch::async, [a, b, cap] {
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
  if (auto to = m_dialogs->draw_save()) {
    std::shared_ptr<const MatrixStore> store = s.result->store;
    const std::string p = to->path;
    // Replace a file only when the person said so (and then only a regular file); a file that appeared since
    // the dialog is never replaced.
    const Replace replace = to->replace ? Replace::RegularFile : Replace::Never;
    m_saving = std::async(std::launch::async, [store, p, replace]() -> std::string {
      try {
        write_npy(p, store->copy(MatrixId::C), replace);
        return "saved C to " + p;
      } catch (const std::exception& e) {
        return std::string("could not save C: ") + e.what();
      }
    });
  }
  using namespace std::chrono_literals;
  if (m_loading.valid() && m_loading.wait_for(0s) == std::future_status::ready) {
    Loaded l = m_loading.get();
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
      s.run_requested = true;
    }
  }
  if (m_saving.valid() && m_saving.wait_for(0s) == std::future_status::ready) {
    const std::string msg = m_saving.get();
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
  return req;
}

void App::maybe_submit() {
  AppState& s = m_state;
  ProblemSpec& spec = s.settings.spec;
  if (spec.input == InputKind::File && !(s.file_a && s.file_b)) spec.input = InputKind::Random;
  // A kernel told one size only runs on square shapes.
  if (const KernelInfo* k = current_kernel(s); k && k->square_only && spec.input != InputKind::File)
    s.settings.square = true;
  if (s.settings.square && spec.input != InputKind::File) spec.m = spec.k = spec.n;
  const bool changed = !m_submitted_any || spec != m_last_submitted;
  // Repeat: the same problem again as soon as the last run is in; each run adds its launches to Timings.
  if (s.run_requested || (s.settings.auto_run && changed) || (s.repeat && !s.busy)) submit(request_for(spec));
  s.run_requested = false;
}

void App::submit(RunRequest req) {
  m_last_submitted = req.spec;
  m_submitted_any = true;
  m_queue.submit(std::move(req));
  ++m_state.runs_submitted;
  m_state.busy = true;
}

void App::pump() {
  if (auto o = m_queue.poll()) take(std::move(*o));
  m_state.busy = m_queue.busy();
}

void App::take(RunOutcome o) {
  AppState& s = m_state;
  // What fits changes with the memory a run of another size takes or frees (not while Repeat re-runs one).
  const bool new_shape = !o.result || !s.result || o.result->spec.m != s.result->spec.m ||
                         o.result->spec.n != s.result->spec.n || o.result->spec.k != s.result->spec.k;
  if (o.result) {
    const KernelInfo* k = find_kernel(s.kernels, o.result->spec.kernel);
    s.history.add(*o.result, k && k->tf32);
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
      s.capacity = m_queue.backend().capacity();
    } catch (const std::exception&) {
    }
  }
}

}  // namespace ts::ui

#include "ui/user_kernel/user_kernel_controller.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <system_error>

#include <imgui.h>

#include "core/engine/backend.hpp"
#include "core/io/files.hpp"
#include "core/user_kernel/kernel_workshop.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

namespace {

template <class T>
bool ready(const std::future<T>& f) {
  return f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// The file's size and time of change (nanoseconds); false when it is not there.
bool stat_file(const std::string& path, int64_t* size, int64_t* mtime) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  const auto sz = fs::file_size(path, ec);
  if (ec) return false;
  const auto t = fs::last_write_time(path, ec);
  if (ec) return false;
  *size = int64_t(sz);
  *mtime = int64_t(t.time_since_epoch().count());
  return true;
}

std::string first_line(const std::string& s) {
  const size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

UserKernelController::UserKernelController(Backend& backend, JobRunner& jobs)
    : m_backend(backend),
      m_workshop(backend.workshop()),
      m_reading(jobs, kJobReadKernel),
      m_building(jobs, kJobBuildKernel),
      m_tiles(jobs, kJobBuildTiles),
      m_sanitizing(jobs, kJobSanitize) {
  m_gpu = backend.kind() == "cuda";
  if (m_gpu) {
    m_device_model = gpu_model_of(backend.device_info());
    m_model = m_device_model;
  } else {
    m_model = find_gpu("h100");  // without a GPU: the resources and occupancy for a catalog GPU
  }
}

// The futures' destructors wait for background work; it holds only shared pointers and copies. A compile in
// flight is stopped first (its compiler process is killed), so closing never waits for NVRTC.
UserKernelController::~UserKernelController() {
  m_stop.cancel();
  m_build_cancel.cancel();
}

void UserKernelController::start_read(AppState& s, const std::string& path, bool reload) {
  if (!m_workshop) {
    s.say(Severity::Error,
          "refused: " + path + ": the " + m_backend.kind() + " backend takes no kernels of yours");
    return;
  }
  if (m_reading.in_flight()) {  // one read at a time; the newest request is read when it is done
    m_queued_path = path;
    m_queued_reload = reload;
    return;
  }
  m_reading.start([path, reload] {
    Read r;
    r.path = path;
    r.reload = reload;
    try {
      stat_file(path, &r.size, &r.mtime);
      r.source = std::make_shared<KernelSource>(read_kernel_source(path));
      if (r.source->from_python || r.source->normalised) {  // the editor keeps the file's own bytes
        const InputFile f(path);
        r.raw.assign(size_t(f.size()), '\0');
        if (!f.read_at(0, r.raw.data(), r.raw.size()))
          throw ValidationError(path + " changed while it was read");
      } else {
        r.raw = r.source->text;
      }
      const SourceScan scan = scan_cuda_source(r.source->text);
      for (const auto& k : scan.kernels) r.kernels.push_back(k.name);
      if (r.kernels.empty()) choose_kernel(scan, "", path);  // throws: no __global__ function
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    return r;
  });
}

void UserKernelController::take_read(AppState& s, Read r) {
  UserKernelUi& u = s.user;
  if (!r.error.empty()) {
    if (r.reload)
      s.say(Severity::Warning, r.path + " changed but cannot be used: " + r.error +
                                   (m_good ? "; the last good build stays in use" : ""));
    else
      s.say(Severity::Error, "refused: " + r.error);
    if (r.reload) {  // do not try the same broken file again and again
      m_size = r.size;
      m_mtime = r.mtime;
    }
    return;
  }
  const bool same_file = u.active && u.path == r.path;
  if (!same_file) {
    // A new file: a fresh state (requests already taken), the previous kernel stays registered.
    const std::string gpu_choice = u.gpu_choice;
    u = UserKernelUi();
    u.gpu_choice = gpu_choice;
    u.active = true;
    u.path = r.path;
  }
  u.label = fs::path(r.path).filename().string();
  u.from_python = r.source->from_python;
  u.first_line = r.source->first_line;
  u.kernels = r.kernels;
  if (u.kernel.empty() || std::find(r.kernels.begin(), r.kernels.end(), u.kernel) == r.kernels.end()) {
    if (!u.kernel.empty())
      s.say(Severity::Warning,
            "kernel " + u.kernel + " is no longer in " + u.label + "; showing " + r.kernels[0]);
    u.kernel = r.kernels[0];
  }
  if (!same_file && r.kernels.size() > 1) {
    std::string names;
    for (const auto& n : r.kernels) names += (names.empty() ? "" : ", ") + n;
    s.say(Severity::Info, u.label + " has " + std::to_string(r.kernels.size()) + " __global__ functions (" +
                              names + "); showing " + u.kernel + ": choose another in Your kernel");
  }
  m_source = r.source;
  m_size = r.size;
  m_mtime = r.mtime;
  u.file_missing = false;
  u.watch = "watching " + u.label + " for changes (checked every second)";
  u.editable = r.raw.size() <= kMaxEditorBytes;
  if (!r.reload || !u.editor_dirty) {
    u.editor_text = u.editable ? r.raw : "";
    ++u.editor_serial;
    u.editor_dirty = false;
  } else {
    s.say(Severity::Warning, u.label +
                                 " changed on disk while the editor has unsaved edits: the build follows the "
                                 "file; Revert loads it into the editor");
  }
  if (!same_file) {
    s.say(Severity::Info, "opened " + r.path);
    std::error_code ec;
    const fs::path abs = fs::absolute(r.path, ec);
    s.settings.kernel_file = ec ? r.path : abs.lexically_normal().string();  // reopened at the next launch
  }
  // A save keeps the person's corrections; without any, the new file is understood afresh (a new tile value
  // in the file becomes the default, a renamed parameter gets its role again).
  understand(s, same_file && u.form_applied ? &u.form : nullptr);
}

void UserKernelController::understand(AppState& s, const UserKernelSpec* spec) {
  UserKernelUi& u = s.user;
  if (!m_source) return;
  const SourceScan scan = scan_cuda_source(m_source->text);
  const KernelDecl* decl = nullptr;
  for (const auto& k : scan.kernels)
    if (k.name == u.kernel) decl = &k;
  if (!decl) return;
  u.params = decl->params;
  std::set<std::string> names;
  for (const auto& sym : scan.symbols) names.insert(sym.name);
  for (const auto& n : scan.identifiers_used) names.insert(n);
  if (!decl->template_params.empty()) names.insert(understand_kernel(scan, *decl).spec.tile_symbol);
  names.erase("");
  u.symbols.assign(names.begin(), names.end());
  u.notes = scan.notes;
  try {
    auto k = m_workshop->understand(*m_source, u.kernel, spec);
    // Its headers are watched with the file: an edited header builds the kernel again.
    m_header_stamps.clear();
    for (const IncludedHeader& h : k->headers()) {
      HeaderStamp st{h.path, -1, 0};
      stat_file(h.path, &st.size, &st.mtime);
      m_header_stamps.push_back(st);
    }
    u.watch = "watching " + u.label +
              (m_header_stamps.empty()
                   ? std::string()
                   : " and the " + std::to_string(m_header_stamps.size()) +
                         (m_header_stamps.size() == 1 ? " header" : " headers") + " it includes") +
              " for changes (checked every second)";
    u.form = k->spec();
    u.square_only = k->square_only();
    u.problem.clear();
    for (const auto& n : k->notes()) u.notes.insert(u.notes.begin(), n);
    start_build(s, std::move(k));
  } catch (const ValidationError& e) {
    const KernelUnderstanding und = understand_kernel(scan, *decl);
    u.form = spec && spec->params.size() == decl->params.size() ? *spec : und.spec;
    u.square_only = is_square_only(u.form);
    u.problem = e.what();
    u.build = UserKernelUi::Build::None;
    s.say(Severity::Warning, "yours: " + u.kernel + " cannot run as it is: " + first_line(e.what()) +
                                 " (correct it in Your kernel)");
  }
}

int UserKernelController::tile_for(const AppState& s, const UserKernel& k) const {
  const auto& tiles = k.spec().tiles;
  if (s.settings.spec.kernel == k.id() &&
      std::find(tiles.begin(), tiles.end(), s.settings.spec.tile) != tiles.end())
    return s.settings.spec.tile;
  return k.spec().default_tile;
}

void UserKernelController::start_build(AppState& s, std::shared_ptr<const UserKernel> k) {
  UserKernelUi& u = s.user;
  m_candidate = k;
  u.build = UserKernelUi::Build::Compiling;
  u.build_message = "compiling...";
  const int tile = tile_for(s, *k);
  const int arch = m_gpu ? m_device_model.sm : m_model.sm;
  u.arch = arch;
  const ProblemSpec& p = s.settings.spec;
  const ExprVars sizes{p.m, p.n, p.k, tile};
  // The newest build is the one that counts: the one in flight is stopped (its compiler killed), not waited
  // for.
  m_build_cancel.cancel();
  m_building.discard();
  m_build_cancel = CancelToken();
  m_building.start([w = m_workshop, k, tile, arch, sizes, cancel = m_build_cancel, stop = m_stop] {
    Built b;
    b.kernel = k;
    b.tile = tile;
    try {
      if (stop.cancelled()) throw Cancelled();
      b.module = w->build(*k, tile, arch, sizes, &cancel);
    } catch (const CompileError& e) {
      b.error = e.what();
      b.module = e.module();
      b.compile_error = true;
    } catch (const std::exception& e) {
      b.error = e.what();
    }
    return b;
  });
}

void UserKernelController::take_build(AppState& s, Built b) {
  UserKernelUi& u = s.user;
  if (b.kernel != m_candidate) return;  // an older build: a newer one is on its way
  if (b.module) {
    u.log = b.module->log;
    u.ptx = b.module->ptx;
    u.errors = b.module->diagnostics;
    for (auto& d : u.errors) d.line += u.first_line - 1;
  } else {
    u.log = b.error;
    u.ptx.clear();
    u.errors.clear();
  }
  if (!b.error.empty()) {
    u.build = UserKernelUi::Build::Failed;
    u.build_message = b.error;
    for (const auto& d : u.errors)
      if (d.severity.find("error") != std::string::npos) {
        u.jump_to_line = d.line;
        break;
      }
    std::string lines = first_line(b.error);
    for (const auto& d : u.errors)
      if (d.severity.find("error") != std::string::npos) {
        lines = "line " + std::to_string(d.line) + ": " + d.message;
        break;
      }
    s.say(Severity::Error, "yours: " + b.kernel->decl().name + " does not compile: " + lines +
                               (m_good ? " (the last good build stays in use)" : ""));
    return;
  }
  const bool first = !m_good || m_good->id() != b.kernel->id();
  m_good = b.kernel;
  m_workshop->publish(b.kernel);  // the backend lists it from now on (AppState::kernels() reads it there)
  u.id = b.kernel->id();
  u.version = b.kernel->version();
  u.build = UserKernelUi::Build::Ok;
  char msg[160];
  std::snprintf(msg, sizeof msg,
                "%s for sm_%d, tile %d: %d registers, %d bytes of shared memory, %d bytes spilled",
                b.module->from_cache
                    ? "from the cache"
                    : ("compiled in " + std::to_string(int(b.module->compile_s * 1000)) + " ms").c_str(),
                u.arch, b.tile, b.module->resources.regs, b.module->resources.static_smem,
                b.module->resources.spill_stores);
  u.build_message = msg;
  // Select it and run it, as the person would pick a built-in.
  ProblemSpec& spec = s.settings.spec;
  spec.kernel = u.id;
  spec.tile = b.tile;
  if (b.kernel->square_only()) {
    s.settings.square = true;
    spec.m = spec.k = spec.n;
  }
  s.ask(rq::Run{});
  u.built_at = s.now;
  s.say(Severity::Info, std::string(first ? "built " : "rebuilt ") + b.kernel->info().title + " (" + msg +
                            ")" + (m_gpu ? "; running it" : "; running it needs a GPU"));
  start_tiles(s);
}

void UserKernelController::start_tiles(AppState& s) {
  if (!m_good || m_tiles.in_flight()) return;
  UserKernelUi& u = s.user;
  u.gpu_name = m_model.name;
  const auto k = m_good;
  const GpuModel model = m_model;
  const ProblemSpec p = s.settings.spec;
  m_tiles.start([w = m_workshop, k, model, p, stop = m_stop] {
    std::vector<TileBuild> out;
    for (int t : k->spec().tiles) {
      TileBuild tb;
      tb.tile = t;
      try {
        const ExprVars v{p.m, p.n, p.k, t};
        const LaunchGeometry g = launch_geometry(k->spec(), v);
        tb.threads = int(g.threads());
        tb.dynamic_smem = g.smem;
        const auto m = w->build(*k, t, model.sm, v, &stop);
        tb.res = m->resources;
        tb.ok = true;
        OccupancyInputs in;
        in.threads_per_block = tb.threads;
        in.regs_per_thread = tb.res.regs;
        in.static_smem = tb.res.static_smem;
        in.dynamic_smem = int(g.smem);
        in.tile_n = int((p.n + g.grid[0] - 1) / g.grid[0]);
        in.tile_m = int((p.m + g.grid[1] - 1) / g.grid[1]);
        tb.inputs = in;
        try {
          tb.occupancy = theoretical_occupancy(model, in, p.m, p.n);
          tb.occupancy_ok = true;
        } catch (const ValidationError& e) {
          tb.error = e.what();
        }
      } catch (const Cancelled&) {
        break;  // the window is closing
      } catch (const std::exception& e) {
        tb.error = first_line(e.what());
      }
      out.push_back(tb);
    }
    return out;
  });
}

void UserKernelController::watch(AppState& s) {
  UserKernelUi& u = s.user;
  m_next_poll = s.now + poll_interval_s;
  if (!u.active || m_reading.in_flight()) return;
  int64_t size = -1, mtime = 0;
  if (!stat_file(u.path, &size, &mtime)) {
    if (!u.file_missing) {
      u.file_missing = true;
      u.watch =
          u.label + " was deleted or renamed: the last good build stays in use; watching for it to come back";
      s.say(Severity::Warning, u.path + " was deleted or renamed" +
                                   (m_good ? ": the last good build stays in use" : "") +
                                   " (TileScope looks for it again every second)");
    }
    return;
  }
  if (u.file_missing || size != m_size || mtime != m_mtime) {
    if (u.file_missing) s.say(Severity::Info, u.path + " is back");
    u.saved_at = s.now;
    start_read(s, u.path, true);
    return;
  }
  for (HeaderStamp& h : m_header_stamps) {
    int64_t hs = -1, hm = 0;
    stat_file(h.path, &hs, &hm);
    if (hs != h.size || hm != h.mtime) {
      h.size = hs;  // once: a header that is gone is said once, when the kernel is read again
      h.mtime = hm;
      s.say(Severity::Info, h.path + (hs < 0 ? " is gone" : " changed") + ": reading " + u.label + " again");
      u.saved_at = s.now;
      start_read(s, u.path, true);
      return;
    }
  }
}

void UserKernelController::save_editor(AppState& s) {
  UserKernelUi& u = s.user;
  if (!u.active || !u.editable) return;
  try {
    // Through the program's one writer (files.hpp): a temporary file next to it, flushed, renamed over it;
    // only a regular file is ever replaced.
    write_file(u.path, u.editor_buffer, Replace::RegularFile);
  } catch (const std::exception& e) {
    s.say(Severity::Error, "could not save " + u.path + ": " + e.what());
    return;
  }
  u.editor_dirty = false;
  u.saved_at = s.now;
  start_read(s, u.path, true);  // no need to wait for the watcher
}

void UserKernelController::start_sanitize(AppState& s) {
  UserKernelUi& u = s.user;
  if (!m_good) {
    s.say(Severity::Warning, "compute-sanitizer: no build of your kernel to check yet");
    return;
  }
  if (std::string why; !m_workshop->can_sanitize(&why)) {
    s.say(Severity::Warning, why);
    return;
  }
  if (m_sanitizing.in_flight()) return;
  ProblemSpec p = s.settings.spec;
  if (p.kernel != m_good->id()) {
    p.kernel = m_good->id();
    p.tile = m_good->spec().default_tile;
  }
  u.reports.clear();
  s.say(Severity::Info, "compute-sanitizer: running memcheck and racecheck on " + m_good->info().title +
                            " in a worker (each side at most 511, with the partial tiles of the shape)");
  m_sanitizing.start([w = m_workshop, k = m_good, p, stop = m_stop] {
    std::vector<SanitizerView> out;
    // Stopped when the window closes (compute-sanitizer is killed), as a compile is.
    for (const auto& r : w->sanitize(*k, p, {"memcheck", "racecheck"}, 300, &stop)) {
      SanitizerView v;
      v.tool = r.tool;
      v.summary = r.summary;
      v.output = r.output;
      v.problem = r.problem;
      v.ran = r.ran;
      v.issues = r.issues;
      v.seconds = r.seconds;
      v.shape = std::to_string(r.shape.m) + " x " + std::to_string(r.shape.n) + " x " +
                std::to_string(r.shape.k) + ", tile " + std::to_string(r.shape.tile);
      out.push_back(v);
    }
    return out;
  });
}

void UserKernelController::frame(AppState& s) {
  UserKernelUi& u = s.user;
  if (auto r = s.asked.take<rq::OpenKernel>(); r && !r->path.empty())
    start_read(s, r->path, u.active && r->path == u.path);
  if (auto r = s.asked.take<rq::SwitchKernel>(); r && !r->name.empty()) {
    u.kernel = r->name;
    understand(s, nullptr);
  }
  if (s.asked.take<rq::ApplyKernelForm>()) {
    u.form_applied = true;
    const UserKernelSpec form = u.form;
    understand(s, &form);
  }
  if (s.asked.take<rq::ResetKernelForm>()) {
    u.form_applied = false;
    understand(s, nullptr);
  }
  if (s.asked.take<rq::SaveKernel>()) save_editor(s);
  if (s.asked.take<rq::RevertKernel>() && u.active) {
    u.editor_dirty = false;
    start_read(s, u.path, true);
  }
  if (s.asked.take<rq::SanitizeKernel>()) start_sanitize(s);
  // The GPU of the resource table: this machine's, or one from the catalog.
  const GpuModel want = !u.gpu_choice.empty() ? find_gpu(u.gpu_choice)
                        : m_gpu               ? m_device_model
                                              : find_gpu("h100");
  if (want.name != m_model.name) {
    m_model = want;
    start_tiles(s);
  }
  // Finished background work.
  if (m_reading.ready()) {
    Read r = m_reading.take();
    take_read(s, std::move(r));
    if (!m_queued_path.empty()) {
      const std::string p = m_queued_path;
      m_queued_path.clear();
      start_read(s, p, m_queued_reload && u.active && p == u.path);
    }
  }
  if (m_building.ready()) take_build(s, m_building.take());
  if (m_tiles.ready()) {
    u.tiles = m_tiles.take();
    if (m_good && u.gpu_name != m_model.name) start_tiles(s);  // the GPU changed meanwhile
  }
  if (m_sanitizing.ready()) {
    u.reports = m_sanitizing.take();
    for (const auto& r : u.reports)
      s.say(r.ran && r.issues == 0 ? Severity::Info : Severity::Warning,
            "compute-sanitizer " + r.tool + ": " + (r.ran ? r.summary : r.problem));
  }
  if (u.active && s.now >= m_next_poll) watch(s);
}

}  // namespace ts::ui

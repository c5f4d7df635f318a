// [SECTION] The window's engines (app.hpp: "The window's engines"): connecting one (off the UI thread),
// choosing the one the window measures on, closing one, and each engine's session and its file.
#include <algorithm>
#include <filesystem>

#include "gfx/heatmap_set.hpp"
#include "ui/app.hpp"
#include "ui/user_kernel/user_kernel_controller.hpp"
#include "core/remote/remote_backend.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

namespace {

// What a person reads for an engine they did not name: "gpu-box" for "ssh gpu-box tilescope serve" (ssh's
// options skipped), else the command, shortened.
std::string default_engine_name(const std::string& command) {
  if (command.empty()) return "this machine";
  std::vector<std::string> words;
  std::string w;
  for (char c : command) {
    if (c == ' ' || c == '\t') {
      if (!w.empty()) words.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) words.push_back(w);
  while (!words.empty() && (words[0] == "exec" || words[0].find('=') != std::string::npos))
    words.erase(words.begin());  // the shell's exec, VAR=value
  if (!words.empty() &&
      (words[0] == "ssh" || (words[0].size() > 4 && words[0].compare(words[0].size() - 4, 4, "/ssh") == 0))) {
    // ssh's options that take a value; the first other word is the host.
    const std::string with_value = "bcDEeFIiJLlmOopQRSWw";
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string& a = words[i];
      if (a.size() >= 2 && a[0] == '-') {
        if (a.size() == 2 && with_value.find(a[1]) != std::string::npos) ++i;
        continue;
      }
      const size_t at = a.find('@');
      return at == std::string::npos ? a : a.substr(at + 1);
    }
  }
  std::string shown;
  for (const std::string& x : words) shown += (shown.empty() ? "" : " ") + x;
  return shown.size() > 32 ? shown.substr(0, 29) + "..." : shown;
}

}  // namespace

App::Engine* App::engine(uint64_t id) {
  for (auto& e : m_engines)
    if (e->id == id) return e.get();
  return nullptr;
}

App::Engine& App::add_engine(std::shared_ptr<Backend> backend, std::string name, std::string command) {
  auto e = std::make_unique<Engine>();
  e->id = m_next_engine++;
  e->name = std::move(name);
  e->command = std::move(command);
  e->backend = backend;
  e->queue = std::make_unique<RunQueue>(backend);
  e->sweep = std::make_unique<SweepRunner>(backend);
  m_engines.push_back(std::move(e));
  return *m_engines.back();
}

Session& App::session_of(Engine& e) {
  SessionSet& set = m_state.sessions;
  if (const std::optional<size_t> i = set.of_engine(e.id)) return set.at(*i);
  // Never without one: an engine's session is made when it is added (this keeps a bug from losing points).
  Session fresh = Session::for_device(e.backend->device_info());
  fresh.engine = e.id;
  return set.at(set.open(std::move(fresh)));
}

void App::connect_engine(std::string name, std::string command, bool choose) {
  m_to_connect.push_back({std::move(name), std::move(command), choose});
}

void App::handle_engines() {
  AppState& s = m_state;
  if (auto c = s.asked.take<rq::ConnectEngine>()) m_to_connect.push_back(std::move(*c));
  if (auto c = s.asked.take<rq::ChooseEngine>()) {
    if (Engine* e = engine(c->id))
      choose_engine(*e);
    else
      s.say(Severity::Warning, "that engine is no longer connected");
  }
  if (auto d = s.asked.take<rq::DisconnectEngine>()) disconnect_engine(d->id);

  // One connection at a time, in the order asked.
  if (!m_connecting.in_flight() && !m_to_connect.empty()) {
    rq::ConnectEngine c = std::move(m_to_connect.front());
    m_to_connect.erase(m_to_connect.begin());
    try {
      if (!c.command.empty()) {
        std::vector<RememberedEngine> check;
        remember_engine(check, {c.name, c.command});  // the same checks as the remembered list's
      }
      for (auto& e : m_engines)
        if (e->command == c.command)
          throw ValidationError("already connected" + (e->name.empty() ? "" : " as " + e->name) +
                                (c.command.empty() ? "" : ": " + c.command));
      if (s.sessions.size() > SessionSet::kMaxOverlays)
        throw ValidationError("the window shows at most " + std::to_string(SessionSet::kMaxOverlays + 1) +
                              " sessions: close an overlay or an engine first");
      if (c.command.empty() && !m_factory)
        throw ValidationError("this window cannot start this machine's engine");
      if (c.name.empty()) c.name = default_engine_name(c.command);
      EngineFactory factory = m_factory;
      if (!factory)
        factory = [](const std::string& command, std::string*) -> std::shared_ptr<Backend> {
          try {
            return std::make_shared<remote::RemoteBackend>(command);
          } catch (const remote::EngineStartError& e) {
            throw ValidationError(e.what());
          }
        };
      s.connect.error.clear();
      s.say(Severity::Info, "connecting to " + c.name + (c.command.empty() ? "" : ": " + c.command));
      m_connecting.start([factory, c]() {
        Connected done;
        done.name = c.name;
        done.command = c.command;
        done.choose = c.choose;
        try {
          done.backend = factory(c.command, &done.note);
          (void)done.backend->device_info();  // asked once here, off the UI thread
        } catch (const std::exception& e) {
          done.backend.reset();
          done.error = e.what();
        }
        return done;
      });
    } catch (const ValidationError& e) {
      s.connect.error = e.what();
      s.say(Severity::Warning, std::string("not connected: ") + e.what());
    }
  }
  if (m_connecting.ready()) {
    Connected c = m_connecting.take();
    if (!c.backend) {
      s.connect.error = c.error;
      s.say(Severity::Error, "could not connect to " + c.name + ": " + c.error);
    } else {
      Engine& e = add_engine(c.backend, c.name, c.command);
      DeviceInfo device;
      try {
        device = e.backend->device_info();
      } catch (const std::exception& x) {
        device.backend = e.backend->kind();
        device.name = device.label = e.backend->device_name();
      }
      // Sessions named by device and engine once there are several (the same GPU model on two hosts).
      Session& first = session_of(*m_engines.front());
      const std::string tag = " (" + m_engines.front()->name + ")";
      if (first.label.find(tag) == std::string::npos) {
        const size_t comma = first.label.rfind(", ");
        first.label.insert(comma == std::string::npos ? first.label.size() : comma, tag);
      }
      Session session = Session::for_device(device);
      session.label = device.name + " (" + e.name + "), " + session.created.substr(0, 10);
      session.engine = e.id;
      s.sessions.open(std::move(session));
      ++s.sessions_serial;
      load_engine_session(e);
      if (!c.command.empty()) {
        try {
          remember_engine(s.settings.engines, {c.name, c.command});
        } catch (const ValidationError&) {
        }
      }
      s.connect.open = s.connect.open && !c.choose;
      s.say(Severity::Info, "connected to " + e.name + ": " + device.label +
                                (c.note.empty() ? "" : " (" + c.note + ")") +
                                (c.choose ? "" : "; choose it under Controls > Device"));
      if (c.choose) choose_engine(e);
    }
  }
  if (m_disconnecting.ready()) m_disconnecting.take();
  report_engines();
}

void App::choose_engine(Engine& e) {
  AppState& s = m_state;
  if (&e == &current_engine()) return;
  if (s.user.editor_dirty) {
    s.say(Severity::Warning,
          "save or revert your kernel's edits first: it is built again on the device chosen (Your kernel)");
    return;
  }
  const auto it =
      std::find_if(m_engines.begin(), m_engines.end(), [&](const auto& p) { return p.get() == &e; });
  m_current = size_t(it - m_engines.begin());
  s.backend = e.backend.get();
  if (const std::optional<size_t> i = s.sessions.of_engine(e.id)) s.sessions.make_current(*i);
  ++s.sessions_serial;
  s.bandwidth.reset();  // the roofline's DRAM roof was another device's
  try {
    s.capacity = e.backend->capacity();
  } catch (const std::exception& x) {
    s.say(Severity::Error, std::string("cannot ask the device how much it can run: ") + x.what());
  }
  // The heatmaps' path (interop on this machine's GPU, or reduced views through a link) and the GL check's
  // known picture belong to the device.
  s.heatmaps = std::make_shared<gfx::HeatmapSet>(e.backend->cuda_device(), host_path_why());
  ++s.gl_generation;
  m_probe.reset();
  m_incidents = e.backend->incidents().count;
  // A person's kernel is built by the engine it runs on: the file is read and built there again (its
  // kernel is chosen again once built, as at launch).
  m_user = std::make_unique<UserKernelController>(*e.backend, m_jobs);
  std::string& kernel = s.settings.spec.kernel;
  if (s.user.active) s.ask(rq::OpenKernel{s.user.path});
  if (kernel.rfind("yours:", 0) == 0 || !find_kernel(s.kernels(), kernel)) {
    if (kernel.rfind("yours:", 0) != 0)
      s.say(Severity::Info, e.name + " has no " + kernel + ": showing tiled");
    kernel = "tiled";
    s.settings.spec.tile = 16;
    keep_square(s);
  }
  s.say(Severity::Info, "measuring on " + s.device_name() + " (" + e.name + ")");
  s.ask(rq::Run{});  // the same problem on the device chosen
  report_engines();
}

void App::disconnect_engine(uint64_t id) {
  AppState& s = m_state;
  Engine* e = engine(id);
  if (!e) return;
  if (e->first) {
    s.say(Severity::Warning, e->name +
                                 " is the engine the window started with: it stays (its session is "
                                 "the window's session file)");
    return;
  }
  if (m_disconnecting.in_flight() || m_reconnect.in_flight()) {
    s.say(Severity::Warning, "still closing or reconnecting an engine: try again in a moment");
    return;
  }
  if (e == &current_engine()) choose_engine(*m_engines.front());
  if (e == &current_engine()) return;  // refused (unsaved kernel edits): said why
  e->sweep->cancel();
  try {
    const std::string w = save_engine_session(*e);
    (void)w;  // said in the window already
  } catch (const std::exception& x) {
    s.say(Severity::Error, std::string("could not save its session: ") + x.what());
  }
  // Its session stays, as an overlay of points measured there (no longer an engine's).
  if (const std::optional<size_t> i = s.sessions.of_engine(e->id)) s.sessions.at(*i).engine = 0;
  ++s.sessions_serial;
  m_sweeping.erase(std::remove(m_sweeping.begin(), m_sweeping.end(), id), m_sweeping.end());
  if (m_sweep_into == id) m_sweep_into = 0;
  const auto it =
      std::find_if(m_engines.begin(), m_engines.end(), [&](const auto& p) { return p->id == id; });
  std::shared_ptr<Engine> gone(std::move(*it));
  const uint64_t current_id = current_engine().id;
  m_engines.erase(it);
  for (size_t i = 0; i < m_engines.size(); ++i)
    if (m_engines[i]->id == current_id) m_current = i;
  s.say(Severity::Info, "closed " + gone->name + "; its points stay, as an overlay");
  // Its run queue and sweep thread finish (a cancelled point in flight comes back) off the UI thread.
  m_disconnecting.start([gone]() mutable {
    gone.reset();
    return true;
  });
  report_engines();
}

void App::report_engines() {
  std::vector<AppState::EngineRow> rows;
  for (size_t i = 0; i < m_engines.size(); ++i) {
    const Engine& e = *m_engines[i];
    AppState::EngineRow r;
    r.id = e.id;
    r.name = e.name;
    r.command = e.command;
    if (const std::optional<size_t> at = m_state.sessions.of_engine(e.id)) {
      const DeviceInfo& d = m_state.sessions.all()[*at].device;
      r.device = d.label.empty() ? d.name : d.label;
      r.device_id = d.backend + "|" + d.name;
    }
    r.lost = e.backend->link().lost;
    r.current = i == m_current;
    rows.push_back(std::move(r));
  }
  m_state.engines = std::move(rows);
}

std::string App::save_engine_session(Engine& e) {
  AppState& s = m_state;
  if (s.session_file.empty()) return "";
  Session& cur = session_of(e);
  if (cur.records.empty() && e.overflow.empty()) return "";
  const fs::path file = s.session_file;
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (e.session_file.empty())
    e.session_file = (dir / engine_session_file_name(cur.device.name, e.name)).string();
  std::string warnings;
  auto points = [](size_t n) { return std::to_string(n) + (n == 1 ? " point" : " points"); };
  if (e.save_beside) {  // its file holds another device's points, or was refused: never written
    const fs::path beside = save_session_beside(dir, "session", cur);
    e.session_file = beside.string();
    e.save_beside = false;
    s.say(Severity::Info,
          "session of " + e.name + " saved: " + points(cur.records.size()) + " to " + beside.string());
  } else {
    try {
      const SessionSave r = save_session_merged(e.session_file, cur);
      if (r.merged) ++s.sessions_serial;
      e.overflow.insert(e.overflow.end(), r.left_out.begin(), r.left_out.end());
      s.say(Severity::Info,
            "session of " + e.name + " saved: " + points(r.points) + " to " + r.written.string());
    } catch (const SessionError& x) {
      const fs::path beside = save_session_beside(dir, "session", cur);
      warnings = std::string("the session of ") + e.name + " could not be saved: " + x.what() + "; its " +
                 points(cur.records.size()) + " were saved to " + beside.string() + " instead";
      s.say(Severity::Warning, warnings);
      e.session_file = beside.string();
    }
  }
  if (!e.overflow.empty()) {
    Session aside = cur;
    aside.label = cur.label + " (oldest points)";
    aside.records = std::move(e.overflow);
    e.overflow.clear();
    const fs::path beside = save_session_beside(dir, "session-oldest", aside);
    const std::string w =
        "the oldest " + points(aside.records.size()) + " of " + e.name + " were saved to " + beside.string();
    s.say(Severity::Warning, w);
    warnings += (warnings.empty() ? "" : "\n") + w;
  }
  return warnings;
}

void App::load_engine_session(Engine& e) {
  AppState& s = m_state;
  if (s.session_file.empty()) return;
  Session& cur = session_of(e);
  const fs::path file = s.session_file;
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const fs::path path = dir / engine_session_file_name(cur.device.name, e.name);
  e.session_file = path.string();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return;
  try {
    Session saved = load_session(path);
    if (saved.device.backend != cur.device.backend || saved.device.name != cur.device.name) {
      // Another device under the same engine name (the server's GPU changed): never merged into this one.
      e.save_beside = true;
      s.say(Severity::Warning, path.string() + " holds points of " + saved.device.name + ", not " +
                                   cur.device.name + ": left as it is; " + e.name +
                                   "'s points are saved beside it under a new name");
      return;
    }
    const size_t n = saved.records.size();
    saved.device = cur.device;
    saved.label = cur.label;
    saved.engine = e.id;
    cur = std::move(saved);
    ++s.sessions_serial;
    s.say(Severity::Info, e.name + ": " + std::to_string(n) + (n == 1 ? " point" : " points") +
                              " measured there before, from " + path.string());
  } catch (const std::exception& x) {
    s.say(Severity::Error, std::string("the session of ") + e.name + " was refused: " + x.what() +
                               " (left as it is; its points will be saved beside it)");
    e.save_beside = true;
  }
}

}  // namespace ts::ui

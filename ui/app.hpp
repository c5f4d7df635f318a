#pragma once
// [SECTION] The application: its state, the panels, the layout, and the bridge from edits to engine requests.
// One App serves the window (gui.cpp: run_gui), the offscreen snapshot and the frame benchmark, so all three
// draw exactly the same frame.
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ui/app_state.hpp"
#include "ui/frame_report.hpp"
#include "ui/layout.hpp"
#include "ui/panels/panel.hpp"
#include "core/engine/job_runner.hpp"
#include "core/engine/run_queue.hpp"
#include "core/engine/sweep.hpp"

namespace ts::ui {

class FileDialogs;
class UserKernelController;

class App {
 public:
  // The GL context is current (the heatmap set probes interop on it).
  App(std::shared_ptr<Backend> backend, const std::string& note, Settings settings, std::string renderer);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  AppState& state() { return m_state; }
  // What the last frame drew (FrameReport): for the frame's host (export crops), snapshot --layout-json and
  // the UI tests. The model never reads it.
  const FrameReport& report() const { return m_report; }
  RunQueue& queue() { return *current_engine().queue; }  // the current engine's

  // [SECTION] The window's engines. It starts with one (the constructor's backend); File > Connect to
  // engine... adds more (two GPUs of one host, two servers, this machine beside a server), and the Controls'
  // Device chooses the one runs, heatmaps, a person's kernel, the bandwidth and the GL check go to. Each
  // engine has its own run queue, sweep runner and session (its points stay its own, labelled with its
  // device); sweeps can run on every engine or split across identical ones (rq::StartSweep::where). Makes the
  // engine a command starts, off the UI thread ("": this machine's own backend); throws ValidationError with
  // what a command that does not start or speak the protocol printed. The host sets it; without one, only
  // remote engines can be connected.
  using EngineFactory =
      std::function<std::shared_ptr<Backend>(const std::string& command, std::string* note)>;
  void set_engine_factory(EngineFactory f) { m_factory = std::move(f); }
  // Connects to another engine (in the background; one after the other when several are asked).
  void connect_engine(std::string name, std::string command, bool choose);
  // The playing replay and k steps moved on by this frame's time (ui/algorithm_views.hpp).
  void advance_algorithm_views();
  // AppState::jobs made anew from the jobs in flight (App does it where they change, and after every frame).
  void report_jobs();
  const std::vector<std::unique_ptr<Panel>>& panels() const { return m_panels; }

  // Before ImGui::NewFrame(): applies the theme, text size and the monitor's content scale when one changed.
  void prepare_frame(float content_scale);
  // Between NewFrame() and Render(): shortcuts, menu bar, status bar, dock space, panels, dialogs, and the
  // requests they made.
  void frame();
  // Takes a finished run, if any (call once per frame).
  void pump();
  // The SASS panel's listings (rq::FetchSass): starts the fetch off the UI thread, takes its answer. Part
  // of pump(); a snapshot, which draws frames without pumping, calls it between its frames.
  void pump_sass();
  void submit(RunRequest req);
  void take(RunOutcome o);

  // [SECTION] The GL self-check (gl_health.hpp) and what the frame loop does about a failed one. A check runs
  // inside frame() when one is due (at start, after a fault or hang of a person's kernel, on request). When
  // it fails the first time, the app asks the frame loop to make its GL resources anew (or the whole context,
  // after a reset) and checks again; a second failure leaves the window Damaged (AppState::gl).
  enum class GlRebuild { None, Resources, Context };
  GlRebuild gl_rebuild_wanted() const { return m_gl_rebuild; }
  // The frame loop calls these around a rebuild, between frames, with the (old, then new) context current:
  // release drops every GL resource the app holds, restore makes them again and schedules the check.
  void release_gl();
  void restore_gl(const std::string& renderer);

  // [SECTION] The window's session file: read at launch (a file measured on another device is opened beside
  // the current session instead; a damaged one is refused with its reason and never overwritten), written
  // when the window closes and on File > Save session, merged with what other windows saved there meanwhile
  // (save_session_merged). Points that cannot go there (the file refused, not writable, or past the limits)
  // are saved beside it under a new name, and the window says so. Returns those warnings ("" when none), for
  // standard error at exit.
  void open_session_file(const std::string& path);
  std::string save_session_file();

 private:
  void handle_shortcuts();
  void handle_files();
  void maybe_submit();
  RunRequest request_for(const ProblemSpec& spec) const;
  void handle_sessions();
  void handle_sweep();
  MeasurePolicy sweep_policy(bool quick, const Backend& backend);
  void start_points(std::vector<ProblemSpec> points, const MeasurePolicy& policy);
  void start_everywhere(std::vector<ProblemSpec> points, SweepWhere where, bool quick, std::string* what);
  SweepProgress sweep_progress() const;  // of the sweep's engines together
  void pump_measurements();              // sweep points, bandwidth, figures: between frames
  struct Engine;
  void add_to_session(const RunResult& r, Engine& e);
  void check_gl();

  // [SECTION] Engines (app_engines.cpp).
  struct Engine {
    uint64_t id = 0;  // never reused in this window
    std::string name, command;
    std::shared_ptr<Backend> backend;
    std::unique_ptr<RunQueue> queue;
    std::unique_ptr<SweepRunner> sweep;
    std::string session_file;  // where its session is saved (the first engine's: AppState::session_file)
    bool first = false;        // the engine the window started with
    bool save_beside = false;  // its file was refused or holds another device's points: a new name
    // The oldest points that made room in a session holding kMaxSessionRecords: saved beside the session file
    // at the next save, never dropped.
    std::vector<MeasurementRecord> overflow;
    bool capped = false;
  };
  Engine& current_engine() { return *m_engines[m_current]; }
  const Engine& current_engine() const { return *m_engines[m_current]; }
  Engine* engine(uint64_t id);
  Engine& add_engine(std::shared_ptr<Backend> backend, std::string name, std::string command);
  void handle_engines();
  void choose_engine(Engine& e);
  void disconnect_engine(uint64_t id);
  void report_engines();
  Session& session_of(Engine& e);  // its session in AppState::sessions
  // Its session's points saved to its file (merged with what is there), and the oldest that made room beside
  // it. Returns warnings ("" none).
  std::string save_engine_session(Engine& e);
  void load_engine_session(Engine& e);  // the points saved for this engine's device and name before

  AppState m_state;
  FrameReport m_report;  // filled by the panels, the status bar and the dialogs as they draw
  JobRunner m_jobs;      // the window's background jobs (before the jobs and the controller that hold them)
  std::vector<std::unique_ptr<Engine>> m_engines;  // never empty; [0] the first
  size_t m_current = 0;
  uint64_t m_next_engine = 1;
  EngineFactory m_factory;
  struct Connected {
    std::shared_ptr<Backend> backend;
    std::string name, command, note, error;
    bool choose = false;
  };
  std::vector<rq::ConnectEngine> m_to_connect;  // waiting for the connection in flight
  JobRunner::Job<Connected> m_connecting{m_jobs, kJobConnect};
  JobRunner::Job<bool> m_disconnecting{m_jobs, kJobDisconnect};  // an engine closed off the UI thread
  std::vector<uint64_t> m_sweeping;                              // the engines of the sweep started last
  uint64_t m_sweep_into = 0;  // a split sweep: the engine whose session takes every point (0: each its own)
  std::vector<std::unique_ptr<Panel>> m_panels;
  Layout m_layout;
  std::unique_ptr<FileDialogs> m_dialogs;
  std::unique_ptr<UserKernelController> m_user;  // a person's own kernel: its file, builds and watcher
  ProblemSpec m_last_submitted;
  bool m_submitted_any = false;
  // What the style was built for (prepare_frame rebuilds it when one differs).
  Theme m_theme = Theme::Dark;
  float m_font_px = 0, m_scale = 0;
  // Background file work: loading A and B, saving C (the frame keeps drawing meanwhile).
  struct Loaded {
    std::shared_ptr<const HostMatrix> a, b;
    std::string a_name, b_name, error;
  };
  JobRunner::Job<Loaded> m_loading{m_jobs, kJobReadInputs};
  JobRunner::Job<std::string> m_saving{m_jobs, kJobSaveC};  // the message to show when done
  // Sessions opened beside the current one (read in the background), the sweep's thread, the bandwidth.
  struct OpenedSession {
    std::optional<Session> session;
    std::string path, error;
  };
  JobRunner::Job<OpenedSession> m_opening{m_jobs, kJobOpenSession};
  SweepProgress::State m_sweep_state = SweepProgress::State::Idle;
  ProblemSpec m_spec_at_sweep;  // the Controls' problem when the sweep took over the plots
  JobRunner::Job<BandwidthResult> m_bandwidth{m_jobs, kJobBandwidth};
  JobRunner::Job<std::vector<SassListing>> m_sass{m_jobs, kJobSass};  // the SASS panel's (rq::FetchSass)
  JobRunner::Job<bool> m_reconnect{m_jobs, kJobReconnect};
  CancelToken m_bandwidth_cancel;
  // The GL self-check: faults seen so far, and whether this failure was already met by a rebuild.
  uint64_t m_incidents = 0;
  // Rebuilds in this episode: 1 as it was, 2 without interop; then the window says the pictures are wrong.
  // A check that passes does not end the episode (on an H100 after a fault, a new context passed its check
  // and was lost again as soon as it drew): the person's "Check again" does, or a fault while the pictures
  // were right.
  int m_gl_attempt = 0;
  std::string m_gl_trigger;   // why the GL self-check runs (a rebuild checks again for the same cause)
  bool m_gl_rebuilt = false;  // resources or context made anew since the last passed check
  GlRebuild m_gl_rebuild = GlRebuild::None;
  std::string m_interop_off_why;  // set when interop is turned off for the session
  // Why the heatmaps take the host path whatever the GPU offers ("" : let interop be probed).
  std::string host_path_why() const;
  std::shared_ptr<const MatrixStore> m_probe;  // the check's known picture on the heatmaps' device
};

}  // namespace ts::ui

#pragma once
// [SECTION] What the panels read and edit. Panels never call CUDA or the backend directly: they edit
// `settings`, ask for what they want (AppState::ask, requests.hpp), and read the latest outcome; app.cpp
// turns edits into RunQueue requests and the heatmap set (app/gfx) turns views into pictures.
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/engine/dims.hpp"
#include "core/plots/figure.hpp"
#include "core/engine/gpu_catalog.hpp"
#include "core/engine/job_runner.hpp"
#include "core/engine/matrix.hpp"
#include "core/base/message_log.hpp"
#include "core/plots/plot_data.hpp"
#include "core/io/session.hpp"
#include "core/io/settings.hpp"
#include "core/engine/sweep.hpp"
#include "ui/algorithm_views.hpp"
#include "ui/requests.hpp"
#include "ui/user_kernel/user_kernel_state.hpp"

namespace ts::gfx {
class HeatmapSet;
}

namespace ts::ui {

struct AppState {
  Settings settings;

  // [SECTION] The engine, read through its front door and never copied here. `backend`: App's (its run
  // queue's), which outlives the state; `tilescope figure` names the backend it measured on, or the CPU
  // backend for the built-in registry when it plots saved sessions.
  const Backend* backend = nullptr;
  // Every kernel the backend knows now (Backend::kernel_list(): a person's kernel joins once it is built).
  // The list stays valid for the backend's life (a newer one replaces it once a kernel is published or
  // withdrawn).
  const std::vector<KernelInfo>& kernels() const {
    static const std::vector<KernelInfo> none;  // a state without an engine (tests of the plots) knows none
    return backend ? *backend->kernel_list() : none;
  }
  // The device this window measures on: the current session's (Session::for_device of the backend's
  // device_info(), or of what could be read of it; a saved session is taken as current only when it was
  // measured on the same backend and device), so it is kept once, in the session.
  const DeviceInfo& device() const { return sessions.current().device; }
  const std::string& backend_kind() const { return device().backend; }  // "cuda" or "cpu"
  const std::string& device_name() const { return device().label; }     // Backend::device_name()
  std::string backend_note;  // why the CPU backend was chosen, if it was chosen automatically (App's own)
  // [SECTION] The window's engines, as of the end of the last frame (App makes the list; the Controls' Device
  // and File > Connect to engine... read it and ask rq::ChooseEngine, rq::ConnectEngine,
  // rq::DisconnectEngine).
  struct EngineRow {
    uint64_t id = 0;
    std::string name;       // "this machine", or as the person named it
    std::string command;    // "": this machine's own backend
    std::string device;     // its device's label ("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)")
    std::string device_id;  // backend and device name: rows of equal ids are identical devices
    std::string lost;       // how its link ended ("" while it works)
    bool current = false;
  };
  std::vector<EngineRow> engines;
  const EngineRow* current_engine() const {
    for (const EngineRow& e : engines)
      if (e.current) return &e;
    return nullptr;
  }
  // File > Connect to engine...: the dialog's fields (ui/dialogs/connect_dialog.cpp).
  struct ConnectDialog {
    bool open = false;
    std::string command, name;
    std::string error;  // of the last connection tried from it
  } connect;
  bool connecting() const { return jobs.has(kJobConnect); }
  std::string gl_renderer;
  std::string gl_context;  // offscreen: which context (EGL device, GLFW/X11)
  // What the backend can run (the size sliders' range): Backend::capacity() read at start and after a run of
  // another shape (free memory changes as runs come and go), not every frame, so the range holds still while
  // the person drags a slider. This sample is the state's own; the backend has no stored value to read.
  Capacity capacity;
  std::shared_ptr<gfx::HeatmapSet> heatmaps;

  // What runs in the background (App's JobRunner, the run queue, the sweep), as of the end of the last frame.
  JobReport jobs;
  bool busy() const { return jobs.has(kJobRun); }  // a run is pending or in flight
  bool sweeping() const { return jobs.has(kJobSweep); }
  bool measuring_bandwidth() const { return jobs.has(kJobBandwidth); }
  // A person's kernel is read, built or checked (the window keeps drawing meanwhile).
  bool kernel_working() const {
    return jobs.has_any({kJobReadKernel, kJobBuildKernel, kJobBuildTiles, kJobSanitize});
  }

  // Run state (written by app.cpp).
  std::optional<RunResult> result;  // the latest successful run
  uint64_t result_serial = 0;       // increments with every new result
  uint64_t runs_submitted = 0;      // every request sent to the engine (tests: one per committed value)
  std::string last_error;           // the latest failed request, cleared by the next success
  bool last_error_is_input = false;
  bool repeat = false;  // keep re-running the current problem

  // The schedule replay's and the feeding tiles' cursors (Matrices, Tile schedule).
  AlgorithmViews views;

  // A person's own kernel (File > Open kernel, a dropped file, --kernel-file): see user_kernel_state.hpp.
  UserKernelUi user;

  // A and B from .npy files (File > Open), used while settings.spec.input == InputKind::File.
  std::shared_ptr<const HostMatrix> file_a, file_b;
  std::string file_a_name, file_b_name;

  // What panels, menus and shortcuts ask for (requests.hpp): taken by App, the frame's host or a panel.
  Requests asked;
  void ask(Request r) { asked.push(std::move(r)); }
  bool show_shortcuts = false, show_about = false;

  // [SECTION] Whether OpenGL draws what it is told (gl_health.hpp). Checked at start, after every fault or
  // hang of a person's kernel and on request; a failed check that rebuilding the GL resources does not mend
  // leaves the window Damaged: it says so everywhere, stops drawing heatmaps and refuses to export pictures.
  struct GlHealth {
    enum class State { Unchecked, Ok, Damaged } state = State::Unchecked;
    std::string verdict, detail;  // of the last check
    std::string trigger;          // why it ran: "at start", "after the kernel faulted", "on request"
    int checks = 0;               // how many have run
    int rebuilds = 0;             // GL resources (or the context) made anew after a failed check
    double ms = 0;                // the last check's time
    bool popup = false;           // the explanation is open
  } gl;
  uint64_t gl_generation = 0;  // increments when the GL resources are made anew (panels drop their textures)
  bool pictures_trusted() const { return gl.state != GlHealth::State::Damaged; }

  // Messages: the status bar shows the latest, View > Messages all of them.
  MessageLog log;
  double now = 0;  // ImGui::GetTime() of this frame
  void say(Severity s, std::string text) { log.add(s, std::move(text), now); }

  // [SECTION] Measurements: sessions, sweeps, the roofline's bandwidth, figures (app.cpp handles the
  // requests).
  SessionSet sessions;  // [0]: this window's measurements (every run and sweep point); others: overlays
  uint64_t sessions_serial = 0;  // increments whenever a session changes (plots rebuild their data)
  std::string session_file;      // where the current session is saved (empty: nowhere, e.g. a snapshot)
  std::string session_refused;   // why the saved session could not be read (then it is never overwritten)
  // Sweeps (rq::StartSweep, rq::TimeTiles, rq::TimeRungs, rq::CancelSweep): their policy and where the sweep
  // stands.
  bool sweep_quick = false;  // quick policy instead of bench (a fast look; fewer samples per point)
  static constexpr int kWindowSweepMaxSamples =
      2000;                                    // bench samples per point at most (sessions stay small)
  double sweep_min_s = 0.5, sweep_max_s = 10;  // bench: kernel time at least, wall time at most, per point
  // The device's bench policy, read from the backend (the seconds above start as its own).
  MeasurePolicy bench_policy() const { return backend ? backend->bench_policy() : MeasurePolicy::bench(); }
  std::optional<SweepSpec> sweep;      // the sweep started last (its points fill Timings)
  SweepProgress sweep_progress;        // updated every frame
  std::optional<ProblemSpec> plot_at;  // the plots' reference problem while a sweep leads them
  // Plot settings.
  std::string marks_gpu = "h100";  // CPU backend: the catalog GPU of theoretical wave marks and occupancy
  // The calculator and the occupancy plot take marks_gpu even where the device is a GPU (tilescope figure
  // --plot occupancy --gpu: THEORETICAL figures of a catalog GPU, as asked).
  bool catalog_gpu = false;
  TimingsY timings_y = TimingsY::Flops;
  std::optional<KernelTile> bars_baseline;  // pinned in the ladder chart
  bool roofline_this_shape = false;
  // DRAM bandwidth for the roofline (measured off the UI thread).
  std::optional<BandwidthResult> bandwidth;
  // The SASS panel's listings (rq::FetchSass, fetched off the UI thread by app.cpp): what was asked, the
  // answers in the same order once they are in (each available or saying why not), or what the fetch threw.
  struct SassListings {
    std::vector<std::pair<std::string, int>> asked;
    std::vector<SassListing> listings;
    std::string error;
    uint64_t serial = 0;  // grows with every answer
  } sass;
  bool fetching_sass() const { return jobs.has(kJobSass); }
  // Figures (rq::ExportFigure): one plot rendered offscreen at a chosen size and theme (PNG + CSV + JSON).
  std::string last_figure;  // the PNG written last
  // The occupancy calculator's kernel and tile (the Occupancy panel; its figures as drawn are in the
  // FrameReport). Empty kernel: not drawn yet, the plots take the problem's.
  struct OccupancyCalc {
    std::string kernel;
    int tile = 0;
    bool chosen = false;  // kernel and tile picked in the panel; until then they follow the problem's
  } occupancy_calc;
  // Cached plot data (plots.cpp: timings_of, bars_of, roofline_of).
  struct PlotCache {
    std::string timings_key, bars_key, roofline_key;
    TimingsData timings;
    BarsData bars;
    RooflineData roofline;
  } plots;
};

const KernelInfo* current_kernel(const AppState& s);

// The square mode (Settings::square, saved with the settings) is the one source of truth for M = N = K: the
// problem is made square where it is edited (the Controls, a kernel chosen, a preset, a new build of your
// kernel, the settings at start, inputs that stop being files), never fixed up afterwards. A kernel told one
// size only turns the mode on; the mode makes M and K follow N. Inputs from files keep their own shape.
void keep_square(AppState& s);

}  // namespace ts::ui

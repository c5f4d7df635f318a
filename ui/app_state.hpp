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
#include "ui/requests.hpp"
#include "ui/user_kernel/user_kernel_state.hpp"

namespace ts::gfx {
class HeatmapSet;
}

namespace ts::ui {

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
};

// What a panel drew last frame: for the layout checks of `snapshot --layout-json` and the UI tests.
struct PanelReport {
  Rect rect;              // the window's rectangle on screen
  bool visible = false;   // drawn this frame (not closed, not a tab hidden behind another)
  bool docked = false;    // in the dock space (else a floating window)
  float clipped_px = 0;   // how far its content runs past its right edge (0: nothing is cut off)
  float overflow_px = 0;  // how far its content runs past its bottom edge (out of sight until scrolled)
  float least_w = 0,
        least_h = 0;  // the least size its content is drawn well in (0: no say; the layout keeps it)
  std::string state;  // e.g. "needs a GPU", "interop", "host: <why>"
  std::string text;   // the status bar: what it says this frame
};

// One heatmap's plot area and the element coordinates at its edges (x = column, y = row; y0 is the top edge):
// a test turns (row, col) into a pixel with these.
struct HeatmapReport {
  Rect plot;
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  float shown_lo = 0, shown_hi = 0;  // the colour scale
  float scale_w = 0;                 // the colour scale's width beside the plot (px)
};

// The element under the mouse in a heatmap, as the tooltip shows it (tests read it back).
struct HoverReport {
  std::string map;  // "A", "B", "C = A B", "C - reference"; empty: nothing hovered this frame
  int64_t row = -1, col = -1;
  bool ready = false;  // the value has arrived (GPU reads take a frame or two)
  float value = 0;
};

// Heatmaps: show rows [row0, row0 + rows) x columns [col0, col0 + cols).

// The open or save dialog as drawn last frame (UI tests read it): the text the window's own dialog drew, or
// that the desktop's is open (a child process; the window keeps drawing meanwhile).
struct FileDialogReport {
  bool open = false;     // a dialog is in progress
  bool desktop = false;  // it is the desktop's (zenity, kdialog), in a window of its own
  std::string helper;    // the desktop's program
  std::string title, folder, name, type, error;
  struct Row {
    std::string name, size, modified;
    bool folder = false;
  };
  std::vector<Row> rows;  // the rows drawn (the visible part of the list)
  std::vector<std::string> places, types;
  uint64_t frames_while_desktop = 0;  // frames this window drew while a desktop dialog was open (all so far)
};

struct AppState {
  Settings settings;
  std::vector<KernelInfo> kernels;  // the backend's registry

  // Backend identity, shown in the status bar and Help > About.
  std::string backend_kind;  // "cuda" or "cpu"
  std::string device_name;
  std::string backend_note;     // why the CPU backend was chosen, if it was chosen automatically
  std::string backend_version;  // e.g. "CUDA driver API 13.0, runtime 13.0"
  std::string gl_renderer;
  std::string gl_context;  // offscreen: which context (EGL device, GLFW/X11)
  Capacity capacity;       // what the backend can run now (the size sliders' range)
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

  // A person's own kernel (File > Open kernel, a dropped file, --kernel-file): see user_kernel_state.hpp.
  UserKernelUi user;

  // A and B from .npy files (File > Open), used while settings.spec.input == InputKind::File.
  std::shared_ptr<const HostMatrix> file_a, file_b;
  std::string file_a_name, file_b_name;

  // What panels, menus and shortcuts ask for (requests.hpp): taken by App, the frame's host or a panel.
  Requests asked;
  void ask(Request r) { asked.push(std::move(r)); }
  bool show_shortcuts = false, show_about = false;
  std::set<std::string> export_pending;  // panels to export as if their button were pressed (snapshot)

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
  DeviceInfo device;    // the backend's device (roofs, occupancy, figure captions)
  SessionSet sessions;  // [0]: this window's measurements (every run and sweep point); others: overlays
  uint64_t sessions_serial = 0;  // increments whenever a session changes (plots rebuild their data)
  std::string session_file;      // where the current session is saved (empty: nowhere, e.g. a snapshot)
  std::string session_refused;   // why the saved session could not be read (then it is never overwritten)
  // Sweeps (rq::StartSweep, rq::TimeTiles, rq::CancelSweep): their policy and where the sweep stands.
  bool sweep_quick = false;  // quick policy instead of bench (a fast look; fewer samples per point)
  static constexpr int kWindowSweepMaxSamples =
      2000;                                    // bench samples per point at most (sessions stay small)
  double sweep_min_s = 0.5, sweep_max_s = 10;  // bench: kernel time at least, wall time at most, per point
  // The device's bench policy (Backend::bench_policy(); the seconds above start as its own).
  MeasurePolicy bench_policy = MeasurePolicy::bench();
  std::optional<SweepSpec> sweep;      // the sweep started last (its points fill Timings)
  SweepProgress sweep_progress;        // updated every frame
  std::optional<ProblemSpec> plot_at;  // the plots' reference problem while a sweep leads them
  // Plot settings.
  std::string marks_gpu = "h100";  // CPU backend: the catalog GPU of theoretical wave marks and occupancy
  TimingsY timings_y = TimingsY::Flops;
  std::optional<KernelTile> bars_baseline;  // pinned in the ladder chart
  bool roofline_this_shape = false;
  // DRAM bandwidth for the roofline (measured off the UI thread).
  std::optional<BandwidthResult> bandwidth;
  // Figures (rq::ExportFigure): one plot rendered offscreen at a chosen size and theme (PNG + CSV + JSON).
  std::string last_figure;  // the PNG written last
  // The occupancy calculator as drawn (tests compare it with app/core).
  struct OccupancyCalc {
    std::string gpu, kernel;
    int tile = 0;
    bool chosen = false;  // kernel and tile picked in the panel; until then they follow the problem's
    OccupancyInputs inputs;
    std::optional<OccupancyReport> report;
    std::string error;
    std::map<std::string, std::string> facts;  // key -> the text shown
  } occupancy_calc;
  std::map<std::string, Rect> plot_areas;  // each plot's area on screen last frame ("timings", "bars"...)
  // An axis label a plot chose to fit its room, and its length in pixels ("launches": the launch strip's).
  std::map<std::string, std::pair<std::string, float>> plot_labels;
  std::map<std::string, std::vector<std::array<double, 4>>> plot_limits;  // and its axes' limits (plots.hpp)
  // Cached plot data (plots.cpp: timings_of, bars_of, roofline_of).
  struct PlotCache {
    std::string timings_key, bars_key, roofline_key;
    TimingsData timings;
    BarsData bars;
    RooflineData roofline;
  } plots;

  // What was drawn last frame (snapshot checks and UI tests).
  std::map<std::string, PanelReport> panels;
  std::map<std::string, HeatmapReport> heatmap_reports;
  HoverReport hover;
  FileDialogReport file_dialog;
};

const KernelInfo* current_kernel(const AppState& s);

}  // namespace ts::ui

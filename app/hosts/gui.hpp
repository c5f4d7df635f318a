#pragma once
// [SECTION] The GUI's entry points: the interactive window, the offscreen snapshot and the frame benchmark.
// All three draw the same App frame (app.hpp).
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "gfx/headless.hpp"
#include "core/engine/sweep.hpp"
#include "core/io/view_settings.hpp"

struct GLFWwindow;

namespace ts::ui {

class App;

// For the UI tests: called with the app and its window once both exist (before the first frame), after every
// frame has been swapped (on the window's thread, so a test may resize the window here), and asked whether to
// keep going. The window's own loop is unchanged otherwise.
struct GuiHooks {
  std::function<void(App&, GLFWwindow*)> started;
  std::function<void(App&, GLFWwindow*)> after_swap;
  std::function<bool(App&)> keep_running;  // false: close as if the person quit
  std::function<void(App&)> before_exit;   // the last frame is done; settings are about to be saved
  bool poll_continuously = false;          // draw frames back to back even when idle (simulated input)
  // Tests that read no pixels of the window (the Test Engine checks what the app did, not what it looks
  // like): the frame is built and submitted to GL as always, but not rasterised into the window (software GL
  // spends most of a test's time there), except in a frame that a screenshot or a panel export reads back.
  bool unseen = false;
};

struct GuiOptions {
  std::shared_ptr<Backend> backend;
  std::string backend_note;
  GuiHooks hooks;
  std::string kernel_file;  // a person's own kernel to open at start (tilescope --kernel-file)
  bool log = false;         // the window's messages and every measured point also on stderr (tilescope --log)
  // Makes the engine a command starts ("": this machine's own backend) for File > Connect to engine...
  // (App::EngineFactory; empty: remote engines only).
  std::function<std::shared_ptr<Backend>(const std::string& command, std::string* note)> engine_factory;
  std::vector<std::string> also_engines;  // connected too at start (tilescope --also-engine), in this order
};

// Opens the window and runs until it is closed. Returns the process exit code. Throws gfx::DisplayError
// when there is no display. Settings (including the window's size and place) are read from and saved to
// config_dir(); the dock layout to imgui.ini beside them.
int run_gui(const GuiOptions& opt);

struct SnapshotOptions {
  std::shared_ptr<Backend> backend;
  std::string backend_note;
  RunRequest request;  // validated problem to show
  std::string out_png;
  int width = 1600, height = 1000;
  float scale = 1.0f;  // the content scale of the screen to imitate (2: a HiDPI screen)
  Theme theme = Theme::Dark;
  bool overwrite = false;
  std::string layout_json;                    // optional: the panels' and heatmaps' rectangles (for tests)
  gfx::GlChoice gl = gfx::GlChoice::Auto;     // offscreen context: EGL device, else GLFW/X11
  std::optional<std::array<double, 4>> zoom;  // heatmaps show rows [r0, r0 + rows) x cols [c0, c0 + cols)
  std::string export_dir;                     // also press every panel's "Export PNG + CSV" into this folder
  std::vector<std::string> front;             // panels to show in front of their tabs (throws ValidationError
                                              // naming one that is not a panel)
  std::string session;  // a saved session to show in the plots (read only; SessionError)
  // The algorithm views: the schedule replay at this time (ns after the first block start; a traced launch
  // is needed) and the pieces of A and B feeding tile (row, col) of C at k step `step` (0-based), slice
  // `slice` of split-K.
  std::optional<uint64_t> replay_at_ns;
  std::optional<double> replay_at_fraction;  // or at this fraction (0..1) of the launch
  struct FeedTile {
    int64_t row = 0, col = 0;
    int step = 0, slice = 0;
  };
  std::optional<FeedTile> feed;
};

// Renders the whole GUI offscreen after the run finishes, writes the PNG. Returns 0, or 1 when the run failed
// (the PNG still shows the error). Throws gfx::DisplayError.
int run_snapshot(const SnapshotOptions& opt);

struct AppState;

// The GUI's frame loop offscreen, for tests that drive it as a person does: edit state() as a panel would
// (panels edit AppState through pointers; a shape edited keeps the square mode with ui::keep_square, as the
// Controls do), then call frame(), which does what one frame of the window does:
// take a finished run, draw every panel, turn the edits into requests (auto-run, Run, Repeat). Starts showing
// `spec` with the default settings (auto-run on). Throws gfx::DisplayError when no offscreen GL exists.
class OffscreenGui {
 public:
  OffscreenGui(std::shared_ptr<Backend> backend, const ProblemSpec& spec, int width = 1280, int height = 800,
               gfx::GlChoice gl = gfx::GlChoice::Auto);
  ~OffscreenGui();
  OffscreenGui(const OffscreenGui&) = delete;
  OffscreenGui& operator=(const OffscreenGui&) = delete;
  AppState& state();
  void frame();

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

// GUI frame times while the engine re-runs a problem continuously (Repeat), drawn offscreen; and the time
// from committing a new size to its heatmaps and Result being on screen.
struct FrameBenchOptions {
  std::shared_ptr<Backend> backend;
  ProblemSpec spec;
  double seconds = 10;  // of frames with Repeat on, and until Repeat has re-run twice (0: none)
  int width = 1600, height = 1000;
  gfx::GlChoice gl = gfx::GlChoice::Auto;
  int commits = 0;  // > 0: also time this many commits, alternating spec.n and spec.n - 24 (square)
  // The window's sweep instead of Repeat: started as the Sweep panel starts it, frames drawn until it ends
  // (or sweep_limit_s, then cancelled); the DRAM bandwidth is measured first, as the Roofline panel does.
  std::optional<SweepSpec> sweep;
  bool sweep_quick = false;
  double sweep_min_s = 0.5, sweep_max_s = 10;  // the Sweep panel's bench policy fields
  double sweep_limit_s = 600;
  std::string sweep_session_out;  // the window's session after the sweep (for tilescope figure --session)
  // > 0 with a kernel file: also time this many saves of (a copy of) the person's kernel file, from the save
  // to the new build's heatmaps drawn: half of them written by another program (the watcher notices them),
  // half saved from the window's editor.
  int saves = 0;
  std::string kernel_file;
};
struct FrameBenchResult {
  std::vector<double> frame_ms;  // wall time of each frame, glFinish included
  // Where each frame's time went: taking a finished run, building the UI (panels, heatmap refreshes),
  // submitting the draw, waiting for the GPU to draw it (glFinish); and whether a new result arrived in it.
  struct Phases {
    double pump_ms = 0, ui_ms = 0, render_ms = 0, finish_ms = 0;
    bool new_result = false;
  };
  std::vector<Phases> phases;
  int runs = 0;  // runs completed while measuring
  struct SweepRun {
    bool ran = false;
    std::string describe, policy, state, error;
    int done = 0, failed = 0, total = 0;
    double seconds = 0;  // from the request to the last point in
    double dram_gbs = 0;
    int64_t frames = 0;  // frames drawn during the sweep (at most 4 a second while a kernel was timed)
  } sweep;
  std::vector<double> commit_ms;  // commit -> the new result's heatmaps and Result drawn
  // A remote engine: the bytes its link carried per commit, each way (the run, its result and the views).
  double commit_bytes_in = 0, commit_bytes_out = 0;
  struct Save {
    bool editor = false;    // saved from the window's editor (else written by another program)
    double noticed_ms = 0;  // the change seen (the watcher polls every second)
    double built_ms = 0;    // the new build registered (compiled by NVRTC)
    double drawn_ms = 0;    // its run's heatmaps and Result drawn
  };
  std::vector<Save> saves;
  std::string gl_context, gl_renderer, interop_why, heatmap_state;
  bool interop = false;
};
FrameBenchResult run_frame_bench(const FrameBenchOptions& opt);

}  // namespace ts::ui

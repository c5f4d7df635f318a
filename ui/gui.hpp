#pragma once
// [SECTION] The GUI: the interactive window and the offscreen snapshot share one frame function.
#include <memory>
#include <string>

#include <array>
#include <optional>
#include <vector>

#include "backend.hpp"
#include "headless.hpp"

namespace ts::ui {

struct GuiOptions {
  std::shared_ptr<Backend> backend;
  std::string backend_note;
};

// Opens the window and runs until it is closed. Returns the process exit code. Throws gfx::DisplayError
// when there is no display.
int run_gui(const GuiOptions& opt);

struct SnapshotOptions {
  std::shared_ptr<Backend> backend;
  std::string backend_note;
  RunRequest request;  // validated problem to show
  std::string out_png;
  int width = 1600, height = 1000;
  bool overwrite = false;
  std::string layout_json;                 // optional: where to write the rectangles of panels and heatmaps
  gfx::GlChoice gl = gfx::GlChoice::Auto;  // offscreen context: EGL device, else GLFW/X11
  std::optional<std::array<double, 4>> zoom;  // heatmaps show rows [r0, r0 + rows) x cols [c0, c0 + cols)
  std::string export_dir;                     // also press every panel's "Export PNG + CSV" into this folder
};

// Renders the whole GUI offscreen (hidden window + framebuffer) after the run finishes, writes the PNG.
// Returns 0, or 1 when the run failed (the PNG still shows the error). Throws gfx::DisplayError.
int run_snapshot(const SnapshotOptions& opt);

struct AppState;

// The GUI's frame loop offscreen, for tests that drive it as a person does: edit state() as a panel would
// (panels edit AppState through pointers), then call frame(), which does what one frame of the window does:
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

// GUI frame times while the engine re-runs a problem continuously (Repeat), drawn offscreen.
struct FrameBenchOptions {
  std::shared_ptr<Backend> backend;
  ProblemSpec spec;
  double seconds = 10;
  int width = 1600, height = 1000;
  gfx::GlChoice gl = gfx::GlChoice::Auto;
};
struct FrameBenchResult {
  std::vector<double> frame_ms;  // wall time of each frame, glFinish included
  int runs = 0;                  // runs completed while measuring
  std::string gl_context, gl_renderer, interop_why, heatmap_state;
  bool interop = false;
};
FrameBenchResult run_frame_bench(const FrameBenchOptions& opt);

}  // namespace ts::ui

#pragma once
// [SECTION] The GUI: the interactive window and the offscreen snapshot share one frame function.
#include <memory>
#include <string>

#include "backend.hpp"

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
  std::string layout_json;  // optional: where to write the rectangles of panels and heatmaps
};

// Renders the whole GUI offscreen (hidden window + framebuffer) after the run finishes, writes the PNG.
// Returns 0, or 1 when the run failed (the PNG still shows the error). Throws gfx::DisplayError.
int run_snapshot(const SnapshotOptions& opt);

}  // namespace ts::ui

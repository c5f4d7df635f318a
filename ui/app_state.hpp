#pragma once
// [SECTION] What the panels read and edit. Panels never call CUDA or the backend directly: they edit
// `settings`, set request flags, and read the latest outcome; gui.cpp turns edits into RunQueue requests.
#include <array>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "settings.hpp"
#include "timing_history.hpp"

namespace ts::gfx {
class HeatmapContext;
}

namespace ts::ui {

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
};

struct AppState {
  Settings settings;
  std::vector<KernelInfo> kernels;  // the backend's registry

  // Backend identity, shown in the status bar.
  std::string backend_kind;  // "cuda" or "cpu"
  std::string device_name;
  std::string backend_note;  // why the CPU backend was chosen, if it was chosen automatically
  std::string gl_renderer;
  // Heatmaps: interop with CUDA when the GL context runs on the engine's GPU, else through host memory.
  std::shared_ptr<gfx::HeatmapContext> heatmaps;
  std::string gl_context;  // offscreen: which context (EGL device, GLFW/X11)
  std::optional<std::array<double, 4>>
      zoom_request;  // heatmaps: show rows [r0, r0+rows) x cols [c0, c0+cols)

  // Run state (written by gui.cpp).
  bool busy = false;
  std::optional<RunResult> result;  // the latest successful run
  uint64_t result_serial = 0;       // increments with every new result (views re-upload on change)
  std::string last_error;           // the latest failed request, cleared by the next success
  bool last_error_is_input = false;

  TimingHistory history;  // every timed launch of the session, per configuration
  bool repeat = false;    // keep re-running the current problem (the Timings panel scrolls)

  // Requests from panels (read and cleared by gui.cpp).
  bool run_requested = false;
  // A panel asked to be exported: its PNG (a crop of the frame) and its data as CSV, next frame.
  struct ExportRequest {
    std::string panel;  // window name, for the crop
    std::string stem;   // file name stem, e.g. "timings"
    std::string csv;
  };
  std::optional<ExportRequest> export_request;
  std::set<std::string> export_pending;  // panels to export as if their button were pressed (snapshot)
  bool screenshot_requested = false;
  bool quit_requested = false;

  std::string status_message;  // e.g. where a screenshot went
  double status_time = 0;

  // Screen rectangles of what was drawn last frame (panels, heatmap plots), for snapshot checks.
  std::map<std::string, Rect> layout;
  std::map<std::string, std::string> panel_state;  // e.g. "needs a GPU", for snapshot checks
};

const KernelInfo* current_kernel(const AppState& s);

}  // namespace ts::ui

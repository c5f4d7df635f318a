#pragma once
// One panel per file, all registered in register_panels() (panels.cpp). draw() wraps Begin/End around
// draw_content() and records the window's rectangle.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app_state.hpp"

namespace ts::ui {

class Panel {
 public:
  virtual ~Panel() = default;
  virtual const char* name() const = 0;
  // Default placement as fractions of the main viewport (used the first time, then the saved layout).
  virtual Rect default_rect(float width, float height) const = 0;
  virtual int window_flags() const { return 0; }
  void draw(AppState& s);

 protected:
  virtual void draw_content(AppState& s) = 0;
};

std::vector<std::unique_ptr<Panel>> register_panels();

// Panel factories (one per file).
std::unique_ptr<Panel> make_controls_panel();
std::unique_ptr<Panel> make_matrices_panel();
std::unique_ptr<Panel> make_result_panel();
std::unique_ptr<Panel> make_status_bar();
std::unique_ptr<Panel> make_timings_panel();
std::unique_ptr<Panel> make_occupancy_panel();
std::unique_ptr<Panel> make_schedule_panel();

// "Export PNG + CSV" button shared by the profiler panels: asks gui.cpp to crop this window and write the
// CSV.
void export_button(AppState& s, const char* panel, const char* stem, const std::function<std::string()>& csv);
// The "this needs a GPU" state of the profiler panels on the CPU backend. Returns true when it was shown.
bool needs_gpu_notice(AppState& s, const char* panel, const char* what);

// Small shared widgets.
void spinner(const char* id, float radius, bool active);
void help_marker(const char* text);

}  // namespace ts::ui

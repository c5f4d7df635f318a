#pragma once
// One panel per file, all registered in register_panels() (panels.cpp). draw() wraps Begin/End around
// draw_content(), honours the View menu's show/hide, and reports the window's rectangle and whether any of
// its content was cut off at the right edge (the layout tests read that).
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "ui/app_state.hpp"
#include "ui/frame_report.hpp"

namespace ts::ui {

class Panel {
 public:
  virtual ~Panel() = default;
  virtual const char* name() const = 0;
  virtual int window_flags() const { return 0; }
  // `out`: what it drew, for the layout, the frame's host and the tests (never read back into `s`).
  void draw(AppState& s, FrameReport& out);
  // Drops the GL resources the panel holds (textures): the GL context is about to be rebuilt. They are made
  // again when the panel next draws.
  virtual void release_gl() {}

 protected:
  virtual void draw_content(AppState& s, FrameReport& out) = 0;
};

std::vector<std::unique_ptr<Panel>> register_panels();

// Panel factories (one per file).
std::unique_ptr<Panel> make_controls_panel();
std::unique_ptr<Panel> make_matrices_panel();
std::unique_ptr<Panel> make_result_panel();
std::unique_ptr<Panel> make_timings_panel();
std::unique_ptr<Panel> make_occupancy_panel();
std::unique_ptr<Panel> make_schedule_panel();
std::unique_ptr<Panel> make_messages_panel();
std::unique_ptr<Panel> make_sweep_panel();
std::unique_ptr<Panel> make_roofline_panel();
std::unique_ptr<Panel> make_kernel_panel();         // Your kernel
std::unique_ptr<Panel> make_kernel_editor_panel();  // Kernel source
std::unique_ptr<Panel> make_sass_panel();           // SASS: the machine code

// "Export PNG + CSV" button shared by the profiler panels: asks the frame loop to crop this window and write
// the CSV.
void export_button(AppState& s, const char* panel, const char* stem, const std::function<std::string()>& csv);
// What a picture panel shows instead of its pictures when OpenGL failed its self-check (AppState::gl):
// returns true when it was shown (the panel draws nothing else).
bool gl_damage_notice(AppState& s, const char* what);
// The "this needs a GPU" state of the profiler panels on the CPU backend. Returns true when it was shown.
bool needs_gpu_notice(AppState& s, FrameReport& out, const char* panel, const char* what);

// [SECTION] Small shared widgets.
void spinner(const char* id, float radius, bool active);
void help_marker(const char* text);
// One line of text that never runs past the available width: elided with "..." and the whole text in a
// tooltip when it does not fit. colour: nullptr for the default. `hover`: more to show in the tooltip (below
// the whole text where it was elided), shown whenever the line is hovered; returns whether it was.
bool text_fit(const std::string& text, const ImVec4* colour = nullptr, float width = -1,
              const std::function<void()>& hover = {});
// A two-column table of facts: keys in the muted colour, as wide as the widest key (at most 45 % of the
// panel); values wrap inside their column, so nothing is cut off however narrow the panel gets.
bool begin_facts(const char* id, std::initializer_list<const char*> keys);
// Text wrapped to the space left on the line, broken at spaces only, a number kept with its unit
// (wrap_at_spaces): never "71." on one line and "17 us" on the next, nor "1." and ".1024". colour: nullptr
// for the default.
void text_lines(const std::string& text, const ImVec4* colour = nullptr);
void fact(const char* key, const std::string& value, const ImVec4* colour = nullptr);
inline void end_facts() {
  ImGui::EndTable();
}
// Wrapped text in the muted colour.
void text_muted_wrapped(const char* text);
// Call between two items: puts the next one on the same line when `next_width` pixels still fit before the
// window's right edge, else lets it start a new line (rows of buttons wrap instead of being cut off).
bool same_line_if_fits(float next_width);
// The width of a SmallButton / Button with this label.
float small_button_width(const char* label);
float button_width(const char* label);

// Draws a texture whose texel row 0 is the first (top) row of its data over the plot rectangle
// [x0, x1) x [y0, y1) of the current plot, whose row axis points down (ImPlotAxisFlags_Invert on y). Every
// image panel (heatmaps, the tile grid, the SM timeline) goes through here, so orientation is decided once:
// ImPlot::PlotImage puts the texture's first row at y1 (the bottom on an inverted axis), so the v coordinates
// are swapped.
void draw_rows_down(const char* id, unsigned texture, double x0, double y0, double x1, double y1);

}  // namespace ts::ui

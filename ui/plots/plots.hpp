#pragma once
// [SECTION] Every plot of issue #11 is drawn by exactly one function here, called by its panel (interactive:
// tooltips on hover, clicks) and by the offscreen figure renderer (figure_render.hpp: no buttons, tooltips or
// menus) alike, so what is exported is what is seen. The data come from app/core/plots/plot_data.hpp; the
// helpers at the end build them from the window's state (with a cache: a plot's data are rebuilt only when a
// session, the problem or a plot setting changes).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <imgui.h>

#include "ui/app_state.hpp"
#include "ui/frame_report.hpp"
#include "core/plots/plot_data.hpp"
#include "gfx/texture.hpp"

namespace ts::ui {

struct PlotStyle {
  bool interactive = true;  // false: a figure (no tooltips, no clicks, no context menus)
};

// What a plot drew: the main plot's area on screen and the colour of each series (a figure's sidecar records
// them, so a test can look for a series' pixels inside the area).
struct PlotReport {
  Rect area;
  // The Timings plot's launch strip (first row): its plot area and the axis label it drew, with that label's
  // length in pixels (the label runs up the axis: it must fit the area's height).
  Rect launches_area;
  std::string launches_label;
  float launches_label_px = 0;
  std::vector<std::pair<std::string, ImVec4>> colours;
  // Each plot's axis limits as drawn this frame (x_lo, x_hi, y_lo, y_hi; the rows of a grid in order): the UI
  // tests check that they stay on the data over many frames.
  std::vector<std::array<double, 4>> limits;
  // Small multiples (the replay's strip): each picture's rectangle, in order.
  std::vector<Rect> panels;
  int wave_labels = 0;    // the Timings plot: "k waves" labels drawn beside its wave marks
  int legend_hidden = 0;  // the Timings plot: legend entries under "+k more" (a low plot's legend rows)
};

// A configuration's colour (its ladder index); cuBLAS is always the palette's reference colour.
ImVec4 series_colour(int ladder_index, bool reference);

// Time and FLOP/s against the size that varies, each run a point, a line through the newest point per size,
// the current configuration highlighted, cuBLAS as the reference curve, wave marks, and beside it the
// distribution of the current point's launches (box and strip). `size`: as ImPlot sizes (-1 fills).
PlotReport draw_timings(const TimingsData& d, TimingsY y, ImVec2 size, const PlotStyle& st);
// The tooltip of one point of the Timings plot: size, median time and FLOP/s, IQR, samples, SM clock, date;
// the cuBLAS time beside it (interleaved or timed on its own), with both SM clocks and whether they differ
// by more than 1 %; the frames the window drew while it was timed.
std::string point_tooltip(const TimingsCurve& c, const ScalingPoint& p, const TimingsData& d);
// The ladder at one shape: horizontal bars of FLOP/s in registry order, IQR whiskers, the value and the
// speedup against the baseline on each bar. clicked_row: the row clicked (pin as baseline), interactive only.
PlotReport draw_bars(const BarsData& d, ImVec2 size, const PlotStyle& st, int* clicked_row = nullptr);
// Log-log roofline: roofs (FP32, TF32, DRAM measured, datasheet), points by estimated intensity with a
// whisker to the compulsory-traffic intensity.
PlotReport draw_roofline(const RooflineData& d, ImVec2 size, const PlotStyle& st);
// Occupancy (% of the SM's warps) against every tile of the kernel, the current tile highlighted.
PlotReport draw_occupancy(const OccupancyData& d, ImVec2 size, const PlotStyle& st);

// The measured tile schedule: the tile grid coloured by SM, start time or duration, tiles per SM over time,
// tiles resident over time. Colours the aggregates the engine prepared with the trace (TileTrace::view,
// prepare_schedule_view) into textures it owns (a GL context must be current): a lookup per tile and per
// gantt bin, cheap enough for the frame a new result arrives in.
// An SM's colour in the Tile schedule's map and in the replay (the same for both): SMs spread over ImPlot's
// Spectral map so neighbours differ. RGBA packed as ImGui packs it.
uint32_t sm_colour(uint32_t sm, int sm_count, uint8_t alpha = 255);

// What the schedule replay adds to the Tile schedule's plots: its layer over the tile grid (drawn inside the
// grid's plot, in tile units) and the replay's time as a line on the timeline and the resident curve.
struct ScheduleOverlay {
  std::function<void()> over_grid;
  double cursor_us = -1;  // < 0: none
};

class SchedulePlot {
 public:
  enum class ColorBy { Sm = 0, Start = 1, Duration = 2 };
  // Recolours when the trace (serial) or the colouring changed. Returns false (see summary().problem) when
  // the trace is inconsistent.
  bool update(const TileTrace& t, uint64_t serial, ColorBy mode);
  const ScheduleSummary& summary() const { return m_summary; }
  PlotReport draw(const TileTrace& t, ImVec2 size, const PlotStyle& st,
                  const ScheduleOverlay* overlay = nullptr);

 private:
  ColorBy m_mode = ColorBy::Sm;
  bool m_built = false;
  uint64_t m_serial = 0;
  int m_sms = 1;
  ScheduleSummary m_summary;
  std::shared_ptr<const ScheduleView> m_view, m_local;  // the engine's, or made here for a trace without one
  gfx::Texture2D m_grid, m_gantt;
};

// [SECTION] The plots' data from the window's state, cached in AppState::plots. The reference problem is the
// Controls' problem, or the sweep's while a sweep leads the plots (AppState::plot_at).
ProblemSpec plot_reference(const AppState& s);
const TimingsData& timings_of(AppState& s);
const BarsData& bars_of(AppState& s);
const RooflineData& roofline_of(AppState& s);
// The occupancy calculator's GPU on the CPU backend (AppState::marks_gpu); the measured device on a GPU.
GpuModel calculator_gpu(const AppState& s);
// A title saying what the figure shows, from the window's state (the Export figure dialog starts from it).
std::string figure_title(AppState& s, PlotKind plot);
// The occupancy plot's data in the window: the run's figures on a GPU, the calculator's GPU otherwise.
OccupancyData occupancy_of(const AppState& s);
// The figure's metadata for a plot drawn from the window's state (overlays, the sweep, the policy).
FigureMeta figure_meta_of(const AppState& s, PlotKind plot, const std::vector<size_t>& records);

// [SECTION] "Export figure..." next to a plot: a small button and its pop-up (size: 1920 x 1080, 2x or 3x of
// the plot on screen, or typed; dark or light; title). Pressing Export asks for rq::ExportFigure. `also`: a
// second plot the pop-up offers (the Tile schedule's replay, with its moments and animated WebP).
void figure_button(AppState& s, PlotKind plot, const char* id, ImVec2 on_screen,
                   std::optional<PlotKind> also = std::nullopt);

}  // namespace ts::ui

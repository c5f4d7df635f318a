#pragma once
// [SECTION] What the frame drew last (its rectangles, the heatmaps' coordinates, the element under the mouse,
// a dialog's rows, the plots' areas and the occupancy calculator's figures): filled by the panels while they
// draw, read by the layout and the frame's host (a panel's export crop) in the next frame, and by the UI
// tests and `snapshot --layout-json`. Not model state: App owns it (App::report()) and hands it to the
// panels' draw functions beside the AppState; nothing in it is ever read back into the model.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/occupancy.hpp"
#include "core/plots/heatmap.hpp"

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
  std::string text;   // the status bar: what it says this frame; the Occupancy panel: its build sentence
  std::map<std::string, std::string> facts;  // the Occupancy panel: the timed launch's facts as drawn
};

// One heatmap's plot area and the element coordinates at its edges (x = column, y = row; y0 is the top edge):
// a test turns (row, col) into a pixel with these.
struct HeatmapReport {
  Rect plot;
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  float shown_lo = 0, shown_hi = 0;  // the colour scale
  float scale_w = 0;                 // the colour scale's width beside the plot (px)
  bool drawn = false;                // a picture was drawn
  bool pending = false;  // a remote engine's view is on its way (drawn: an earlier view of the same matrices)
  bool coarse = false;   // drawn: a remote engine's coarse view, asked first over a slow link (pending too)
  LodRegion region;      // the elements the picture drawn shows, and its values (w x h)
};

// The element under the mouse in a heatmap, as the tooltip shows it (tests read it back).
struct HoverReport {
  std::string map;  // "A", "B", "C = A B", "C - reference"; empty: nothing hovered this frame
  int64_t row = -1, col = -1;
  bool ready = false;  // the value has arrived (GPU reads take a frame or two)
  float value = 0;
};

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

// The occupancy calculator as drawn (tests compare it with app/core): the GPU, kernel and tile it showed, the
// what-if inputs, and the figures (or why there are none).
struct OccupancyCalcReport {
  std::string gpu, kernel;
  int tile = 0;
  OccupancyInputs inputs;
  std::optional<OccupancyReport> report;
  std::string error;
  std::map<std::string, std::string> facts;  // key -> the text shown
};

// The Result panel's fastest rung as drawn (tests read it): the whole line (RungRanking::line(); the row
// shows its body() after the key "fastest rung"), whether that was cut short to fit, whether its ranking was
// shown on hover this frame (and how many configurations it listed), where the line is, and the button that
// measures the missing configurations ("": none).
struct RungLineReport {
  std::string line;
  bool elided = false, hovered = false;
  int hover_rows = 0;
  Rect rect;
  std::string button;
};

struct FrameReport {
  std::map<std::string, PanelReport> panels;      // by window name ("Status": the status bar)
  std::map<std::string, HeatmapReport> heatmaps;  // "heatmap A", "heatmap C = A B", ...
  HoverReport hover;
  FileDialogReport file_dialog;
  OccupancyCalcReport occupancy_calc;
  RungLineReport rung_line;                // empty line: not drawn this frame
  std::map<std::string, Rect> plot_areas;  // each plot's area on screen ("timings", "bars", "launches"...)
  // An axis label a plot chose to fit its room, and its length in pixels ("launches": the launch strip's).
  std::map<std::string, std::pair<std::string, float>> plot_labels;
  std::map<std::string, std::vector<std::array<double, 4>>> plot_limits;  // and its axes' limits (plots.hpp)
  int timings_wave_labels = 0;  // the Timings plot's "k waves" labels drawn this frame (its marks: td.marks)
  int timings_legend_hidden = 0;  // the Timings plot's legend entries folded into "+k more" this frame
};

}  // namespace ts::ui

#pragma once
// [SECTION] Figures worth publishing: what an exported plot says about itself, and every number behind it.
// The renderer (ui/, offscreen) draws one plot at a chosen size and theme and writes the PNG; this file makes
// the title, the caption line, the CSV and the JSON sidecar that go with it, and the never-overwriting names
// of the three files.
//   FigureMeta          device, driver and CUDA versions, SM clock, kernel, tile, shape, input, policy,
//                       TileScope version and commit, date, size, theme, notes
//   caption_line        one line under the plot saying all that
//   FigureData          meta + named series of numeric rows (full precision)
//   figure_sidecar/csv  the JSON sidecar and the CSV
//   figure_names        tilescope-<plot>-<date>-<time>[-n].{png,csv,json}, taken exclusively (NewNames)
//   flops_unit/time_unit  units that keep the largest value readable (GFLOP/s rather than 0.004 TFLOP/s)
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/backend.hpp"
#include "core/io/files.hpp"
#include "core/io/session.hpp"

namespace ts {

// Replay: the traced launch replayed on the tile grid of C (replay_figure.hpp), a strip of moments and, when
// asked, an animated WebP beside the PNG.
enum class PlotKind { Timings, Bars, Roofline, Occupancy, Schedule, Replay };
const char* to_string(PlotKind p);  // "timings", "bars", "roofline", "occupancy", "schedule", "replay"
PlotKind parse_plot_kind(const std::string& s);  // throws ValidationError listing the kinds

enum class FigureTheme { Dark, Light };
const char* to_string(FigureTheme t);                  // "dark", "light"
FigureTheme parse_figure_theme(const std::string& s);  // throws ValidationError

struct FigureSize {
  int width = 1920, height = 1080;
};
inline constexpr int kMinFigureSide = 320, kMaxFigureSide = 8192;
// "1920x1080", or "2x" / "3x" of `on_screen` (the plot's size in the window). Throws ValidationError for
// anything else, or a result outside kMinFigureSide..kMaxFigureSide on either side.
FigureSize parse_figure_size(const std::string& text, FigureSize on_screen);

struct FigureMeta {
  PlotKind plot = PlotKind::Timings;
  std::string title;
  FigureTheme theme = FigureTheme::Dark;
  FigureSize size;
  std::string backend, device, driver, cuda_runtime;
  double sm_clock_mhz = 0;  // median SM clock over the points shown (0: not recorded, e.g. the CPU backend)
  bool throttled = false;   // a point shown was throttled
  ProblemSpec spec;         // the current configuration (highlighted in the plot)
  std::string policy;       // how the points were measured
  std::string sweep;        // the sweep behind the plot, if any
  std::string program_version, commit;
  std::string date;                   // UTC ISO 8601, when the figure was made
  std::vector<std::string> overlays;  // labels of other sessions drawn in the plot
  std::vector<std::string> notes;     // e.g. the roofline's traffic estimate, in words
};

// Meta for a plot of `spec` measured on `device`: versions, TileScope version and commit, and the date now.
// sm_clock_mhz and throttled come from the records shown (`records` indexes into s.records; empty: all).
FigureMeta figure_meta(PlotKind plot, const Session& s, const ProblemSpec& spec,
                       const std::vector<size_t>& records = {});
// A default title: "tiled T=32: time and TFLOP/s against M = N = K" and the like.
std::string default_title(PlotKind plot, const ProblemSpec& spec);
// "NVIDIA H100 80GB HBM3 | driver 580.159.04, CUDA 13.0 | runtime 13.0 | SM 1980 MHz | tiled T=32 |
//  4096 x 4096 x 4096 | random, seed 1 | TileScope 0.1.0 (abc123) | 2025-01-31T12:00:00Z"
std::string caption_line(const FigureMeta& m);

// One named table of numbers: a series of the plot (a kernel x tile, a roof, a histogram...).
struct FigureSeries {
  std::string label;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;  // rows[i].size() == columns.size()
};
struct FigureData {
  FigureMeta meta;
  std::vector<FigureSeries> series;
};
// Series from the plot data of session.hpp (every field a plot draws or shows on hover).
FigureSeries figure_series(const ScalingSeries& s);  // x, median_ms, p25_ms, p75_ms, tflops, samples, clock
FigureSeries figure_series(const std::vector<LadderBar>& bars, const std::string& label);

// {"meta": {...every FigureMeta field, caption...}, "series": [{"label", "columns", "rows"}]}. Doubles at
// round-trip precision. Throws std::invalid_argument when a row's length differs from its columns'.
nlohmann::json figure_sidecar(const FigureData& d);
// "# key,value" lines for the meta, then "series,<columns>" and one line per row, numbers as %.17g.
std::string figure_csv(const FigureData& d);

struct FigurePaths {
  std::filesystem::path png, csv, json;
  std::filesystem::path webp;  // the animation's (empty: none asked for)
};
// In `dir`: tilescope-<plot>-YYYYmmdd-HHMMSS[-n] with .png, .csv and .json, taken together and exclusively
// (files.hpp: two figures in the same second, in one process or two, get -2, -3). Write them with
// Replace::Reserved while the NewNames lives.
// `webp`: a fourth name, .webp, taken with the others (the replay's animation).
NewNames figure_names(const std::filesystem::path& dir, PlotKind plot, std::time_t when = std::time(nullptr),
                      bool webp = false);
FigurePaths figure_paths(const NewNames& names);
// Writes the CSV and the JSON sidecar into their reserved names. The PNG is the renderer's.
void write_figure_data(const FigurePaths& paths, const FigureData& d);

struct Unit {
  double scale = 1;  // multiply a value in the base unit by this
  std::string name;
};
// FLOP/s: TFLOP/s, GFLOP/s or MFLOP/s, whichever shows `max_flops_per_s` as at least 1 (PFLOP/s never).
Unit flops_unit(double max_flops_per_s);
// Milliseconds in: s, ms or us, whichever shows `max_ms` as at least 1 and under 1000 where possible.
Unit time_unit(double max_ms);
// One value in the unit that keeps it readable, for text people read (the window's, the command line's):
// "10.2 GFLOP/s" rather than "0.010 TFLOP/s", "74.7 us" rather than "0.0747 ms". Machine-readable outputs
// (CSV, JSON) keep fixed units named in their fields.
std::string format_flops(double flops_per_s, const char* fmt = "%.3g");
std::string format_ms(double ms, const char* fmt = "%.4g");

}  // namespace ts

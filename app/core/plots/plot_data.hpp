#pragma once
// [SECTION] What each plot shows, as plain data (no ImGui): built from sessions with session.hpp's functions,
// drawn by ui/plots/plots.cpp (one drawing function per plot, used by its panel and by the offscreen figure
// alike), and written into the figure's CSV and JSON sidecar with every number at full precision.
//   TimingsData    time and FLOP/s against the size that varies, one curve per kernel x tile (and session),
//                  the current configuration highlighted, cuBLAS as the reference, the current point's
//                  launches, wave marks
//   BarsData       the ladder at one shape: a bar per kernel x tile in registry order, IQR whiskers, speedups
//                  against a pinned baseline
//   RooflineData   every measured point by estimated arithmetic intensity against achieved FLOP/s, under the
//                  compute roofs of the device and the DRAM roof of the measured bandwidth
//   OccupancyData  occupancy against every tile of one kernel, on the measured device or a catalog GPU
//   *_figure       the FigureData (meta + series) behind each plot
// Colours: a configuration's colour is its place in the ladder (registry order, tiles ascending), so it keeps
// one colour in every plot.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/plots/figure.hpp"
#include "core/engine/gpu_catalog.hpp"
#include "core/plots/roofline.hpp"
#include "core/engine/schedule.hpp"
#include "core/io/session.hpp"
#include "core/engine/sweep.hpp"

namespace ts {

// The configuration's place in the ladder (registry order, tiles ascending); configurations the registry does
// not know come after, by first appearance (-1 here: the caller picks).
int ladder_index(const std::vector<KernelInfo>& ladder, const KernelTile& c);
bool is_reference(const std::string& kernel);  // cublas, cublas_tf32

// [SECTION] Wave marks on a size axis.
struct WaveMarkSet {
  KernelTile config;
  std::string source;  // "NVIDIA H100 80GB HBM3: measured device" or "THEORETICAL: NVIDIA L4 (no GPU used)"
  bool theoretical = false;
  std::string gpu;  // the GPU's name
  std::vector<WaveMark> marks;
  std::string note;  // why there are none, when there are none
};
// From the session's own records: the configuration's tiling and blocks per SM as recorded at the largest
// size on the axis, and the device's SM count. Empty (with a note) on the CPU backend, for cuBLAS, or along
// an axis no sweep shape follows.
WaveMarkSet measured_wave_marks(const Session& s, ScaleAxis axis, const ProblemSpec& at, const KernelTile& c,
                                int64_t from, int64_t to);
// What a catalog GPU would show (build-time registers and shared memory, the calculator): THEORETICAL.
WaveMarkSet catalog_wave_marks(const std::vector<BuildResource>& table, const GpuModel& gpu, ScaleAxis axis,
                               const ProblemSpec& at, const KernelTile& c, int64_t from, int64_t to);

// [SECTION] Timings against the size that varies.
enum class TimingsY { Flops, Time, Both };
const char* to_string(TimingsY y);               // "flops", "time", "both"
TimingsY parse_timings_y(const std::string& s);  // throws ValidationError

struct TimingsCurve {
  size_t session = 0;              // 0: the current session; >= 1: an overlay
  ScalingSeries series;            // every run a point, sorted by x
  std::vector<ScalingPoint> line;  // the newest point at each x (the line through the runs)
  std::string label;               // "tiled T=32", or "tiled T=32 [<overlay label>]"
  int colour = 0;                  // ladder_index
  bool current = false;            // the configuration being looked at (of the current session)
};

struct TimingsData {
  ScaleAxis axis = ScaleAxis::Square;
  std::string axis_label;  // "N = K (M = 1024)"
  double x_current = 0;    // the current problem on the axis
  std::vector<TimingsCurve> curves;
  Unit time, flops;  // units that keep the curves' largest value readable
  // The current problem's latest record in the current session: its launches, for the distribution beside
  // the plot.
  std::optional<size_t> current_record;
  std::vector<double> current_samples_ms;
  SampleStats current_stats;
  double current_flops = 0;  // FLOPs of the current problem (2 M N K), for launches as FLOP/s
  // The launches' own units (the strip beside the curves has an axis of its own): drawn with no curve, a
  // 15 TFLOP/s kernel's launches read "1.46e+07 MFLOP/s" in the curves' unit of nothing.
  Unit launch_time, launch_flops;
  std::string current_label;
  WaveMarkSet marks;            // filled by the caller (measured or theoretical)
  std::vector<size_t> records;  // records of the current session drawn (figure meta)
  double x_lo = 0, x_hi = 0;    // range of the points (0, 0: none)
  int unverified = 0;           // timed runs of the current session left out: they failed verification
  int impossible = 0;  // points drawn apart (hollow, red): their time cannot be right (RunRecord::impossible)
  bool empty() const { return curves.empty(); }
};
// The legend's and the figure's words for impossible points.
inline constexpr const char* kImpossibleLabel = "impossible (not a record)";
TimingsData timings_data(const SessionSet& sessions, const ProblemSpec& at,
                         const std::vector<KernelInfo>& ladder);

// [SECTION] The ladder at one shape.
struct BarsData {
  std::string shape;                        // "4096 x 4096 x 4096"
  std::vector<KernelTile> configs;          // rows, ladder order, every configuration any session has here
  std::vector<std::string> labels;          // "tiled T=32"
  std::vector<int> colours;                 // ladder_index
  std::vector<std::string> session_labels;  // one per session drawn
  std::vector<std::vector<std::optional<LadderBar>>> bars;  // [session][row]
  int baseline = -1;                                        // row of the baseline (the current session's bar)
  std::vector<std::string> speedups;                        // [row] of the current session, against it
  int current = -1;                                         // row of the current configuration
  Unit flops;
  std::vector<size_t> records;
  bool empty() const { return configs.empty(); }
};
// baseline: the pinned configuration; when it has no bar at this shape, the first tiled bar, else the first.
BarsData bars_data(const SessionSet& sessions, const ProblemSpec& at, const std::vector<KernelInfo>& ladder,
                   const std::optional<KernelTile>& baseline);

// [SECTION] Roofline.
struct RoofPoint {
  size_t session = 0, record = 0;
  KernelTile config;
  ProblemSpec spec;
  RooflinePoint p;
  int colour = 0;
  bool current = false, reference = false, tf32 = false;
  double median_ms = 0;
};
struct RooflineData {
  Roofs roofs;                                  // of the current session's device
  std::vector<std::pair<double, double>> fp32;  // roof polylines (intensity, FLOP/s); empty: unknown
  std::vector<std::pair<double, double>> tf32;
  std::vector<std::pair<double, double>> dram;  // the measured bandwidth alone (no compute roof known)
  std::vector<std::pair<double, double>> dram_datasheet;
  double x_lo = 0.1, x_hi = 1000, y_lo = 1e9, y_hi = 1e15;  // axes (FLOP per byte, FLOP/s)
  std::vector<RoofPoint> points;
  std::vector<std::string> session_labels;
  std::vector<std::string> notes;  // what is estimated and where each roof comes from
  std::vector<size_t> records;
  Unit flops;
};
// Every timed, verified point of every session (this_shape_only: those at the current shape), placed under
// the roofs of the current session's device with DRAM bandwidth `dram_gbs` (0: not measured: the
// datasheet's).
RooflineData roofline_data(const SessionSet& sessions, const ProblemSpec& at,
                           const std::vector<KernelInfo>& ladder, double dram_gbs, bool this_shape_only);

// [SECTION] Occupancy against every tile of a kernel.
struct TileOccupancy {
  int tile = 0;
  OccupancyReport report;
  std::string error;  // does not fit, or not in the build-time table
};
struct OccupancyData {
  std::string gpu;           // the GPU's name
  bool theoretical = false;  // from the catalog and the build-time table (no GPU used)
  std::string kernel;
  int current_tile = 0;
  int64_t m = 0, n = 0;  // the shape the waves are for
  std::vector<TileOccupancy> tiles;
  std::string note;  // e.g. which architecture's registers stand in
  bool empty() const { return tiles.empty(); }
};
// THEORETICAL: every tile of `k` on `gpu`, from the build-time table (aligned variant) and the calculator.
// `table`: build_resources() (a parameter, so app/core does not depend on the generated table).
OccupancyData theoretical_tiles(const std::vector<BuildResource>& table, const GpuModel& gpu,
                                const KernelInfo& k, int current_tile, int64_t m, int64_t n);
// The measured device: the occupancy reports a run gave for every tile (RunResult::occupancy_by_tile).
OccupancyData measured_tiles(const std::string& device, const std::string& kernel, int current_tile,
                             int64_t m, int64_t n,
                             const std::vector<std::pair<int, OccupancyReport>>& by_tile);

// [SECTION] The numbers behind each plot, for the figure's CSV and JSON (meta comes from figure_meta()).
FigureData timings_figure(const TimingsData& d, FigureMeta meta);
FigureData bars_figure(const BarsData& d, FigureMeta meta);
FigureData roofline_figure(const RooflineData& d, FigureMeta meta);
FigureData occupancy_figure(const OccupancyData& d, FigureMeta meta);
// One row per block: tile_row, tile_col, k_slice (split-K; else 0; cluster_block when z splits the columns),
// sm, start_us, end_us (relative to the first start); and the tiles resident over time. Stream-K: one row per
// present segment, k_segment, k_begin, k_end (its K range; k_end NaN where K is not known) after tile_col.
FigureData schedule_figure(const TileTrace& t, FigureMeta meta);

}  // namespace ts

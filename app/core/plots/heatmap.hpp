#pragma once
// [SECTION] Heatmap level of detail: the visible region of a matrix reduced to the view's pixel size, value
// ranges for the colour scale, and the zoom arithmetic that turns plot limits into a region. The CPU code
// here is the host fallback path and the reference that the GPU reduction and the colouring shader are tested
// against. Element (i, j) of a matrix covers [j, j + 1) x [i, i + 1) in plot coordinates (x = column, y =
// row).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/engine/input_gen.hpp"  // TS_HD: the GPU kernel uses lod_begin too
#include "core/engine/verify.hpp"     // Reduce

namespace ts {

// A rectangle of whole elements of a rows x cols matrix, reduced to w x h values (1 <= w <= cols, 1 <= h <=
// rows).
struct LodRegion {
  int64_t row0 = 0, col0 = 0, rows = 0, cols = 0;
  int w = 0, h = 0;
};
inline bool operator==(const LodRegion& a, const LodRegion& b) {
  return a.row0 == b.row0 && a.col0 == b.col0 && a.rows == b.rows && a.cols == b.cols && a.w == b.w &&
         a.h == b.h;
}
inline bool operator!=(const LodRegion& a, const LodRegion& b) {
  return !(a == b);
}

// View row y covers element rows [lod_begin(row0, rows, h, y), lod_begin(row0, rows, h, y + 1)); same for
// columns. The GPU kernel uses the same formula, so both paths pick identical blocks. Blocks are never empty
// when n <= extent, and their sizes differ by at most one.
TS_HD inline int64_t lod_begin(int64_t origin, int64_t extent, int n, int i) {
  return origin + int64_t(i) * extent / n;
}

// True when r lies inside a src_rows x src_cols matrix and 1 <= r.w <= r.cols, 1 <= r.h <= r.rows.
bool lod_region_fits(const LodRegion& r, int64_t src_rows, int64_t src_cols);
// Throws std::invalid_argument naming the region and the matrix unless lod_region_fits.
void validate_lod_region(const LodRegion& r, int64_t src_rows, int64_t src_cols);

// A range of values (the colour scale, or the finite min and max of some elements).
struct ValueRange {
  float lo = 0, hi = 0;
};

// Reduces the region of src (row-major, row stride ld elements) into out (h rows of w floats, row 0 first).
// Mean: block mean accumulated in double; Min/Max: block min/max; AbsMax: the element of largest magnitude,
// sign kept (so a signed error map shows where the worst error is and which way it goes; ties go to the first
// in row-major order, an all-zero block gives +0). A NaN or Inf in a block makes that value NaN (Mean,
// AbsMax); for Min/Max: NaN if any NaN, else the Inf participates normally. Elements are visited in row-major
// order within each block, as the GPU kernel does, so Mean agrees bit for bit. Threaded with parallel.hpp
// over view rows. Returns the finite min and max of the region's elements themselves (not of the reduced
// values: a block mean never reaches the extremes, and the colour scale must), {0, 0} when none is finite.
// Throws std::invalid_argument for a region outside the matrix, w/h out of range, ld < src_cols or null
// pointers. Cost: one read of each element of the region.
ValueRange lod_reduce(const float* src, int64_t ld, int64_t src_rows, int64_t src_cols, const LodRegion& r,
                      Reduce mode, float* out);

ValueRange finite_range(const float* v, size_t n);  // over finite values; {0,0} when none
// The GPU reduces ranges with integer atomics on order-preserving keys of floats: [min key, max key],
// initialised to kRangeKeysInit. Decodes them ({0,0} when no finite value was seen).
inline constexpr unsigned kRangeKeysInit[2] = {0xffffffffu, 0u};
ValueRange range_from_keys(const unsigned keys[2]);

enum class RangeMode { Auto, Symmetric, Manual };  // Symmetric: [-max|v|, +max|v|] (error maps)

// The colour range actually used, always finite with lo < hi:
// - Auto: data; Symmetric: [-a, a] with a = max(|data.lo|, |data.hi|); Manual: manual, swapped when reversed,
//   or data (as Auto) when a manual bound is NaN or Inf. Non-finite data counts as {0, 0}.
// - A range wider than FLT_MAX is narrowed to [-FLT_MAX / 2, FLT_MAX / 2] so hi - lo stays finite.
// - A flat range (hi - lo < 1e-6 max(|lo|, |hi|), or < 1e-30) is widened around its centre c to
//   [c - d, c + d], d = max(|c| / 2, 0.5) (clamped to +-FLT_MAX), so c lands mid-map: all-equal data (the
//   "ones" input, an exact error map) shows the middle colour, and the shader never divides by ~0.
ValueRange resolve_range(RangeMode mode, ValueRange data, ValueRange manual);

// Zoom arithmetic: the plot's visible limits in element coordinates (x = column, y = row, possibly
// fractional, possibly beyond the matrix, either order), the plot's size in pixels -> the whole-element
// region to reduce (clamped to the matrix, floor/ceil to whole elements) and its value resolution (w =
// min(region cols, px_w), h likewise; at least 1). A view entirely beside the matrix gives the nearest edge
// row/column (one element wide); non-finite limits give the whole matrix. 64-bit throughout. Throws
// std::invalid_argument when rows or cols < 1.
struct PlotLimits {
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
};
LodRegion region_for(const PlotLimits& lim, int64_t rows, int64_t cols, int px_w, int px_h);

// Screen pixels per element along x (columns) for that plot: px_w / |x1 - x0|; 0 when the limits are empty or
// non-finite or px_w <= 0. pixels_per_element_y is the same along y (rows) with px_h.
double pixels_per_element(const PlotLimits& lim, int px_w);
double pixels_per_element_y(const PlotLimits& lim, int px_h);

// The tile grid of TILE is drawn when one tile spans at least min_px screen pixels along both x and y
// (false for tile <= 0). 32 px: a grid line every 8 or 16 px reads as stripes in the data (a whole 256^2
// matrix of 16-tiles in a laptop's 150-pixel map), one every 32 px or more as cells around it.
bool tile_grid_visible(const PlotLimits& lim, int px_w, int px_h, int tile, double min_px = 32.0);

// [SECTION] A remote engine's views over a slow link degrade to coarser views first, never to a frozen
// window: a view whose whole answer would keep the person waiting is asked coarse first (kCoarseFactor times
// fewer values each way, a sixteenth of the bytes), drawn stretched over the same elements at once, and the
// whole view is asked when it has come and replaces it.
inline constexpr int kCoarseFactor = 4;
// A whole view whose values take longer than this to cross the link comes coarse first.
inline constexpr double kCoarseFirstAfterS = 0.25;
// A link with no rate measured yet: a view of more bytes than this comes coarse first (128 x 128 values, a
// quarter of a second at 2 Mbit/s; on a fast link the coarse view costs a round trip more for the whole one).
inline constexpr int64_t kCoarseFirstUnmeasuredBytes = 64 << 10;

// The bytes of a view's values as they leave the engine, at most (4 a value; compressed, often fewer).
inline int64_t view_bytes(const LodRegion& r) {
  return int64_t(r.w) * int64_t(r.h) * int64_t(sizeof(float));
}
// Whether a view of `full_bytes` comes coarse first over a link measured at `link_bytes_per_s` (0 or not
// finite: not measured yet) with a round trip of `rtt_ms`. The coarse view comes sooner by most of the whole
// view's transfer; the whole view, asked once the coarse one is in, comes a round trip and the coarse
// transfer later than it would have. So: coarse first when the whole transfer is over kCoarseFirstAfterS and
// what the coarse view saves is more than what it delays; on an unmeasured link, when the view is over
// kCoarseFirstUnmeasuredBytes. Pure: the same figures give the same answer.
bool coarse_first(int64_t full_bytes, double link_bytes_per_s, double rtt_ms);
// The same elements as `r` at kCoarseFactor times fewer values each way (at least 1 each way).
LodRegion coarse_region(const LodRegion& r);

// Axis ticks of a map: the smallest step of 1, 2, 5, 10, 20, 50 ... that labels `span` units in at most
// max_ticks ticks (1 when span <= 0 or max_ticks < 1 leaves nothing to choose).
double tick_step(double span, double max_ticks);

// The cells of a map of `count` unit cells (tiles of C: cell i spans [i, i + 1]) to label: 0 and every
// tick_step(count, max_ticks) cells after it (empty when count <= 0).
std::vector<int> labelled_cells(int count, double max_ticks);

}  // namespace ts

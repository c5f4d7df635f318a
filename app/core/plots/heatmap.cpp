#include "core/plots/heatmap.hpp"

#include <cstring>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/engine/lod_reduce_impl.hpp"
#include "core/base/parallel.hpp"

namespace ts {

// [SECTION] Reduction

bool lod_region_fits(const LodRegion& r, int64_t src_rows, int64_t src_cols) {
  return r.rows >= 1 && r.cols >= 1 && r.row0 >= 0 && r.col0 >= 0 && r.row0 <= src_rows - r.rows &&
         r.col0 <= src_cols - r.cols && r.w >= 1 && r.h >= 1 && r.w <= r.cols && r.h <= r.rows;
}

void validate_lod_region(const LodRegion& r, int64_t src_rows, int64_t src_cols) {
  if (lod_region_fits(r, src_rows, src_cols)) return;
  throw std::invalid_argument("heatmap region at (" + std::to_string(r.row0) + ", " + std::to_string(r.col0) +
                              "), " + std::to_string(r.rows) + " x " + std::to_string(r.cols) +
                              " elements reduced to " + std::to_string(r.h) + " x " + std::to_string(r.w) +
                              " does not fit a " + std::to_string(src_rows) + " x " +
                              std::to_string(src_cols) + " matrix");
}

ValueRange lod_reduce(const float* src, int64_t ld, int64_t src_rows, int64_t src_cols, const LodRegion& r,
                      Reduce mode, float* out) {
  validate_lod_region(r, src_rows, src_cols);
  if (ld < src_cols)
    throw std::invalid_argument("heatmap source row stride " + std::to_string(ld) + " is less than its " +
                                std::to_string(src_cols) + " columns");
  if (!src || !out) throw std::invalid_argument("heatmap reduction given a null pointer");
  ValueRange range;
  detail::reduce_region([src, ld](int64_t i, int64_t j) { return src[i * ld + j]; }, r, mode, out, &range);
  return range;
}

// [SECTION] Value ranges

ValueRange finite_range(const float* v, size_t n) {
  float lo = INFINITY, hi = -INFINITY;
  std::mutex mu;
  parallel_for(int64_t(n), 1 << 18, [&](int64_t b, int64_t e) {
    float l = INFINITY, h = -INFINITY;
    for (int64_t i = b; i < e; ++i) {
      const float x = v[i];
      if (!std::isfinite(x)) continue;
      l = std::min(l, x);
      h = std::max(h, x);
    }
    std::lock_guard<std::mutex> lock(mu);
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  });
  if (lo > hi) return {};
  return {lo, hi};
}

ValueRange resolve_range(RangeMode mode, ValueRange data, ValueRange manual) {
  if (!std::isfinite(data.lo) || !std::isfinite(data.hi)) data = {};
  ValueRange r = data;
  if (mode == RangeMode::Symmetric) {
    const float a = std::max(std::fabs(data.lo), std::fabs(data.hi));
    r = {-a, a};
  } else if (mode == RangeMode::Manual && std::isfinite(manual.lo) && std::isfinite(manual.hi)) {
    r = manual;
  }
  if (r.lo > r.hi) std::swap(r.lo, r.hi);
  if (!std::isfinite(r.hi - r.lo)) {  // wider than FLT_MAX
    r.lo = std::max(r.lo, -FLT_MAX / 2);
    r.hi = std::min(r.hi, FLT_MAX / 2);
  }
  const float mag = std::max(std::fabs(r.lo), std::fabs(r.hi));
  if (r.hi - r.lo < std::max(1e-6f * mag, 1e-30f)) {
    const double c = 0.5 * double(r.lo) + 0.5 * double(r.hi);
    const double d = std::max(std::fabs(c) / 2, 0.5);
    r.lo = float(std::max(c - d, -double(FLT_MAX)));
    r.hi = float(std::min(c + d, double(FLT_MAX)));
  }
  return r;
}

// [SECTION] Zoom arithmetic

namespace {
// The whole elements [begin, begin + count) of an axis of n elements that the limits [a, b] touch.
void axis_span(double a, double b, int64_t n, int64_t& begin, int64_t& count) {
  if (!std::isfinite(a) || !std::isfinite(b)) {
    begin = 0;
    count = n;
    return;
  }
  // Clamped in double before converting, so limits far outside the matrix never overflow int64_t.
  const double lo = std::clamp(std::floor(std::min(a, b)), 0.0, double(n - 1));
  const double hi = std::clamp(std::ceil(std::max(a, b)), lo + 1.0, double(n));
  begin = int64_t(lo);
  count = int64_t(hi) - begin;
}

double pixels_per_unit(double a, double b, int px) {
  const double span = std::fabs(b - a);
  if (px <= 0 || !std::isfinite(span) || !(span > 0)) return 0.0;
  return double(px) / span;
}
}  // namespace

LodRegion region_for(const PlotLimits& lim, int64_t rows, int64_t cols, int px_w, int px_h) {
  if (rows < 1 || cols < 1)
    throw std::invalid_argument("heatmap of an empty " + std::to_string(rows) + " x " + std::to_string(cols) +
                                " matrix");
  LodRegion r;
  axis_span(lim.x0, lim.x1, cols, r.col0, r.cols);
  axis_span(lim.y0, lim.y1, rows, r.row0, r.rows);
  r.w = int(std::clamp<int64_t>(px_w, 1, r.cols));
  r.h = int(std::clamp<int64_t>(px_h, 1, r.rows));
  return r;
}

double pixels_per_element(const PlotLimits& lim, int px_w) {
  return pixels_per_unit(lim.x0, lim.x1, px_w);
}

double pixels_per_element_y(const PlotLimits& lim, int px_h) {
  return pixels_per_unit(lim.y0, lim.y1, px_h);
}

bool tile_grid_visible(const PlotLimits& lim, int px_w, int px_h, int tile, double min_px) {
  if (tile <= 0) return false;
  return pixels_per_element(lim, px_w) * tile >= min_px && pixels_per_element_y(lim, px_h) * tile >= min_px;
}

bool coarse_first(int64_t full_bytes, double link_bytes_per_s, double rtt_ms) {
  if (full_bytes <= 0) return false;
  if (!std::isfinite(link_bytes_per_s) || link_bytes_per_s <= 0)
    return full_bytes > kCoarseFirstUnmeasuredBytes;
  const double full_s = double(full_bytes) / link_bytes_per_s;
  const double coarse_s = full_s / double(kCoarseFactor * kCoarseFactor);
  const double rtt_s = std::isfinite(rtt_ms) ? std::max(0.0, rtt_ms) / 1000 : 0;
  return full_s > kCoarseFirstAfterS && full_s - coarse_s > rtt_s + coarse_s;
}

LodRegion coarse_region(const LodRegion& r) {
  LodRegion c = r;
  c.w = std::max(1, (r.w + kCoarseFactor - 1) / kCoarseFactor);
  c.h = std::max(1, (r.h + kCoarseFactor - 1) / kCoarseFactor);
  return c;
}

ValueRange range_from_keys(const unsigned keys[2]) {
  if (keys[0] > keys[1]) return {};  // no finite value
  auto to_float = [](unsigned k) {
    const uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  return {to_float(keys[0]), to_float(keys[1])};
}

double tick_step(double span, double max_ticks) {
  double step = 1;
  if (!(span > 0) || !(max_ticks >= 1)) return step;
  for (double mag = 1; step * max_ticks < span; mag *= 10)
    for (double f : {1.0, 2.0, 5.0})
      if ((step = f * mag) * max_ticks >= span) break;
  return step;
}

std::vector<int> labelled_cells(int count, double max_ticks) {
  std::vector<int> cells;
  const int step = int(tick_step(count, max_ticks));
  for (int i = 0; i < count; i += step) cells.push_back(i);
  return cells;
}

}  // namespace ts

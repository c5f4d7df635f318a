#pragma once
// Private to app/core: the block reduction behind lod_reduce (heatmap.cpp). Elements come from get(row, col),
// so a caller can reduce a computed value (a difference, a strided view) without materialising it.
// The caller has validated the region.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

#include "core/plots/heatmap.hpp"
#include "core/base/parallel.hpp"

namespace ts::detail {

// Per view value: the running reduction of its block.
struct LodAcc {
  double acc;
  float best;
  bool nan, nonfinite;
};

// lo/hi: the finite min and max of the elements visited (not of the reduced values), for the colour scale.
template <Reduce kMode, class Get>
void reduce_band(Get& get, const LodRegion& r, const std::vector<int64_t>& col_begin, int y,
                 std::vector<LodAcc>& accs, float* out_row, float& lo, float& hi) {
  const double init = kMode == Reduce::Min   ? std::numeric_limits<double>::infinity()
                      : kMode == Reduce::Max ? -std::numeric_limits<double>::infinity()
                                             : 0.0;
  for (auto& a : accs) a = LodAcc{init, 0.0f, false, false};
  const int64_t r0 = lod_begin(r.row0, r.rows, r.h, y), r1 = lod_begin(r.row0, r.rows, r.h, y + 1);
  // Row by row through the band, so the source is read contiguously. No result depends on the order of a
  // block's elements (the GPU kernel reads them in another): only the mean's rounding, in double.
  for (int64_t i = r0; i < r1; ++i) {
    for (int x = 0; x < r.w; ++x) {
      LodAcc& a = accs[size_t(x)];
      const int64_t c0 = col_begin[size_t(x)], c1 = col_begin[size_t(x) + 1];
      for (int64_t j = c0; j < c1; ++j) {
        const float v = get(i, j);
        if (std::isfinite(v)) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        if constexpr (kMode == Reduce::Mean) {
          a.acc += double(v);  // a NaN or Inf makes the sum non-finite: no flag needed
        } else if constexpr (kMode == Reduce::Min) {
          a.nan |= std::isnan(v);
          if (double(v) < a.acc) a.acc = double(v);
        } else if constexpr (kMode == Reduce::Max) {
          a.nan |= std::isnan(v);
          if (double(v) > a.acc) a.acc = double(v);
        } else {
          a.nonfinite |= !std::isfinite(v);
          // The largest magnitude; of +x and -x, +x (so the order of the elements does not matter).
          const float av = std::fabs(v), ab = std::fabs(a.best);
          if (av > ab || (av == ab && v > a.best)) a.best = v;
        }
      }
    }
  }
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  for (int x = 0; x < r.w; ++x) {
    const LodAcc& a = accs[size_t(x)];
    float o;
    if constexpr (kMode == Reduce::Mean) {
      const int64_t count = (r1 - r0) * (col_begin[size_t(x) + 1] - col_begin[size_t(x)]);
      o = std::isfinite(a.acc) ? float(a.acc / double(count)) : qnan;
    } else if constexpr (kMode == Reduce::AbsMax) {
      o = a.nonfinite ? qnan : a.best;
    } else {
      o = a.nan ? qnan : float(a.acc);
    }
    out_row[x] = o;
  }
}

// Reduces region r of the matrix whose elements get(row, col) returns into out (r.h rows of r.w values).
// range (optional): the finite min and max of the region's elements ({0, 0} when none is finite).
template <class Get>
void reduce_region(Get get, const LodRegion& r, Reduce mode, float* out, ValueRange* range = nullptr) {
  std::vector<int64_t> col_begin(size_t(r.w) + 1);
  for (int x = 0; x <= r.w; ++x) col_begin[size_t(x)] = lod_begin(r.col0, r.cols, r.w, x);
  // Enough view rows per thread that each covers ~64 K elements.
  const int64_t per_view_row = std::max<int64_t>(1, r.rows / r.h * r.cols);
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / per_view_row);
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  std::mutex mu;
  parallel_for(r.h, grain, [&](int64_t y0, int64_t y1) {
    Get g = get;
    float tlo = std::numeric_limits<float>::infinity(), thi = -tlo;
    std::vector<LodAcc> accs(size_t(r.w));
    for (int64_t y = y0; y < y1; ++y) {
      float* row = out + size_t(y) * size_t(r.w);
      switch (mode) {
        case Reduce::Mean:
          reduce_band<Reduce::Mean>(g, r, col_begin, int(y), accs, row, tlo, thi);
          break;
        case Reduce::Min:
          reduce_band<Reduce::Min>(g, r, col_begin, int(y), accs, row, tlo, thi);
          break;
        case Reduce::Max:
          reduce_band<Reduce::Max>(g, r, col_begin, int(y), accs, row, tlo, thi);
          break;
        case Reduce::AbsMax:
          reduce_band<Reduce::AbsMax>(g, r, col_begin, int(y), accs, row, tlo, thi);
          break;
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    lo = std::min(lo, tlo);
    hi = std::max(hi, thi);
  });
  if (range) *range = lo <= hi ? ValueRange{lo, hi} : ValueRange{};
}

}  // namespace ts::detail

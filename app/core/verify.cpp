#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "lod_reduce_impl.hpp"
#include "parallel.hpp"

namespace ts {

ErrorStats compare(const float* c, const float* ref, int64_t rows, int64_t cols, double tolerance) {
  struct Part {
    double max_err = 0, max_ref = 0;
    int64_t worst = -1, bad = 0;
  };
  std::mutex mu;
  Part total;
  const int64_t n = rows * cols;
  parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
    Part p;
    for (int64_t i = b; i < e; ++i) {
      double d = std::fabs(double(c[i]) - double(ref[i]));
      if (!std::isfinite(d)) d = std::numeric_limits<double>::infinity();
      if (d > p.max_err) {
        p.max_err = d;
        p.worst = i;
      }
      if (!(d <= tolerance)) ++p.bad;
      p.max_ref = std::max(p.max_ref, std::fabs(double(ref[i])));
    }
    std::lock_guard<std::mutex> lock(mu);
    if (p.max_err > total.max_err) {
      total.max_err = p.max_err;
      total.worst = p.worst;
    }
    total.max_ref = std::max(total.max_ref, p.max_ref);
    total.bad += p.bad;
  });
  ErrorStats s;
  s.max_abs_err = total.max_err;
  s.max_rel_err = total.max_ref > 0 ? total.max_err / total.max_ref : total.max_err;
  s.tolerance = tolerance;
  s.bad_elements = total.bad;
  if (total.worst >= 0 && total.max_err > 0) {
    s.worst_row = total.worst / cols;
    s.worst_col = total.worst % cols;
  }
  // A tolerance that is not finite (NaN or Inf in the inputs) verifies nothing: never a pass.
  s.passed = total.bad == 0 && std::isfinite(tolerance);
  return s;
}

namespace {
// The whole matrix through the level-of-detail reduction (lod_reduce_impl.hpp), plus the finite range of the
// source. AbsMax is reported as a magnitude here (max |v|); lod_reduce keeps the sign.
template <class Get>
HeatmapView reduce_view(Get get, int64_t rows, int64_t cols, int max_w, int max_h, Reduce mode) {
  HeatmapView v;
  v.rows = rows;
  v.cols = cols;
  v.w = int(std::min<int64_t>(cols, std::max(1, max_w)));
  v.h = int(std::min<int64_t>(rows, std::max(1, max_h)));
  if (v.w < 1 || v.h < 1) return v;
  v.values.assign(size_t(v.w) * size_t(v.h), 0.0f);
  detail::reduce_region(get, LodRegion{0, 0, rows, cols, v.w, v.h}, mode, v.values.data());
  if (mode == Reduce::AbsMax)
    for (float& x : v.values) x = std::fabs(x);
  std::mutex mu;
  float gmin = std::numeric_limits<float>::infinity(), gmax = -std::numeric_limits<float>::infinity();
  parallel_for(rows, std::max<int64_t>(1, (int64_t(1) << 16) / cols), [&](int64_t r0, int64_t r1) {
    float lmin = std::numeric_limits<float>::infinity(), lmax = -lmin;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const float val = get(r, c);
        if (!std::isfinite(val)) continue;
        lmin = std::min(lmin, val);
        lmax = std::max(lmax, val);
      }
    std::lock_guard<std::mutex> lock(mu);
    gmin = std::min(gmin, lmin);
    gmax = std::max(gmax, lmax);
  });
  if (gmin > gmax) gmin = gmax = 0.0f;  // all non-finite
  v.vmin = gmin;
  v.vmax = gmax;
  return v;
}
}  // namespace

HeatmapView downsample(const float* src, int64_t rows, int64_t cols, int max_w, int max_h, Reduce mode) {
  return reduce_view([&](int64_t r, int64_t c) { return src[size_t(r) * size_t(cols) + size_t(c)]; }, rows,
                     cols, max_w, max_h, mode);
}

HeatmapView error_view(const float* a, const float* b, int64_t rows, int64_t cols, int max_w, int max_h) {
  return reduce_view(
      [&](int64_t r, int64_t c) {
        size_t i = size_t(r) * size_t(cols) + size_t(c);
        return std::fabs(a[i] - b[i]);
      },
      rows, cols, max_w, max_h, Reduce::AbsMax);
}

}  // namespace ts

#pragma once
// Checks shared by the heatmap GL tests: the value texture against lod_reduce() on the host, and the painted
// picture against the CPU colouring (colormap_color) with the shader's pixel -> element -> view-value
// mapping.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/plots/colormap.hpp"
#include "core/plots/heatmap.hpp"
#include "gfx/heatmap_gl.hpp"
#include "core/engine/matrix.hpp"

namespace ts::test {

// Values in the texture == lod_reduce of the host copy (exact for min/max/absmax, to float rounding for
// mean).
inline void expect_values_match(const std::vector<float>& got, const HostMatrix& m, const LodRegion& r,
                                Reduce mode) {
  std::vector<float> ref(size_t(r.w) * size_t(r.h));
  lod_reduce(m.data.data(), m.cols, m.rows, m.cols, r, mode, ref.data());
  ASSERT_EQ(got.size(), ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const bool both_nan = std::isnan(ref[i]) && std::isnan(got[i]);
    const float tol = mode == Reduce::Mean ? 1e-6f * std::max(1.0f, std::fabs(ref[i])) : 0.0f;
    if (!both_nan && !(std::fabs(got[i] - ref[i]) <= tol)) {
      if (bad < 5)
        ADD_FAILURE() << "value " << i % size_t(r.w) << "," << i / size_t(r.w) << ": texture " << got[i]
                      << " vs CPU " << ref[i];
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << "of " << ref.size() << " values";
}

// The painted picture == the CPU colouring of the same values. `values` are the CPU reference values (h x w).
// A pixel may differ by one table entry (the shader's float division can round the other way at a boundary).
inline void expect_picture_matches(const std::vector<uint8_t>& rgba, int out_w, int out_h,
                                   const std::vector<float>& values, const LodRegion& r, const Colormap& map,
                                   float lo, float hi) {
  ASSERT_EQ(rgba.size(), size_t(out_w) * size_t(out_h) * 4);
  size_t bad = 0, off_by_one = 0;
  for (int y = 0; y < out_h; ++y)
    for (int x = 0; x < out_w; ++x) {
      // Pixel centre -> element of the region -> view value (the inverse of lod_begin).
      const int64_t ex = std::min<int64_t>(r.cols - 1, (2 * int64_t(x) + 1) * r.cols / (2 * int64_t(out_w)));
      const int64_t ey = std::min<int64_t>(r.rows - 1, (2 * int64_t(y) + 1) * r.rows / (2 * int64_t(out_h)));
      const int64_t vx = ((ex + 1) * r.w - 1) / r.cols, vy = ((ey + 1) * r.h - 1) / r.rows;
      const float v = values[size_t(vy) * size_t(r.w) + size_t(vx)];
      const uint8_t* p = &rgba[(size_t(y) * size_t(out_w) + size_t(x)) * 4];
      const auto want = colormap_color(map, v, lo, hi);
      if (p[0] == want[0] && p[1] == want[1] && p[2] == want[2]) continue;
      const int i = colormap_index(v, lo, hi);
      bool near = false;
      for (int d : {-1, 1})
        if (i >= 0 && i + d >= 0 && i + d < 256) {
          const auto& c = map.rgba[size_t(i + d)];
          near |= p[0] == c[0] && p[1] == c[1] && p[2] == c[2];
        }
      if (near) {
        ++off_by_one;
      } else {
        if (bad < 5)
          ADD_FAILURE() << "pixel " << x << "," << y << " = " << int(p[0]) << "," << int(p[1]) << ","
                        << int(p[2]) << ", CPU says " << int(want[0]) << "," << int(want[1]) << ","
                        << int(want[2]) << " (value " << v << ")";
        ++bad;
      }
    }
  EXPECT_EQ(bad, 0u) << "pixels differ from the CPU colouring";
  EXPECT_LE(off_by_one, size_t(out_w) * size_t(out_h) / 100) << "too many pixels one table entry off";
}

}  // namespace ts::test

#pragma once
// [SECTION] Checking a result against the reference, and reducing matrices to heatmap views.
#include <cstdint>
#include <vector>

namespace ts {

struct ErrorStats {
  double max_abs_err = 0;  // max |C - ref|
  double max_rel_err = 0;  // max |C - ref| / max |ref|  (normwise: element-wise ratios explode near zero)
  double tolerance = 0;    // allowed max_abs_err (tolerance_for)
  int64_t worst_row = -1, worst_col = -1;
  int64_t bad_elements = 0;  // elements over the tolerance (NaN counts)
  bool passed = false;
};

// Compares c against ref (both rows x cols) with the given absolute tolerance. NaN or Inf in c fails, and so
// does a tolerance that is not finite (it would let anything pass).
ErrorStats compare(const float* c, const float* ref, int64_t rows, int64_t cols, double tolerance);

enum class Reduce { Mean, Min, Max, AbsMax };

// A matrix reduced to at most max_w x max_h values: each value summarises a block of source elements.
struct HeatmapView {
  int64_t rows = 0, cols = 0;  // source shape
  int w = 0, h = 0;            // view shape (h rows of w values, row-major, row 0 = matrix row 0)
  std::vector<float> values;
  float vmin = 0, vmax = 0;  // range over the whole source matrix (not just the view)
};

// The whole matrix as lod_reduce (heatmap.hpp) reduces it, same blocks and NaN/Inf rules (a NaN or Inf in a
// block shows as NaN, except Min/Max, where only NaN does), except that AbsMax gives the magnitude max |v|.
HeatmapView downsample(const float* src, int64_t rows, int64_t cols, int max_w, int max_h, Reduce mode);

// |a - b| element-wise, downsampled with AbsMax so a single wrong element stays visible (a NaN one too).
HeatmapView error_view(const float* a, const float* b, int64_t rows, int64_t cols, int max_w, int max_h);

}  // namespace ts

#pragma once
// [SECTION] Checking a result against the reference, and the reductions heatmaps use (heatmap.hpp).
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

}  // namespace ts

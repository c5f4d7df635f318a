#pragma once
// [SECTION] Checking a result against the reference, and the reductions heatmaps use (heatmap.hpp).
#include <cstdint>
#include <vector>

#include "core/engine/input_gen.hpp"  // TS_HD: the device comparison resolves a Tolerance too

namespace ts {

// The largest |C - ref| allowed: a fixed part, plus a part in proportion to the reference's own largest
// magnitude, max|ref|, which the comparison finds as it reads ref (tolerance_for in problem.hpp gives both).
struct Tolerance {
  double fixed = 0;
  double per_max_ref = 0;
  TS_HD double at(double max_abs_ref) const { return fixed + per_max_ref * max_abs_ref; }
};

struct ErrorStats {
  double max_abs_err = 0;  // max |C - ref|
  double max_rel_err = 0;  // max |C - ref| / max |ref|  (normwise: element-wise ratios explode near zero)
  double tolerance = 0;    // allowed max_abs_err: the Tolerance at this ref's max|ref|
  int64_t worst_row = -1, worst_col = -1;
  int64_t bad_elements = 0;  // elements over the tolerance (NaN counts)
  bool passed = false;
};

// Compares c against ref (both rows x cols) with the given tolerance, resolved at max|ref|. NaN or Inf in c
// fails, and so does a tolerance that is not finite (it would let anything pass). One pass over c and ref
// when every element is within the tolerance, a second to count the bad ones when some are not.
ErrorStats compare(const float* c, const float* ref, int64_t rows, int64_t cols, Tolerance tolerance);

enum class Reduce { Mean, Min, Max, AbsMax };

}  // namespace ts

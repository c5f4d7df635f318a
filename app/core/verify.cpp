#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

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

}  // namespace ts

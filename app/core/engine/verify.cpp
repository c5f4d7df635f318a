#include "core/engine/verify.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>

#include "core/base/parallel.hpp"

namespace ts {

ErrorStats compare(const float* c, const float* ref, int64_t rows, int64_t cols, Tolerance tolerance) {
  struct Part {
    double max_err = 0, max_ref = 0;
    int64_t worst = -1;
  };
  auto diff = [&](int64_t i) {
    const double d = std::fabs(double(c[i]) - double(ref[i]));
    return std::isfinite(d) ? d : std::numeric_limits<double>::infinity();
  };
  std::mutex mu;
  Part total;
  const int64_t n = rows * cols;
  parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
    Part p;
    for (int64_t i = b; i < e; ++i) {
      const double d = diff(i);
      if (d > p.max_err) {
        p.max_err = d;
        p.worst = i;
      }
      p.max_ref = std::max(p.max_ref, std::fabs(double(ref[i])));
    }
    std::lock_guard<std::mutex> lock(mu);
    if (p.max_err > total.max_err || (p.max_err == total.max_err && p.worst >= 0 && p.worst < total.worst)) {
      total.max_err = p.max_err;
      total.worst = p.worst;
    }
    total.max_ref = std::max(total.max_ref, p.max_ref);
  });
  ErrorStats s;
  s.max_abs_err = total.max_err;
  s.max_rel_err = total.max_ref > 0 ? total.max_err / total.max_ref : total.max_err;
  s.tolerance = tolerance.at(total.max_ref);
  if (total.worst >= 0 && total.max_err > 0) {
    s.worst_row = total.worst / cols;
    s.worst_col = total.worst % cols;
  }
  // Only when the worst element is over the tolerance can any be: then count them.
  if (!(total.max_err <= s.tolerance)) {
    std::atomic<int64_t> bad{0};
    parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
      int64_t k = 0;
      for (int64_t i = b; i < e; ++i) k += !(diff(i) <= s.tolerance);
      bad += k;
    });
    s.bad_elements = bad;
  }
  // A tolerance that is not finite (NaN or Inf in the inputs or the reference) verifies nothing: never a
  // pass.
  s.passed = s.bad_elements == 0 && std::isfinite(s.tolerance);
  return s;
}

}  // namespace ts

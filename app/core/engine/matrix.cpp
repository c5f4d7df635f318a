#include "core/engine/matrix.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/base/parallel.hpp"

namespace ts {

GenKind gen_kind(InputKind k) {
  switch (k) {
    case InputKind::Random:
      return GenKind::Random;
    case InputKind::Symmetric:
      return GenKind::Symmetric;
    case InputKind::Identity:
      return GenKind::Identity;
    case InputKind::Ones:
      return GenKind::Ones;
    case InputKind::Ramp:
      return GenKind::Ramp;
    case InputKind::File:
      break;
  }
  throw std::logic_error("file inputs are not generated");
}

HostMatrix generate_input(InputKind kind, uint64_t seed, int matrix, int64_t rows, int64_t cols) {
  HostMatrix m(rows, cols);
  GenKind g = gen_kind(kind);
  parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = 0; c < cols; ++c) m.at(r, c) = gen_element(g, seed, matrix, r, c);
  });
  return m;
}

namespace {
template <typename T>
double max_abs_of(const T* p, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double a = std::fabs(double(p[i]));
    if (std::isnan(a)) return std::numeric_limits<double>::infinity();
    m = std::max(m, a);
  }
  return m;
}
}  // namespace

double max_abs(const float* p, size_t n) {
  return max_abs_of(p, n);
}
double max_abs(const double* p, size_t n) {
  return max_abs_of(p, n);
}

bool first_non_finite(const HostMatrix& m, int64_t* row, int64_t* col) {
  for (size_t i = 0; i < m.data.size(); ++i)
    if (!std::isfinite(m.data[i])) {
      *row = int64_t(i / size_t(m.cols));
      *col = int64_t(i % size_t(m.cols));
      return true;
    }
  return false;
}

void require_finite(const HostMatrix& m, const std::string& what) {
  int64_t r = 0, c = 0;
  if (!first_non_finite(m, &r, &c)) return;
  const float v = m.at(r, c);
  throw ValidationError(what + " holds " +
                        (std::isnan(v) ? "NaN"
                         : v > 0       ? "+Inf"
                                       : "-Inf") +
                        " at row " + std::to_string(r) + ", column " + std::to_string(c) +
                        " (the first non-finite element); inputs must be finite, since no tolerance can "
                        "verify a product of NaN or Inf");
}

}  // namespace ts

#pragma once
// A row-major float32 matrix on the host. Indices are 64-bit everywhere.
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/input_gen.hpp"
#include "core/engine/problem.hpp"

namespace ts {

struct HostMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> data;  // rows * cols, row-major

  HostMatrix() = default;
  HostMatrix(int64_t r, int64_t c) : rows(r), cols(c), data(size_t(r) * size_t(c)) {}
  float& at(int64_t r, int64_t c) { return data[size_t(r) * size_t(cols) + size_t(c)]; }
  float at(int64_t r, int64_t c) const { return data[size_t(r) * size_t(cols) + size_t(c)]; }
  size_t size() const { return data.size(); }
};

GenKind gen_kind(InputKind k);  // throws std::logic_error for InputKind::File

// Fills A (m x k, matrix 0) or B (k x n, matrix 1) exactly as the device generator does. Threaded.
HostMatrix generate_input(InputKind kind, uint64_t seed, int matrix, int64_t rows, int64_t cols);

// Largest |x| (NaN counts as infinity so that it can never pass a check).
double max_abs(const float* p, size_t n);
double max_abs(const double* p, size_t n);

// The first NaN or Inf in row-major order: false when every element is finite, else its row and column.
bool first_non_finite(const HostMatrix& m, int64_t* row, int64_t* col);

// Refuses (ValidationError) a matrix holding NaN or Inf: no tolerance can verify a product of such inputs (an
// infinite tolerance would pass every kernel). The message names `what` and the first such element.
void require_finite(const HostMatrix& m, const std::string& what);

}  // namespace ts

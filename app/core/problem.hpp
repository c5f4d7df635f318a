#pragma once
// [SECTION] The problem a person asks for, and its validation.
// ProblemSpec is what the Controls panel and the command line edit; validate() turns every bad value into a
// ValidationError whose message names the value and the limit. Nothing here knows CUDA or GL.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts {

// Bad input from a person (command line, GUI, file): shown to them, exit code 2 on the command line.
class ValidationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class InputKind { Random, Symmetric, Identity, Ones, Ramp, File };
const char* to_string(InputKind k);
InputKind parse_input_kind(const std::string& s);  // throws ValidationError
const std::vector<InputKind>& generated_input_kinds();

enum class BackendChoice { Auto, Cuda, Cpu };
const char* to_string(BackendChoice b);
BackendChoice parse_backend_choice(const std::string& s);  // throws ValidationError

// C (m x n) = A (m x k) * B (k x n), all row-major float32.
struct ProblemSpec {
  int64_t m = 1024, n = 1024, k = 1024;
  std::string kernel = "tiled";
  int tile = 16;  // 0 when the kernel has no tile parameter
  InputKind input = InputKind::Random;
  uint64_t seed = 1;

  bool operator==(const ProblemSpec& o) const {
    return m == o.m && n == o.n && k == o.k && kernel == o.kernel && tile == o.tile && input == o.input &&
           seed == o.seed;
  }
  bool operator!=(const ProblemSpec& o) const { return !(*this == o); }
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

// Largest M, N or K accepted anywhere (the memory check usually refuses far earlier).
inline constexpr int64_t kMaxDim = 1 << 17;

// Parses a positive dimension from text ("4096"); throws ValidationError naming `what` for "0", "-3", "abc",
// "1e3", or anything above kMaxDim.
int64_t parse_dim(const std::string& text, const char* what);

// Splits "a,b,,c," at `sep`, keeping every field, empty ones included ("" gives one empty field), so that
// lists with a missing entry can be refused rather than silently shortened.
std::vector<std::string> split_fields(const std::string& text, char sep);

// Shape-level checks that need no kernel or device: 1 <= m, n, k <= kMaxDim, and that symmetric inputs are
// square.
void validate_shape(const ProblemSpec& spec);

// Accuracy: a float32 GEMM of depth K can be off by about K * eps * max|A| * max|B| (error bound of a K-term
// dot product); we allow 8x that. Identity and ones inputs are exact in every FP32 kernel.
// tf32: inputs rounded to TF32 (unit roundoff 2^-11) add independent errors of about 2^-10 |a b| per product,
// which grow like sqrt(K): we add 4 sqrt(K) 2^-10 max|A| max|B| (about 4x the largest error seen on random
// inputs at K = 4096; a dropped k-tile is still 10x over it).
double tolerance_for(int64_t k, double max_abs_a, double max_abs_b, bool tf32 = false);

}  // namespace ts

#pragma once
// [SECTION] The problem a person asks for, and its validation.
// ProblemSpec is what the Controls panel and the command line edit; validate() turns every bad value into a
// ValidationError whose message names the value and the limit. Nothing here knows CUDA or GL.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/verify.hpp"  // Tolerance

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

// Largest M, N or K accepted anywhere: the index range of the GPU path (cuBLAS takes M, N, K and the leading
// dimensions as int; the kernels index with 64 bits). What fits is each backend's to decide (validate():
// the GPU's memory and grid, the CPU's work and host memory), and refuses most shapes far below this.
// (The .npy reader keeps a limit of its own, kMaxNpyDim.)
inline constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;

// Parses a positive dimension from text ("4096"); throws ValidationError naming `what` for "0", "-3", "abc",
// "1e3", or anything above kMaxDim.
int64_t parse_dim(const std::string& text, const char* what);
// Parses a positive, finite number from text ("0.5", "10"); throws ValidationError naming `what` for "0",
// "-1", "abc", "1x", "inf", "nan" or anything above `max`.
double parse_positive(const std::string& text, const char* what, double max = 1e300);
// A number of seconds from `lo` to `hi` (above 0 even where lo is 0); throws ValidationError "WHAT = 'TEXT'
// is not a number of seconds from LO to HI" (or "in (0, HI]").
double parse_seconds(const std::string& text, const std::string& what, double lo, double hi);
// A seed: a whole number from 0 to 9999999999999999999 (19 digits at most); throws ValidationError naming
// `what`.
uint64_t parse_seed(const std::string& text, const char* what);

// Where the first byte of `text` that is not valid UTF-8 is (an invalid lead or continuation byte, an
// overlong form, a surrogate, past U+10FFFF, cut short), or std::string::npos when it is valid.
size_t first_invalid_utf8(const std::string& text);
// Text a person gives that goes into JSON (a title, a name) must be UTF-8: throws ValidationError "<what> is
// not valid UTF-8 (byte 0xFF at offset 3); give it in UTF-8" otherwise.
void require_utf8(const std::string& text, const std::string& what);

// A dimension for a quick check under a slow tool (compute-sanitizer, a hundred times slower): d itself up to
// 511, else 256 + d mod 256, so the check sees the same partial tile as d for every power-of-two tile up to
// 256 (4099 -> 259, 4096 -> 256, 1000 -> 488) at a few hundredths of the work.
int64_t small_dim_like(int64_t d);

// Splits "a,b,,c," at `sep`, keeping every field, empty ones included ("" gives one empty field), so that
// lists with a missing entry can be refused rather than silently shortened.
std::vector<std::string> split_fields(const std::string& text, char sep);

// Shape-level checks that need no kernel or device: 1 <= m, n, k <= kMaxDim, and that symmetric inputs are
// square.
void validate_shape(const ProblemSpec& spec);

// Accuracy: the largest |C - ref| a correct kernel may show (u = 2^-24, the unit roundoff of float32); the
// terms in max|ref| are Tolerance::per_max_ref, resolved by compare() as it reads the reference.
// Two float32 sums of the same K products, in any order, differ by at most 2 K u sum_k |a_ik b_kj| (the
// worst-case bound of each sum, Higham's gamma_K, twice). Where the products share a sign (all-positive data,
// the ramp input) that sum is |C_ij| itself, errors add up, and they come near the bound (the ramp at 1024^3
// is off by an eighth of it): we allow 2 K u max|ref|. Where signs mix, sum |a b| can be far larger than |C|,
// but the rounding errors cancel like a random walk: we allow 8 K u max|A| max|B| (8x the largest error of a
// plain float32 loop over 256 x 256 random elements at K = 4096, 80x their rms). Identity and ones inputs are
// exact in every FP32 kernel.
//
// tf32: inputs rounded or truncated to TF32 (10 mantissa bits) change each by up to 2^-10 of itself. With
// random signs these errors grow like sqrt(K): we add 4 sqrt(K) 2^-10 max|A| max|B| (about 4x the largest
// error seen on random inputs at K = 4096). With one sign they add up: a kernel that truncates both inputs
// against a reference that rounds both can be off by 3 * 2^-10 |C|, so we add 3 * 2^-10 max|ref|. On random
// inputs at 2048 x 2048 x 4096 the TF32 tolerance is then 0.61, and a kernel that drops one k-tile of 32 is
// still off by up to 9.8 (3 of 4 elements over it).
Tolerance tolerance_for(int64_t k, double max_abs_a, double max_abs_b, bool tf32 = false);

// The same formula in words, for the Result panel (tf32: with the TF32 terms).
const char* tolerance_formula(bool tf32);

}  // namespace ts

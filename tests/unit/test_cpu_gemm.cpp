#include <cmath>
#include <cstring>
#include <tuple>

#include <gtest/gtest.h>

#include "core/engine/cpu_gemm.hpp"
#include "core/engine/input_gen.hpp"
#include "core/engine/matrix.hpp"
#include "core/engine/problem.hpp"
#include "core/engine/verify.hpp"

using namespace ts;

namespace {

// The plainest possible GEMM: three loops, double accumulation. What the faster code must agree with.
std::vector<double> triple_loop(const HostMatrix& A, const HostMatrix& B) {
  std::vector<double> C(size_t(A.rows * B.cols), 0.0);
  for (int64_t i = 0; i < A.rows; ++i)
    for (int64_t j = 0; j < B.cols; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < A.cols; ++p) acc += double(A.at(i, p)) * double(B.at(p, j));
      C[size_t(i * B.cols + j)] = acc;
    }
  return C;
}

using Shape = std::tuple<int64_t, int64_t, int64_t>;  // m, n, k

class CpuGemmShapes : public ::testing::TestWithParam<Shape> {};

// The reference is OpenBLAS's dgemm on the widened inputs: the products are exact in double, the sums are
// in OpenBLAS's order. So it agrees with the triple loop to within the double sums' rounding (k additions of
// at most |a||b| each: k * 2^-52 * sum |a_p b_p|), and the float result is the triple loop's rounded once,
// or its neighbour where the double sum lies that close to a rounding boundary.
TEST_P(CpuGemmShapes, ReferenceMatchesTripleLoop) {
  auto [m, n, k] = GetParam();
  HostMatrix A = generate_input(InputKind::Random, 7, 0, m, k),
             B = generate_input(InputKind::Random, 7, 1, k, n);
  const auto want = triple_loop(A, B);
  HostMatrix C(m, n);
  cpu_gemm_reference(A.data.data(), B.data.data(), C.data.data(), m, n, k);
  const auto f64 = cpu_gemm_reference_f64(A.data.data(), B.data.data(), m, n, k);
  int64_t exact = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double bound = double(k) * std::ldexp(1.0, -52) * double(k);  // |a|, |b| < 1
    ASSERT_LE(std::fabs(f64[i] - want[i]), bound) << "element " << i;
    const float w = float(want[i]);
    ASSERT_TRUE(C.data[i] == w || C.data[i] == std::nextafter(w, INFINITY) ||
                C.data[i] == std::nextafter(w, -INFINITY))
        << "element " << i << ": " << C.data[i] << " against " << w;
    exact += C.data[i] == w;
  }
  EXPECT_GE(double(exact), 0.99 * double(want.size()));  // a neighbour only at a near tie
}

// What the naive and tiled kernels compute for each element, written as plainly as possible: one float
// accumulator, fused multiply-adds over p in order (nvcc contracts acc += a * b into FFMA), `steps` of them.
std::vector<float> fma_chain(const HostMatrix& A, const HostMatrix& B, int64_t steps) {
  std::vector<float> C(size_t(A.rows * B.cols));
  for (int64_t i = 0; i < A.rows; ++i)
    for (int64_t j = 0; j < B.cols; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < steps; ++p) acc = std::fma(A.at(i, p), B.at(p, j), acc);
      C[size_t(i * B.cols + j)] = acc;
    }
  return C;
}

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The CPU twins must fail where the GPU kernel fails and pass where it passes: they give the GPU kernel's
// bits, the fma chain of every element in order (tests/gpu checks the GPU against them), whatever the
// blocking, the SIMD lanes and the threads do.
TEST_P(CpuGemmShapes, TwinsGiveEachElementsFmaChainBitForBit) {
  auto [m, n, k] = GetParam();
  HostMatrix A = generate_input(InputKind::Random, 5, 0, m, k),
             B = generate_input(InputKind::Random, 5, 1, k, n);
  const auto full = fma_chain(A, B, k);
  HostMatrix D(m, n);
  cpu_gemm_naive(A.data.data(), B.data.data(), D.data.data(), m, n, k, 16);
  for (size_t i = 0; i < full.size(); ++i)
    ASSERT_TRUE(same_bits(D.data[i], full[i])) << "naive element " << i;
  for (int tile : {8, 16, 32}) {
    HostMatrix C(m, n), F(m, n);
    cpu_gemm_tiled(A.data.data(), B.data.data(), C.data.data(), m, n, k, tile);
    cpu_gemm_tiled_floork(A.data.data(), B.data.data(), F.data.data(), m, n, k, tile);
    const auto floor = fma_chain(A, B, k / tile * tile);
    for (size_t i = 0; i < full.size(); ++i) {
      ASSERT_TRUE(same_bits(C.data[i], full[i])) << "tiled T=" << tile << " element " << i;
      ASSERT_TRUE(same_bits(F.data[i], floor[i])) << "floork T=" << tile << " element " << i;
    }
  }
}

TEST_P(CpuGemmShapes, TiledAndNaiveAgreeWithTheReferenceForEveryTile) {
  auto [m, n, k] = GetParam();
  HostMatrix A = generate_input(InputKind::Random, 3, 0, m, k),
             B = generate_input(InputKind::Random, 3, 1, k, n);
  const auto want = triple_loop(A, B);
  const double tol = tolerance_for(k, max_abs(A.data.data(), A.size()), max_abs(B.data.data(), B.size()))
                         .at(max_abs(want.data(), want.size()));
  for (int tile : {8, 16, 32}) {
    HostMatrix C(m, n);
    C.data.assign(C.size(), NAN);  // every element must be written
    cpu_gemm_tiled(A.data.data(), B.data.data(), C.data.data(), m, n, k, tile);
    HostMatrix D(m, n);
    D.data.assign(D.size(), NAN);
    cpu_gemm_naive(A.data.data(), B.data.data(), D.data.data(), m, n, k, tile);
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_LE(std::fabs(C.data[i] - want[i]), tol) << "tiled T=" << tile << " element " << i;
      ASSERT_LE(std::fabs(D.data[i] - want[i]), tol) << "naive element " << i;
    }
  }
}

// 300 x 290 x 600: several row bands, edge tiles both ways and three blocks of K (kKc = 256) with a partial
// one, so accumulators go through C between blocks.
INSTANTIATE_TEST_SUITE_P(OddShapes, CpuGemmShapes,
                         ::testing::Values(Shape{1, 1, 1}, Shape{7, 7, 7}, Shape{17, 17, 17},
                                           Shape{33, 33, 33}, Shape{100, 100, 100}, Shape{129, 129, 129},
                                           Shape{33, 65, 17}, Shape{65, 33, 129}, Shape{1, 100, 7},
                                           Shape{100, 1, 33}, Shape{300, 290, 600}));

}  // namespace

TEST(CpuGemm, OnesGiveKEverywhereAndIdentityReproducesB) {
  const int64_t m = 45, n = 37, k = 45;
  HostMatrix A = generate_input(InputKind::Ones, 1, 0, m, k), B = generate_input(InputKind::Ones, 1, 1, k, n);
  HostMatrix C(m, n);
  cpu_gemm_tiled(A.data.data(), B.data.data(), C.data.data(), m, n, k, 16);
  for (float v : C.data) ASSERT_EQ(v, float(k));
  HostMatrix I = generate_input(InputKind::Identity, 5, 0, m, k),
             R = generate_input(InputKind::Identity, 5, 1, k, n);
  cpu_gemm_tiled(I.data.data(), R.data.data(), C.data.data(), m, n, k, 32);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(C.at(i, j), R.at(i, j));
}

TEST(InputGen, SymmetricInputsAreSymmetricAndSeedsMatter) {
  HostMatrix A = generate_input(InputKind::Symmetric, 9, 0, 50, 50);
  for (int64_t i = 0; i < 50; ++i)
    for (int64_t j = 0; j < 50; ++j) ASSERT_EQ(A.at(i, j), A.at(j, i));
  HostMatrix B = generate_input(InputKind::Symmetric, 9, 1, 50, 50);
  EXPECT_NE(A.data, B.data);
  HostMatrix A2 = generate_input(InputKind::Random, 10, 0, 50, 50),
             A3 = generate_input(InputKind::Random, 11, 0, 50, 50);
  EXPECT_NE(A2.data, A3.data);
  for (float v : A2.data) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
  }
}

// The Seed field is enabled where seeded_matrices says an input depends on the seed: for every input kind,
// a matrix changes with the seed exactly when it says so (identity: A does not, B does).
TEST(InputGen, SeededMatricesAreExactlyThoseThatChangeWithTheSeed) {
  for (InputKind kind : generated_input_kinds()) {
    const int seeded = seeded_matrices(gen_kind(kind));
    for (int matrix = 0; matrix < 2; ++matrix) {
      const bool changes =
          generate_input(kind, 3, matrix, 20, 20).data != generate_input(kind, 4, matrix, 20, 20).data;
      EXPECT_EQ(changes, (seeded & (matrix == 0 ? kSeedsA : kSeedsB)) != 0)
          << to_string(kind) << (matrix == 0 ? " A" : " B");
    }
  }
  EXPECT_EQ(seeded_matrices(GenKind::Identity), kSeedsB);
}

TEST(CpuGemm, CancellationStopsARun) {
  HostMatrix A = generate_input(InputKind::Random, 1, 0, 256, 256), B = A, C(256, 256);
  CancelToken t;
  t.cancel();
  EXPECT_THROW(cpu_gemm_tiled(A.data.data(), B.data.data(), C.data.data(), 256, 256, 256, 16, &t), Cancelled);
}

TEST(InputGen, RampGivesEachElementOfAItsRowAndOfBItsColumnSoCIsKTimesRowTimesColumn) {
  const int64_t m = 40, n = 24, k = 33;
  HostMatrix A = generate_input(InputKind::Ramp, 7, 0, m, k), B = generate_input(InputKind::Ramp, 7, 1, k, n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j) ASSERT_EQ(A.at(i, j), float(i)) << i << "," << j;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(B.at(i, j), float(j)) << i << "," << j;
  HostMatrix C(m, n);
  cpu_gemm_tiled(A.data.data(), B.data.data(), C.data.data(), m, n, k, 8);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(C.at(i, j), float(k * i * j)) << i << "," << j;
  EXPECT_EQ(parse_input_kind("ramp"), InputKind::Ramp);
  EXPECT_STREQ(to_string(InputKind::Ramp), "ramp");
}

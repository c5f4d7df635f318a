#include <cmath>
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

TEST_P(CpuGemmShapes, ReferenceMatchesTripleLoop) {
  auto [m, n, k] = GetParam();
  HostMatrix A = generate_input(InputKind::Random, 7, 0, m, k),
             B = generate_input(InputKind::Random, 7, 1, k, n);
  const auto want = triple_loop(A, B);
  HostMatrix C(m, n);
  cpu_gemm_reference(A.data.data(), B.data.data(), C.data.data(), m, n, k);
  const auto f64 = cpu_gemm_reference_f64(A.data.data(), B.data.data(), m, n, k);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(C.data[i], float(want[i])) << "element " << i;  // same sums in the same order, rounded once
    ASSERT_EQ(f64[i], want[i]) << "element " << i;
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

INSTANTIATE_TEST_SUITE_P(OddShapes, CpuGemmShapes,
                         ::testing::Values(Shape{1, 1, 1}, Shape{7, 7, 7}, Shape{17, 17, 17},
                                           Shape{33, 33, 33}, Shape{100, 100, 100}, Shape{129, 129, 129},
                                           Shape{33, 65, 17}, Shape{65, 33, 129}, Shape{1, 100, 7},
                                           Shape{100, 1, 33}));

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

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/engine/verify.hpp"

using namespace ts;

TEST(Compare, FindsTheWorstElementAndCountsBadOnes) {
  std::vector<float> ref(12, 2.0f), c = ref;
  c[5] = 2.5f;  // row 1, col 1 of a 4-column matrix
  c[9] = 2.1f;
  ErrorStats e = compare(c.data(), ref.data(), 3, 4, Tolerance{0.2});
  EXPECT_FALSE(e.passed);
  EXPECT_DOUBLE_EQ(e.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(e.max_rel_err, 0.25);
  EXPECT_EQ(e.worst_row, 1);
  EXPECT_EQ(e.worst_col, 1);
  EXPECT_EQ(e.bad_elements, 1);
  EXPECT_TRUE(compare(c.data(), ref.data(), 3, 4, Tolerance{0.5}).passed);
}

TEST(Compare, NanAndInfinityNeverPass) {
  std::vector<float> ref(4, 1.0f), c = ref;
  c[2] = NAN;
  ErrorStats e = compare(c.data(), ref.data(), 2, 2, Tolerance{1e30});
  EXPECT_FALSE(e.passed);
  EXPECT_TRUE(std::isinf(e.max_abs_err));
  EXPECT_EQ(e.worst_row, 1);
  EXPECT_EQ(e.worst_col, 0);
  c[2] = INFINITY;
  EXPECT_FALSE(compare(c.data(), ref.data(), 2, 2, Tolerance{1e30}).passed);
}

TEST(Compare, ResolvesTheToleranceAtTheReferencesLargestMagnitude) {
  // ref up to 100: 0.1 + 0.002 * 100 = 0.3 allowed. Off by 0.25 passes; off by 0.35 fails, and only that one.
  std::vector<float> ref = {1.0f, -100.0f, 50.0f, 2.0f}, c = ref;
  c[0] += 0.25f;
  ErrorStats e = compare(c.data(), ref.data(), 2, 2, Tolerance{0.1, 0.002});
  EXPECT_TRUE(e.passed);
  EXPECT_DOUBLE_EQ(e.tolerance, 0.1 + 0.002 * 100);
  EXPECT_EQ(e.bad_elements, 0);
  c[3] += 0.35f;
  e = compare(c.data(), ref.data(), 2, 2, Tolerance{0.1, 0.002});
  EXPECT_FALSE(e.passed);
  EXPECT_EQ(e.bad_elements, 1);
  EXPECT_EQ(e.worst_row, 1);
  EXPECT_EQ(e.worst_col, 1);
  // Without the reference's term the first element is over too.
  EXPECT_EQ(compare(c.data(), ref.data(), 2, 2, Tolerance{0.1}).bad_elements, 2);
  // A reference holding infinity makes the tolerance infinite: never a pass.
  ref[2] = INFINITY;
  c[2] = INFINITY;
  EXPECT_FALSE(compare(c.data(), ref.data(), 2, 2, Tolerance{0.1, 0.002}).passed);
}

TEST(Compare, TheWorstOfEqualErrorsIsTheFirstInRowMajorOrder) {
  std::vector<float> ref(300000, 1.0f), c = ref;  // several threads' chunks
  c[250000] = 3.0f;
  c[70000] = 3.0f;
  const ErrorStats e = compare(c.data(), ref.data(), 1000, 300, Tolerance{0.5});
  EXPECT_EQ(e.worst_row * 300 + e.worst_col, 70000);
  EXPECT_EQ(e.bad_elements, 2);
}

#include <cmath>

#include <gtest/gtest.h>

#include "verify.hpp"

using namespace ts;

TEST(Compare, FindsTheWorstElementAndCountsBadOnes) {
  std::vector<float> ref(12, 2.0f), c = ref;
  c[5] = 2.5f;  // row 1, col 1 of a 4-column matrix
  c[9] = 2.1f;
  ErrorStats e = compare(c.data(), ref.data(), 3, 4, 0.2);
  EXPECT_FALSE(e.passed);
  EXPECT_DOUBLE_EQ(e.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(e.max_rel_err, 0.25);
  EXPECT_EQ(e.worst_row, 1);
  EXPECT_EQ(e.worst_col, 1);
  EXPECT_EQ(e.bad_elements, 1);
  EXPECT_TRUE(compare(c.data(), ref.data(), 3, 4, 0.5).passed);
}

TEST(Compare, NanAndInfinityNeverPass) {
  std::vector<float> ref(4, 1.0f), c = ref;
  c[2] = NAN;
  ErrorStats e = compare(c.data(), ref.data(), 2, 2, 1e30);
  EXPECT_FALSE(e.passed);
  EXPECT_TRUE(std::isinf(e.max_abs_err));
  EXPECT_EQ(e.worst_row, 1);
  EXPECT_EQ(e.worst_col, 0);
  c[2] = INFINITY;
  EXPECT_FALSE(compare(c.data(), ref.data(), 2, 2, 1e30).passed);
}

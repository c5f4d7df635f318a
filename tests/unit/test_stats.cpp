#include <gtest/gtest.h>

#include "core/engine/stats.hpp"

using namespace ts;

TEST(Stats, QuantilesInterpolateBetweenOrderStatistics) {
  const std::vector<double> s = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(quantile(s, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile(s, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile(s, 1.0), 5);
  EXPECT_DOUBLE_EQ(quantile(s, 0.25), 2);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

TEST(Stats, SummaryOfSamples) {
  SampleStats st = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(st.count, 8);
  EXPECT_DOUBLE_EQ(st.mean, 5);
  EXPECT_DOUBLE_EQ(st.median, 4.5);
  EXPECT_DOUBLE_EQ(st.min, 2);
  EXPECT_DOUBLE_EQ(st.max, 9);
  EXPECT_NEAR(st.stddev, 2.138, 1e-3);  // sample standard deviation
  EXPECT_DOUBLE_EQ(st.p25, 4);
  EXPECT_DOUBLE_EQ(st.p75, 5.5);
}

TEST(Stats, TflopsOfAGemm) {
  // 4096^3: 2 * 4096^3 = 137.4 GFLOP; in 2.69 ms that is 51.1 TFLOP/s (GPU.md's cuBLAS figure).
  EXPECT_NEAR(tflops(2.0 * 4096.0 * 4096.0 * 4096.0, 2.69), 51.09, 0.01);
  EXPECT_EQ(tflops(1e9, 0), 0);
}

#include <cmath>

#include <gtest/gtest.h>

#include "heatmap.hpp"
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

TEST(Downsample, EveryModeSummarisesItsBlock) {
  // 4 x 4 -> 2 x 2: blocks of 2 x 2.
  const std::vector<float> m = {1, 2, 10, 20,   //
                                3, 4, 30, -40,  //
                                5, 5, 0,  0,    //
                                5, 5, 0,  -8};
  HeatmapView mean = downsample(m.data(), 4, 4, 2, 2, Reduce::Mean);
  ASSERT_EQ(mean.w, 2);
  ASSERT_EQ(mean.h, 2);
  EXPECT_EQ(mean.values, (std::vector<float>{2.5f, 5.0f, 5.0f, -2.0f}));
  EXPECT_EQ(downsample(m.data(), 4, 4, 2, 2, Reduce::Min).values, (std::vector<float>{1, -40, 5, -8}));
  EXPECT_EQ(downsample(m.data(), 4, 4, 2, 2, Reduce::Max).values, (std::vector<float>{4, 30, 5, 0}));
  EXPECT_EQ(downsample(m.data(), 4, 4, 2, 2, Reduce::AbsMax).values, (std::vector<float>{4, 40, 5, 8}));
  EXPECT_EQ(mean.vmin, -40.0f);
  EXPECT_EQ(mean.vmax, 30.0f);
}

TEST(Downsample, SmallMatricesAreShownElementForElementAndUnevenBlocksCoverEverything) {
  std::vector<float> m(3 * 5);
  for (size_t i = 0; i < m.size(); ++i) m[i] = float(i);
  HeatmapView v = downsample(m.data(), 3, 5, 512, 512, Reduce::Mean);
  EXPECT_EQ(v.w, 5);
  EXPECT_EQ(v.h, 3);
  EXPECT_EQ(v.values, m);
  // 7 columns into 3: blocks of 2, 2, 3 columns; the mean of all block means weighted by size is the total
  // mean.
  std::vector<float> r(7, 0.0f);
  r[6] = 7.0f;
  HeatmapView u = downsample(r.data(), 1, 7, 3, 3, Reduce::Max);
  EXPECT_EQ(u.values, (std::vector<float>{0, 0, 7}));
}

TEST(ErrorView, KeepsASingleWrongElementVisible) {
  std::vector<float> a(64 * 64, 1.0f), b = a;
  a[33 * 64 + 40] = 1.75f;
  HeatmapView v = error_view(a.data(), b.data(), 64, 64, 8, 8);
  EXPECT_FLOAT_EQ(v.values[size_t(33 / 8) * 8 + 40 / 8], 0.75f);
  EXPECT_FLOAT_EQ(v.vmax, 0.75f);
  float others = 0;
  for (float x : v.values) others += x;
  EXPECT_FLOAT_EQ(others, 0.75f);
}

TEST(Downsample, IsTheLevelOfDetailReductionOfTheWholeMatrix) {
  std::vector<float> m(45 * 61);
  for (size_t i = 0; i < m.size(); ++i) m[i] = std::sin(float(i) * 0.37f) * float(i % 13);
  for (Reduce mode : {Reduce::Mean, Reduce::Min, Reduce::Max, Reduce::AbsMax}) {
    HeatmapView v = downsample(m.data(), 45, 61, 8, 11, mode);
    ASSERT_EQ(v.w, 8);
    ASSERT_EQ(v.h, 11);
    std::vector<float> lod(8 * 11);
    lod_reduce(m.data(), 61, 45, 61, LodRegion{0, 0, 45, 61, 8, 11}, mode, lod.data());
    if (mode == Reduce::AbsMax)
      for (float& x : lod) x = std::fabs(x);  // downsample reports the magnitude
    EXPECT_EQ(v.values, lod);
  }
}

TEST(Downsample, NonFiniteElementsShowAsNanBlocksAndStayOutOfTheRange) {
  std::vector<float> m(4 * 4, 1.0f);
  m[1] = NAN;               // block (0, 0)
  m[2 * 4 + 3] = INFINITY;  // block (1, 1)
  HeatmapView v = downsample(m.data(), 4, 4, 2, 2, Reduce::Mean);
  EXPECT_TRUE(std::isnan(v.values[0]));
  EXPECT_EQ(v.values[1], 1.0f);
  EXPECT_EQ(v.values[2], 1.0f);
  EXPECT_TRUE(std::isnan(v.values[3]));
  EXPECT_EQ(v.vmin, 1.0f);
  EXPECT_EQ(v.vmax, 1.0f);
  HeatmapView mx = downsample(m.data(), 4, 4, 2, 2, Reduce::Max);
  EXPECT_TRUE(std::isnan(mx.values[0]));
  EXPECT_EQ(mx.values[3], INFINITY);
  // A NaN in C is a wrong element too: the error map must not hide it.
  std::vector<float> c(64 * 64, 1.0f), ref = c;
  c[10 * 64 + 50] = NAN;
  HeatmapView e = error_view(c.data(), ref.data(), 64, 64, 8, 8);
  EXPECT_TRUE(std::isnan(e.values[size_t(10 / 8) * 8 + 50 / 8]));
  EXPECT_EQ(e.values[0], 0.0f);
}

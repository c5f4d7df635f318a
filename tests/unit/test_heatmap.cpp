// Heatmap level of detail (reduction, value ranges, zoom arithmetic) and the CPU colouring reference.
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "core/plots/colormap.hpp"
#include "core/plots/heatmap.hpp"

using namespace ts;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// rows x cols values in [-1, 1) with a few larger ones, row stride ld (padding filled with a poison value).
std::vector<float> random_matrix(int64_t rows, int64_t cols, int64_t ld, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> m(size_t(rows * ld), 1e30f);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m[size_t(i * ld + j)] = (j % 17 == 3 ? 40.0f : 1.0f) * u(rng);
  return m;
}

// Brute force: every element of the region is assigned to its view cell by searching the cell whose block
// holds it, then each cell is reduced on its own (elements visited row-major, as lod_reduce promises).
std::vector<float> reference_reduce(const std::vector<float>& src, int64_t ld, const LodRegion& r,
                                    Reduce mode) {
  auto cell_of = [](int64_t k, int64_t extent,
                    int n) {  // the cell t with floor(t E / n) <= k < floor((t+1) E / n)
    for (int t = 0; t < n; ++t)
      if (int64_t(t) * extent / n <= k && k < int64_t(t + 1) * extent / n) return t;
    return -1;
  };
  const size_t cells = size_t(r.w) * size_t(r.h);
  std::vector<std::vector<float>> members(cells);
  for (int64_t i = 0; i < r.rows; ++i)
    for (int64_t j = 0; j < r.cols; ++j) {
      const int y = cell_of(i, r.rows, r.h), x = cell_of(j, r.cols, r.w);
      members[size_t(y) * size_t(r.w) + size_t(x)].push_back(src[size_t((r.row0 + i) * ld + r.col0 + j)]);
    }
  std::vector<float> out(cells);
  for (size_t c = 0; c < cells; ++c) {
    const std::vector<float>& m = members[c];
    EXPECT_FALSE(m.empty());
    bool nan = false, nonfinite = false;
    for (float v : m) {
      nan |= std::isnan(v);
      nonfinite |= !std::isfinite(v);
    }
    float o = 0;
    switch (mode) {
      case Reduce::Mean: {
        double s = 0;
        for (float v : m) s += v;
        o = nonfinite ? kNaN : float(s / double(m.size()));
        break;
      }
      case Reduce::Min: {
        float best = kInf;
        for (float v : m)
          if (v < best) best = v;
        o = nan ? kNaN : best;
        break;
      }
      case Reduce::Max: {
        float best = -kInf;
        for (float v : m)
          if (v > best) best = v;
        o = nan ? kNaN : best;
        break;
      }
      case Reduce::AbsMax: {
        float best = 0;
        for (float v : m)
          if (std::fabs(v) > std::fabs(best) || (std::fabs(v) == std::fabs(best) && v > best)) best = v;
        o = nonfinite ? kNaN : best;
        break;
      }
    }
    out[c] = o;
  }
  return out;
}

std::vector<float> reduce(const std::vector<float>& src, int64_t ld, int64_t rows, int64_t cols,
                          const LodRegion& r, Reduce mode) {
  std::vector<float> out(size_t(r.w) * size_t(r.h), -12345.0f);
  lod_reduce(src.data(), ld, rows, cols, r, mode, out.data());
  return out;
}

// Element-wise equality that treats NaN as equal to NaN.
void expect_same(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i << ": " << got[i];
    else
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
  }
}

const Reduce kModes[] = {Reduce::Mean, Reduce::Min, Reduce::Max, Reduce::AbsMax};
const char* mode_name(Reduce m) {
  return m == Reduce::Mean ? "Mean" : m == Reduce::Min ? "Min" : m == Reduce::Max ? "Max" : "AbsMax";
}

}  // namespace

// [SECTION] Reduction

TEST(HeatmapLod, BlocksPartitionTheExtentEvenlyIn64BitMath) {
  // 37 rows into 5 view rows: 7, 7, 8, 7, 8.
  std::vector<int64_t> b;
  for (int i = 0; i <= 5; ++i) b.push_back(lod_begin(11, 37, 5, i));
  EXPECT_EQ(b, (std::vector<int64_t>{11, 18, 25, 33, 40, 48}));
  // i * extent overflows 32 bits here.
  EXPECT_EQ(lod_begin(0, 65536, 65536, 65535), 65535);
  EXPECT_EQ(lod_begin(0, 3'000'000'000LL, 7, 7), 3'000'000'000LL);
  EXPECT_EQ(lod_begin(5, 3'000'000'000LL, 1920, 1), 5 + 3'000'000'000LL / 1920);
}

TEST(HeatmapLod, EveryModeMatchesBruteForceOnOddShapes) {
  // A 37 x 53 region inside a 100 x 90 matrix, stored with and without row padding.
  for (int64_t ld : {int64_t(90), int64_t(97)}) {
    const std::vector<float> m = random_matrix(100, 90, ld, 7);
    for (auto [w, h] : {std::pair{7, 5}, {53, 37}, {52, 36}, {13, 37}, {53, 2}, {1, 1}, {10, 4}}) {
      const LodRegion r{11, 20, 37, 53, w, h};
      for (Reduce mode : kModes) {
        SCOPED_TRACE(std::string(mode_name(mode)) + " ld " + std::to_string(ld) + " " + std::to_string(w) +
                     " x " + std::to_string(h));
        expect_same(reduce(m, ld, 100, 90, r, mode), reference_reduce(m, ld, r, mode), "view");
      }
    }
  }
}

TEST(HeatmapLod, ConcreteBlocksHaveTheExpectedValues) {
  const std::vector<float> m = {1, 2, 10, 20,   //
                                3, 4, 30, -40,  //
                                5, 5, 0,  0,    //
                                5, 5, 0,  -8};
  const LodRegion all{0, 0, 4, 4, 2, 2};
  EXPECT_EQ(reduce(m, 4, 4, 4, all, Reduce::Mean), (std::vector<float>{2.5f, 5.0f, 5.0f, -2.0f}));
  EXPECT_EQ(reduce(m, 4, 4, 4, all, Reduce::Min), (std::vector<float>{1, -40, 5, -8}));
  EXPECT_EQ(reduce(m, 4, 4, 4, all, Reduce::Max), (std::vector<float>{4, 30, 5, 0}));
  EXPECT_EQ(reduce(m, 4, 4, 4, all, Reduce::AbsMax), (std::vector<float>{4, -40, 5, -8}));
  // The lower-right 3 x 3 region, 3 columns into 2 (blocks of 1 and 2), 3 rows into 1.
  const LodRegion sub{1, 1, 3, 3, 2, 1};
  EXPECT_EQ(reduce(m, 4, 4, 4, sub, Reduce::Mean), (std::vector<float>{14.0f / 3.0f, -18.0f / 6.0f}));
  EXPECT_EQ(reduce(m, 4, 4, 4, sub, Reduce::AbsMax), (std::vector<float>{5, -40}));
}

TEST(HeatmapLod, FullResolutionIsTheIdentity) {
  const std::vector<float> m = random_matrix(100, 90, 90, 3);
  const LodRegion r{11, 20, 37, 53, 53, 37};
  for (Reduce mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    const std::vector<float> out = reduce(m, 90, 100, 90, r, mode);
    for (int y = 0; y < 37; ++y)
      for (int x = 0; x < 53; ++x)
        ASSERT_EQ(out[size_t(y) * 53 + size_t(x)], m[size_t((11 + y) * 90 + 20 + x)]) << y << ", " << x;
  }
  // The whole of a 1 x 1 matrix.
  const float one = -3.5f;
  float out = 0;
  lod_reduce(&one, 1, 1, 1, LodRegion{0, 0, 1, 1, 1, 1}, Reduce::Mean, &out);
  EXPECT_EQ(out, -3.5f);
}

TEST(HeatmapLod, AbsMaxKeepsTheSignOfTheLargestMagnitude) {
  const std::vector<float> m = {1,      -5,    3,      4,  // block 0: -5
                                0.5f,   -7,    7,      2,  // block 1 (a tie): +7, though -7 comes first
                                0,      -0.0f, 0,      0,  // block 2: all zero -> +0
                                -1e-3f, 0,     -2e-3f, 1e-3f};
  const std::vector<float> out = reduce(m, 4, 4, 4, LodRegion{0, 0, 4, 4, 1, 4}, Reduce::AbsMax);
  EXPECT_EQ(out[0], -5.0f);
  EXPECT_EQ(out[1], 7.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_FALSE(std::signbit(out[2]));
  EXPECT_EQ(out[3], -2e-3f);
  // The tie either way round: +7, so the GPU kernel (which reads a block in another order) agrees.
  const std::vector<float> t = {-7, 7}, u = {7, -7};
  EXPECT_EQ(reduce(t, 2, 1, 2, LodRegion{0, 0, 1, 2, 1, 1}, Reduce::AbsMax)[0], 7.0f);
  EXPECT_EQ(reduce(u, 2, 1, 2, LodRegion{0, 0, 1, 2, 1, 1}, Reduce::AbsMax)[0], 7.0f);
}

TEST(HeatmapLod, NanAndInfFollowTheRulesOfEachMode) {
  // One row of five 1 x 2 blocks: {NaN, 1}, {+Inf, 2}, {-Inf, 3}, {+Inf, NaN}, {4, -6}.
  const std::vector<float> m = {kNaN, 1, kInf, 2, -kInf, 3, kInf, kNaN, 4, -6};
  const LodRegion r{0, 0, 1, 10, 5, 1};
  expect_same(reduce(m, 10, 1, 10, r, Reduce::Mean), {kNaN, kNaN, kNaN, kNaN, -1.0f}, "Mean");
  expect_same(reduce(m, 10, 1, 10, r, Reduce::AbsMax), {kNaN, kNaN, kNaN, kNaN, -6.0f}, "AbsMax");
  expect_same(reduce(m, 10, 1, 10, r, Reduce::Min), {kNaN, 2.0f, -kInf, kNaN, -6.0f}, "Min");
  expect_same(reduce(m, 10, 1, 10, r, Reduce::Max), {kNaN, kInf, 3.0f, kNaN, 4.0f}, "Max");
  // Opposite infinities in one block: the mean is NaN, not Inf - Inf by accident of order.
  const std::vector<float> both = {kInf, -kInf};
  EXPECT_TRUE(std::isnan(reduce(both, 2, 1, 2, LodRegion{0, 0, 1, 2, 1, 1}, Reduce::Mean)[0]));
}

TEST(HeatmapLod, RegionsOutsideTheMatrixAreRefused) {
  const std::vector<float> m(100 * 90, 1.0f);
  std::vector<float> out(100 * 90);
  auto run = [&](LodRegion r, int64_t ld = 90) {
    lod_reduce(m.data(), ld, 100, 90, r, Reduce::Mean, out.data());
  };
  EXPECT_NO_THROW(run({0, 0, 100, 90, 90, 100}));
  EXPECT_NO_THROW(run({99, 89, 1, 1, 1, 1}));
  EXPECT_THROW(run({-1, 0, 10, 10, 5, 5}), std::invalid_argument);  // before the first row
  EXPECT_THROW(run({0, -1, 10, 10, 5, 5}), std::invalid_argument);
  EXPECT_THROW(run({91, 0, 10, 10, 5, 5}), std::invalid_argument);     // past the last row
  EXPECT_THROW(run({0, 81, 10, 10, 5, 5}), std::invalid_argument);     // past the last column
  EXPECT_THROW(run({0, 0, 0, 10, 5, 1}), std::invalid_argument);       // no rows
  EXPECT_THROW(run({0, 0, 10, 10, 0, 5}), std::invalid_argument);      // w = 0
  EXPECT_THROW(run({0, 0, 10, 10, 5, 0}), std::invalid_argument);      // h = 0
  EXPECT_THROW(run({0, 0, 10, 10, 11, 5}), std::invalid_argument);     // w > cols
  EXPECT_THROW(run({0, 0, 10, 10, 5, 11}), std::invalid_argument);     // h > rows
  EXPECT_THROW(run({0, 0, 10, 10, 5, 5}, 89), std::invalid_argument);  // row stride below the width
  EXPECT_THROW(lod_reduce(nullptr, 90, 100, 90, {0, 0, 1, 1, 1, 1}, Reduce::Mean, out.data()),
               std::invalid_argument);
  // A huge origin must not overflow into "fits".
  EXPECT_FALSE(lod_region_fits({INT64_MAX - 5, 0, 10, 10, 1, 1}, 100, 90));
  EXPECT_TRUE(lod_region_fits({90, 80, 10, 10, 10, 10}, 100, 90));
  try {
    validate_lod_region({0, 81, 10, 10, 5, 5}, 100, 90);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("100 x 90"), std::string::npos) << e.what();
  }
}

TEST(HeatmapLod, LargeRegionsAreSplitAcrossThreadsWithoutChangingTheResult) {
  // 600 x 700 into 64 x 48: enough work for several threads; compared against a one-view-row-at-a-time run.
  const std::vector<float> m = random_matrix(600, 700, 700, 11);
  const LodRegion r{0, 0, 600, 700, 64, 48};
  for (Reduce mode : kModes) {
    const std::vector<float> all = reduce(m, 700, 600, 700, r, mode);
    for (int y : {0, 17, 47}) {
      const int64_t r0 = lod_begin(0, 600, 48, y), r1 = lod_begin(0, 600, 48, y + 1);
      const std::vector<float> one = reduce(m, 700, 600, 700, LodRegion{r0, 0, r1 - r0, 700, 64, 1}, mode);
      for (int x = 0; x < 64; ++x)
        ASSERT_EQ(all[size_t(y) * 64 + size_t(x)], one[size_t(x)]) << mode_name(mode);
    }
  }
}

// [SECTION] Value ranges

TEST(HeatmapRange, FiniteRangeSkipsNanAndInf) {
  const std::vector<float> v = {kNaN, 3, -kInf, -2, 7.5f, kInf, 0};
  const ValueRange r = finite_range(v.data(), v.size());
  EXPECT_EQ(r.lo, -2.0f);
  EXPECT_EQ(r.hi, 7.5f);
  const std::vector<float> bad = {kNaN, kInf, -kInf};
  EXPECT_EQ(finite_range(bad.data(), bad.size()).lo, 0.0f);
  EXPECT_EQ(finite_range(bad.data(), bad.size()).hi, 0.0f);
  EXPECT_EQ(finite_range(nullptr, 0).hi, 0.0f);
  // Large enough to be split across threads.
  std::vector<float> big(1 << 20, 1.0f);
  big[123457] = -9.0f;
  big[999999] = 11.0f;
  big[5] = kNaN;
  const ValueRange b = finite_range(big.data(), big.size());
  EXPECT_EQ(b.lo, -9.0f);
  EXPECT_EQ(b.hi, 11.0f);
}

TEST(HeatmapRange, TheReductionReportsTheElementsRangeNotTheReducedValues) {
  // Identity 64 x 64 reduced to 8 x 8 block means: every mean is 0 or 1/8, but the elements are 0 and 1, and
  // the colour scale must say so (a legend stopping at 0.125 would lie about the matrix).
  std::vector<float> id(64 * 64, 0.0f);
  for (int i = 0; i < 64; ++i) id[size_t(i) * 64 + size_t(i)] = 1.0f;
  std::vector<float> out(64);
  const ValueRange r =
      lod_reduce(id.data(), 64, 64, 64, LodRegion{0, 0, 64, 64, 8, 8}, Reduce::Mean, out.data());
  EXPECT_EQ(finite_range(out.data(), out.size()).hi, 0.125f);
  EXPECT_EQ(r.lo, 0.0f);
  EXPECT_EQ(r.hi, 1.0f);
  // Only the region counts: rows 8..15, columns 0..7 hold no diagonal element.
  const ValueRange z =
      lod_reduce(id.data(), 64, 64, 64, LodRegion{8, 0, 8, 8, 2, 2}, Reduce::Max, out.data());
  EXPECT_EQ(z.lo, 0.0f);
  EXPECT_EQ(z.hi, 0.0f);
  // NaN and Inf are skipped; a region with no finite element gives {0, 0}.
  std::vector<float> m = {kNaN, -3.0f, kInf, 2.5f};
  const ValueRange f = lod_reduce(m.data(), 2, 2, 2, LodRegion{0, 0, 2, 2, 1, 1}, Reduce::Mean, out.data());
  EXPECT_EQ(f.lo, -3.0f);
  EXPECT_EQ(f.hi, 2.5f);
  std::vector<float> nf = {kNaN, kInf};
  const ValueRange g = lod_reduce(nf.data(), 2, 1, 2, LodRegion{0, 0, 1, 2, 2, 1}, Reduce::Max, out.data());
  EXPECT_EQ(g.lo, 0.0f);
  EXPECT_EQ(g.hi, 0.0f);
}

TEST(HeatmapRange, AutoSymmetricAndManual) {
  const ValueRange data{-1.0f, 3.0f}, none{};
  ValueRange r = resolve_range(RangeMode::Auto, data, none);
  EXPECT_EQ(r.lo, -1.0f);
  EXPECT_EQ(r.hi, 3.0f);
  r = resolve_range(RangeMode::Symmetric, data, none);
  EXPECT_EQ(r.lo, -3.0f);
  EXPECT_EQ(r.hi, 3.0f);
  r = resolve_range(RangeMode::Symmetric, ValueRange{-5.0f, 2.0f}, none);
  EXPECT_EQ(r.lo, -5.0f);
  EXPECT_EQ(r.hi, 5.0f);
  // Tiny but real errors keep their scale.
  r = resolve_range(RangeMode::Symmetric, ValueRange{-2e-7f, 1e-7f}, none);
  EXPECT_EQ(r.lo, -2e-7f);
  EXPECT_EQ(r.hi, 2e-7f);
  r = resolve_range(RangeMode::Manual, data, ValueRange{0.25f, 0.5f});
  EXPECT_EQ(r.lo, 0.25f);
  EXPECT_EQ(r.hi, 0.5f);
}

TEST(HeatmapRange, ManualBoundsAreSwappedOrRejected) {
  const ValueRange data{-1.0f, 3.0f};
  ValueRange r = resolve_range(RangeMode::Manual, data, ValueRange{5.0f, 2.0f});
  EXPECT_EQ(r.lo, 2.0f);
  EXPECT_EQ(r.hi, 5.0f);
  for (ValueRange bad : {ValueRange{kNaN, 1.0f}, ValueRange{0.0f, kInf}, ValueRange{-kInf, kInf}}) {
    r = resolve_range(RangeMode::Manual, data, bad);
    EXPECT_EQ(r.lo, -1.0f);
    EXPECT_EQ(r.hi, 3.0f);
  }
  // Flat manual range: widened like flat data.
  r = resolve_range(RangeMode::Manual, data, ValueRange{2.0f, 2.0f});
  EXPECT_EQ(r.lo, 1.0f);
  EXPECT_EQ(r.hi, 3.0f);
}

TEST(HeatmapRange, FlatRangesAreWidenedSoTheValueIsMidMap) {
  // The "ones" input: every value 1.
  ValueRange r = resolve_range(RangeMode::Auto, ValueRange{1.0f, 1.0f}, {});
  EXPECT_EQ(r.lo, 0.5f);
  EXPECT_EQ(r.hi, 1.5f);
  EXPECT_EQ(colormap_index(1.0f, r.lo, r.hi), 128);
  // An exact result: the error map is all zero.
  r = resolve_range(RangeMode::Symmetric, ValueRange{0.0f, 0.0f}, {});
  EXPECT_EQ(r.lo, -0.5f);
  EXPECT_EQ(r.hi, 0.5f);
  EXPECT_EQ(colormap_index(0.0f, r.lo, r.hi), 128);
  // Large and negative constants, and a range of a few ulps.
  for (float c : {-4.0f, 3e20f, -1e-12f, 1e-35f}) {
    r = resolve_range(RangeMode::Auto, ValueRange{c, c}, {});
    EXPECT_LT(r.lo, c);
    EXPECT_GT(r.hi, c);
    const int i = colormap_index(c, r.lo, r.hi);
    EXPECT_TRUE(i == 127 || i == 128) << c << " -> " << i;
  }
  // A range of one ulp counts as flat (below 1e-6 relative); one of 1e-5 relative does not.
  r = resolve_range(RangeMode::Auto, ValueRange{1.0f, std::nextafter(1.0f, 2.0f)}, {});
  EXPECT_FLOAT_EQ(r.lo, 0.5f);
  EXPECT_FLOAT_EQ(r.hi, 1.5f);
  r = resolve_range(RangeMode::Auto, ValueRange{1.0f, 1.00001f}, {});
  EXPECT_EQ(r.lo, 1.0f);
  EXPECT_EQ(r.hi, 1.00001f);
  // Non-finite data (from a caller that skipped finite_range) counts as {0, 0}.
  r = resolve_range(RangeMode::Auto, ValueRange{kNaN, kInf}, {});
  EXPECT_EQ(r.lo, -0.5f);
  EXPECT_EQ(r.hi, 0.5f);
}

TEST(HeatmapRange, RangesWiderThanFltMaxStayUsable) {
  const ValueRange r = resolve_range(RangeMode::Symmetric, ValueRange{-FLT_MAX, 1.0f}, {});
  EXPECT_TRUE(std::isfinite(r.hi - r.lo));
  EXPECT_EQ(r.lo, -FLT_MAX / 2);
  EXPECT_EQ(r.hi, FLT_MAX / 2);
  EXPECT_EQ(colormap_index(0.0f, r.lo, r.hi), 128);
  EXPECT_EQ(colormap_index(FLT_MAX, r.lo, r.hi), 255);
  // A flat range at the top of the float range is still finite and ordered.
  const ValueRange top = resolve_range(RangeMode::Auto, ValueRange{FLT_MAX, FLT_MAX}, {});
  EXPECT_LT(top.lo, top.hi);
  EXPECT_TRUE(std::isfinite(top.hi));
}

// [SECTION] Zoom arithmetic

TEST(HeatmapZoom, WholeMatrixAtLowerResolution) {
  // A 100 x 90 matrix (rows x cols) in a 64 x 48 pixel plot.
  const LodRegion r = region_for(PlotLimits{0, 90, 0, 100}, 100, 90, 64, 48);
  EXPECT_EQ(r, (LodRegion{0, 0, 100, 90, 64, 48}));
  // A plot larger than the matrix: one value per element.
  EXPECT_EQ(region_for(PlotLimits{0, 90, 0, 100}, 100, 90, 800, 600), (LodRegion{0, 0, 100, 90, 90, 100}));
}

TEST(HeatmapZoom, ZoomedInPastTheEdgeIsClampedToTheMatrix) {
  // Columns -10.5 .. 20.2 -> elements 0 .. 20; rows 90.3 .. 130 -> elements 90 .. 99.
  const LodRegion r = region_for(PlotLimits{-10.5, 20.2, 90.3, 130}, 100, 90, 800, 600);
  EXPECT_EQ(r, (LodRegion{90, 0, 10, 21, 21, 10}));
  // Entirely beside the matrix: the nearest edge element, one wide.
  EXPECT_EQ(region_for(PlotLimits{200, 300, -50, -10}, 100, 90, 800, 600), (LodRegion{0, 89, 1, 1, 1, 1}));
  EXPECT_EQ(region_for(PlotLimits{-300, -200, 150, 160}, 100, 90, 800, 600), (LodRegion{99, 0, 1, 1, 1, 1}));
}

TEST(HeatmapZoom, FractionalAndReversedLimitsCoverTheTouchedElements) {
  // x 3.2 .. 7.9 touches columns 3 .. 7; y 10 .. 12 exactly covers rows 10 and 11.
  EXPECT_EQ(region_for(PlotLimits{3.2, 7.9, 10, 12}, 100, 90, 400, 400), (LodRegion{10, 3, 2, 5, 5, 2}));
  EXPECT_EQ(region_for(PlotLimits{7.9, 3.2, 12, 10}, 100, 90, 400, 400), (LodRegion{10, 3, 2, 5, 5, 2}));
  // Inside one element.
  EXPECT_EQ(region_for(PlotLimits{4.25, 4.75, 6.5, 6.6}, 100, 90, 400, 400), (LodRegion{6, 4, 1, 1, 1, 1}));
  // Zero-width limits on an element boundary still give one element.
  EXPECT_EQ(region_for(PlotLimits{5, 5, 7, 7}, 100, 90, 400, 400), (LodRegion{7, 5, 1, 1, 1, 1}));
  // Fewer pixels than elements: w, h follow the pixels.
  EXPECT_EQ(region_for(PlotLimits{0.5, 80.5, 0, 100}, 100, 90, 30, 7), (LodRegion{0, 0, 100, 81, 30, 7}));
}

TEST(HeatmapZoom, OneByOneMatrixAndDegenerateInputs) {
  for (PlotLimits lim : {PlotLimits{0, 1, 0, 1}, PlotLimits{-5, 5, -5, 5}, PlotLimits{0.2, 0.3, 0.9, 0.95},
                         PlotLimits{10, 20, 10, 20}})
    EXPECT_EQ(region_for(lim, 1, 1, 800, 600), (LodRegion{0, 0, 1, 1, 1, 1}));
  // No pixels: still one value.
  EXPECT_EQ(region_for(PlotLimits{0, 90, 0, 100}, 100, 90, 0, -3), (LodRegion{0, 0, 100, 90, 1, 1}));
  // Non-finite limits: the whole matrix.
  const double nan = std::nan("");
  EXPECT_EQ(region_for(PlotLimits{nan, 5, 0, INFINITY}, 100, 90, 64, 64), (LodRegion{0, 0, 100, 90, 64, 64}));
  EXPECT_THROW(region_for(PlotLimits{0, 1, 0, 1}, 0, 5, 10, 10), std::invalid_argument);
  EXPECT_THROW(region_for(PlotLimits{0, 1, 0, 1}, 5, -1, 10, 10), std::invalid_argument);
}

TEST(HeatmapZoom, HugeMatricesUse64BitMath) {
  const int64_t n = 65536;
  EXPECT_EQ(region_for(PlotLimits{0, double(n), 0, double(n)}, n, n, 1920, 1080),
            (LodRegion{0, 0, n, n, 1920, 1080}));
  EXPECT_EQ(region_for(PlotLimits{65535.5, 1e300, -1e300, 0.5}, n, n, 1920, 1080),
            (LodRegion{0, 65535, 1, 1, 1, 1}));
  // A 3-billion-column matrix (more elements in one row than int32 counts).
  const int64_t wide = 3'000'000'000LL;
  const LodRegion r = region_for(PlotLimits{2'999'999'000.25, 4e9, 0, 1}, 1, wide, 1920, 1080);
  EXPECT_EQ(r, (LodRegion{0, 2'999'999'000LL, 1, 1000, 1000, 1}));
  // Blocks of a 65536-wide region reduced to 1920 values cover every column exactly once.
  int64_t covered = 0;
  for (int x = 0; x < 1920; ++x) {
    const int64_t c0 = lod_begin(0, n, 1920, x), c1 = lod_begin(0, n, 1920, x + 1);
    EXPECT_TRUE(c1 - c0 == 34 || c1 - c0 == 35) << x;
    covered += c1 - c0;
  }
  EXPECT_EQ(covered, n);
}

TEST(HeatmapZoom, PixelsPerElement) {
  EXPECT_DOUBLE_EQ(pixels_per_element(PlotLimits{0, 100, 0, 50}, 800), 8.0);
  EXPECT_DOUBLE_EQ(pixels_per_element(PlotLimits{100, 0, 0, 50}, 800), 8.0);  // reversed limits
  EXPECT_DOUBLE_EQ(pixels_per_element(PlotLimits{10.5, 11, 0, 50}, 800), 1600.0);
  EXPECT_DOUBLE_EQ(pixels_per_element_y(PlotLimits{0, 100, 0, 50}, 600), 12.0);
  EXPECT_EQ(pixels_per_element(PlotLimits{3, 3, 0, 1}, 800), 0.0);  // empty limits
  EXPECT_EQ(pixels_per_element(PlotLimits{0, 100, 0, 1}, 0), 0.0);
  EXPECT_EQ(pixels_per_element(PlotLimits{0, INFINITY, 0, 1}, 800), 0.0);
}

TEST(HeatmapZoom, TileGridAppearsWhenATileSpansEnoughPixels) {
  // 250 columns in 250 px: 1 px per element, a 32-tile spans exactly 32 px.
  EXPECT_TRUE(tile_grid_visible(PlotLimits{0, 250, 0, 250}, 250, 250, 32));
  EXPECT_FALSE(tile_grid_visible(PlotLimits{0, 251, 0, 250}, 250, 250, 32));  // 31.9 px along x
  EXPECT_FALSE(tile_grid_visible(PlotLimits{0, 250, 0, 251}, 250, 250, 32));  // 31.9 px along y
  EXPECT_FALSE(tile_grid_visible(PlotLimits{0, 250, 0, 250}, 250, 250, 16));  // 16 px
  EXPECT_TRUE(tile_grid_visible(PlotLimits{0, 250, 0, 250}, 250, 250, 16, 16.0));
  EXPECT_TRUE(tile_grid_visible(PlotLimits{0, 250, 0, 250}, 500, 500, 16));
  EXPECT_FALSE(tile_grid_visible(PlotLimits{0, 250, 0, 250}, 250, 250, 0));
  EXPECT_FALSE(tile_grid_visible(PlotLimits{0, 0, 0, 250}, 250, 250, 32));
  // A whole 256^2 matrix of 16-tiles in a laptop's 150-pixel map (9.4 px a tile), or a desktop's 400-pixel
  // one (25 px): no grid, it would stripe the data.
  EXPECT_FALSE(tile_grid_visible(PlotLimits{0, 256, 0, 256}, 150, 150, 16));
  EXPECT_FALSE(tile_grid_visible(PlotLimits{0, 256, 0, 256}, 400, 400, 16));
}

// [SECTION] A slow link's views: coarse first

TEST(HeatmapCoarseFirst, AnUnmeasuredLinkAsksBigViewsCoarseFirst) {
  const LodRegion view{0, 0, 512, 512, 400, 400};
  EXPECT_EQ(view_bytes(view), 400 * 400 * 4);
  EXPECT_TRUE(coarse_first(view_bytes(view), 0, 0));  // a fresh link: no rate, no round trip yet
  EXPECT_TRUE(coarse_first(view_bytes(view), 0, 50));
  EXPECT_TRUE(coarse_first(view_bytes(view), NAN, 50));  // a rate that is no figure counts as none
  EXPECT_TRUE(coarse_first(view_bytes(view), -1, 50));
  EXPECT_TRUE(coarse_first(view_bytes(view), INFINITY, 50));
  EXPECT_FALSE(coarse_first(kCoarseFirstUnmeasuredBytes, 0, 0));  // up to the limit: whole at once
  EXPECT_TRUE(coarse_first(kCoarseFirstUnmeasuredBytes + 1, 0, 0));
  EXPECT_FALSE(coarse_first(view_bytes(LodRegion{0, 0, 64, 48, 48, 64}), 0, 0));  // a small matrix
  EXPECT_FALSE(coarse_first(0, 0, 0));
}

TEST(HeatmapCoarseFirst, AMeasuredLinkAsksCoarseFirstWhenTheWholeViewWouldBeLongAndItPays) {
  const int64_t view = 400 * 400 * 4;                // 640 kB
  const double mbit = 1e6 / 8;                       // bytes a second in one Mbit/s
  EXPECT_TRUE(coarse_first(view, 20 * mbit, 50));    // 0.256 s of transfer: coarse in 16 ms
  EXPECT_FALSE(coarse_first(view, 100 * mbit, 50));  // 51 ms: whole at once
  EXPECT_FALSE(coarse_first(view, 1e9, 0.1));        // a pipe on one machine
  EXPECT_TRUE(coarse_first(1920 * 1080 * 4, 1 * mbit, 300));
  // What the coarse view saves (15/16 of the transfer, 0.24 s here) against what it delays the whole one (a
  // round trip and its own sixteenth): a long round trip makes it not worth it.
  EXPECT_TRUE(coarse_first(view, 20 * mbit, 200));
  EXPECT_FALSE(coarse_first(view, 20 * mbit, 250));
  EXPECT_FALSE(coarse_first(view, 20 * mbit, 1000));
  // The threshold is the transfer's: kCoarseFirstAfterS of it at the measured rate.
  const double rate = 1e6;
  EXPECT_FALSE(coarse_first(int64_t(kCoarseFirstAfterS * rate), rate, 0));
  EXPECT_TRUE(coarse_first(int64_t(kCoarseFirstAfterS * rate) + 1000, rate, 0));
}

TEST(HeatmapCoarseFirst, TheCoarseRegionCoversTheSameElementsWithFewerValues) {
  const LodRegion r{3, 5, 500, 300, 401, 250};
  const LodRegion c = coarse_region(r);
  EXPECT_EQ(c.row0, r.row0);
  EXPECT_EQ(c.col0, r.col0);
  EXPECT_EQ(c.rows, r.rows);
  EXPECT_EQ(c.cols, r.cols);
  EXPECT_EQ(c.w, 101);  // ceil(401 / 4)
  EXPECT_EQ(c.h, 63);   // ceil(250 / 4)
  EXPECT_TRUE(lod_region_fits(c, 503, 305));
  EXPECT_EQ(coarse_region(LodRegion{0, 0, 7, 9, 1, 1}), (LodRegion{0, 0, 7, 9, 1, 1}));  // nothing fewer
  EXPECT_EQ(coarse_region(LodRegion{0, 0, 7, 9, 9, 3}).w, 3);
  EXPECT_EQ(coarse_region(LodRegion{0, 0, 7, 9, 9, 3}).h, 1);
}

// [SECTION] Colour maps

TEST(Colormap, IndexBoundaries) {
  EXPECT_EQ(colormap_index(0.0f, 0.0f, 1.0f), 0);
  EXPECT_EQ(colormap_index(1.0f, 0.0f, 1.0f), 255);
  EXPECT_EQ(colormap_index(std::nextafter(1.0f, 0.0f), 0.0f, 1.0f), 255);
  EXPECT_EQ(colormap_index(0.5f, 0.0f, 1.0f), 128);
  EXPECT_EQ(colormap_index(std::nextafter(0.5f, 0.0f), 0.0f, 1.0f), 127);
  EXPECT_EQ(colormap_index(1.0f / 256.0f, 0.0f, 1.0f), 1);
  EXPECT_EQ(colormap_index(std::nextafter(1.0f / 256.0f, 0.0f), 0.0f, 1.0f), 0);
  EXPECT_EQ(colormap_index(-2.0f, -2.0f, 6.0f), 0);
  EXPECT_EQ(colormap_index(2.0f, -2.0f, 6.0f), 128);
  EXPECT_EQ(colormap_index(5.99f, -2.0f, 6.0f), 255);
  // Outside the range: clamped, also for quotients far beyond int.
  EXPECT_EQ(colormap_index(-1.0f, 0.0f, 1.0f), 0);
  EXPECT_EQ(colormap_index(7.0f, 0.0f, 1.0f), 255);
  EXPECT_EQ(colormap_index(FLT_MAX, 0.0f, 1e-30f), 255);
  EXPECT_EQ(colormap_index(-FLT_MAX, 0.0f, 1e-30f), 0);
  // Non-finite values.
  EXPECT_EQ(colormap_index(kNaN, 0.0f, 1.0f), -1);
  EXPECT_EQ(colormap_index(kInf, 0.0f, 1.0f), -1);
  EXPECT_EQ(colormap_index(-kInf, 0.0f, 1.0f), -1);
  // A degenerate range (which resolve_range never returns) is still defined.
  EXPECT_EQ(colormap_index(3.0f, 3.0f, 3.0f), 0);
  // The formula, literally, over many values.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3.0f, 5.0f);
  for (int i = 0; i < 10000; ++i) {
    const float v = u(rng), lo = -2.0f, hi = 4.5f;
    const int want = std::min(255, std::max(0, int(std::floor((v - lo) / (hi - lo) * 256.0f))));
    ASSERT_EQ(colormap_index(v, lo, hi), want) << v;
  }
}

TEST(Colormap, BuiltInTablesAreComplete) {
  const std::vector<Colormap>& maps = colormaps();
  ASSERT_GE(maps.size(), 3u);
  EXPECT_EQ(maps.front().name, "viridis");
  EXPECT_EQ(maps.front().kind, "sequential");
  for (const char* name : {"viridis", "magma", "inferno", "RdBu_r", "coolwarm"}) {
    const Colormap* m = find_colormap(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->name, name);
    EXPECT_EQ(m->rgba.size(), 256u);
    for (const auto& c : m->rgba) EXPECT_EQ(c[3], 255) << name;
  }
  EXPECT_EQ(find_colormap("RdBu_r")->kind, "diverging");
  EXPECT_EQ(find_colormap("magma")->kind, "sequential");
  EXPECT_EQ(find_colormap("jet"), nullptr);
  EXPECT_EQ(find_colormap(""), nullptr);
  EXPECT_EQ(default_diverging_colormap().kind, "diverging");
  // Sequential maps come first.
  bool seen_diverging = false;
  for (const Colormap& m : maps) {
    if (m.kind == "diverging") seen_diverging = true;
    EXPECT_TRUE(m.kind == "diverging" || !seen_diverging) << m.name << " after a diverging map";
  }
  // matplotlib's viridis, ends and middle (https://github.com/BIDS/colormap).
  const Colormap& v = *find_colormap("viridis");
  EXPECT_EQ(v.rgba[0], (std::array<uint8_t, 4>{68, 1, 84, 255}));
  EXPECT_EQ(v.rgba[128], (std::array<uint8_t, 4>{33, 145, 140, 255}));
  EXPECT_EQ(v.rgba[255], (std::array<uint8_t, 4>{253, 231, 37, 255}));
}

namespace {
double luminance(const std::array<uint8_t, 4>& c) {
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
}  // namespace

TEST(Colormap, SequentialMapsGetLighterAndDivergingMapsAreLightInTheMiddle) {
  for (const Colormap& m : colormaps()) {
    SCOPED_TRACE(m.name);
    if (m.kind == "sequential") {
      for (size_t i = 1; i < 256; ++i) EXPECT_GE(luminance(m.rgba[i]), luminance(m.rgba[i - 1]) - 1.0) << i;
      for (size_t i = 16; i < 256; i += 16)
        EXPECT_GT(luminance(m.rgba[i]), luminance(m.rgba[i - 16]) + 5) << i;
    } else {
      const double mid = luminance(m.rgba[128]), lo = luminance(m.rgba[0]), hi = luminance(m.rgba[255]);
      EXPECT_GT(mid, 200.0);
      EXPECT_GT(mid, lo + 100.0);
      EXPECT_GT(mid, hi + 100.0);
      for (size_t i = 0; i < 128; ++i) {
        EXPECT_NEAR(luminance(m.rgba[i]), luminance(m.rgba[255 - i]), 40.0) << i;  // symmetric-ish
        if (i < 120) {  // cold below the middle, warm above
          EXPECT_GT(m.rgba[i][2], m.rgba[i][0]) << i;
          EXPECT_GT(m.rgba[255 - i][0], m.rgba[255 - i][2]) << i;
        }
      }
      for (size_t i = 1; i <= 128; ++i) EXPECT_GE(luminance(m.rgba[i]), luminance(m.rgba[i - 1]) - 1.0) << i;
    }
  }
}

TEST(Colormap, ColorAndColorize) {
  const Colormap& v = *find_colormap("viridis");
  EXPECT_EQ(colormap_color(v, -1.0f, -1.0f, 1.0f), v.rgba[0]);
  EXPECT_EQ(colormap_color(v, 1.0f, -1.0f, 1.0f), v.rgba[255]);
  EXPECT_EQ(colormap_color(v, 0.0f, -1.0f, 1.0f), v.rgba[128]);
  EXPECT_EQ(colormap_color(v, kNaN, -1.0f, 1.0f), (std::array<uint8_t, 4>{255, 0, 255, 255}));
  EXPECT_EQ(colormap_color(v, -kInf, -1.0f, 1.0f), kNonFiniteColor);

  const std::vector<float> values = {-1.0f, 0.0f, 1.0f, kNaN, 5.0f};
  std::vector<uint8_t> px(values.size() * 4, 0);
  colorize(values.data(), values.size(), v, -1.0f, 1.0f, px.data());
  // clang-format off
  const std::vector<uint8_t> want = {68,  1,   84,  255,   // rgba[0]
                                     33,  145, 140, 255,   // rgba[128]
                                     253, 231, 37,  255,   // rgba[255]
                                     255, 0,   255, 255,   // magenta
                                     253, 231, 37,  255};  // clamped to rgba[255]
  // clang-format on
  EXPECT_EQ(px, want);

  // Large inputs are split across threads; every pixel still matches colormap_color.
  const Colormap& d = default_diverging_colormap();
  std::vector<float> big(300000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = float(i % 1000) / 500.0f - 1.0f;
  big[777] = kNaN;
  std::vector<uint8_t> out(big.size() * 4);
  colorize(big.data(), big.size(), d, -1.0f, 1.0f, out.data());
  for (size_t i = 0; i < big.size(); i += 997) {
    const auto c = colormap_color(d, big[i], -1.0f, 1.0f);
    ASSERT_EQ((std::array<uint8_t, 4>{out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]}), c) << i;
  }
  EXPECT_EQ(out[4 * 777 + 1], 0);
  EXPECT_EQ(out[4 * 777 + 0], 255);
}

// Map axes: 1-2-5 steps that fit the room, and the tile map's labelled cells (0 and every step after it,
// never a cell past the map). The Tile schedule places each label at its cell's centre (cell + 0.5).
TEST(MapTicks, StepsOfOneTwoFiveThatFitAndLabelledCellsFromZero) {
  EXPECT_EQ(tick_step(8, 10), 1);
  EXPECT_EQ(tick_step(8, 4), 2);
  EXPECT_EQ(tick_step(8, 2), 5);
  EXPECT_EQ(tick_step(128, 5), 50);
  EXPECT_EQ(tick_step(4096, 8), 1000);
  EXPECT_EQ(tick_step(0, 8), 1);
  EXPECT_EQ(tick_step(100, 0), 1);
  EXPECT_EQ(labelled_cells(8, 10), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(labelled_cells(4, 2), (std::vector<int>{0, 2}));
  EXPECT_EQ(labelled_cells(128, 5), (std::vector<int>{0, 50, 100}));
  EXPECT_EQ(labelled_cells(1, 2), (std::vector<int>{0}));
  EXPECT_TRUE(labelled_cells(0, 4).empty());
}

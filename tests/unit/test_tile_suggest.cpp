// The fastest tile of a kernel at a shape, from a session's measurements only.
#include <gtest/gtest.h>

#include "core/plots/tile_suggest.hpp"

namespace ts {
namespace {

KernelInfo three_tiles() {
  KernelInfo k;
  k.id = "pipelined";
  k.tiles = {64, 128, 256};
  return k;
}

MeasurementRecord point(int tile, int64_t n, double median, double iqr, bool passed = true,
                        bool timed = true) {
  MeasurementRecord r;
  r.spec.kernel = "pipelined";
  r.spec.tile = tile;
  r.spec.m = r.spec.n = r.spec.k = n;
  r.timed = timed;
  r.error.passed = passed;
  r.stats.count = 20;
  r.stats.median = median;
  r.stats.p25 = median - iqr / 2;
  r.stats.p75 = median + iqr / 2;
  return r;
}

ProblemSpec at(int64_t n, int tile) {
  ProblemSpec p;
  p.kernel = "pipelined";
  p.m = p.n = p.k = n;
  p.tile = tile;
  return p;
}

TEST(TileSuggest, NamesATileOnlyWhenEveryTileWasTimedAtThisShape) {
  Session s;
  s.records = {point(128, 4096, 3.0, 0.02), point(256, 4096, 2.7, 0.02)};
  TileSuggestion t = suggest_tile(s, three_tiles(), at(4096, 128));
  EXPECT_FALSE(t.fastest) << "tile 64 was never timed: no guess";
  EXPECT_EQ(t.missing, std::vector<int>{64});
  ASSERT_EQ(t.measured.size(), 2u);
  EXPECT_EQ(t.measured[0].tile, 256);
  EXPECT_NE(t.summary().find("not timed yet: 64"), std::string::npos) << t.summary();
  const std::vector<ProblemSpec> runs = tile_search_points(three_tiles(), at(4096, 128), &t);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].tile, 64);
  EXPECT_EQ(runs[0].m, 4096);
  EXPECT_EQ(tile_search_points(three_tiles(), at(4096, 128)).size(), 3u);

  s.records.push_back(point(64, 4096, 5.0, 0.1));
  t = suggest_tile(s, three_tiles(), at(4096, 128));
  ASSERT_TRUE(t.fastest);
  EXPECT_EQ(*t.fastest, 256);
  EXPECT_NEAR(t.speedup, 3.0 / 2.7, 1e-12);
  EXPECT_FALSE(t.within_noise);
  EXPECT_NE(t.summary().find("fastest tile here: 256"), std::string::npos) << t.summary();
  EXPECT_NE(t.summary().find("1.11x faster than tile 128"), std::string::npos) << t.summary();
  EXPECT_NE(t.summary().find("(2.7 ms, 50.9 TFLOP/s)"), std::string::npos) << t.summary();
}

TEST(TileSuggest, IgnoresOtherShapesFailedAndUntimedPointsAndKeepsTheNewest) {
  Session s;
  s.records = {point(64, 4096, 1.0, 0.01),
               point(64, 2048, 0.5, 0.01, false),
               point(128, 2048, 0.2, 0.01, false),        // fails verification: not a candidate
               point(256, 2048, 0.1, 0.01, true, false),  // not timed
               point(64, 2048, 0.6, 0.01),
               point(128, 2048, 0.55, 0.01),
               point(256, 2048, 0.58, 0.01),
               point(128, 2048, 0.65, 0.01)};  // newest 128: 0.65
  const TileSuggestion t = suggest_tile(s, three_tiles(), at(2048, 64));
  ASSERT_TRUE(t.fastest);
  EXPECT_EQ(*t.fastest, 256) << "the newest point of tile 128 (0.65 ms) replaces its older 0.55 ms";
  EXPECT_NEAR(t.speedup, 0.6 / 0.58, 1e-12);
  EXPECT_NE(t.summary().find("(580 us, 29.6 TFLOP/s)"), std::string::npos)
      << "the plots' units: " << t.summary();
  ASSERT_EQ(t.measured.size(), 3u);
  EXPECT_EQ(t.measured[2].tile, 128);
}

TEST(TileSuggest, SaysWhenTheTwoFastestAreWithinTheirNoiseAndWhenTheKernelHasNoTile) {
  Session s;
  s.records = {point(64, 1000, 1.00, 0.10), point(128, 1000, 1.02, 0.10), point(256, 1000, 2.0, 0.1)};
  const TileSuggestion t = suggest_tile(s, three_tiles(), at(1000, 64));
  ASSERT_TRUE(t.fastest);
  EXPECT_EQ(*t.fastest, 64);
  EXPECT_TRUE(t.within_noise);
  EXPECT_NE(t.summary().find("within its noise"), std::string::npos) << t.summary();
  KernelInfo cublas;
  cublas.id = "cublas";
  const TileSuggestion none = suggest_tile(s, cublas, at(1000, 0));
  EXPECT_FALSE(none.applicable());
  EXPECT_TRUE(tile_search_points(cublas, at(1000, 0)).empty());
}

// A teaching kernel whose K steps skip the tail: tiles that do not divide K fail verification (and the bench
// policy does not time them). They are named as failed, never suggested, and not offered for timing again.
TEST(TileSuggest, TilesThatFailVerificationAreReportedNeverSuggestedNorRetimed) {
  Session s;
  s.records = {point(64, 1000, 0.9, 0.01), point(128, 1000, 0.5, 0.01, false, false),
               point(256, 1000, 0.4, 0.01, false, true)};
  TileSuggestion t = suggest_tile(s, three_tiles(), at(1000, 128));
  ASSERT_TRUE(t.fastest) << "every tile has a point: measured or failed";
  EXPECT_EQ(*t.fastest, 64);
  EXPECT_EQ(t.failed, (std::vector<int>{128, 256}));
  EXPECT_TRUE(t.missing.empty());
  EXPECT_TRUE(tile_search_points(three_tiles(), at(1000, 128), &t).empty());
  EXPECT_NE(t.summary().find("fastest tile here: 64"), std::string::npos) << t.summary();
  EXPECT_NE(t.summary().find("failed verification: 128, 256"), std::string::npos) << t.summary();
  // A later passing point of a tile replaces its failure.
  s.records.push_back(point(128, 1000, 0.5, 0.01));
  t = suggest_tile(s, three_tiles(), at(1000, 128));
  EXPECT_EQ(*t.fastest, 128);
  EXPECT_EQ(t.failed, std::vector<int>{256});
  // All failed: nothing to suggest, and it says so.
  Session bad;
  bad.records = {point(64, 1000, 0.9, 0.01, false, false), point(128, 1000, 0.5, 0.01, false, false),
                 point(256, 1000, 0.4, 0.01, false, false)};
  t = suggest_tile(bad, three_tiles(), at(1000, 64));
  EXPECT_FALSE(t.fastest);
  EXPECT_NE(t.summary().find("every tile of pipelined failed verification"), std::string::npos)
      << t.summary();
}

// A tile whose newest point is faster than the device can go (RunRecord::impossible) is no record: reported,
// never the fastest, not timed again; a later possible point of it counts again.
TEST(TileSuggest, AnImpossibleTimingIsReportedAndNeverTheFastest) {
  Session s;
  MeasurementRecord fake = point(256, 4096, 0.01, 0.001);
  fake.impossible = "13744 TFLOP/s is above the FP32 peak of NVIDIA H100 80GB HBM3, 66.9 TFLOP/s at 1980 MHz";
  s.records = {point(64, 4096, 4.0, 0.01), point(128, 4096, 2.8, 0.01), fake};
  TileSuggestion t = suggest_tile(s, three_tiles(), at(4096, 64));
  ASSERT_TRUE(t.fastest);
  EXPECT_EQ(*t.fastest, 128);
  EXPECT_EQ(t.impossible, std::vector<int>{256});
  EXPECT_TRUE(t.missing.empty());
  ASSERT_EQ(t.measured.size(), 2u);
  EXPECT_TRUE(tile_search_points(three_tiles(), at(4096, 64), &t).empty());
  EXPECT_NE(t.summary().find("fastest tile here: 128"), std::string::npos) << t.summary();
  EXPECT_NE(t.summary().find("impossible timing (not a record): 256"), std::string::npos) << t.summary();
  s.records.push_back(point(256, 4096, 2.7, 0.01));  // timed again, possibly
  t = suggest_tile(s, three_tiles(), at(4096, 64));
  EXPECT_EQ(*t.fastest, 256);
  EXPECT_TRUE(t.impossible.empty());
  // Only impossible points: nothing to suggest, and it says why.
  Session only;
  only.records = {fake};
  KernelInfo one = three_tiles();
  one.tiles = {256};
  t = suggest_tile(only, one, at(4096, 256));
  EXPECT_FALSE(t.fastest);
  EXPECT_NE(t.summary().find("no tile of pipelined has a possible timing here"), std::string::npos)
      << t.summary();
}

}  // namespace
}  // namespace ts

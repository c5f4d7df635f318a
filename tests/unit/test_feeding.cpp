// Which pieces of A and B feed a tile of C (core/engine/feeding.hpp), from the registry's own tile
// descriptions: every rung with tiles has one per tile, and the plans follow the launchers.
#include <gtest/gtest.h>

#include "core/engine/feeding.hpp"
#include "kernels/engine/registry.hpp"

namespace ts {
namespace {

const TileGeometry& geometry_of(const std::string& id, int tile) {
  const std::vector<KernelEntry>& all = register_kernels();
  for (const KernelEntry& e : all)
    if (e.info.id == id)
      if (const TileGeometry* g = e.info.tile_geometry(tile)) return *g;
  throw std::runtime_error("no geometry for " + id + " " + std::to_string(tile));
}

TEST(Feeding, EveryTiledBuiltInKernelDescribesEveryTile) {
  for (const KernelEntry& e : register_kernels()) {
    if (e.info.tiles.empty() || e.info.is_reference) continue;
    ASSERT_EQ(e.info.geometry.size(), e.info.tiles.size()) << e.info.id;
    for (size_t i = 0; i < e.info.tiles.size(); ++i) {
      const TileGeometry& g = e.info.geometry[i];
      EXPECT_GT(g.block_m, 0) << e.info.id;
      EXPECT_GT(g.block_n, 0) << e.info.id;
      const FeedPlan p = feeding_plan(g, 1000, 1000, 1000, 0, 0);
      EXPECT_TRUE(p.problem.empty()) << e.info.id << ": " << p.problem;
      EXPECT_FALSE(p.note.empty()) << e.info.id;
    }
  }
}

TEST(Feeding, ClassicTiledStepsThroughItsPanels) {
  // tiled 32 at M = 100, N = 90, K = 70: tile (1, 2) covers rows 32-63, columns 64-89.
  const FeedPlan p = feeding_plan(geometry_of("tiled", 32), 100, 90, 70, 1, 2);
  ASSERT_TRUE(p.problem.empty()) << p.problem;
  EXPECT_EQ(p.c_tile, (Rect64{32, 64, 32, 26}));
  EXPECT_EQ(p.a_panel, (Rect64{32, 0, 32, 70}));
  EXPECT_EQ(p.b_panel, (Rect64{0, 64, 70, 26}));
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[2].a, (Rect64{32, 64, 32, 6}));  // the partial last piece, K 64-69
  EXPECT_EQ(p.steps[2].b, (Rect64{64, 64, 6, 26}));
  for (const FeedStep& s : p.steps) EXPECT_TRUE(s.visited);
  EXPECT_EQ(resident_steps(p, 1), std::vector<int>{1});
  EXPECT_EQ(p.thread, (std::vector<Rect64>{{32, 64, 1, 1}}));
  EXPECT_NE(describe_step(p, 2).find("partial"), std::string::npos);
}

TEST(Feeding, FloorKNeverVisitsTheThirdPieceAtK70Tile32) {
  const FeedPlan p = feeding_plan(geometry_of("tiled_floork", 32), 70, 70, 70, 0, 0);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_TRUE(p.steps[0].visited);
  EXPECT_TRUE(p.steps[1].visited);
  EXPECT_FALSE(p.steps[2].visited);
  EXPECT_EQ(p.steps[2].k0, 64);
  EXPECT_EQ(p.steps[2].k1, 70);
  EXPECT_NE(p.note.find("K 64-69 is never loaded"), std::string::npos) << p.note;
  EXPECT_NE(describe_step(p, 2).find("never loaded"), std::string::npos);
  // At K = 64 nothing is dropped.
  const FeedPlan whole = feeding_plan(geometry_of("tiled_floork", 32), 70, 70, 64, 0, 0);
  ASSERT_EQ(whole.steps.size(), 2u);
  EXPECT_TRUE(whole.steps[1].visited);
}

TEST(Feeding, NoSyncMarksEveryStepButTheLast) {
  const FeedPlan p = feeding_plan(geometry_of("tiled_nosync", 32), 128, 128, 128, 0, 0);
  ASSERT_EQ(p.steps.size(), 4u);
  EXPECT_TRUE(overwrites_in_use(p, 0));
  EXPECT_TRUE(overwrites_in_use(p, 2));
  EXPECT_FALSE(overwrites_in_use(p, 3));
  EXPECT_FALSE(overwrites_in_use(feeding_plan(geometry_of("tiled", 32), 128, 128, 128, 0, 0), 0));
  EXPECT_NE(describe_step(p, 0).find("step 2's load may overwrite"), std::string::npos);
}

TEST(Feeding, MirrorTakesTheLowerTilesFromTheUpperOnes) {
  // tiled_mirror 32 on 128^3: tile (3, 1) is below the diagonal; its values come from tile (1, 3), i.e.
  // A's rows 32-63 and B's columns 96-127.
  const FeedPlan p = feeding_plan(geometry_of("tiled_mirror", 32), 128, 128, 128, 3, 1);
  EXPECT_TRUE(p.mirrored);
  EXPECT_EQ(p.source_row, 1);
  EXPECT_EQ(p.source_col, 3);
  EXPECT_EQ(p.c_tile, (Rect64{96, 32, 32, 32}));
  EXPECT_EQ(p.a_panel, (Rect64{32, 0, 32, 128}));
  EXPECT_EQ(p.b_panel, (Rect64{0, 96, 128, 32}));
  EXPECT_NE(p.note.find("transpose of tile (1, 3)"), std::string::npos) << p.note;
  EXPECT_TRUE(p.thread.empty()) << "its block does nothing";
  EXPECT_FALSE(feeding_plan(geometry_of("tiled_mirror", 32), 128, 128, 128, 1, 3).mirrored);
}

TEST(Feeding, PipelinedKeepsThreeStagesAndSplitKSumsItsSlice) {
  const FeedPlan p = feeding_plan(geometry_of("pipelined", 128), 1024, 1024, 1024, 2, 3);
  EXPECT_EQ(p.steps.size(), 64u);  // 1024 / 16
  EXPECT_EQ(resident_steps(p, 10), (std::vector<int>{10, 11, 12}));
  EXPECT_EQ(resident_steps(p, 63), std::vector<int>{63});
  EXPECT_EQ(p.warp, (Rect64{256, 384, 32, 64}));
  // Thread 0: 2 x 2 pieces of 4 x 4, 16 rows and 32 columns apart.
  EXPECT_EQ(p.thread,
            (std::vector<Rect64>{{256, 384, 4, 4}, {256, 416, 4, 4}, {272, 384, 4, 4}, {272, 416, 4, 4}}));
  // splitk 4 at K = 1000: 63 K steps of 16, slice 1 takes steps 15-30 (K 240-495).
  const FeedPlan s = feeding_plan(geometry_of("splitk", 4), 1000, 1000, 1000, 0, 0, 1);
  ASSERT_TRUE(s.problem.empty()) << s.problem;
  EXPECT_EQ(s.slice_k0, 240);
  EXPECT_EQ(s.slice_k1, 496);
  EXPECT_EQ(s.steps.size(), 16u);
  EXPECT_EQ(s.a_panel, (Rect64{0, 240, 128, 256}));
  EXPECT_FALSE(feeding_plan(geometry_of("splitk", 4), 1000, 1000, 1000, 0, 0, 4).problem.empty());
}

TEST(Feeding, RefusesTilesOutsideC) {
  EXPECT_FALSE(feeding_plan(geometry_of("tiled", 16), 100, 100, 100, 7, 0).problem.empty());
  EXPECT_FALSE(feeding_plan(geometry_of("tiled", 16), 100, 100, 100, 0, -1).problem.empty());
  EXPECT_FALSE(feeding_plan(TileGeometry{}, 100, 100, 100, 0, 0).problem.empty());
  const FeedPlan naive = feeding_plan(geometry_of("naive", 16), 100, 100, 100, 0, 0);
  EXPECT_FALSE(naive.staged);
  EXPECT_TRUE(naive.steps.empty());
  EXPECT_EQ(naive.a_panel, (Rect64{0, 0, 16, 100}));
}

}  // namespace
}  // namespace ts

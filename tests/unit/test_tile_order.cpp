#include <algorithm>
#include <set>
#include <utility>

#include <gtest/gtest.h>

#include "core/engine/tile_order.hpp"

using namespace ts;

TEST(TileOrder, GroupedTilesCoverTheGridOnceForEveryShapeAndGroup) {
  for (int64_t nx : {1, 2, 5, 32})
    for (int64_t ny : {1, 3, 8, 17})
      for (int64_t group : {1, 2, 8, 20}) {
        std::set<std::pair<int64_t, int64_t>> seen;
        for (int64_t y = 0; y < ny; ++y)
          for (int64_t x = 0; x < nx; ++x) {
            const TilePos t = grouped_tile(x, y, nx, ny, group);
            ASSERT_GE(t.row, 0);
            ASSERT_LT(t.row, ny);
            ASSERT_GE(t.col, 0);
            ASSERT_LT(t.col, nx);
            seen.insert({t.row, t.col});
          }
        EXPECT_EQ(seen.size(), size_t(nx * ny)) << nx << " x " << ny << " group " << group;
      }
}

TEST(TileOrder, GroupOneIsRowByRowAndLargerGroupsGoDownABandColumnByColumn) {
  for (int64_t y = 0; y < 3; ++y)
    for (int64_t x = 0; x < 4; ++x) {
      const TilePos t = grouped_tile(x, y, 4, 3, 1);
      EXPECT_EQ(t.row, y);
      EXPECT_EQ(t.col, x);
    }
  // 4 columns, 5 rows, bands of 2: launch order 0, 1, 2 ... walks (0,0) (1,0) (0,1) (1,1) ... (1,3), then the
  // next band (2,0) (3,0) ..., and the last band, one row, left to right.
  const int64_t nx = 4, ny = 5;
  auto at = [&](int64_t lin) { return grouped_tile(lin % nx, lin / nx, nx, ny, 2); };
  const std::pair<int64_t, int64_t> want[] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, {0, 3},
                                              {1, 3}, {2, 0}, {3, 0}, {2, 1}, {3, 1}, {2, 2}, {3, 2},
                                              {2, 3}, {3, 3}, {4, 0}, {4, 1}, {4, 2}, {4, 3}};
  for (int64_t lin = 0; lin < nx * ny; ++lin) {
    EXPECT_EQ(at(lin).row, want[lin].first) << "block " << lin;
    EXPECT_EQ(at(lin).col, want[lin].second) << "block " << lin;
  }
  // Tile 512 at 16384 x 16384 x 2048 (64 x 64 tiles), bands of 8: the first wave of 66 clusters spans rows
  // 0-7 and columns 0-8, not one row and every column.
  int64_t max_row = 0, max_col = 0;
  for (int64_t lin = 0; lin < 66; ++lin) {
    const TilePos t = grouped_tile(lin % 64, lin / 64, 64, 64, 8);
    max_row = std::max(max_row, t.row);
    max_col = std::max(max_col, t.col);
  }
  EXPECT_EQ(max_row, 7);
  EXPECT_EQ(max_col, 8);
}

#pragma once
// [SECTION] The order in which a kernel takes the tiles of C: host and device share it (kernels compute their
// tile from it, tests check it). Blocks start in blockIdx order, x fastest, so a wave of resident blocks
// shares A and B through L2 only as far as their tiles lie near each other. Row by row, a wave of 66 clusters
// of tile 512 at 16384 x 16384 x 2048 covers one row of tiles and all 64 columns: it reads every column of B
// for one row of A. Taken in bands of `group` rows, column by column within a band, the same wave covers 8
// rows x 8 columns, and B's panels are read once for 8 rows of tiles instead of once per row.
#include <cstdint>

#if defined(__CUDACC__)
#define TS_TILE_ORDER_HD __host__ __device__
#else
#define TS_TILE_ORDER_HD
#endif

namespace ts {

struct TilePos {
  int64_t row = 0, col = 0;
};

// The tile that block (x, y) of an nx x ny grid computes when tiles are taken `group` rows at a time (group
// >= 1; the last band may have fewer rows). A bijection on the grid; group 1 is row by row, (x, y) itself.
TS_TILE_ORDER_HD inline TilePos grouped_tile(int64_t x, int64_t y, int64_t nx, int64_t ny, int64_t group) {
  const int64_t lin = y * nx + x;
  const int64_t first = lin / (group * nx) * group;  // the band's first row
  const int64_t rows = ny - first < group ? ny - first : group;
  const int64_t in = lin - first * nx;  // position in the band, column by column
  return {first + in % rows, in / rows};
}

}  // namespace ts

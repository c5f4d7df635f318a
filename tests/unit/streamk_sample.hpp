#pragma once
// A synthetic stream-K trace (TileTrace::k_segments) for the tests of its consumers: 3 x 4 tiles of 128 x 128
// on 8 SMs, K = 4096 in steps of 32 (S = 128 steps per tile), grid_z 3.
//   tiles 0-7 (rows 0 and 1): made whole, one segment each, tile i on SM i, about 1000-2100 ns;
//   tile 8  (2, 0): segments at K steps 0 (SM 0, 2000-2500) and 64 (SM 4, 2000-2600): C by SM 4;
//   tile 9  (2, 1): 0 (SM 1, 2100-2400), 32 (SM 5, 2005-2300), 96 (SM 5, 2300-2800): C by SM 5;
//   tile 10 (2, 2): 0 (SM 2, 1990-2700), 100 (SM 6, 1900-2100): C by SM 2, its first segment;
//   tile 11 (2, 3): 0 (SM 3, 2050-2450), 40 (SM 7, 2030-2500), 80 (SM 3, 2450-2480): C by SM 7.
// 18 segments present; the other 18 records are absent (all zero). The first start is at 1000 ns, the last
// end at 2800 ns.
#include "core/engine/schedule.hpp"

namespace ts::test {

inline TileTrace streamk_trace() {
  TileTrace t;
  t.grid_x = 4;
  t.grid_y = 3;
  t.grid_z = 3;
  t.k_segments = true;
  t.k_step = 32;
  t.k = 4096;
  t.tile_m = t.tile_n = 128;
  t.sm_count = 8;
  t.records.assign(36, TileRecord{0, 0, 0, 0});
  auto at = [&](int z, int tile) -> TileRecord& { return t.records[size_t(z * 12 + tile)]; };
  const TileRecord whole[8] = {{1000, 2000, 0, 0}, {1000, 2100, 1, 0}, {1010, 1990, 2, 0},
                               {1020, 2050, 3, 0}, {1000, 2000, 4, 0}, {1005, 2005, 5, 0},
                               {1000, 1900, 6, 0}, {1030, 2030, 7, 0}};
  for (int i = 0; i < 8; ++i) at(0, i) = whole[i];
  at(0, 8) = {2000, 2500, 0, 0};
  at(1, 8) = {2000, 2600, 4, 64};
  at(0, 9) = {2100, 2400, 1, 0};
  at(1, 9) = {2005, 2300, 5, 32};
  at(2, 9) = {2300, 2800, 5, 96};
  at(0, 10) = {1990, 2700, 2, 0};
  at(1, 10) = {1900, 2100, 6, 100};
  at(0, 11) = {2050, 2450, 3, 0};
  at(1, 11) = {2030, 2500, 7, 40};
  at(2, 11) = {2450, 2480, 3, 80};
  t.traced_ms = 0.002;
  t.plain_ms = 0.0018;
  return t;
}

}  // namespace ts::test

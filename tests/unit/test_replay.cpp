// The schedule replay (core/engine/schedule_replay.hpp) on synthetic traces whose every state is known.
#include <gtest/gtest.h>

#include "core/engine/schedule_replay.hpp"
#include "streamk_sample.hpp"
#include "ui/algorithm_views.hpp"

namespace ts {
namespace {

// 2 x 3 tiles of 32 x 32 on 2 SMs: tile i runs on SM i % 2 from 1000 + 100 * i to 1000 + 100 * i + 150 (ns).
TileTrace six_tiles() {
  TileTrace t;
  t.grid_x = 3;
  t.grid_y = 2;
  t.tile_m = t.tile_n = 32;
  t.sm_count = 2;
  for (uint64_t i = 0; i < 6; ++i)
    t.records.push_back({1000 + 100 * i, 1000 + 100 * i + 150, uint32_t(i % 2), 0});
  return t;
}

TEST(Replay, StatesAtKnownTimes) {
  const ScheduleReplay r(six_tiles());
  ASSERT_TRUE(r.problem().empty()) << r.problem();
  EXPECT_EQ(r.blocks(), 6u);
  EXPECT_EQ(r.duration_ns(), 650u);  // 1000 .. 1650
  // t = 0: block 0 has just started, the rest wait.
  EXPECT_EQ(r.state(0, 0), BlockState::Running);
  EXPECT_EQ(r.state(1, 0), BlockState::Waiting);
  // t = 120: block 0 running (ends at 150), block 1 running (from 100), block 2 waiting (from 200).
  std::vector<BlockState> s;
  r.states(120, s);
  EXPECT_EQ(s, (std::vector<BlockState>{BlockState::Running, BlockState::Running, BlockState::Waiting,
                                        BlockState::Waiting, BlockState::Waiting, BlockState::Waiting}));
  // t = 150: block 0 done exactly at its end.
  EXPECT_EQ(r.state(0, 150), BlockState::Done);
  const ScheduleReplay::Counts c = r.counts(320);  // done: 0 (150), 1 (250); running: 2 (200-350), 3 (300-)
  EXPECT_EQ(c.done, 2);
  EXPECT_EQ(c.running, 2);
  EXPECT_EQ(c.waiting, 2);
  const ScheduleReplay::Counts end = r.counts(r.duration_ns());
  EXPECT_EQ(end.done, 6);
  EXPECT_EQ(end.running, 0);
  // The counts agree with the states at every stamp and between them.
  for (uint64_t t = 0; t <= 700; t += 25) {
    r.states(t, s);
    int64_t n[3] = {0, 0, 0};
    for (BlockState b : s) ++n[int(b)];
    const ScheduleReplay::Counts k = r.counts(t);
    EXPECT_EQ(n[0], k.waiting) << t;
    EXPECT_EQ(n[1], k.running) << t;
    EXPECT_EQ(n[2], k.done) << t;
  }
}

TEST(Replay, StepsAndWaves) {
  const ScheduleReplay r(six_tiles());
  EXPECT_EQ(r.next_start(0), 100u);
  EXPECT_EQ(r.next_start(100), 200u);
  EXPECT_EQ(r.next_start(499), 500u);
  EXPECT_EQ(r.next_start(500), r.duration_ns());  // no start left: the end
  EXPECT_EQ(r.previous_start(250), 200u);
  EXPECT_EQ(r.previous_start(200), 100u);
  EXPECT_EQ(r.previous_start(0), 0u);
  // 2 slots (1 block per SM x 2 SMs): 3 waves, starting at blocks 0, 2 and 4.
  EXPECT_EQ(r.waves(2), 3);
  EXPECT_EQ(r.wave_start(0, 2), 0u);
  EXPECT_EQ(r.wave_start(1, 2), 200u);
  EXPECT_EQ(r.wave_start(2, 2), 400u);
  EXPECT_EQ(r.wave_start(3, 2), r.duration_ns());
  EXPECT_EQ(r.waves(4), 2);
  EXPECT_EQ(r.waves(0), 0);
}

TEST(Replay, CellsAndRectanglesOfCFollowTheGrid) {
  TileTrace t = six_tiles();
  const ScheduleReplay r(t);
  EXPECT_EQ(r.cells_x(), 3);
  EXPECT_EQ(r.cells_y(), 2);
  // Block 4 is tile (row 1, col 1): rows 32-63, columns 32-63; on a 50 x 70 C it is clipped.
  EXPECT_EQ(r.cell(4), (std::pair<int, int>{1, 1}));
  const BlockRect b = r.rect(4, 50, 70);
  EXPECT_EQ(b.row0, 32);
  EXPECT_EQ(b.col0, 32);
  EXPECT_EQ(b.rows, 18);
  EXPECT_EQ(b.cols, 32);
  const BlockRect e = r.rect(5, 50, 70);  // tile (1, 2): columns 64-69
  EXPECT_EQ(e.col0, 64);
  EXPECT_EQ(e.cols, 6);
}

TEST(Replay, SplitKSlicesAreStripsOfTheirTileAndClustersColumns) {
  // 1 x 2 tiles of 128 x 128, K in 3 slices: record (z * 1 + 0) * 2 + x.
  TileTrace t;
  t.grid_x = 2;
  t.grid_y = 1;
  t.grid_z = 3;
  t.tile_m = t.tile_n = 128;
  t.sm_count = 6;
  for (uint64_t i = 0; i < 6; ++i) t.records.push_back({10 + i, 20 + i, uint32_t(i), 0});
  const ScheduleReplay r(t);
  ASSERT_TRUE(r.problem().empty()) << r.problem();
  EXPECT_EQ(r.cells_x(), 2);
  EXPECT_EQ(r.cells_y(), 3);
  EXPECT_EQ(r.cell(3), (std::pair<int, int>{1, 1}));  // slice 1 of tile 1
  const BlockRect s1 = r.rect(3, 128, 256);
  EXPECT_EQ(s1.row0, 42);  // 128 / 3 rows per strip, edges at 0, 42, 85, 128
  EXPECT_EQ(s1.rows, 43);
  EXPECT_EQ(s1.col0, 128);
  EXPECT_EQ(s1.cols, 128);
  const BlockRect s2 = r.rect(5, 128, 256);
  EXPECT_EQ(s2.row0 + s2.rows, 128);  // the strips cover the tile exactly

  t.z_splits_columns = true;
  t.grid_z = 2;
  t.records.resize(4);
  const ScheduleReplay c(t);
  ASSERT_TRUE(c.problem().empty()) << c.problem();
  EXPECT_EQ(c.cells_x(), 4);
  EXPECT_EQ(c.cells_y(), 1);
  const BlockRect b = c.rect(3, 128, 256);  // tile 1, second block: columns 192-255
  EXPECT_EQ(b.col0, 192);
  EXPECT_EQ(b.cols, 64);
  EXPECT_EQ(b.rows, 128);
}

// Stream-K: the replay's blocks are the present segments (the absent records never ran: not drawn, not
// counted), in record order; a segment is a strip of its tile's rows, as tall as its share of K, in K order.
TEST(Replay, StreamKSegmentsAreStripsOfTheirShareOfKAndAbsentRecordsAreNotBlocks) {
  const TileTrace t = test::streamk_trace();
  const ScheduleReplay r(t);
  ASSERT_TRUE(r.problem().empty()) << r.problem();
  EXPECT_TRUE(r.k_segments());
  EXPECT_EQ(r.blocks(), 18u);
  EXPECT_EQ(std::string(r.blocks_noun()), "segments");
  EXPECT_EQ(r.duration_ns(), 1800u);  // 1000 .. 2800, not from an absent record's 0
  // Blocks 0-11: segment 0 of every tile; 12-15: segment 1 of tiles 8-11; 16, 17: segment 2 of tiles 9, 11.
  EXPECT_EQ(r.record(11), 11u);
  EXPECT_EQ(r.record(12), 20u);
  EXPECT_EQ(r.record(15), 23u);
  EXPECT_EQ(r.record(16), 33u);
  EXPECT_EQ(r.record(17), 35u);
  EXPECT_EQ(r.sm(16), 5u);
  EXPECT_EQ(r.start_ns(16), 1300u);
  // The picture: 4 x 3 tiles, each 128 rows of cells (one per K step of the 128).
  EXPECT_EQ(r.tiles_x(), 4);
  EXPECT_EQ(r.tiles_y(), 3);
  EXPECT_EQ(r.cells_per_tile_x(), 1);
  EXPECT_EQ(r.cells_per_tile_y(), 128);
  EXPECT_EQ(r.cells_x(), 4);
  EXPECT_EQ(r.cells_y(), 384);
  auto span = [&](size_t block) {
    const CellSpan c = r.cell_span(block);
    return std::vector<int>{c.x, c.y, c.w, c.h};
  };
  EXPECT_EQ(span(0), (std::vector<int>{0, 0, 1, 128})) << "a whole tile: all of it";
  EXPECT_EQ(span(6), (std::vector<int>{2, 128, 1, 128}));
  EXPECT_EQ(span(9), (std::vector<int>{1, 256, 1, 32})) << "tile 9, K steps 0-32";
  EXPECT_EQ(span(13), (std::vector<int>{1, 288, 1, 64})) << "tile 9, K steps 32-96";
  EXPECT_EQ(span(16), (std::vector<int>{1, 352, 1, 32})) << "tile 9, K steps 96-128";
  EXPECT_EQ(span(10), (std::vector<int>{2, 256, 1, 100})) << "tile 10, K steps 0-100";
  EXPECT_EQ(span(14), (std::vector<int>{2, 356, 1, 28})) << "tile 10, K steps 100-128";
  EXPECT_EQ(r.cell(13), (std::pair<int, int>{1, 288}));
  // In C: tile 9's segment 1 is rows 288-351 of columns 128-255; clipped at M = 300 it keeps 12 rows.
  const BlockRect b = r.rect(13, 384, 512);
  EXPECT_EQ(b.row0, 288);
  EXPECT_EQ(b.rows, 64);
  EXPECT_EQ(b.col0, 128);
  EXPECT_EQ(b.cols, 128);
  EXPECT_EQ(r.rect(13, 300, 512).rows, 12);
  EXPECT_EQ(r.rect(16, 384, 512).row0 + r.rect(16, 384, 512).rows, 384) << "the last strip ends the tile";
  // At 1000 ns after the first start: tiles 0, 2, 4, 6 done; 12 segments started (every whole tile, tile 8's
  // two, tile 10's two); 6 waiting (tile 9's three, tile 11's three).
  const ScheduleReplay::Counts c = r.counts(1000);
  EXPECT_EQ(c.done, 4);
  EXPECT_EQ(c.running, 8);
  EXPECT_EQ(c.waiting, 6);
  EXPECT_EQ(c.done + c.running + c.waiting, 18);
  EXPECT_EQ(r.state(16, 1000), BlockState::Waiting);
  EXPECT_EQ(r.state(16, 1300), BlockState::Running);
  EXPECT_EQ(r.state(16, 1800), BlockState::Done);
  EXPECT_EQ(r.state(14, 1000), BlockState::Running);  // tile 10's segment 1, 900-1100
  EXPECT_EQ(r.counts(1800).done, 18);
  std::vector<BlockState> s;
  for (uint64_t at = 0; at <= 1800; at += 50) {
    r.states(at, s);
    ASSERT_EQ(s.size(), 18u);
    int64_t n[3] = {0, 0, 0};
    for (BlockState x : s) ++n[int(x)];
    const ScheduleReplay::Counts k = r.counts(at);
    EXPECT_EQ(n[0], k.waiting) << at;
    EXPECT_EQ(n[1], k.running) << at;
    EXPECT_EQ(n[2], k.done) << at;
  }
  EXPECT_EQ(r.next_start(1000), 1005u);
  EXPECT_EQ(r.waves(8), 3);             // 18 segments, 8 at once
  EXPECT_EQ(r.wave_start(1, 8), 900u);  // the 9th start: tile 10's segment 1

  // K not known: a tile's segments share its rows equally (60 rows of cells per tile).
  TileTrace unknown = t;
  unknown.k = 0;
  const ScheduleReplay u(unknown);
  ASSERT_TRUE(u.problem().empty()) << u.problem();
  EXPECT_EQ(u.cells_per_tile_y(), 60);
  EXPECT_EQ(u.cell_span(13).y, 120 + 20);
  EXPECT_EQ(u.cell_span(13).h, 20);
  EXPECT_EQ(u.cell_span(12).y, 120 + 30) << "tile 8's segment 1: the lower half";
  EXPECT_EQ(u.cell_span(12).h, 30);

  // A tall grid keeps the picture near 2048 rows of cells: 64 rows of tiles, 32 cells each; a narrow segment
  // still gets a row.
  TileTrace tall = t;
  tall.grid_y = 64;
  tall.grid_x = 1;
  tall.grid_z = 2;
  tall.records.assign(128, TileRecord{0, 0, 0, 0});
  for (size_t i = 0; i < 64; ++i) tall.records[i] = {100 + i, 200 + i, uint32_t(i % 8), 0};
  tall.records[64 + 5] = {150, 260, 3, 127};  // tile 5's last K step on its own
  const ScheduleReplay tr(tall);
  ASSERT_TRUE(tr.problem().empty()) << tr.problem();
  EXPECT_EQ(tr.cells_per_tile_y(), 32);
  EXPECT_EQ(tr.blocks(), 65u);
  EXPECT_EQ(tr.cell_span(5).h, 31);
  EXPECT_EQ(tr.cell_span(64).y, 5 * 32 + 31);
  EXPECT_EQ(tr.cell_span(64).h, 1);
}

TEST(Replay, AnInconsistentTraceSaysWhyAndHasNoBlocks) {
  TileTrace t = six_tiles();
  t.records.pop_back();
  const ScheduleReplay r(t);
  EXPECT_FALSE(r.problem().empty());
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.counts(10).done, 0);
}

TEST(Replay, DescribesTime) {
  EXPECT_EQ(describe_replay_time(412500, 1034000), "412.5 us of 1034.0 us");
  EXPECT_EQ(describe_replay_time(5000000, 62000000), "5.000 ms of 62.000 ms");
}

// Playing with an injected clock: a 1650 ns launch at 1000 frames a second moves 0.275 ns a frame; the
// fractions add up, so it reaches the end after kReplaySeconds of frames and stops there.
TEST(Replay, PlayingAddsUpFractionsOfANanosecondAndStopsAtTheEnd) {
  ui::AlgorithmViews v;
  v.replay.playing = true;
  int frames = 0;
  while (v.replay.playing && frames < 100000) {
    ui::advance_views(v, 1650, 0, 0.001);
    ++frames;
  }
  EXPECT_FALSE(v.replay.playing);
  EXPECT_EQ(v.replay.t_ns, 1650u);
  EXPECT_NEAR(frames, int(ui::kReplaySeconds * 1000), 2);
  // Half-way after half the frames, at speed 2 in a quarter.
  v.replay = {};
  v.replay.playing = true;
  v.replay.speed = 2;
  for (int i = 0; i < int(ui::kReplaySeconds * 1000) / 4; ++i) ui::advance_views(v, 1650, 0, 0.001);
  EXPECT_NEAR(double(v.replay.t_ns), 825.0, 1.0);
  // The k steps: 2 a second at speed 1; 4 steps take 1.5 s to reach the last and stop.
  v.feed.playing = true;
  int steps_frames = 0;
  while (v.feed.playing && steps_frames < 100000) {
    ui::advance_views(v, 0, 4, 0.01);
    ++steps_frames;
  }
  EXPECT_EQ(v.feed.step, 3);
  EXPECT_NEAR(steps_frames, 150, 1);
  EXPECT_FALSE(v.replay.playing) << "no trace: the replay stops";
}

}  // namespace
}  // namespace ts

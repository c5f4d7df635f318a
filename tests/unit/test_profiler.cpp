// The profiler's model: ring buffers, CSV, occupancy arithmetic, tile-schedule aggregation.
#include <algorithm>
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "core/io/csv.hpp"
#include "core/engine/occupancy.hpp"
#include "core/base/ring_buffer.hpp"
#include "core/engine/schedule.hpp"
#include "core/plots/plot_data.hpp"
#include "streamk_sample.hpp"
#include "test_util.hpp"

using namespace ts;

TEST(RingBuffer, KeepsTheNewestValuesOldestFirst) {
  RingBuffer<int> r(3);
  EXPECT_TRUE(r.empty());
  r.push(1);
  r.push(2);
  EXPECT_EQ(r.to_vector(), (std::vector<int>{1, 2}));
  EXPECT_EQ(r.offset(), 0u);
  r.push(3);
  r.push(4);
  r.push(5);
  EXPECT_EQ(r.size(), 3u);
  EXPECT_EQ(r.to_vector(), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(r.back(), 5);
  // In-place view for plotting: data()[(offset + i) % capacity] is the i-th oldest.
  EXPECT_EQ(r.data()[(r.offset() + 0) % 3], 3);
  EXPECT_EQ(r.data()[(r.offset() + 2) % 3], 5);
  EXPECT_THROW(RingBuffer<int>(0), std::invalid_argument);
}

TEST(Csv, QuotesWhatNeedsQuotingAndNeverReplacesAFile) {
  CsvWriter w({"a", "b"});
  w.row({"plain", "with,comma"});
  w.row({"say \"hi\"", "line\nbreak"});
  EXPECT_EQ(w.str(), "a,b\nplain,\"with,comma\"\n\"say \"\"hi\"\"\",\"line\nbreak\"\n");
  EXPECT_THROW(w.row({"one"}), std::invalid_argument);
  test::TempDir dir;
  write_new_file(dir.path() / "x.csv", w.str());
  EXPECT_THROW(write_new_file(dir.path() / "x.csv", "other"), std::runtime_error);
  std::ifstream f(dir.path() / "x.csv");
  std::string first;
  std::getline(f, first);
  EXPECT_EQ(first, "a,b");
}

// Formula injection: a text cell a spreadsheet would evaluate (= + - @, a tab or a carriage return first)
// gets a ' in front and quotes; numbers, negative ones included, stay numbers.
TEST(Csv, CellsThatWouldRunAsFormulasAreDefusedAndNumbersStayNumbers) {
  EXPECT_EQ(CsvWriter::quote("=HYPERLINK(\"http://x\",\"y\")"),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  EXPECT_EQ(CsvWriter::quote("+1+2"), "\"'+1+2\"");
  EXPECT_EQ(CsvWriter::quote("-A1"), "\"'-A1\"");
  EXPECT_EQ(CsvWriter::quote("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(CsvWriter::quote("\t=1"), "\"'\t=1\"");
  EXPECT_EQ(CsvWriter::quote("\r=1"), "\"'\r=1\"");
  EXPECT_EQ(CsvWriter::quote("-1e5-A1"), "\"'-1e5-A1\"");
  for (const char* n : {"-1.5", "+3", "-0", "1e-05", "-2.5E+10", ".5", "-.5", "7.", "-inf", "nan", "42"})
    EXPECT_EQ(CsvWriter::quote(n), n) << n;
  EXPECT_EQ(CsvWriter::quote(CsvWriter::num(-1.5)), "-1.5");
  EXPECT_EQ(CsvWriter::quote("tiled"), "tiled");
  EXPECT_EQ(CsvWriter::quote("a=b"), "a=b");  // only the first character starts a formula
  CsvWriter w({"kernel", "value"});
  w.row({"=1+1", CsvWriter::num(-0.25)});
  EXPECT_EQ(w.str(), "kernel,value\n\"'=1+1\",-0.25\n");
}

namespace {
DeviceLimits h100() {
  DeviceLimits d;
  d.sm_count = 132;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.regs_per_sm = 65536;
  d.smem_per_sm = 233472;  // 228 KiB
  d.reserved_smem_per_block = 1024;
  return d;
}
}  // namespace

TEST(Occupancy, ClassicTiledKernelOnAnH100ByHand) {
  // GPU.md: T=8 32 regs, 512 B smem: 32 blocks/SM; T=16: 8 blocks/SM; T=32: 2 blocks/SM.
  OccupancyReport t8 = compute_occupancy(h100(), {64, 32, 512, 0}, 512 * 512);
  EXPECT_EQ(t8.by_threads, 32);
  EXPECT_EQ(t8.by_regs, 32);   // 32 regs x 32 lanes = 1024 per warp, 64 warps, 2 per block
  EXPECT_EQ(t8.by_smem, 152);  // 512 + 1024 reserved = 1536 per block
  EXPECT_EQ(t8.blocks_per_sm, 32);
  EXPECT_EQ(t8.limiter, "threads = registers = blocks per SM");
  EXPECT_DOUBLE_EQ(t8.occupancy, 1.0);
  // 262144 blocks / (32 x 132 = 4224 per wave) = 62.06 waves: 62 full ones and a tail of 256 blocks.
  EXPECT_EQ(t8.full_waves, 62);
  EXPECT_NEAR(t8.waves, 262144.0 / 4224.0, 1e-12);
  EXPECT_NEAR(t8.tail_fill, 256.0 / 4224.0, 1e-12);

  OccupancyReport t32 = compute_occupancy(h100(), {1024, 32, 8192, 0}, 128 * 128);
  EXPECT_EQ(t32.blocks_per_sm, 2);
  EXPECT_EQ(t32.limiter, "threads = registers");
  EXPECT_NEAR(t32.waves, 16384.0 / 264.0, 1e-12);
}

TEST(Occupancy, RegistersAndSharedMemoryLimitBigBlocks) {
  // 256 threads x 168 registers: 168 x 32 = 5376 -> 5376 per warp (a multiple of 256), 12 warps fit: 1 block.
  OccupancyReport regs = compute_occupancy(h100(), {256, 168, 32768, 0}, 1024);
  EXPECT_EQ(regs.by_regs, 1);
  EXPECT_EQ(regs.blocks_per_sm, 1);
  EXPECT_EQ(regs.limiter, "registers");
  EXPECT_DOUBLE_EQ(regs.occupancy, 8.0 / 64.0);
  // 100 KiB of dynamic shared memory: (100 KiB + 1 KiB) per block, 2 fit in 228 KiB.
  OccupancyReport smem = compute_occupancy(h100(), {128, 64, 0, 100 * 1024}, 10);
  EXPECT_EQ(smem.by_smem, 2);
  EXPECT_EQ(smem.limiter, "shared memory");
  // Register rounding: 33 registers x 32 = 1056 -> 1280 per warp: 51 warps, 25 blocks of 2 warps.
  EXPECT_EQ(compute_occupancy(h100(), {64, 33, 0, 0}, 1).by_regs, 25);
  // A grid that is exactly 3 waves has a full tail.
  OccupancyReport exact = compute_occupancy(h100(), {1024, 32, 0, 0}, 3 * 264);
  EXPECT_EQ(exact.full_waves, 3);
  EXPECT_DOUBLE_EQ(exact.tail_fill, 1.0);
}

namespace {
// Two SMs, 2 x 3 tiles: SM 0 runs tiles 0, 1, 2 one after another, SM 1 runs 3 and 4 at once, then 5.
TileTrace synthetic() {
  TileTrace t;
  t.grid_x = 3;
  t.grid_y = 2;
  t.sm_count = 2;
  t.records = {{100, 200, 0, 0}, {200, 300, 0, 0}, {300, 400, 0, 0},
               {100, 250, 1, 0}, {120, 260, 1, 0}, {260, 330, 1, 0}};
  return t;
}
}  // namespace

TEST(Schedule, AggregatesTilesPerSmWavesAndConcurrency) {
  const TileTrace t = synthetic();
  EXPECT_EQ(check_trace(t), "");
  ScheduleSummary s = summarize_schedule(t);
  EXPECT_EQ(s.problem, "");
  EXPECT_EQ(s.tiles_per_sm, (std::vector<int>{3, 3}));
  EXPECT_EQ(s.t0, 100u);
  EXPECT_EQ(s.t1, 400u);
  EXPECT_EQ(s.waves, 3);            // SM 0: three in a row
  EXPECT_EQ(s.max_concurrency, 3);  // at t = 120..200: tiles 0, 3, 4
  EXPECT_NEAR(s.mean_tile_us, (100 + 100 + 100 + 150 + 140 + 70) / 6.0 * 1e-3, 1e-12);
  const auto curve = concurrency_curve(t);
  ASSERT_FALSE(curve.empty());
  EXPECT_EQ(curve.front(), (std::pair<double, int>{0.0, 2}));
  EXPECT_EQ(curve.back().second, 0);
  // At 200 tile 0 ends as tile 1 starts: no moment with both.
  for (const auto& [time, level] : curve)
    if (time == 100.0) EXPECT_EQ(level, 3);
  EXPECT_EQ(timer_resolution(t), 10u);
  const std::string csv = schedule_csv(t);
  EXPECT_NE(csv.find("1,2,0,1,0.160,0.230,0.070"), std::string::npos) << csv;
}

TEST(Schedule, FindsMissingTilesAndImpossibleStamps) {
  TileTrace t = synthetic();
  t.records[4].start_ns = 0;
  EXPECT_NE(check_trace(t).find("tile 4 was never started"), std::string::npos);
  t = synthetic();
  t.records[2].end_ns = 50;
  EXPECT_NE(check_trace(t).find("ends before it starts"), std::string::npos);
  t = synthetic();
  t.records[0].smid = 7;
  EXPECT_NE(check_trace(t).find("SM 7"), std::string::npos);
  t = synthetic();
  t.records.pop_back();
  EXPECT_NE(check_trace(t).find("record count"), std::string::npos);
  EXPECT_NE(summarize_schedule(t).problem, "");
}

TEST(Schedule, TheViewAggregatesWhatThePanelDrawsOffTheWindowsThread) {
  const TileTrace t = synthetic();
  const ScheduleView v = prepare_schedule_view(t, 6, 4000);
  EXPECT_EQ(v.summary.problem, "");
  // Fractions of the launch (100..400 ns) and of the longest tile (150 ns).
  ASSERT_EQ(v.start_frac.size(), 6u);
  EXPECT_FLOAT_EQ(v.start_frac[0], 0.0f);
  EXPECT_FLOAT_EQ(v.start_frac[2], 200.0f / 300.0f);
  EXPECT_FLOAT_EQ(v.duration_frac[3], 1.0f);
  EXPECT_FLOAT_EQ(v.duration_frac[5], 70.0f / 150.0f);
  // One block per tile: the map of C shows each record as it is.
  EXPECT_EQ(v.tile_start_frac, v.start_frac);
  EXPECT_EQ(v.tile_duration_frac, v.duration_frac);
  EXPECT_EQ(v.tile_sm, (std::vector<uint32_t>{0, 0, 0, 1, 1, 1}));
  TileTrace sized = t;
  sized.tile_m = sized.tile_n = 32;
  EXPECT_EQ(describe_grid(sized), "6 tiles of 32 x 32");
  TileTrace one = sized;  // a 20 x 20 problem under tile 256: one tile, said as one
  one.grid_x = one.grid_y = 1;
  EXPECT_EQ(describe_grid(one), "1 tile of 32 x 32");
  // 6 bins of 50 ns: SM 1 has tiles 3 and 4 overlapping in its first bins, then tile 5.
  ASSERT_EQ(v.gantt_sms, 2);
  ASSERT_EQ(v.gantt.size(), 12u);
  EXPECT_EQ(v.gantt[6 + 0], 2.0f);  // SM 1, 100..150 ns: tiles 3 and 4
  EXPECT_EQ(v.gantt[0 + 5], 1.0f);  // SM 0, 350..400 ns: tile 2
  EXPECT_EQ(v.gantt_peak, 3.0f) << "SM 1's third bin holds tiles 3, 4 and the start of 5";
  // The resident-tiles curve, the same as concurrency_curve in microseconds.
  const auto curve = concurrency_curve(t);
  ASSERT_EQ(v.curve_us.size(), curve.size());
  EXPECT_EQ(v.curve_tiles.front(), 2);
  EXPECT_DOUBLE_EQ(v.curve_us.back(), curve.back().first * 1e-3);
  // A broken trace: only the reason.
  TileTrace bad = synthetic();
  bad.records.pop_back();
  const ScheduleView b = prepare_schedule_view(bad);
  EXPECT_NE(b.summary.problem, "");
  EXPECT_TRUE(b.gantt.empty());
}

// Split-K: one block per slice of K for each tile. The trace holds every block; the map of C shows each tile
// from its first slice's start to its last slice's end, coloured by the SM that finished it (wrote C).
TEST(Schedule, SplitKTracesEveryBlockAndTheMapShowsEachTileOnce) {
  TileTrace t;
  t.grid_x = 2;
  t.grid_y = 1;
  t.grid_z = 2;  // records: slice 0 of tiles 0, 1, then slice 1 of tiles 0, 1
  t.sm_count = 4;
  t.records = {{100, 200, 0, 0}, {100, 180, 1, 0}, {110, 260, 2, 0}, {105, 170, 3, 0}};
  EXPECT_EQ(check_trace(t), "");
  const std::vector<TileRecord> spans = tile_spans(t);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].start_ns, 100u);
  EXPECT_EQ(spans[0].end_ns, 260u);
  EXPECT_EQ(spans[0].smid, 2u) << "slice 1 of tile 0 ended last";
  EXPECT_EQ(spans[1].end_ns, 180u);
  EXPECT_EQ(spans[1].smid, 1u) << "slice 0 of tile 1 ended last";
  const ScheduleView v = prepare_schedule_view(t, 4, 100);
  EXPECT_EQ(v.summary.problem, "");
  EXPECT_EQ(v.start_frac.size(), 4u) << "the Gantt and the curve count blocks";
  ASSERT_EQ(v.tile_sm.size(), 2u) << "the map has one pixel per tile";
  EXPECT_EQ(v.tile_sm[0], 2u);
  EXPECT_FLOAT_EQ(v.tile_duration_frac[0], 1.0f);            // 160 ns, the longest span
  EXPECT_FLOAT_EQ(v.tile_duration_frac[1], 80.0f / 160.0f);  // 100..180
  EXPECT_EQ(v.summary.max_concurrency, 4);
  t.tile_m = t.tile_n = 128;
  EXPECT_EQ(describe_grid(t), "2 tiles of 128 x 128, K in 2 slices: 4 blocks");
  const std::string csv = schedule_csv(t);
  EXPECT_NE(csv.find("tile_row,tile_col,k_slice,sm"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n0,0,1,2,"), std::string::npos) << "slice 1 of tile (0, 0) on SM 2:\n" << csv;
  EXPECT_NE(csv.find("\n0,1,0,1,"), std::string::npos) << csv;
  // The map's tooltip for tile (0, 1): its two slices (times from the first start, 100 ns) and the SM that
  // wrote C.
  EXPECT_EQ(describe_tile_blocks(t, 1, 100, spans[1].smid),
            "tile (0, 1): K in 2 slices\nslice 0: SM 1, 0.00 to 0.08 us\nslice 1: SM 3, 0.01 to 0.07 us\n"
            "C written by SM 1 (the last slice to finish)");
  // The same records as a cluster of 2 blocks per 256 x 256 tile (wgmma_tf32 tile 512): z is a block's share
  // of the columns, and nothing says K is sliced.
  t.z_splits_columns = true;
  t.tile_m = t.tile_n = 256;
  EXPECT_EQ(describe_grid(t), "2 tiles of 256 x 256, each 2 blocks of 128 columns (a cluster): 4 blocks");
  const std::string ccsv = schedule_csv(t);
  EXPECT_NE(ccsv.find("tile_row,tile_col,cluster_block,sm"), std::string::npos) << ccsv;
  EXPECT_EQ(ccsv.find("k_slice"), std::string::npos) << ccsv;
  EXPECT_NE(ccsv.find("\n0,0,1,2,"), std::string::npos) << "block 1 of tile (0, 0) on SM 2:\n" << ccsv;
  EXPECT_EQ(
      describe_tile_blocks(t, 0, 100, spans[0].smid),
      "tile (0, 0): a cluster of 2 blocks\ncolumns 0-127: SM 0, 0.00 to 0.10 us\ncolumns 128-255: SM 2, "
      "0.01 to 0.16 us\neach block writes its own columns");
  t.z_splits_columns = false;
  t.records.pop_back();  // a block missing
  EXPECT_NE(check_trace(t).find("record count"), std::string::npos);
}

// Stream-K (TileTrace::k_segments): a record per segment of a tile, in K order; the records past a tile's
// last segment are absent (all zero) and count nowhere: not in the SMs' tiles, not in t0, not in the means.
TEST(Schedule, StreamKSegmentsAreCheckedAndAggregatedWithoutTheAbsentRecords) {
  const TileTrace t = test::streamk_trace();
  EXPECT_EQ(check_trace(t), "");
  EXPECT_FALSE(present(t.records[12])) << "tile 0 has no segment 1";
  EXPECT_TRUE(present(t.records[20])) << "tile 8's segment 1";
  EXPECT_EQ(tile_segments(t, 0), 1);
  EXPECT_EQ(tile_segments(t, 8), 2);
  EXPECT_EQ(tile_segments(t, 9), 3);
  EXPECT_EQ(k_steps_of(t), 128);
  EXPECT_EQ(segment_steps(t, 9), (std::pair<int64_t, int64_t>{0, 32}));          // tile 9, segment 0
  EXPECT_EQ(segment_steps(t, 33), (std::pair<int64_t, int64_t>{96, 128}));       // its last: to S
  EXPECT_EQ(segment_k_range(t, 21), (std::pair<int64_t, int64_t>{1024, 3072}));  // its segment 1
  EXPECT_EQ(segment_k_range(t, 0), (std::pair<int64_t, int64_t>{0, 4096}));      // a whole tile

  const ScheduleSummary s = summarize_schedule(t);
  EXPECT_EQ(s.problem, "");
  EXPECT_EQ(s.t0, 1000u) << "not 0, an absent record's start";
  EXPECT_EQ(s.t1, 2800u);
  EXPECT_EQ(s.tiles_per_sm, (std::vector<int>{2, 2, 2, 3, 2, 3, 2, 2})) << "18 segments";
  EXPECT_EQ(s.waves, 3);            // SM 3: tile 3, then tile 11's segments 0 and 2; SM 5 likewise
  EXPECT_EQ(s.max_concurrency, 8);  // one at a time on each of the 8 SMs
  EXPECT_NEAR(s.mean_tile_us, 12015.0 / 18 * 1e-3, 1e-12);
  EXPECT_NEAR(s.min_tile_us, 0.03, 1e-12);  // tile 11's segment 2
  EXPECT_NEAR(s.max_tile_us, 1.1, 1e-12);   // tile 1
  EXPECT_EQ(timer_resolution(t), 5u);
  const auto curve = concurrency_curve(t);
  EXPECT_EQ(curve.front(), (std::pair<double, int>{0.0, 4})) << "four start at 1000 ns";
  EXPECT_EQ(curve.back(), (std::pair<double, int>{1800.0, 0}));

  EXPECT_EQ(describe_grid(t), "12 tiles of 128 x 128, stream-K: 8 made whole, 4 shared in 10 segments");
  EXPECT_EQ(std::string(block_z_name(t)), "k_segment");
  EXPECT_EQ(std::string(record_noun(t)), "segment");
  // The map of C: each tile from its first segment's start to its last end, by the SM that wrote C.
  const std::vector<TileRecord> spans = tile_spans(t);
  ASSERT_EQ(spans.size(), 12u);
  EXPECT_EQ(spans[0].smid, 0u);
  EXPECT_EQ(spans[8].start_ns, 2000u);
  EXPECT_EQ(spans[8].end_ns, 2600u);
  EXPECT_EQ(spans[8].smid, 4u) << "segment 1 finished last";
  EXPECT_EQ(spans[9].smid, 5u);
  EXPECT_EQ(spans[10].start_ns, 1900u);
  EXPECT_EQ(spans[10].smid, 2u) << "segment 0 finished last";
  EXPECT_EQ(spans[11].smid, 7u);
  EXPECT_EQ(
      describe_tile_blocks(t, 8, 1000, spans[8].smid),
      "tile (2, 0): K in 2 segments\nK 0-2047: SM 0, 1.00 to 1.50 us\nK 2048-4095: SM 4, 1.00 to 1.60 us\n"
      "C written by SM 4 (the last segment to finish)");
  EXPECT_EQ(describe_tile_blocks(t, 1, 1000, spans[1].smid),
            "tile (0, 1): made whole by one block\nK 0-4095: SM 1, 0.00 to 1.10 us");

  const ScheduleView v = prepare_schedule_view(t, 18, 100);
  EXPECT_EQ(v.summary.problem, "");
  ASSERT_EQ(v.start_frac.size(), 36u);
  EXPECT_FLOAT_EQ(v.start_frac[33], 1300.0f / 1800.0f);  // tile 9's segment 2
  EXPECT_EQ(v.start_frac[34], 0.0f);                     // tile 10 has no segment 2
  EXPECT_EQ(v.duration_frac[34], 0.0f);
  EXPECT_EQ(v.tile_sm, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 2, 7}));
  ASSERT_EQ(v.gantt_sms, 8);
  // 18 bins of 100 ns: SM 0 ran tile 0 (1000-2000) then tile 8's segment 0 (2000-2500), nothing after.
  EXPECT_EQ(v.gantt[0 * 18 + 0], 1.0f);
  EXPECT_EQ(v.gantt[0 * 18 + 17], 0.0f);
  EXPECT_EQ(v.gantt[3 * 18 + 17], 0.0f);  // SM 3 is done at 2480
  EXPECT_EQ(v.curve_tiles.front(), 4);

  // The same trace with K unknown: the last segments' ends are not known, the order still checked.
  TileTrace unknown = t;
  unknown.k = 0;
  EXPECT_EQ(check_trace(unknown), "");
  EXPECT_EQ(k_steps_of(unknown), 0);
  EXPECT_EQ(segment_k_range(unknown, 21), (std::pair<int64_t, int64_t>{1024, 3072}));
  EXPECT_EQ(segment_k_range(unknown, 33), (std::pair<int64_t, int64_t>{3072, -1}));
  EXPECT_NE(describe_tile_blocks(unknown, 8, 1000, 4).find("\nK 2048-end: SM 4"), std::string::npos);
}

TEST(Schedule, StreamKRulesRefuseGapsDisorderAMissingSegmentZeroAndLitteredAbsentRecords) {
  auto why = [](void (*change)(TileTrace&)) {
    TileTrace t = test::streamk_trace();
    change(t);
    return check_trace(t);
  };
  EXPECT_EQ(why([](TileTrace& t) { t.records[21] = {}; }),
            "segment 2 of tile (2, 1) follows an absent segment 1");
  EXPECT_EQ(why([](TileTrace& t) { t.records[35].k_first = 40; }),
            "segment 2 of tile (2, 3) starts at K step 40, not after segment 1's 40");
  EXPECT_EQ(why([](TileTrace& t) { t.records[21].k_first = 0; }),
            "segment 1 of tile (2, 1) starts at K step 0, not after segment 0's 0");
  EXPECT_EQ(why([](TileTrace& t) { t.records[8] = {}; }),
            "segment 0 of tile (2, 0) was never started (every tile has a segment 0)");
  EXPECT_EQ(why([](TileTrace& t) { t.records[3].k_first = 3; }),
            "segment 0 of tile (0, 3) starts at K step 3, not 0");
  EXPECT_EQ(why([](TileTrace& t) { t.records[12].smid = 5; }),
            "segment 1 of tile (0, 0) is absent (start 0) but not all zero");
  EXPECT_EQ(why([](TileTrace& t) { t.records[34].end_ns = 9; }),
            "segment 2 of tile (2, 2) is absent (start 0) but not all zero");
  EXPECT_EQ(why([](TileTrace& t) { t.records[13].k_first = 7; }),
            "segment 1 of tile (0, 1) is absent (start 0) but not all zero");
  EXPECT_EQ(why([](TileTrace& t) { t.records[22].k_first = 128; }),
            "segment 1 of tile (2, 2) starts at K step 128, past the tile's 128 steps (K = 4096)");
  EXPECT_EQ(why([](TileTrace& t) { t.records[22].k_first = 128, t.k = 0; }), "") << "K unknown: no bound";
  EXPECT_EQ(why([](TileTrace& t) { t.records[20].end_ns = 1999; }),
            "segment 1 of tile (2, 0) ends before it starts");
  EXPECT_EQ(why([](TileTrace& t) { t.records[33].smid = 8; }), "segment 2 of tile (2, 1) reports SM 8");
  EXPECT_EQ(why([](TileTrace& t) { t.k_step = 0; }),
            "stream-K segments without the K step they count in (k_step)");
  EXPECT_EQ(why([](TileTrace& t) { t.z_splits_columns = true; }),
            "stream-K segments and a cluster's columns at once");
  EXPECT_EQ(why([](TileTrace& t) { t.records.pop_back(); }), "record count differs from the grid");
  // Without k_segments nothing changes: the absent records are blocks that never started.
  EXPECT_EQ(why([](TileTrace& t) { t.k_segments = false; }), "tile 12 was never started");
  const TileTrace bad = [] {
    TileTrace t = test::streamk_trace();
    t.records[21] = {};
    return t;
  }();
  EXPECT_NE(summarize_schedule(bad).problem, "");
  EXPECT_NE(prepare_schedule_view(bad).summary.problem, "");
}

TEST(Schedule, StreamKCsvHasOneRowPerPresentSegmentWithItsKRange) {
  const TileTrace t = test::streamk_trace();
  const std::string csv = schedule_csv(t);
  EXPECT_EQ(csv.rfind("tile_row,tile_col,k_segment,k_begin,k_end,sm,start_us,end_us,duration_us\n", 0), 0u)
      << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 19) << "a header and 18 segments:\n" << csv;
  EXPECT_NE(csv.find("\n0,0,0,0,4096,0,0.000,1.000,1.000\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n2,1,1,1024,3072,5,1.005,1.300,0.295\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n2,1,2,3072,4096,5,1.300,1.800,0.500\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n2,2,1,3200,4096,6,0.900,1.100,0.200\n"), std::string::npos) << csv;
  TileTrace unknown = t;
  unknown.k = 0;
  const std::string ucsv = schedule_csv(unknown);
  EXPECT_NE(ucsv.find("\n2,1,2,3072,,5,1.300,1.800,0.500\n"), std::string::npos) << "K unknown:\n" << ucsv;
  EXPECT_NE(ucsv.find("\n2,1,1,1024,3072,5,"), std::string::npos) << ucsv;
  // Other traces keep their columns.
  TileTrace plain = t;
  plain.k_segments = false;
  plain.grid_z = 1;
  plain.records.resize(12);
  EXPECT_EQ(schedule_csv(plain).rfind("tile_row,tile_col,k_slice,sm,start_us,end_us,duration_us\n", 0), 0u);
}

// The Tile schedule figure's numbers for stream-K: a row per present segment with its K range (k_end NaN
// where K is not known), times from the first start; the resident curve over the segments.
TEST(Schedule, StreamKFigureDataHoldTheSegmentsAndTheirKRanges) {
  const TileTrace t = test::streamk_trace();
  const FigureData f = schedule_figure(t, FigureMeta{});
  ASSERT_EQ(f.series.size(), 2u);
  const FigureSeries& rows = f.series[0];
  EXPECT_EQ(rows.columns, (std::vector<std::string>{"tile_row", "tile_col", "k_segment", "k_begin", "k_end",
                                                    "sm", "start_us", "end_us", "duration_us"}));
  ASSERT_EQ(rows.rows.size(), 18u);
  const std::vector<double>& tile11_last = rows.rows.back();  // record 35: tile 11's segment 2
  EXPECT_EQ(tile11_last[0], 2);
  EXPECT_EQ(tile11_last[1], 3);
  EXPECT_EQ(tile11_last[2], 2);
  EXPECT_EQ(tile11_last[3], 2560);
  EXPECT_EQ(tile11_last[4], 4096);
  EXPECT_EQ(tile11_last[5], 3);
  EXPECT_NEAR(tile11_last[6], 1.45, 1e-12);
  EXPECT_EQ(f.series[1].rows.front()[1], 4) << "four segments start at the first start";
  EXPECT_NE(f.meta.notes.at(0).find("stream-K: 8 made whole, 4 shared in 10 segments"), std::string::npos);
  TileTrace unknown = t;
  unknown.k = 0;
  EXPECT_TRUE(std::isnan(schedule_figure(unknown, FigureMeta{}).series[0].rows.back()[4]));
}

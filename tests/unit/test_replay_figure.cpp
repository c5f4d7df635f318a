// The replay as a figure (core/plots/replay_figure.hpp): the moments a strip shows, the animation's frames,
// the times a person types, and the numbers of the CSV and the sidecar, on a synthetic trace whose every
// state is known. No window needed.
#include <gtest/gtest.h>

#include "core/plots/replay_figure.hpp"

namespace ts {
namespace {

// 8 x 6 tiles on 4 SMs, 3 blocks per SM: 12 at once, 4 waves. Block i runs in wave i / 12, on SM i % 4, from
// 1000 * wave to 1000 * wave + 900 ns after the first start (stamps start at 5000).
TileTrace four_waves() {
  TileTrace t;
  t.grid_x = 8;
  t.grid_y = 6;
  t.tile_m = t.tile_n = 32;
  t.sm_count = 4;
  for (uint64_t i = 0; i < 48; ++i) {
    const uint64_t s = 5000 + 1000 * (i / 12);
    t.records.push_back({s, s + 900, uint32_t(i % 4), 0});
  }
  return t;
}

void expect_row(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << what << " column " << i;
}

TEST(ReplayFigure, TimesAreParsedWithTheirUnitsAndBadOnesAreRefusedByName) {
  const auto t = parse_replay_times("0, 50us,1.5ms,500ns,100%,7");
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[1].unit, ReplayTimeArg::Unit::Us);
  EXPECT_EQ(t[2].unit, ReplayTimeArg::Unit::Ms);
  EXPECT_EQ(t[3].unit, ReplayTimeArg::Unit::Ns);
  EXPECT_EQ(t[4].unit, ReplayTimeArg::Unit::Percent);
  EXPECT_EQ(t[5].unit, ReplayTimeArg::Unit::Us);
  const auto ns = resolve_replay_times(t, 2'000'000);
  EXPECT_EQ(ns, (std::vector<uint64_t>{0, 50'000, 1'500'000, 500, 2'000'000, 7'000}));
  for (const char* bad : {"", ",", "abc", "-5", "5s", "1e3", "0x10", "nan", "inf", "101%", "5,,6", "10 us us",
                          "1,2,3,4,5,6,7,8,9,10,11,12,13"}) {
    try {
      parse_replay_times(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ValidationError& e) {
      EXPECT_NE(std::string(e.what()).find("--times"), std::string::npos) << e.what();
    }
  }
  // After the end of the launch: refused, naming the time and the end.
  try {
    resolve_replay_times(parse_replay_times("3us"), 2'500);
    ADD_FAILURE() << "3 us accepted in a 2.5 us launch";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("3us is after the launch's end at 2.5 us"), std::string::npos)
        << e.what();
  }
}

TEST(ReplayFigure, DefaultMomentsAreTheWavesStartsAndTheEnd) {
  const ScheduleReplay r(four_waves());
  ASSERT_TRUE(r.problem().empty()) << r.problem();
  const auto m = default_replay_moments(r, 12);
  ASSERT_EQ(m.size(), 5u);
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(m[size_t(w)].t_ns, uint64_t(1000 * w));
    EXPECT_EQ(m[size_t(w)].why, "wave " + std::to_string(w + 1) + " of 4 starts");
  }
  EXPECT_EQ(m[4].t_ns, r.duration_ns());
  EXPECT_EQ(m[4].why, "the end");
  // One slot: 48 waves, thinned to 7 of them (the first and the last among them) and the end.
  const auto many = default_replay_moments(r, 1);
  ASSERT_EQ(many.size(), size_t(kDefaultReplayPanels));
  EXPECT_EQ(many.front().why, "wave 1 of 48 starts");
  EXPECT_EQ(many[many.size() - 2].why, "wave 48 of 48 starts");
  // No occupancy report: quarters of the launch.
  const auto q = default_replay_moments(r, 0);
  ASSERT_EQ(q.size(), 5u);
  EXPECT_EQ(q[2].t_ns, r.duration_ns() / 2);
  EXPECT_EQ(q[2].why, "50% of the launch");
}

TEST(ReplayFigure, FramesAreEqualStepsFromTheStartToTheEndWithAHoldOnTheLast) {
  const ReplayFrames f = replay_frames(3900, 5);
  EXPECT_EQ(f.t_ns, (std::vector<uint64_t>{0, 975, 1950, 2925, 3900}));
  ASSERT_EQ(f.duration_ms.size(), 5u);
  EXPECT_EQ(f.duration_ms[0], 250);  // 5 s / 5 frames, at most 250 ms a frame
  EXPECT_EQ(f.duration_ms[4], 250 + kReplayHoldMs);
  const ReplayFrames many = replay_frames(1'000'000, 600);
  EXPECT_EQ(many.t_ns.back(), 1'000'000u);
  EXPECT_EQ(many.duration_ms[0], 20);  // at least 20 ms a frame
  EXPECT_THROW(replay_frames(100, 1), ValidationError);
  EXPECT_THROW(replay_frames(100, 601), ValidationError);
  EXPECT_EQ(parse_replay_frames("2"), 2);
  EXPECT_EQ(parse_replay_frames("600"), 600);
  for (const char* bad : {"", "1", "601", "-3", "12a", "1e2", "9999999"}) {
    try {
      parse_replay_frames(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ValidationError& e) {
      EXPECT_NE(std::string(e.what()).find("--frames"), std::string::npos) << e.what();
    }
  }
}

TEST(ReplayFigure, LabelsSayTheTimeAndTheCounts) {
  const ScheduleReplay r(four_waves());
  EXPECT_EQ(replay_time_label(120000, 400000), "t = 120.0 us");
  EXPECT_EQ(replay_time_label(5000000, 62000000), "t = 5.000 ms");
  EXPECT_EQ(replay_counts_label(r.counts(1000), r.blocks()), "12 running, 12 done of 48");
}

TEST(ReplayFigure, TheDataHoldEveryBlockAndTheCountsOfEveryMomentAndFrame) {
  const TileTrace t = four_waves();
  const ScheduleReplay r(t);
  const auto moments = default_replay_moments(r, 12);
  const ReplayFrames frames = replay_frames(r.duration_ns(), 5);
  FigureMeta meta;
  meta.plot = PlotKind::Replay;
  const FigureData d = replay_figure(t, r, moments, 12, &frames, meta);
  ASSERT_EQ(d.series.size(), 3u);
  const FigureSeries& blocks = d.series[0];
  EXPECT_EQ(blocks.columns,
            (std::vector<std::string>{"tile_row", "tile_col", "k_slice", "sm", "start_us", "end_us"}));
  ASSERT_EQ(blocks.rows.size(), 48u);
  // Block 13: tile (1, 5), wave 1, SM 1, 1.0 .. 1.9 us.
  expect_row(blocks.rows[13], {1, 5, 0, 1, 1.0, 1.9}, "block 13");
  const FigureSeries& at = d.series[1];
  EXPECT_EQ(at.label, "moments");
  ASSERT_EQ(at.rows.size(), 5u);
  expect_row(at.rows[0], {0, 36, 12, 0}, "t = 0: the first wave runs");
  expect_row(at.rows[2], {2.0, 12, 12, 24}, "wave 3 starts");
  expect_row(at.rows[4], {3.9, 0, 0, 48}, "the end: every block done");
  const FigureSeries& fr = d.series[2];
  EXPECT_EQ(fr.label, "frames");
  ASSERT_EQ(fr.rows.size(), 5u);
  EXPECT_EQ(fr.rows[4][3], 48);
  EXPECT_EQ(fr.rows[4][4], 250 + kReplayHoldMs);
  // The notes say the grid, the waves and the moments.
  std::string notes;
  for (const auto& n : d.meta.notes) notes += n + "\n";
  EXPECT_NE(notes.find("48 tiles of 32 x 32"), std::string::npos) << notes;
  EXPECT_NE(notes.find("12 blocks resident at once, 4 waves"), std::string::npos) << notes;
  EXPECT_NE(notes.find("t = 2.0 us (wave 3 of 4 starts)"), std::string::npos) << notes;
  // The CSV and the sidecar carry them (figure.hpp).
  const std::string csv = figure_csv(d);
  EXPECT_NE(csv.find("moments,2,12,12,24"), std::string::npos) << csv;
  EXPECT_EQ(to_string(PlotKind::Replay), std::string("replay"));
  EXPECT_EQ(parse_plot_kind("replay"), PlotKind::Replay);
}

}  // namespace
}  // namespace ts

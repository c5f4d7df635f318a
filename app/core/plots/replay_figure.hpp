#pragma once
// [SECTION] The replay of a traced launch as a figure (issue 29): which moments a strip of small multiples
// shows, the frames of the animation, and the numbers behind both. Pure arithmetic on a ScheduleReplay
// (schedule_replay.hpp); the drawing is ui/plots/replay_plot.hpp, the files figure_render.hpp's.
//   parse_replay_times     --times "0,50us,100%": microseconds (bare or "us"), "ns", "ms", or a percentage
//   resolve_replay_times   ...into nanoseconds of one launch, refusing a time after its end
//   default_replay_moments the start of every wave (occupancy arithmetic) and the end, thinned to fit a strip
//   replay_frames          equal steps over the launch, each frame's duration, a hold on the last
//   replay_figure          FigureData: per block its tile, slice, SM, start, end; per moment its counts
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/schedule_replay.hpp"
#include "core/plots/figure.hpp"

namespace ts {

// One time a person typed, before the launch's length is known.
struct ReplayTimeArg {
  enum class Unit { Ns, Us, Ms, Percent };
  double value = 0;
  Unit unit = Unit::Us;
  std::string text;  // as typed, for messages
};
inline constexpr int kMaxReplayPanels =
    12;  // small multiples in one figure (--times gives at most this many)
inline constexpr int kDefaultReplayPanels = 8;
// Comma-separated times: "120" or "120us" (microseconds), "500ns", "1.5ms", "50%" (of the launch). Every
// item a finite number from 0 (a percentage at most 100), 1..kMaxReplayPanels items. Throws ValidationError
// naming `what` and the item.
std::vector<ReplayTimeArg> parse_replay_times(const std::string& text, const char* what = "--times");
// Nanoseconds after the launch's first block start. Throws ValidationError naming `what` when a time lies
// after the launch's end ("replay moment 500us is after the launch's end at 412.5 us").
std::vector<uint64_t> resolve_replay_times(const std::vector<ReplayTimeArg>& times, uint64_t duration_ns,
                                           const char* what = "replay moment");

// A moment the still shows, and why it was chosen ("wave 2 of 4 starts", "the end", "given").
struct ReplayMoment {
  uint64_t t_ns = 0;
  std::string why;
};
// The start of each wave from the occupancy arithmetic (`slots` = blocks per SM x SMs resident at once) and
// the end of the launch; with more than max_panels - 1 waves, max_panels - 1 of them evenly spread (the first
// and the last always among them). Without slots (no occupancy report): 0, 25, 50, 75 and 100 % of the
// launch.
std::vector<ReplayMoment> default_replay_moments(const ScheduleReplay& r, int64_t slots,
                                                 int max_panels = kDefaultReplayPanels);

// The animation: `frames` times at equal steps from 0 to the end (the first at 0, the last at the end), each
// shown for about kReplayPlaySeconds / frames (20..250 ms), the last held kReplayHoldMs longer.
inline constexpr int kMinReplayFrames = 2, kMaxReplayFrames = 600, kDefaultReplayFrames = 60;
inline constexpr double kReplayPlaySeconds = 5.0;
inline constexpr int kReplayHoldMs = 2000;
struct ReplayFrames {
  std::vector<uint64_t> t_ns;
  std::vector<int> duration_ms;
};
// Throws ValidationError naming `what` when frames is outside kMinReplayFrames..kMaxReplayFrames.
ReplayFrames replay_frames(uint64_t duration_ns, int frames, const char* what = "--frames");
// A whole number of frames as typed ("60"); throws ValidationError naming `what` outside 2..600.
int parse_replay_frames(const std::string& text, const char* what = "--frames");

// "t = 120.0 us" (in ms when the launch is 10 ms or longer, as describe_replay_time).
std::string replay_time_label(uint64_t t_ns, uint64_t duration_ns);
// "132 running, 900 done of 1024", or with a noun "... of 1024 segments" (stream-K:
// ScheduleReplay::blocks_noun).
std::string replay_counts_label(const ScheduleReplay::Counts& c, size_t blocks, const char* noun = nullptr);

// The figure's numbers: series "blocks" (tile_row, tile_col, k_slice or cluster_block, sm, start_us, end_us;
// stream-K: one row per present segment, tile_row, tile_col, k_segment, k_begin, k_end, sm, ...),
// "moments" (time_us, waiting, running, done: one row per panel of the still) and, when `frames` is given,
// "frames" (time_us, waiting, running, done, duration_ms: one row per frame of the WebP). A note says the
// grid, the SMs, the waves and how the moments were chosen.
FigureData replay_figure(const TileTrace& t, const ScheduleReplay& r, const std::vector<ReplayMoment>& shown,
                         int64_t slots, const ReplayFrames* frames, FigureMeta meta);

}  // namespace ts

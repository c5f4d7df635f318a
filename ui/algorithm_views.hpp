#pragma once
// [SECTION] The algorithm views' cursors, shared by the panels that draw them: the schedule replay (which
// tiles of C wait, run or are done at time t of the traced launch: Matrices and Tile schedule) and the
// feeding tiles (which pieces of A and B a chosen tile of C reads at k step s: Matrices). Plain state: the
// panels edit it, App moves the playing cursors on once a frame, snapshot sets it from the command line.
#include <cmath>
#include <cstdint>

namespace ts::ui {

// Playing at speed 1 takes the whole launch this long (a launch lasts microseconds to milliseconds).
inline constexpr double kReplaySeconds = 6.0;
// Playing the k steps at speed 1 shows this many steps a second.
inline constexpr double kFeedStepsPerSecond = 2.0;

struct ReplayCursor {
  bool shown = false;    // the layer is drawn over C and over the tile grid
  bool playing = false;  // t moves on by itself (App::frame)
  uint64_t t_ns = 0;     // since the launch's first block started
  double carry_ns = 0;   // playing: the part of a nanosecond not yet added to t_ns (a short launch at a high
                         // frame rate moves less than 1 ns a frame)
  float speed = 1;       // 1: the launch in kReplaySeconds
  uint64_t serial = 0;   // the result (AppState::result_serial) t belongs to: a new trace starts at 0
};

struct FeedCursor {
  bool shown = false;  // a tile of C is chosen and its pieces are outlined
  int64_t tile_row = 0, tile_col = 0;
  int slice = 0;  // split-K: which slice of K
  int step = 0;   // k step
  bool playing = false;
  float speed = 1;        // 1: kFeedStepsPerSecond
  double step_clock = 0;  // seconds into the current step while playing
  uint64_t serial = 0;    // the result the tile was chosen on (another shape clears it)
};

struct AlgorithmViews {
  ReplayCursor replay;
  FeedCursor feed;
};

// Moves the playing cursors on by dt seconds: the replay by speed x duration / kReplaySeconds, stopping at
// the end; the k step by speed x kFeedStepsPerSecond steps a second, stopping at the last step. duration_ns
// and steps: of the current trace and tile (0: nothing to play, the cursor stops).
inline void advance_views(AlgorithmViews& v, uint64_t duration_ns, int steps, double dt) {
  if (v.replay.playing) {
    if (duration_ns == 0) {
      v.replay.playing = false;
    } else {
      const double step = double(duration_ns) / kReplaySeconds * double(v.replay.speed) * dt;
      v.replay.carry_ns += step > 0 ? step : 0;
      const double whole = std::floor(v.replay.carry_ns);
      v.replay.carry_ns -= whole;
      if (double(v.replay.t_ns) + whole >= double(duration_ns)) {
        v.replay.t_ns = duration_ns;
        v.replay.playing = false;
        v.replay.carry_ns = 0;
      } else {
        v.replay.t_ns += uint64_t(whole);
      }
    }
  }
  if (v.feed.playing) {
    if (steps <= 0) {
      v.feed.playing = false;
      return;
    }
    v.feed.step_clock += dt * kFeedStepsPerSecond * double(v.feed.speed);
    while (v.feed.step_clock >= 1.0 && v.feed.step + 1 < steps) {
      v.feed.step_clock -= 1.0;
      ++v.feed.step;
    }
    if (v.feed.step + 1 >= steps) {
      v.feed.step = steps - 1;
      v.feed.playing = false;
      v.feed.step_clock = 0;
    }
  }
}

}  // namespace ts::ui

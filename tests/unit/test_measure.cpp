// The measuring policy: its stop rule, the named policies, the sampling loop every backend runs, and the
// clock summary recorded with every point.
#include <cmath>

#include <gtest/gtest.h>

#include "measure.hpp"
#include "problem.hpp"

using namespace ts;

TEST(StopRule, BenchNeedsMinimumSamplesAndTimeThenLowNoise) {
  const MeasurePolicy p = MeasurePolicy::bench();  // 10 samples, 0.5 s, 0.5 % noise, 10 s limit
  std::vector<double> s(9, 100.0);                 // 0.9 s of kernel time, no noise, but only 9 samples
  EXPECT_EQ(should_stop(s, 1.0, p), StopReason::Continue);
  s.push_back(100.0);
  EXPECT_EQ(should_stop(s, 1.0, p), StopReason::Converged);
  std::vector<double> fast(50, 1.0);  // 50 samples but only 0.05 s of kernel time
  EXPECT_EQ(should_stop(fast, 0.2, p), StopReason::Continue);
  std::vector<double> noisy;
  for (int i = 0; i < 100; ++i) noisy.push_back(i % 2 ? 90.0 : 110.0);  // 10 % noise
  EXPECT_EQ(should_stop(noisy, 5.0, p), StopReason::Continue);
  EXPECT_EQ(should_stop(noisy, 10.5, p), StopReason::TimeLimit);
  MeasurePolicy capped = p;
  capped.max_samples = 100;
  EXPECT_EQ(should_stop(noisy, 1.0, capped), StopReason::SampleLimit);
}

TEST(StopRule, TheTimeLimitWaitsForTheMinimumUnlessThatTakesForever) {
  const MeasurePolicy p = MeasurePolicy::bench();
  std::vector<double> slow(3, 4000.0);  // 4 s per launch
  EXPECT_EQ(should_stop(slow, 12.0, p), StopReason::Continue);
  EXPECT_EQ(should_stop(slow, 31.0, p), StopReason::TimeLimit);
  EXPECT_EQ(should_stop({}, 100.0, p), StopReason::Continue);  // never stops without a sample
}

TEST(StopRule, QuickTakesExactlyTenSamplesWithoutANoiseRule) {
  const MeasurePolicy q = MeasurePolicy::quick();
  std::vector<double> noisy;
  for (int i = 0; i < 9; ++i) noisy.push_back(i % 2 ? 1.0 : 5.0);  // 60 % noise
  EXPECT_EQ(should_stop(noisy, 0.01, q), StopReason::Continue);
  noisy.push_back(1.0);
  EXPECT_EQ(should_stop(noisy, 0.01, q), StopReason::Converged);
  // A launch slower than the cap: stops at 3 x 2 s with what it has.
  EXPECT_EQ(should_stop({2500, 2500}, 5.0, q), StopReason::Continue);
  EXPECT_EQ(should_stop({2500, 2500, 2500}, 7.5, q), StopReason::TimeLimit);
  const MeasurePolicy f = MeasurePolicy::fixed(3);
  EXPECT_EQ(should_stop({1, 1}, 0, f), StopReason::Continue);
  EXPECT_EQ(should_stop({1, 1, 9}, 0, f), StopReason::Converged);
}

TEST(StopRule, NoiseIsRelativeStandardDeviation) {
  EXPECT_DOUBLE_EQ(noise({5.0}), 0.0);
  EXPECT_NEAR(noise({9, 11}), std::sqrt(2.0) / 10.0, 1e-12);
}

TEST(Policy, BadValuesAreRefusedNamingTheField) {
  EXPECT_NO_THROW(validate_policy(MeasurePolicy::quick()));
  EXPECT_NO_THROW(validate_policy(MeasurePolicy::bench()));
  auto refused = [](MeasurePolicy p, const std::string& what) {
    try {
      validate_policy(p);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const ValidationError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  MeasurePolicy p = MeasurePolicy::bench();
  p.min_samples = 0;
  refused(p, "minimum samples");
  p = MeasurePolicy::bench();
  p.max_samples = 5;
  refused(p, "maximum samples");
  p = MeasurePolicy::bench();
  p.max_seconds = 0;
  refused(p, "time limit");
  p = MeasurePolicy::bench();
  p.min_seconds = std::nan("");
  refused(p, "minimum time");
  p = MeasurePolicy::bench();
  p.max_noise = 1.5;
  refused(p, "noise target");
}

namespace {
// A deterministic sample source for the loop: launch i takes times[i % size] ms and counts the calls.
struct Counter {
  int untimed = 0, timed = 0, flushes = 0, clocks = 0;
  std::vector<double> times = {2.0};
  MeasureHooks hooks() {
    MeasureHooks h;
    h.untimed = [this] { ++untimed; };
    h.timed = [this] { return times[size_t(timed++) % times.size()]; };
    h.flush = [this] { ++flushes; };
    h.clock = [this] {
      return ClockReading{++clocks % 2 ? 1980.0 : 1755.0, clocks == 3 ? "sw_thermal" : ""};
    };
    return h;
  }
};
}  // namespace

TEST(MeasureLoop, WarmsUpThenSamplesUntilThePolicyIsMet) {
  Counter c;
  const Measurement m = measure(MeasurePolicy::quick(), c.hooks(), CancelToken(), 1);
  EXPECT_EQ(c.untimed, 1);  // 2 warm-ups, the verification launch counted as the first
  EXPECT_EQ(m.warmups, 2);
  EXPECT_EQ(c.timed, 10);
  EXPECT_EQ(m.samples_ms.size(), 10u);
  EXPECT_EQ(m.stop, StopReason::Converged);
  EXPECT_EQ(m.stats.median, 2.0);
  EXPECT_EQ(c.flushes, 0);  // warm L2 unless asked
  EXPECT_EQ(m.clocks.size(), 10u);
}

TEST(MeasureLoop, ColdL2FlushesBeforeEverySampleAndNoiseKeepsItSampling) {
  Counter c;
  c.times = {1.0, 1.2};  // ~9 % noise: never under 0.5 %
  MeasurePolicy p = MeasurePolicy::bench();
  p.cold_l2 = true;
  p.max_samples = 40;
  p.warmup_seconds = 0;
  const Measurement m = measure(p, c.hooks(), CancelToken());
  EXPECT_EQ(m.stop, StopReason::SampleLimit);
  EXPECT_EQ(c.timed, 40);
  EXPECT_EQ(c.flushes, 40);
  EXPECT_EQ(c.untimed, 3);
  EXPECT_NEAR(m.noise, 0.1 / 1.1 * std::sqrt(40.0 / 39.0), 1e-9);
}

TEST(MeasureLoop, ACancelledTokenStopsBeforeTheNextLaunch) {
  Counter c;
  CancelToken t;
  t.cancel();
  EXPECT_THROW(measure(MeasurePolicy::quick(), c.hooks(), t), Cancelled);
  EXPECT_EQ(c.timed + c.untimed, 0);
}

TEST(Clocks, MedianMinMaxAndEveryThrottleReasonOnce) {
  std::vector<ClockReading> r = {
      {1980, ""}, {1755, "sw_power_cap"}, {1980, "sw_power_cap,sw_thermal"}, {0, ""}};
  const ClockRecord c = summarize_clocks(r, 1980);
  EXPECT_TRUE(c.available);
  EXPECT_EQ(c.min_mhz, 1755);
  EXPECT_EQ(c.max_mhz, 1980);
  EXPECT_EQ(c.median_mhz, 1980);  // the unknown (0) reading is left out
  EXPECT_TRUE(c.throttled);
  EXPECT_EQ(c.throttle_reasons, "sw_power_cap,sw_thermal");
  // No reason, but the clock fell under 90 % of the maximum: throttled too.
  EXPECT_TRUE(summarize_clocks({{1700, ""}}, 1980).throttled);
  EXPECT_FALSE(summarize_clocks({{1900, ""}}, 1980).throttled);
  EXPECT_FALSE(summarize_clocks({}, 1980).available);
}

// Drawing while timing: measure() holds the gate for its whole warm-up and sampling, a window asked to pace
// itself then draws at most every kTimingFrameInterval, and the measurement counts the frames drawn
// meanwhile.
TEST(TimingGate, HeldWhileMeasuringPacesFramesAndCountsThem) {
  TimingGate& g = TimingGate::instance();
  ASSERT_FALSE(g.timing());
  EXPECT_EQ(g.pace(1000.0), 0.0);  // not timing: draw whenever
  g.frame_drawn(1000.0);
  EXPECT_EQ(g.pace(1000.01), 0.0);
  bool held_during_samples = true;
  double t = 2000.0;  // a fake clock: each sample, a window tries to draw 10 ms after its last frame
  int drawn = 0, refused = 0;
  MeasureHooks h;
  h.untimed = [&] { held_during_samples &= g.timing(); };
  h.timed = [&] {
    held_during_samples &= g.timing();
    for (int i = 0; i < 10; ++i) {
      t += 0.01;
      if (g.pace(t) == 0) {
        g.frame_drawn(t);
        ++drawn;
      } else {
        ++refused;
        EXPECT_LE(g.pace(t), TimingGate::kTimingFrameInterval);
      }
    }
    return 1.0;
  };
  const Measurement m = measure(MeasurePolicy::fixed(20, 2), h, CancelToken());
  EXPECT_TRUE(held_during_samples);
  EXPECT_FALSE(g.timing());  // released when measure() returns
  // 200 attempts 10 ms apart over 2 s: a frame every 250 ms (the first at once, the last frame was long ago).
  EXPECT_EQ(drawn, 8);
  EXPECT_EQ(refused, 192);
  EXPECT_EQ(m.frames_drawn, 8);
  {
    TimingGate::Hold a, b;  // holds nest (the sweep and a worker's measurement at once)
    EXPECT_TRUE(g.timing());
  }
  EXPECT_FALSE(g.timing());
}

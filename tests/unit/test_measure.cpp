// The measuring policy: its stop rule, the named policies, the sampling loop every backend runs, and the
// clock summary recorded with every point.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/engine/backend.hpp"
#include "core/engine/measure.hpp"
#include "core/engine/problem.hpp"

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

// Short launches are timed in batches under the bench policy: a sample of b launches counts b launches of
// kernel time towards the minimum, and the batch holds at least min_sample_ms of launches (never with a cold
// L2, which would need a flush before every launch).
TEST(StopRule, ABatchedSampleCountsEveryLaunchOfKernelTime) {
  const MeasurePolicy p = MeasurePolicy::bench();
  EXPECT_EQ(p.min_sample_ms, 1.0);
  EXPECT_EQ(p.launches_per_sample(0.030), 34);  // 25-70 us launches: 15-40 of them a sample
  EXPECT_EQ(p.launches_per_sample(1.0), 1);
  EXPECT_EQ(p.launches_per_sample(20.0), 1);
  EXPECT_EQ(p.launches_per_sample(1e-6), MeasurePolicy::kMaxLaunchesPerSample);
  EXPECT_EQ(p.launches_per_sample(0), 1);  // nothing measured: one
  MeasurePolicy cold = p;
  cold.cold_l2 = true;
  EXPECT_EQ(cold.launches_per_sample(0.030), 1);
  EXPECT_EQ(MeasurePolicy::quick().launches_per_sample(0.030), 1);
  EXPECT_EQ(MeasurePolicy::cpu_bench().launches_per_sample(0.030), 1);
  // 10 samples of 30 us: 0.3 ms of kernel time alone, 0.5 s as samples of 1700 launches.
  const std::vector<double> s(10, 0.030);
  EXPECT_EQ(should_stop(s, 0.6, p), StopReason::Continue);
  EXPECT_EQ(should_stop(s, 0.6, p, 1700), StopReason::Converged);
  EXPECT_NE(p.describe().find("samples of launches back to back, >= 1 ms each"), std::string::npos);
  EXPECT_EQ(cold.describe().find("back to back"), std::string::npos);
  MeasurePolicy bad = p;
  bad.min_sample_ms = -1;
  EXPECT_THROW(validate_policy(bad), ValidationError);
  bad.min_sample_ms = NAN;
  EXPECT_THROW(validate_policy(bad), ValidationError);
}

TEST(StopRule, TheTimeLimitWaitsForTheMinimumUnlessThatTakesForever) {
  const MeasurePolicy p = MeasurePolicy::bench();
  std::vector<double> slow(3, 4000.0);  // 4 s per launch
  EXPECT_EQ(should_stop(slow, 12.0, p), StopReason::Continue);
  EXPECT_EQ(should_stop(slow, 31.0, p), StopReason::TimeLimit);
  EXPECT_EQ(should_stop({}, 100.0, p), StopReason::Continue);  // never stops without a sample
}

TEST(StopRule, QuickTakesExactlyTenSamplesWithoutANoiseRuleAndNeverCallsThatConverged) {
  const MeasurePolicy q = MeasurePolicy::quick();
  std::vector<double> noisy;
  for (int i = 0; i < 9; ++i) noisy.push_back(i % 2 ? 1.0 : 5.0);  // 60 % noise
  EXPECT_EQ(should_stop(noisy, 0.01, q), StopReason::Continue);
  noisy.push_back(1.0);
  // Without a noise target nothing converged: the policy took its count.
  EXPECT_EQ(should_stop(noisy, 0.01, q), StopReason::CountReached);
  // A launch slower than the cap: stops at 3 x 2 s with what it has.
  EXPECT_EQ(should_stop({2500, 2500}, 5.0, q), StopReason::Continue);
  EXPECT_EQ(should_stop({2500, 2500, 2500}, 7.5, q), StopReason::TimeLimit);
  const MeasurePolicy f = MeasurePolicy::fixed(3);
  EXPECT_EQ(should_stop({1, 1}, 0, f), StopReason::Continue);
  EXPECT_EQ(should_stop({1, 1, 9}, 0, f), StopReason::CountReached);
  // Even perfectly steady samples: converged is the noise target met, and these policies have none.
  EXPECT_EQ(should_stop({1, 1, 1}, 0, f), StopReason::CountReached);
}

// What the command line prints: converged only for a met noise target, else why sampling stopped.
TEST(StopRule, TheReasonInWordsSaysWhySamplingStopped) {
  // The CPU backend's 3 samples with an IQR of 57 % of the median used to read "converged".
  EXPECT_EQ(describe_stop(to_string(StopReason::CountReached), 0.45, 3),
            "3 samples, as many as the policy takes (it has no noise target)");
  EXPECT_EQ(describe_stop("converged", 0.0021, 40), "converged: noise 0.21 %, under the policy's target");
  EXPECT_EQ(describe_stop("time limit", 0.57, 12), "stopped at the time limit after 12 samples, noise 57 %");
  EXPECT_EQ(describe_stop("time limit", 0, 1), "stopped at the time limit after 1 sample");
  EXPECT_EQ(describe_stop("sample limit", 0.1, 40),
            "stopped at the sample limit (40 samples) with noise 10 %");
  EXPECT_EQ(describe_stop("not timed", 0, 0), "not timed");
  EXPECT_STREQ(to_string(StopReason::CountReached), "samples taken");
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
  EXPECT_EQ(m.stop, StopReason::CountReached);
  EXPECT_EQ(m.stats.median, 2.0);
  EXPECT_EQ(c.flushes, 0);  // warm L2 unless asked
  EXPECT_EQ(m.clocks.size(), 10u);
}

TEST(MeasureLoop, TheBatchTheBackendTimesIsRecordedAndCountsTowardsTheMinimumTime) {
  Counter c;
  MeasureHooks h = c.hooks();
  h.launches_per_sample = 250;  // what `timed` returns is the mean of 250 launches of 2 ms
  MeasurePolicy p = MeasurePolicy::bench();
  p.warmup_seconds = 0;
  const Measurement m = measure(p, h, CancelToken(), 1);
  EXPECT_EQ(m.launches_per_sample, 250);
  EXPECT_EQ(m.samples_ms.size(), 10u);  // 10 x 250 x 2 ms = 5 s of kernel time: the minimum 10 samples
  EXPECT_EQ(m.stop, StopReason::Converged);
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

// [SECTION] The interleaved reference: cuBLAS timed sample by sample between the kernel's samples.
namespace {
// Every call the loop makes, in order: U untimed kernel, K timed kernel, c its clock, R timed reference,
// r its clock, F flush. Launch i of the kernel takes kernel_ms[i % size], of the reference ref_ms[i % size].
struct Log {
  std::string calls;
  std::vector<double> kernel_ms = {2.0}, ref_ms = {3.0};
  int kernel_timed = 0, ref_timed = 0, kernel_clocks = 0, ref_clocks = 0;
  MeasureHooks hooks(bool with_reference = true) {
    MeasureHooks h;
    h.untimed = [this] { calls += 'U'; };
    h.timed = [this] {
      calls += 'K';
      return kernel_ms[size_t(kernel_timed++) % kernel_ms.size()];
    };
    h.flush = [this] { calls += 'F'; };
    h.clock = [this] {
      calls += 'c';
      return ClockReading{++kernel_clocks % 2 ? 1980.0 : 1965.0, ""};
    };
    if (with_reference) {
      h.reference_timed = [this] {
        calls += 'R';
        return ref_ms[size_t(ref_timed++) % ref_ms.size()];
      };
      h.reference_clock = [this] {
        calls += 'r';
        ++ref_clocks;
        return ClockReading{ref_clocks == 2 ? 1600.0 : 1755.0, ref_clocks == 2 ? "sw_power_cap" : ""};
      };
    }
    return h;
  }
};
std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}
}  // namespace

TEST(Interleaved, KernelAndReferenceAlternateSampleBySampleAndBothAreWarmed) {
  Log l;
  // 3 warm-ups with the verification launch counted as the kernel's first: the reference catches up with
  // that one, then follows each of the kernel's 2 warm-ups; then K R K R ... with each one's clock.
  const Measurement m = measure(MeasurePolicy::fixed(5, 3), l.hooks(), CancelToken(), 1);
  EXPECT_EQ(l.calls, "R" + repeat("UR", 2) + repeat("KcRr", 5));
  EXPECT_EQ(m.warmups, 3);
  EXPECT_EQ(m.reference_warmups, 3);
  EXPECT_EQ(m.samples_ms.size(), 5u);
  EXPECT_EQ(m.reference_samples_ms.size(), 5u);
  EXPECT_EQ(m.clocks.size(), 5u);
  EXPECT_EQ(m.reference_clocks.size(), 5u);
  EXPECT_EQ(m.reference_samples_ms, std::vector<double>(5, 3.0));
  EXPECT_EQ(m.samples_ms, std::vector<double>(5, 2.0));
}

TEST(Interleaved, AColdL2IsFlushedBeforeTheReferenceSampleToo) {
  Log l;
  MeasurePolicy p = MeasurePolicy::fixed(3);
  p.cold_l2 = true;
  measure(p, l.hooks(), CancelToken());
  EXPECT_EQ(l.calls, repeat("FKcFRr", 3));
}

TEST(Interleaved, WithoutReferenceHooksNothingChanges) {
  Log l;
  const Measurement m = measure(MeasurePolicy::fixed(4, 2), l.hooks(false), CancelToken(), 1);
  EXPECT_EQ(l.calls, "U" + repeat("Kc", 4));
  EXPECT_TRUE(m.reference_samples_ms.empty());
  EXPECT_TRUE(m.reference_clocks.empty());
  EXPECT_EQ(m.reference_warmups, 0);
  EXPECT_EQ(m.reference_stats.count, 0);
  RunResult r;
  r.reference_ms = 4.5;  // cuBLAS timed on its own (profile)
  record_measurement(r, m, MeasurePolicy::fixed(4, 2), 1980, "cublas");
  EXPECT_FALSE(r.cublas_interleaved());
  EXPECT_TRUE(r.interleaved.kernel.empty());
  EXPECT_EQ(r.cublas_ms(), 4.5);
}

TEST(Interleaved, TheStopRuleReadsTheKernelsSamplesOnly) {
  // A steady kernel beside a noisy reference: converged at the minimum, the reference's noise ignored.
  Log steady;
  steady.ref_ms = {1.0, 1.5};
  MeasurePolicy p = MeasurePolicy::bench();
  p.warmup_seconds = 0;
  p.min_seconds = 0.001;
  Measurement m = measure(p, steady.hooks(), CancelToken());
  EXPECT_EQ(m.stop, StopReason::Converged);
  EXPECT_EQ(m.samples_ms.size(), 10u);
  EXPECT_EQ(m.reference_samples_ms.size(), 10u);
  EXPECT_GT(m.reference_noise, 0.1);
  // A noisy kernel beside a steady reference: samples until the sample limit, one reference sample each.
  Log noisy;
  noisy.kernel_ms = {1.0, 1.5};
  p.max_samples = 40;
  m = measure(p, noisy.hooks(), CancelToken());
  EXPECT_EQ(m.stop, StopReason::SampleLimit);
  EXPECT_EQ(m.samples_ms.size(), 40u);
  EXPECT_EQ(m.reference_samples_ms.size(), 40u);
  EXPECT_EQ(m.reference_noise, 0.0);
  // The minimum time counts the kernel's time alone: 1 ms kernels beside 100 ms references need 50 samples
  // for 50 ms (the references' time would have met it after 1).
  Log fast;
  fast.kernel_ms = {1.0};
  fast.ref_ms = {100.0};
  p = MeasurePolicy::bench();
  p.warmup_seconds = 0;
  p.min_seconds = 0.05;
  m = measure(p, fast.hooks(), CancelToken());
  EXPECT_EQ(m.stop, StopReason::Converged);
  EXPECT_EQ(m.samples_ms.size(), 50u);
  EXPECT_EQ(fast.ref_timed, 3 + 50);  // 3 warm-ups and one after each sample
}

TEST(Interleaved, TheReferencesStatsAndClocksAreSummarisedOnTheirOwn) {
  Log l;
  l.kernel_ms = {2.0};
  l.ref_ms = {3.0, 4.0, 5.0, 6.0};
  const MeasurePolicy p = MeasurePolicy::fixed(4);
  const Measurement m = measure(p, l.hooks(), CancelToken());
  EXPECT_EQ(m.reference_stats.count, 4);
  EXPECT_DOUBLE_EQ(m.reference_stats.median, 4.5);
  EXPECT_DOUBLE_EQ(m.reference_stats.min, 3.0);
  EXPECT_DOUBLE_EQ(m.reference_stats.max, 6.0);
  EXPECT_GT(m.reference_noise, 0.0);
  EXPECT_DOUBLE_EQ(m.stats.median, 2.0);
  RunResult r;
  record_measurement(r, m, p, 1980, "cublas_tf32");
  ASSERT_TRUE(r.cublas_interleaved());
  EXPECT_EQ(r.interleaved.kernel, "cublas_tf32");
  EXPECT_EQ(r.interleaved.samples_ms, (std::vector<double>{3.0, 4.0, 5.0, 6.0}));
  EXPECT_DOUBLE_EQ(r.interleaved.stats.median, 4.5);
  EXPECT_DOUBLE_EQ(r.cublas_ms(), 4.5);
  // Each side's clock from its own readings: the kernel 1980/1965, the reference 1755 and once 1600.
  EXPECT_DOUBLE_EQ(r.clock.min_mhz, 1965);
  EXPECT_DOUBLE_EQ(r.clock.max_mhz, 1980);
  EXPECT_FALSE(r.clock.throttled);
  EXPECT_TRUE(r.interleaved.clock.available);
  EXPECT_DOUBLE_EQ(r.interleaved.clock.min_mhz, 1600);
  EXPECT_DOUBLE_EQ(r.interleaved.clock.median_mhz, 1755);
  EXPECT_DOUBLE_EQ(r.interleaved.clock.max_mhz, 1755);
  EXPECT_TRUE(r.interleaved.clock.throttled);
  EXPECT_EQ(r.interleaved.clock.throttle_reasons, "sw_power_cap");
  EXPECT_TRUE(clocks_differ(r.clock, r.interleaved.clock));
}

TEST(Interleaved, ACancelledTokenStopsTheReferenceToo) {
  Log l;
  CancelToken t;
  t.cancel();
  EXPECT_THROW(measure(MeasurePolicy::quick(), l.hooks(), t, 1), Cancelled);
  EXPECT_EQ(l.calls, "");
}

TEST(Interleaved, OnlyTheBenchPolicyAsksForIt) {
  EXPECT_TRUE(MeasurePolicy::bench().interleave_reference);
  EXPECT_FALSE(MeasurePolicy::quick().interleave_reference);
  EXPECT_FALSE(MeasurePolicy::fixed(5).interleave_reference);
}

TEST(Clocks, TheyDifferAboveOnePercentOfTheReferencesMedianEitherWay) {
  auto at = [](double mhz) { return summarize_clocks({{mhz, ""}}, 1980); };
  const ClockRecord ref = at(1000);
  EXPECT_FALSE(clocks_differ(at(1000), ref));
  EXPECT_FALSE(clocks_differ(at(1010), ref));  // exactly 1 % above: not flagged
  EXPECT_TRUE(clocks_differ(at(1010.5), ref));
  EXPECT_FALSE(clocks_differ(at(990), ref));  // exactly 1 % below: not flagged
  EXPECT_TRUE(clocks_differ(at(989.5), ref));
  // The H100's numbers: 1 % of 1980 MHz is 19.8 MHz.
  EXPECT_FALSE(clocks_differ(at(1961), at(1980)));
  EXPECT_TRUE(clocks_differ(at(1960), at(1980)));
  EXPECT_TRUE(clocks_differ(at(1980), at(1755)));
  // Without a clock on either side there is nothing to compare.
  EXPECT_FALSE(clocks_differ(at(1980), ClockRecord{}));
  EXPECT_FALSE(clocks_differ(ClockRecord{}, at(1755)));
}

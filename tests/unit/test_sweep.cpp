// Sweeps: the sizes syntax and its refusals, expansion into points, the runner a frame loop polls (on the CPU
// backend: progress advances, cancel keeps the finished points), and the wave-quantisation marks.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "core/engine/cpu_backend.hpp"
#include "forwarding_backend.hpp"
#include "kernels/engine/registry.hpp"
#include "core/engine/sweep.hpp"

using namespace ts;

TEST(SweepSizes, LinearGeometricAndListsSortedWithoutDuplicates) {
  const auto lin = parse_sizes("256:8192:256");
  ASSERT_EQ(lin.size(), 32u);
  EXPECT_EQ(lin.front(), 256);
  EXPECT_EQ(lin.back(), 8192);
  EXPECT_EQ(lin[1], 512);
  EXPECT_EQ(parse_sizes("256:8192:x2"), (std::vector<int64_t>{256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(parse_sizes("100:1000:x3"), (std::vector<int64_t>{100, 300, 900}));
  EXPECT_EQ(parse_sizes("4099, 1024,512:1024:512"), (std::vector<int64_t>{512, 1024, 4099}));
  EXPECT_EQ(parse_sizes("1000:1010:7"), (std::vector<int64_t>{1000, 1007}));  // TO need not be hit
  EXPECT_EQ(parse_sizes("64:64:1"), (std::vector<int64_t>{64}));
}

TEST(SweepSizes, BadRangesAreRefusedNamingTheProblem) {
  struct Case {
    std::string text, message;
  };
  const std::vector<Case> cases = {
      {"", "sizes are empty"},
      {"8192:256:256", "FROM (8192) is greater than TO (256)"},
      {"256:8192:0", "STEP = 0 must be at least 1"},
      {"256:8192:-256", "STEP = -256 is negative"},
      {"-256:8192:256", "FROM = -256 is negative"},
      {"abc", "size = 'abc' is not a whole number"},
      {"256:8192:abc", "STEP = 'abc' is not a whole number"},
      {"256:8192", "three parts"},
      {"256:8192:256:1", "three parts"},
      {"256:8192:x1", "factor x1 must be at least x2"},
      {"256:8192:x", "factor is empty"},
      {"1,,2", "an empty entry"},
      {"1:2000:1", "2000 sizes, more than the limit of 1024"},
      {"0", "size = 0 must be at least 1"},
      {"3000000000", "above the limit"},
  };
  for (const auto& c : cases) {
    try {
      parse_sizes(c.text);
      ADD_FAILURE() << "accepted '" << c.text << "'";
    } catch (const ValidationError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.text << ": " << e.what();
    }
  }
}

TEST(SweepSpec, ShapesFollowTheSizeAndPointsAreSizeMajor) {
  SweepSpec s;
  s.sizes = {256, 512};
  s.configs = {{"tiled", 8}, {"tiled", 32}};
  auto pts = expand_sweep(s);
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_EQ(pts[0].n, 256);
  EXPECT_EQ(pts[1].n, 256);  // every configuration at a size before the next size
  EXPECT_EQ(pts[1].tile, 32);
  EXPECT_EQ(pts[2].m, 512);
  EXPECT_EQ(pts[2].k, 512);
  s.shape = SweepShape::FixedM;
  s.fixed = 1024;
  pts = expand_sweep(s);
  EXPECT_EQ(pts[2].m, 1024);
  EXPECT_EQ(pts[2].n, 512);
  EXPECT_EQ(pts[2].k, 512);
  EXPECT_EQ(s.axis_label(), "N = K (M = 1024)");
  s.shape = SweepShape::FixedK;
  pts = expand_sweep(s);
  EXPECT_EQ(pts[2].m, 512);
  EXPECT_EQ(pts[2].n, 512);
  EXPECT_EQ(pts[2].k, 1024);
  EXPECT_EQ(s.size_of(pts[2]), 512);
  s.shape = SweepShape::Square;
  s.ragged = 3;  // every size also + 3: a partial tile at every size
  pts = expand_sweep(s);
  ASSERT_EQ(pts.size(), 8u);
  EXPECT_EQ(s.all_sizes(), (std::vector<int64_t>{256, 259, 512, 515}));
  EXPECT_NE(s.describe().find("256..515 (4 sizes, each also + 3), 2 configurations"), std::string::npos)
      << s.describe();
}

TEST(SweepSpec, TooManyPointsOrMissingPartsAreRefused) {
  SweepSpec s;
  s.sizes = parse_sizes("1:1024:1");
  s.configs = {{"tiled", 8}, {"tiled", 16}, {"tiled", 32}, {"naive", 8}, {"naive", 16}};  // 5120 points
  try {
    expand_sweep(s);
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("more than the limit of 4096"), std::string::npos) << e.what();
  }
  s.sizes = {64};
  s.shape = SweepShape::FixedK;
  EXPECT_THROW(expand_sweep(s), ValidationError);  // K not given
  s.shape = SweepShape::Square;
  s.configs.clear();
  EXPECT_THROW(expand_sweep(s), ValidationError);
}

TEST(SweepRun, RefusesTheWholePlanBeforeMeasuringAnything) {
  CpuBackend b(builtin_kernel_infos());
  SweepSpec s;
  s.sizes = {16, 2049};  // 2049^3 is above the CPU backend's limit
  s.configs = {{"tiled", 8}};
  int measured = 0;
  try {
    run_sweep(b, expand_sweep(s), MeasurePolicy::fixed(1), CancelToken(),
              [&](const SweepPointResult&, int, int) { ++measured; });
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep point 2 of 2 (tiled T=8 2049x2049x2049)"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(measured, 0);
}

namespace {

// The CPU backend, except that a run at N = `hold_n` waits before it measures until the test lets it go or
// cancels it: that point stays in flight for as long as the test looks at the runner, whatever the machine's
// speed. A run held for a minute gives up (and says so): a runner whose progress() waited for the measurement
// then fails the test instead of hanging it.
class HoldingBackend final : public test::ForwardingBackend {
 public:
  explicit HoldingBackend(int64_t hold_n)
      : ForwardingBackend(std::make_shared<CpuBackend>(builtin_kernel_infos())), m_hold_n(hold_n) {}
  RunResult run(const RunRequest& req, const CancelToken& cancel) override {
    if (req.spec.n == m_hold_n) {
      std::unique_lock<std::mutex> lock(m_mu);
      ++m_held;
      m_cv.notify_all();
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!m_released && !cancel.cancelled()) {
        if (std::chrono::steady_clock::now() > give_up) {
          m_gave_up = true;
          break;
        }
        m_cv.wait_for(lock, std::chrono::milliseconds(2));
      }
    }
    return ForwardingBackend::run(req, cancel);
  }
  int held() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_held;
  }
  void release() {
    std::lock_guard<std::mutex> lock(m_mu);
    m_released = true;
    m_cv.notify_all();
  }
  bool gave_up() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_gave_up;
  }

 private:
  int64_t m_hold_n;
  std::mutex m_mu;
  std::condition_variable m_cv;
  int m_held = 0;
  bool m_released = false, m_gave_up = false;
};

}  // namespace

TEST(SweepRunner, ProgressAdvancesWithoutBlockingAndCancelKeepsFinishedPoints) {
  auto backend = std::make_shared<HoldingBackend>(512);
  SweepRunner runner(backend);
  SweepSpec s;
  s.sizes = parse_sizes("64:192:64,512");  // the 512 points are held in flight
  s.configs = {{"tiled", 16}, {"naive", 16}};
  MeasurePolicy p = MeasurePolicy::fixed(20);
  runner.start(expand_sweep(s), p);
  EXPECT_THROW(runner.start(expand_sweep(s), p), ValidationError);  // one sweep at a time
  // Poll as a frame loop would, until the first 512 point is in flight (the wait only bounds the test).
  SweepProgress pr;
  std::vector<SweepPointResult> got;
  std::set<int> done_seen;
  const auto t_end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < t_end) {
    pr = runner.progress();
    for (auto& f : runner.take_finished()) got.push_back(std::move(f));
    done_seen.insert(pr.done);
    if (backend->held() > 0 && pr.in_flight) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(backend->held(), 1);
  // The engine is inside run() and stays there: progress() and take_finished() answered meanwhile (a runner
  // that made them wait for the measurement would have the held run give up).
  pr = runner.progress();
  for (auto& f : runner.take_finished()) got.push_back(std::move(f));
  EXPECT_FALSE(backend->gave_up());
  EXPECT_EQ(pr.state, SweepProgress::State::Running);
  EXPECT_EQ(pr.done, 6);
  EXPECT_EQ(pr.total, 8);
  ASSERT_TRUE(pr.in_flight);
  EXPECT_EQ(pr.in_flight->n, 512);
  EXPECT_EQ(pr.in_flight->kernel, "tiled");
  EXPECT_EQ(got.size(), 6u);        // every finished point handed over while the next one is measured
  EXPECT_GT(done_seen.size(), 1u);  // seen advancing
  EXPECT_GE(pr.remaining_s, 0.0);   // an estimate from the points measured
  // Cancel while the point is in flight: it is dropped, the 6 finished are kept.
  runner.cancel();
  runner.wait();
  EXPECT_FALSE(backend->gave_up());
  for (auto& f : runner.take_finished()) got.push_back(std::move(f));
  pr = runner.progress();
  EXPECT_EQ(pr.state, SweepProgress::State::Cancelled);
  EXPECT_EQ(pr.done, 6);
  EXPECT_FALSE(pr.in_flight);
  EXPECT_EQ(pr.remaining_s, 0.0);
  ASSERT_EQ(int(got.size()), pr.done);  // every finished point is kept, in order
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].index, i);
    ASSERT_TRUE(got[i].result) << got[i].error;
    EXPECT_EQ(got[i].result->samples_ms.size(), 20u);
  }
  // A finished runner starts again.
  s.sizes = {32};
  runner.start(expand_sweep(s), p);
  runner.wait();
  EXPECT_EQ(runner.progress().state, SweepProgress::State::Done);
  EXPECT_EQ(runner.take_finished().size(), 2u);
}

// "Split across identical devices": two runners share one plan; each takes the next point no one has taken,
// so while one device is held on a large point the other measures everything else, and every point is
// measured exactly once.
TEST(SweepRunner, RunnersSharingAPlanTakeTheNextPointSoTheFreeOneDoesTheRest) {
  auto held = std::make_shared<HoldingBackend>(512);
  auto free = std::make_shared<CpuBackend>(builtin_kernel_infos());
  std::vector<ProblemSpec> points;
  for (int64_t n : {512, 64, 96, 128, 160}) {
    ProblemSpec p;
    p.kernel = "tiled";
    p.tile = 16;
    p.m = p.n = p.k = n;
    points.push_back(p);
  }
  auto plan = std::make_shared<SharedPlan>(points, 2);
  SweepRunner a(held), b(free);
  const MeasurePolicy policy = MeasurePolicy::fixed(3);
  a.start(plan, policy);
  const auto t_end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (held->held() == 0 && std::chrono::steady_clock::now() < t_end)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(held->held(), 1);  // a took the first point (512) and is held there
  b.start(plan, policy);
  b.wait();
  EXPECT_TRUE(plan->untaken().empty());
  const SweepProgress pa = a.progress(), pb = b.progress();
  EXPECT_EQ(pb.state, SweepProgress::State::Done);
  EXPECT_EQ(pb.done, 4);
  EXPECT_EQ(pb.total, 4);  // its share, once the plan is all taken
  EXPECT_EQ(pa.state, SweepProgress::State::Running);
  ASSERT_TRUE(pa.in_flight);
  EXPECT_EQ(pa.in_flight->n, 512);
  EXPECT_EQ(pa.total, 1);
  const SweepProgress both = combine_progress({pa, pb});
  EXPECT_EQ(both.state, SweepProgress::State::Running);
  EXPECT_EQ(both.done, 4);
  EXPECT_EQ(both.total, 5);
  ASSERT_TRUE(both.in_flight);
  EXPECT_EQ(both.in_flight->n, 512);
  held->release();
  a.wait();
  EXPECT_FALSE(held->gave_up());
  std::vector<SweepPointResult> got = a.take_finished();
  for (auto& f : b.take_finished()) got.push_back(std::move(f));
  ASSERT_EQ(got.size(), 5u);
  std::set<size_t> indices;
  for (const SweepPointResult& r : got) {
    ASSERT_TRUE(r.result) << r.error;
    EXPECT_EQ(r.result->spec.n, points[r.index].n);
    indices.insert(r.index);
  }
  EXPECT_EQ(indices.size(), 5u);  // each point once
  const SweepProgress end = combine_progress({a.progress(), b.progress()});
  EXPECT_EQ(end.state, SweepProgress::State::Done);
  EXPECT_EQ(end.done, 5);
  EXPECT_EQ(end.total, 5);
  EXPECT_EQ(end.remaining_s, 0.0);
}

// Several runners' progress as one sweep: unknown time left while any has measured nothing, else the slowest
// runner's; refused only when all were; cancelled when any was.
TEST(SweepRunner, CombinedProgressOfSeveralRunners) {
  SweepProgress r1, r2;
  r1.state = r2.state = SweepProgress::State::Running;
  r1.done = 3;
  r1.total = 10;
  r1.remaining_s = 40;
  r2.done = 0;
  r2.total = 10;
  r2.remaining_s = -1;
  SweepProgress c = combine_progress({r1, r2});
  EXPECT_TRUE(c.running());
  EXPECT_EQ(c.done, 3);
  EXPECT_EQ(c.total, 20);
  EXPECT_EQ(c.remaining_s, -1);
  r2.remaining_s = 55;
  EXPECT_EQ(combine_progress({r1, r2}).remaining_s, 55);
  EXPECT_EQ(combine_progress({r2, r1}).remaining_s, 55);
  r2.state = SweepProgress::State::Done;
  EXPECT_EQ(combine_progress({r1, r2}).remaining_s, 40);  // a finished runner's estimate no longer counts
  r1.state = SweepProgress::State::Cancelled;
  EXPECT_EQ(combine_progress({r1, r2}).state, SweepProgress::State::Cancelled);
  r1.state = r2.state = SweepProgress::State::Refused;
  r1.error = "no such tile";
  c = combine_progress({r1, r2});
  EXPECT_EQ(c.state, SweepProgress::State::Refused);
  EXPECT_EQ(c.error, "no such tile");
  EXPECT_EQ(combine_progress({}).state, SweepProgress::State::Idle);
}

// The Sweep panel's line after Cancel read "cancelled: the 0 points finished are kept".
TEST(SweepRunner, TheCancelledNoteFitsTheCount) {
  EXPECT_EQ(cancelled_note(0), "cancelled before any point finished: nothing to keep");
  EXPECT_EQ(cancelled_note(1), "cancelled: the 1 point finished is kept");
  EXPECT_EQ(cancelled_note(5), "cancelled: the 5 points finished are kept");
}

// [SECTION] The time left, from the points' work (M N K) and what the finished points took: fixed inputs, no
// clock.
namespace {
ProblemSpec point(const std::string& kernel, int64_t n) {
  ProblemSpec p;
  p.kernel = kernel;
  p.tile = 16;
  p.m = p.n = p.k = n;
  return p;
}
}  // namespace

TEST(SweepTimeLeft, TheWorkStillToComeScaledByTheRateOfTheFinishedPoints) {
  // 100^3 took 1 s: 200^3 is 8 times the work, 400^3 64 times.
  const std::vector<ProblemSpec> pts = {point("tiled", 100), point("tiled", 200), point("tiled", 400)};
  SweepTimeLeft t = estimate_time_left(pts, {{1.0, true}}, false, 0);
  EXPECT_DOUBLE_EQ(t.seconds, 8 + 64);
  EXPECT_FALSE(t.overdue);
  // The point in flight counts with what it has left.
  t = estimate_time_left(pts, {{1.0, true}}, true, 3.0);
  EXPECT_DOUBLE_EQ(t.seconds, (8 - 3) + 64);
  EXPECT_FALSE(t.overdue);
  // Nothing measured yet (or only points without a result): unknown, not 0.
  EXPECT_EQ(estimate_time_left(pts, {}, true, 5.0).seconds, -1);
  EXPECT_EQ(estimate_time_left(pts, {{0.001, false}}, true, 5.0).seconds, -1);
  // A point without a result says nothing about the rate, and is not waited for.
  t = estimate_time_left(pts, {{1.0, true}, {0.001, false}}, false, 0);
  EXPECT_DOUBLE_EQ(t.seconds, 64);
}

TEST(SweepTimeLeft, EachConfigurationAtItsOwnRateAndNoPointQuickerThanItsQuickestFinishedOne) {
  // Size-major: tiled and naive at 100, then both at 200. naive is 4 times slower.
  std::vector<ProblemSpec> pts = {point("tiled", 100), point("naive", 100), point("tiled", 200),
                                  point("naive", 200)};
  EXPECT_DOUBLE_EQ(estimate_time_left(pts, {{1.0, true}, {4.0, true}}, false, 0).seconds, 8 + 32);
  // naive has no finished point yet: scaled like every finished point.
  EXPECT_DOUBLE_EQ(estimate_time_left(pts, {{1.0, true}}, false, 0).seconds, 1 + 8 + 8);
  // A smaller point after a larger one: not quicker than the quickest finished (the policy's fixed costs).
  pts = {point("tiled", 200), point("tiled", 100)};
  EXPECT_DOUBLE_EQ(estimate_time_left(pts, {{8.0, true}}, false, 0).seconds, 8);
}

TEST(SweepTimeLeft, APointInFlightPastItsEstimateIsOverdueNeverZeroSecondsLeft) {
  const std::vector<ProblemSpec> pts = {point("tiled", 100), point("tiled", 200), point("tiled", 400)};
  // 200^3 was expected to take 8 s and has run 20: the rest is at least its rate, 20 s per 8e6.
  SweepTimeLeft t = estimate_time_left(pts, {{1.0, true}}, true, 20.0);
  EXPECT_TRUE(t.overdue);
  EXPECT_DOUBLE_EQ(t.seconds, 20.0 / 8e6 * 64e6);
  // The last point overdue: nothing after it, and the words say so.
  t = estimate_time_left(pts, {{1.0, true}, {8.0, true}}, true, 100.0);
  EXPECT_TRUE(t.overdue);
  SweepProgress p;
  p.state = SweepProgress::State::Running;
  p.done = 2;
  p.total = 3;
  p.remaining_s = t.seconds;
  p.overdue = t.overdue;
  EXPECT_EQ(describe_time_left(p), "the last point is taking longer than expected");
  p.done = 1;
  p.remaining_s = 160;
  EXPECT_EQ(describe_time_left(p),
            "about 2 min 40 s left after the point in flight, which is taking longer than expected");
  p.overdue = false;
  EXPECT_EQ(describe_time_left(p), "about 2 min 40 s left");
  p.remaining_s = 0.4;
  EXPECT_EQ(describe_time_left(p), "less than a second left");
  p.remaining_s = -1;
  EXPECT_EQ(describe_time_left(p), "time left after the first point");
  p.state = SweepProgress::State::Done;
  EXPECT_EQ(describe_time_left(p), "");
}

TEST(SweepRunner, ARefusedPlanSaysWhy) {
  SweepRunner runner(std::make_shared<CpuBackend>(builtin_kernel_infos()));
  SweepSpec s;
  s.sizes = {2049};
  s.configs = {{"tiled", 8}};
  runner.start(expand_sweep(s), MeasurePolicy::fixed(1));
  runner.wait();
  const SweepProgress p = runner.progress();
  EXPECT_EQ(p.state, SweepProgress::State::Refused);
  EXPECT_NE(p.error.find("CPU backend's limit"), std::string::npos) << p.error;
}

TEST(WaveMarks, SizesWhereTheGridNeedsOneMoreWave) {
  EXPECT_EQ(grid_blocks(4096, 4096, 128, 256), 32 * 16);
  EXPECT_EQ(grid_blocks(4097, 4096, 128, 256), 33 * 16);
  SweepSpec s;  // square
  // tiled T=32 on an H100: 2 blocks per SM x 132 SMs = 264 blocks per wave; grid (N/32)^2.
  const auto marks = wave_marks(s, 256, 1024, 32, 32, 2, 132);
  // ceil(N/32)^2 > 264 first at ceil(N/32) = 17 (289 blocks): N = 513; > 528 at 23 (529): N = 705; ...
  ASSERT_GE(marks.size(), 3u);
  EXPECT_EQ(marks[0].size, 513);
  EXPECT_EQ(marks[0].waves, 2);
  EXPECT_EQ(marks[0].grid, 289);
  EXPECT_EQ(marks[1].size, 705);
  EXPECT_EQ(marks[1].waves, 3);
  for (const auto& m : marks) {
    // Just before the mark the grid fitted in one wave less: a whole number of waves, the sawtooth's peak.
    const int64_t before = grid_blocks(m.size - 1, m.size - 1, 32, 32);
    EXPECT_LE(before, (m.waves - 1) * 264);
    EXPECT_GT(m.grid, (m.waves - 1) * 264);
  }
  // M fixed: only N's tiles change the grid.
  s.shape = SweepShape::FixedM;
  s.fixed = 128;
  const auto fm = wave_marks(s, 1, 8192, 128, 128, 1, 132);  // 1 x ceil(N/128) blocks: > 132 at N = 16897
  EXPECT_TRUE(fm.empty());
  EXPECT_TRUE(wave_marks(s, 1, 100, 0, 128, 1, 132).empty());
}

TEST(WaveMarks, SplitKCountsEveryBlockOfATile) {
  SweepSpec s;  // square
  // splitk with 2 slices on an H100: 2 blocks per SM x 132 SMs = 264 per wave; 2 ceil(N/128)^2 blocks.
  const auto marks = wave_marks(s, 128, 3072, 128, 128, 2, 132, 2);
  ASSERT_GE(marks.size(), 3u);
  // 2 x 11^2 = 242 fits, 2 x 12^2 = 288 does not: N = 1409 (12 tiles a side) is the first size of wave 2.
  EXPECT_EQ(marks[0].size, 1409);
  EXPECT_EQ(marks[0].grid, 288);
  EXPECT_EQ(marks[0].waves, 2);
  EXPECT_EQ(marks[1].size, 2049);  // 2 x 17^2 = 578 > 2 x 264
  EXPECT_EQ(marks[1].waves, 3);
  EXPECT_EQ(marks[2].size, 2433);  // 2 x 20^2 = 800 > 3 x 264
  EXPECT_EQ(marks[2].waves, 4);
  // Without the split the grid of tiles crosses its first wave much later: 12^2 = 144 fits in 264, 17^2 not.
  const auto plain = wave_marks(s, 128, 3072, 128, 128, 2, 132);
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain[0].size, 2049);
}

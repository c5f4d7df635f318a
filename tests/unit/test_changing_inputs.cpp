// Changing inputs (MeasurePolicy::changing_inputs, issue 30): a kernel timed on input sets switched between
// samples, outside the timing, and C checked against the reference of those inputs. On the CPU backend a
// test-only kernel that caches its answer (computes C once, returns early later) passes without the option
// and is caught with it; a correct kernel passes with both timings reported and C put back; the switching
// order, the words of the verdict and the policy line are checked on their own.
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/engine/cpu_backend.hpp"
#include "core/engine/engine.hpp"
#include "core/engine/input_gen.hpp"
#include "core/engine/matrix.hpp"
#include "core/engine/measure.hpp"
#include "kernels/engine/registry.hpp"

using namespace ts;

namespace {

// A result cache, as a kernel may hide one: the first launch computes C = A B, every later one returns at
// once, leaving the first answer in C.
std::atomic<int> g_launches{0};
void caching_gemm(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k, int tile,
                  const CancelToken* cancel) {
  (void)tile;
  (void)cancel;
  if (g_launches++ > 0) return;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (int64_t p = 0; p < k; ++p) s += A[i * k + p] * B[p * n + j];
      C[i * n + j] = s;
    }
}

// The built-in registry and the caching kernel, registered here only.
std::vector<KernelInfo> registry_with_cache() {
  std::vector<KernelInfo> r = builtin_kernel_infos();
  KernelInfo k;
  k.id = "caches";
  k.title = "a kernel that caches its answer (test only)";
  k.description = "computes C on its first launch, returns early on later ones";
  k.cpu = &caching_gemm;
  r.push_back(k);
  return r;
}

RunRequest request(const std::string& kernel, int tile, bool changing) {
  RunRequest req;
  req.spec.kernel = kernel;
  req.spec.tile = tile;
  req.spec.m = 40;
  req.spec.n = 36;
  req.spec.k = 28;
  req.policy = MeasurePolicy::fixed(4, 1);
  req.policy->changing_inputs = changing;
  return req;
}

}  // namespace

TEST(ChangingInputs, AKernelThatCachesItsAnswerPassesOnFixedInputsAndIsCaughtOnChangingOnes) {
  CpuBackend b(registry_with_cache());
  g_launches = 0;
  const RunResult fixed = b.run(request("caches", 0, false), CancelToken());
  EXPECT_TRUE(fixed.error.passed) << "without the option the cache goes unseen";
  EXPECT_EQ(fixed.changing.sets, 0);
  EXPECT_EQ(fixed.stats.count, 4);

  g_launches = 0;
  RunRequest req = request("caches", 0, true);
  req.keep_store = true;
  const RunResult r = b.run(req, CancelToken());
  EXPECT_FALSE(r.error.passed);
  EXPECT_EQ(r.error.bad_elements, 40 * 36);
  EXPECT_FALSE(r.changing.passed);
  EXPECT_EQ(r.changing.sets, MeasurePolicy::kChangingInputSets);
  EXPECT_EQ(
      r.changing.verdict.rfind("C did not change when A and B did: the kernel returned an earlier answer", 0),
      0u)
      << r.changing.verdict;
  EXPECT_NE(r.note.find("C did not change when A and B did"), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("The heatmaps show the run's own inputs, on which it passed"), std::string::npos)
      << r.note;
  // Both timings: the fixed inputs' and the changing ones'.
  EXPECT_EQ(r.stats.count, 4);
  EXPECT_EQ(r.changing.stats.count, 4);
  EXPECT_EQ(r.changing.samples_ms.size(), 4u);
  EXPECT_NE(r.policy.find("changing inputs"), std::string::npos) << r.policy;
  // 1 verification launch, 4 fixed samples (1 warm-up counted by the verification launch), then 1 warm-up
  // and 4 samples on the changing sets, and no more: the check read C as the last sample left it.
  EXPECT_EQ(g_launches.load(), 1 + 4 + 1 + 4);
  // What the window shows is the run's own inputs and its answer for them.
  ASSERT_TRUE(r.store);
  const HostMatrix A = generate_input(InputKind::Random, 1, 0, 40, 28);
  EXPECT_EQ(r.store->copy(MatrixId::A).data, A.data);
  for (float e : r.store->copy(MatrixId::Error).data) EXPECT_LT(std::fabs(e), 1e-3f);
}

TEST(ChangingInputs, ACorrectKernelPassesWithBothTimingsAndCPutBack) {
  CpuBackend b(registry_with_cache());
  RunRequest plain = request("tiled", 8, false);
  plain.keep_output = true;
  const RunResult fixed = b.run(plain, CancelToken());
  RunRequest req = request("tiled", 8, true);
  req.keep_output = true;
  req.keep_store = true;
  const RunResult r = b.run(req, CancelToken());
  EXPECT_TRUE(r.error.passed) << r.note;
  EXPECT_TRUE(r.changing.passed) << r.changing.verdict;
  EXPECT_TRUE(r.changing.measured());
  EXPECT_EQ(r.changing.stop, "samples taken");
  EXPECT_EQ(r.changing.verdict.rfind("C matched the reference of input set", 0), 0u) << r.changing.verdict;
  EXPECT_EQ(r.note, "");
  // C is the run's own answer (bit for bit the fixed run's: the CPU twin is deterministic), and so is the
  // store's error map.
  ASSERT_TRUE(r.c && fixed.c);
  EXPECT_EQ(r.c->data, fixed.c->data);
  ASSERT_TRUE(r.store);
  for (float e : r.store->copy(MatrixId::Error).data) EXPECT_LT(std::fabs(e), 1e-3f);
}

// Every launch of the measurement on the next set, chosen before it and outside its timing; the last set is
// reported. fixed(5, 2): 2 warm-ups, 5 samples on sets 1 2 0 1 2 0 1.
TEST(ChangingInputs, EachLaunchReadsTheNextSetChosenBeforeItsTiming) {
  std::vector<std::string> events;
  MeasureHooks h;
  h.untimed = [&] { events.push_back("untimed"); };
  h.timed = [&] {
    events.push_back("timed");
    return 1.0;
  };
  h.reference_timed = [&] {  // asked for, but never run: the changing measurement interleaves nothing
    events.push_back("reference");
    return 1.0;
  };
  MeasurePolicy p = MeasurePolicy::fixed(5, 2);
  p.interleave_reference = true;
  const Measurement m = measure_changing(
      p, h, [&](int set) { events.push_back("use " + std::to_string(set)); }, 3, CancelToken());
  const std::vector<std::string> want = {"use 1", "untimed", "use 2", "untimed", "use 0", "timed", "use 1",
                                         "timed", "use 2",   "timed", "use 0",   "timed", "use 1", "timed"};
  EXPECT_EQ(events, want);
  EXPECT_EQ(m.last_input_set, 1);
  EXPECT_EQ(m.samples_ms.size(), 5u);
  EXPECT_EQ(changing_input_set(0, 3), 1);
  EXPECT_EQ(changing_input_set(2, 3), 0);
  EXPECT_EQ(changing_input_set(7, 1), 0);
}

// Short launches in batches: every launch of a batch on the next set (timed_each calls before_each before
// each of its launches), the sample the batch's mean; the probes the backend made before count as warm-ups.
// fixed(2, 1) with 3 probes made: no more warm-ups, 2 samples of 3 launches on sets 1 2 0, 1 2 0.
TEST(ChangingInputs, EachLaunchOfABatchReadsTheNextSet) {
  std::vector<std::string> events;
  MeasureHooks h;
  h.untimed = [&] { events.push_back("untimed"); };
  h.timed = [&] {
    ADD_FAILURE() << "a single timed launch in a batched measurement";
    return 1.0;
  };
  h.launches_per_sample = 3;
  h.timed_each = [&](const std::function<void()>& before_each) {
    for (int i = 0; i < 3; ++i) {
      before_each();
      events.push_back("launch");
    }
    return 2.0;
  };
  const Measurement m = measure_changing(
      MeasurePolicy::fixed(2, 1), h, [&](int set) { events.push_back("use " + std::to_string(set)); }, 3,
      CancelToken(), 3);
  const std::vector<std::string> want = {"use 1", "launch", "use 2", "launch", "use 0", "launch",
                                         "use 1", "launch", "use 2", "launch", "use 0", "launch"};
  EXPECT_EQ(events, want);
  EXPECT_EQ(m.warmups, 3);
  EXPECT_EQ(m.launches_per_sample, 3);
  EXPECT_EQ(m.samples_ms, (std::vector<double>{2.0, 2.0}));
  EXPECT_EQ(m.last_input_set, 0);
  // Without timed_each a batch size is ignored: one launch a sample, its set chosen before it.
  h.timed = [&] { return 1.0; };
  h.timed_each = nullptr;
  EXPECT_EQ(measure_changing(
                MeasurePolicy::fixed(2, 0), h, [](int) {}, 3, CancelToken())
                .launches_per_sample,
            1);
}

TEST(ChangingInputs, TheVerdictSaysWhatCShowed) {
  ErrorStats bad;
  bad.passed = false;
  bad.max_abs_err = 12.5;
  bad.tolerance = 0.01;
  bad.bad_elements = 100;
  ErrorStats good;
  good.passed = true;
  EXPECT_EQ(changed_inputs_verdict(good, 2, 3, 0, 100), "");
  const std::string same = changed_inputs_verdict(bad, 2, 3, 100, 100);
  EXPECT_EQ(same.rfind("C did not change when A and B did: the kernel returned an earlier answer (after "
                       "launches on input set 2 of 3",
                       0),
            0u)
      << same;
  EXPECT_NE(same.find("max |C - ref| = 12.5 against a tolerance of 0.01, 100 elements over it"),
            std::string::npos)
      << same;
  const std::string part = changed_inputs_verdict(bad, 1, 3, 40, 100);
  EXPECT_EQ(part.rfind("C is wrong on input set 1 of 3", 0), 0u) << part;
  EXPECT_NE(part.find("40 of 100 elements of C were still its answer for the run's own inputs"),
            std::string::npos)
      << part;
  EXPECT_NE(changed_inputs_verdict(bad, 1, 3, 0, 100).find("does the kernel keep state between launches?"),
            std::string::npos);
  // A kernel that failed on the run's own inputs already: wrong on both, nothing more said.
  EXPECT_EQ(changed_inputs_verdict(bad, 1, 3, 100, 100, false)
                .rfind("C is wrong on input set 1 of 3 as on the run's own inputs (max |C - ref| = 12.5", 0),
            0u);
}

TEST(ChangingInputs, ThePolicySaysSoAndTheOtherSetsDifferFromTheRunsOwnWhateverTheInput) {
  MeasurePolicy p = MeasurePolicy::quick();
  EXPECT_EQ(p.describe().find("changing inputs"), std::string::npos);
  p.changing_inputs = true;
  EXPECT_NE(p.describe().find(", changing inputs"), std::string::npos) << p.describe();
  // Set 1 is random even where the run's own input is the same for every seed (ones, identity, ramp).
  for (InputKind kind : {InputKind::Random, InputKind::Ones, InputKind::Identity, InputKind::Ramp}) {
    const HostMatrix own = generate_input(kind, 7, 0, 8, 8);
    const HostMatrix other = generate_input(InputKind::Random, 7, changed_input_stream(1, 0), 8, 8);
    EXPECT_NE(own.data, other.data) << to_string(kind);
  }
  EXPECT_NE(generate_input(InputKind::Random, 7, changed_input_stream(1, 1), 8, 8).data,
            generate_input(InputKind::Random, 7, changed_input_stream(2, 1), 8, 8).data);
}

#include <chrono>
#include <cmath>
#include <thread>

#include <gtest/gtest.h>

#include "core/engine/cpu_backend.hpp"
#include "core/engine/cpu_gemm.hpp"
#include "core/engine/engine.hpp"
#include "core/plots/heatmap.hpp"
#include "core/engine/matrix.hpp"
#include "core/engine/measure.hpp"
#include "core/engine/problem.hpp"
#include "kernels/engine/registry.hpp"
#include "core/engine/run_queue.hpp"

using namespace ts;

namespace {
RunRequest request(int64_t m, int64_t n, int64_t k, const std::string& kernel = "tiled", int tile = 16) {
  RunRequest r;
  r.spec.m = m;
  r.spec.n = n;
  r.spec.k = k;
  r.spec.kernel = kernel;
  r.spec.tile = tile;
  return r;
}
}  // namespace

TEST(CpuBackend, VerifiesThenTimesUnderTheQuickPolicy) {
  CpuBackend b(builtin_kernel_infos());
  RunRequest req = request(70, 45, 33);
  req.keep_output = true;
  RunResult r = b.run(req, CancelToken());
  EXPECT_EQ(r.backend, "cpu");
  EXPECT_TRUE(r.error.passed);
  EXPECT_GT(r.error.max_abs_err, 0.0);  // float vs float64: not bit-identical, but within tolerance
  EXPECT_LE(r.error.max_abs_err, r.error.tolerance);
  EXPECT_TRUE(r.timed);
  EXPECT_EQ(r.samples_ms.size(), 3u);
  EXPECT_EQ(r.stats.count, 3);
  EXPECT_EQ(r.median_ms(), r.stats.median);
  EXPECT_GT(r.median_ms(), 0.0);
  EXPECT_EQ(r.stop, "samples taken");  // quick has no noise target: nothing converged
  EXPECT_EQ(r.policy.rfind("quick", 0), 0u) << r.policy;
  EXPECT_FALSE(r.clock.available);
  EXPECT_NE(r.clock.note.find("no SM clock"), std::string::npos);
  EXPECT_EQ(r.date.size(), 20u) << r.date;  // 2025-01-31T12:34:56Z
  ASSERT_TRUE(r.c);
  EXPECT_EQ(r.c->rows, 70);
  EXPECT_EQ(r.c->cols, 45);
}

// One pipeline for every backend (engine.hpp): elements of C a kernel never writes are counted and said on
// the CPU as they were only for a person's kernel on the GPU. tiled_mirror on a 64 x 32 C copies its lower
// triangle from the upper one where the mirror lies inside C; rows 32-63 have no mirror and stay as poisoned:
// 1024 of 2048 elements. A kernel that writes everything has no note.
TEST(CpuBackend, ElementsAKernelNeverWritesAreCountedAndSaid) {
  CpuBackend b(builtin_kernel_infos());
  RunRequest req = request(64, 32, 32, "tiled_mirror", 16);
  req.keep_output = true;
  const RunResult r = b.run(req, CancelToken());
  EXPECT_FALSE(r.error.passed);
  EXPECT_EQ(r.note,
            "1024 of 2048 elements of C were never written (they still hold the NaN C was filled "
            "with before the launch)");
  ASSERT_TRUE(r.c);
  EXPECT_TRUE(std::isnan(r.c->at(40, 3)));
  EXPECT_FALSE(std::isnan(r.c->at(3, 40 - 32)));
  EXPECT_EQ(b.run(request(64, 32, 32, "tiled", 16), CancelToken()).note, "");
  EXPECT_EQ(unwritten_note(2048, 2048).rfind("C was left untouched", 0), 0u);
}

// Help > About shows the backend's version line; on the CPU backend it had none although the README promises
// a CUDA line: it says CUDA is not used, and what this build has of it.
TEST(CpuBackend, ItsVersionLineSaysCudaIsNotUsedAndWhatTheBuildHas) {
  std::string note;
  const auto b = make_backend(BackendChoice::Cpu, &note);
  const std::string v = b->version_info();
  EXPECT_EQ(v.rfind("CUDA: not used (CPU backend); built with", 0), 0u) << v;
  EXPECT_NE(v.find(cuda_compiled() ? "toolkit" : "without CUDA"), std::string::npos) << v;
}

TEST(CpuBackend, TheBenchPolicyDoesNotTimeAKernelThatFailsVerification) {
  CpuBackend b(builtin_kernel_infos());
  RunRequest req = request(40, 40, 33, "tiled_floork", 16);  // 16 does not divide 33: wrong on purpose
  req.policy = MeasurePolicy::bench();
  RunResult r = b.run(req, CancelToken());
  EXPECT_FALSE(r.error.passed);
  EXPECT_FALSE(r.timed);
  EXPECT_TRUE(r.samples_ms.empty());
  EXPECT_EQ(r.stop, "not timed");
  // The GUI's quick policy times it anyway (the teaching variants' speed is part of the lesson).
  req.policy.reset();
  r = b.run(req, CancelToken());
  EXPECT_FALSE(r.error.passed);
  EXPECT_TRUE(r.timed);
  EXPECT_EQ(r.samples_ms.size(), 3u);
}

TEST(CpuBackend, RampInputsPassCorrectKernelsAtEveryDepthAndStillCatchADroppedKTerm) {
  // Ramp inputs (A[i][k] = i, B[k][j] = j) have products of one sign, so float32's rounding errors add up
  // instead of cancelling: C[i][j] = K i j is off by far more than random inputs ever are, in every order.
  CpuBackend b(builtin_kernel_infos());
  const double u = std::ldexp(1.0, -24);
  struct Shape {
    int64_t mn, k;
  };
  for (Shape sh : {Shape{256, 1024}, Shape{256, 4096}, Shape{64, 16384}})
    for (const char* kernel : {"naive", "tiled"}) {
      RunRequest req = request(sh.mn, sh.mn, sh.k, kernel, 16);
      req.spec.input = InputKind::Ramp;
      req.policy = MeasurePolicy::fixed(1);
      const RunResult r = b.run(req, CancelToken());
      SCOPED_TRACE(std::string(kernel) + " " + std::to_string(sh.mn) + "^2 x " + std::to_string(sh.k));
      EXPECT_TRUE(r.error.passed) << "max abs err " << r.error.max_abs_err << ", tolerance "
                                  << r.error.tolerance;
      // Over what random signs allow (8 K u max|A| max|B|): the one-sign term is what lets these pass.
      const double c_max = double(sh.k) * double(sh.mn - 1) * double(sh.mn - 1);
      EXPECT_GT(r.error.max_abs_err, 8.0 * double(sh.k) * u * double(sh.mn - 1) * double(sh.mn - 1));
      EXPECT_LE(r.error.max_abs_err, 2.0 * double(sh.k) * u * c_max);  // within the worst-case bound
      EXPECT_DOUBLE_EQ(r.error.tolerance,
                       tolerance_for(sh.k, double(sh.mn - 1), double(sh.mn - 1)).at(c_max));
    }
  // Dropping K mod 16 = 8 of 1000 terms (0.8 % of every C[i][j]) is still caught, nearly everywhere.
  RunRequest req = request(128, 128, 1000, "tiled_floork", 16);
  req.spec.input = InputKind::Ramp;
  req.policy = MeasurePolicy::fixed(1);
  const RunResult r = b.run(req, CancelToken());
  EXPECT_FALSE(r.error.passed);
  EXPECT_GT(r.error.bad_elements, 127 * 127 * 9 / 10);
}

TEST(CpuBackend, AFixedPolicyTakesExactlyThatManySamples) {
  CpuBackend b(builtin_kernel_infos());
  RunRequest req = request(16, 16, 16);
  req.policy = MeasurePolicy::fixed(7);
  RunResult r = b.run(req, CancelToken());
  EXPECT_EQ(r.samples_ms.size(), 7u);
  MeasurePolicy bad = MeasurePolicy::fixed(7);
  bad.max_seconds = -1;
  req.policy = bad;
  EXPECT_THROW(b.run(req, CancelToken()), ValidationError);
}

TEST(CpuBackend, DescribesItselfAndMeasuresMemoryBandwidth) {
  CpuBackend b(builtin_kernel_infos());
  const DeviceInfo d = b.device_info();
  EXPECT_EQ(d.backend, "cpu");
  EXPECT_EQ(d.sm_count, 0);
  EXPECT_FALSE(b.launch_info(request(64, 64, 64).spec));  // no occupancy on the CPU
  const BandwidthResult bw = b.measure_bandwidth(CancelToken());
  EXPECT_GT(bw.gbs, 0.0);
  EXPECT_GE(bw.best_gbs, bw.gbs);
  EXPECT_EQ(bw.bytes, int64_t(256) << 20);
  EXPECT_GE(bw.ms.count, 10);
}

TEST(CpuBackend, GivenInputsSetTheShapeAndMustMatch) {
  CpuBackend b(builtin_kernel_infos());
  RunRequest req = request(1, 1, 1);
  auto A = std::make_shared<HostMatrix>(generate_input(InputKind::Random, 2, 0, 9, 4));
  auto B = std::make_shared<HostMatrix>(generate_input(InputKind::Random, 2, 1, 4, 6));
  req.a = A;
  req.b = B;
  req.keep_output = true;
  RunResult r = b.run(req, CancelToken());
  EXPECT_EQ(r.spec.m, 9);
  EXPECT_EQ(r.spec.k, 4);
  EXPECT_EQ(r.spec.n, 6);
  EXPECT_EQ(r.spec.input, InputKind::File);
  EXPECT_TRUE(r.error.passed);
  req.b = std::make_shared<HostMatrix>(5, 6);
  try {
    b.run(req, CancelToken());
    FAIL() << "mismatched shapes accepted";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("A's columns (4) must equal B's rows (5)"), std::string::npos);
  }
}

TEST(CpuBackend, RefusesWhatItCannotServe) {
  CpuBackend b(builtin_kernel_infos());
  EXPECT_NO_THROW({
    RunRequest most = request(2048, 2048, 2048);
    b.validate(most);
  });
  RunRequest big = request(2048, 2048, 2049);
  try {
    b.validate(big);
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("limit of 8589934592 (2048^3)"), std::string::npos);
  }
  RunRequest cublas = request(64, 64, 64, "cublas", 0);
  EXPECT_THROW(b.validate(cublas), ValidationError);
  RunRequest sym = request(64, 64, 32);
  sym.spec.input = InputKind::Symmetric;
  EXPECT_THROW(b.validate(sym), ValidationError);
}

TEST(MakeBackend, CpuOnRequestAndAutoFallsBackWithAReason) {
  std::string note;
  auto cpu = make_backend(BackendChoice::Cpu, &note);
  EXPECT_EQ(cpu->kind(), "cpu");
  std::string why;
  if (cuda_device_count(&why) == 0) {
    auto autob = make_backend(BackendChoice::Auto, &note);
    EXPECT_EQ(autob->kind(), "cpu");
    EXPECT_NE(note.find("using the CPU backend"), std::string::npos);
    EXPECT_THROW(make_backend(BackendChoice::Cuda, &note), std::runtime_error);
  }
}

TEST(RunQueue, ANewerRequestSupersedesTheOneInFlight) {
  auto backend = std::make_shared<CpuBackend>(builtin_kernel_infos());
  RunQueue q(backend);
  // A run that would not end by itself before the test's timeout: a day of kernel time, a million samples.
  RunRequest endless = request(256, 256, 256);
  MeasurePolicy forever = MeasurePolicy::fixed(10);
  forever.max_samples = 1000000;
  forever.min_seconds = forever.max_seconds = 86400;
  endless.policy = forever;
  const uint64_t slow = q.submit(endless);
  // In flight once it samples (measure() holds the TimingGate then); the wait only bounds the test.
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!TimingGate::instance().timing() && std::chrono::steady_clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(TimingGate::instance().timing()) << "the endless run never started sampling";
  EXPECT_TRUE(q.busy());
  // The newer request cancels it: were it not cancelled, wait() would not return before the test's timeout.
  const uint64_t fast = q.submit(request(32, 32, 32));
  RunOutcome o = q.wait(fast);
  EXPECT_EQ(o.id, fast);
  EXPECT_GT(fast, slow);
  ASSERT_TRUE(o.result) << o.error;
  EXPECT_EQ(o.result->spec.m, 32);
  EXPECT_FALSE(q.busy());
  EXPECT_FALSE(TimingGate::instance().timing());  // the endless run let go of the gate: it stopped
  EXPECT_FALSE(q.poll());                         // nothing else (the cancelled run publishes nothing)
}

// A CPU never holds a kernel's time to 0.5 %: under the GPU's bench policy every CPU point ran to its 10 s
// limit. The CPU backend's own stops at a noise target a quiet CPU reaches, and on a busy one at a time
// budget of a fraction of a second, so that a sweep point never costs more than that.
TEST(CpuBackend, BenchesUnderAPolicyACpuCanMeet) {
  const CpuBackend b(builtin_kernel_infos());
  const MeasurePolicy p = b.bench_policy();
  EXPECT_EQ(p.name, "bench");
  EXPECT_NO_THROW(validate_policy(p));
  EXPECT_EQ(p.min_samples, MeasurePolicy::kCpuBenchMinSamples);
  EXPECT_EQ(p.max_noise, MeasurePolicy::kCpuBenchNoise);
  EXPECT_LE(p.max_seconds, 0.5);
  EXPECT_FALSE(p.time_failed);
  // A quiet CPU: 1.5 % noise: done once the minimum samples and 0.05 s of kernel time are in (the GPU's
  // policy would go on).
  std::vector<double> quiet;
  for (int i = 0; i < 10; ++i) quiet.push_back(i % 2 ? 4.925 : 5.075);
  EXPECT_EQ(should_stop(quiet, 0.06, p), StopReason::Converged);
  quiet.resize(4);
  EXPECT_EQ(should_stop(quiet, 0.02, p), StopReason::Continue);  // 20 ms of kernel time: not yet
  EXPECT_EQ(should_stop(std::vector<double>(10, 5.0), 0.06, MeasurePolicy::bench()), StopReason::Continue);
  // A busy CPU (10 % noise): it stops when its time budget is spent, whether a launch takes 10 us or 50 ms;
  // the GPU's policy would run on to its 10 s limit.
  for (const double ms : {0.01, 50.0}) {
    SCOPED_TRACE(ms);
    std::vector<double> noisy;
    const auto wall = [&] { return double(noisy.size()) * ms * 1e-3; };
    while (wall() < p.max_seconds) noisy.push_back(noisy.size() % 2 ? 0.9 * ms : 1.1 * ms);
    EXPECT_EQ(should_stop(noisy, wall(), p), StopReason::TimeLimit);
    EXPECT_EQ(should_stop(noisy, wall(), MeasurePolicy::bench()), StopReason::Continue);
    noisy.pop_back();
    EXPECT_EQ(should_stop(noisy, wall(), p), StopReason::Continue);
  }
  // A launch of 0.4 s: the minimum samples first, up to 3 x the budget.
  EXPECT_EQ(should_stop({400, 440, 360}, 1.2, p), StopReason::Continue);
  EXPECT_EQ(should_stop({400, 440, 360, 420}, 1.6, p), StopReason::TimeLimit);
  // The GPU backend keeps nvbench's.
  EXPECT_EQ(MeasurePolicy::bench().max_noise, 0.005);
}

TEST(RunQueue, BadInputComesBackAsAnOutcomeNotACrash) {
  RunQueue q(std::make_shared<CpuBackend>(builtin_kernel_infos()));
  RunOutcome o = q.wait(q.submit(request(0, 4, 4)));
  EXPECT_FALSE(o.result);
  EXPECT_TRUE(o.bad_input);
  EXPECT_NE(o.error.find("M = 0"), std::string::npos);
}

// A CPU run's tile of C comes from the kernel's entry (KernelInfo::cpu_blocks_c), not from a list of kernel
// ids in the backend: the classic kernels' twins block C like their CUDA kernels; the others say no tile.
TEST(CpuBackend, TheTileOfCComesFromTheKernelsEntry) {
  const std::vector<KernelInfo> infos = builtin_kernel_infos();
  CpuBackend b(infos);
  int blocked = 0;
  for (const KernelInfo& k : infos) {
    if (!k.cpu || k.is_reference) continue;
    const int tile = k.tiles.empty() ? 0 : k.tiles.front();
    const RunResult r = b.run(request(40, 40, 40, k.id, tile), CancelToken());
    EXPECT_EQ(r.tile_m, k.cpu_blocks_c ? tile : 0) << k.id;
    EXPECT_EQ(r.tile_n, k.cpu_blocks_c ? tile : 0) << k.id;
    blocked += k.cpu_blocks_c;
  }
  EXPECT_EQ(blocked, 4);  // naive, coalesced, tiled, tiled_floork
}

TEST(CpuBackend, KeepsAStoreOfTheMatricesForHeatmaps) {
  CpuBackend b(builtin_kernel_infos());
  RunRequest req = request(37, 29, 23, "tiled", 8);
  req.keep_store = true;
  req.keep_output = true;
  RunResult r = b.run(req, CancelToken());
  ASSERT_TRUE(r.store);
  const MatrixStore& st = *r.store;
  EXPECT_EQ(st.cuda_device(), -1);
  EXPECT_EQ(st.rows(MatrixId::A), 37);
  EXPECT_EQ(st.cols(MatrixId::A), 23);
  EXPECT_EQ(st.rows(MatrixId::B), 23);
  EXPECT_EQ(st.cols(MatrixId::B), 29);
  EXPECT_EQ(st.rows(MatrixId::Error), 37);
  EXPECT_EQ(r.tile_m, 8);
  EXPECT_EQ(r.tile_n, 8);
  // C in the store is the output; the error map is C minus the float64 reference.
  const HostMatrix a = generate_input(InputKind::Random, 1, 0, 37, 23),
                   bm = generate_input(InputKind::Random, 1, 1, 23, 29);
  std::vector<float> ref(37 * 29);
  cpu_gemm_reference(a.data.data(), bm.data.data(), ref.data(), 37, 29, 23, nullptr);
  for (int64_t i = 0; i < 37; i += 5)
    for (int64_t j = 0; j < 29; j += 4) {
      EXPECT_EQ(st.element(MatrixId::A, i, j % 23), a.at(i, j % 23));
      EXPECT_EQ(st.element(MatrixId::C, i, j), r.c->at(i, j));
      EXPECT_EQ(st.element(MatrixId::Error, i, j), r.c->at(i, j) - ref[size_t(i * 29 + j)]);
    }
  EXPECT_THROW(st.element(MatrixId::C, 37, 0), std::out_of_range);
  // Reducing through the store is lod_reduce of the matrix.
  const LodRegion reg{3, 2, 30, 25, 7, 6};
  std::vector<float> got(42), want(42);
  const ValueRange got_range = st.reduce(MatrixId::C, reg, Reduce::AbsMax, got.data());
  const ValueRange want_range = lod_reduce(r.c->data.data(), 29, 37, 29, reg, Reduce::AbsMax, want.data());
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_range.lo, want_range.lo);
  EXPECT_EQ(got_range.hi, want_range.hi);
  float one = 0;
  EXPECT_THROW(st.element_async(MatrixId::C, 0, 0, &one, nullptr), std::logic_error);
  EXPECT_THROW(st.reduce(MatrixId::C, LodRegion{0, 0, 38, 29, 4, 4}, Reduce::Mean, got.data()),
               std::invalid_argument);
  float dummy[4];
  unsigned keys[2];
  EXPECT_THROW(st.reduce_device(MatrixId::A, reg, Reduce::Mean, dummy, nullptr), std::logic_error);
  EXPECT_THROW(st.reduce_device_async(MatrixId::A, reg, Reduce::Mean, DeviceOut{dummy, 0}, keys, nullptr),
               std::logic_error);
}

TEST(CpuBackend, HasNoCublasToInterleaveAndSaysSo) {
  CpuBackend b(builtin_kernel_infos());
  RunRequest req = request(32, 32, 32);
  req.policy = MeasurePolicy::fixed(4);
  req.policy->interleave_reference = true;
  RunResult r = b.run(req, CancelToken());
  EXPECT_EQ(r.samples_ms.size(), 4u);
  EXPECT_FALSE(r.cublas_interleaved());
  EXPECT_TRUE(r.interleaved.samples_ms.empty());
  EXPECT_EQ(r.cublas_ms(), 0.0);
  EXPECT_EQ(r.interleaved_note, "CPU backend: no cuBLAS to time beside the kernel");
  // Not asked for: nothing to explain.
  req.policy->interleave_reference = false;
  EXPECT_TRUE(b.run(req, CancelToken()).interleaved_note.empty());
}

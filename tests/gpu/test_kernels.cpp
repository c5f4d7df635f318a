// Every CUDA kernel x tile x shape against a double-precision CPU reference, through the same engine the
// GUI and the command line use. Without a CUDA device every test reports SKIP.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/io/bench.hpp"
#include "core/engine/gpu_catalog.hpp"
#include "core/plots/heatmap.hpp"
#include "core/engine/matrix_store.hpp"
#include "core/engine/sweep.hpp"
#include "core/engine/schedule.hpp"
#include "core/io/schedule_trace.hpp"
#include "core/engine/cpu_gemm.hpp"
#include "kernels/engine/cuda_raii.cuh"
#include "kernels/engine/launch_gate.cuh"
#include "kernels/engine/registry.hpp"
#include "kernels/rungs/streamk_plan.hpp"
#include "core/engine/verify.hpp"

using namespace ts;

// A PoolBuffer's deleter (noexcept) asks for the release stream: were it to throw, a kernel fault's sticky
// error would end the process ("terminate called ...") before the run could report the fault.
static_assert(noexcept(release_stream()), "release_stream() is called from noexcept deleters");

namespace {

std::shared_ptr<Backend> cuda_or_skip_reason(std::string* why) {
  if (cuda_device_count(why) == 0) return nullptr;
  static std::shared_ptr<Backend> b = make_backend(BackendChoice::Cuda, nullptr);
  return b;
}

#define REQUIRE_GPU(backend)                 \
  std::string why_;                          \
  auto backend = cuda_or_skip_reason(&why_); \
  if (!backend) GTEST_SKIP() << "no CUDA device: " << why_

using Shape = std::tuple<int64_t, int64_t, int64_t>;  // m, n, k

// One profiled run (occupancy, trace) of `kernel` at tile and shape, timed `samples` times.
RunRequest profiled(const std::string& kernel, int tile, int64_t m, int64_t n, int64_t k, int samples) {
  RunRequest req;
  req.spec.m = m;
  req.spec.n = n;
  req.spec.k = k;
  req.spec.kernel = kernel;
  req.spec.tile = tile;
  req.profile = true;
  req.policy = MeasurePolicy::fixed(samples);
  return req;
}

// A profiled run of `kernel` at tile and shape (3 samples, C kept), then a plain run of the same: `ok` when
// both passed and kept C; C must then be the same bits (kernels that add slices of K in a fixed order). The
// profiled result.
RunResult profiled_same_bits_twice(Backend& backend, const std::string& kernel, int tile, int64_t m,
                                   int64_t n, int64_t k, bool* ok) {
  RunRequest req = profiled(kernel, tile, m, n, k, 3);
  req.keep_output = true;
  RunResult a = backend.run(req, CancelToken());
  req.profile = false;
  const RunResult b = backend.run(req, CancelToken());
  *ok = a.error.passed && b.error.passed && a.c && b.c;
  EXPECT_TRUE(*ok) << a.error.max_abs_err << " " << b.error.max_abs_err;
  if (*ok)
    EXPECT_EQ(std::memcmp(a.c->data.data(), b.c->data.data(), a.c->data.size() * sizeof(float)), 0)
        << "C changed between runs";
  return a;
}

// A built-in kernel's launcher called straight, without the workspace its launch at this shape needs (null
// matrices and stream: it must refuse before using any): what it said, or what went wrong instead.
std::string refusal_without_workspace(const std::string& id, int tile, int64_t m, int64_t n, int64_t k) {
  for (const auto& e : register_kernels()) {
    if (e.info.id != id) continue;
    if (!e.cuda) return id + " has no CUDA launcher";
    GemmArgs a{nullptr, nullptr, nullptr, m, n, k};
    try {
      e.cuda(a, tile, nullptr, nullptr);
    } catch (const std::invalid_argument& x) {
      return x.what();
    }
    return id + " tile " + std::to_string(tile) + " launched without its workspace";
  }
  return "no kernel " + id;
}

// Shapes: 1, non-multiples of every tile (7, 17, 33, 100, 129), multiples, rectangular in every direction.
const std::vector<Shape> kShapes = {{1, 1, 1},       {7, 7, 7},    {17, 17, 17},    {31, 31, 31},
                                    {32, 32, 32},    {33, 33, 33}, {100, 100, 100}, {129, 129, 129},
                                    {257, 257, 257}, {33, 65, 17}, {65, 17, 33},    {1, 300, 5},
                                    {300, 1, 7},     {5, 7, 300},  {128, 96, 40},   {513, 257, 129}};

struct Case {
  std::string kernel;
  int tile;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.kernel << " T=" << c.tile;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& e : register_kernels()) {
    if (!e.cuda || e.info.teaching) continue;  // teaching variants are wrong on purpose: tested below
    if (e.info.tiles.empty()) cases.push_back({e.info.id, 0});
    for (int t : e.info.tiles) cases.push_back({e.info.id, t});
  }
  return cases;
}

// One launch of case c at m x n x k on the given inputs, verified, with C kept for the test to check.
RunRequest kept_run(const Case& c, int64_t m, int64_t n, int64_t k, InputKind input, uint64_t seed = 1) {
  RunRequest req;
  req.spec.m = m;
  req.spec.n = n;
  req.spec.k = k;
  req.spec.kernel = c.kernel;
  req.spec.tile = c.tile;
  req.spec.input = input;
  req.spec.seed = seed;
  req.keep_output = true;
  req.policy = MeasurePolicy::fixed(1);
  return req;
}

std::string describe(const Case& c, int64_t m, int64_t n, int64_t k) {
  return c.kernel + " T=" + std::to_string(c.tile) + " shape " + std::to_string(m) + "x" + std::to_string(n) +
         "x" + std::to_string(k);
}

class EveryKernel : public ::testing::TestWithParam<Case> {};

TEST_P(EveryKernel, MatchesTheDoubleReferenceOnEveryShape) {
  REQUIRE_GPU(backend);
  const Case c = GetParam();
  for (auto [m, n, k] : kShapes) {
    const RunRequest req = kept_run(c, m, n, k, InputKind::Random, uint64_t(m * 131 + n * 7 + k));
    RunResult r = backend->run(req, CancelToken());
    SCOPED_TRACE(describe(c, m, n, k));
    EXPECT_TRUE(r.error.passed) << "vs cuBLAS: max abs err " << r.error.max_abs_err;
    ASSERT_TRUE(r.c);
    const HostMatrix A = generate_input(InputKind::Random, req.spec.seed, 0, m, k);
    const HostMatrix B = generate_input(InputKind::Random, req.spec.seed, 1, k, n);
    const auto ref = cpu_gemm_reference_f64(A.data.data(), B.data.data(), m, n, k);
    const auto kernels = backend->kernels();
    const KernelInfo* info = find_kernel(kernels, c.kernel);
    const double tol =
        tolerance_for(k, max_abs(A.data.data(), A.size()), max_abs(B.data.data(), B.size()), info->tf32)
            .at(max_abs(ref.data(), ref.size()));
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double d = std::fabs(double(r.c->data[i]) - ref[i]);
      ASSERT_TRUE(std::isfinite(r.c->data[i])) << "element " << i << " was not written";
      worst = std::max(worst, d);
    }
    EXPECT_LE(worst, tol) << "vs double reference (tolerance " << (r.error.tolerance) << ")";
  }
}

TEST_P(EveryKernel, PassesOnRampInputsWhoseRoundingErrorsAddUp) {
  // A[i][k] = i, B[k][j] = j: every product of a row has one sign, so float32 errors add up (C = K i j
  // reaches 2^31 here) instead of cancelling, and rows and columns past 2048 are not exact in TF32. A correct
  // kernel passes against cuBLAS and against the exact product, whatever its order of summation.
  REQUIRE_GPU(backend);
  const Case c = GetParam();
  const auto kernels = backend->kernels();
  const bool tf32 = find_kernel(kernels, c.kernel)->tf32;
  for (auto [m, n, k] : std::vector<Shape>{{1024, 1024, 1024}, {1000, 1100, 3000}, {2500, 2300, 700}}) {
    RunResult r = backend->run(kept_run(c, m, n, k, InputKind::Ramp), CancelToken());
    SCOPED_TRACE(describe(c, m, n, k));
    EXPECT_TRUE(r.error.passed) << "vs cuBLAS: max abs err " << r.error.max_abs_err << ", tolerance "
                                << r.error.tolerance;
    ASSERT_TRUE(r.c);
    const double c_max = double(k) * double(m - 1) * double(n - 1);
    const double tol = tolerance_for(k, double(m - 1), double(n - 1), tf32).at(c_max);
    double worst = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double d = std::fabs(r.c->at(i, j) - double(k) * double(i) * double(j));
        if (!(d <= worst)) worst = d;  // NaN (an element left unwritten) sticks
      }
    EXPECT_LE(worst, tol) << "vs the exact K i j";
  }
}

TEST_P(EveryKernel, SymmetricInputsGiveTheRightProductWhichIsNotSymmetric) {
  REQUIRE_GPU(backend);
  const Case c = GetParam();
  for (int64_t n : {33, 96, 129}) {
    RunResult r = backend->run(kept_run(c, n, n, n, InputKind::Symmetric), CancelToken());
    EXPECT_TRUE(r.error.passed) << describe(c, n, n, n);
    const HostMatrix A = generate_input(InputKind::Symmetric, 1, 0, n, n);
    const HostMatrix B = generate_input(InputKind::Symmetric, 1, 1, n, n);
    const auto ref = cpu_gemm_reference_f64(A.data.data(), B.data.data(), n, n, n);
    const auto kernels = backend->kernels();
    const double tol =
        tolerance_for(n, 1, 1, find_kernel(kernels, c.kernel)->tf32).at(max_abs(ref.data(), ref.size()));
    double asym = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_LE(std::fabs(r.c->at(i, j) - ref[size_t(i * n + j)]), tol);
        asym = std::max(asym, double(std::fabs(r.c->at(i, j) - r.c->at(j, i))));
      }
    EXPECT_GT(asym, 100 * tol)
        << "A*B of symmetric A, B came out symmetric: the inputs are not what we think";
  }
}

// 46341^2 > 2^31: C's element offsets overflow 32 bits (row * N + col), so a kernel that computes them in int
// writes the wrong elements (or faults). C is poisoned with NaN before the verification launch, so any
// element not written, or written elsewhere, fails against cuBLAS. Small K keeps it quick; about 17 GB of GPU
// memory.
TEST_P(EveryKernel, Handles46341SquaredOutputsWith64BitOffsets) {
  REQUIRE_GPU(backend);
  const Case c = GetParam();
  RunRequest req;
  req.spec.m = req.spec.n = 46341;
  req.spec.k = 8;
  req.spec.kernel = c.kernel;
  req.spec.tile = c.tile;
  req.policy = MeasurePolicy::fixed(1);
  try {
    backend->validate(req, false);
  } catch (const ValidationError& e) {
    GTEST_SKIP() << "does not fit this GPU: " << e.what();
  }
  RunResult r = backend->run(req, CancelToken());
  EXPECT_TRUE(r.error.passed) << r.error.bad_elements << " elements wrong; worst at row " << r.error.worst_row
                              << ", col " << r.error.worst_col << ", max abs err " << r.error.max_abs_err;
  EXPECT_EQ(r.error.bad_elements, 0);
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryKernel, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return i.param.kernel + (i.param.tile ? "_T" + std::to_string(i.param.tile) : "");
                         });

}  // namespace

TEST(DeviceInputs, AreBitIdenticalToTheHostGenerator) {
  REQUIRE_GPU(backend);
  // Identity A: C = I * B reproduces B exactly, so C shows the device-generated B element for element.
  RunRequest req;
  req.spec.m = req.spec.k = 77;
  req.spec.n = 50;
  req.spec.input = InputKind::Identity;
  req.spec.seed = 1234;
  req.keep_output = true;
  RunResult r = backend->run(req, CancelToken());
  const HostMatrix B = generate_input(InputKind::Identity, 1234, 1, 77, 50);
  EXPECT_EQ(r.c->data, B.data);
  EXPECT_EQ(r.error.max_abs_err, 0.0);
  // Ones: every element is K.
  req.spec.input = InputKind::Ones;
  r = backend->run(req, CancelToken());
  for (float v : r.c->data) ASSERT_EQ(v, 77.0f);
}

TEST(DeviceMemory, ASizeThatDoesNotFitIsRefusedWithTheNumbers) {
  REQUIRE_GPU(backend);
  RunRequest req;
  req.spec.m = req.spec.n = req.spec.k = 131072;  // 4 x 64 GiB
  try {
    backend->validate(req, false);
    FAIL() << "131072^3 accepted";
  } catch (const ValidationError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("needs"), std::string::npos) << msg;
    EXPECT_NE(msg.find("free"), std::string::npos) << msg;
  }
}

TEST(DeviceTiming, ProducesOneSamplePerLaunchAndRecordsTheClock) {
  REQUIRE_GPU(backend);
  RunRequest req;
  req.spec.m = req.spec.n = req.spec.k = 512;
  req.spec.tile = 32;
  req.policy = MeasurePolicy::fixed(12);
  RunResult r = backend->run(req, CancelToken());
  EXPECT_EQ(r.samples_ms.size(), 12u);
  for (double t : r.samples_ms) EXPECT_GT(t, 0.0);
  EXPECT_GT(r.tflops(), 0.0);
  EXPECT_EQ(r.backend, "cuda");
  EXPECT_EQ(r.stop, "samples taken");  // a fixed count has no noise target
  // NVML comes with every NVIDIA driver: the SM clock is read after every sample.
  EXPECT_TRUE(r.clock.available) << r.clock.note;
  EXPECT_GT(r.clock.median_mhz, 0.0);
  EXPECT_GE(r.clock.max_mhz, r.clock.min_mhz);
  EXPECT_GT(r.clock.device_max_mhz, 0.0);
  ASSERT_TRUE(r.occupancy);  // occupancy of the timed launch comes with every run, not only --profile
  EXPECT_EQ(r.occupancy->blocks_per_sm, r.occupancy->api_blocks_per_sm);
  EXPECT_EQ(r.tile_m, 32);
}

// The timer's gate (launch_gate.cuh): what is queued behind a closed gate waits for it to open, so a batch
// runs back to back however slowly the host queues it; and a gate nobody opens gives up by itself, so work
// that waits for the GPU while the gate is closed cannot hang the engine.
TEST(DeviceTiming, WorkQueuedBehindTheGateWaitsUntilItOpensAndAForgottenGateGivesUpAndTheTimerUsesOne) {
  REQUIRE_GPU(backend);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 0, sizeof(int)), cudaSuccess);
  cudaEvent_t done = nullptr;
  ASSERT_EQ(cudaEventCreate(&done), cudaSuccess);
  {
    LaunchGate gate;  // gives up after 2 s: far longer than this test waits with it closed
    gate.close(s);
    ASSERT_EQ(cudaMemsetAsync(d, 0x01, sizeof(int), s), cudaSuccess);
    ASSERT_EQ(cudaEventRecord(done, s), cudaSuccess);
    EXPECT_EQ(cudaEventQuery(done), cudaErrorNotReady) << "the work ran before the gate opened";
    gate.open();
    ASSERT_EQ(cudaEventSynchronize(done), cudaSuccess);
    int v = 0;
    ASSERT_EQ(cudaMemcpy(&v, d, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(v, 0x01010101);
    EXPECT_FALSE(gate.timed_out());
  }
  {
    LaunchGate forgotten(20'000'000);  // 20 ms
    forgotten.close(s);
    ASSERT_EQ(cudaMemsetAsync(d, 0x02, sizeof(int), s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess) << "never opened, and still the stream went on";
    EXPECT_TRUE(forgotten.timed_out());
    int v = 0;
    ASSERT_EQ(cudaMemcpy(&v, d, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(v, 0x02020202);
  }
  // And the engine's timer holds what it times behind one: while its work is being queued, the stream is
  // still busy with the gate (without one it would be idle, having been synchronised), and the work runs.
  {
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    StreamTimer timer(s);
    cudaError_t while_queuing = cudaSuccess;
    const double ms = timer.ms([&] {
      while_queuing = cudaStreamQuery(s);
      ASSERT_EQ(cudaMemsetAsync(d, 0x03, sizeof(int), s), cudaSuccess);
    });
    EXPECT_EQ(while_queuing, cudaErrorNotReady) << "the timed work was not held behind a gate";
    EXPECT_GT(ms, 0.0);
    int v = 0;
    ASSERT_EQ(cudaMemcpy(&v, d, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(v, 0x03030303);
  }
  cudaEventDestroy(done);
  cudaFree(d);
  cudaStreamDestroy(s);
}

// A short launch is timed in batches: three single launches size the batch and count as warm-ups, and the
// interleaved cuBLAS is warmed as often and sampled as often, in batches of as many launches.
TEST(DeviceTiming, AShortLaunchIsTimedInBatchesWhoseProbesCountAsWarmUps) {
  REQUIRE_GPU(backend);
  RunRequest req;
  req.spec.m = req.spec.n = req.spec.k = 256;
  req.spec.kernel = "tiled";
  req.spec.tile = 16;
  MeasurePolicy p = MeasurePolicy::bench();
  p.warmup_seconds = 0;  // by count only: the verification launch and the three probes
  p.min_seconds = 0.01;
  p.max_seconds = 2;
  req.policy = p;
  RunResult r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.timed);
  EXPECT_GT(r.launches_per_sample, 1);
  EXPECT_EQ(r.warmups, 4);
  ASSERT_TRUE(r.cublas_interleaved());
  EXPECT_EQ(r.interleaved.samples_ms.size(), r.samples_ms.size());
  EXPECT_NE(r.policy.find("back to back"), std::string::npos) << r.policy;
  p.changing_inputs = true;  // batches too, each launch on the next set: C checked against the last one's
  req.policy = p;
  r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.timed);
  EXPECT_GT(r.launches_per_sample, 1);
  EXPECT_TRUE(r.changing.measured());
  EXPECT_TRUE(r.changing.passed) << r.changing.verdict;
  p.changing_inputs = false;
  p.cold_l2 = true;  // every launch after a flush: one launch a sample, no probes
  req.policy = p;
  r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.timed);
  EXPECT_EQ(r.launches_per_sample, 1);
  EXPECT_EQ(r.warmups, 3);
}

TEST(DeviceTiming, TheBenchPolicyConvergesAndSkipsWrongKernels) {
  REQUIRE_GPU(backend);
  RunRequest req;
  req.spec.m = req.spec.n = 256;
  req.spec.k = 250;
  req.spec.tile = 16;
  MeasurePolicy p = MeasurePolicy::bench();
  p.min_seconds = 0.01;
  p.max_seconds = 2;
  req.policy = p;
  RunResult r = backend->run(req, CancelToken());
  EXPECT_TRUE(r.timed);
  EXPECT_GE(r.samples_ms.size(), 10u);
  EXPECT_GE(r.warmups, 3);
  EXPECT_NE(r.stop, "running");
  req.spec.kernel = "tiled_floork";  // 16 does not divide 250: wrong, so not timed
  r = backend->run(req, CancelToken());
  EXPECT_FALSE(r.error.passed);
  EXPECT_FALSE(r.timed);
  EXPECT_TRUE(r.samples_ms.empty());
  p.cold_l2 = true;  // flushing the L2 before every sample works (and is validated for memory)
  req.policy = p;
  req.spec.kernel = "tiled";
  EXPECT_TRUE(backend->run(req, CancelToken()).timed);
}

// The bench policy times cuBLAS of the kernel's precision right after every sample (one reference sample per
// kernel sample, each with its own clock reading), into a scratch buffer: C keeps the kernel's output.
TEST(DeviceTiming, TheBenchPolicyTimesCublasOfTheSamePrecisionBetweenTheSamples) {
  REQUIRE_GPU(backend);
  const DeviceInfo d = backend->device_info();
  MeasurePolicy p = MeasurePolicy::bench();
  p.min_seconds = 0.01;
  p.max_seconds = 2;
  struct Case {
    const char* kernel;
    int tile;
    const char* reference;
    int min_sm;
  };
  for (const Case& c : {Case{"tiled", 16, "cublas", 0}, Case{"wmma_tf32", 0, "cublas_tf32", 80},
                        Case{"wgmma_tf32", 0, "cublas_tf32", 90}}) {
    if (d.sm < c.min_sm) continue;
    SCOPED_TRACE(c.kernel);
    RunRequest req;
    req.spec.m = req.spec.n = 256;
    req.spec.k = 256;
    req.spec.kernel = c.kernel;
    req.spec.tile = c.tile;
    const auto kernels = backend->kernels();
    if (const KernelInfo* k = find_kernel(kernels, c.kernel); k && !k->tiles.empty())
      req.spec.tile = c.tile ? c.tile : k->default_tile;
    req.policy = p;
    req.keep_output = true;  // C after the verification launch
    req.keep_store = true;   // C after the timing
    const RunResult r = backend->run(req, CancelToken());
    ASSERT_TRUE(r.error.passed);
    ASSERT_TRUE(r.timed);
    ASSERT_TRUE(r.cublas_interleaved());
    EXPECT_EQ(r.interleaved.kernel, c.reference);
    EXPECT_EQ(r.interleaved.samples_ms.size(), r.samples_ms.size());
    for (double ms : r.interleaved.samples_ms) EXPECT_GT(ms, 0.0);
    EXPECT_EQ(r.interleaved.clock.available, r.clock.available);
    EXPECT_EQ(r.cublas_ms(), r.interleaved.stats.median);
    EXPECT_EQ(r.reference_ms, 0.0);  // nothing timed on its own
    // The reference never wrote into C: C after the timing is the kernel's own output, bit for bit (and the
    // kernel's output differs from cuBLAS's, so a cuBLAS result in C would show).
    ASSERT_TRUE(r.c);
    ASSERT_TRUE(r.store);
    EXPECT_GT(r.error.max_abs_err, 0.0);
    EXPECT_EQ(r.store->copy(MatrixId::C).data, r.c->data);
  }
  // cuBLAS itself has no reference beside it, and says so; the quick policy interleaves nothing.
  RunRequest req;
  req.spec.m = req.spec.n = req.spec.k = 256;
  req.spec.kernel = "cublas";
  req.policy = p;
  RunResult r = backend->run(req, CancelToken());
  EXPECT_FALSE(r.cublas_interleaved());
  EXPECT_NE(r.interleaved_note.find("reference itself"), std::string::npos) << r.interleaved_note;
  req.spec.kernel = "tiled";
  req.spec.tile = 16;
  req.policy.reset();
  req.profile = true;
  r = backend->run(req, CancelToken());
  EXPECT_FALSE(r.cublas_interleaved());
  EXPECT_GT(r.reference_ms, 0.0);  // timed on its own after the samples
  EXPECT_EQ(r.cublas_ms(), r.reference_ms);
}

TEST(DeviceInfo, CarriesVersionsPeaksAndAMeasuredBandwidth) {
  REQUIRE_GPU(backend);
  const DeviceInfo d = backend->device_info();
  EXPECT_EQ(d.backend, "cuda");
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.max_sm_clock_mhz, 0.0);
  EXPECT_NE(d.driver.find("CUDA"), std::string::npos) << d.driver;
  EXPECT_FALSE(d.cuda_runtime.empty());
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_GT(d.peak_fp32_tflops, 0.0);
  const BandwidthResult bw = backend->measure_bandwidth(CancelToken());
  EXPECT_GT(bw.gbs, 0.0);
  EXPECT_GE(bw.best_gbs, bw.gbs);
  EXPECT_GE(bw.bytes, 8 * d.l2_bytes);  // far past the L2: DRAM, not cache
  // A copy cannot beat the memory's theoretical rate (when the driver reports it).
  if (d.datasheet_bandwidth_gbs > 0) EXPECT_LT(bw.best_gbs, 1.05 * d.datasheet_bandwidth_gbs);
}

// The CPU backend's twins must fail where the GPU kernel fails and pass where it passes: every kernel with a
// twin (the teaching variants included) gives the same bits on the GPU as its twin on the CPU, since both
// take each element's fused multiply-adds in the same order.
TEST(CpuTwins, GiveTheGpuKernelsBitsForEveryTileAndShape) {
  REQUIRE_GPU(backend);
  int compared = 0;
  for (const auto& e : register_kernels()) {
    if (!e.cuda || !e.info.cpu || e.info.id == "tiled_nosync") continue;  // nosync: a race, not arithmetic
    for (int tile : e.info.tiles)
      for (auto [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
               {70, 90, 37}, {129, 257, 100}, {300, 200, 70}, {64, 64, 64}}) {
        SCOPED_TRACE(describe({e.info.id, tile}, m, n, k));
        const RunRequest req = kept_run({e.info.id, tile}, m, n, k, InputKind::Random, uint64_t(m + n + k));
        const RunResult r = backend->run(req, CancelToken());
        ASSERT_TRUE(r.c);
        const HostMatrix A = generate_input(InputKind::Random, req.spec.seed, 0, m, k);
        const HostMatrix B = generate_input(InputKind::Random, req.spec.seed, 1, k, n);
        HostMatrix C(m, n);
        std::memset(C.data.data(), 0xff,
                    C.data.size() * sizeof(float));  // the poisoned C the GPU starts from
        e.info.cpu(A.data.data(), B.data.data(), C.data.data(), m, n, k, tile, nullptr);
        size_t differ = 0, first = 0;
        for (size_t i = 0; i < C.data.size(); ++i)
          if (std::memcmp(&C.data[i], &r.c->data[i], sizeof(float)) != 0 && differ++ == 0) first = i;
        EXPECT_EQ(differ, 0u) << "first at element " << first << ": CPU " << C.data[first] << ", GPU "
                              << r.c->data[first];
        ++compared;
      }
  }
  EXPECT_GE(compared,
            4 * 3 * 5);  // naive, coalesced, tiled, floork and mirror at three tiles and four shapes
}

TEST(TeachingVariants, FloorKFailsExactlyWhenTheTileDoesNotDivideK) {
  REQUIRE_GPU(backend);
  for (int tile : {8, 16, 32})
    for (int64_t k : {int64_t(tile) * 4, int64_t(tile) * 4 + 1, int64_t(tile) * 3 - 1, int64_t(tile) - 1}) {
      RunRequest req;
      req.spec.m = 70;
      req.spec.n = 90;
      req.spec.k = k;
      req.spec.kernel = "tiled_floork";
      req.spec.tile = tile;
      req.policy = MeasurePolicy::fixed(1);
      RunResult r = backend->run(req, CancelToken());
      EXPECT_EQ(r.error.passed, k % tile == 0)
          << "T=" << tile << " K=" << k << " err " << r.error.max_abs_err;
      // Every element misses products; a few may miss by less than the tolerance (tiny products).
      if (k % tile != 0) EXPECT_GT(r.error.bad_elements, 70 * 90 * 9 / 10);
    }
}

TEST(TeachingVariants, MissingSyncIsFlaggedAndCorrectWhereNoRaceCanHappen) {
  REQUIRE_GPU(backend);
  const auto kernels = backend->kernels();
  const KernelInfo* k = find_kernel(kernels, "tiled_nosync");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->teaching);
  // With a single k-tile there is no next tile to overwrite the shared memory: no race, correct result.
  RunRequest req;
  req.spec.m = req.spec.n = 100;
  req.spec.k = 16;
  req.spec.kernel = "tiled_nosync";
  req.spec.tile = 16;
  req.policy = MeasurePolicy::fixed(1);
  EXPECT_TRUE(backend->run(req, CancelToken()).error.passed);
  // Its race is proven by compute-sanitizer racecheck (tests/gpu/sanitize.sh), not by a result that may vary.
}

TEST(Sweep, MeasuresEveryPointThroughTheEngineAndRelatesToCublas) {
  REQUIRE_GPU(backend);
  SweepSpec sw;
  sw.sizes = {250, 256};
  sw.configs = {{"tiled", 16}, {"cublas", 0}, {"tiled_floork", 16}};
  MeasurePolicy p = MeasurePolicy::bench();
  p.min_seconds = 0.01;
  p.max_seconds = 2;
  std::vector<BenchPoint> pts;
  int calls = 0;
  const int done =
      run_sweep(*backend, expand_sweep(sw), p, CancelToken(), [&](const SweepPointResult& r, int, int) {
        ++calls;
        ASSERT_TRUE(r.result) << r.error;
        pts.push_back(bench_point(*r.result, backend->device_info().peak_fp32_tflops));
      });
  relate_to_cublas(pts);
  ASSERT_EQ(done, 6);
  EXPECT_EQ(calls, 6);
  EXPECT_TRUE(pts[0].verified);
  EXPECT_GE(pts[0].stats.count, 10);
  EXPECT_GT(pts[0].pct_cublas, 0);
  EXPECT_EQ(pts[0].pct_cublas_from, "interleaved");  // cuBLAS timed beside it, not the cuBLAS point
  EXPECT_EQ(pts[0].reference_samples, pts[0].stats.count);
  EXPECT_GT(pts[0].reference_clock_median_mhz, 0);
  EXPECT_EQ(pts[1].pct_cublas_from, "itself");
  EXPECT_GT(pts[0].sm_clock_median_mhz, 0);
  EXPECT_FALSE(pts[2].verified);  // 250 is not a multiple of 16
  EXPECT_EQ(pts[2].stats.count, 0);
  EXPECT_TRUE(pts[5].verified);  // 256 is
  // Wave marks for the tiled kernel from the device's occupancy: 256 / 16 = 16 x 16 = 256 blocks.
  const auto li = backend->launch_info(sw.problem(256, {"tiled", 16}));
  ASSERT_TRUE(li);
  EXPECT_EQ(li->tile_m, 16);
  EXPECT_EQ(li->grid_blocks, 256);
  EXPECT_EQ(li->occupancy.blocks_per_sm, li->occupancy.api_blocks_per_sm);
}

TEST(Profile, TracesCoverEveryTileOnceAndOccupancyMatchesTheCudaApi) {
  REQUIRE_GPU(backend);
  for (const auto& k : backend->kernels()) {
    if (!k.has_cuda || k.teaching) continue;
    for (int tile : k.tiles.empty() ? std::vector<int>{0} : k.tiles) {
      const RunRequest req = profiled(k.id, tile, 1000, 700, 300, 2);
      RunResult r = backend->run(req, CancelToken());
      SCOPED_TRACE(k.id + " T=" + std::to_string(tile));
      EXPECT_GT(r.reference_ms, 0.0);
      EXPECT_GT(r.peak_tflops, 0.0);
      if (!k.traceable) {
        EXPECT_FALSE(r.trace);
        EXPECT_FALSE(r.trace_note.empty());
        EXPECT_FALSE(r.occupancy);
        continue;
      }
      ASSERT_TRUE(r.occupancy);
      EXPECT_EQ(r.occupancy->blocks_per_sm, r.occupancy->api_blocks_per_sm) << r.occupancy->limiter;
      EXPECT_EQ(r.occupancy_by_tile.size(), k.tiles.size());
      for (const auto& [t, o] : r.occupancy_by_tile)
        EXPECT_EQ(o.blocks_per_sm, o.api_blocks_per_sm) << "tile " << t;
      ASSERT_TRUE(r.trace);
      const TileTrace& t = *r.trace;
      EXPECT_EQ(check_trace(t), "");  // every tile exactly once, SM ids in range, end >= start
      EXPECT_EQ(int64_t(t.grid_y) * t.tile_m >= 1000, true);
      EXPECT_EQ(int64_t(t.grid_x) * t.tile_n >= 700, true);
      const ScheduleSummary sum = summarize_schedule(t);
      int used = 0;
      for (int c : sum.tiles_per_sm) used += c > 0;
      EXPECT_GT(used, 1) << "all tiles on one SM?";
      EXPECT_GT(t.traced_ms, 0.0);
      EXPECT_GT(t.plain_ms, 0.0);
      EXPECT_GT(t.timer_resolution_ns, 0u);
    }
  }
}

// A traced launch of tiled and of splitk (K = 1100 in 3 slices of whole K steps of 16: 69 steps, 23 a slice)
// as a Perfetto trace (Chrome trace event JSON): the format's checks pass, it reads back as the device's
// records exactly, and the slices of each tile cover K once, in order, as the kernel divides it.
TEST(Profile, TracedLaunchesExportAsATraceEventJsonThatReadsBackExactly) {
  REQUIRE_GPU(backend);
  for (const auto& [kernel, tile] : {std::pair<std::string, int>{"tiled", 16}, {"splitk", 3}}) {
    SCOPED_TRACE(kernel);
    const RunResult r = backend->run(profiled(kernel, tile, 1000, 700, 1100, 2), CancelToken());
    ASSERT_TRUE(r.trace) << r.trace_note;
    ASSERT_EQ(check_trace(*r.trace), "");
    const ScheduleTraceContext c{r.spec.kernel, r.spec.tile, r.spec.m, r.spec.n, r.spec.k, r.device};
    const std::string text = schedule_trace_text(*r.trace, c);
    const nlohmann::json doc = nlohmann::json::parse(text);
    EXPECT_EQ(check_trace_event_json(doc), "");
    const ScheduleTraceFile back = read_schedule_trace_json(text);
    ASSERT_EQ(back.trace.records.size(), r.trace->records.size());
    for (size_t i = 0; i < r.trace->records.size(); ++i) {
      EXPECT_EQ(back.trace.records[i].start_ns, r.trace->records[i].start_ns) << i;
      EXPECT_EQ(back.trace.records[i].end_ns, r.trace->records[i].end_ns) << i;
      EXPECT_EQ(back.trace.records[i].smid, r.trace->records[i].smid) << i;
    }
    EXPECT_EQ(back.context.kernel, kernel);
    const int slices = kernel == "splitk" ? 3 : 1;
    EXPECT_EQ(r.trace->grid_z, slices);
    EXPECT_EQ(r.trace->k_step, kernel == "splitk" ? 16 : 0);
    std::vector<std::pair<int64_t, int64_t>> k_of_tile(size_t(slices), {-1, -1});  // tile (1, 2)'s slices
    for (const auto& e : doc["traceEvents"])
      if (e["ph"] == "X" && e["args"]["tile_row"] == 1 && e["args"]["tile_col"] == 2)
        k_of_tile.at(e["args"]["k_slice"].get<size_t>()) = {e["args"]["k_begin"].get<int64_t>(),
                                                            e["args"]["k_end"].get<int64_t>()};
    EXPECT_EQ(k_of_tile.front().first, 0);
    for (int z = 1; z < slices; ++z) EXPECT_EQ(k_of_tile[size_t(z)].first, k_of_tile[size_t(z) - 1].second);
    EXPECT_EQ(k_of_tile.back().second, 1100);
    if (slices == 3) EXPECT_EQ(k_of_tile[1], (std::pair<int64_t, int64_t>{368, 736}));  // steps 23 to 46
  }
}

// The build-time table (ptxas at build time) against the driver, for every kernel x tile x shape class this
// device runs: registers, static and dynamic shared memory, block size and tile, and the calculator's blocks
// per SM on this device's limits against cudaOccupancyMaxActiveBlocksPerMultiprocessor.
TEST(BuildResources, MatchTheDriverForEveryKernelAndTile) {
  REQUIRE_GPU(backend);
  const DeviceInfo d = backend->device_info();
  const GpuModel dev = gpu_model_of(d);
  int compared = 0;
  for (const auto& k : backend->kernels()) {
    if (!k.has_cuda || k.min_sm > d.sm || k.id.rfind("cublas", 0) == 0) continue;
    for (int tile : k.tiles)
      for (bool aligned : {true, false}) {
        SCOPED_TRACE(k.id + " T=" + std::to_string(tile) + (aligned ? " aligned" : " ragged"));
        ProblemSpec s;
        s.m = s.n = s.k = aligned ? 4096 : 4099;
        s.kernel = k.id;
        s.tile = tile;
        const auto li = backend->launch_info(s);
        ASSERT_TRUE(li);
        const ResourceLookup l = lookup_resources(build_resources(), k.id, tile, aligned, d.sm);
        ASSERT_TRUE(l.row) << build_resources_note();
        if (!l.exact_arch) GTEST_SKIP() << l.note << " (build for this GPU's architecture to compare)";
        const KernelResources& r = li->occupancy.res;
        EXPECT_EQ(std::string(l.row->function), li->occupancy.function);  // cudaFuncGetName: the table's name
        EXPECT_EQ(l.row->regs, r.regs_per_thread);
        EXPECT_EQ(l.row->static_smem, r.static_smem);
        EXPECT_EQ(l.row->dynamic_smem, r.dynamic_smem);
        EXPECT_EQ(l.row->threads, r.threads_per_block);
        EXPECT_EQ(l.row->tile_m, li->tile_m);
        EXPECT_EQ(l.row->tile_n, li->tile_n);
        const OccupancyReport o = theoretical_occupancy(dev, inputs_from(*l.row), s.m, s.n);
        EXPECT_EQ(o.blocks_per_sm, li->occupancy.api_blocks_per_sm) << o.limiter;
        // Stream-K and wgmma_tf32's tail launch the blocks of a plan for this device's SMs (whole tiles, then
        // blocks sharing the others by K segments), which the build table cannot know: it counts one block
        // per tile.
        if (!li->k_segments) EXPECT_EQ(o.grid_blocks, li->grid_blocks);
        ++compared;
      }
  }
  EXPECT_GT(compared, 20);
  // On an H100 SXM the catalog's entry is this device's limits.
  if (d.name.find("H100") != std::string::npos && d.sm_count == 132) {
    const GpuModel& h = find_gpu("h100");
    EXPECT_EQ(h.limits.max_threads_per_sm, d.limits.max_threads_per_sm);
    EXPECT_EQ(h.limits.max_blocks_per_sm, d.limits.max_blocks_per_sm);
    EXPECT_EQ(h.limits.regs_per_sm, d.limits.regs_per_sm);
    EXPECT_EQ(h.limits.smem_per_sm, d.limits.smem_per_sm);
    EXPECT_EQ(h.limits.reserved_smem_per_block, d.limits.reserved_smem_per_block);
  }
}

// Every function a kernel x tile launches at the shapes the build-time table was made from (4096^3 down to
// 128^3, aligned and ragged) is found in the table by the name the driver gives it, and its row is what the
// driver reports: the split variants wgmma_tf32 runs at 1024^3 and stream-K's at small shapes as much as
// the main launches. The table plans for an H100's 132 SMs; on a GPU with another count a launch may pick
// a function the table never saw (its slices depend on the SMs), which is printed and not counted.
TEST(BuildResources, EveryFunctionLaunchedHasItsOwnRowAndItMatchesTheDriver) {
  REQUIRE_GPU(backend);
  const DeviceInfo d = backend->device_info();
  int compared = 0, variants = 0;
  for (const auto& k : backend->kernels()) {
    if (!k.has_cuda || k.min_sm > d.sm || k.id.rfind("cublas", 0) == 0) continue;
    for (int tile : k.tiles)
      for (int64_t side : {4096, 2048, 1024, 512, 128, 4099, 2049, 1001, 513, 129}) {
        SCOPED_TRACE(k.id + " T=" + std::to_string(tile) + " at " + std::to_string(side) + "^3");
        ProblemSpec s;
        s.m = s.n = s.k = side;
        s.kernel = k.id;
        s.tile = tile;
        const auto li = backend->launch_info(s);
        ASSERT_TRUE(li);
        const std::string& f = li->occupancy.function;
        ASSERT_FALSE(f.empty());
        const ResourceLookup l = lookup_resources(build_resources(), k.id, tile, side % 4 == 0, d.sm, f);
        if (!l.row && d.sm_count != 132) {
          std::printf("  %s T=%d at %lld^3 on %d SMs: %s is not in the table\n", k.id.c_str(), tile,
                      (long long)side, d.sm_count, f.c_str());
          continue;
        }
        ASSERT_TRUE(l.row) << f << (l.other_function ? ": another function than the table's" : "");
        if (!l.exact_arch) GTEST_SKIP() << l.note << " (build for this GPU's architecture to compare)";
        const KernelResources& r = li->occupancy.res;
        EXPECT_EQ(l.row->regs, r.regs_per_thread);
        EXPECT_EQ(l.row->static_smem, r.static_smem);
        EXPECT_EQ(l.row->dynamic_smem, r.dynamic_smem);
        EXPECT_EQ(l.row->threads, r.threads_per_block);
        EXPECT_EQ(l.row->variant, l.row->side != (side % 4 == 0 ? 4096 : 4099));
        const BuildComparison c = compare_with_build(l, r, li->blocks_per_tile, "");
        EXPECT_EQ(c.kind, BuildComparison::Kind::match) << c.text;
        ++compared;
        variants += l.row->variant && l.row->side == side;
      }
  }
  EXPECT_GT(compared, 100);
  // wgmma_tf32's split variants (3 tiles x 2 shape classes) and stream-K's small-shape one (2 classes) at
  // least, where the device is an H100.
  if (d.sm == 90) EXPECT_GE(variants, 8);
}

// The device store (what every heatmap reads) against the host, for A, B, C and the error map of a kernel
// that is wrong on purpose (K / TILE steps with K = 70, TILE 16: every element of C misses products), in
// every reduction, at reduced size, zoomed in and at full resolution.
TEST(DeviceStore, ABCAndTheErrorOfAWrongKernelMatchTheHost) {
  REQUIRE_GPU(backend);
  RunRequest req;
  req.spec.m = 300;
  req.spec.n = 200;
  req.spec.k = 70;
  req.spec.kernel = "tiled_floork";
  req.spec.tile = 16;
  req.spec.seed = 99;
  req.keep_store = true;
  req.keep_output = true;
  req.policy = MeasurePolicy::fixed(1);
  RunResult r = backend->run(req, CancelToken());
  ASSERT_FALSE(r.error.passed) << "the teaching kernel passed: the error map below would be all zeros";
  ASSERT_TRUE(r.store);
  ASSERT_GE(r.store->cuda_device(), 0);
  ASSERT_TRUE(r.c);
  const HostMatrix A = generate_input(InputKind::Random, 99, 0, 300, 70);
  const HostMatrix B = generate_input(InputKind::Random, 99, 1, 70, 200);
  const std::vector<double> ref = cpu_gemm_reference_f64(A.data.data(), B.data.data(), 300, 200, 70);
  HostMatrix E(300, 200);  // C - reference; the store's reference is cuBLAS, within the tolerance of this one
  double max_err = 0;
  for (size_t i = 0; i < E.data.size(); ++i) {
    E.data[i] = float(double(r.c->data[i]) - ref[i]);
    max_err = std::max(max_err, double(std::fabs(E.data[i])));
  }
  ASSERT_GT(max_err, 100 * r.error.tolerance) << "not a visibly wrong kernel";
  const std::vector<std::pair<MatrixId, const HostMatrix*>> mats = {
      {MatrixId::A, &A}, {MatrixId::B, &B}, {MatrixId::C, r.c.get()}, {MatrixId::Error, &E}};
  for (const auto& [id, host] : mats) {
    ASSERT_EQ(r.store->rows(id), host->rows);
    ASSERT_EQ(r.store->cols(id), host->cols);
    const std::vector<LodRegion> regions = {
        {0, 0, host->rows, host->cols, 37, 23},
        {5, 3, host->rows - 9, host->cols - 4, 50, 41},
        {7, 11, 20, 30, 30, 20},
        // Blocks of 4 and 8 columns starting at multiples of 4: the
        // kernel's 16-byte loads where the row stride allows (200).
        {0, 0, host->rows, host->cols, int(host->cols / 4), int(host->rows / 4)},
        {4, 8, host->rows - 5, host->cols - 8, int((host->cols - 8) / 8), int((host->rows - 5) / 3)}};
    for (const LodRegion& reg : regions)
      for (Reduce mode : {Reduce::Mean, Reduce::Min, Reduce::Max, Reduce::AbsMax}) {
        SCOPED_TRACE(std::string(matrix_name(id)) + " mode " + std::to_string(int(mode)) + " region " +
                     std::to_string(reg.row0) + "," + std::to_string(reg.col0) + " " +
                     std::to_string(reg.rows) + "x" + std::to_string(reg.cols) + " -> " +
                     std::to_string(reg.w) + "x" + std::to_string(reg.h));
        std::vector<float> got(size_t(reg.w) * size_t(reg.h)), want(got.size());
        r.store->reduce(id, reg, mode, got.data());
        lod_reduce(host->data.data(), host->cols, host->rows, host->cols, reg, mode, want.data());
        // A, B, C: the same elements, so exact (the mean to rounding). The error: within the tolerance by
        // which cuBLAS and the double reference may differ.
        const double tol_abs = id == MatrixId::Error ? r.error.tolerance : 0.0;
        for (size_t i = 0; i < got.size(); ++i) {
          const double tol =
              tol_abs + (mode == Reduce::Mean ? 1e-5 * std::max(1.0, double(std::fabs(want[i]))) : 0);
          ASSERT_LE(std::fabs(double(got[i]) - double(want[i])), tol) << "value " << i;
        }
      }
    for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {host->rows - 1, host->cols - 1}, {17, 3}}) {
      const double tol = id == MatrixId::Error ? r.error.tolerance : 0.0;
      EXPECT_LE(std::fabs(double(r.store->element(id, row, col)) - double(host->at(row, col))), tol)
          << matrix_name(id) << " (" << row << ", " << col << ")";
    }
  }
}

// Split-K: the slices' partial tiles are added in slice order by whichever block finishes last, so C is the
// same bit for bit from launch to launch; the trace has one record per block (grid_z slices per tile); and
// the workspace indexing holds past 2^31 elements.
TEST(SplitK, IsDeterministicTracesEverySliceAndIndexesItsWorkspaceIn64Bits) {
  REQUIRE_GPU(backend);
  RunRequest req = profiled("splitk", 4, 1000, 1001, 1003, 3);
  req.keep_output = true;
  const RunResult a = backend->run(req, CancelToken());
  req.profile = false;
  const RunResult b = backend->run(req, CancelToken());
  ASSERT_TRUE(a.error.passed && b.error.passed) << a.error.max_abs_err;
  ASSERT_TRUE(a.c && b.c);
  EXPECT_EQ(std::memcmp(a.c->data.data(), b.c->data.data(), a.c->data.size() * sizeof(float)), 0)
      << "split-K's C changed between runs";
  ASSERT_TRUE(a.trace);
  EXPECT_EQ(a.trace->grid_z, 4);
  EXPECT_EQ(a.trace->grid_x, 8);  // ceil(1001 / 128)
  EXPECT_EQ(a.trace->grid_y, 8);
  EXPECT_EQ(a.trace->records.size(), 8u * 8u * 4u);
  EXPECT_EQ(check_trace(*a.trace), "");
  EXPECT_EQ(a.blocks_per_tile, 4);
  ASSERT_TRUE(a.occupancy);
  EXPECT_EQ(a.occupancy->grid_blocks, 8 * 8 * 4);

  RunRequest big;
  big.spec.m = big.spec.n = 46341;
  big.spec.k = 64;  // 4 K tiles of 16: 2 slices
  big.spec.kernel = "splitk";
  big.spec.tile = 2;
  big.policy = MeasurePolicy::fixed(1);
  try {
    backend->validate(big, false);
  } catch (const ValidationError& e) {
    GTEST_SKIP() << "does not fit this GPU: " << e.what();
  }
  const RunResult r = backend->run(big, CancelToken());
  EXPECT_TRUE(r.error.passed) << r.error.bad_elements << " elements wrong; worst at row " << r.error.worst_row
                              << ", col " << r.error.worst_col;
  EXPECT_EQ(r.blocks_per_tile, 2);
}

// wgmma_tf32 tile 512: two blocks of a cluster make one 256 x 256 tile of C, blockIdx.z a block's 128
// columns. N = 300 leaves the second cluster's second block wholly past N (it only loads its half of A for
// the other block). The trace says the blocks split columns, not K; and without the workspace its padded
// rows need (N % 4 != 0) the launch is refused with the byte count instead of running another kernel.
// Stream-K: whole rows of tiles within the whole waves made one block each (rung 9's kernel), the rest shared
// by k tiles unless the last wave is nearly full; a shared tile's partials are added in K order by the last
// segment to finish, so C is the same bits from launch to launch. The trace has a record per segment: every
// tile's segments start at K step 0 and cover its K in order, the shared ones on several SMs; the whole
// tiles come first, whole rows of them, never more than the whole waves hold.
TEST(StreamK, IsDeterministicAndTracesEverySegmentOfEveryTile) {
  REQUIRE_GPU(backend);
  const int sms = backend->device_info().sm_count;
  // 3000^3: 24 x 12 = 288 tiles of 128 x 256 (2 whole waves of 132 and 24 tiles: shared); 1000 x 1001 x 1003:
  // 8 x 4 = 32 tiles, all shared; 4099 x 4100 x 37: 33 x 17 = 561 tiles, 4 waves and 33 more, whole rows
  // end at tile 527 (so 34 are shared), 5 k tiles each; 17^3 and 33 x 40 x 33: one tile, fewer k tiles than
  // SMs (as many units as k tiles); 2048^3: 128 tiles, a last wave of 97 % (on 132 SMs): none shared.
  for (auto [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{3000, 3000, 3000},
                                                                           {1000, 1001, 1003},
                                                                           {4099, 4100, 37},
                                                                           {17, 17, 17},
                                                                           {33, 40, 33},
                                                                           {2048, 2048, 2048}}) {
    SCOPED_TRACE(describe({"streamk", 256}, m, n, k));
    RunRequest req = profiled("streamk", 256, m, n, k, 2);
    req.keep_output = true;
    const RunResult a = backend->run(req, CancelToken());
    req.profile = false;
    const RunResult b = backend->run(req, CancelToken());
    const RunResult c = backend->run(req, CancelToken());
    ASSERT_TRUE(a.error.passed && b.error.passed && c.error.passed) << a.error.max_abs_err;
    ASSERT_TRUE(a.c && b.c && c.c);
    EXPECT_EQ(std::memcmp(a.c->data.data(), b.c->data.data(), a.c->data.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(a.c->data.data(), c.c->data.data(), a.c->data.size() * sizeof(float)), 0);
    ASSERT_TRUE(a.trace);
    const TileTrace& t = *a.trace;
    EXPECT_EQ(check_trace(t), "");
    EXPECT_TRUE(t.k_segments);
    EXPECT_EQ(t.grid_x, int((n + 255) / 256));
    EXPECT_EQ(t.grid_y, int((m + 127) / 128));
    EXPECT_EQ(t.k_step, 8);
    const int64_t tiles = int64_t(t.grid_x) * t.grid_y, steps = (k + 7) / 8;
    int64_t first_shared = tiles, shared_tiles = 0;
    std::vector<size_t> segments(size_t(tiles), 0);
    for (int64_t tile = 0; tile < tiles; ++tile) {
      SCOPED_TRACE("tile " + std::to_string(tile));
      std::vector<uint32_t> firsts, sm;
      for (int z = 0; z < t.grid_z; ++z) {
        const TileRecord& r = t.records[size_t(z) * size_t(tiles) + size_t(tile)];
        if (r.start_ns == 0) {  // absent: every later one too, and all zero
          EXPECT_EQ(r.end_ns, 0u);
          EXPECT_EQ(r.k_first, 0u);
          continue;
        }
        ASSERT_EQ(size_t(z), firsts.size()) << "a gap before segment " << z;
        EXPECT_GE(r.end_ns, r.start_ns);
        firsts.push_back(r.k_first);
        sm.push_back(r.smid);
      }
      ASSERT_FALSE(firsts.empty());
      EXPECT_EQ(firsts[0], 0u);
      for (size_t i = 1; i < firsts.size(); ++i) {
        EXPECT_GT(firsts[i], firsts[i - 1]);
        EXPECT_LT(int64_t(firsts[i]), steps);
      }
      segments[size_t(tile)] = firsts.size();
      if (firsts.size() > 1) {
        first_shared = std::min(first_shared, tile);
        ++shared_tiles;
      } else if (first_shared < tiles && steps > 1) {
        ADD_FAILURE() << "a whole tile after the first shared one";
      }
    }
    const int64_t rest = tiles % sms;
    const bool share = rest != 0 && double(rest) < kStreamKShareBelowFill * sms && steps > 1;
    EXPECT_EQ(shared_tiles > 0, share);
    if (share) {
      EXPECT_EQ(first_shared % t.grid_x, 0) << "whole tiles in whole rows";
      EXPECT_LE(first_shared, tiles - rest) << "no more whole tiles than the whole waves hold";
      EXPECT_GT(first_shared, tiles - rest - t.grid_x) << "every whole row of the whole waves";
    }
    if (share && first_shared > 0) {
      // The whole tiles run on a high-priority stream, the shared units on the caller's: each SM takes a unit
      // as soon as it is done with its whole tiles, before the last of them ends elsewhere.
      uint64_t last_whole_end = 0, first_unit_start = UINT64_MAX;
      for (int64_t tile = 0; tile < tiles; ++tile)
        for (int z = 0; z < t.grid_z; ++z) {
          const TileRecord& r = t.records[size_t(z) * size_t(tiles) + size_t(tile)];
          if (r.start_ns == 0) continue;
          if (tile < first_shared)
            last_whole_end = std::max(last_whole_end, r.end_ns);
          else
            first_unit_start = std::min(first_unit_start, r.start_ns);
        }
      EXPECT_LT(first_unit_start, last_whole_end) << "the shared units waited for every whole tile";
    }
    ASSERT_TRUE(a.occupancy);
    // The launches' blocks: one per whole tile, then one per unit (as many as k tiles to share, at most SMs;
    // where no tile is whole and each has 4 SMs or more, the same number for each tile).
    const int64_t whole = share ? first_shared : tiles, shared = tiles - whole;
    int64_t units = sms;
    if (whole == 0 && sms / shared >= 4) units = sms / shared * shared;
    units = share ? std::min<int64_t>(units, shared * steps) : 0;
    if (share && whole == 0 && units % shared == 0)  // no unit makes pieces of two tiles
      for (int64_t tile = 0; tile < tiles; ++tile)
        EXPECT_EQ(segments[size_t(tile)], size_t(units / shared)) << "tile " << tile;
    EXPECT_EQ(a.occupancy->grid_blocks, whole + units);
  }
}

TEST(WgmmaPair, TakesItsTilesInBandsOfEightRowsAndTracesEachAtItsOwnPlace) {
  REQUIRE_GPU(backend);
  if (backend->device_info().sm != 90) GTEST_SKIP() << "wgmma_tf32 runs on compute capability 9.0 only";
  // 16 rows x 32 columns of tiles. Row by row, the first wave (up to 66 clusters) would span rows 0-2 and
  // every column; in bands of 8 rows it is rows 0-7 of columns 0-8 (tile_order.hpp).
  const RunRequest req = profiled("wgmma_tf32", 512, 4096, 8192, 64, 1);
  const RunResult r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.error.passed) << r.error.bad_elements << " elements wrong";
  ASSERT_TRUE(r.trace);
  ASSERT_EQ(check_trace(*r.trace), "");  // every tile's record written once, by its own blocks
  ASSERT_EQ(r.trace->grid_x, 32);
  ASSERT_EQ(r.trace->grid_y, 16);
  const size_t tiles = 32 * 16;
  std::vector<std::pair<uint64_t, size_t>> starts;  // a tile's first start, and the tile
  for (size_t t = 0; t < tiles; ++t)
    starts.push_back({std::min(r.trace->records[t].start_ns, r.trace->records[tiles + t].start_ns), t});
  std::sort(starts.begin(), starts.end());
  for (size_t i = 0; i < 48; ++i) {
    const size_t row = starts[i].second / 32, col = starts[i].second % 32;
    EXPECT_TRUE(row < 8 && col < 9) << "the " << i << "th tile to start is (" << row << ", " << col << ")";
  }
}

TEST(WgmmaPair, TracesTwoBlocksPerTileByColumnsAndRefusesWithoutItsWorkspace) {
  REQUIRE_GPU(backend);
  if (backend->device_info().sm != 90) GTEST_SKIP() << "wgmma_tf32 runs on compute capability 9.0 only";
  const RunRequest req = profiled("wgmma_tf32", 512, 1000, 300, 72, 1);
  const RunResult r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.error.passed) << r.error.bad_elements << " elements wrong; worst at row " << r.error.worst_row
                              << ", col " << r.error.worst_col;
  ASSERT_TRUE(r.trace);
  EXPECT_TRUE(r.trace->z_splits_columns);
  EXPECT_EQ(r.trace->grid_z, 2);
  EXPECT_EQ(r.trace->grid_x, 2);  // ceil(300 / 256)
  EXPECT_EQ(r.trace->grid_y, 4);  // ceil(1000 / 256)
  EXPECT_EQ(r.trace->tile_m, 256);
  EXPECT_EQ(r.trace->tile_n, 256);
  EXPECT_EQ(r.trace->records.size(), 2u * 4u * 2u);
  EXPECT_EQ(check_trace(*r.trace), "");
  EXPECT_EQ(describe_grid(*r.trace),
            "8 tiles of 256 x 256, each 2 blocks of 128 columns (a cluster): 16 blocks");
  EXPECT_EQ(r.blocks_per_tile, 2);

  // Its padded rows' workspace.
  const std::string why = refusal_without_workspace("wgmma_tf32", 512, 4099, 4099, 4099);
  EXPECT_NE(why.find("needs a workspace of"), std::string::npos) << why;
}

// wgmma_tf32 tiles 128, 256 and 512 (pairs) where their blocks fill at most half the SMs: K in slices (as
// many as the SMs hold copies of the grid, at most 4, at least 4 K tiles of 32 each), each slice adding a
// share of the tile's partials in slice order, so C is the same bits from launch to launch. Aligned rows (TMA
// straight from A and B) and rows TMA cannot read (A and B copied after the partials in the workspace); a
// full wave is not split; without the workspace its partials need, the launch is refused with the byte count.
TEST(WgmmaSplit, CutsKWhereTheTilesLeaveSmsIdleDeterministicallyAndTracesEverySlice) {
  REQUIRE_GPU(backend);
  const DeviceInfo d = backend->device_info();
  if (d.sm != 90) GTEST_SKIP() << "wgmma_tf32 runs on compute capability 9.0 only";
  struct Case {
    int64_t m, n, k;
  };
  // Tile 256's blocks and tile 512's pairs' halves are the same pieces of 256 rows x 128 columns: 8 x 4 of
  // them at these shapes, each a block of every slice (the pairs' two halves one cluster). Tile 128's are
  // 128 x 128: 8 x 8 of them, so half as many slices (2 on a GPU of 128 to 255 SMs).
  for (int tile : {128, 256, 512})
    for (const Case& c : {Case{1024, 1024, 1024}, Case{1000, 1001, 1003}}) {
      SCOPED_TRACE("tile " + std::to_string(tile) + ", " + std::to_string(c.m) + " x " + std::to_string(c.n) +
                   " x " + std::to_string(c.k));
      const int rows = tile == 128 ? 8 : 4, tiles = 8 * rows;  // 128 columns x 128 or 256 rows
      const int want = 2 * tiles > d.sm_count ? 1 : std::min({4, d.sm_count / tiles, 32 / 4});
      if (tile == 128 && d.sm_count >= 128 && d.sm_count < 192) EXPECT_EQ(want, 2);
      bool ok = false;
      const RunResult a = profiled_same_bits_twice(*backend, "wgmma_tf32", tile, c.m, c.n, c.k, &ok);
      ASSERT_TRUE(ok);
      ASSERT_TRUE(a.trace);
      EXPECT_EQ(a.trace->grid_x, 8);
      EXPECT_EQ(a.trace->grid_y, rows);
      EXPECT_EQ(a.trace->grid_z, want);
      EXPECT_EQ(a.trace->records.size(), size_t(tiles) * size_t(want));
      EXPECT_EQ(check_trace(*a.trace), "");
      EXPECT_EQ(a.blocks_per_tile, want);
      ASSERT_TRUE(a.occupancy);
      EXPECT_EQ(a.occupancy->grid_blocks, tiles * want);
    }
  // 2048^3: 128 tiles (tile 128: 256), more than half of any H100's SMs: one block per tile (tile 512: a pair
  // per 256 x 256 tile, its halves the trace's z).
  for (int tile : {128, 256, 512}) {
    const RunResult full = backend->run(profiled("wgmma_tf32", tile, 2048, 2048, 2048, 1), CancelToken());
    ASSERT_TRUE(full.error.passed);
    ASSERT_TRUE(full.trace);
    EXPECT_EQ(full.trace->grid_z, tile == 512 ? 2 : 1);
    EXPECT_EQ(full.blocks_per_tile, tile == 512 ? 2 : 1);
    // The slices' partials' workspace.
    const std::string why = refusal_without_workspace("wgmma_tf32", tile, 1024, 1024, 1024);
    EXPECT_NE(why.find("needs a workspace of"), std::string::npos) << why;
  }
}

// Where the tiles make whole waves and a partial last one, wgmma_tf32 tile 256 makes the rows of tiles the
// whole waves hold one block a tile, and the remaining rows in slices of K beside them (tma_tail). On 132
// SMs, at 2600 x 1700 (11 x 14 = 154 tiles of 256 x 128, 22 past the first wave) it makes 9 rows whole and
// 2 rows' 28 tiles in 4 slices. C is right, the same bits run to run, and the trace is one of K segments:
// every tile's slice 0, and a record per slice for the tail's tiles. Tile 128 (slower with a tail) has none:
// at 1664 x 1408 (13 x 11 = 143 tiles of 128 x 128) one block a tile.
TEST(WgmmaTail, TheRowsPastTheWholeWavesAreCutInKBesideThemAndTheSameBitsEveryRun) {
  REQUIRE_GPU(backend);
  const DeviceInfo d = backend->device_info();
  if (d.sm != 90) GTEST_SKIP() << "wgmma_tf32 runs on compute capability 9.0 only";
  struct Case {
    int tile;
    int64_t m, n, k;
    int rows, cols, whole_rows;
  };
  for (const Case& c : {Case{128, 1664, 1408, 512, 13, 11, 13}, Case{128, 1661, 1405, 509, 13, 11, 13},
                        Case{256, 2600, 1700, 700, 11, 14, 9}, Case{256, 2599, 1699, 701, 11, 14, 9}}) {
    SCOPED_TRACE("tile " + std::to_string(c.tile) + ", " + std::to_string(c.m) + " x " + std::to_string(c.n) +
                 " x " + std::to_string(c.k));
    bool ok = false;
    const RunResult a = profiled_same_bits_twice(*backend, "wgmma_tf32", c.tile, c.m, c.n, c.k, &ok);
    ASSERT_TRUE(ok);
    ASSERT_TRUE(a.trace);
    EXPECT_EQ(check_trace(*a.trace), "");
    EXPECT_EQ(a.trace->grid_x, c.cols);
    EXPECT_EQ(a.trace->grid_y, c.rows);
    if (d.sm_count != 132) continue;  // the cut below is the one of 132 SMs
    const int tail_tiles = (c.rows - c.whole_rows) * c.cols;
    if (tail_tiles == 0) {  // tile 128: one block a tile
      EXPECT_FALSE(a.trace->k_segments);
      EXPECT_EQ(a.trace->grid_z, 1);
      EXPECT_EQ(a.blocks_per_tile, 1);
      continue;
    }
    EXPECT_TRUE(a.trace->k_segments);
    EXPECT_EQ(a.trace->grid_z, 4);
    size_t present_records = 0;
    for (const TileRecord& r : a.trace->records) present_records += present(r);
    EXPECT_EQ(present_records, size_t(c.whole_rows * c.cols + 4 * tail_tiles));
    for (int row = 0; row < c.rows; ++row)
      for (int col = 0; col < c.cols; ++col) {
        const size_t tile = size_t(row) * size_t(c.cols) + size_t(col);
        EXPECT_EQ(tile_segments(*a.trace, tile), row < c.whole_rows ? 1 : 4) << row << "," << col;
      }
    ASSERT_TRUE(a.occupancy);
    EXPECT_EQ(a.occupancy->grid_blocks, c.whole_rows * c.cols + 4 * tail_tiles);
  }
}

#undef REQUIRE_GPU  // this file's own (a unity build compiles the next test file after it)

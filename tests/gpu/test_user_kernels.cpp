// A person's own kernel on the GPU, through the same engine as the built-ins (Backend::run) and the worker
// process: the example kernels pass or fail exactly as they should, with the error where the bug is; a kernel
// that faults, one that never finishes and a worker that dies are survived, and the next run works; a kernel
// that writes into A cannot touch the app's A or the reference; a kernel that writes nothing is reported;
// launches the device cannot take are refused before they are tried; the traced build covers every tile once;
// compute-sanitizer finds the missing barrier. SKIP without a device.
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/engine/cpu_gemm.hpp"
#include "core/engine/matrix.hpp"
#include "core/engine/measure.hpp"
#include "kernels/engine/registry.hpp"
#include "core/engine/schedule.hpp"
#include "kernels/user/user_run.hpp"
#include "kernels/user/user_sanitize.hpp"
#include "core/user_kernel/kernel_workshop.hpp"
#include "core/engine/verify.hpp"
#include "kernels/user/worker_client.hpp"
#include "core/user_kernel/your_kernel.hpp"

using namespace ts;

namespace {

std::shared_ptr<Backend> gpu(std::string* why) {
  if (cuda_device_count(why) == 0) return nullptr;
  static std::shared_ptr<Backend> b = make_backend(BackendChoice::Cuda, nullptr);
  return b;
}

#define REQUIRE_GPU(backend) \
  std::string why_;          \
  auto backend = gpu(&why_); \
  if (!backend) GTEST_SKIP() << "no CUDA device: " << why_

// The worker is the tilescope binary (this test binary is not); the examples are in the source tree, or where
// TILESCOPE_EXAMPLES says (a build folder copied to another machine).
class UserKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* bin = std::getenv("TILESCOPE_TEST_BIN");
    setenv("TILESCOPE_WORKER", bin ? bin : TILESCOPE_BIN, 0);
    static test_dir_holder dir;
    setenv("TILESCOPE_CACHE_DIR", dir.path.c_str(), 1);
  }
  struct test_dir_holder {
    std::string path;
    test_dir_holder() {
      char tmpl[] = "/tmp/tilescope-gpu-cache-XXXXXX";
      path = mkdtemp(tmpl);
    }
  };
  static std::string example(const std::string& name) {
    const char* dir = std::getenv("TILESCOPE_EXAMPLES");
    return std::string(dir ? dir : TILESCOPE_EXAMPLES_DIR) + "/" + name;
  }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = std::string(std::getenv("TILESCOPE_CACHE_DIR")) + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  // Registers the file's kernel with the GPU backend's workshop and returns a request for it (after
  // REQUIRE_GPU).
  RunRequest request(const std::string& path, int64_t m, int64_t n, int64_t k, int tile,
                     const UserKernelOptions& o = {}) {
    UserKernelOptions opt = o;
    if (tile) opt.tile = tile;
    std::string why;
    KernelWorkshop& w = *gpu(&why)->workshop();
    const auto uk = w.open(path, opt);
    w.publish(uk);
    RunRequest req;
    req.spec.kernel = uk->id();
    req.spec.tile = tile ? tile : uk->spec().default_tile;
    req.spec.m = m;
    req.spec.n = n;
    req.spec.k = k;
    req.policy = MeasurePolicy::fixed(2);
    // These tests are about the engine's path; the memcheck guard before a new build's first launch has
    // tests of its own (TheFirstLaunchOfANewBuild...), which turn it on.
    req.memcheck_new_builds = false;
    return req;
  }
};

// The kernel workers this process started (children whose command line says "worker").
std::vector<pid_t> worker_children() {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string pid, comm, state;
    long ppid = 0;
    if (!(stat >> pid >> comm >> state >> ppid) || ppid != long(getpid())) continue;
    std::ifstream cmd(e.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (cmdline.find(std::string("worker") + '\0' + "--fd") != std::string::npos)
      out.push_back(pid_t(std::stol(name)));
  }
  return out;
}

double elapsed(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// |C - reference| per element, with the reference in double on the host.
std::vector<double> errors(const RunRequest& req, const RunResult& r) {
  const auto& s = req.spec;
  const HostMatrix A = generate_input(s.input, s.seed, 0, s.m, s.k);
  const HostMatrix B = generate_input(s.input, s.seed, 1, s.k, s.n);
  const auto ref = cpu_gemm_reference_f64(A.data.data(), B.data.data(), s.m, s.n, s.k);
  std::vector<double> e(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(double(r.c->data[i]) - ref[i]);
    e[i] = std::isfinite(d) ? d : 1e30;
  }
  return e;
}

const char* kFaults =
    "__global__ void faulty(float* C, const float* A, const float* B, int N) {\n"
    "  C[(long long)(blockIdx.x + 1) * (1ll << 40)] = A[0] + B[0] + N;  // far outside any allocation\n"
    "}\n";
const char* kHangs =
    "__global__ void spins(float* C, const float* A, const float* B, int N) {\n"
    "  volatile float* v = C;\n"
    "  while (v[0] == v[0] || true) { }  // never ends\n"
    "  C[0] = A[0] + B[0] + N;\n"
    "}\n";
const char* kWritesA =
    "__global__ void scribbler(float* A, float* B, float* C, int N) {\n"
    "  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (row >= N || col >= N) return;\n"
    "  float s = 0.0f;\n"
    "  for (int k = 0; k < N; ++k) s += A[row * N + k] * B[k * N + col];\n"
    "  C[row * N + col] = s;\n"
    "  A[row * N + col] = 1234.0f;  // where it should not\n"
    "  B[row * N + col] = -1234.0f;\n"
    "}\n";
const char* kWritesNothing =
    "__global__ void lazy(float* C, const float* A, const float* B, int N) {\n"
    "  if (N < 0) C[0] = A[0] + B[0];\n"
    "}\n";

// Computes C on its first launch only: later, every block finds all of the first launch's blocks done and
// returns, leaving the first answer in C (a result cache). `NAME` differs per test: a new name is a module
// loaded afresh in the worker, with its counter at 0.
std::string caching_kernel(const std::string& name) {
  return "__device__ unsigned int blocks_done = 0;\n"
         "__global__ void " +
         name +
         "(float* A, float* B, float* C, int N) {\n"
         "  if (blocks_done >= gridDim.x * gridDim.y) return;  // C holds the answer already\n"
         "  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (row < N && col < N) {\n"
         "    float s = 0.0f;\n"
         "    for (int k = 0; k < N; ++k) s += A[row * N + k] * B[k * N + col];\n"
         "    C[row * N + col] = s;\n"
         "  }\n"
         "  __syncthreads();\n"
         "  if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(&blocks_done, 1u);\n"
         "}\n";
}

}  // namespace

// [SECTION] The examples, each exactly as it should be.
TEST_F(UserKernels, TheClassicExamplePassesOnEveryShapeAndTile) {
  REQUIRE_GPU(backend);
  for (int tile : {8, 16, 32})
    for (int64_t n : {1, 17, 100, 1000, 1024}) {
      RunRequest req = request(example("tiled_classic.cu"), n, n, n, tile);
      req.keep_output = true;
      const RunResult r = backend->run(req, CancelToken());
      SCOPED_TRACE("T=" + std::to_string(tile) + " N=" + std::to_string(n));
      EXPECT_TRUE(r.error.passed) << r.error.max_abs_err;
      EXPECT_TRUE(r.note.empty()) << r.note;
      const auto e = errors(req, r);
      EXPECT_LE(*std::max_element(e.begin(), e.end()), r.error.tolerance);
      EXPECT_EQ(r.samples_ms.size(), 2u);
      EXPECT_EQ(r.device, backend->device_name());
    }
}

TEST_F(UserKernels, TheFloorKExampleFailsExactlyWhenTheTileDoesNotDivideK) {
  REQUIRE_GPU(backend);
  for (int tile : {8, 16, 32})
    for (int64_t k : {int64_t(tile) * 8, int64_t(tile) * 8 + 3}) {
      RunRequest req = request(example("bug_floor_k.cu"), 90, 70, k, tile);
      req.keep_output = true;
      const RunResult r = backend->run(req, CancelToken());
      SCOPED_TRACE("T=" + std::to_string(tile) + " K=" + std::to_string(k));
      EXPECT_EQ(r.error.passed, k % tile == 0) << r.error.max_abs_err;
      if (k % tile != 0) {
        // The error map is non-zero (nearly) everywhere: every element misses the last partial tile.
        const auto e = errors(req, r);
        int64_t nonzero = 0;
        for (double d : e) nonzero += d > r.error.tolerance;
        EXPECT_GT(nonzero, int64_t(e.size()) * 9 / 10);
      }
    }
}

TEST_F(UserKernels, TheSymmetricExampleAndTiledMirrorShowATriangle) {
  REQUIRE_GPU(backend);
  for (bool builtin : {false, true}) {
    RunRequest req;
    if (builtin) {
      req.spec.kernel = "tiled_mirror";
      req.spec.tile = 16;
      req.spec.m = req.spec.n = req.spec.k = 300;
      req.policy = MeasurePolicy::fixed(1);
    } else {
      req = request(example("bug_symmetric.cu"), 300, 300, 300, 16);
    }
    req.spec.input = InputKind::Symmetric;
    req.keep_output = true;
    const RunResult r = backend->run(req, CancelToken());
    SCOPED_TRACE(builtin ? "tiled_mirror" : "bug_symmetric.cu");
    EXPECT_FALSE(r.error.passed);
    const auto e = errors(req, r);
    int64_t upper_bad = 0, lower_bad = 0;
    for (int64_t i = 0; i < 300; ++i)
      for (int64_t j = 0; j < 300; ++j)
        (j >= i ? upper_bad : lower_bad) += e[size_t(i * 300 + j)] > r.error.tolerance;
    EXPECT_EQ(upper_bad, 0) << "on and above the diagonal the result is right";
    EXPECT_GT(lower_bad, 300 * 299 / 2 * 9 / 10) << "below it, B A instead of A B";
  }
}

TEST_F(UserKernels, TheMissingSyncExampleIsRightWithOneStepAndCaughtByRacecheck) {
  REQUIRE_GPU(backend);
  // One k-tile: nothing overwrites the tiles, no race, a right result.
  RunRequest one = request(example("bug_missing_sync.cu"), 16, 16, 16, 16);
  EXPECT_TRUE(backend->run(one, CancelToken()).error.passed);
  // The race itself: compute-sanitizer racecheck, run from the worker as the window's action does.
  std::string why;
  if (find_compute_sanitizer(&why).empty()) GTEST_SKIP() << why;
  const KernelWorkshop& w = *backend->workshop();
  const auto uk = w.find(one.spec.kernel);
  ProblemSpec s = one.spec;
  s.m = s.n = s.k = 128;
  const auto reports = w.sanitize(*uk, s, {"racecheck"}, 300);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].ran) << reports[0].problem << "\n" << reports[0].output;
  EXPECT_GT(reports[0].issues, 0) << reports[0].summary << "\n" << reports[0].output;
  // And the classic example is clean under memcheck and racecheck.
  RunRequest classic = request(example("tiled_classic.cu"), 100, 100, 100, 16);
  const auto clean = w.sanitize(*w.find(classic.spec.kernel), classic.spec, {"memcheck", "racecheck"}, 300);
  for (const auto& r : clean) {
    EXPECT_TRUE(r.ran) << r.tool << ": " << r.problem;
    EXPECT_EQ(r.issues, 0) << r.tool << ": " << r.summary << "\n" << r.output;
  }
}

TEST_F(UserKernels, TheBuiltinTiledKernelAsAFileMatchesTheBuiltin) {
  REQUIRE_GPU(backend);
  RunRequest req = request(example("tiled_as_builtin.cu"), 1000, 700, 300, 32);
  req.keep_output = true;
  req.profile = true;
  const RunResult r = backend->run(req, CancelToken());
  EXPECT_TRUE(r.error.passed);
  ASSERT_TRUE(r.occupancy);
  // The same resources as the built-in (compiled by nvcc) at the same tile.
  ProblemSpec b = req.spec;
  b.kernel = "tiled";
  const auto li = backend->launch_info(b);
  ASSERT_TRUE(li);
  EXPECT_EQ(r.occupancy->res.static_smem, li->occupancy.res.static_smem);
  EXPECT_EQ(r.occupancy->res.threads_per_block, li->occupancy.res.threads_per_block);
  EXPECT_EQ(r.occupancy->blocks_per_sm, li->occupancy.blocks_per_sm);
  EXPECT_EQ(r.occupancy->blocks_per_sm, r.occupancy->api_blocks_per_sm);
}

// [SECTION] Surviving what a kernel can do to its process.
TEST_F(UserKernels, AFaultIsReportedInWordsTheWorkerRestartsAndTheNextRunWorks) {
  REQUIRE_GPU(backend);
  RunRequest bad = request(write("faulty.cu", kFaults), 256, 256, 256, 16);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    backend->run(bad, CancelToken());
    FAIL() << "a fault went unnoticed";
  } catch (const WorkerFailure& e) {
    EXPECT_EQ(e.kind(), WorkerFailure::Kind::Fault) << e.what();
    const std::string msg = e.what();
    EXPECT_NE(msg.find("illegal memory access"), std::string::npos) << msg;
    EXPECT_NE(msg.find("The worker was restarted"), std::string::npos) << msg;
    EXPECT_GE(e.restart_s(), 0.0);
    std::printf("fault: noticed after %.3f s, new worker ready %.3f s later (%.3f s in all)\n", e.detect_s(),
                e.restart_s(), elapsed(t0));
  }
  // Counted, for the window's GL self-check (a fault can break OpenGL on the GPU).
  const Backend::Incidents inc = backend->incidents();
  EXPECT_GE(inc.count, 1u);
  EXPECT_NE(inc.latest.find("illegal memory access"), std::string::npos) << inc.latest;
  RunRequest good = request(example("tiled_classic.cu"), 512, 512, 512, 16);
  EXPECT_TRUE(backend->run(good, CancelToken()).error.passed);
  // Built-in kernels were never in danger (the app's context is fine).
  RunRequest builtin;
  builtin.spec.m = builtin.spec.n = builtin.spec.k = 256;
  EXPECT_TRUE(backend->run(builtin, CancelToken()).error.passed);
}

// The guard (RunRequest::memcheck_new_builds): the faulting kernel never reaches the GPU. memcheck finds the
// write on the first launch of its build, the run is refused with the error and its line, no worker faults or
// restarts, and no incident is counted (the window's GL self-check has nothing to look again at).
TEST_F(UserKernels, TheFirstLaunchOfANewBuildRunsUnderMemcheckAndAnOutOfBoundsWriteIsRefusedWithItsLine) {
  REQUIRE_GPU(backend);
  std::string why;
  if (find_compute_sanitizer(&why).empty()) GTEST_SKIP() << why;
  RunRequest bad = request(write("guarded_faulty.cu", kFaults), 1000, 1000, 1000, 16);
  bad.memcheck_new_builds = true;
  const uint64_t incidents = backend->incidents().count;
  const std::vector<pid_t> workers = worker_children();
  try {
    backend->run(bad, CancelToken());
    FAIL() << "the guard let a faulting kernel through";
  } catch (const MemcheckRefusal& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("was not run on the GPU"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Invalid __global__ write"), std::string::npos) << msg;
    EXPECT_NE(msg.find("guarded_faulty.cu:2"), std::string::npos) << msg;  // the line of the write
    EXPECT_NE(msg.find("488 x 488 x 488"), std::string::npos) << msg;  // 1000 made small, its partial tile
  }
  EXPECT_EQ(backend->incidents().count, incidents);
  EXPECT_EQ(worker_children(), workers);  // the same worker (or none): nothing faulted
  // A correct kernel passes the guard once per build, and says so on that run only.
  RunRequest good = request(example("tiled_classic.cu"), 300, 300, 300, 16);  // square: told one size
  good.memcheck_new_builds = true;  // the first guarded run of this build in this test's cache
  const RunResult first = backend->run(good, CancelToken());
  EXPECT_TRUE(first.error.passed);
  EXPECT_NE(first.note.find("checked under compute-sanitizer memcheck at 300 x 300 x 300: no errors"),
            std::string::npos)
      << first.note;
  const RunResult second = backend->run(good, CancelToken());
  EXPECT_TRUE(second.error.passed);
  EXPECT_EQ(second.note.find("memcheck"), std::string::npos) << second.note;
}

TEST_F(UserKernels, AKernelThatNeverFinishesIsStoppedAfterTheHangLimit) {
  REQUIRE_GPU(backend);
  UserKernelOptions o;
  o.hang_limit_s = 1.0;
  RunRequest bad = request(write("spins.cu", kHangs), 64, 64, 64, 16, o);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    backend->run(bad, CancelToken());
    FAIL() << "a hang went unnoticed";
  } catch (const WorkerFailure& e) {
    EXPECT_EQ(e.kind(), WorkerFailure::Kind::Hang) << e.what();
    EXPECT_NE(std::string(e.what()).find("did not finish"), std::string::npos) << e.what();
    EXPECT_GE(e.detect_s(), 1.0);  // not before the limit (how much later is the machine's business)
    std::printf("hang: noticed after %.3f s, new worker ready %.3f s later (%.3f s in all)\n", e.detect_s(),
                e.restart_s(), elapsed(t0));
  }
  RunRequest good = request(example("tiled_classic.cu"), 256, 256, 256, 16);
  EXPECT_TRUE(backend->run(good, CancelToken()).error.passed);
}

TEST_F(UserKernels, AWorkerKilledFromOutsideIsNoticedAndReplaced) {
  REQUIRE_GPU(backend);
  UserKernelOptions o;
  o.hang_limit_s = 30;
  RunRequest bad = request(write("spins2.cu", kHangs), 64, 64, 64, 16, o);
  // Start the worker with a good run, then kill it while the spinning kernel runs.
  RunRequest good = request(example("tiled_classic.cu"), 64, 64, 64, 16);
  ASSERT_TRUE(backend->run(good, CancelToken()).error.passed);
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    for (pid_t p : worker_children()) kill(p, SIGKILL);  // our own worker, by its process id
  });
  try {
    backend->run(bad, CancelToken());
    FAIL() << "a dead worker went unnoticed";
  } catch (const WorkerFailure& e) {
    EXPECT_EQ(e.kind(), WorkerFailure::Kind::Died) << e.what();
    EXPECT_NE(std::string(e.what()).find("killed by signal 9"), std::string::npos) << e.what();
  }
  killer.join();
  EXPECT_TRUE(backend->run(good, CancelToken()).error.passed);
}

TEST_F(UserKernels, AKernelThatWritesIntoAAndBCannotChangeTheAppsInputsOrTheReference) {
  REQUIRE_GPU(backend);
  RunRequest req = request(write("scribbler.cu", kWritesA), 64, 64, 64, 16);
  req.keep_store = true;
  const RunResult r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.store);
  const HostMatrix A = generate_input(req.spec.input, req.spec.seed, 0, 64, 64);
  const HostMatrix B = generate_input(req.spec.input, req.spec.seed, 1, 64, 64);
  EXPECT_EQ(r.store->copy(MatrixId::A).data, A.data) << "the app's A changed";
  EXPECT_EQ(r.store->copy(MatrixId::B).data, B.data) << "the app's B changed";
  // The reference was made from the app's A and B: C - reference is C - A B, whatever the kernel did to its
  // own copies.
  const auto ref = cpu_gemm_reference_f64(A.data.data(), B.data.data(), 64, 64, 64);
  const HostMatrix C = r.store->copy(MatrixId::C), E = r.store->copy(MatrixId::Error);
  // E is C - reference rounded to float: within half an ulp of |C| (C is huge here: the kernel scribbled
  // over its A and B) plus the FP32 reference's own error. A reference made from the scribbled copies would
  // be off by about |C| itself.
  for (size_t i = 0; i < ref.size(); i += 97)
    EXPECT_NEAR(E.data[i], C.data[i] - ref[i], 1e-3 + std::fabs(C.data[i]) * 0x1p-23);
}

TEST_F(UserKernels, AKernelThatLeavesCUntouchedIsReported) {
  REQUIRE_GPU(backend);
  RunRequest req = request(write("lazy.cu", kWritesNothing), 100, 100, 100, 16);
  const RunResult r = backend->run(req, CancelToken());
  EXPECT_FALSE(r.error.passed);
  EXPECT_EQ(r.error.bad_elements, 100 * 100);
  EXPECT_NE(r.note.find("C was left untouched"), std::string::npos) << r.note;
}

// [SECTION] Changing inputs (issue 30): a kernel that caches its answer passes on fixed inputs (its first
// launch computes, its timed ones return at once: a record that is none), and fails with the option, which
// times it on input sets switched between samples in the worker and checks C against their reference.
TEST_F(UserKernels, AKernelThatCachesItsAnswerIsCaughtOnlyWithChangingInputs) {
  REQUIRE_GPU(backend);
  RunRequest fixed = request(write("caches_fixed.cu", caching_kernel("caches_fixed")), 256, 256, 256, 16);
  fixed.policy = MeasurePolicy::fixed(5);
  const RunResult f = backend->run(fixed, CancelToken());
  EXPECT_TRUE(f.error.passed) << "on fixed inputs the cache goes unseen: " << f.note;
  EXPECT_EQ(f.changing.sets, 0);

  RunRequest req = request(write("caches_changing.cu", caching_kernel("caches_changing")), 256, 256, 256, 16);
  req.policy = MeasurePolicy::fixed(5);
  req.policy->changing_inputs = true;
  req.keep_store = true;
  const RunResult r = backend->run(req, CancelToken());
  EXPECT_FALSE(r.error.passed);
  EXPECT_FALSE(r.changing.passed);
  EXPECT_EQ(r.changing.sets, MeasurePolicy::kChangingInputSets);
  EXPECT_EQ(r.changing.stats.count, 5);  // both timings: the fixed inputs' and the changing ones'
  EXPECT_EQ(r.stats.count, 5);
  EXPECT_EQ(
      r.changing.verdict.rfind("C did not change when A and B did: the kernel returned an earlier answer", 0),
      0u)
      << r.changing.verdict;
  EXPECT_NE(r.note.find("C did not change when A and B did"), std::string::npos) << r.note;
  EXPECT_GT(r.error.bad_elements, 256 * 256 * 9 / 10);  // the first answer, not this one: nearly all wrong
  // The heatmaps still show the run's own inputs and its answer for them (C - reference small).
  ASSERT_TRUE(r.store);
  const HostMatrix E = r.store->copy(MatrixId::Error);
  double worst = 0;
  for (float e : E.data) worst = std::max(worst, double(std::fabs(e)));
  EXPECT_LT(worst, 1e-2);
}

// A correct kernel, a person's and a built-in one, passes with changing inputs and reports both timings.
TEST_F(UserKernels, CorrectKernelsPassWithChangingInputsAndReportBothTimings) {
  REQUIRE_GPU(backend);
  RunRequest mine = request(example("tiled_classic.cu"), 300, 300, 300, 16);
  RunRequest builtin = mine;
  builtin.spec.kernel = "tiled";
  builtin.spec.tile = 16;
  for (RunRequest* req : {&mine, &builtin}) {
    req->policy = MeasurePolicy::fixed(4, 1);
    req->policy->changing_inputs = true;
    req->keep_store = true;
    const RunResult r = backend->run(*req, CancelToken());
    EXPECT_TRUE(r.error.passed) << req->spec.kernel << ": " << r.note;
    EXPECT_TRUE(r.changing.passed) << r.changing.verdict;
    EXPECT_TRUE(r.changing.measured());
    EXPECT_EQ(r.changing.stats.count, 4);
    EXPECT_EQ(r.changing.verdict.rfind("C matched the reference of input set", 0), 0u) << r.changing.verdict;
    EXPECT_NE(r.policy.find("changing inputs"), std::string::npos) << r.policy;
    // C and the reference of the run's own inputs again (put back after the changing inputs): C - ref is
    // small, and C is A B of the run's own A and B.
    ASSERT_TRUE(r.store);
    const HostMatrix C = r.store->copy(MatrixId::C), E = r.store->copy(MatrixId::Error);
    const HostMatrix A = generate_input(req->spec.input, req->spec.seed, 0, 300, 300);
    const HostMatrix B = generate_input(req->spec.input, req->spec.seed, 1, 300, 300);
    const auto ref = cpu_gemm_reference_f64(A.data.data(), B.data.data(), 300, 300, 300);
    for (size_t i = 0; i < ref.size(); i += 101) {
      EXPECT_NEAR(C.data[i], ref[i], 1e-3) << i;
      EXPECT_LT(std::fabs(E.data[i]), 1e-3) << i;
    }
  }
}

// A person's short launch is timed as the built-in kernels' are: in batches of back-to-back launches (the
// bench policy's min_sample_ms), the three single launches that size the batch counted as warm-ups; one
// launch a sample with a cold L2 (each launch flushed before). On changing inputs each launch of a batch
// reads the next set, and C still matches the reference of the last launch's set.
TEST_F(UserKernels, AShortLaunchIsTimedInBatchesAsTheBuiltInKernelsAre) {
  REQUIRE_GPU(backend);
  RunRequest req = request(example("tiled_classic.cu"), 256, 256, 256, 16);
  MeasurePolicy p = MeasurePolicy::bench();
  p.warmup_seconds = 0;  // warm-ups by count only: the verification launch and the three probes
  p.min_seconds = 0.01;
  p.max_seconds = 2;
  req.policy = p;
  req.profile = true;
  RunResult r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.timed) << r.note;
  EXPECT_TRUE(r.error.passed);
  EXPECT_GT(r.launches_per_sample, 1);  // a 256^3 launch lasts microseconds; a sample at least 1 ms
  EXPECT_LE(r.launches_per_sample, MeasurePolicy::kMaxLaunchesPerSample);
  EXPECT_EQ(r.warmups, 4);
  EXPECT_GE(r.samples_ms.size(), 10u);
  EXPECT_GT(r.reference_ms, 0.0);  // cuBLAS timed on its own, in batches of as many
  EXPECT_NE(r.policy.find("back to back"), std::string::npos) << r.policy;

  p.cold_l2 = true;
  req.policy = p;
  req.profile = false;
  r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.timed) << r.note;
  EXPECT_EQ(r.launches_per_sample, 1);
  EXPECT_EQ(r.warmups, 3);  // the verification launch and two more: no probes

  p.cold_l2 = false;
  p.changing_inputs = true;
  req.policy = p;
  r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.timed) << r.note;
  EXPECT_GT(r.launches_per_sample, 1);
  EXPECT_TRUE(r.changing.measured());
  EXPECT_TRUE(r.changing.passed) << r.changing.verdict;
}

TEST_F(UserKernels, LaunchesTheDeviceCannotTakeAreRefusedBeforeLaunchWithTheNumbers) {
  REQUIRE_GPU(backend);
  RunRequest too_many = request(example("tiled_classic.cu"), 256, 256, 256, 64);
  try {
    backend->validate(too_many);
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("4096 threads"), std::string::npos) << e.what();
  }
  UserKernelOptions o;
  o.smem = "1000000";
  RunRequest smem = request(write("dyn.cu",
                                  "extern __shared__ float s[];\n__global__ void dyn(float* A, float* B, "
                                  "float* C, int N) { s[threadIdx.x] = A[0]; C[0] = s[0] + B[0] + N; }\n"),
                            256, 256, 256, 16, o);
  try {
    backend->run(smem, CancelToken());
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("1000000 bytes of dynamic shared memory"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("allows at most"), std::string::npos) << e.what();
  }
}

// [SECTION] Occupancy and the tile schedule, as for the built-ins.
TEST_F(UserKernels, TracedUserKernelsCoverEveryTileOnceAndOccupancyMatchesTheApi) {
  REQUIRE_GPU(backend);
  for (int tile : {8, 16, 32}) {
    RunRequest req = request(example("tiled_classic.cu"), 1000, 1000, 1000, tile);
    req.profile = true;
    const RunResult r = backend->run(req, CancelToken());
    SCOPED_TRACE(tile);
    EXPECT_TRUE(r.error.passed);
    ASSERT_TRUE(r.occupancy);
    EXPECT_EQ(r.occupancy->blocks_per_sm, r.occupancy->api_blocks_per_sm);
    EXPECT_EQ(r.occupancy_by_tile.size(), 3u);
    EXPECT_GT(r.reference_ms, 0.0);
    ASSERT_TRUE(r.trace) << r.trace_note;
    const TileTrace& t = *r.trace;
    EXPECT_EQ(check_trace(t), "");
    EXPECT_EQ(t.grid_x, (1000 + tile - 1) / tile);
    EXPECT_EQ(t.grid_y, (1000 + tile - 1) / tile);
    EXPECT_EQ(t.tile_m, tile);
    const ScheduleSummary sum = summarize_schedule(t);
    int used = 0;
    for (int c : sum.tiles_per_sm) used += c > 0;
    EXPECT_GT(used, 1);
    EXPECT_GT(t.traced_ms, 0.0);
    // Tracing costs little: the same kernel body, capped at the plain build's registers.
    EXPECT_LT(t.traced_ms, 1.5 * t.plain_ms + 0.05);
  }
}

TEST_F(UserKernels, ASupersededMeasurementStopsQuickly) {
  REQUIRE_GPU(backend);
  RunRequest req = request(example("tiled_classic.cu"), 2048, 2048, 2048, 16);
  MeasurePolicy p = MeasurePolicy::bench();
  p.min_seconds = p.max_seconds =
      86400;  // a day of samples: only the cancel ends it before the test's timeout
  p.max_samples = 1000000;
  p.max_noise = 0;
  req.policy = p;
  CancelToken cancel;
  std::thread canceller([cancel] {
    // Once the worker samples (this process holds the TimingGate meanwhile); the wait only bounds the test.
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!TimingGate::instance().timing() && std::chrono::steady_clock::now() < limit)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cancel.cancel();
  });
  EXPECT_THROW(backend->run(req, cancel), Cancelled);
  canceller.join();
  RunRequest next = request(example("tiled_classic.cu"), 128, 128, 128, 16);
  EXPECT_TRUE(backend->run(next, CancelToken()).error.passed);
}

#undef REQUIRE_GPU  // this file's own (a unity build compiles the next test file after it)

// Every CUDA kernel x tile x shape against a double-precision CPU reference, through the same engine the
// GUI and the command line use. Without a CUDA device every test reports SKIP.
#include <cmath>
#include <tuple>

#include <gtest/gtest.h>

#include "bench_runner.hpp"
#include "heatmap.hpp"
#include "matrix_store.hpp"
#include "schedule.hpp"
#include "cpu_gemm.hpp"
#include "registry.hpp"
#include "verify.hpp"

using namespace ts;

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

class EveryKernel : public ::testing::TestWithParam<Case> {};

TEST_P(EveryKernel, MatchesTheDoubleReferenceOnEveryShape) {
  REQUIRE_GPU(backend);
  const Case c = GetParam();
  for (auto [m, n, k] : kShapes) {
    RunRequest req;
    req.spec.m = m;
    req.spec.n = n;
    req.spec.k = k;
    req.spec.kernel = c.kernel;
    req.spec.tile = c.tile;
    req.spec.seed = uint64_t(m * 131 + n * 7 + k);
    req.keep_output = true;
    req.samples = 1;
    req.warmup = 0;
    RunResult r = backend->run(req, CancelToken());
    SCOPED_TRACE(c.kernel + " T=" + std::to_string(c.tile) + " shape " + std::to_string(m) + "x" +
                 std::to_string(n) + "x" + std::to_string(k));
    EXPECT_TRUE(r.error.passed) << "vs cuBLAS: max abs err " << r.error.max_abs_err;
    ASSERT_TRUE(r.c);
    const HostMatrix A = generate_input(InputKind::Random, req.spec.seed, 0, m, k);
    const HostMatrix B = generate_input(InputKind::Random, req.spec.seed, 1, k, n);
    const auto ref = cpu_gemm_reference_f64(A.data.data(), B.data.data(), m, n, k);
    const KernelInfo* info = find_kernel(backend->kernels(), c.kernel);
    const double tol =
        tolerance_for(k, max_abs(A.data.data(), A.size()), max_abs(B.data.data(), B.size()), info->tf32);
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double d = std::fabs(double(r.c->data[i]) - ref[i]);
      ASSERT_TRUE(std::isfinite(r.c->data[i])) << "element " << i << " was not written";
      worst = std::max(worst, d);
    }
    EXPECT_LE(worst, tol) << "vs double reference (tolerance " << (r.error.tolerance) << ")";
  }
}

TEST_P(EveryKernel, SymmetricInputsGiveTheRightProductWhichIsNotSymmetric) {
  REQUIRE_GPU(backend);
  const Case c = GetParam();
  for (int64_t n : {33, 96, 129}) {
    RunRequest req;
    req.spec.m = req.spec.n = req.spec.k = n;
    req.spec.kernel = c.kernel;
    req.spec.tile = c.tile;
    req.spec.input = InputKind::Symmetric;
    req.keep_output = true;
    req.samples = 1;
    RunResult r = backend->run(req, CancelToken());
    EXPECT_TRUE(r.error.passed) << c.kernel << " T=" << c.tile << " n=" << n;
    const HostMatrix A = generate_input(InputKind::Symmetric, 1, 0, n, n);
    const HostMatrix B = generate_input(InputKind::Symmetric, 1, 1, n, n);
    const auto ref = cpu_gemm_reference_f64(A.data.data(), B.data.data(), n, n, n);
    const double tol = tolerance_for(n, 1, 1, find_kernel(backend->kernels(), c.kernel)->tf32);
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
  req.samples = 1;
  req.warmup = 0;
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

TEST(DeviceViews, MatchTheHostDownsampleAndErrorStats) {
  REQUIRE_GPU(backend);
  RunRequest req;
  req.spec.m = 300;
  req.spec.n = 200;
  req.spec.k = 64;
  req.keep_output = true;
  req.view_size = 64;
  RunResult r = backend->run(req, CancelToken());
  ASSERT_TRUE(r.views);
  const HeatmapView host_c = downsample(r.c->data.data(), 300, 200, 64, 64, Reduce::Mean);
  ASSERT_EQ(r.views->c.w, host_c.w);
  ASSERT_EQ(r.views->c.h, host_c.h);
  for (size_t i = 0; i < host_c.values.size(); ++i) ASSERT_NEAR(r.views->c.values[i], host_c.values[i], 1e-5);
  EXPECT_EQ(r.views->c.vmin, host_c.vmin);
  EXPECT_EQ(r.views->c.vmax, host_c.vmax);
  const HostMatrix A = generate_input(InputKind::Random, 1, 0, 300, 64);
  const HeatmapView host_a = downsample(A.data.data(), 300, 64, 64, 64, Reduce::Mean);
  for (size_t i = 0; i < host_a.values.size(); ++i) ASSERT_NEAR(r.views->a.values[i], host_a.values[i], 1e-6);
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

TEST(DeviceTiming, ProducesOneSamplePerLaunch) {
  REQUIRE_GPU(backend);
  RunRequest req;
  req.spec.m = req.spec.n = req.spec.k = 512;
  req.spec.tile = 32;
  req.samples = 12;
  RunResult r = backend->run(req, CancelToken());
  EXPECT_EQ(r.times_ms.size(), 12u);
  for (double t : r.times_ms) EXPECT_GT(t, 0.0);
  EXPECT_GT(r.tflops, 0.0);
  EXPECT_EQ(r.backend, "cuda");
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
      req.samples = 1;
      RunResult r = backend->run(req, CancelToken());
      EXPECT_EQ(r.error.passed, k % tile == 0)
          << "T=" << tile << " K=" << k << " err " << r.error.max_abs_err;
      // Every element misses products; a few may miss by less than the tolerance (tiny products).
      if (k % tile != 0) EXPECT_GT(r.error.bad_elements, 70 * 90 * 9 / 10);
    }
}

TEST(TeachingVariants, MissingSyncIsFlaggedAndCorrectWhereNoRaceCanHappen) {
  REQUIRE_GPU(backend);
  const KernelInfo* k = find_kernel(backend->kernels(), "tiled_nosync");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->teaching);
  // With a single k-tile there is no next tile to overwrite the shared memory: no race, correct result.
  RunRequest req;
  req.spec.m = req.spec.n = 100;
  req.spec.k = 16;
  req.spec.kernel = "tiled_nosync";
  req.spec.tile = 16;
  req.samples = 1;
  EXPECT_TRUE(backend->run(req, CancelToken()).error.passed);
  // Its race is proven by compute-sanitizer racecheck (tests/gpu/sanitize.sh), not by a result that may vary.
}

TEST(Bench, MeasuresVerifiesAndRelatesToCublas) {
  REQUIRE_GPU(backend);
  BenchRequest req;
  req.configs = {{"tiled", 16}, {"cublas", 0}, {"tiled_floork", 16}};
  req.shapes = {{256, 256, 250}};
  req.policy.min_samples = 10;
  req.policy.min_seconds = 0.01;
  req.policy.max_seconds = 2;
  BenchMeta meta;
  std::atomic<bool> stop{false};
  int calls = 0;
  auto pts = run_bench(req, &meta, &stop, [&](const BenchPoint&, int, int) { ++calls; });
  relate_to_cublas(pts);
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(calls, 3);
  EXPECT_TRUE(pts[0].verified);
  EXPECT_GE(pts[0].stats.count, 10);
  EXPECT_GT(pts[0].pct_cublas, 0);
  EXPECT_FALSE(pts[2].verified);  // 250 is not a multiple of 16
  EXPECT_EQ(pts[2].stats.count, 0);
  EXPECT_GT(meta.peak_fp32_tflops, 0);
  EXPECT_FALSE(meta.device.empty());
}

TEST(Profile, TracesCoverEveryTileOnceAndOccupancyMatchesTheCudaApi) {
  REQUIRE_GPU(backend);
  for (const auto& k : backend->kernels()) {
    if (!k.has_cuda || k.teaching) continue;
    for (int tile : k.tiles.empty() ? std::vector<int>{0} : k.tiles) {
      RunRequest req;
      req.spec.m = 1000;
      req.spec.n = 700;
      req.spec.k = 300;
      req.spec.kernel = k.id;
      req.spec.tile = tile;
      req.samples = 2;
      req.profile = true;
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
  req.samples = 1;
  req.warmup = 0;
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
    const std::vector<LodRegion> regions = {{0, 0, host->rows, host->cols, 37, 23},
                                            {5, 3, host->rows - 9, host->cols - 4, 50, 41},
                                            {7, 11, 20, 30, 30, 20}};
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

// Heatmaps through GL: the value texture, the colouring shader and the tile grid against the CPU reference.
// Host path (what CI exercises, with Mesa): a host matrix store. With a CUDA device whose GL context EGL can
// create (GPU servers): the same through CUDA-OpenGL interop, resizes, and 1000 map/unmap cycles without a
// leak. Each test reports SKIP, visibly, when its context or device is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "core/engine/backend.hpp"
#include "core/plots/colormap.hpp"
#include "gfx/headless.hpp"
#include "gfx/heatmap_set.hpp"
#include "heatmap_checks.hpp"
#include "gfx/heatmap_gl.hpp"
#include "core/engine/input_gen.hpp"
#include "core/engine/matrix.hpp"
#include "core/engine/matrix_store.hpp"

#if defined(TILESCOPE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "kernels/engine/cuda_backend.hpp"
#endif

using namespace ts;

namespace {

std::unique_ptr<gfx::HeadlessGl> g_gl;
std::string g_gl_why;

gfx::HeadlessGl* gl_context(int cuda_device = -1) {
  if (!g_gl && g_gl_why.empty()) {
    try {
      g_gl =
          std::make_unique<gfx::HeadlessGl>(gfx::make_headless_gl(gfx::GlChoice::Auto, cuda_device, 64, 64));
      std::printf("GL: %s; %s\n", g_gl->note.c_str(), g_gl->gl_renderer().c_str());
    } catch (const std::exception& e) {
      g_gl_why = e.what();
    }
  }
  return g_gl.get();
}

#define REQUIRE_GL(dev) \
  if (!gl_context(dev)) GTEST_SKIP() << "no offscreen OpenGL: " << g_gl_why

std::shared_ptr<HostMatrix> known_matrix(int64_t rows, int64_t cols) {
  auto m = std::make_shared<HostMatrix>(generate_input(InputKind::Random, 7, 0, rows, cols));
  m->at(3, 5) = 25.0f;  // an outlier that max / absmax must keep
  m->at(rows - 1, cols - 1) = -30.0f;
  return m;
}

}  // namespace

TEST(HeatmapHostPath, ValuesAndPictureMatchTheCpuReference) {
  REQUIRE_GL(-1);
  auto a = known_matrix(300, 257);
  auto store = make_host_store(a, a, a, a);
  gfx::HeatmapContext ctx(-1);
  EXPECT_FALSE(ctx.interop().on);
  EXPECT_FALSE(ctx.interop().why.empty());
  gfx::HeatmapLayer layer;
  const Colormap& map = colormaps().front();
  for (Reduce mode : {Reduce::Mean, Reduce::Min, Reduce::Max, Reduce::AbsMax}) {
    SCOPED_TRACE(int(mode));
    const LodRegion r{2, 1, 290, 250, 97, 61};
    const auto res = layer.refresh(ctx, *store, MatrixId::A, r, mode);
    EXPECT_FALSE(res.interop);
    test::expect_values_match(layer.read_values(), *a, r, mode);
    std::vector<float> ref(size_t(r.w) * size_t(r.h));
    // The range is the elements' own min and max, not the reduced values' (a block mean never reaches them).
    const ValueRange vr = lod_reduce(a->data.data(), a->cols, a->rows, a->cols, r, mode, ref.data());
    EXPECT_EQ(res.range.lo, vr.lo);
    EXPECT_EQ(res.range.hi, vr.hi);
    gfx::ColorParams cp;
    cp.lo = vr.lo;
    cp.hi = vr.hi;
    cp.row0 = r.row0, cp.col0 = r.col0, cp.rows = r.rows, cp.cols = r.cols;
    layer.paint(map, cp, 211, 173);
    test::expect_picture_matches(layer.painter()->read_rgba(), 211, 173, ref, r, map, vr.lo, vr.hi);
  }
}

TEST(HeatmapHostPath, NanIsMagentaAndTheTileGridIsDrawnOnTileBoundaries) {
  REQUIRE_GL(-1);
  auto m = std::make_shared<HostMatrix>(64, 64);
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 64; ++j) m->at(i, j) = float(i % 7) - 3.0f;
  m->at(40, 41) = std::nanf("");
  auto store = make_host_store(m, m, m, m);
  gfx::HeatmapContext ctx(-1);
  gfx::HeatmapLayer layer;
  const LodRegion r{0, 0, 64, 64, 64, 64};
  layer.refresh(ctx, *store, MatrixId::C, r, Reduce::Mean);
  const Colormap& map = colormaps().front();
  gfx::ColorParams cp;
  cp.lo = -3, cp.hi = 3, cp.rows = 64, cp.cols = 64, cp.tile_m = 16, cp.tile_n = 16;
  cp.grid_weight = 1;              // lines in pure white on these dark colours, easy to find
  layer.paint(map, cp, 256, 256);  // 4 pixels per element
  const auto px = layer.painter()->read_rgba();
  auto at = [&](int x, int y) { return &px[(size_t(y) * 256 + size_t(x)) * 4]; };
  // Element (40, 41) covers pixels x 164..167, y 160..163 (row 0 at the bottom of the target: GL order).
  const uint8_t* nan = at(165, 161);
  EXPECT_EQ(nan[0], 255);
  EXPECT_EQ(nan[1], 0);
  EXPECT_EQ(nan[2], 255);
  // Tile boundaries at elements 16, 32, 48 -> the pixel whose span crosses 64, 128, 192.
  int lines = 0;
  for (int x = 0; x < 256; ++x) {
    const uint8_t* p = at(x, 10);
    if (p[0] == 255 && p[1] == 255 && p[2] == 255) ++lines;
  }
  EXPECT_GE(lines, 3);
  EXPECT_LE(lines, 8);                  // one or two pixels per boundary (plus the edge), not stripes
  const uint8_t* inside = at(100, 10);  // element col 25: not a boundary
  EXPECT_FALSE(inside[0] == 255 && inside[1] == 255 && inside[2] == 255);

  // With the default weight a line is faint: the pixel on the boundary (col 16 -> x 63 or 64) moves only part
  // of the way from its neighbour's colour, toward white on a dark colour and toward black on a light one,
  // and far less than the data's own contrast (the colours of -3 and 3 at the two ends of the map).
  layer.paint(map, gfx::ColorParams{cp.lo, cp.hi, 0, 0, 64, 64, 16, 16}, 256, 256);
  const auto faint = layer.painter()->read_rgba();
  auto luma = [&](int x, int y) {
    const uint8_t* p = &faint[(size_t(y) * 256 + size_t(x)) * 4];
    return 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
  };
  const auto lo_c = colormap_color(map, -3, -3, 3), hi_c = colormap_color(map, 3, -3, 3);
  const double data_contrast = std::fabs((0.2126 * hi_c[0] + 0.7152 * hi_c[1] + 0.0722 * hi_c[2]) -
                                         (0.2126 * lo_c[0] + 0.7152 * lo_c[1] + 0.0722 * lo_c[2]));
  for (int y : {10, 30, 230}) {  // rows 2, 7 and 57: values -1, 0 and -2 (all dark on this map)
    SCOPED_TRACE(y);
    const int line = std::fabs(luma(63, y) - luma(60, y)) > std::fabs(luma(64, y) - luma(60, y)) ? 63 : 64;
    const double step = luma(line, y) - luma(60, y);
    EXPECT_GT(step, 10.0) << "the line must still be seen";
    EXPECT_LT(step, data_contrast / 3) << "the line must be fainter than the data";
  }
}

namespace {

// A remote engine's store whose answers come when the test lets them, reduced from host matrices, over a link
// whose figures the test sets: what a heatmap asks, and in which order, is seen without any link's timing.
class HeldRemoteStore : public MatrixStore {
 public:
  struct Held : PendingReduce {
    std::shared_ptr<const MatrixStore> from;
    MatrixId id = MatrixId::A;
    LodRegion region;
    Reduce mode = Reduce::Mean;
    bool released = false;
    bool ready() const override { return released; }
    ValueRange take(float* out) override { return from->reduce(id, region, mode, out); }
  };
  explicit HeldRemoteStore(std::shared_ptr<const MatrixStore> inner) : m_inner(std::move(inner)) {}
  int64_t rows(MatrixId id) const override { return m_inner->rows(id); }
  int64_t cols(MatrixId id) const override { return m_inner->cols(id); }
  ValueRange reduce(MatrixId id, const LodRegion& r, Reduce mode, float* out) const override {
    return m_inner->reduce(id, r, mode, out);
  }
  float element(MatrixId id, int64_t row, int64_t col) const override {
    return m_inner->element(id, row, col);
  }
  HostMatrix copy(MatrixId id) const override { return m_inner->copy(id); }
  bool remote() const override { return true; }
  LinkFigures link_figures() const override { return figures; }
  std::shared_ptr<PendingReduce> reduce_later(MatrixId id, const LodRegion& r, Reduce mode) const override {
    auto h = std::make_shared<Held>();
    h->from = m_inner;
    h->id = id;
    h->region = r;
    h->mode = mode;
    asked.push_back(h);
    return h;
  }

  LinkFigures figures;
  mutable std::vector<std::shared_ptr<Held>> asked;

 private:
  std::shared_ptr<const MatrixStore> m_inner;
};

// Distinct colours down one column of a painted picture.
size_t colours_down(const std::vector<uint8_t>& rgba, int w, int h, int x) {
  std::vector<uint32_t> seen;
  for (int y = 0; y < h; ++y) {
    const uint8_t* p = &rgba[(size_t(y) * size_t(w) + size_t(x)) * 4];
    const uint32_t c = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16;
    if (std::find(seen.begin(), seen.end(), c) == seen.end()) seen.push_back(c);
  }
  return seen.size();
}

}  // namespace

// A slow link degrades to coarser views first: a big view of a remote store whose link has no rate yet is
// asked coarse first, drawn at once over the same elements (right values, right way up: a ramp grows down the
// rows), and the whole view, asked once the coarse one is in, replaces it. A link measured fast asks the
// whole view at once; one measured slow asks coarse first again; a view left while its coarse answer was on
// its way asks the new view's coarse one, not the old view's whole one.
TEST(HeatmapRemote, ASlowLinkDrawsACoarseViewFirstThenTheWholeOne) {
  REQUIRE_GL(-1);
  auto a = std::make_shared<HostMatrix>(512, 512);
  for (int64_t i = 0; i < 512; ++i)
    for (int64_t j = 0; j < 512; ++j) a->at(i, j) = float(i);  // grows down the rows
  auto store = std::make_shared<HeldRemoteStore>(make_host_store(a, a, a, a));
  gfx::HeatmapSet set(-1, "the test's held answers");
  set.set_store(store, 1);
  gfx::HeatmapRequest req;
  req.id = MatrixId::A;
  req.limits = PlotLimits{0, 512, 0, 512};
  req.px_w = req.px_h = 400;
  const LodRegion whole{0, 0, 512, 512, 400, 400};
  const LodRegion coarse = coarse_region(whole);
  ASSERT_EQ(coarse.w, 100);

  // Nothing measured yet: 640 kB asked coarse first; nothing to draw until it comes, one request at a time.
  const gfx::HeatmapPicture* pic = &set.picture(req);
  EXPECT_FALSE(pic->ok);
  EXPECT_TRUE(pic->pending);
  ASSERT_EQ(store->asked.size(), 1u);
  EXPECT_EQ(store->asked[0]->region, coarse);
  EXPECT_TRUE(set.waiting());
  set.picture(req);
  EXPECT_EQ(store->asked.size(), 1u);

  // The coarse view: drawn over the whole region at the view's screen size, its values blocks of the ramp.
  store->asked[0]->released = true;
  pic = &set.picture(req);
  ASSERT_TRUE(pic->ok) << pic->error;
  EXPECT_TRUE(pic->coarse);
  EXPECT_TRUE(pic->pending);
  EXPECT_EQ(pic->region, coarse);
  EXPECT_EQ(pic->block_rows, 6);  // ceil(512 / 100) elements a value
  test::expect_values_match(set.layer(MatrixId::A).read_values(), *a, coarse, Reduce::Mean);
  std::vector<float> coarse_values(100 * 100);
  lod_reduce(a->data.data(), a->cols, a->rows, a->cols, coarse, Reduce::Mean, coarse_values.data());
  const Colormap& map = colormaps().front();
  const auto coarse_px = set.layer(MatrixId::A).painter()->read_rgba();
  test::expect_picture_matches(coarse_px, 400, 400, coarse_values, coarse, map, pic->shown.lo, pic->shown.hi);
  auto luma_at = [](const std::vector<uint8_t>& px, int x, int y) {
    const uint8_t* p = &px[(size_t(y) * 400 + size_t(x)) * 4];
    return 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
  };
  for (int y = 0; y + 80 < 400; y += 80)  // viridis lightens with the value: row 0 at the top is darkest
    EXPECT_LT(luma_at(coarse_px, 200, y), luma_at(coarse_px, 200, y + 80)) << y;
  EXPECT_LE(colours_down(coarse_px, 400, 400, 200), 100u);  // a hundred values down the rows at most
  // ... and the whole view is asked now that it is in.
  ASSERT_EQ(store->asked.size(), 2u);
  EXPECT_EQ(store->asked[1]->region, whole);
  EXPECT_TRUE(set.waiting());

  // The whole view replaces it: every value its own, nothing more asked.
  store->asked[1]->released = true;
  pic = &set.picture(req);
  ASSERT_TRUE(pic->ok) << pic->error;
  EXPECT_FALSE(pic->coarse);
  EXPECT_FALSE(pic->pending);
  EXPECT_EQ(pic->region, whole);
  test::expect_values_match(set.layer(MatrixId::A).read_values(), *a, whole, Reduce::Mean);
  EXPECT_GT(colours_down(set.layer(MatrixId::A).painter()->read_rgba(), 400, 400, 200), 200u);
  set.picture(req);
  EXPECT_EQ(store->asked.size(), 2u);
  EXPECT_FALSE(set.waiting());

  // A link measured fast (a pipe on one machine): a new view comes whole at once.
  store->figures = LinkFigures{1e9, 0.1};
  req.limits = PlotLimits{0, 256, 0, 256};
  set.picture(req);
  ASSERT_EQ(store->asked.size(), 3u);
  EXPECT_EQ(store->asked[2]->region, (LodRegion{0, 0, 256, 256, 256, 256}));
  store->asked[2]->released = true;
  EXPECT_FALSE(set.picture(req).coarse);

  // Measured slow (1 Mbit/s): coarse first again. The view moves on before it comes: the coarse picture is
  // drawn where it belongs, and the new view is asked coarse too (not the old view's whole one).
  store->figures = LinkFigures{125e3, 40};
  req.limits = PlotLimits{0, 512, 0, 512};
  set.picture(req);
  ASSERT_EQ(store->asked.size(), 4u);
  EXPECT_EQ(store->asked[3]->region, coarse);
  req.limits = PlotLimits{256, 512, 256, 512};
  store->asked[3]->released = true;
  pic = &set.picture(req);
  EXPECT_TRUE(pic->ok && pic->coarse && pic->pending);
  EXPECT_EQ(pic->region, coarse);
  ASSERT_EQ(store->asked.size(), 5u);
  EXPECT_EQ(store->asked[4]->region, coarse_region(LodRegion{256, 256, 256, 256, 256, 256}));
}

#if defined(TILESCOPE_HAVE_CUDA)
namespace {
int cuda_device_or_skip(std::string* why) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    *why = "no CUDA device";
    return -1;
  }
  return 0;
}
}  // namespace

// Each interop test runs on both paths: memory shared through Vulkan (no map per refresh) and GL textures
// mapped into CUDA for each refresh.
#define REQUIRE_INTEROP(ctx)                                                                                 \
  std::string why_;                                                                                          \
  const int dev_ = cuda_device_or_skip(&why_);                                                               \
  if (dev_ < 0) GTEST_SKIP() << why_;                                                                        \
  REQUIRE_GL(dev_);                                                                                          \
  gfx::HeatmapContext ctx(dev_, GetParam());                                                                 \
  if (!ctx.interop().on) GTEST_SKIP() << "interop unavailable here: " << ctx.interop().why;                  \
  if ((GetParam() == gfx::InteropPath::Shared) != (ctx.shared() != nullptr))                                 \
    FAIL() << "asked for " << (GetParam() == gfx::InteropPath::Shared ? "shared memory" : "mapped textures") \
           << ", got " << ctx.path_note();

class HeatmapInterop : public ::testing::TestWithParam<gfx::InteropPath> {
 protected:
  // A 1000 x 700 problem on the CUDA backend, kept on the device; its A is regenerated on the host to
  // compare.
  RunResult run_on_device(int dev) {
    auto backend = make_cuda_backend(dev);
    RunRequest req;
    req.spec.m = 1000, req.spec.n = 700, req.spec.k = 520;
    req.spec.kernel = "cublas";
    req.spec.tile = 0;
    req.keep_store = true;
    req.policy = MeasurePolicy::fixed(1);
    backend->validate(req);
    CancelToken never;
    return backend->run(req, never);
  }
};

TEST_P(HeatmapInterop, TextureEqualsTheCpuColouredDownsampleForEveryMode) {
  REQUIRE_INTEROP(ctx);
  const RunResult r = run_on_device(dev_);
  ASSERT_TRUE(r.store);
  EXPECT_EQ(r.store->cuda_device(), dev_);
  const HostMatrix a = generate_input(InputKind::Random, r.spec.seed, 0, r.spec.m, r.spec.k);
  gfx::HeatmapLayer layer, host_layer;
  gfx::HeatmapContext host(-1);
  const Colormap& map = colormaps().front();
  for (Reduce mode : {Reduce::Mean, Reduce::Min, Reduce::Max, Reduce::AbsMax}) {
    SCOPED_TRACE(int(mode));
    const LodRegion reg{17, 33, 900, 480, 300, 250};
    const auto res = layer.refresh(ctx, *r.store, MatrixId::A, reg, mode);
    ASSERT_TRUE(res.interop) << ctx.interop().why;
    EXPECT_EQ(layer.shared(), GetParam() == gfx::InteropPath::Shared) << ctx.path_note();
    test::expect_values_match(layer.read_values(), a, reg, mode);
    // The host fallback fills the texture with the same values.
    host_layer.refresh(host, *r.store, MatrixId::A, reg, mode);
    EXPECT_EQ(layer.read_values(), host_layer.read_values());
    std::vector<float> ref(size_t(reg.w) * size_t(reg.h));
    const ValueRange vr = lod_reduce(a.data.data(), a.cols, a.rows, a.cols, reg, mode, ref.data());
    EXPECT_FLOAT_EQ(res.range.lo, vr.lo);
    EXPECT_FLOAT_EQ(res.range.hi, vr.hi);
    gfx::ColorParams cp;
    cp.lo = vr.lo, cp.hi = vr.hi, cp.row0 = reg.row0, cp.col0 = reg.col0, cp.rows = reg.rows,
    cp.cols = reg.cols;
    layer.paint(map, cp, 600, 500);
    test::expect_picture_matches(layer.painter()->read_rgba(), 600, 500, ref, reg, map, vr.lo, vr.hi);
  }
  // The signed error map is C - cuBLAS: zero everywhere for the cuBLAS kernel itself.
  layer.refresh(ctx, *r.store, MatrixId::Error, LodRegion{0, 0, 1000, 700, 100, 70}, Reduce::AbsMax);
  for (float v : layer.read_values()) ASSERT_EQ(v, 0.0f);
}

// B, C and the error map of a kernel that is wrong on purpose (tiled_floork, K = 520 not a multiple of 16)
// through interop: B and C against the host copies, the error map against the store's own reduction into host
// memory (tests/gpu checks that one against the host), and visibly not zero.
TEST_P(HeatmapInterop, BCAndTheErrorMapOfAWrongKernelMatchTheHost) {
  REQUIRE_INTEROP(ctx);
  auto backend = make_cuda_backend(dev_);
  RunRequest req;
  req.spec.m = 1000, req.spec.n = 700, req.spec.k = 520;
  req.spec.kernel = "tiled_floork";
  req.spec.tile = 16;
  req.keep_store = true;
  req.keep_output = true;
  req.policy = MeasurePolicy::fixed(1);
  CancelToken never;
  const RunResult r = backend->run(req, never);
  ASSERT_FALSE(r.error.passed);
  ASSERT_TRUE(r.store && r.c);
  const HostMatrix b = generate_input(InputKind::Random, r.spec.seed, 1, r.spec.k, r.spec.n);
  gfx::HeatmapLayer layer;
  for (Reduce mode : {Reduce::Mean, Reduce::Min, Reduce::Max, Reduce::AbsMax}) {
    SCOPED_TRACE(int(mode));
    const LodRegion rb{3, 9, 500, 600, 211, 173};
    ASSERT_TRUE(layer.refresh(ctx, *r.store, MatrixId::B, rb, mode).interop) << ctx.interop().why;
    test::expect_values_match(layer.read_values(), b, rb, mode);
    const LodRegion rc{17, 33, 900, 600, 300, 250};
    ASSERT_TRUE(layer.refresh(ctx, *r.store, MatrixId::C, rc, mode).interop);
    test::expect_values_match(layer.read_values(), *r.c, rc, mode);
    ASSERT_TRUE(layer.refresh(ctx, *r.store, MatrixId::Error, rc, mode).interop);
    std::vector<float> want(size_t(rc.w) * size_t(rc.h));
    r.store->reduce(MatrixId::Error, rc, mode, want.data());
    const std::vector<float> got = layer.read_values();
    ASSERT_EQ(got.size(), want.size());
    float largest = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << "value " << i;
      largest = std::max(largest, std::fabs(got[i]));
    }
    EXPECT_GT(largest, 100 * r.error.tolerance) << "the error map of a wrong kernel shows no error";
  }
}

TEST_P(HeatmapInterop, RegistrationIsRedoneOnlyOnResize) {
  REQUIRE_INTEROP(ctx);
  if (ctx.shared()) GTEST_SKIP() << "shared memory registers nothing per size (the mapped path's concern)";
  const RunResult r = run_on_device(dev_);
  const HostMatrix a = generate_input(InputKind::Random, r.spec.seed, 0, r.spec.m, r.spec.k);
  gfx::HeatmapLayer layer;
  const LodRegion sizes[] = {{0, 0, 1000, 520, 256, 256},  {0, 0, 1000, 520, 256, 256},
                             {5, 7, 900, 500, 500, 333},   {5, 7, 900, 500, 500, 333},
                             {0, 0, 1000, 520, 520, 1000}, {1, 2, 3, 4, 4, 3}};
  int expected = 0;
  int prev_w = 0, prev_h = 0;
  for (const LodRegion& reg : sizes) {
    if (reg.w != prev_w || reg.h != prev_h) ++expected;
    prev_w = reg.w, prev_h = reg.h;
    ASSERT_TRUE(layer.refresh(ctx, *r.store, MatrixId::A, reg, Reduce::Max).interop);
    test::expect_values_match(layer.read_values(), a, reg, Reduce::Max);
    EXPECT_EQ(layer.registrations(), expected);
  }
}

TEST_P(HeatmapInterop, ThousandMapUnmapCyclesLeakNothing) {
  REQUIRE_INTEROP(ctx);
  const RunResult r = run_on_device(dev_);
  gfx::HeatmapLayer layer;
  const LodRegion reg{0, 0, 1000, 700, 512, 512};
  layer.refresh(ctx, *r.store, MatrixId::C, reg, Reduce::Mean);
  glFinish();
  size_t free0 = 0, free1 = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
  for (int i = 0; i < 1000; ++i)
    ASSERT_TRUE(layer.refresh(ctx, *r.store, MatrixId::C, reg, Reduce::Mean).interop);
  glFinish();
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  EXPECT_EQ(layer.registrations(), ctx.shared() ? 0 : 1);
  EXPECT_LE(double(free0) - double(free1), 2.0 * 1024 * 1024) << "device memory shrank over 1000 cycles";
  EXPECT_EQ(glGetError(), GLenum(GL_NO_ERROR));
}
INSTANTIATE_TEST_SUITE_P(Paths, HeatmapInterop,
                         ::testing::Values(gfx::InteropPath::Shared, gfx::InteropPath::Mapped),
                         [](const ::testing::TestParamInfo<gfx::InteropPath>& i) {
                           return i.param == gfx::InteropPath::Shared ? "SharedMemory" : "MappedTextures";
                         });
#endif

#if !defined(TILESCOPE_HAVE_CUDA)
TEST(HeatmapInterop, NeedsCuda) {
  GTEST_SKIP() << "this build has no CUDA support: CUDA-GL interop cannot be tested";
}
#endif

#if defined(TILESCOPE_HAVE_CUDA)
// Where the shared-memory path stands on this machine, step by step (printed, for a person reading the log):
// CUDA's view of the buffer after the LOD kernel, GL's view of the same buffer, and CUDA's error state.
void check_shared_values(int dev);

TEST(HeatmapSharedMemory, CudaAndGlSeeTheSameValuesAndTheGlContextStaysCurrent) {
  std::string why;
  const int dev = cuda_device_or_skip(&why);
  if (dev < 0) GTEST_SKIP() << why;
  REQUIRE_GL(dev);
  auto renderer = [] {
    const GLubyte* r = glGetString(GL_RENDERER);
    return r ? std::string(reinterpret_cast<const char*>(r)) : std::string("(no GL context current)");
  };
  const std::string before = renderer();
  {
    SCOPED_TRACE("shared memory in use");
    check_shared_values(dev);
  }
  // Made and dropped, it leaves the GL context current and CUDA-GL interop possible: every test and frame
  // after it depends on that.
  std::printf("after the shared memory went: GL renderer %s; GL context made current again %d times\n",
              renderer().c_str(), gfx::SharedContext::gl_restores());
  EXPECT_EQ(renderer(), before);
  gfx::HeatmapContext again(dev, gfx::InteropPath::Mapped);
  EXPECT_TRUE(again.interop().on) << again.interop().why;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

void check_shared_values(int dev) {
  gfx::HeatmapContext ctx(dev, gfx::InteropPath::Shared);
  ASSERT_TRUE(ctx.interop().on) << ctx.interop().why;
  ASSERT_TRUE(ctx.shared()) << ctx.path_note();
  auto buf = ctx.shared()->make_buffer(64 * 4);
  std::vector<float> host(64);
  for (int i = 0; i < 64; ++i) host[size_t(i)] = float(i) * 0.5f;
  ASSERT_EQ(cudaMemcpy(buf->device_ptr(), host.data(), 64 * 4, cudaMemcpyHostToDevice), cudaSuccess)
      << cudaGetErrorString(cudaGetLastError());
  std::vector<float> back(64, -1);
  ASSERT_EQ(cudaMemcpy(back.data(), buf->device_ptr(), 64 * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host) << "CUDA reads back what it wrote";
  ctx.shared()->after_cuda_writes();
  ASSERT_EQ(cudaStreamSynchronize(static_cast<cudaStream_t>(ctx.stream()->get())), cudaSuccess)
      << cudaGetErrorString(cudaGetLastError());
  ctx.shared()->before_gl_reads();
  glFinish();
  const std::vector<float> gl = buf->read_back(64);
  EXPECT_EQ(gl, host) << "GL sees CUDA's values";
  EXPECT_EQ(glGetError(), GLenum(GL_NO_ERROR));
}
#endif

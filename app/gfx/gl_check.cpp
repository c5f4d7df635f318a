#include "gfx/gl_check.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "core/plots/colormap.hpp"
#include "gfx/heatmap_gl.hpp"
#include "core/engine/matrix.hpp"
#include "core/engine/matrix_store.hpp"
#include "gfx/window.hpp"

namespace ts::gfx {

const char* to_string(ResetStatus s) {
  switch (s) {
    case ResetStatus::None:
      return "no reset";
    case ResetStatus::Guilty:
      return "reset, caused by this context";
    case ResetStatus::Innocent:
      return "reset, caused by another context";
    case ResetStatus::Unknown:
      return "reset, cause unknown";
    case ResetStatus::NotAvailable:
      return "not reported (the context has no robustness)";
  }
  return "?";
}

namespace {
std::atomic<int> g_damage{-1};  // -1: not read from the environment yet
}

void simulate_gl_damage(GlDamage d) {
  g_damage = int(d);
}

GlDamage simulated_gl_damage() {
  if (g_damage >= 0) return GlDamage(g_damage.load());
  const GlDamage d = [] {
    const char* v = std::getenv("TILESCOPE_SIMULATE_GL_DAMAGE");
    if (!v || !*v) return GlDamage::None;
    const std::string s(v);
    if (s == "readback") return GlDamage::Readback;
    if (s == "glyphs") return GlDamage::Glyphs;
    if (s == "lost") return GlDamage::Lost;
    std::fprintf(stderr,
                 "tilescope: TILESCOPE_SIMULATE_GL_DAMAGE=%s is not readback, glyphs or lost: ignored\n", v);
    return GlDamage::None;
  }();
  int unset = -1;
  g_damage.compare_exchange_strong(unset, int(d));
  return GlDamage(g_damage.load());
}

void damage_readback(std::vector<uint8_t>& rgba) {
  if (simulated_gl_damage() != GlDamage::Readback) return;
  // What the broken driver returned: rows of one flat colour where the picture should be.
  for (size_t i = 0; i < rgba.size(); i += 4)
    if ((i / 4) % 7 < 4) std::memset(&rgba[i], 0x20, 3);
}

namespace {

using ResetFn = GLenum (*)();

ResetFn reset_fn() {
  if (epoxy_gl_version() >= 45) return [] { return glGetGraphicsResetStatus(); };
  if (epoxy_has_gl_extension("GL_KHR_robustness")) return [] { return glGetGraphicsResetStatusKHR(); };
  if (epoxy_has_gl_extension("GL_ARB_robustness")) return [] { return glGetGraphicsResetStatusARB(); };
  return nullptr;
}

}  // namespace

GLenum take_gl_errors(bool* lost) {
  if (!gl_usable()) {
    if (lost) *lost = true;
    return GL_CONTEXT_LOST;
  }
  GLenum first = GL_NO_ERROR;
  for (int i = 0; i < 64; ++i) {
    const GLenum e = glGetError();
    if (e == GL_NO_ERROR) break;
    if (first == GL_NO_ERROR) first = e;
    if (e == GL_CONTEXT_LOST) {
      if (lost) *lost = true;
      mark_current_context_lost();
      break;  // it would say so again at every call
    }
  }
  return first;
}

ContextRobustness context_robustness() {
  ContextRobustness r;
  if (!gl_usable()) return r;
  r.known = true;
  r.available = reset_fn() != nullptr;
  if (r.available) {
    GLint strategy = 0;
    glGetIntegerv(GL_RESET_NOTIFICATION_STRATEGY, &strategy);
    r.reset_notification = strategy == GL_LOSE_CONTEXT_ON_RESET;
    take_gl_errors();
  }
  return r;
}

ResetStatus reset_status() {
  if (simulated_gl_damage() == GlDamage::Lost) {  // reported once, as a driver reports a reset
    simulate_gl_damage(GlDamage::None);
    mark_current_context_lost();
    return ResetStatus::Guilty;
  }
  if (!gl_usable()) return ResetStatus::Unknown;  // no context current, or one found lost
  const ResetFn f = reset_fn();
  if (!f) return ResetStatus::NotAvailable;
  const GLenum status = f();
  if (status != GL_NO_ERROR) mark_current_context_lost();
  switch (status) {
    case GL_NO_ERROR:
      return ResetStatus::None;
    case GL_GUILTY_CONTEXT_RESET:
      return ResetStatus::Guilty;
    case GL_INNOCENT_CONTEXT_RESET:
      return ResetStatus::Innocent;
    default:
      return ResetStatus::Unknown;
  }
}

ImageDiff compare_rgba(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, int w, int h,
                       int tolerance) {
  ImageDiff d;
  const size_t n = size_t(w) * size_t(h);
  if (got.size() != n * 4 || want.size() != n * 4) {
    d.differing = int64_t(n);
    d.first = "the picture read back has " + std::to_string(got.size() / 4) + " pixels instead of " +
              std::to_string(n);
    return d;
  }
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* g = &got[4 * i];
    const uint8_t* e = &want[4 * i];
    bool same = true;
    for (int c = 0; c < 3; ++c) same &= std::abs(int(g[c]) - int(e[c])) <= tolerance;
    if (same) continue;
    if (d.differing < 3) {
      char t[128];
      std::snprintf(t, sizeof t, "%spixel %d,%d = %d,%d,%d instead of %d,%d,%d", d.first.empty() ? "" : "; ",
                    int(i % size_t(w)), int(i / size_t(w)), g[0], g[1], g[2], e[0], e[1], e[2]);
      d.first += t;
    }
    ++d.differing;
  }
  return d;
}

// [SECTION] The known heatmap
namespace {

std::shared_ptr<HostMatrix> make_pattern() {
  auto m = std::make_shared<HostMatrix>(HeatmapPatternCheck::kRows, HeatmapPatternCheck::kCols);
  for (int64_t r = 0; r < m->rows; ++r)
    for (int64_t c = 0; c < m->cols; ++c)
      m->at(r, c) = float((r * m->cols + c * 7) % 256) + 0.5f;  // the middle of one colour's interval
  m->at(HeatmapPatternCheck::kRows - 3, 5) = std::nanf("");     // NaN: magenta whatever the map
  return m;
}
constexpr float kLo = 0, kHi = 256;

}  // namespace

struct HeatmapPatternCheck::Impl {
  std::shared_ptr<HostMatrix> values = make_pattern();
  std::vector<uint8_t> expected = expected_picture();
  HeatmapContext ctx{-1};  // the host path: the values are uploaded as the host path does
  HeatmapLayer layer;
  GLuint texture = 0;
  bool interop = false;
};

HeatmapPatternCheck::HeatmapPatternCheck() : m(new Impl) {}
HeatmapPatternCheck::~HeatmapPatternCheck() {
  delete m;
}

std::vector<uint8_t> HeatmapPatternCheck::expected_picture() {
  const auto values = make_pattern();
  std::vector<uint8_t> rgba(size_t(kCols) * kRows * 4);
  colorize(values->data.data(), values->data.size(), colormaps().front(), kLo, kHi, rgba.data());
  return rgba;
}

const std::vector<uint8_t>& HeatmapPatternCheck::expected() const {
  return m->expected;
}
GLuint HeatmapPatternCheck::texture() const {
  return m->texture;
}
bool HeatmapPatternCheck::interop() const {
  return m->interop;
}

std::shared_ptr<HostMatrix> HeatmapPatternCheck::pattern() {
  return make_pattern();
}

bool HeatmapPatternCheck::run(std::string* why, bool* lost, HeatmapContext* ctx, const MatrixStore* store) {
  if (!gl_usable()) {
    if (lost) *lost = true;
    if (why) *why = "no usable OpenGL context (lost)";
    return false;
  }
  try {
    take_gl_errors(lost);
    std::shared_ptr<const MatrixStore> host;
    if (!store) {
      host = make_host_store(m->values, m->values, m->values, m->values);
      store = host.get();
    }
    const LodRegion r{0, 0, kRows, kCols, kCols, kRows};
    const HeatmapLayer::Refresh ref =
        m->layer.refresh(ctx ? *ctx : m->ctx, *store, MatrixId::C, r, Reduce::Mean);
    m->interop = ref.interop;
    ColorParams cp;
    cp.lo = kLo;
    cp.hi = kHi;
    cp.rows = kRows;
    cp.cols = kCols;
    m->texture = m->layer.paint(colormaps().front(), cp, kCols, kRows);
    glFinish();
    std::vector<uint8_t> got = m->layer.painter()->read_rgba();
    damage_readback(got);
    const GLenum err = take_gl_errors(lost);
    const ImageDiff d = compare_rgba(got, m->expected, kCols, kRows, 0);
    if (d.differing == 0 && err == GL_NO_ERROR) return true;
    if (why) {
      char t[96];
      std::snprintf(t, sizeof t, "a known %d x %d heatmap came back with %lld of %d pixels wrong", kCols,
                    kRows, static_cast<long long>(d.differing), kCols * kRows);
      *why = t + (d.first.empty() ? std::string() : " (" + d.first + ")");
      if (err != GL_NO_ERROR) {
        std::snprintf(t, sizeof t, "; GL error 0x%04x", unsigned(err));
        *why += t;
      }
    }
    return false;
  } catch (const std::exception& e) {
    if (why) *why = std::string("the known heatmap could not be drawn: ") + e.what();
    return false;
  }
}

}  // namespace ts::gfx

#include "gfx/heatmap_set.hpp"
#include "gfx/window.hpp"  // gl_usable

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ts::gfx {

namespace {
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

namespace {
// TILESCOPE_INTEROP=mapped|shared|auto picks how interop hands values to GL. Auto when unset: memory CUDA and
// GL share for good where the driver offers it (Vulkan external memory), mapped textures elsewhere. On an
// H100 the shared path refreshes A, B and C at 4096^2 into 1024^2 views in 0.46 ms against 0.77 ms mapped,
// and it passed the GL tests, the orientation snapshots, 10 s of frames under Repeat and the commit timing
// there. A shared buffer that fails at run time falls back to mapped textures
// (HeatmapContext::disable_shared). An unknown value is reported on stderr and auto is used.
// TILESCOPE_INTEROP=off: the host path on a GPU too (CUDA is not asked about the GL context at all).
InteropPath interop_path_from_env() {
  const char* v = std::getenv("TILESCOPE_INTEROP");
  if (!v || !*v || std::string(v) == "auto") return InteropPath::Auto;
  if (std::string(v) == "shared") return InteropPath::Shared;
  if (std::string(v) == "mapped") return InteropPath::Mapped;
  if (std::string(v) == "off") return InteropPath::Off;
  std::fprintf(stderr, "tilescope: TILESCOPE_INTEROP=%s is not mapped, shared, off or auto: using auto\n", v);
  return InteropPath::Auto;
}
}  // namespace

HeatmapSet::HeatmapSet(int cuda_device, const std::string& interop_off_why)
    : m_ctx(cuda_device, interop_off_why.empty() ? interop_path_from_env() : InteropPath::Off,
            interop_off_why.empty() ? "turned off (TILESCOPE_INTEROP=off)" : interop_off_why) {}

HeatmapSet::~HeatmapSet() = default;

void HeatmapSet::set_store(std::shared_ptr<const MatrixStore> store, uint64_t serial) {
  m_store = std::move(store);
  m_serial = serial;
  m_hover = HoverValue{};
  // Answers still on their way are of the previous matrices: not waited for (they are dropped when they
  // come).
  for (Map& m : m_maps) m.pending.reset();
  m_remote_read.reset();
}

LodRegion HeatmapSet::region_of(const HeatmapRequest& req, const MatrixStore& store, int* out_w, int* out_h) {
  const int64_t rows = store.rows(req.id), cols = store.cols(req.id);
  LodRegion r = region_for(req.limits, rows, cols, req.px_w, req.px_h);
  // The texture covers the region's whole elements at the plot's scale (elements partly outside the view
  // still get their pixels), at most one value per element.
  const double ppx = double(req.px_w) / std::max(1e-9, std::fabs(req.limits.x1 - req.limits.x0));
  const double ppy = double(req.px_h) / std::max(1e-9, std::fabs(req.limits.y1 - req.limits.y0));
  *out_w = int(std::clamp(std::ceil(double(r.cols) * ppx), 1.0, 8192.0));
  *out_h = int(std::clamp(std::ceil(double(r.rows) * ppy), 1.0, 8192.0));
  r.w = int(std::clamp<int64_t>(*out_w, 1, r.cols));
  r.h = int(std::clamp<int64_t>(*out_h, 1, r.rows));
  return r;
}

void HeatmapSet::refresh_batch(const HeatmapRequest& current) {
  std::vector<HeatmapLayer::Job> jobs;
  std::vector<Map*> who;
  for (size_t i = 0; i < m_maps.size(); ++i) {
    Map& m = m_maps[i];
    const HeatmapRequest* req = size_t(current.id) == i ? &current : (m.last ? &*m.last : nullptr);
    if (!req || m.serial == m_serial) continue;
    int ow, oh;
    const LodRegion r = region_of(*req, *m_store, &ow, &oh);
    jobs.push_back({&m.layer, m_store.get(), req->id, r, req->reduce, {}});
    who.push_back(&m);
  }
  if (jobs.empty()) return;
  const double t0 = now_ms();
  try {
    HeatmapLayer::refresh_all(m_ctx, jobs);
  } catch (const std::exception& e) {
    for (Map* m : who) {
      m->pic = HeatmapPicture{};
      m->pic.error = e.what();
      m->serial = m_serial;
      m->painted.clear();
    }
    return;
  }
  const double ms = now_ms() - t0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    Map& m = *who[i];
    m.pic.ok = true;
    m.pic.error.clear();
    m.pic.region = jobs[i].region;
    m.pic.data = jobs[i].result.range;
    m.pic.interop = jobs[i].result.interop;
    m.pic.refresh_ms = ms;
    m.serial = m_serial;
    m.reduce = jobs[i].mode;
    m.painted.clear();
  }
}

bool HeatmapSet::view_of(Map& m, const HeatmapRequest& req, LodRegion* region, int* out_w, int* out_h) const {
  try {
    *region = region_of(req, *m_store, out_w, out_h);
    return true;
  } catch (const std::exception& e) {
    fail(m, e.what());
    return false;
  }
}

const HeatmapPicture& HeatmapSet::fail(Map& m, const std::string& why) const {
  m.pic = HeatmapPicture{};
  m.pic.error = why;
  return m.pic;
}

const HeatmapPicture& HeatmapSet::picture(const HeatmapRequest& req) {
  Map& m = m_maps[size_t(req.id)];
  // The context was lost: nothing can be drawn (the GL self-check makes a new one).
  if (!gl_usable()) return fail(m, "the OpenGL context is lost");
  if (!m_store) return fail(m, "no matrices yet");
  if (m_store->remote()) return remote_picture(m, req);
  // A new result: every map seen before, at its current view, in one batch.
  if (m.serial != m_serial) refresh_batch(req);
  m.last = req;
  int out_w = 1, out_h = 1;
  LodRegion region;
  if (!view_of(m, req, &region, &out_w, &out_h)) return m.pic;
  // Zoomed, panned, resized or another reduction: this map alone.
  if (!m.pic.ok || m.pic.region != region || m.reduce != req.reduce) {
    if (!m.pic.error.empty() && m.serial == m_serial && m.pic.region == region && m.reduce == req.reduce)
      return m.pic;  // the same refresh failed already for this result: do not retry every frame
    const double t0 = now_ms();
    try {
      const HeatmapLayer::Refresh r = m.layer.refresh(m_ctx, *m_store, req.id, region, req.reduce);
      m.pic.ok = true;
      m.pic.error.clear();
      m.pic.data = r.range;
      m.pic.interop = r.interop;
    } catch (const std::exception& e) {
      fail(m, e.what());
    }
    m.pic.refresh_ms = now_ms() - t0;
    m.pic.region = region;
    m.reduce = req.reduce;
    m.serial = m_serial;
    m.painted.clear();
    if (!m.pic.ok) return m.pic;
  }
  return paint(m, req, region, out_w, out_h);
}

// A remote store: the view is asked for without waiting and drawn when it comes; until then the last view
// of the same matrices stays (at its own place), so a slow link shows a coarser or older view, never a frozen
// window and never the previous result's values as this one's. A view that would be long on the link as
// measured is asked coarse first (coarse_first()), and the whole view once the coarse one is in: still one
// request in flight per map, and a drag on a slow link shows coarse views as fast as they come.
const HeatmapPicture& HeatmapSet::remote_picture(Map& m, const HeatmapRequest& req) {
  m.last = req;
  int out_w = 1, out_h = 1;
  LodRegion region;
  if (!view_of(m, req, &region, &out_w, &out_h)) return m.pic;
  if (m.pending && m.pending->ready()) collect_remote(m);
  // What is shown is the view asked for (or its failure, which is not asked again every frame), or the coarse
  // version of it (then the whole view is asked next).
  const LodRegion& has = m.pic.region;
  const bool of_this = m.serial == m_serial && m.reduce == req.reduce;
  const bool current = of_this && !m.pic.coarse && has == region;
  const bool coarse_of_it = of_this && m.pic.coarse && has.row0 == region.row0 && has.col0 == region.col0 &&
                            has.rows == region.rows && has.cols == region.cols;
  if (!current && !m.pending) {
    LodRegion ask = region;
    bool coarse = false;
    if (!coarse_of_it) {
      const LodRegion c = coarse_region(region);
      const LinkFigures link = m_store->link_figures();
      coarse = c != region && coarse_first(view_bytes(region), link.bytes_per_s, link.rtt_ms);
      if (coarse) ask = c;
    }
    try {
      m.pending = m_store->reduce_later(req.id, ask, req.reduce);
      m.pending_coarse = coarse;
      m.pending_region = ask;
      m.pending_mode = req.reduce;
      m.pending_serial = m_serial;
      m.pending_w = out_w;
      m.pending_h = out_h;
      m.pending_t0 = now_ms();
    } catch (const std::exception& e) {  // the link is gone: said in the plot
      fail(m, e.what());
      m.pic.region = region;
      m.reduce = req.reduce;
      m.serial = m_serial;
      return m.pic;
    }
  }
  if (m.serial != m_serial) {
    fail(m, "coming from the engine");
    m.pic.pending = true;
    return m.pic;
  }
  if (!m.pic.ok) return m.pic;
  // Painted at the region it shows, at the screen size it was asked at (a coarse view too: its values are
  // blocks of that picture).
  const LodRegion shown = m.pic.region;
  paint(m, req, shown, m.region_w, m.region_h);
  m.pic.pending = !current;
  return m.pic;
}

void HeatmapSet::collect_remote(Map& m) {
  const std::shared_ptr<PendingReduce> p = std::move(m.pending);
  if (m.pending_serial != m_serial) return;  // the answer is of an earlier result: dropped
  m.pic = HeatmapPicture{};
  m.pic.region = m.pending_region;
  m.pic.coarse = m.pending_coarse;
  try {
    std::vector<float> v(size_t(m.pending_region.w) * size_t(m.pending_region.h));
    m.pic.data = p->take(v.data());
    m.layer.upload(m.pending_region, v.data());
    m.pic.ok = true;
  } catch (const std::exception& e) {
    m.pic.error = e.what();
  }
  m.pic.refresh_ms = now_ms() - m.pending_t0;
  m.reduce = m.pending_mode;
  m.serial = m_serial;
  m.region_w = m.pending_w;
  m.region_h = m.pending_h;
  m.painted.clear();
}

const HeatmapPicture& HeatmapSet::paint(Map& m, const HeatmapRequest& req, const LodRegion& region, int out_w,
                                        int out_h) {
  HeatmapPicture& p = m.pic;
  p.shown = resolve_range(req.range, p.data, req.manual);
  p.block_rows = (region.rows + region.h - 1) / region.h;
  p.block_cols = (region.cols + region.w - 1) / region.w;
  ColorParams cp;
  cp.lo = p.shown.lo;
  cp.hi = p.shown.hi;
  cp.row0 = region.row0;
  cp.col0 = region.col0;
  cp.rows = region.rows;
  cp.cols = region.cols;
  // The kernel's tile grid, once a tile spans enough pixels: output blocks on C and the error map, the rows a
  // block reads of A, the columns of B.
  p.grid = req.tile_m > 0 && req.tile_n > 0 &&
           tile_grid_visible(req.limits, req.px_w, req.px_h, std::min(req.tile_m, req.tile_n));
  if (p.grid) {
    cp.tile_m = req.id == MatrixId::B ? 0 : req.tile_m;
    cp.tile_n = req.id == MatrixId::A ? 0 : req.tile_n;
  }
  const Colormap& cmap = req.colormap ? *req.colormap : colormaps().front();
  char key[256];
  std::snprintf(key, sizeof key, "%a %a %d %d %s %d %d", double(cp.lo), double(cp.hi), cp.tile_m, cp.tile_n,
                cmap.name.c_str(), out_w, out_h);
  if (m.painted != key || !p.texture || m.out_w != out_w || m.out_h != out_h) {
    try {
      p.texture = m.layer.paint(cmap, cp, out_w, out_h);
      m.painted = key;
      m.out_w = out_w;
      m.out_h = out_h;
    } catch (const std::exception& e) {
      p.ok = false;
      p.error = e.what();
    }
  }
  return p;
}

bool HeatmapSet::waiting() const {
  if (m_remote_read) return true;
  for (const Map& m : m_maps)
    if (m.pending) return true;
  return false;
}

HoverValue HeatmapSet::hover(MatrixId id, int64_t row, int64_t col) {
  HoverValue none;
  if (!m_store || row < 0 || col < 0 || row >= m_store->rows(id) || col >= m_store->cols(id)) return none;
  const bool same =
      m_hover.row == row && m_hover.col == col && m_hover_id == id && m_hover_serial == m_serial;
  if (m_store->remote()) {  // a round trip: asked now, shown when it comes ("reading" until then)
    if (!same) {
      m_hover = HoverValue{};
      m_hover.row = row;
      m_hover.col = col;
      m_hover.state = HoverValue::State::Pending;
      m_hover_id = id;
      m_hover_serial = m_serial;
    }
    const std::array<int64_t, 4> key{int64_t(id), row, col, int64_t(m_serial)};
    if (m_remote_read && m_remote_read->ready()) {
      const auto read = std::move(m_remote_read);
      if (key == m_remote_key && m_hover.state == HoverValue::State::Pending) {
        try {
          m_hover.value = read->take();
          m_hover.state = HoverValue::State::Ready;
        } catch (const std::exception& e) {
          m_hover.state = HoverValue::State::Failed;
          m_hover.error = e.what();
        }
      }
    }
    if (m_hover.state == HoverValue::State::Pending && !m_remote_read) {
      try {
        m_remote_read = m_store->element_later(id, row, col);
        m_remote_key = key;
      } catch (const std::exception& e) {
        m_hover.state = HoverValue::State::Failed;
        m_hover.error = e.what();
      }
    }
    return m_hover;
  }
  if (m_store->cuda_device() < 0) {  // host memory: read it now
    if (same && m_hover.state == HoverValue::State::Ready) return m_hover;
    m_hover = HoverValue{};
    m_hover.row = row;
    m_hover.col = col;
    m_hover_id = id;
    m_hover_serial = m_serial;
    try {
      m_hover.value = m_store->element(id, row, col);
      m_hover.state = HoverValue::State::Ready;
    } catch (const std::exception& e) {
      m_hover.state = HoverValue::State::Failed;
      m_hover.error = e.what();
    }
    return m_hover;
  }
  // GPU memory: one small asynchronous copy at a time on the display stream; the tooltip says "reading"
  // until it lands (a frame or two), and the frame never waits for it.
  try {
    if (!m_reader) {
      if (!m_ctx.stream()) throw std::runtime_error("no CUDA stream for hover reads (" + interop().why + ")");
      m_reader = std::make_unique<AsyncElementRead>(*m_ctx.stream());
    }
    float v = 0;
    if (m_reader->poll(&v) && m_reading) {
      const auto [rid, rr, rc] = *m_reading;
      if (rid == int64_t(id) && rr == row && rc == col && m_hover_serial == m_serial) {
        m_hover.state = HoverValue::State::Ready;
        m_hover.value = v;
      }
      m_reading.reset();
      m_reading_store.reset();
    }
    if (!same) {
      m_hover = HoverValue{};
      m_hover.row = row;
      m_hover.col = col;
      m_hover.state = HoverValue::State::Pending;
      m_hover_id = id;
      m_hover_serial = m_serial;
    }
    if (m_hover.state == HoverValue::State::Pending && !m_reader->in_flight()) {
      m_reader->start(*m_store, id, row, col);
      m_reading = std::array<int64_t, 3>{int64_t(id), row, col};
      m_reading_store = m_store;
    }
  } catch (const std::exception& e) {
    m_hover.state = HoverValue::State::Failed;
    m_hover.error = e.what();
  }
  return m_hover;
}

}  // namespace ts::gfx

// Matrices: A, B, C and the signed error C - reference as heatmaps with axes, a colour scale and an exact
// hover readout. Each plot keeps its matrix's shape (equal scaling on both axes) and puts row 0 at the top.
// The panel only says what each plot shows; the heatmap set (app/gfx/heatmap_set.hpp) reduces the region in
// view, through CUDA-OpenGL interop or host memory, and paints it. Wheel to zoom (about the element under the
// cursor, kWheelZoom per click), drag to pan, double-click or "Whole" to see everything again.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include <imgui.h>
#include <implot.h>

#include "core/plots/colormap.hpp"
#include "core/plots/heatmap.hpp"
#include "gfx/heatmap_set.hpp"
#include "ui/panels/algorithm_overlays.hpp"
#include "ui/panels/panel.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

const char* const kReduceNames[] = {"mean", "min", "max", "abs max"};
const char* const kRangeNames[] = {"auto", "symmetric", "manual"};
// One wheel click magnifies (or shrinks) the view by this factor: a 256^2 matrix in a laptop's 150-pixel map
// shows single elements several pixels wide after five clicks, a 4096^2 one after a dozen.
constexpr double kWheelZoom = 1.5;
constexpr double kMinSpan = 2.0;  // the fewest elements a view shows across

const Colormap& pick_colormap(const std::string& name, const char* kind) {
  if (const Colormap* c = find_colormap(name)) return *c;
  for (const Colormap& c : colormaps())
    if (c.kind == kind) return c;
  return colormaps().front();
}

struct MapInfo {
  MatrixId id;
  const char* title;
  const char* shape;  // "M x K" ...
};
constexpr std::array<MapInfo, 4> kMaps = {{{MatrixId::A, "A", "M x K"},
                                           {MatrixId::B, "B", "K x N"},
                                           {MatrixId::C, "C = A B", "M x N"},
                                           {MatrixId::Error, "C - reference", "M x N"}}};

class MatricesPanel final : public Panel {
 public:
  const char* name() const override { return "Matrices"; }

 protected:
  void draw_content(AppState& s, FrameReport& out) override {
    if (!s.result || !s.result->store) {
      ImGui::TextDisabled("%s", s.busy() ? "running..." : "no matrices yet: press Run (Space)");
      return;
    }
    if (!s.heatmaps) {
      ImGui::TextDisabled("heatmaps need a GL context");
      return;
    }
    if (gl_damage_notice(s, "every heatmap")) {
      out.panels[name()].state = "gl damaged";
      return;
    }
    gfx::HeatmapSet& set = *s.heatmaps;
    if (set.serial() != s.result_serial) set.set_store(s.result->store, s.result_serial);
    out.hover = HoverReport{};
    const MatrixStore& store = *s.result->store;
    m_reset = std::exchange(m_reset_next, false) || m_reset;
    toolbar(s);
    algorithm_controls(s, out);
    if (m_reset) m_whole = {true, true, true, true};
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    // Four maps in a row, two by two, or in a column: whichever draws them largest in this panel.
    int per_row = 2;
    double best = -1;
    for (int n : {4, 2, 1}) {
      const int nrows = 4 / n;
      const ImVec2 c((avail.x - gap * float(n - 1)) / float(n),
                     (avail.y - ImGui::GetStyle().ItemSpacing.y * float(nrows - 1)) / float(nrows));
      double area = 0;
      for (const MapInfo& mi : kMaps) {
        const ImVec2 in = inner_size(mi, store, c, false);
        area += double(in.x) * double(in.y);
      }
      if (area > best * 1.05) best = area, per_row = n;  // prefer the squarer grid unless clearly better
    }
    const int nrows = 4 / per_row;
    const ImVec2 cell((avail.x - gap * float(per_row - 1)) / float(per_row),
                      (avail.y - ImGui::GetStyle().ItemSpacing.y * float(nrows - 1)) / float(nrows));
    wheel_zoom(store);
    // A requested region (Result panel, snapshot --zoom), for every map of this frame.
    const std::optional<rq::Zoom> asked = s.asked.take<rq::Zoom>();
    m_zoom = asked ? &asked->region : nullptr;
    bool any_interop = false, any_host = false;
    for (size_t i = 0; i < kMaps.size(); ++i) {
      if (i % size_t(per_row)) ImGui::SameLine(0, gap);
      ImGui::BeginGroup();
      const gfx::HeatmapPicture* pic = draw_map(s, out, set, store, kMaps[i], cell);
      ImGui::EndGroup();
      if (pic && pic->ok) (pic->interop ? any_interop : any_host) = true;
    }
    m_reset = false;
    m_zoom = nullptr;
    report_least_size(out, avail);
    out.panels[name()].state = any_interop && !any_host ? "interop" : "host: " + set.interop().why;
  }

 public:
  void release_gl() override { m_layer.release(); }

 private:
  // The schedule replay's and the feeding tiles' controls, under the toolbar, when they have something to
  // show; the plan and the replay for this frame's maps.
  void algorithm_controls(AppState& s, FrameReport& out) {
    m_replay = current_replay(s);
    if (m_replay) {
      replay_controls(s, *m_replay, out);
      if (s.views.replay.shown)
        m_layer.update(*m_replay, s.result_serial, s.views.replay.t_ns, s.result->trace->sm_count);
      else
        m_replay = nullptr;
    }
    m_feed = current_feed_plan(s);
    if (m_feed) feed_controls(s, *m_feed);
  }

  // Over a map, inside its plot: the replay's layer (C and the error map) and the feeding outlines.
  void draw_algorithm_layers(const AppState& s, const MapInfo& mi, int64_t rows, int64_t cols) {
    const bool c_like = mi.id == MatrixId::C || mi.id == MatrixId::Error;
    if (c_like && m_replay && m_layer.ready())
      m_layer.draw("##replay", double(m_replay->cover_cols()), double(m_replay->cover_rows()), double(cols),
                   double(rows));
    if (m_feed)
      draw_feed_outlines(*m_feed, s.views.feed.step,
                         mi.id == MatrixId::A   ? FeedMap::A
                         : mi.id == MatrixId::B ? FeedMap::B
                                                : FeedMap::C);
  }

  // A click (not a drag) on C or the error map chooses the tile under it for the feeding view.
  void maybe_choose_tile(AppState& s, const MapInfo& mi) {
    if (mi.id != MatrixId::C && mi.id != MatrixId::Error) return;
    if (!ImGui::IsMouseReleased(ImGuiMouseButton_Left)) return;
    const ImVec2 drag = ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 0.0f);
    if (std::fabs(drag.x) + std::fabs(drag.y) > 3.0f) return;  // a pan, not a click
    const ImPlotPoint mp = ImPlot::GetPlotMousePos();
    int64_t tr = 0, tc = 0;
    if (!tile_at(s, int64_t(std::floor(mp.y)), int64_t(std::floor(mp.x)), tr, tc)) return;
    FeedCursor& f = s.views.feed;
    if (!f.shown || f.serial != s.result_serial || f.tile_row != tr || f.tile_col != tc)
      f.step = 0, f.slice = 0;
    f.shown = true;
    f.serial = s.result_serial;
    f.tile_row = tr;
    f.tile_col = tc;
  }

  void toolbar(AppState& s) {
    auto group = [&](const char* label, HeatmapSettings& h, const char* kind) {
      ImGui::PushID(label);
      ImGui::AlignTextToFramePadding();
      ImGui::TextDisabled("%s", label);
      ImGui::SameLine();
      const Colormap& cur = pick_colormap(h.colormap, kind);
      ImGui::SetNextItemWidth(width_of({"coolwarm", "viridis", "inferno"}));
      if (ImGui::BeginCombo("##map", cur.name.c_str())) {
        for (const Colormap& c : colormaps())
          if (ImGui::Selectable((c.name + "  (" + c.kind + ")").c_str(), c.name == cur.name))
            h.colormap = c.name;
        ImGui::EndCombo();
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("colormap");
      ImGui::SameLine();
      int r = int(h.reduce);
      ImGui::SetNextItemWidth(width_of({"abs max", "mean"}));
      if (ImGui::Combo("##lod", &r, kReduceNames, 4)) h.reduce = Reduce(r);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("level of detail: what one pixel shows when it covers a block of elements");
      ImGui::SameLine();
      int g = int(h.range);
      ImGui::SetNextItemWidth(width_of({"symmetric", "manual"}));
      if (ImGui::Combo("##range", &g, kRangeNames, 3)) h.range = RangeMode(g);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "colour range: auto (the min and max of the elements in view), symmetric around zero, or manual");
      if (h.range == RangeMode::Manual) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
        float lohi[2] = {h.lo, h.hi};
        if (ImGui::InputFloat2("##lohi", lohi, "%.4g")) {
          // Accept only finite numbers; a reversed pair is swapped by resolve_range.
          if (std::isfinite(lohi[0]) && std::isfinite(lohi[1])) h.lo = lohi[0], h.hi = lohi[1];
        }
      }
      ImGui::PopID();
    };
    const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
    if (ImGui::SmallButton("Whole")) m_reset = true;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("zoom out to the whole matrices (or double-click a map)");
    // Two groups side by side when they fit, else the second under the first.
    auto group_w = [&](const char* label, const HeatmapSettings& h) {
      const float sp = ImGui::GetStyle().ItemSpacing.x;
      return ImGui::CalcTextSize(label).x + width_of({"coolwarm", "viridis", "inferno"}) +
             width_of({"abs max", "mean"}) + width_of({"symmetric", "manual"}) + 3 * sp +
             (h.range == RangeMode::Manual ? ImGui::GetFontSize() * 8 + sp : 0);
    };
    ImGui::SameLine();
    const float both =
        group_w("A B C", s.settings.matrices) + ImGui::GetFontSize() + group_w("error", s.settings.error);
    if (ImGui::GetCursorScreenPos().x + both <= right) {
      group("A B C", s.settings.matrices, "sequential");
      ImGui::SameLine(0, ImGui::GetFontSize());
      group("error", s.settings.error, "diverging");
    } else {
      // Not enough room for one line: the same controls in a pop-up, so the maps keep the panel's height.
      if (ImGui::SmallButton("Colours and detail...")) ImGui::OpenPopup("display");
      if (ImGui::BeginPopup("display")) {
        group("A B C", s.settings.matrices, "sequential");
        group("error", s.settings.error, "diverging");
        ImGui::EndPopup();
      }
      ImGui::SameLine();
      text_fit(std::string(s.settings.matrices.colormap.empty() ? "viridis"
                                                                : s.settings.matrices.colormap.c_str()) +
                   ", " + kReduceNames[int(s.settings.matrices.reduce)] +
                   "; error: " + kReduceNames[int(s.settings.error.reduce)] + ", " +
                   kRangeNames[int(s.settings.error.range)],
               &palette().muted);
    }
  }

  // The plot area a map gets in a cell: the cell less the title line, the colour scale and the axes (measured
  // on the previous frame; first guess 3 x 2.4 em), shrunk to the matrix's shape.
  // floors: keep at least a usable frame (drawing); without them, the true room (choosing the grid).
  ImVec2 inner_size(const MapInfo& mi, const MatrixStore& store, ImVec2 cell, bool floors = true) {
    const float em = ImGui::GetFontSize();
    ImVec2& pad = m_pad[size_t(mi.id)];
    if (pad.x <= 0) pad = ImVec2(em * 3.0f, em * 2.4f);
    const float min_side = floors ? em * 6 : 0.0f;
    const float legend_w = m_legend_w[size_t(mi.id)] > 0 ? m_legend_w[size_t(mi.id)] : em * 4.2f;
    const float plot_w = std::max(min_side, cell.x - legend_w - ImGui::GetStyle().ItemSpacing.x);
    const float plot_h = std::max(min_side, cell.y - ImGui::GetTextLineHeightWithSpacing());
    float w = std::max(1.0f, plot_w - pad.x), h = std::max(1.0f, plot_h - pad.y);
    const double aspect = double(store.cols(mi.id)) / double(store.rows(mi.id));
    if (double(w) / double(h) > aspect)
      w = std::max(1.0f, float(double(h) * aspect));
    else
      h = std::max(1.0f, float(double(w) / aspect));
    return ImVec2(w, h);
  }

  // Whole-number ticks (elements) that never crowd: as many as fit labels of the widest number in px pixels.
  // The row axis is as wide as the matrix's widest row number needs, whatever the view: an axis that narrowed
  // for "20" and widened for "200" moved the plot under the cursor while the wheel zoomed.
  static void setup_ticks(ImAxis axis, double lo, double hi, float px, bool vertical, int64_t extent) {
    const double span = hi - lo;
    if (!(span > 0) || px <= 0) return;
    char widest[32];
    std::snprintf(widest, sizeof widest, "%.0f", std::max(std::fabs(lo), std::fabs(hi)));
    const float label = vertical ? ImGui::GetTextLineHeight() : ImGui::CalcTextSize(widest).x;
    const double max_ticks = std::max(2.0, std::floor(double(px) / (double(label) * (vertical ? 2.2 : 1.8))));
    const double step = tick_step(span, max_ticks);  // at least one element
    std::array<double, 65> v{};
    std::array<std::array<char, 24>, 65> text{};
    std::array<const char*, 65> labels{};
    int n = 0;
    for (double t = std::ceil(lo / step) * step; t <= hi + 1e-9 && n < 64; t += step) {
      v[size_t(n)] = t == 0 ? 0.0 : t;  // never "-0"
      std::snprintf(text[size_t(n)].data(), 24, "%.0f", v[size_t(n)]);
      ++n;
    }
    if (n == 0) return;
    // A tick beyond the view, labelled as wide as the widest row number: never drawn (ImPlot draws no label
    // outside the plot), yet it keeps the row axis as wide as the matrix needs. Eight views past the end,
    // not "very far": ImPlot rounds every tick's pixel position to an int.
    if (vertical) {
      v[size_t(n)] = hi + 8 * span + 1;
      const std::string eights(std::to_string(std::max<int64_t>(extent, 1)).size(), '8');
      std::snprintf(text[size_t(n)].data(), 24, "%s", eights.c_str());
      ++n;
    }
    for (int i = 0; i < n; ++i) labels[size_t(i)] = text[size_t(i)].data();
    ImPlot::SetupAxisTicks(axis, v.data(), n, labels.data());
  }

  // A combo as wide as its longest choice.
  static float width_of(std::initializer_list<const char*> items) {
    float w = 0;
    for (const char* i : items) w = std::max(w, ImGui::CalcTextSize(i).x);
    return w + ImGui::GetFrameHeight() + ImGui::GetStyle().FramePadding.x * 2;
  }

  // Limits that show [x0, x1) x [y0, y1) whole in a plot of px pixels with equal scaling on both axes (the
  // longer side fills the plot, the other is centred).
  static std::array<double, 4> fit_equal(double x0, double x1, double y0, double y1, ImVec2 px) {
    const double w = x1 - x0, h = y1 - y0;
    const double per_px = std::max(w / std::max(1.0f, px.x), h / std::max(1.0f, px.y));
    const double fw = per_px * px.x, fh = per_px * px.y;
    const double cx = 0.5 * (x0 + x1), cy = 0.5 * (y0 + y1);
    return {cx - fw / 2, cx + fw / 2, cy - fh / 2, cy + fh / 2};
  }

  // The mouse wheel over a map zooms about the element under the cursor: that element stays where it is on
  // the screen, the view shrinks or grows kWheelZoom times per click (fractions of a click from a touchpad
  // likewise). Done here, from last frame's plot rectangle and limits, before any plot is set up, so C and
  // the error map (linked) take the same view in the same frame; ImPlot's own wheel zoom is switched off for
  // the maps (it moved the view toward the centre under equal scaling, 5 % a click). Zooming out ends at the
  // whole matrix; near the matrix's edges the view slides back over it instead of showing empty space.
  void wheel_zoom(const MatrixStore& store) {
    const ImGuiIO& io = ImGui::GetIO();
    if (io.MouseWheel == 0 || !ImGui::IsWindowHovered()) return;
    for (const MapInfo& mi : kMaps) {
      const size_t i = size_t(mi.id);
      const ImVec2 pos = m_plot_pos[i], px = m_plot_px[i];
      const PlotLimits& v = m_seen[i];
      if (px.x < 1 || px.y < 1 || !(v.x1 > v.x0) || !(v.y1 > v.y0)) continue;
      const ImVec2 m = io.MousePos;
      if (m.x < pos.x || m.y < pos.y || m.x >= pos.x + px.x || m.y >= pos.y + px.y) continue;
      const int64_t rows = store.rows(mi.id), cols = store.cols(mi.id);
      // The point under the cursor, in elements (the row axis points down: y0 is the top edge).
      const double cx = v.x0 + double(m.x - pos.x) / double(px.x) * (v.x1 - v.x0);
      const double cy = v.y0 + double(m.y - pos.y) / double(px.y) * (v.y1 - v.y0);
      const double w = v.x1 - v.x0, h = v.y1 - v.y0;
      // Magnification, at most down to kMinSpan elements across the shorter side.
      double f = std::min(std::pow(kWheelZoom, double(io.MouseWheel)), std::min(w, h) / kMinSpan);
      if (io.MouseWheel > 0) f = std::max(1.0, f);  // already at the closest view: stay
      const bool linked = mi.id == MatrixId::C || mi.id == MatrixId::Error;
      const std::array<double, 4> whole = fit_equal(0, double(cols), 0, double(rows), px);
      std::optional<std::array<double, 4>> to;
      if (w / f < whole[1] - whole[0] && h / f < whole[3] - whole[2]) {
        std::array<double, 4> z = {cx - (cx - v.x0) / f, cx + (v.x1 - cx) / f, cy - (cy - v.y0) / f,
                                   cy + (v.y1 - cy) / f};
        if (f < 1) {  // zooming out: keep the matrix filling the view where it can
          slide_inside(z[0], z[1], double(cols));
          slide_inside(z[2], z[3], double(rows));
        }
        to = z;
      }
      const std::array<MatrixId, 2> ids = {linked ? MatrixId::C : mi.id, linked ? MatrixId::Error : mi.id};
      for (const MatrixId id : ids) {
        m_whole[size_t(id)] = !to;
        m_zoom_to[size_t(id)] = to;
      }
      return;
    }
  }

  // The least size of this panel that draws the maps two by two, each at least 6 em and as wide as its colour
  // scale (whose width follows its labels), with their axes and titles: the layout keeps this much room for
  // the panel when the window shrinks (layout.cpp). avail: the room the maps had under the toolbar.
  void report_least_size(FrameReport& out, ImVec2 avail) {
    const ImGuiStyle& st = ImGui::GetStyle();
    float cell_w = 0, cell_h = 0;
    for (size_t i = 0; i < kMaps.size(); ++i) {
      const float legend = m_legend_w[i] > 0 ? m_legend_w[i] : ImGui::GetFontSize() * 4.2f;
      const float side =
          std::max(ImGui::GetFontSize() * 6, legend) + ImGui::GetFontSize() * 0.25f;  // + rounding
      cell_w = std::max(cell_w, side + m_pad[i].x + legend + st.ItemSpacing.x);
      cell_h = std::max(cell_h, side + m_pad[i].y + ImGui::GetTextLineHeightWithSpacing());
    }
    const ImVec2 window = ImGui::GetWindowSize();
    PanelReport& rep = out.panels[name()];
    rep.least_w = 2 * cell_w + st.ItemSpacing.x + (window.x - avail.x);
    rep.least_h = 2 * cell_h + st.ItemSpacing.y + (window.y - avail.y);
  }

  // [lo, hi) slid, keeping its width, so that it shows as much of [0, n) as it can.
  static void slide_inside(double& lo, double& hi, double n) {
    const double span = hi - lo;
    if (span >= n) {
      lo = 0.5 * (n - span);  // wider than the matrix: centred on it
    } else if (lo < 0) {
      lo = 0;
    } else if (hi > n) {
      lo = n - span;
    }
    hi = lo + span;
  }

  HeatmapSettings& settings_for(AppState& s, MatrixId id) {
    return id == MatrixId::Error ? s.settings.error : s.settings.matrices;
  }

  // One map in a cell: title, plot (its frame sized to the matrix's aspect ratio), colour scale.
  const gfx::HeatmapPicture* draw_map(AppState& s, FrameReport& out, gfx::HeatmapSet& set,
                                      const MatrixStore& store, const MapInfo& mi, ImVec2 cell) {
    const int64_t rows = store.rows(mi.id), cols = store.cols(mi.id);
    HeatmapSettings& hs = settings_for(s, mi.id);
    const Colormap& cmap = pick_colormap(hs.colormap, mi.id == MatrixId::Error ? "diverging" : "sequential");
    ImGui::PushID(mi.title);
    char head[160];
    std::snprintf(head, sizeof head, "%s   %s = %" PRId64 " x %" PRId64, mi.title, mi.shape, rows, cols);
    text_fit(head, nullptr, cell.x);
    const float em = ImGui::GetFontSize();
    // The frame follows the matrix's shape, so a 100 x 1000 matrix is drawn wide and flat, not stretched into
    // the cell.
    ImVec2& pad = m_pad[size_t(mi.id)];
    const ImVec2 inner = inner_size(mi, store, cell);
    const ImVec2 frame(std::max(em * 6, inner.x + pad.x), std::max(em * 5, inner.y + pad.y));
    const gfx::HeatmapPicture* shown = nullptr;
    char plot_id[64];  // a new shape is a new plot, so its zoom starts at the whole matrix
    std::snprintf(plot_id, sizeof plot_id, "##map%" PRId64 "x%" PRId64, rows, cols);
    const bool linked = mi.id == MatrixId::C || mi.id == MatrixId::Error;
    // The wheel is ours (wheel_zoom): ImPlot still takes it from the window (no scrolling), but zooms
    // nothing.
    ImPlotInputMap& input = ImPlot::GetInputMap();
    const float zoom_rate = input.ZoomRate;
    input.ZoomRate = 0;
    if (ImPlot::BeginPlot(plot_id, frame,
                          ImPlotFlags_NoLegend | ImPlotFlags_NoTitle | ImPlotFlags_Equal |
                              ImPlotFlags_NoMouseText | ImPlotFlags_NoMenus | ImPlotFlags_NoBoxSelect)) {
      // Row 0 at the top, column 0 at the left: the row axis points down.
      ImPlot::SetupAxes("column", "row", ImPlotAxisFlags_None, ImPlotAxisFlags_Invert);
      // The view: the whole matrix until the person zooms or pans (then theirs), or a requested region;
      // always with equal scaling, for the plot's size last frame (first frame: the frame less the axes'
      // room).
      const size_t i = size_t(mi.id);
      const std::pair<int64_t, int64_t> shape{rows, cols};
      if (m_shape[i] != shape) m_shape[i] = shape, m_whole[i] = true, m_plot_px[i] = ImVec2(0, 0);
      const ImVec2 px = m_plot_px[i].x > 0 ? m_plot_px[i] : ImVec2(frame.x - pad.x, frame.y - pad.y);
      const ZoomRequest* z = m_zoom;
      std::optional<std::array<double, 4>> set_to;
      if (z && (z->all_maps || linked)) {
        set_to = fit_equal(z->col0, z->col0 + z->cols, z->row0, z->row0 + z->rows, px);
        m_whole[i] = false;
      } else if (m_zoom_to[i]) {
        set_to = m_zoom_to[i];
      } else if (m_whole[i]) {
        set_to = fit_equal(0, double(cols), 0, double(rows), px);
      }
      if (set_to) {
        if (linked)
          m_link = *set_to;  // C and the error map share their axes: zooming one zooms the other
        else
          ImPlot::SetupAxesLimits((*set_to)[0], (*set_to)[1], (*set_to)[2], (*set_to)[3], ImPlotCond_Always);
      }
      if (linked) {
        ImPlot::SetupAxisLinks(ImAxis_X1, &m_link[0], &m_link[1]);
        ImPlot::SetupAxisLinks(ImAxis_Y1, &m_link[2], &m_link[3]);
      }
      // Ticks for this frame's view when it is set here, else for last frame's (the limits are not known
      // before setup ends).
      const PlotLimits seen =
          set_to ? PlotLimits{(*set_to)[0], (*set_to)[1], (*set_to)[2], (*set_to)[3]} : m_seen[size_t(mi.id)];
      if (seen.x1 > seen.x0) {
        setup_ticks(ImAxis_X1, seen.x0, seen.x1, px.x, false, cols);
        setup_ticks(ImAxis_Y1, seen.y0, seen.y1, px.y, true, rows);
      }
      // Keep at least a few elements in view and never wander far from the matrix.
      ImPlot::SetupAxisZoomConstraints(ImAxis_X1, kMinSpan, double(std::max(cols, rows)) * 1.5 + 2);
      ImPlot::SetupAxisZoomConstraints(ImAxis_Y1, kMinSpan, double(std::max(cols, rows)) * 1.5 + 2);
      ImPlot::SetupAxisLimitsConstraints(ImAxis_X1, -0.25 * double(std::max(cols, rows)) - 1,
                                         double(cols) + 0.25 * double(std::max(cols, rows)) + 1);
      ImPlot::SetupAxisLimitsConstraints(ImAxis_Y1, -0.25 * double(std::max(cols, rows)) - 1,
                                         double(rows) + 0.25 * double(std::max(cols, rows)) + 1);
      const ImPlotRect lim = ImPlot::GetPlotLimits();
      const ImVec2 psz = ImPlot::GetPlotSize();
      pad = ImVec2(std::max(0.0f, frame.x - psz.x), std::max(0.0f, frame.y - psz.y));
      m_seen[i] = PlotLimits{lim.X.Min, lim.X.Max, lim.Y.Min, lim.Y.Max};
      m_plot_px[i] = psz;
      m_plot_pos[i] = ImPlot::GetPlotPos();
      m_zoom_to[i].reset();
      gfx::HeatmapRequest req;
      req.id = mi.id;
      req.limits = PlotLimits{lim.X.Min, lim.X.Max, lim.Y.Min, lim.Y.Max};
      req.px_w = std::max(1, int(psz.x));
      req.px_h = std::max(1, int(psz.y));
      req.reduce = hs.reduce;
      req.colormap = &cmap;
      req.range = hs.range;
      req.manual = {hs.lo, hs.hi};
      req.tile_m = s.result->tile_m;
      req.tile_n = s.result->tile_n;
      const gfx::HeatmapPicture& pic = set.picture(req);
      shown = &pic;
      if (pic.ok) {
        const LodRegion& r = pic.region;
        draw_rows_down("##img", pic.texture, double(r.col0), double(r.row0), double(r.col0 + r.cols),
                       double(r.row0 + r.rows));
      } else if (pic.pending) {  // a remote engine's first view of this result, on its way
        ImPlot::PlotText("coming from the engine...", double(cols) * 0.5, double(rows) * 0.5);
      } else if (!pic.error.empty()) {
        ImPlot::PlotText(("no picture: " + pic.error).c_str(), double(cols) * 0.5, double(rows) * 0.5);
        if (m_reported_error != pic.error) {
          m_reported_error = pic.error;
          s.say(Severity::Error, std::string("heatmap ") + mi.title + ": " + pic.error);
        }
      }
      if (pic.ok) draw_algorithm_layers(s, mi, rows, cols);
      if (ImPlot::IsPlotHovered()) {
        // The person pans: the view is theirs from now on (C and the error map together; the wheel is
        // wheel_zoom's).
        if (ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
          m_whole[i] = false;
          if (linked) m_whole[size_t(MatrixId::C)] = m_whole[size_t(MatrixId::Error)] = false;
        }
        hover(out, set, mi, pic, rows, cols, hs.reduce);
        maybe_choose_tile(s, mi);
        // ImPlot's double-click fits the plotted image (the region in view): make it mean "whole matrix".
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) m_reset_next = true;
      }
      const ImVec2 pos = ImPlot::GetPlotPos();
      HeatmapReport& rep = out.heatmaps[std::string("heatmap ") + mi.title];
      rep.plot = Rect{pos.x, pos.y, psz.x, psz.y};
      rep.x0 = lim.X.Min;
      rep.x1 = lim.X.Max;
      rep.y0 = lim.Y.Min;
      rep.y1 = lim.Y.Max;
      rep.shown_lo = pic.shown.lo;
      rep.shown_hi = pic.shown.hi;
      rep.drawn = pic.ok;
      rep.pending = pic.pending;
      rep.coarse = pic.ok && pic.coarse;
      rep.region = pic.region;
      ImPlot::EndPlot();
    }
    input.ZoomRate = zoom_rate;
    ImGui::SameLine();
    const float lo = shown && shown->ok ? shown->shown.lo : 0.0f,
                hi = shown && shown->ok ? shown->shown.hi : 1.0f;
    const char* label = hs.range == RangeMode::Manual      ? "manual range"
                        : hs.range == RangeMode::Symmetric ? "+-max |value| in view"
                                                           : "min..max in view";
    // As wide as its tick labels need (measured for the next frame's layout).
    ImPlot::ColormapScale(label, lo, hi, ImVec2(0, frame.y), "%.3g", 0, scale_colormap(cmap));
    m_legend_w[size_t(mi.id)] = ImGui::GetItemRectSize().x;
    out.heatmaps[std::string("heatmap ") + mi.title].scale_w = ImGui::GetItemRectSize().x;
    if (ImGui::IsItemHovered() && shown && shown->ok)
      ImGui::SetTooltip(
          "colour scale: %.7g .. %.7g\nthe elements in view range from %.7g to %.7g\n(their own values, not "
          "the "
          "block %s a pixel shows)",
          double(lo), double(hi), double(shown->data.lo), double(shown->data.hi),
          kReduceNames[int(hs.reduce)]);
    ImGui::PopID();
    return shown;
  }

  // Hover: (row, col) and the element's exact value, always in that order; the value comes from the heatmap
  // set without blocking (a GPU read shows "reading..." for a frame or two).
  void hover(FrameReport& out, gfx::HeatmapSet& set, const MapInfo& mi, const gfx::HeatmapPicture& pic,
             int64_t rows, int64_t cols, Reduce reduce) {
    const ImPlotPoint mp = ImPlot::GetPlotMousePos();
    const int64_t col = int64_t(std::floor(mp.x)), row = int64_t(std::floor(mp.y));
    if (row < 0 || row >= rows || col < 0 || col >= cols) return;
    const gfx::HoverValue v = set.hover(mi.id, row, col);
    out.hover = HoverReport{mi.title, row, col, v.state == gfx::HoverValue::State::Ready, v.value};
    char value[96];
    switch (v.state) {
      case gfx::HoverValue::State::Ready:
        std::snprintf(value, sizeof value, "value %.7g", double(v.value));
        break;
      case gfx::HoverValue::State::Pending:
        std::snprintf(value, sizeof value, "value: reading...");
        break;
      case gfx::HoverValue::State::Failed:
        std::snprintf(value, sizeof value, "value unavailable: %.60s", v.error.c_str());
        break;
      default:
        value[0] = 0;
    }
    ImGui::BeginTooltip();
    ImGui::Text("%s[row %" PRId64 ", col %" PRId64 "]", mi.id == MatrixId::Error ? "C - ref" : mi.title, row,
                col);
    ImGui::TextUnformatted(value);
    if (pic.ok && pic.block_rows * pic.block_cols > 1)
      ImGui::TextDisabled("a pixel shows the %s of a block of up to %" PRId64 " x %" PRId64 " elements",
                          kReduceNames[int(reduce)], pic.block_rows, pic.block_cols);
    ImGui::EndTooltip();
  }

  // ImPlot's colour scale for the legend: our table registered once as an ImPlot colormap.
  ImPlotColormap scale_colormap(const Colormap& c) {
    const std::string key = "ts:" + c.name;
    ImPlotColormap id = ImPlot::GetColormapIndex(key.c_str());
    if (id >= 0) return id;
    std::array<ImVec4, 256> cols;
    for (int i = 0; i < 256; ++i)
      cols[size_t(i)] = ImVec4(c.rgba[size_t(i)][0] / 255.0f, c.rgba[size_t(i)][1] / 255.0f,
                               c.rgba[size_t(i)][2] / 255.0f, 1.0f);
    return ImPlot::AddColormap(key.c_str(), cols.data(), 256, false);
  }

  std::array<ImVec2, 4> m_pad{};       // frame size minus plot size, per map (the axes' room)
  std::array<PlotLimits, 4> m_seen{};  // each map's limits last frame (for its ticks)
  std::array<ImVec2, 4> m_plot_px{};   // each map's plot size last frame
  std::array<ImVec2, 4> m_plot_pos{};  // and its top-left corner on the screen
  std::array<std::optional<std::array<double, 4>>, 4> m_zoom_to{};  // this frame's view from the wheel
  std::array<float, 4> m_legend_w{};                                // each colour scale's width last frame
  std::array<bool, 4> m_whole{true, true, true, true};   // showing the whole matrix (not zoomed by hand)
  std::array<std::pair<int64_t, int64_t>, 4> m_shape{};  // the shape each map showed last
  std::array<double, 4> m_link{};                        // x min, x max, y min, y max of C and the error map
  const ZoomRequest* m_zoom = nullptr;                   // the region asked for this frame (null: none)
  const ScheduleReplay* m_replay = nullptr;              // this frame's replay, when it is drawn
  ReplayLayer m_layer;
  std::optional<FeedPlan> m_feed;  // this frame's feeding outlines
  bool m_reset = false, m_reset_next = false;
  std::string m_reported_error;
};

}  // namespace

std::unique_ptr<Panel> make_matrices_panel() {
  return std::make_unique<MatricesPanel>();
}

}  // namespace ts::ui

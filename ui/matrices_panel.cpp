// Matrices: A, B, C and the signed error C - reference as heatmaps with axes, a colour scale and hover
// readout. Each heatmap shows the region the plot's axes show: the region is reduced on the device to the
// plot's pixel size (level of detail) and written into a GL texture through CUDA-OpenGL interop, or through
// host memory when interop is off; a shader colours it and draws the kernel's tile grid once a tile spans
// enough pixels. Wheel to zoom, drag to pan, double-click or "Whole" to see everything again.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include <imgui.h>
#include <implot.h>

#include "colormap.hpp"
#include "heatmap_gl.hpp"
#include "panel.hpp"

namespace ts::ui {

namespace {

const char* const kReduceNames[] = {"mean", "min", "max", "abs max"};
const char* const kRangeNames[] = {"auto", "symmetric", "manual"};

const Colormap& pick_colormap(const std::string& name, const char* kind) {
  if (const Colormap* c = find_colormap(name)) return *c;
  for (const Colormap& c : colormaps())
    if (c.kind == kind) return c;
  return colormaps().front();
}

struct Heatmap {
  Heatmap(MatrixId i, const char* t, const char* sh) : id(i), title(t), shape(sh) {}
  MatrixId id;
  const char* title;
  const char* shape;  // "M x K" ...
  gfx::HeatmapLayer layer;
  // What the value texture holds, and what the colour target was painted with (repaint only on change).
  uint64_t serial = 0;
  LodRegion region;
  Reduce reduce = Reduce::Mean;
  bool valid = false, interop = false;
  ValueRange data;   // finite range of the values in view
  ValueRange shown;  // the colour scale in use
  std::string painted_key;
  GLuint color_tex = 0;
  double refresh_ms = 0;
  // The plot's limits and size last frame: a new result refreshes all maps in one batch before drawing.
  bool have_geometry = false;
  PlotLimits last_limits;
  ImVec2 last_size;
  // Hover cache: one exact element read per hovered element.
  int64_t hover_row = -1, hover_col = -1;
  uint64_t hover_serial = 0;
  float hover_value = 0;
  std::string hover_error;
};

class MatricesPanel final : public Panel {
 public:
  MatricesPanel()
      : m_maps{{{MatrixId::A, "A", "M x K"},
                {MatrixId::B, "B", "K x N"},
                {MatrixId::C, "C = A B", "M x N"},
                {MatrixId::Error, "C - reference", "M x N"}}} {}
  const char* name() const override { return "Matrices"; }
  Rect default_rect(float w, float h) const override {
    const float left = std::min(340.0f, w * 0.3f), right = std::min(360.0f, w * 0.28f);
    return {left, 0, w - left - right, (h - 32) * 0.58f};
  }

 protected:
  void draw_content(AppState& s) override {
    if (!s.result || !s.result->store) {
      ImGui::TextDisabled(s.busy ? "running..." : "no matrices yet: press Run");
      return;
    }
    if (!s.heatmaps) {
      ImGui::TextDisabled("heatmaps need a GL context");
      return;
    }
    m_reset = std::exchange(m_reset_next, false);
    toolbar(s);
    const MatrixStore& store = *s.result->store;
    refresh_new_result(s, store);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float cell_w = avail.x * 0.5f - 4, cell_h = std::max(120.0f, avail.y * 0.5f - 4);
    // C and the error map share their axes: zooming one zooms the other.
    if (m_linked_shape != std::make_pair(store.rows(MatrixId::C), store.cols(MatrixId::C)) || m_reset) {
      m_linked_shape = {store.rows(MatrixId::C), store.cols(MatrixId::C)};
      m_link = {0, double(m_linked_shape.second), 0, double(m_linked_shape.first)};
    }
    bool any_interop = false, any_host = false;
    if (ImGui::BeginTable("maps", 2, ImGuiTableFlags_None)) {
      for (Heatmap& m : m_maps) {
        ImGui::TableNextColumn();
        draw_map(s, store, m, ImVec2(cell_w, cell_h));
        if (m.valid) (m.interop ? any_interop : any_host) = true;
      }
      ImGui::EndTable();
    }
    m_reset = false;
    const auto& st = s.heatmaps->interop();
    s.panel_state["Matrices"] = any_interop && !any_host ? "interop" : "host: " + st.why;
  }

 private:
  void toolbar(AppState& s) {
    auto group = [&](const char* label, HeatmapSettings& h, const char* kind) {
      ImGui::PushID(label);
      ImGui::TextDisabled("%s", label);
      ImGui::SameLine();
      const Colormap& cur = pick_colormap(h.colormap, kind);
      ImGui::SetNextItemWidth(95);
      if (ImGui::BeginCombo("##map", cur.name.c_str())) {
        for (const Colormap& c : colormaps())
          if (ImGui::Selectable((c.name + "  (" + c.kind + ")").c_str(), c.name == cur.name))
            h.colormap = c.name;
        ImGui::EndCombo();
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("colormap");
      ImGui::SameLine();
      int r = int(h.reduce);
      ImGui::SetNextItemWidth(105);
      if (ImGui::Combo("##lod", &r, kReduceNames, 4)) h.reduce = Reduce(r);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("level of detail: what one pixel shows when it covers a block of elements");
      ImGui::SameLine();
      int g = int(h.range);
      ImGui::SetNextItemWidth(85);
      if (ImGui::Combo("##range", &g, kRangeNames, 3)) h.range = RangeMode(g);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("colour range: auto (min..max in view), symmetric around zero, or manual");
      if (h.range == RangeMode::Manual) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(140);
        float lohi[2] = {h.lo, h.hi};
        if (ImGui::InputFloat2("##lohi", lohi, "%.4g")) {
          // Accept only finite numbers; a reversed pair is swapped by resolve_range.
          if (std::isfinite(lohi[0]) && std::isfinite(lohi[1])) h.lo = lohi[0], h.hi = lohi[1];
        }
      }
      ImGui::PopID();
    };
    if (ImGui::SmallButton("Whole")) m_reset = true;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("zoom out to the whole matrices (or double-click a map)");
    ImGui::SameLine(0, 14);
    group("A B C", s.settings.matrices, "sequential");
    ImGui::SameLine(0, 14);
    group("error", s.settings.error, "diverging");
  }

  // The region a plot with these limits and pixel size shows, reduced to at most one value per pixel; out_w x
  // out_h: the region's size on screen.
  static LodRegion region_in_view(const PlotLimits& pl, ImVec2 psz, int64_t rows, int64_t cols, int* out_w,
                                  int* out_h) {
    LodRegion region = region_for(pl, rows, cols, int(psz.x), int(psz.y));
    const double ppx = psz.x / std::max(1e-9, pl.x1 - pl.x0);
    const double ppy = psz.y / std::max(1e-9, pl.y1 - pl.y0);
    *out_w = int(std::clamp(std::ceil(double(region.cols) * ppx), 1.0, 8192.0));
    *out_h = int(std::clamp(std::ceil(double(region.rows) * ppy), 1.0, 8192.0));
    region.w = int(std::clamp<int64_t>(*out_w, 1, region.cols));
    region.h = int(std::clamp<int64_t>(*out_h, 1, region.rows));
    return region;
  }

  // A new result (Repeat re-runs the kernel several times a second) changes all four maps: refresh them in
  // one batch (one interop map/unmap, one synchronisation) at last frame's zoom.
  void refresh_new_result(AppState& s, const MatrixStore& store) {
    std::vector<gfx::HeatmapLayer::Job> jobs;
    std::vector<Heatmap*> who;
    for (Heatmap& m : m_maps) {
      if (!m.have_geometry || (m.valid && m.serial == s.result_serial)) continue;
      int ow, oh;
      const LodRegion r =
          region_in_view(m.last_limits, m.last_size, store.rows(m.id), store.cols(m.id), &ow, &oh);
      jobs.push_back({&m.layer, &store, m.id, r, settings_for(s, m).reduce, {}});
      who.push_back(&m);
    }
    if (jobs.empty()) return;
    try {
      const double t0 = ImGui::GetTime();
      gfx::HeatmapLayer::refresh_all(*s.heatmaps, jobs);
      const double ms = (ImGui::GetTime() - t0) * 1e3;
      for (size_t i = 0; i < jobs.size(); ++i) {
        Heatmap& m = *who[i];
        m.data = jobs[i].result.range;
        m.interop = jobs[i].result.interop;
        m.valid = true;
        m.serial = s.result_serial;
        m.region = jobs[i].region;
        m.reduce = jobs[i].mode;
        m.refresh_ms = ms;
      }
    } catch (const std::exception& e) {
      for (Heatmap* m : who) m->valid = false;
      s.status_message = std::string("heatmaps: ") + e.what();
      s.status_time = ImGui::GetTime();
    }
  }

  HeatmapSettings& settings_for(AppState& s, const Heatmap& m) {
    return m.id == MatrixId::Error ? s.settings.error : s.settings.matrices;
  }

  void draw_map(AppState& s, const MatrixStore& store, Heatmap& m, ImVec2 size) {
    const int64_t rows = store.rows(m.id), cols = store.cols(m.id);
    HeatmapSettings& hs = settings_for(s, m);
    const Colormap& cmap = pick_colormap(hs.colormap, m.id == MatrixId::Error ? "diverging" : "sequential");
    ImGui::PushID(m.title);
    ImGui::Text("%s", m.title);
    ImGui::SameLine();
    ImGui::TextDisabled("%s = %lld x %lld", m.shape, (long long)rows, (long long)cols);
    const float legend_w = 70;
    const ImVec2 plot_size(size.x - legend_w - 8, size.y - ImGui::GetTextLineHeightWithSpacing());
    char plot_id[64];  // a new shape is a new plot, so its zoom starts at the whole matrix
    std::snprintf(plot_id, sizeof plot_id, "##map%lldx%lld", (long long)rows, (long long)cols);
    if (ImPlot::BeginPlot(plot_id, plot_size, ImPlotFlags_NoLegend | ImPlotFlags_NoTitle)) {
      ImPlot::SetupAxes("col", "row", ImPlotAxisFlags_None, ImPlotAxisFlags_Invert);
      const bool linked = m.id == MatrixId::C || m.id == MatrixId::Error;
      if (s.zoom_request) {  // snapshot --zoom: row0, col0, rows, cols
        const auto& z = *s.zoom_request;
        ImPlot::SetupAxesLimits(z[1], z[1] + z[3], z[0], z[0] + z[2], ImPlotCond_Always);
        if (linked) m_link = {z[1], z[1] + z[3], z[0], z[0] + z[2]};
      } else {
        ImPlot::SetupAxesLimits(0, double(cols), 0, double(rows),
                                m_reset ? ImPlotCond_Always : ImPlotCond_Once);
      }
      if (linked) {
        ImPlot::SetupAxisLinks(ImAxis_X1, &m_link[0], &m_link[1]);
        ImPlot::SetupAxisLinks(ImAxis_Y1, &m_link[2], &m_link[3]);
      }
      // Keep at least a few elements in view and never wander far from the matrix.
      ImPlot::SetupAxisZoomConstraints(ImAxis_X1, 2.0, double(cols) * 1.5 + 2);
      ImPlot::SetupAxisZoomConstraints(ImAxis_Y1, 2.0, double(rows) * 1.5 + 2);
      ImPlot::SetupAxisLimitsConstraints(ImAxis_X1, -0.25 * double(cols) - 1, 1.25 * double(cols) + 1);
      ImPlot::SetupAxisLimitsConstraints(ImAxis_Y1, -0.25 * double(rows) - 1, 1.25 * double(rows) + 1);
      const ImPlotRect lim = ImPlot::GetPlotLimits();
      const ImVec2 psz = ImPlot::GetPlotSize();
      const PlotLimits pl{lim.X.Min, lim.X.Max, lim.Y.Min, lim.Y.Max};
      int out_w = 1, out_h = 1;
      const LodRegion region = region_in_view(pl, psz, rows, cols, &out_w, &out_h);
      m.have_geometry = true;
      m.last_limits = pl;
      m.last_size = psz;

      if (!m.valid || m.serial != s.result_serial || m.region != region || m.reduce != hs.reduce) {
        try {
          const double t0 = ImGui::GetTime();
          const auto r = m.layer.refresh(*s.heatmaps, store, m.id, region, hs.reduce);
          m.refresh_ms = (ImGui::GetTime() - t0) * 1e3;
          m.data = r.range;
          m.interop = r.interop;
          m.valid = true;
        } catch (const std::exception& e) {
          m.valid = false;
          s.status_message = std::string("heatmap ") + m.title + ": " + e.what();
          s.status_time = ImGui::GetTime();
        }
        m.serial = s.result_serial;
        m.region = region;
        m.reduce = hs.reduce;
      }
      if (m.valid) {
        m.shown = resolve_range(hs.range, m.data, {hs.lo, hs.hi});
        gfx::ColorParams cp;
        cp.lo = m.shown.lo;
        cp.hi = m.shown.hi;
        cp.row0 = region.row0;
        cp.col0 = region.col0;
        cp.rows = region.rows;
        cp.cols = region.cols;
        // The kernel's tile grid: output blocks on C and the error map; the rows a block reads of A, the
        // columns of B.
        const int tm = s.result->tile_m, tn = s.result->tile_n;
        if (tm > 0 && tn > 0 && tile_grid_visible(pl, int(psz.x), int(psz.y), std::min(tm, tn))) {
          cp.tile_m = m.id == MatrixId::B ? 0 : tm;
          cp.tile_n = m.id == MatrixId::A ? 0 : tn;
        }
        char key[256];
        std::snprintf(key, sizeof key, "%llu %lld %lld %lld %lld %d %d %a %a %d %d %s %d %d",
                      (unsigned long long)m.serial, (long long)region.row0, (long long)region.col0,
                      (long long)region.rows, (long long)region.cols, region.w, region.h, double(cp.lo),
                      double(cp.hi), cp.tile_m, cp.tile_n, cmap.name.c_str(), out_w, out_h);
        if (m.painted_key != key || !m.color_tex) {
          m.color_tex = m.layer.paint(cmap, cp, out_w, out_h);
          m.painted_key = key;
        }
        ImPlot::PlotImage("##img", ImTextureID(intptr_t(m.color_tex)),
                          ImPlotPoint(double(region.col0), double(region.row0)),
                          ImPlotPoint(double(region.col0 + region.cols), double(region.row0 + region.rows)));
      }
      if (ImPlot::IsPlotHovered()) {
        hover(s, store, m, region);
        // ImPlot's double-click fits the plotted image (the region in view): make it mean "whole matrix".
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) m_reset_next = true;
      }
      const ImVec2 pos = ImPlot::GetPlotPos();
      s.layout[std::string("heatmap ") + m.title] = Rect{pos.x, pos.y, psz.x, psz.y};
      ImPlot::EndPlot();
    }
    ImGui::SameLine();
    ImPlot::ColormapScale("##scale", m.shown.lo, m.shown.hi, ImVec2(legend_w, plot_size.y), "%.2g", 0,
                          scale_colormap(cmap));
    ImGui::PopID();
  }

  void hover(AppState& s, const MatrixStore& store, Heatmap& m, const LodRegion& region) {
    const ImPlotPoint mp = ImPlot::GetPlotMousePos();
    const int64_t col = int64_t(std::floor(mp.x)), row = int64_t(std::floor(mp.y));
    if (row < 0 || row >= store.rows(m.id) || col < 0 || col >= store.cols(m.id)) return;
    if (row != m.hover_row || col != m.hover_col || s.result_serial != m.hover_serial) {
      m.hover_row = row;
      m.hover_col = col;
      m.hover_serial = s.result_serial;
      try {
        m.hover_value = store.element(m.id, row, col);
        m.hover_error.clear();
      } catch (const std::exception& e) {
        m.hover_error = e.what();
      }
    }
    const int64_t br = (region.rows + region.h - 1) / region.h, bc = (region.cols + region.w - 1) / region.w;
    if (!m.hover_error.empty()) {
      ImGui::SetTooltip("row %lld, col %lld\n%s", (long long)row, (long long)col, m.hover_error.c_str());
    } else if (br * bc > 1) {
      ImGui::SetTooltip(
          "row %lld, col %lld\nvalue %.7g\n(a pixel shows the block %s of up to %lld x %lld elements)",
          (long long)row, (long long)col, double(m.hover_value), kReduceNames[int(m.reduce)], (long long)br,
          (long long)bc);
    } else {
      ImGui::SetTooltip("row %lld, col %lld\nvalue %.7g", (long long)row, (long long)col,
                        double(m.hover_value));
    }
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

  std::array<Heatmap, 4> m_maps;
  std::pair<int64_t, int64_t> m_linked_shape{-1, -1};
  std::array<double, 4> m_link{};  // x min, x max, y min, y max of C and the error map
  bool m_reset = false, m_reset_next = false;
};

}  // namespace

std::unique_ptr<Panel> make_matrices_panel() {
  return std::make_unique<MatricesPanel>();
}

}  // namespace ts::ui

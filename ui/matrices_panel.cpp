// Matrices: A, B, C and |C - reference| as heatmaps with axes, a colormap legend and hover readout.
// The views arrive as host arrays (at most view_size^2 block summaries); this panel colours them through
// ImPlot's colormaps into textures (the GPU interop path replaces this upload later).
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <imgui.h>
#include <implot.h>

#include "panel.hpp"
#include "texture.hpp"

namespace ts::ui {

namespace {

struct Heatmap {
  Heatmap(const char* t, const char* s, ImPlotColormap c) : title(t), shape(s), cmap(c) {}
  const char* title;
  const char* shape;  // "M x K" ...
  ImPlotColormap cmap;
  gfx::Texture2D tex;
  float lo = 0, hi = 1;  // colour range of the view's values
};

class MatricesPanel final : public Panel {
 public:
  MatricesPanel()
      : m_maps{{{"A", "M x K", ImPlotColormap_Viridis},
                {"B", "K x N", ImPlotColormap_Viridis},
                {"C = A B", "M x N", ImPlotColormap_Viridis},
                {"|C - reference|", "M x N", ImPlotColormap_Hot}}} {}
  const char* name() const override { return "Matrices"; }
  Rect default_rect(float w, float h) const override {
    const float left = std::min(340.0f, w * 0.3f), right = std::min(360.0f, w * 0.28f);
    return {left, 0, w - left - right, (h - 32) * 0.58f};
  }

 protected:
  void draw_content(AppState& s) override {
    if (!s.result || !s.result->views) {
      ImGui::TextDisabled(s.busy ? "running..." : "no matrices yet: press Run");
      return;
    }
    const MatrixViews& v = *s.result->views;
    const std::array<const HeatmapView*, 4> views = {&v.a, &v.b, &v.c, &v.err};
    if (m_serial != s.result_serial) {
      for (int i = 0; i < 4; ++i) upload(m_maps[size_t(i)], *views[size_t(i)], i == 3);
      m_serial = s.result_serial;
    }
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float cell_w = avail.x * 0.5f - 4, cell_h = std::max(120.0f, avail.y * 0.5f - 4);
    if (ImGui::BeginTable("maps", 2, ImGuiTableFlags_None)) {
      for (int i = 0; i < 4; ++i) {
        ImGui::TableNextColumn();
        draw_map(s, m_maps[size_t(i)], *views[size_t(i)], ImVec2(cell_w, cell_h), i == 3);
      }
      ImGui::EndTable();
    }
  }

 private:
  static void upload(Heatmap& m, const HeatmapView& v, bool is_error) {
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (float x : v.values)
      if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
    if (!(lo <= hi)) lo = hi = 0;
    if (is_error) lo = 0;
    if (hi - lo < 1e-30f) hi = lo + 1.0f;  // flat matrices (ones, an exact error map) still get a colour
    m.lo = lo;
    m.hi = hi;
    std::vector<uint8_t> rgba(v.values.size() * 4);
    for (size_t i = 0; i < v.values.size(); ++i) {
      const float x = v.values[i];
      ImVec4 c = std::isfinite(x)
                     ? ImPlot::SampleColormap(std::clamp((x - lo) / (hi - lo), 0.0f, 1.0f), m.cmap)
                     : ImVec4(1, 0, 1, 1);  // NaN / Inf: magenta
      rgba[i * 4 + 0] = uint8_t(std::lround(c.x * 255));
      rgba[i * 4 + 1] = uint8_t(std::lround(c.y * 255));
      rgba[i * 4 + 2] = uint8_t(std::lround(c.z * 255));
      rgba[i * 4 + 3] = 255;
    }
    m.tex.upload_rgba(v.w, v.h, rgba.data());
  }

  void draw_map(AppState& s, Heatmap& m, const HeatmapView& v, ImVec2 size, bool is_error) {
    ImGui::PushID(m.title);
    ImGui::Text("%s", m.title);
    ImGui::SameLine();
    ImGui::TextDisabled("%s = %lld x %lld, range [%.3g, %.3g]", m.shape, (long long)v.rows, (long long)v.cols,
                        v.vmin, v.vmax);
    const float legend_w = 70;
    const ImVec2 plot_size(size.x - legend_w - 8, size.y - ImGui::GetTextLineHeightWithSpacing());
    char plot_id[64];  // a new shape is a new plot, so its zoom starts at the whole matrix
    std::snprintf(plot_id, sizeof plot_id, "##map%lldx%lld", (long long)v.rows, (long long)v.cols);
    if (ImPlot::BeginPlot(plot_id, plot_size, ImPlotFlags_NoLegend | ImPlotFlags_NoTitle)) {
      ImPlot::SetupAxes("col", "row", ImPlotAxisFlags_None, ImPlotAxisFlags_Invert);
      ImPlot::SetupAxesLimits(0, double(v.cols), 0, double(v.rows), ImPlotCond_Once);
      ImPlot::PlotImage("##img", ImTextureID(intptr_t(m.tex.id())), ImPlotPoint(0, 0),
                        ImPlotPoint(double(v.cols), double(v.rows)));
      if (ImPlot::IsPlotHovered()) {
        const ImPlotPoint mp = ImPlot::GetPlotMousePos();
        const int64_t col = int64_t(std::floor(mp.x)), row = int64_t(std::floor(mp.y));
        if (row >= 0 && row < v.rows && col >= 0 && col < v.cols) {
          const int x = int(col * v.w / v.cols), y = int(row * v.h / v.rows);
          const float val = v.values[size_t(y) * size_t(v.w) + size_t(x)];
          const bool exact = v.w == v.cols && v.h == v.rows;
          ImGui::SetTooltip("row %lld, col %lld\n%s %.6g", (long long)row, (long long)col,
                            exact ? "value" : (is_error ? "block max" : "block mean"), val);
        }
      }
      const ImVec2 pos = ImPlot::GetPlotPos(), psz = ImPlot::GetPlotSize();
      s.layout[std::string("heatmap ") + m.title] = Rect{pos.x, pos.y, psz.x, psz.y};
      ImPlot::EndPlot();
    }
    ImGui::SameLine();
    ImPlot::ColormapScale("##scale", m.lo, m.hi, ImVec2(legend_w, plot_size.y), "%.2g", 0, m.cmap);
    ImGui::PopID();
  }

  std::array<Heatmap, 4> m_maps;
  uint64_t m_serial = 0;
};

}  // namespace

std::unique_ptr<Panel> make_matrices_panel() {
  return std::make_unique<MatricesPanel>();
}

}  // namespace ts::ui

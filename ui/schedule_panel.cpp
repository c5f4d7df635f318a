// Tile schedule: for the last run's traced launch, which SM computed each output tile and when. The tile grid
// coloured by SM, start time or duration; a per-SM timeline (Gantt) aggregated into a texture of SM x time
// bins; and the number of tiles resident over time. Everything is drawn through textures or aggregated
// curves, so 65536 tiles stay interactive.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>
#include <implot.h>

#include "panel.hpp"
#include "texture.hpp"
#include "theme.hpp"

namespace ts::ui {

namespace {

enum class ColorBy { Sm = 0, Start = 1, Duration = 2 };

uint32_t pack(ImVec4 c) {
  return uint32_t(std::lround(c.x * 255)) | uint32_t(std::lround(c.y * 255)) << 8 |
         uint32_t(std::lround(c.z * 255)) << 16 | 0xff000000u;
}

class SchedulePanel final : public Panel {
 public:
  const char* name() const override { return "Tile schedule"; }

 protected:
  void draw_content(AppState& s) override {
    if (needs_gpu_notice(s, name(), "The tile schedule")) return;
    if (!s.result || !s.result->trace) {
      ImGui::TextDisabled("%s", s.result && !s.result->trace_note.empty() ? s.result->trace_note.c_str()
                                                                          : "no traced launch yet");
      return;
    }
    const TileTrace& t = *s.result->trace;
    if (m_serial != s.result_serial || m_built_mode != m_mode) rebuild(s, t);
    if (!m_summary.problem.empty()) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(palette().bad, "trace inconsistent: %s", m_summary.problem.c_str());
      ImGui::PopTextWrapPos();
      return;
    }
    export_button(s, name(), "schedule", [&] { return schedule_csv(t); });
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    ImGui::Combo("colour by", &m_mode, "SM\0start time\0duration\0");
    int used = 0;
    for (int c : m_summary.tiles_per_sm) used += c > 0;
    ImGui::TextWrapped(
        "%zu tiles of %d x %d on %d SMs, up to %d in a row on one SM; tiles take %.1f us on average "
        "(%.1f-%.1f); up to %d resident at once",
        t.records.size(), t.tile_m, t.tile_n, used, m_summary.waves, m_summary.mean_tile_us,
        m_summary.min_tile_us, m_summary.max_tile_us, m_summary.max_concurrency);
    char cost[200];
    std::snprintf(cost, sizeof cost,
                  "traced launch %.4g ms vs plain %.4g ms (x%.3f); %%globaltimer resolution seen: %llu ns",
                  t.traced_ms, t.plain_ms, t.plain_ms > 0 ? t.traced_ms / t.plain_ms : 0.0,
                  (unsigned long long)t.timer_resolution_ns);
    text_muted_wrapped(cost);

    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float top_h = std::max(150.0f, avail.y * 0.6f);
    // Tile grid (rows of tiles down, columns across, like C).
    if (ImGui::BeginTable("sched", 2, ImGuiTableFlags_Resizable)) {
      ImGui::TableNextColumn();
      if (ImPlot::BeginPlot("tiles of C", ImVec2(-1, top_h), ImPlotFlags_NoLegend)) {
        ImPlot::SetupAxes("tile column", "tile row", ImPlotAxisFlags_None, ImPlotAxisFlags_Invert);
        ImPlot::SetupAxesLimits(0, t.grid_x, 0, t.grid_y, ImPlotCond_Once);
        draw_rows_down("##grid", m_grid.id(), 0, 0, t.grid_x, t.grid_y);
        if (ImPlot::IsPlotHovered()) {
          const ImPlotPoint p = ImPlot::GetPlotMousePos();
          const int x = int(std::floor(p.x)), y = int(std::floor(p.y));
          if (x >= 0 && x < t.grid_x && y >= 0 && y < t.grid_y) {
            const TileRecord& r = t.records[size_t(y) * size_t(t.grid_x) + size_t(x)];
            ImGui::SetTooltip("tile (%d, %d): SM %u\nstart %.2f us, end %.2f us, %.2f us", y, x, r.smid,
                              double(r.start_ns - m_summary.t0) * 1e-3,
                              double(r.end_ns - m_summary.t0) * 1e-3, double(r.end_ns - r.start_ns) * 1e-3);
          }
        }
        ImPlot::EndPlot();
      }
      ImGui::TableNextColumn();
      // Gantt: SMs down, time across; brightness = tiles of that SM running in the time bin.
      const double span_us = double(m_summary.t1 - m_summary.t0) * 1e-3;
      if (ImPlot::BeginPlot("tiles per SM over time", ImVec2(-1, top_h), ImPlotFlags_NoLegend)) {
        ImPlot::SetupAxes("us", "SM", ImPlotAxisFlags_None, ImPlotAxisFlags_Invert);
        ImPlot::SetupAxesLimits(0, span_us, 0, m_sms, ImPlotCond_Once);
        draw_rows_down("##gantt", m_gantt.id(), 0, 0, span_us, m_sms);
        ImPlot::EndPlot();
      }
      ImGui::EndTable();
    }
    if (ImPlot::BeginPlot("tiles resident on the GPU", ImVec2(-1, -1), ImPlotFlags_NoLegend)) {
      ImPlot::SetupAxes("us", "tiles", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
      ImPlot::PlotStairs("resident", m_view->curve_us.data(), m_view->curve_tiles.data(),
                         int(m_view->curve_us.size()));
      ImPlot::EndPlot();
    }
  }

 private:
  // Colours the aggregates the engine prepared with the trace (ScheduleView): a lookup per tile and per
  // gantt bin, cheap enough for the frame a new result arrives in.
  void rebuild(AppState& s, const TileTrace& t) {
    m_serial = s.result_serial;
    m_built_mode = m_mode;
    if (!t.view)
      m_local = std::make_shared<const ScheduleView>(prepare_schedule_view(t));  // a trace from elsewhere
    m_view = t.view ? t.view : m_local;
    m_summary = m_view->summary;
    if (!m_summary.problem.empty()) return;
    const ScheduleView& v = *m_view;
    const ImPlotColormap cmap = m_mode == int(ColorBy::Sm)      ? ImPlotColormap_Spectral
                                : m_mode == int(ColorBy::Start) ? ImPlotColormap_Viridis
                                                                : ImPlotColormap_Plasma;
    const std::array<uint32_t, 256> lut = colour_table(cmap),
                                    gantt_lut = colour_table(ImPlotColormap_Viridis);
    auto colour = [](const std::array<uint32_t, 256>& l, float x) {
      return l[size_t(std::clamp(int(x * 255.0f + 0.5f), 0, 255))];
    };
    std::vector<uint32_t> px(t.records.size());
    for (size_t i = 0; i < t.records.size(); ++i) {
      const float x = m_mode == int(ColorBy::Sm)
                          ? float((t.records[i].smid * 37u) % uint32_t(std::max(1, t.sm_count))) /
                                float(std::max(1, t.sm_count - 1))
                      : m_mode == int(ColorBy::Start) ? v.start_frac[i]
                                                      : v.duration_frac[i];
      px[i] = colour(lut, x);
    }
    m_grid.upload_rgba(t.grid_x, t.grid_y, reinterpret_cast<const uint8_t*>(px.data()));
    m_sms = v.gantt_sms;
    std::vector<uint32_t> gp(v.gantt.size());
    for (size_t i = 0; i < v.gantt.size(); ++i)
      gp[i] = v.gantt[i] > 0 ? colour(gantt_lut, v.gantt[i] / v.gantt_peak) : 0xff202020u;
    m_gantt.upload_rgba(v.gantt_bins, v.gantt_sms, reinterpret_cast<const uint8_t*>(gp.data()));
  }

  static std::array<uint32_t, 256> colour_table(ImPlotColormap cmap) {
    std::array<uint32_t, 256> l{};
    for (int i = 0; i < 256; ++i) l[size_t(i)] = pack(ImPlot::SampleColormap(float(i) / 255.0f, cmap));
    return l;
  }

  int m_mode = 0, m_built_mode = -1;
  uint64_t m_serial = 0;
  int m_sms = 1;
  ScheduleSummary m_summary;
  std::shared_ptr<const ScheduleView> m_view, m_local;
  gfx::Texture2D m_grid, m_gantt;
};

}  // namespace

std::unique_ptr<Panel> make_schedule_panel() {
  return std::make_unique<SchedulePanel>();
}

}  // namespace ts::ui

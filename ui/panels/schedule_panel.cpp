// Tile schedule: for the last run's traced launch, which SM computed each output tile and when. The tile grid
// coloured by SM, start time or duration; a per-SM timeline (Gantt) aggregated into a texture of SM x time
// bins; and the number of tiles resident over time. Everything is drawn through textures or aggregated
// curves, so 65536 tiles stay interactive.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>
#include <implot.h>

#include "ui/panels/algorithm_overlays.hpp"
#include "ui/panels/panel.hpp"
#include "ui/plots/plots.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

class SchedulePanel final : public Panel {
 public:
  const char* name() const override { return "Tile schedule"; }

 protected:
  void draw_content(AppState& s, FrameReport& out) override {
    if (needs_gpu_notice(s, out, name(), "The tile schedule")) return;
    if (gl_damage_notice(s, "the tile schedule")) return;
    if (!s.result || !s.result->trace) {
      ImGui::TextDisabled("%s", s.result && !s.result->trace_note.empty() ? s.result->trace_note.c_str()
                                                                          : "no traced launch yet");
      return;
    }
    const TileTrace& t = *s.result->trace;
    if (!m_view.update(t, s.result_serial, SchedulePlot::ColorBy(m_mode))) {
      text_lines("trace inconsistent: " + m_view.summary().problem, &palette().bad);
      return;
    }
    const ScheduleSummary& sum = m_view.summary();
    export_button(s, name(), "schedule", [&] { return schedule_csv(t); });
    same_line_if_fits(small_button_width("Export figure..."));
    figure_button(s, PlotKind::Schedule, "schedule", m_size, PlotKind::Replay);
    same_line_if_fits(small_button_width("Export Perfetto trace"));
    if (ImGui::SmallButton("Export Perfetto trace")) {
      const ProblemSpec& p = s.result->spec;
      s.ask(rq::ExportScheduleTrace{s.result->trace, {p.kernel, p.tile, p.m, p.n, p.k, s.result->device}});
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Writes tilescope-schedule-<date>-<time>.json to %s (never replacing a file): the traced launch as "
          "a "
          "Chrome trace event JSON, one track per SM and one slice per block with its tile, SM and exact "
          "times.\nOpen it in ui.perfetto.dev or chrome://tracing.",
          s.settings.export_dir.empty() ? default_export_dir().c_str() : s.settings.export_dir.c_str());
    same_line_if_fits(ImGui::GetFontSize() * 13);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    ImGui::Combo("colour by", &m_mode, "SM\0start time\0duration\0");
    int used = 0;
    for (int c : sum.tiles_per_sm) used += c > 0;
    char line[256];  // broken at spaces: never "1." on one line and "5 us" on the next
    const bool one = t.records.size() == 1;
    std::snprintf(line, sizeof line,
                  "%s on %d SM%s, up to %d in a row on one SM; %s %s %.1f us on average (%.1f-%.1f); up to "
                  "%d resident at once",
                  describe_grid(t).c_str(), used, used == 1 ? "" : "s", sum.waves,
                  (std::string(record_noun(t)) + (one ? "" : "s")).c_str(), one ? "takes" : "take",
                  sum.mean_tile_us, sum.min_tile_us, sum.max_tile_us, sum.max_concurrency);
    text_lines(line);
    char cost[200];
    std::snprintf(cost, sizeof cost,
                  "traced launch %.4g ms vs plain %.4g ms (x%.3f); %%globaltimer resolution seen: %llu ns",
                  t.traced_ms, t.plain_ms, t.plain_ms > 0 ? t.traced_ms / t.plain_ms : 0.0,
                  (unsigned long long)t.timer_resolution_ns);
    text_muted_wrapped(cost);
    // The replay: the same cursor as the Matrices panel's, over the tile grid and as a line in time.
    ScheduleOverlay overlay;
    if (const ScheduleReplay* r = current_replay(s)) {
      replay_controls(s, *r, out);
      if (s.views.replay.shown) {
        // Waiting tiles nearly hide the grid under them: its colours are SMs too.
        ReplayColours colours;
        colours.waiting = IM_COL32(12, 12, 16, 240);
        m_layer.update(*r, s.result_serial, s.views.replay.t_ns, t.sm_count, colours);
        overlay.over_grid = [&] {
          m_layer.draw("##replay", double(t.grid_x), double(t.grid_y), t.grid_x, t.grid_y);
        };
        overlay.cursor_us = double(s.views.replay.t_ns) * 1e-3;
      }
    }
    const ImVec2 before = ImGui::GetCursorScreenPos();
    const PlotReport rep = m_view.draw(t, ImVec2(-1, -1), PlotStyle{true}, &overlay);
    m_size = ImVec2(std::max(1.0f, ImGui::GetItemRectMax().x - before.x),
                    std::max(1.0f, ImGui::GetItemRectMax().y - before.y));
    out.plot_areas["schedule"] = rep.area;
  }

  void release_gl() override {
    m_view = SchedulePlot();
    m_layer.release();
  }

 private:
  int m_mode = 0;
  SchedulePlot m_view;
  ReplayLayer m_layer;
  ImVec2 m_size{960, 540};
};

}  // namespace

std::unique_ptr<Panel> make_schedule_panel() {
  return std::make_unique<SchedulePanel>();
}

}  // namespace ts::ui

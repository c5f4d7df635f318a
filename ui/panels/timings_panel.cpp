// Timings: what the sliders change, measured. Time or FLOP/s against the size that varies (one curve per
// kernel x tile and session, each run a point, the current configuration highlighted, cuBLAS as the
// reference, wave marks), the launches of the current point beside it, and the ladder at the current shape
// against a baseline the person pins. Everything comes from the session (every run and sweep point lands
// there).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <imgui.h>
#include <implot.h>

#include "core/io/csv.hpp"
#include "ui/panels/panel.hpp"
#include "ui/plots/plots.hpp"
#include "core/engine/stats.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

// Every launch of every point of the current session: the panel's "Export PNG + CSV".
std::string launches_csv(const Session& s) {
  CsvWriter w(
      {"kernel", "tile", "m", "n", "k", "input", "policy", "date", "launch", "ms", "tflops", "passed"});
  for (const auto& r : s.records)
    for (size_t i = 0; i < r.samples_ms.size(); ++i)
      w.row({r.spec.kernel, std::to_string(r.spec.tile), std::to_string(r.spec.m), std::to_string(r.spec.n),
             std::to_string(r.spec.k), to_string(r.spec.input), r.policy, r.date, std::to_string(i),
             CsvWriter::num(r.samples_ms[i], "%.9g"),
             CsvWriter::num(tflops(r.spec.flops(), r.samples_ms[i]), "%.6g"), r.error.passed ? "1" : "0"});
  return w.str();
}

class TimingsPanel final : public Panel {
 public:
  const char* name() const override { return "Timings"; }

 protected:
  void draw_content(AppState& s, FrameReport& out) override {
    const TimingsData& td = timings_of(s);
    out.panels[name()].state = td.empty() ? "empty" : std::to_string(td.curves.size()) + " curves";
    // The row of controls; it wraps instead of running past the edge.
    const ImVec2 row_top = ImGui::GetCursorScreenPos();
    const float row_w = ImGui::GetContentRegionAvail().x;
    ImGui::Checkbox("Repeat", &s.repeat);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Keep re-running the current problem (Ctrl+R)");
    const float em = ImGui::GetFontSize();
    same_line_if_fits(em * 9);
    ImGui::SetNextItemWidth(em * 9);
    int y = int(s.timings_y);
    if (ImGui::Combo("##y", &y, "FLOP/s\0time\0FLOP/s and time\0")) s.timings_y = TimingsY(y);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("What the scaling plot shows against the size");
    same_line_if_fits(small_button_width("Export figure..."));
    figure_button(s, PlotKind::Timings, "timings", m_scaling_size);
    same_line_if_fits(small_button_width("Export PNG + CSV"));
    export_button(s, name(), "timings", [&] { return launches_csv(s.sessions.current()); });
    // Where the controls end (the view tabs included, in the laptop layout): for the layout tests.
    float controls_bottom = ImGui::GetItemRectMax().y;
    auto report_controls = [&] {
      out.plot_areas["timings controls"] = {row_top.x, row_top.y, row_w, controls_bottom - row_top.y};
    };
    const float em_h = ImGui::GetFontSize();
    const ImVec2 room = ImGui::GetContentRegionAvail();
    const bool side_by_side = room.x > 62 * em_h;
    // A low panel (a laptop's tab row) shows the scaling plot and the ladder as tabs, every row for the plot.
    const bool compact = !side_by_side && room.y < 24 * em_h;
    if (!compact) summary(s, td);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float header = ImGui::GetFrameHeightWithSpacing();
    if (compact) {
      // The views' tabs on the row of controls when they fit there: one more row for the plot.
      const ImGuiStyle& st = ImGui::GetStyle();
      const float tabs = ImGui::CalcTextSize("against size").x + ImGui::CalcTextSize("ladder").x +
                         4 * st.FramePadding.x + 2 * st.ItemInnerSpacing.x + em;
      // Beside the buttons the bar draws no separator line across the panel (it ran over the top right of the
      // plot, where the launch strip's axis label stands).
      const bool beside = same_line_if_fits(tabs);  // the last item drawn is the row's Export button
      if (beside) ImGui::PushStyleVar(ImGuiStyleVar_TabBarBorderSize, 0.0f);
      const bool bar = ImGui::BeginTabBar("##views");
      if (beside) ImGui::PopStyleVar();
      if (bar) {
        controls_bottom = std::max(controls_bottom, ImGui::GetCursorScreenPos().y - st.ItemSpacing.y);
        report_controls();
        if (ImGui::BeginTabItem("against size")) {
          draw_scaling(s, out, td, ImVec2(-1, std::max(6 * em, ImGui::GetContentRegionAvail().y)));
          ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("ladder")) {
          draw_ladder(s, out, ImVec2(-1, std::max(5 * em, ImGui::GetContentRegionAvail().y - header)));
          ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
      }
    } else if (side_by_side) {
      report_controls();
      ImGui::BeginChild("##scaling", ImVec2(avail.x * 0.6f, std::max(8 * em, avail.y)), ImGuiChildFlags_None,
                        ImGuiWindowFlags_NoScrollbar);
      draw_scaling(s, out, td, ImVec2(-1, -1));
      ImGui::EndChild();
      ImGui::SameLine();
      ImGui::BeginGroup();
      draw_ladder(s, out, ImVec2(-1, std::max(6 * em, avail.y - header)));
      ImGui::EndGroup();
    } else {
      report_controls();
      const ImVec2 scaling(-1, std::max(8 * em, (avail.y - header) * 0.58f));
      draw_scaling(s, out, td, scaling);
      draw_ladder(
          s, out,
          ImVec2(-1, std::max(6 * em, avail.y - header - scaling.y - ImGui::GetStyle().ItemSpacing.y)));
    }
  }

 private:
  // One line about the latest run of the current problem: speed, % of peak and of cuBLAS.
  void summary(AppState& s, const TimingsData& td) {
    std::string text;
    if (s.result && s.result->timed && s.result->spec == plot_reference(s)) {
      const RunResult& r = *s.result;
      const Unit u = flops_unit(r.tflops() * 1e12);
      text = KernelTile{r.spec.kernel, r.spec.tile}.label() + ": median " +
             CsvWriter::num(r.median_ms(), "%.4g") + " ms, " +
             CsvWriter::num(r.tflops() * 1e12 * u.scale, "%.3g") + " " + u.name;
      if (r.peak_tflops > 0)
        text += ", " + CsvWriter::num(100 * r.tflops() / r.peak_tflops, "%.1f") + " % of the " +
                (r.tf32 ? "TF32" : "FP32") + " peak";
      if (r.cublas_ms() > 0)
        text += ", " + CsvWriter::num(100 * r.cublas_ms() / r.median_ms(), "%.0f") + " % of cuBLAS" +
                (r.cublas_interleaved()
                     ? " (timed interleaved" + std::string(clocks_differ(r.clock, r.interleaved.clock)
                                                               ? "; the SM clocks differ by more than 1 %)"
                                                               : ")")
                     : "");
    } else if (td.empty()) {
      text = "No measurements along " + td.axis_label +
             " yet: run the problem (Space), or measure many sizes at once in the Sweep panel.";
    }
    // One line each, elided (the whole text in the tooltip): the plots keep the room. A time that cannot be
    // right is said so, in the warning colour (the Result panel has the reason).
    const bool impossible =
        s.result && s.result->timed && s.result->spec == plot_reference(s) && s.result->is_impossible();
    if (impossible) text = "IMPOSSIBLE (not a record): " + text;
    if (!text.empty()) text_fit(text, impossible ? &palette().warn : &palette().muted);
    if (!td.marks.note.empty() && td.marks.marks.empty() && td.x_hi > td.x_lo)
      text_fit(td.marks.note + (td.marks.theoretical ? " (THEORETICAL: " + td.marks.gpu + ")" : ""),
               &palette().muted);
  }

  void draw_scaling(AppState& s, FrameReport& out, const TimingsData& td, ImVec2 size) {
    const ImVec2 before = ImGui::GetCursorScreenPos();
    const PlotReport rep = draw_timings(td, s.timings_y, size, PlotStyle{true});
    m_scaling_size = ImVec2(std::max(1.0f, ImGui::GetItemRectMax().x - before.x),
                            std::max(1.0f, ImGui::GetItemRectMax().y - before.y));
    out.plot_areas["timings"] = rep.area;
    out.plot_areas["launches"] = rep.launches_area;
    out.plot_labels["launches"] = {rep.launches_label, rep.launches_label_px};
    out.plot_limits["timings"] = rep.limits;
    out.timings_wave_labels = rep.wave_labels;
    out.timings_legend_hidden = rep.legend_hidden;
  }

  void draw_ladder(AppState& s, FrameReport& out, ImVec2 size) {
    const BarsData& bd = bars_of(s);
    const float em = ImGui::GetFontSize();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("baseline");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(em * 10);
    const std::string current = bd.baseline >= 0 ? bd.labels[size_t(bd.baseline)] : std::string("none");
    if (ImGui::BeginCombo("##baseline", current.c_str())) {
      for (size_t r = 0; r < bd.configs.size(); ++r) {
        if (bd.bars.empty() || !bd.bars[0][r]) continue;
        if (ImGui::Selectable(bd.labels[r].c_str(), int(r) == bd.baseline)) s.bars_baseline = bd.configs[r];
      }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Speedups on the bars are against this one (or click a bar)");
    same_line_if_fits(small_button_width("Export figure..."));
    figure_button(s, PlotKind::Bars, "bars", m_ladder_size);
    const ImVec2 before = ImGui::GetCursorScreenPos();
    int clicked = -1;
    const PlotReport rep = draw_bars(bd, size, PlotStyle{true}, &clicked);
    m_ladder_size = ImVec2(std::max(1.0f, ImGui::GetItemRectMax().x - before.x),
                           std::max(1.0f, ImGui::GetItemRectMax().y - before.y));
    out.plot_areas["bars"] = rep.area;
    if (clicked >= 0) s.bars_baseline = bd.configs[size_t(clicked)];
  }

  ImVec2 m_scaling_size{960, 540}, m_ladder_size{640, 480};
};

}  // namespace

std::unique_ptr<Panel> make_timings_panel() {
  return std::make_unique<TimingsPanel>();
}

}  // namespace ts::ui

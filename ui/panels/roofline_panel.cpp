// Roofline: every measured point placed by arithmetic intensity (an estimate from the kernel's block tiling,
// said so) against achieved FLOP/s, under the FP32 and TF32 compute roofs of the device and the DRAM roof of
// the bandwidth measured on it (Backend::measure_bandwidth, run off the UI thread by app.cpp), with the
// datasheet figure beside it.
#include <algorithm>
#include <string>
#include <vector>

#include <imgui.h>
#include <implot.h>

#include "core/io/csv.hpp"
#include "ui/panels/panel.hpp"
#include "ui/plots/plots.hpp"
#include "core/base/text_wrap.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

class RooflinePanel final : public Panel {
 public:
  const char* name() const override { return "Roofline"; }

 protected:
  void draw_content(AppState& s, FrameReport& out) override {
    // On a GPU the DRAM roof is measured once, as soon as the panel is first seen.
    if (s.backend_kind() == "cuda" && !s.bandwidth && !s.measuring_bandwidth() && !m_asked) {
      m_asked = true;
      s.ask(rq::MeasureBandwidth{});
    }
    const RooflineData& d = roofline_of(s);
    out.panels[name()].state = std::to_string(d.points.size()) + " points";
    ImGui::BeginDisabled(s.measuring_bandwidth());
    if (ImGui::SmallButton(s.bandwidth ? "Measure bandwidth again" : "Measure bandwidth"))
      s.ask(rq::MeasureBandwidth{});
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(
          "A copy kernel reads and writes a buffer much larger than the L2 (a threaded copy on the "
          "CPU backend); a few tenths of a second, off the UI thread");
    if (s.measuring_bandwidth()) {
      ImGui::SameLine();
      spinner("##bw", ImGui::GetFontSize() * 0.35f, true);
    }
    same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize("this shape only").x +
                      ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::Checkbox("this shape only", &s.roofline_this_shape);
    same_line_if_fits(small_button_width("Export figure..."));
    figure_button(s, PlotKind::Roofline, "roofline", m_size);
    std::string bw;
    if (s.bandwidth)
      bw = "DRAM roof: " + CsvWriter::num(s.bandwidth->gbs, "%.0f") + " GB/s measured (" +
           s.bandwidth->method + ")";
    else if (d.roofs.dram_bytes_per_s > 0)
      bw = "DRAM roof: " + CsvWriter::num(d.roofs.dram_bytes_per_s * 1e-9, "%.0f") +
           (d.roofs.dram_measured ? " GB/s measured (from the session)"
                                  : " GB/s from the datasheet (not measured yet)");
    else
      bw = "DRAM roof: not measured yet";
    if (d.roofs.datasheet_bytes_per_s > 0)
      bw += "; datasheet " + CsvWriter::num(d.roofs.datasheet_bytes_per_s * 1e-9, "%.0f") + " GB/s";
    // The DRAM roof and the notes on how to read the plot, wrapped in full where the plot keeps its room
    // under them; where it would not (a short panel), one line that shows them all on hover. Either way the
    // plot and its axes stay inside the panel and no note is cut mid-sentence.
    std::vector<std::string> lines{bw};
    for (const auto& n : d.notes)
      if (n.rfind("Arithmetic", 0) == 0 || n.rfind("No compute", 0) == 0 ||
          n.find("faster than the device can go") != std::string::npos)  // impossible points left out
        lines.push_back(n);
    const float width = ImGui::GetContentRegionAvail().x;
    const auto measure = [](const char* b, const char* e) { return ImGui::CalcTextSize(b, e).x; };
    float text_h = 0;
    for (const auto& l : lines)
      text_h += float(wrap_at_spaces(l, width, measure).size()) * ImGui::GetTextLineHeight() +
                ImGui::GetStyle().ItemSpacing.y;
    const float min_plot = std::max(10 * ImGui::GetFontSize(), ImPlot::GetStyle().PlotMinSize.y);
    if (ImGui::GetContentRegionAvail().y - text_h >= min_plot) {
      for (const auto& l : lines) text_muted_wrapped(l.c_str());
      out.panels[name()].state += "; notes shown";
    } else {
      same_line_if_fits(ImGui::CalcTextSize("Notes on these figures (hover)").x);
      ImGui::TextDisabled("Notes on these figures (hover)");
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
        for (const auto& l : lines) ImGui::TextUnformatted(l.c_str());
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
      out.panels[name()].state += "; notes on hover";
    }
    const ImVec2 before = ImGui::GetCursorScreenPos();
    // The height left, given explicitly: ImPlot's own minimum would push the x axis out of a short panel.
    const float plot_h = std::max(4 * ImGui::GetFontSize(), ImGui::GetContentRegionAvail().y);
    const PlotReport rep = draw_roofline(d, ImVec2(-1, plot_h), PlotStyle{true});
    m_size = ImVec2(std::max(1.0f, ImGui::GetItemRectMax().x - before.x),
                    std::max(1.0f, ImGui::GetItemRectMax().y - before.y));
    out.plot_areas["roofline"] = rep.area;
  }

 private:
  bool m_asked = false;
  ImVec2 m_size{960, 540};
};

}  // namespace

std::unique_ptr<Panel> make_roofline_panel() {
  return std::make_unique<RooflinePanel>();
}

}  // namespace ts::ui

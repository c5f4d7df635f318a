// Roofline: every measured point placed by arithmetic intensity (an estimate from the kernel's block tiling,
// said so) against achieved FLOP/s, under the FP32 and TF32 compute roofs of the device and the DRAM roof of
// the bandwidth measured on it (Backend::measure_bandwidth, run off the UI thread by app.cpp), with the
// datasheet figure beside it.
#include <string>

#include <imgui.h>

#include "csv.hpp"
#include "panel.hpp"
#include "plots.hpp"
#include "theme.hpp"

namespace ts::ui {

namespace {

class RooflinePanel final : public Panel {
 public:
  const char* name() const override { return "Roofline"; }

 protected:
  void draw_content(AppState& s) override {
    // On a GPU the DRAM roof is measured once, as soon as the panel is first seen.
    if (s.backend_kind == "cuda" && !s.bandwidth && !s.measuring_bandwidth && !m_asked) {
      m_asked = true;
      s.bandwidth_requested = true;
    }
    const RooflineData& d = roofline_of(s);
    s.panels[name()].state = std::to_string(d.points.size()) + " points";
    ImGui::BeginDisabled(s.measuring_bandwidth);
    if (ImGui::SmallButton(s.bandwidth ? "Measure bandwidth again" : "Measure bandwidth"))
      s.bandwidth_requested = true;
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(
          "A copy kernel reads and writes a buffer much larger than the L2 (a threaded copy on the "
          "CPU backend); a few tenths of a second, off the UI thread");
    if (s.measuring_bandwidth) {
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
    // One line each, elided (the whole text in the tooltip): the plot keeps the room.
    text_fit(bw, &palette().muted);
    for (const auto& n : d.notes)
      if (n.rfind("Arithmetic", 0) == 0 || n.rfind("No compute", 0) == 0) text_fit(n, &palette().muted);
    const ImVec2 before = ImGui::GetCursorScreenPos();
    const PlotReport rep = draw_roofline(d, ImVec2(-1, -1), PlotStyle{true});
    m_size = ImVec2(std::max(1.0f, ImGui::GetItemRectMax().x - before.x),
                    std::max(1.0f, ImGui::GetItemRectMax().y - before.y));
    s.plot_areas["roofline"] = rep.area;
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

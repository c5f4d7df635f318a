#include <cmath>

#include <imgui.h>

#include "panel.hpp"

namespace ts::ui {

const KernelInfo* current_kernel(const AppState& s) {
  return find_kernel(s.kernels, s.settings.spec.kernel);
}

std::vector<std::unique_ptr<Panel>> register_panels() {
  std::vector<std::unique_ptr<Panel>> p;
  p.push_back(make_controls_panel());
  p.push_back(make_matrices_panel());
  p.push_back(make_result_panel());
  p.push_back(make_timings_panel());
  p.push_back(make_occupancy_panel());
  p.push_back(make_schedule_panel());
  p.push_back(make_status_bar());
  return p;
}

void Panel::draw(AppState& s) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const Rect r = default_rect(vp->WorkSize.x, vp->WorkSize.y);
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + r.x, vp->WorkPos.y + r.y), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(r.w, r.h), ImGuiCond_FirstUseEver);
  if (ImGui::Begin(name(), nullptr, window_flags())) draw_content(s);
  const ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
  s.layout[name()] = Rect{pos.x, pos.y, size.x, size.y};
  ImGui::End();
}

void spinner(const char* id, float radius, bool active) {
  ImGui::PushID(id);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetFrameHeight();
  ImGui::Dummy(ImVec2(radius * 2 + 4, h));
  if (active) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 c(p.x + radius + 2, p.y + h * 0.5f);
    const float t = float(ImGui::GetTime()) * 6.0f;
    dl->PathArcTo(c, radius, t, t + 4.2f, 24);
    dl->PathStroke(ImGui::GetColorU32(ImGuiCol_PlotHistogram), 0, 2.5f);
  }
  ImGui::PopID();
}

void export_button(AppState& s, const char* panel, const char* stem,
                   const std::function<std::string()>& csv) {
  const bool clicked = ImGui::SmallButton("Export PNG + CSV");
  // snapshot --export-panels presses every panel's button, one panel per frame.
  const bool scripted = !s.export_request && s.export_pending.erase(panel) > 0;
  if ((clicked || scripted) && !s.export_request)
    s.export_request = AppState::ExportRequest{panel, stem, csv()};
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Writes tilescope-%s-<date>-<time>.png and .csv to %s (never replacing a file)", stem,
        s.settings.export_dir.empty() ? default_export_dir().c_str() : s.settings.export_dir.c_str());
}

bool needs_gpu_notice(AppState& s, const char* panel, const char* what) {
  if (s.backend_kind == "cuda") {
    s.panel_state[panel] = "shown";
    return false;
  }
  s.panel_state[panel] = "needs a GPU";
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, 1), "%s needs a GPU.", what);
  ImGui::TextDisabled(
      "The CPU backend has no SMs, warps or occupancy to show, so this panel stays empty rather than "
      "show made-up data. Run TileScope on a machine with an NVIDIA GPU.");
  ImGui::PopTextWrapPos();
  return true;
}

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::BeginItemTooltip()) {
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

}  // namespace ts::ui

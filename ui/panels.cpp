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

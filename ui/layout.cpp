#include "layout.hpp"

#include <algorithm>
#include <string>

#include <imgui.h>
#include <imgui_internal.h>

namespace ts::ui {

namespace {
ImGuiID dock_id() {
  return ImHashStr("TileScope dock space");
}
}  // namespace

bool Layout::saved_layout_usable(const std::vector<std::unique_ptr<Panel>>& panels) const {
  ImGuiDockNode* root = ImGui::DockBuilderGetNode(dock_id());
  if (!root || root->IsLeafNode()) return false;  // nothing saved, or an empty dock space
  for (const auto& p : panels) {
    const ImGuiWindowSettings* ws = ImGui::FindWindowSettingsByID(ImHashStr(p->name()));
    if (!ws) return false;          // a panel the saved layout never saw: it would float somewhere arbitrary
    if (ws->DockId == 0) continue;  // floating on purpose: kept, and brought back on screen if needed
    ImGuiDockNode* n = ImGui::DockBuilderGetNode(ws->DockId);
    if (!n || ImGui::DockNodeGetRootNode(n)->ID != dock_id()) return false;
  }
  return true;
}

void Layout::build_default(AppState& s, const std::vector<std::unique_ptr<Panel>>& panels) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImGuiID id = dock_id();
  ImGui::DockBuilderRemoveNode(id);
  ImGui::DockBuilderAddNode(id, ImGuiDockNodeFlags_DockSpace);
  ImGui::DockBuilderSetNodeSize(id, vp->WorkSize);
  ImGui::DockBuilderSetNodePos(id, vp->WorkPos);
  const float em = ImGui::GetFontSize();
  const float w = vp->WorkSize.x;
  // Side columns wide enough for their text (about 20 em), as a share of the window so that resizing keeps
  // the proportions; the centre (the heatmaps) takes the rest.
  const float left = std::clamp(20.5f * em / w, 0.16f, 0.30f);
  const float right = std::clamp(21.0f * em / (w * (1 - left)), 0.16f, 0.34f);
  ImGuiID rest = id, l = 0, r = 0, centre = 0;
  ImGui::DockBuilderSplitNode(rest, ImGuiDir_Left, left, &l, &rest);
  ImGui::DockBuilderSplitNode(rest, ImGuiDir_Right, right, &r, &centre);
  const bool wide = w >= 100 * em;  // 1600 px at 16 px text
  ImGuiID top = 0, bottom = 0;
  ImGui::DockBuilderSplitNode(centre, ImGuiDir_Down, wide ? 0.40f : 0.32f, &bottom, &top);
  ImGui::DockBuilderDockWindow("Sweep", l);  // a tab behind Controls
  ImGui::DockBuilderDockWindow("Controls", l);
  ImGui::DockBuilderDockWindow("Matrices", top);
  if (wide) {
    // Result above Occupancy on the right; Timings beside the tile schedule under the heatmaps.
    ImGuiID r_top = 0, r_bottom = 0, b_left = 0, b_right = 0;
    ImGui::DockBuilderSplitNode(r, ImGuiDir_Down, 0.48f, &r_bottom, &r_top);
    ImGui::DockBuilderSplitNode(bottom, ImGuiDir_Right, 0.42f, &b_right,
                                &b_left);  // Timings gets the larger part
    ImGui::DockBuilderDockWindow("Result", r_top);
    ImGui::DockBuilderDockWindow("Occupancy", r_bottom);
    ImGui::DockBuilderDockWindow("Messages", b_left);
    ImGui::DockBuilderDockWindow("Roofline", b_left);
    ImGui::DockBuilderDockWindow("Your kernel", b_left);
    ImGui::DockBuilderDockWindow("Kernel source", b_left);
    ImGui::DockBuilderDockWindow("Timings", b_left);
    ImGui::DockBuilderDockWindow("Tile schedule", b_right);
  } else {
    // A laptop screen: tabs instead of splits, every panel still one click away.
    ImGui::DockBuilderDockWindow("Occupancy", r);
    ImGui::DockBuilderDockWindow("Result", r);
    ImGui::DockBuilderDockWindow("Tile schedule", bottom);
    ImGui::DockBuilderDockWindow("Messages", bottom);
    ImGui::DockBuilderDockWindow("Roofline", bottom);
    ImGui::DockBuilderDockWindow("Your kernel", bottom);
    ImGui::DockBuilderDockWindow("Kernel source", bottom);
    ImGui::DockBuilderDockWindow("Timings", bottom);
  }
  // Any panel not named above (a new one) joins the bottom row as a tab.
  for (const auto& p : panels) {
    const std::string n = p->name();
    if (n != "Controls" && n != "Matrices" && n != "Result" && n != "Occupancy" && n != "Timings" &&
        n != "Tile schedule" && n != "Messages" && n != "Sweep" && n != "Roofline" && n != "Your kernel" &&
        n != "Kernel source")
      ImGui::DockBuilderDockWindow(p->name(), bottom);
  }
  ImGui::DockBuilderFinish(id);
  m_front_frames = 3;  // Controls, Timings and Result in front of their tabs once the tab bars exist
  s.settings.view.layout_version = kVersion;
  m_built = true;
}

void Layout::dock_space(AppState& s, const std::vector<std::unique_ptr<Panel>>& panels) {
  m_built = false;
  if (!m_checked) {
    m_checked = true;
    if (s.settings.view.layout_version != kVersion || !saved_layout_usable(panels)) m_rebuild = true;
  }
  if (m_rebuild) {
    m_rebuild = false;
    // Resetting shows every panel again.
    for (const auto& p : panels) s.settings.view.panels[p->name()] = true;
    build_default(s, panels);
  }
  // Panels close from their tab (the View menu opens them again); no per-node menu or close-all button.
  ImGui::DockSpaceOverViewport(dock_id(), ImGui::GetMainViewport(),
                               ImGuiDockNodeFlags_NoWindowMenuButton | ImGuiDockNodeFlags_NoCloseButton);
}

void Layout::keep_on_screen(const std::vector<std::unique_ptr<Panel>>& panels) {
  if (m_front_frames > 0) {
    --m_front_frames;
    for (const char* front : {"Controls", "Timings", "Result"})
      if (ImGuiWindow* w = ImGui::FindWindowByName(front); w && w->DockNode && w->DockNode->TabBar)
        w->DockNode->TabBar->NextSelectedTabId = w->TabId;
  }
  if (m_extra_frames > 0) {
    --m_extra_frames;
    for (const auto& front : m_extra_front)
      if (ImGuiWindow* w = ImGui::FindWindowByName(front.c_str()); w && w->DockNode && w->DockNode->TabBar)
        w->DockNode->TabBar->NextSelectedTabId = w->TabId;
  }
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  for (const auto& p : panels) {
    ImGuiWindow* w = ImGui::FindWindowByName(p->name());
    if (!w || w->DockIsActive || !w->WasActive) continue;
    // A floating panel: at least its title bar stays reachable inside the work area, and it is never larger
    // than the work area.
    ImVec2 size(std::min(w->Size.x, vp->WorkSize.x), std::min(w->Size.y, vp->WorkSize.y));
    ImVec2 pos(std::clamp(w->Pos.x, vp->WorkPos.x, vp->WorkPos.x + vp->WorkSize.x - size.x),
               std::clamp(w->Pos.y, vp->WorkPos.y, vp->WorkPos.y + vp->WorkSize.y - size.y));
    if (size.x != w->Size.x || size.y != w->Size.y) ImGui::SetWindowSize(w, size);
    if (pos.x != w->Pos.x || pos.y != w->Pos.y) ImGui::SetWindowPos(w, pos);
  }
}

}  // namespace ts::ui

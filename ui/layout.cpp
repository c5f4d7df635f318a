#include "ui/layout.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <imgui.h>
#include <imgui_internal.h>

namespace ts::ui {

namespace {
ImGuiID dock_id() {
  return ImHashStr("TileScope dock space");
}

// The least the Matrices panel needs: what it reported (its four maps two by two, each at least 6 em and as
// wide as its colour scale, with axes and titles), or before it has drawn, about that for short labels.
ImVec2 heatmap_room(const FrameReport& drawn) {
  const float em = ImGui::GetFontSize();
  const auto it = drawn.panels.find("Matrices");
  if (it != drawn.panels.end() && it->second.least_w > 0)
    return ImVec2(it->second.least_w, it->second.least_h);
  return ImVec2(32 * em, 23 * em);
}
// The least a side column or the bottom row keeps when the heatmaps take room from it.
float side_min() {
  return 11 * ImGui::GetFontSize();
}
// The least height a bottom row of plots is worth: its tabs, its toolbar and a plot of about 6 em.
float row_min() {
  return 12 * ImGui::GetFontSize();
}
// The work area between the menu bar and the status bar as of this frame (they are drawn before the dock
// space): ImGui's WorkPos and WorkSize are last frame's, the whole window on the first.
ImRect work_rect() {
  return static_cast<ImGuiViewportP*>(ImGui::GetMainViewport())->GetBuildWorkRect();
}
}  // namespace

Layout::Shape Layout::shape_for(const FrameReport& drawn, ImVec2 work) {
  const float em = ImGui::GetFontSize();
  Shape sh;
  sh.wide = work.x >= 100 * em;  // 1600 px at 16 px text
  // The bottom row (Timings and the other plots) under the heatmaps, less where the heatmaps need the height;
  // when that leaves it too low for a plot, its panels are tabs beside Matrices instead (Matrices in front).
  sh.bottom_h = std::min((sh.wide ? 0.40f : 0.32f) * work.y, work.y - heatmap_room(drawn).y);
  sh.row_as_tabs = sh.bottom_h < row_min();
  return sh;
}

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

void Layout::build_default(AppState& s, const FrameReport& drawn,
                           const std::vector<std::unique_ptr<Panel>>& panels,
                           std::vector<std::string> front) {
  const ImRect work = work_rect();
  const ImGuiID id = dock_id();
  ImGui::DockBuilderRemoveNode(id);
  ImGui::DockBuilderAddNode(id, ImGuiDockNodeFlags_DockSpace);
  ImGui::DockBuilderSetNodeSize(id, work.GetSize());
  ImGui::DockBuilderSetNodePos(id, work.Min);
  const float em = ImGui::GetFontSize();
  const float w = work.GetWidth(), h = work.GetHeight();
  const ImVec2 room = heatmap_room(drawn);
  // Side columns wide enough for their text (about 20 em), within a share of the window; the centre (the
  // heatmaps) takes the rest. In a narrow window both give way, down to side_min() each, until the heatmaps
  // have their room.
  const float left_want = std::clamp(20.5f * em, 0.16f * w, 0.30f * w);
  const float right_want = std::clamp(21.0f * em, 0.16f * (w - left_want), 0.34f * (w - left_want));
  float left = left_want, right = right_want;
  if (const float short_by = room.x - (w - left - right); short_by > 0) {
    const float give =
        std::min(short_by, std::max(0.0f, left - side_min()) + std::max(0.0f, right - side_min()));
    const float l_spare = std::max(0.0f, left - side_min()), r_spare = std::max(0.0f, right - side_min());
    left -= give * l_spare / std::max(1.0f, l_spare + r_spare);
    right -= give * r_spare / std::max(1.0f, l_spare + r_spare);
  }
  ImGuiID rest = id, l = 0, r = 0, centre = 0;
  ImGui::DockBuilderSplitNode(rest, ImGuiDir_Left, left / w, &l, &rest);
  ImGui::DockBuilderSplitNode(rest, ImGuiDir_Right, right / std::max(1.0f, w - left), &r, &centre);
  // What the columns gave the heatmaps, taken back when the window grows (keep_room_for_heatmaps).
  m_given[0].clear();
  m_given[1].clear();
  m_given[0][l] = left_want - left;
  m_given[0][r] = right_want - right;
  m_shape = shape_for(drawn, work.GetSize());
  const bool wide = m_shape.wide, row_as_tabs = m_shape.row_as_tabs;
  ImGuiID top = centre, bottom = centre;
  if (!row_as_tabs) {
    ImGui::DockBuilderSplitNode(centre, ImGuiDir_Down, m_shape.bottom_h / h, &bottom, &top);
    m_given[1][bottom] = std::max(0.0f, (wide ? 0.40f : 0.32f) * h - m_shape.bottom_h);
  }
  ImGui::DockBuilderDockWindow("Sweep", l);  // a tab behind Controls
  ImGui::DockBuilderDockWindow("Controls", l);
  ImGui::DockBuilderDockWindow("Matrices", top);
  // The tile schedule needs a GPU: on the CPU backend its notice is a tab, not a third of the bottom row.
  const bool schedule_split = wide && !row_as_tabs && s.backend_kind() == "cuda";
  // Where a panel not named below goes: the bottom row's tabs (its left part once the row is split: a split
  // node takes no window, and one docked there floated at the top-left corner, as the SASS panel did on a
  // GPU at 1920 x 1080).
  ImGuiID tabs = bottom;
  if (wide) {
    // Result above Occupancy on the right; Timings beside the tile schedule under the heatmaps.
    ImGuiID r_top = 0, r_bottom = 0, b_left = bottom, b_right = bottom;
    ImGui::DockBuilderSplitNode(r, ImGuiDir_Down, 0.48f, &r_bottom, &r_top);
    if (schedule_split)
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
    tabs = b_left;
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
      ImGui::DockBuilderDockWindow(p->name(), tabs);
  }
  ImGui::DockBuilderFinish(id);
  // Controls, Result and Timings in front of their tabs once the tab bars exist (Matrices where the bottom
  // row is its tabs), then `front` (the later in the list wins in its dock node). The first three are the
  // defaults (dock_space reads them).
  m_front = {"Controls", "Result", row_as_tabs ? "Matrices" : "Timings"};
  m_front.insert(m_front.end(), front.begin(), front.end());
  m_front_frames = 3;
  m_fit_frames = 2;
  m_default = true;
  m_print.clear();
  s.settings.view.layout_version = kVersion;
  m_built = true;
}

// ImGui gives the dock space's central node (the heatmaps, in the default arrangement) whatever the other
// side of each split leaves, and keeps that side's size in pixels. Across, that is right for the side columns
// (text does not read better wider; keep_room_for_heatmaps() narrows them when the heatmaps need it); down,
// the bottom row of plots keeps its share of the height instead, as a split without the central node does.
void Layout::follow_resize(ImVec2 from, ImVec2 to) {
  const float ratio = to.y / from.y;
  ImVector<ImGuiDockNode*> todo;
  if (ImGuiDockNode* root = ImGui::DockBuilderGetNode(dock_id())) todo.push_back(root);
  while (!todo.empty()) {
    ImGuiDockNode* n = todo.back();
    todo.pop_back();
    if (n->IsLeafNode()) continue;
    ImGuiDockNode* c0 = n->ChildNodes[0];
    ImGuiDockNode* c1 = n->ChildNodes[1];
    if (n->SplitAxis == ImGuiAxis_Y && c0->HasCentralNodeChild != c1->HasCentralNodeChild) {
      ImGuiDockNode* fixed = c0->HasCentralNodeChild ? c1 : c0;
      fixed->SizeRef.y = std::max(1.0f, fixed->SizeRef.y * ratio);
    }
    todo.push_back(c0);
    todo.push_back(c1);
  }
}

// After a build or a resize: where the Matrices panel is smaller than it needs (heatmap_room), the panels
// beside it (the other side of each split on its way to the root) give it room, each in proportion to what it
// has above side_min(); where the Matrices panel has more than it needs again, they take back what they gave.
// A person who drags a splitter afterwards is not overruled.
void Layout::keep_room_for_heatmaps(const FrameReport& drawn) {
  const ImGuiWindow* mw = ImGui::FindWindowByName("Matrices");
  ImGuiDockNode* node = mw ? mw->DockNode : nullptr;
  if (!node || ImGui::DockNodeGetRootNode(node)->ID != dock_id()) return;
  const ImVec2 room = heatmap_room(drawn);
  for (int axis : {int(ImGuiAxis_X), int(ImGuiAxis_Y)}) {
    std::vector<std::pair<ImGuiDockNode*, ImGuiDockNode*>> sides;  // (the heatmaps' side, the other side)
    for (ImGuiDockNode* child = node; child->ParentNode; child = child->ParentNode) {
      ImGuiDockNode* parent = child->ParentNode;
      if (int(parent->SplitAxis) == axis)
        sides.emplace_back(child,
                           parent->ChildNodes[0] == child ? parent->ChildNodes[1] : parent->ChildNodes[0]);
    }
    std::map<ImGuiID, float>& given = m_given[axis];
    const float extra = node->Size[axis] - room[axis];
    // What each side can give (short of room) or would take back (room to spare).
    std::vector<float> share(sides.size(), 0.0f);
    float total = 0;
    for (size_t i = 0; i < sides.size(); ++i) {
      const ImGuiDockNode* other = sides[i].second;
      share[i] = extra < 0 ? std::max(0.0f, other->Size[axis] - side_min()) : given[other->ID];
      total += share[i];
    }
    if (total <= 0 || std::fabs(extra) < 1) continue;
    const float moved = std::min(std::fabs(extra), total);
    for (size_t i = 0; i < sides.size(); ++i) {
      auto [child, other] = sides[i];
      const float d = moved * share[i] / total * (extra < 0 ? 1.0f : -1.0f);  // > 0: toward the heatmaps
      other->SizeRef[axis] = other->Size[axis] - d;
      child->SizeRef[axis] = child->Size[axis] + d;
      given[other->ID] = std::max(0.0f, given[other->ID] + d);
    }
  }
}

// The arrangement as the person could have changed it: which node each panel is docked in, and the size of
// each split's children along the split (ImGui writes those only when a splitter is dragged).
std::vector<double> Layout::fingerprint(const std::vector<std::unique_ptr<Panel>>& panels) const {
  std::vector<double> f;
  for (const auto& p : panels) {
    const ImGuiWindow* w = ImGui::FindWindowByName(p->name());
    f.push_back(w ? double(w->DockId) : -1.0);
  }
  ImVector<ImGuiDockNode*> todo;
  if (ImGuiDockNode* root = ImGui::DockBuilderGetNode(dock_id())) todo.push_back(root);
  while (!todo.empty()) {
    ImGuiDockNode* n = todo.back();
    todo.pop_back();
    if (n->IsLeafNode()) continue;
    for (ImGuiDockNode* c : n->ChildNodes) {
      f.push_back(std::round(c->SizeRef[n->SplitAxis]));
      todo.push_back(c);
    }
  }
  return f;
}

void Layout::dock_space(AppState& s, const FrameReport& drawn,
                        const std::vector<std::unique_ptr<Panel>>& panels) {
  m_built = false;
  if (!m_checked) {
    m_checked = true;
    if (s.settings.view.layout_version != kVersion || !saved_layout_usable(panels)) m_rebuild = true;
  }
  const ImVec2 now = work_rect().GetSize();
  const bool resized =
      m_work.x >= 1 && m_work.y >= 1 && now.x >= 1 && now.y >= 1 && (now.x != m_work.x || now.y != m_work.y);
  if (m_rebuild) {
    m_rebuild = false;
    // Resetting shows every panel again.
    for (const auto& p : panels) s.settings.view.panels[p->name()] = true;
    build_default(s, drawn, panels);
  } else if (resized && m_default && (m_print.empty() || m_print == fingerprint(panels)) &&
             shape_for(drawn, now) != m_shape) {
    // The default arrangement, as built, in a window that now wants another shape (three columns from 1600
    // px, the plots as tabs beside the heatmaps in a low window): built again for this size, closed panels
    // still closed, and a tab the person brought to the front (not one of the defaults, not alone in its
    // node) still in front.
    std::vector<std::string> front;
    for (const auto& p : panels) {
      const ImGuiWindow* w = ImGui::FindWindowByName(p->name());
      const auto seen = drawn.panels.find(p->name());
      if (seen != drawn.panels.end() && seen->second.visible && w && w->DockNode &&
          w->DockNode->Windows.Size > 1 &&
          std::find(m_front.begin(), m_front.begin() + 3, p->name()) == m_front.begin() + 3)
        front.push_back(p->name());
    }
    build_default(s, drawn, panels, std::move(front));
  } else if (resized) {
    if (!m_print.empty() && m_print != fingerprint(panels)) m_default = false;  // the person's own now
    follow_resize(m_work, now);
    m_fit_frames = 2;
    m_print.clear();  // taken again after this resize's changes
  }
  if (now.x >= 1 && now.y >= 1) m_work = now;  // not while minimised
  // Panels close from their tab (the View menu opens them again); no per-node menu or close-all button.
  ImGui::DockSpaceOverViewport(dock_id(), ImGui::GetMainViewport(),
                               ImGuiDockNodeFlags_NoWindowMenuButton | ImGuiDockNodeFlags_NoCloseButton);
  if (m_fit_frames > 0) {
    --m_fit_frames;
    keep_room_for_heatmaps(drawn);
  }
  // What the arrangement looks like after our own changes: a difference later is the person's.
  if (m_default && m_fit_frames == 0 && m_front_frames == 0 && m_print.empty()) m_print = fingerprint(panels);
}

void Layout::keep_on_screen(const std::vector<std::unique_ptr<Panel>>& panels) {
  if (m_front_frames > 0) {
    --m_front_frames;
    for (const auto& front : m_front)
      if (ImGuiWindow* w = ImGui::FindWindowByName(front.c_str()); w && w->DockNode && w->DockNode->TabBar)
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

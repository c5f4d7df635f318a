#pragma once
// [SECTION] The dock space: every panel lives in one dock space that fills the window between the menu bar
// and the status bar, so resizing the window resizes the panels and nothing is ever behind anything else. The
// default arrangement is built with the dock builder from the window's size; a saved arrangement (imgui.ini)
// is kept when it still names every panel, and rebuilt when it does not (an older version, a panel it does
// not know). Floating panels that end up outside the window are brought back in. When the window changes
// size, every column and row changes in proportion (ImGui alone keeps the side columns' widths and squeezes
// the heatmaps), and the heatmaps keep the room they need as long as the other panels can give it.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "ui/app_state.hpp"
#include "ui/panels/panel.hpp"

namespace ts::ui {

class Layout {
 public:
  // Raised whenever the default arrangement changes shape (a saved layout of another version is replaced).
  static constexpr int kVersion = 5;

  // Once per frame, after the menu bar and the status bar, before the panels.
  // `drawn`: what the panels drew last frame (the heatmaps' least room, which panels were in front).
  void dock_space(AppState& s, const FrameReport& drawn, const std::vector<std::unique_ptr<Panel>>& panels);
  // After the panels: floating windows outside the viewport are moved back into it.
  void keep_on_screen(const std::vector<std::unique_ptr<Panel>>& panels);
  void reset() { m_rebuild = true; }
  // Puts these panels in front of their dock nodes' tabs (after the default ones), for a few frames.
  void bring_to_front(std::vector<std::string> panels) {
    m_extra_front = std::move(panels);
    m_extra_frames = 4;
  }
  bool built_this_frame() const { return m_built; }

 private:
  // What the default arrangement looks like for a work area: three columns or tabs on the right, a bottom row
  // of plots or the plots as tabs beside the heatmaps.
  struct Shape {
    bool wide = false, row_as_tabs = false;
    float bottom_h = 0;
    bool operator!=(const Shape& o) const { return wide != o.wide || row_as_tabs != o.row_as_tabs; }
  };
  static Shape shape_for(const FrameReport& drawn, ImVec2 work);
  // front: panels to put in front of their tabs, after the default ones (Controls, Result, Timings).
  void build_default(AppState& s, const FrameReport& drawn, const std::vector<std::unique_ptr<Panel>>& panels,
                     std::vector<std::string> front = {});
  bool saved_layout_usable(const std::vector<std::unique_ptr<Panel>>& panels) const;
  void follow_resize(ImVec2 from, ImVec2 to);
  void keep_room_for_heatmaps(const FrameReport& drawn);
  std::vector<double> fingerprint(const std::vector<std::unique_ptr<Panel>>& panels) const;
  bool m_checked = false, m_rebuild = false, m_built = false;
  ImVec2 m_work{0, 0};     // the work area the arrangement was last fitted to
  int m_fit_frames = 0;    // frames left in which the heatmaps' room is checked (after a build or a resize)
  Shape m_shape;           // of the default arrangement built last
  bool m_default = false;  // the arrangement is the default one this session built
  std::vector<double> m_print;          // its fingerprint after our own changes (empty: not taken yet)
  std::map<ImGuiID, float> m_given[2];  // what each node gave the heatmaps, across and down (px)
  int m_front_frames = 0;
  std::vector<std::string> m_front;  // the default arrangement's panels in front of their tabs
  std::vector<std::string> m_extra_front;
  int m_extra_frames = 0;
};

}  // namespace ts::ui

#pragma once
// [SECTION] The dock space: every panel lives in one dock space that fills the window between the menu bar
// and the status bar, so resizing the window resizes the panels and nothing is ever behind anything else. The
// default arrangement is built with the dock builder from the window's size; a saved arrangement (imgui.ini)
// is kept when it still names every panel, and rebuilt when it does not (an older version, a panel it does
// not know). Floating panels that end up outside the window are brought back in.
#include <memory>
#include <string>
#include <vector>

#include "app_state.hpp"
#include "panel.hpp"

namespace ts::ui {

class Layout {
 public:
  // Raised whenever the default arrangement changes shape (a saved layout of another version is replaced).
  static constexpr int kVersion = 4;

  // Once per frame, after the menu bar and the status bar, before the panels.
  void dock_space(AppState& s, const std::vector<std::unique_ptr<Panel>>& panels);
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
  void build_default(AppState& s, const std::vector<std::unique_ptr<Panel>>& panels);
  bool saved_layout_usable(const std::vector<std::unique_ptr<Panel>>& panels) const;
  bool m_checked = false, m_rebuild = false, m_built = false;
  int m_front_frames = 0;
  std::vector<std::string> m_extra_front;
  int m_extra_frames = 0;
};

}  // namespace ts::ui

#pragma once
// [SECTION] The menu bar (File, View, Run, Help) and the Help windows. Menus only set request flags and
// settings in AppState, like the panels; every item names its shortcut from shortcuts.hpp.
#include <memory>
#include <vector>

#include "ui/app_state.hpp"
#include "ui/panels/panel.hpp"

namespace ts::ui {

void draw_menu_bar(AppState& s, const std::vector<std::unique_ptr<Panel>>& panels);
// Help > Keyboard shortcuts and Help > About, when open.
void draw_help_windows(AppState& s);

}  // namespace ts::ui

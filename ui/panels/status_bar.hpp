#pragma once
// [SECTION] The status bar: a strip at the bottom of the window, outside the dock space (nothing can be
// docked over it). Left to right: the backend and device, how heatmaps get their values, then the latest
// message, elided to the room left (the full text in its tooltip and in View > Messages). Items never
// overlap.
#include "ui/app_state.hpp"
#include "ui/frame_report.hpp"

namespace ts::ui {

// Draws the bar for this frame; call after the menu bar and before the dock space.
void draw_status_bar(AppState& s, FrameReport& out);

}  // namespace ts::ui

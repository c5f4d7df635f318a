#pragma once
// [SECTION] Type and colour, in one place: the UI font (Roboto) and the monospace font (Source Code Pro),
// embedded in the binary; sizes from the person's font-size setting times the monitor's content scale; the
// dark and light themes for ImGui and ImPlot; and the few semantic colours panels use (pass, fail, warning,
// muted) so no panel hard-codes a colour that only reads on one theme.
#include <imgui.h>

#include "core/io/view_settings.hpp"

namespace ts::ui {

struct Palette {
  ImVec4 good, bad, warn, accent, muted;
  ImVec4 plot_current, plot_reference;  // the highlighted series, cuBLAS
};

// Loads the embedded fonts into the current ImGui context's atlas (once per context).
void load_fonts();
ImFont* mono_font();  // nullptr before load_fonts()

// Applies theme, base font size (px, before scaling) and content scale (1 on a 96-dpi screen, 2 on a HiDPI
// one) to the current ImGui and ImPlot contexts. Cheap: call again whenever one of them changes.
void apply_theme(Theme theme, float font_px, float content_scale);
const Palette& palette();  // of the theme applied last
// Puts back a palette saved from palette() (an offscreen figure applies its own theme, then restores).
void set_palette(const Palette& p);

}  // namespace ts::ui

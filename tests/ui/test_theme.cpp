// The themes' colours where a person saw them fail: an unselected radio button (or check box, or text field)
// must stand out from the window around it, and a hovered plot axis must tint its tick labels, not cover them
// with an opaque block. Only the ImGui and ImPlot styles: no window needed.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>
#include <imgui.h>
#include <implot.h>
#include <implot_internal.h>  // GetStyleColorVec4: a colour as ImPlot resolves it (auto colours too)

#include "ui/theme.hpp"

using namespace ts;

namespace {

// WCAG 2 relative luminance and contrast ratio of two opaque sRGB colours.
double luminance(const ImVec4& c) {
  auto lin = [](double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * lin(c.x) + 0.7152 * lin(c.y) + 0.0722 * lin(c.z);
}
double contrast(const ImVec4& a, const ImVec4& b) {
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}
ImVec4 over(const ImVec4& top, const ImVec4& below) {  // `top` blended over an opaque `below`
  return ImVec4(top.x * top.w + below.x * (1 - top.w), top.y * top.w + below.y * (1 - top.w),
                top.z * top.w + below.z * (1 - top.w), 1);
}

struct Contexts {
  Contexts() {
    ImGui::CreateContext();
    ImPlot::CreateContext();
  }
  ~Contexts() {
    ImPlot::DestroyContext();
    ImGui::DestroyContext();
  }
};

}  // namespace

// ImGui's light style fills a radio button white on a 0.94 grey window and draws no outline (contrast 1.1:1):
// an unselected one was invisible. A control's boundary needs 3:1 against what surrounds it (WCAG 1.4.11),
// through its fill or its outline, at every content scale.
TEST(Theme, AnUnselectedRadioButtonStandsOutFromTheLightWindow) {
  Contexts ctx;
  for (float scale : {1.0f, 2.0f}) {
    SCOPED_TRACE(scale);
    ui::apply_theme(Theme::Light, 16, scale);
    const ImGuiStyle& st = ImGui::GetStyle();
    const ImVec4 window = st.Colors[ImGuiCol_WindowBg];
    const ImVec4 fill = over(st.Colors[ImGuiCol_FrameBg], window);
    double best = contrast(fill, window);
    if (st.FrameBorderSize >= 1.0f)
      best = std::max(best, contrast(over(st.Colors[ImGuiCol_Border], window), window));
    EXPECT_GE(best, 3.0) << "frame fill " << contrast(fill, window) << ":1, outline " << st.FrameBorderSize
                         << " px";
  }
}

// ImPlot fills a hovered axis with ImGui's button colour, opaque: hovering the error map's row axis painted a
// bright blue block over its numbers.
TEST(Theme, AHoveredOrDraggedAxisIsOnlyTinted) {
  Contexts ctx;
  for (Theme theme : {Theme::Light, Theme::Dark}) {
    SCOPED_TRACE(theme == Theme::Light ? "light" : "dark");
    ui::apply_theme(theme, 16, 1);
    const ImVec4 window = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    const ImVec4 text = ImGui::GetStyle().Colors[ImGuiCol_Text];
    for (ImPlotCol col : {ImPlotCol_AxisBgHovered, ImPlotCol_AxisBgActive}) {
      const ImVec4 c = ImPlot::GetStyleColorVec4(col);
      EXPECT_GT(c.w, 0.05f) << "the highlight must still be seen";
      EXPECT_LE(c.w, 0.3f) << "the highlight must not cover the tick labels";
      // The tick labels keep most of their contrast on the tinted background.
      EXPECT_GE(contrast(text, over(c, window)), 0.6 * contrast(text, window));
    }
  }
}

// Type and colour: the embedded fonts, the dark and light themes, the semantic colours.
#include "ui/theme.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include <implot.h>

namespace ts::ui::fonts {
extern const unsigned char kRoboto[];
extern const unsigned int kRoboto_size;
extern const unsigned char kSourceCodePro[];
extern const unsigned int kSourceCodePro_size;
}  // namespace ts::ui::fonts

namespace ts::ui {

namespace {
ImFont* g_mono = nullptr;
Palette g_palette;

ImFont* add_font(const unsigned char* data, unsigned int size, const char* name) {
  ImFontConfig cfg;
  cfg.FontDataOwnedByAtlas = false;  // the bytes live in the binary
  cfg.OversampleH = 2;
  std::snprintf(cfg.Name, sizeof cfg.Name, "%s", name);
  // 1.92 atlases rasterise glyphs on demand at whatever size is in use, so the size here is only a default.
  return ImGui::GetIO().Fonts->AddFontFromMemoryTTF(const_cast<unsigned char*>(data), int(size), 16.0f, &cfg);
}
}  // namespace

void load_fonts() {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  io.FontDefault = add_font(fonts::kRoboto, fonts::kRoboto_size, "Roboto Regular");
  g_mono = add_font(fonts::kSourceCodePro, fonts::kSourceCodePro_size, "Source Code Pro");
}

ImFont* mono_font() {
  return g_mono;
}

void apply_theme(Theme theme, float font_px, float content_scale) {
  const float scale = std::clamp(content_scale, 0.5f, 4.0f);
  ImGuiStyle& st = ImGui::GetStyle();
  st = ImGuiStyle();  // sizes start from the defaults every time: ScaleAllSizes is not reversible
  if (theme == Theme::Light)
    ImGui::StyleColorsLight(&st);
  else
    ImGui::StyleColorsDark(&st);
  st.WindowRounding = 4;
  st.FrameRounding = 3;
  st.GrabRounding = 3;
  st.TabRounding = 3;
  st.WindowPadding = ImVec2(8, 7);
  st.ItemSpacing = ImVec2(8, 5);
  st.ScrollbarSize = 13;
  // Pop-ups and combo lists are opaque: a list over a heatmap must stay readable.
  for (ImGuiCol c : {ImGuiCol_PopupBg, ImGuiCol_WindowBg, ImGuiCol_MenuBarBg}) st.Colors[c].w = 1.0f;
  if (theme == Theme::Dark) {
    st.Colors[ImGuiCol_WindowBg] = ImVec4(0.10f, 0.105f, 0.115f, 1.0f);
    st.Colors[ImGuiCol_PopupBg] = ImVec4(0.13f, 0.135f, 0.15f, 1.0f);
  } else {
    // ImGui's light style fills frames (radio buttons, check boxes, text fields) white on a 0.94 grey window
    // with no outline: an unselected radio button all but vanishes. An outline as dark as a light desktop's
    // (at least 3:1 against the window, the contrast WCAG asks of a control's boundary) marks every frame.
    st.FrameBorderSize = 1.0f;
    st.Colors[ImGuiCol_Border] = ImVec4(0.0f, 0.0f, 0.0f, 0.50f);
  }
  st.ScaleAllSizes(scale);
  st.FontSizeBase = std::clamp(font_px, ViewSettings::kMinFontPx, ViewSettings::kMaxFontPx);
  st.FontScaleDpi = scale;

  ImPlotStyle& ps = ImPlot::GetStyle();
  ps = ImPlotStyle();
  if (theme == Theme::Light)
    ImPlot::StyleColorsLight(&ps);
  else
    ImPlot::StyleColorsDark(&ps);
  // Auto-fitted plots keep a margin, so a flat series (every launch the same time) is not drawn on the
  // border.
  ps.FitPadding = ImVec2(0.02f, 0.12f);
  // ImPlot fills a hovered or dragged axis with the button colours, opaque (a bright blue block over the tick
  // labels): a light tint of the same colour says "this axis zooms or drags alone" without hiding anything.
  for (auto [col, alpha] :
       {std::pair{ImPlotCol_AxisBgHovered, 0.16f}, std::pair{ImPlotCol_AxisBgActive, 0.28f}}) {
    ImVec4 c = st.Colors[col == ImPlotCol_AxisBgHovered ? ImGuiCol_ButtonHovered : ImGuiCol_ButtonActive];
    c.w = alpha;
    ps.Colors[col] = c;
  }
  for (ImVec2* v :
       {&ps.PlotPadding, &ps.LabelPadding, &ps.LegendPadding, &ps.LegendInnerPadding, &ps.LegendSpacing,
        &ps.MousePosPadding, &ps.AnnotationPadding, &ps.MajorTickLen, &ps.MinorTickLen, &ps.PlotMinSize})
    *v = ImVec2(v->x * scale, v->y * scale);
  ps.PlotPadding = ImVec2(6 * scale, 6 * scale);
  ps.LineWeight *= scale;
  ps.MarkerSize *= scale;
  ps.ErrorBarSize *= scale;

  if (theme == Theme::Light) {
    g_palette = Palette{ImVec4(0.10f, 0.55f, 0.20f, 1), ImVec4(0.80f, 0.15f, 0.12f, 1),
                        ImVec4(0.70f, 0.45f, 0.0f, 1),  ImVec4(0.15f, 0.40f, 0.80f, 1),
                        ImVec4(0.45f, 0.45f, 0.48f, 1), ImVec4(0.15f, 0.40f, 0.80f, 1),
                        ImVec4(0.85f, 0.45f, 0.05f, 1)};
  } else {
    g_palette = Palette{ImVec4(0.35f, 0.85f, 0.45f, 1), ImVec4(1.00f, 0.42f, 0.36f, 1),
                        ImVec4(1.00f, 0.80f, 0.30f, 1), ImVec4(0.45f, 0.70f, 1.00f, 1),
                        ImVec4(0.60f, 0.60f, 0.63f, 1), ImVec4(0.35f, 0.65f, 1.00f, 1),
                        ImVec4(0.95f, 0.62f, 0.22f, 1)};
  }
}

const Palette& palette() {
  return g_palette;
}

void set_palette(const Palette& p) {
  g_palette = p;
}

}  // namespace ts::ui

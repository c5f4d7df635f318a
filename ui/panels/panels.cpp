#include <algorithm>
#include <cmath>
#include <cstdint>

#include <imgui.h>
#include <imgui_internal.h>
#include <implot.h>

#include "ui/panels/panel.hpp"
#include "core/base/text_wrap.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

const KernelInfo* current_kernel(const AppState& s) {
  return find_kernel(s.kernels(), s.settings.spec.kernel);
}

void keep_square(AppState& s) {
  ProblemSpec& p = s.settings.spec;
  if (p.input == InputKind::File) return;
  if (const KernelInfo* k = current_kernel(s); k && k->square_only) s.settings.square = true;
  if (s.settings.square) p.m = p.k = p.n;
}

std::vector<std::unique_ptr<Panel>> register_panels() {
  std::vector<std::unique_ptr<Panel>> p;
  p.push_back(make_controls_panel());
  p.push_back(make_matrices_panel());
  p.push_back(make_result_panel());
  p.push_back(make_timings_panel());
  p.push_back(make_sweep_panel());
  p.push_back(make_roofline_panel());
  p.push_back(make_occupancy_panel());
  p.push_back(make_schedule_panel());
  p.push_back(make_messages_panel());
  p.push_back(make_kernel_panel());
  p.push_back(make_kernel_editor_panel());
  p.push_back(make_sass_panel());
  return p;
}

void Panel::draw(AppState& s, FrameReport& out) {
  PanelReport& rep = out.panels[name()];
  rep.visible = false;
  bool open = s.settings.view.shown(name());
  if (!open) return;
  // A panel that appears does not take the focus: the tab saved (or chosen by the default layout) stays in
  // front of its dock node.
  const bool shown = ImGui::Begin(name(), &open, window_flags() | ImGuiWindowFlags_NoFocusOnAppearing);
  if (shown) draw_content(s, out);
  ImGuiWindow* w = ImGui::GetCurrentWindow();
  rep.rect = Rect{w->Pos.x, w->Pos.y, w->Size.x, w->Size.y};
  rep.docked = w->DockIsActive;
  rep.visible = shown && !w->Hidden && !w->SkipItems;
  // Content that ran past the right edge of the work area is cut off (windows scroll vertically, never
  // sideways): report by how much, so the layout tests can refuse it.
  rep.clipped_px = shown ? std::max(0.0f, w->DC.CursorMaxPos.x - w->WorkRect.Max.x) : 0.0f;
  if (rep.clipped_px < 1.0f) rep.clipped_px = 0;
  rep.overflow_px = shown ? w->ScrollMax.y : 0.0f;
  if (rep.overflow_px < 1.0f) rep.overflow_px = 0;
  ImGui::End();
  if (!open) s.settings.view.panels[name()] = false;  // closed by its tab's button: View menu shows it again
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

void export_button(AppState& s, const char* panel, const char* stem,
                   const std::function<std::string()>& csv) {
  const bool clicked = ImGui::SmallButton("Export PNG + CSV");
  // snapshot --export-panels presses every panel's button, one panel per frame (rq::PressExport).
  const bool busy = s.asked.pending<rq::ExportPanel>();  // one export a frame
  bool scripted = false;
  if (!busy)
    if (auto press = s.asked.take<rq::PressExport>()) {
      scripted = press->panels.erase(panel) > 0;
      if (!press->panels.empty()) s.ask(std::move(*press));  // the other panels' still to come
    }
  if ((clicked || scripted) && !busy) s.ask(rq::ExportPanel{panel, stem, csv()});
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Writes tilescope-panel-%s-<date>-<time>.png and .csv to %s (never replacing a file)", stem,
        s.settings.export_dir.empty() ? default_export_dir().c_str() : s.settings.export_dir.c_str());
}

bool gl_damage_notice(AppState& s, const char* what) {
  if (s.pictures_trusted()) return false;
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(palette().bad,
                     "Not drawn: OpenGL failed its self-check, so %s would be a wrong picture.", what);
  ImGui::TextWrapped("%s", s.gl.verdict.c_str());
  text_muted_wrapped(
      "The numbers in Result, Timings and the exports are computed without OpenGL and stay right. Help > "
      "OpenGL self-check says what restores the pictures.");
  ImGui::PopTextWrapPos();
  if (ImGui::Button("Check again")) {
    s.ask(rq::CheckGl{rq::kGlCheckOnRequest});
  }
  return true;
}

bool needs_gpu_notice(AppState& s, FrameReport& out, const char* panel, const char* what) {
  if (s.backend_kind() == "cuda") {
    out.panels[panel].state = "shown";
    return false;
  }
  out.panels[panel].state = "needs a GPU";
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(palette().warn, "%s needs a GPU.", what);
  ImGui::TextDisabled(
      "The CPU backend has no SMs, warps or occupancy to show, so this panel stays empty rather than show "
      "made-up data. Run TileScope on a machine with an NVIDIA GPU.");
  ImGui::PopTextWrapPos();
  return true;
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

bool text_fit(const std::string& text, const ImVec4* colour, float width,
              const std::function<void()>& hover) {
  const float avail = width > 0 ? width : ImGui::GetContentRegionAvail().x;
  const float full = ImGui::CalcTextSize(text.c_str()).x;
  if (colour) ImGui::PushStyleColor(ImGuiCol_Text, *colour);
  const bool elided = full > avail;
  if (!elided) {
    ImGui::TextUnformatted(text.c_str());
  } else {
    // Keep as many characters as fit before "...", by bisection on the UTF-8-agnostic byte count (our text is
    // ASCII; a cut inside a multibyte sequence would only shorten the line by one more character).
    const float dots = ImGui::CalcTextSize("...").x;
    size_t lo = 0, hi = text.size();
    while (lo < hi) {
      const size_t mid = (lo + hi + 1) / 2;
      if (ImGui::CalcTextSize(text.c_str(), text.c_str() + mid).x + dots <= avail)
        lo = mid;
      else
        hi = mid - 1;
    }
    const std::string shown = text.substr(0, lo) + "...";
    ImGui::TextUnformatted(shown.c_str());
  }
  if (colour) ImGui::PopStyleColor();
  const bool hovered = (elided || hover) && ImGui::IsItemHovered();
  if (hovered) {
    ImGui::BeginTooltip();
    if (elided) {
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
      ImGui::TextUnformatted(text.c_str());
      ImGui::PopTextWrapPos();
    }
    if (hover) hover();
    ImGui::EndTooltip();
  }
  return hovered;
}

bool begin_facts(const char* id, std::initializer_list<const char*> keys) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingStretchProp)) return false;
  float w = 0;
  for (const char* k : keys) w = std::max(w, ImGui::CalcTextSize(k).x);
  // (A window being laid out for the first time can report no room at all: never a width below one pixel.)
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed,
                          std::max(1.0f, std::min(w, 0.45f * ImGui::GetContentRegionAvail().x)));
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch,
                          1.0f);  // an explicit weight: never 0 / 0
  return true;
}

void fact(const char* key, const std::string& value, const ImVec4* colour) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", key);
  ImGui::PopTextWrapPos();
  ImGui::TableNextColumn();
  text_lines(value, colour);
}

void text_lines(const std::string& text, const ImVec4* colour) {
  // Broken at spaces only: ImGui's wrapping also breaks after '.', splitting numbers such as 71.17.
  const auto measure = [](const char* b, const char* e) { return ImGui::CalcTextSize(b, e).x; };
  std::string joined;  // one text item: the lines as close as ImGui's own wrapping sets them
  for (const auto& line : wrap_at_spaces(text, ImGui::GetContentRegionAvail().x, measure))
    joined.append(joined.empty() ? "" : "\n").append(line);
  if (colour) ImGui::PushStyleColor(ImGuiCol_Text, *colour);
  ImGui::TextUnformatted(joined.c_str());
  if (colour) ImGui::PopStyleColor();
}

void text_muted_wrapped(const char* text) {
  text_lines(text, &ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
}

bool same_line_if_fits(float next_width) {
  const float x = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x;
  const float right = ImGui::GetCurrentWindow()->WorkRect.Max.x;
  if (x + next_width > right) return false;
  ImGui::SameLine();
  return true;
}

float small_button_width(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2;
}

float button_width(const char* label) {
  return small_button_width(label);
}

void draw_rows_down(const char* id, unsigned texture, double x0, double y0, double x1, double y1) {
  ImPlot::PlotImage(id, ImTextureID(intptr_t(texture)), ImPlotPoint(x0, y0), ImPlotPoint(x1, y1),
                    ImVec2(0, 1), ImVec2(1, 0));
}

}  // namespace ts::ui

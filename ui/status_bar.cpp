// Status bar: backend and device, why the CPU is used, the last error, transient messages.
#include <string>

#include <imgui.h>

#include "heatmap_gl.hpp"

#include "panel.hpp"

namespace ts::ui {

namespace {

class StatusBar final : public Panel {
 public:
  static constexpr float kHeight = 32;  // ImGui's minimum window height (style.WindowMinSize)
  const char* name() const override { return "Status"; }
  Rect default_rect(float w, float h) const override { return {0, h - kHeight, w, kHeight}; }
  int window_flags() const override {
    return ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
           ImGuiWindowFlags_NoDocking | ImGuiWindowFlags_NoFocusOnAppearing;
  }

 protected:
  void draw_content(AppState& s) override {
    // Always pinned to the bottom of the viewport, whatever the saved layout says.
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetWindowPos(ImVec2(vp->WorkPos.x, vp->WorkPos.y + vp->WorkSize.y - kHeight));
    ImGui::SetWindowSize(ImVec2(vp->WorkSize.x, kHeight));
    if (s.backend_kind == "cpu") {
      ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, 1), "CPU backend (no GPU)");
      if (ImGui::IsItemHovered() && !s.backend_note.empty()) ImGui::SetTooltip("%s", s.backend_note.c_str());
    } else {
      ImGui::TextColored(ImVec4(0.45f, 0.85f, 0.45f, 1), "CUDA");
    }
    ImGui::SameLine();
    ImGui::TextUnformatted(s.device_name.c_str());
    // How the heatmaps get their values: straight from GPU memory, or through the host and why.
    if (s.heatmaps) {
      const auto& st = s.heatmaps->interop();
      ImGui::SameLine();
      ImGui::TextDisabled("|");
      ImGui::SameLine();
      if (st.on) {
        ImGui::TextColored(ImVec4(0.45f, 0.85f, 0.45f, 1), "interop on");
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("heatmaps are written by CUDA straight into GL textures");
      } else {
        const std::string text = "interop off: " + st.why;
        ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, 1), "%s", text.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
        s.panel_state["Status"] = text;
      }
      if (st.on) s.panel_state["Status"] = "interop on";
    }
    ImGui::SameLine();
    ImGui::TextDisabled("|");
    ImGui::SameLine();
    if (!s.last_error.empty()) {
      ImGui::TextColored(ImVec4(1.0f, 0.4f, 0.35f, 1), "%s: %s", s.last_error_is_input ? "refused" : "error",
                         s.last_error.c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", s.last_error.c_str());
    } else if (!s.status_message.empty() && ImGui::GetTime() - s.status_time < 8.0) {
      ImGui::TextUnformatted(s.status_message.c_str());
    } else {
      ImGui::TextDisabled(s.busy ? "running..." : "ready");
    }
    ImGui::SameLine(ImGui::GetWindowWidth() - 200);
    ImGui::TextDisabled("F12 screenshot  Ctrl+Q quit");
  }
};

}  // namespace

std::unique_ptr<Panel> make_status_bar() {
  return std::make_unique<StatusBar>();
}

}  // namespace ts::ui

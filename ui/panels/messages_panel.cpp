// Messages: everything the status bar said, newest last, in full (the status bar elides long messages).
#include <imgui.h>

#include "ui/panels/panel.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

class MessagesPanel final : public Panel {
 public:
  const char* name() const override { return "Messages"; }

 protected:
  void draw_content(AppState& s, FrameReport& /*out*/) override {
    if (ImGui::SmallButton("Clear")) s.log.clear();
    ImGui::SameLine();
    ImGui::TextDisabled("%zu messages", s.log.messages().size());
    if (!ImGui::BeginChild("log", ImVec2(0, 0), ImGuiChildFlags_None)) {
      ImGui::EndChild();
      return;
    }
    ImGui::PushTextWrapPos(0);
    for (const Message& m : s.log.messages()) {
      const ImVec4 c = m.severity == Severity::Error     ? palette().bad
                       : m.severity == Severity::Warning ? palette().warn
                                                         : ImGui::GetStyle().Colors[ImGuiCol_Text];
      ImGui::TextDisabled("%s", m.stamp.c_str());
      ImGui::SameLine();
      ImGui::TextColored(c, "%s", m.text.c_str());
    }
    ImGui::PopTextWrapPos();
    // Follow new messages unless the person scrolled up to read.
    if (m_seen != (s.log.latest() ? s.log.latest()->serial : 0) &&
        ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - 4)
      ImGui::SetScrollHereY(1.0f);
    m_seen = s.log.latest() ? s.log.latest()->serial : 0;
    ImGui::EndChild();
  }

 private:
  uint64_t m_seen = 0;
};

}  // namespace

std::unique_ptr<Panel> make_messages_panel() {
  return std::make_unique<MessagesPanel>();
}

}  // namespace ts::ui

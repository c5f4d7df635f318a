#include "ui/dialogs/connect_dialog.hpp"

#include <algorithm>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "ui/theme.hpp"

namespace ts::ui {

namespace {

bool connected(const AppState& s, const std::string& command) {
  return std::any_of(s.engines.begin(), s.engines.end(),
                     [&](const AppState::EngineRow& e) { return e.command == command; });
}

}  // namespace

void draw_connect_dialog(AppState& s) {
  AppState::ConnectDialog& d = s.connect;
  if (!d.open) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float em = ImGui::GetFontSize();
  ImGui::SetNextWindowPos(
      ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
      ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(em * 44, vp->WorkSize.x - 2 * em), 0), ImGuiCond_Appearing);
  if (!ImGui::Begin("Connect to engine", &d.open,
                    ImGuiWindowFlags_NoDocking | ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::End();
    return;
  }
  ImGui::TextWrapped(
      "A command whose standard input and output reach `tilescope serve` where the GPU is, e.g. "
      "ssh gpu-box tilescope serve, srun --gres=gpu:1 tilescope serve, docker exec -i box tilescope serve. "
      "SSH does the authentication and the encryption; TileScope opens no network port.");
  ImGui::SetNextItemWidth(-em * 5);
  bool go = ImGui::InputTextWithHint("Command", "ssh gpu-box tilescope serve --device 0", &d.command,
                                     ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SetNextItemWidth(em * 14);
  ImGui::InputTextWithHint("Name", "(the host)", &d.name);
  ImGui::BeginDisabled(s.connecting() || d.command.find_first_not_of(" \t") == std::string::npos);
  go = ImGui::Button("Connect") || go;
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(s.connecting() || connected(s, ""));
  if (ImGui::Button("This machine's engine")) s.ask(rq::ConnectEngine{"", "", true});
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("The GPU (or CPU) of the machine this window runs on, beside the remote ones");
  if (go && !s.connecting() && d.command.find_first_not_of(" \t") != std::string::npos)
    s.ask(rq::ConnectEngine{d.name, d.command, true});
  if (s.connecting()) ImGui::TextDisabled("connecting...");
  if (!d.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, palette().bad);
    ImGui::TextWrapped("%s", d.error.c_str());
    ImGui::PopStyleColor();
  }

  ImGui::SeparatorText("Connected");
  if (ImGui::BeginTable("connected", 3, ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("device", ImGuiTableColumnFlags_WidthStretch, 1.2f);
    ImGui::TableSetupColumn("do", ImGuiTableColumnFlags_WidthFixed,
                            ImGui::CalcTextSize("Choose Close").x + ImGui::GetStyle().FramePadding.x * 6);
    for (const AppState::EngineRow& e : s.engines) {
      ImGui::PushID(int(e.id));
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", e.name.c_str());
      if (ImGui::IsItemHovered() && !e.command.empty()) ImGui::SetTooltip("%s", e.command.c_str());
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", e.lost.empty() ? e.device.c_str() : ("lost: " + e.lost).c_str());
      ImGui::TableNextColumn();
      if (e.current) {
        ImGui::TextDisabled("measuring here");
      } else {
        if (ImGui::SmallButton("Choose")) s.ask(rq::ChooseEngine{e.id});
        ImGui::SameLine();
        if (ImGui::SmallButton("Close")) s.ask(rq::DisconnectEngine{e.id});
      }
      ImGui::PopID();
    }
    ImGui::EndTable();
  }

  if (!s.settings.engines.empty()) {
    ImGui::SeparatorText("Remembered");
    int forget = -1;
    if (ImGui::BeginTable("remembered", 3, ImGuiTableFlags_RowBg)) {
      ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 0.6f);
      ImGui::TableSetupColumn("command", ImGuiTableColumnFlags_WidthStretch, 1.6f);
      ImGui::TableSetupColumn(
          "do", ImGuiTableColumnFlags_WidthFixed,
          ImGui::CalcTextSize("connected Forget").x + ImGui::GetStyle().FramePadding.x * 6);
      for (size_t i = 0; i < s.settings.engines.size(); ++i) {
        const RememberedEngine& r = s.settings.engines[i];
        ImGui::PushID(int(i));
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", r.name.c_str());
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", r.command.c_str());
        ImGui::TableNextColumn();
        const bool here = connected(s, r.command);
        ImGui::BeginDisabled(here || s.connecting());
        if (ImGui::SmallButton(here ? "connected" : "Connect"))
          s.ask(rq::ConnectEngine{r.name, r.command, true});
        ImGui::EndDisabled();
        ImGui::SameLine();
        if (ImGui::SmallButton("Forget")) forget = int(i);
        ImGui::PopID();
      }
      ImGui::EndTable();
    }
    if (forget >= 0) s.settings.engines.erase(s.settings.engines.begin() + forget);
  }
  ImGui::End();
}

}  // namespace ts::ui

#include "ui/panels/status_bar.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include <imgui.h>
#include <imgui_internal.h>

#include "gfx/heatmap_set.hpp"
#include "ui/panels/panel.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

void draw_status_bar(AppState& s, FrameReport& out) {
  ImGuiViewport* vp = ImGui::GetMainViewport();
  const float h = ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y;
  const ImGuiWindowFlags flags =
      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_MenuBar;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(ImGui::GetStyle().WindowPadding.x, 0));
  const bool open = ImGui::BeginViewportSideBar("##status", vp, ImGuiDir_Down, h, flags);
  ImGui::PopStyleVar();
  if (open && ImGui::BeginMenuBar()) {
    const Palette& pal = palette();
    // Backend and device.
    if (s.backend_kind() == "cpu") {
      ImGui::TextColored(pal.warn, "CPU backend (no GPU)");
      if (ImGui::IsItemHovered() && !s.backend_note.empty()) ImGui::SetTooltip("%s", s.backend_note.c_str());
    } else {
      ImGui::TextColored(pal.good, "CUDA");
    }
    ImGui::TextUnformatted(s.device_name().c_str());
    // How the heatmaps get their values: straight from GPU memory, or through the host and why.
    if (s.heatmaps) {
      const auto& st = s.heatmaps->interop();
      ImGui::TextDisabled("|");
      const std::string text = st.on ? "interop on" : "interop off";
      ImGui::TextColored(st.on ? pal.good : pal.warn, "%s", text.c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "%s",
            st.on
                ? ("heatmaps are written by CUDA straight into GL memory: " + s.heatmaps->path_note()).c_str()
                : ("heatmaps come through host memory: " + st.why).c_str());
      out.panels["Status"].state = st.on ? "interop on" : "interop off: " + st.why;
    }
    // A remote engine: where it runs and how far away, or that its link is gone, with the way back.
    if (s.backend) {
      const Backend::Link l = s.backend->link();
      if (l.remote) {
        ImGui::TextDisabled("|");
        std::string text;
        if (l.connected &&
            l.stalled) {  // nothing moves, though answers are awaited: a hung ssh, a dead network
          char silent[32];
          std::snprintf(silent, sizeof silent, "%.0f s", l.silent_s);
          text = std::string("engine silent for ") + silent + " (link stalled?): " + l.command;
          text_fit(text, &pal.warn,
                   std::min(ImGui::GetFontSize() * 24, ImGui::GetContentRegionAvail().x * 0.4f));
          if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "nothing has come from the engine for %s while answers are awaited: the link (ssh, the "
                "network) may be stalled\nthe window goes on; what was asked comes when the link moves "
                "again, and a link that drops is said to be lost, with Reconnect",
                silent);
        } else if (l.connected) {
          char rtt[32];
          if (l.rtt_ms <= 0)
            std::snprintf(rtt, sizeof rtt, "...");
          else  // a pipe on one machine: a tenth of a millisecond, not "0 ms"
            std::snprintf(rtt, sizeof rtt, l.rtt_ms < 10 ? "%.1f ms" : "%.0f ms", l.rtt_ms);
          text =
              std::string("engine ") + rtt + ": " + l.command;  // the round trip first: a long command is cut
          text_fit(text, &pal.good,
                   std::min(ImGui::GetFontSize() * 24, ImGui::GetContentRegionAvail().x * 0.4f));
          if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "the engine runs TileScope %s through `%s`\nround trip %.1f ms, %.1f MB in, %.1f MB out",
                l.engine_version.c_str(), l.command.c_str(), l.rtt_ms, double(l.bytes_in) / 1e6,
                double(l.bytes_out) / 1e6);
        } else {
          text = "engine lost: " + l.lost;
          ImGui::PushStyleColor(ImGuiCol_Text, pal.bad);
          const bool again = ImGui::SmallButton(s.jobs.has(kJobReconnect) ? "connecting..." : "Reconnect");
          ImGui::PopStyleColor();
          if (again && !s.jobs.has(kJobReconnect)) s.ask(rq::Reconnect{});
          if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s\nthe results, sessions and panels are kept; Reconnect runs `%s` again",
                              text.c_str(), l.command.c_str());
          text_fit(text, &pal.bad,
                   std::min(ImGui::GetFontSize() * 24, ImGui::GetContentRegionAvail().x * 0.4f));
        }
        out.panels["Status"].state += (out.panels["Status"].state.empty() ? "" : "; ") + text;
      }
    }
    // OpenGL failed its self-check: said before anything else, in words, with a click to the explanation.
    if (!s.pictures_trusted()) {
      ImGui::TextDisabled("|");
      ImGui::PushStyleColor(ImGuiCol_Text, pal.bad);
      if (ImGui::SmallButton("OpenGL damaged: pictures may be wrong")) s.gl.popup = true;
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", s.gl.verdict.c_str());
    }
    // A sweep runs on its own thread while the window is otherwise idle: where it stands, always in sight.
    std::string said;
    if (s.sweeping()) {
      const SweepProgress& p = s.sweep_progress;
      const std::string sweep =
          "sweep " + std::to_string(p.done) + " / " + std::to_string(p.total) + ", " + describe_time_left(p);
      ImGui::TextDisabled("|");
      ImGui::TextUnformatted(sweep.c_str());
      said = sweep + " | ";
    }
    ImGui::TextDisabled("|");
    // The latest message in the room that is left: an error stays until the next success, other messages
    // fade after 8 seconds; a message that does not fit is elided, its full text in the tooltip.
    std::string text;
    const ImVec4* colour = nullptr;
    if (!s.last_error.empty()) {
      text = std::string(s.last_error_is_input ? "refused: " : "error: ") + s.last_error;
      colour = &pal.bad;
    } else if (const Message* m = s.log.latest(); m && s.now - m->time < 8.0) {
      text = m->text;
      colour = m->severity == Severity::Error     ? &pal.bad
               : m->severity == Severity::Warning ? &pal.warn
                                                  : nullptr;
    } else {
      text = s.busy() ? "running..." : s.sweeping() ? "sweeping" : "ready";
      if (s.sweeping() && s.sweep_progress.in_flight) {
        const ProblemSpec& p = *s.sweep_progress.in_flight;
        text = "measuring " + KernelTile{p.kernel, p.tile}.label() + " at " + std::to_string(p.m) + " x " +
               std::to_string(p.n) + " x " + std::to_string(p.k);
      }
      colour = &pal.muted;
    }
    out.panels["Status"].text = said + text;
    const float room = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x;
    text_fit(text, colour, std::max(room, ImGui::GetFontSize()));
    const ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    PanelReport& rep = out.panels["Status"];
    rep.rect = Rect{pos.x, pos.y, size.x, size.y};
    rep.visible = true;
    rep.docked = false;
    ImGuiWindow* w = ImGui::GetCurrentWindow();
    rep.clipped_px = std::max(0.0f, w->DC.CursorMaxPos.x - (pos.x + size.x));
    if (rep.clipped_px < 1) rep.clipped_px = 0;
    ImGui::EndMenuBar();
  }
  ImGui::End();
}

}  // namespace ts::ui

#include "ui/panels/menu_bar.hpp"

#include <algorithm>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <string>

#include <imgui.h>
#include <implot.h>

#include "ui/gl_health.hpp"
#include "ui/dialogs/native_file_dialog.hpp"
#include "ui/panels/panel.hpp"
#include "ui/shortcuts.hpp"
#include "ui/theme.hpp"
#include "tilescope/version.hpp"

namespace ts::ui {

namespace {

void presets_menu(AppState& s) {
  for (const Preset& p : presets()) {
    const bool ok = fits(s.capacity, p.m, p.n, p.k);
    ImGui::BeginDisabled(!ok);
    if (ImGui::MenuItem(p.name.c_str())) {
      ProblemSpec& spec = s.settings.spec;
      spec.m = p.m;
      spec.n = p.n;
      spec.k = p.k;
      spec.input = p.input;
      s.settings.square = p.m == p.n && p.n == p.k;
      if (!p.kernel.empty()) {
        spec.kernel = p.kernel;
        if (const KernelInfo* k = find_kernel(s.kernels(), p.kernel))
          spec.tile = p.tile ? p.tile : k->default_tile;
      }
      keep_square(s);
      s.ask(rq::Run{});  // a preset is a deliberate choice: run it even with auto-run off
    }
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
      ImGui::TextUnformatted(p.why.c_str());
      if (!ok) ImGui::TextColored(palette().warn, "too large here: %s", s.capacity.what.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
  }
}

}  // namespace

void draw_menu_bar(AppState& s, const std::vector<std::unique_ptr<Panel>>& panels) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open A and B (.npy)...", shortcut_label(Action::OpenInputs)))
      s.ask(rq::OpenInputs{});
    if (ImGui::MenuItem("Save C as .npy...", shortcut_label(Action::SaveC), false,
                        bool(s.result && s.result->store)))
      s.ask(rq::SaveC{});
    if (ImGui::MenuItem("Connect to engine...")) s.connect.open = true;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Measure on another GPU: a command that reaches `tilescope serve` there (ssh gpu-box tilescope "
          "serve), or this machine's engine beside a remote one; the Controls' Device chooses where runs go");
    if (ImGui::MenuItem("Open kernel (.cu, .py)...")) s.ask(rq::ChooseKernelFile{});
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Your own matmul kernel: compiled, verified, timed, traced and drawn like the built-ins "
          "(you can also drop the file on the window)");
    bool desktop = s.settings.file_dialog == FileDialogChoice::Desktop;
    if (ImGui::MenuItem("Desktop file dialog", nullptr, &desktop))
      s.settings.file_dialog = desktop ? FileDialogChoice::Desktop : FileDialogChoice::Window;
    if (ImGui::IsItemHovered()) {
      std::string why;
      const std::string helper = desktop_dialog_helper(&why);
      ImGui::SetTooltip(
          "Open and save with the desktop's own file dialog (zenity or kdialog); off: the dialog "
          "drawn in this window.\n%s",
          helper.empty() ? ("None here (" + why + "): the window's own is used.").c_str()
                         : ("Here: " + helper + ".").c_str());
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Save session", nullptr, false, !s.session_file.empty())) s.ask(rq::SaveSession{});
    if (ImGui::IsItemHovered() && !s.session_file.empty())
      ImGui::SetTooltip("Every measured point of this window to %s (also done when the window closes)",
                        s.session_file.c_str());
    if (ImGui::MenuItem("Open session to overlay...")) s.ask(rq::OpenSession{});
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "A saved session (another GPU, tilescope bench --session-out) drawn beside this one on "
          "every plot");
    const bool overlays = std::any_of(s.sessions.all().begin() + 1, s.sessions.all().end(),
                                      [](const Session& o) { return o.engine == 0; });
    if (ImGui::BeginMenu("Close overlay", overlays)) {
      for (size_t i = 1; i < s.sessions.size(); ++i)  // an engine's session goes when the engine is closed
        if (s.sessions.all()[i].engine == 0 && ImGui::MenuItem(s.sessions.all()[i].label.c_str()))
          s.ask(rq::CloseOverlay{i});
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Screenshot of the window", shortcut_label(Action::Screenshot)))
      s.ask(rq::Screenshot{});
    if (ImGui::BeginMenu("Export panel (PNG + CSV)")) {
      for (const char* p : {"Timings", "Occupancy", "Tile schedule"})
        if (ImGui::MenuItem(p)) {  // joins the panels still to be exported
          rq::PressExport press;
          if (const rq::PressExport* pending = s.asked.peek<rq::PressExport>()) press = *pending;
          press.panels.insert(p);
          s.ask(std::move(press));
        }
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", shortcut_label(Action::Quit))) s.ask(rq::Quit{});
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (const auto& p : panels) {
      bool shown = s.settings.view.shown(p->name());
      if (ImGui::MenuItem(p->name(), nullptr, &shown)) s.settings.view.panels[p->name()] = shown;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Reset layout", shortcut_label(Action::ResetLayout))) s.ask(rq::ResetLayout{});
    ImGui::Separator();
    float px = s.settings.view.font_px;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    if (ImGui::SliderFloat("Text size", &px, ViewSettings::kMinFontPx, ViewSettings::kMaxFontPx, "%.0f px"))
      s.settings.view.font_px = std::round(px);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s larger, %s smaller", shortcut_label(Action::FontBigger),
                        shortcut_label(Action::FontSmaller));
    if (ImGui::MenuItem("Dark theme", nullptr, s.settings.view.theme == Theme::Dark))
      s.settings.view.theme = Theme::Dark;
    if (ImGui::MenuItem("Light theme", nullptr, s.settings.view.theme == Theme::Light))
      s.settings.view.theme = Theme::Light;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Run")) {
    if (ImGui::MenuItem("Run", shortcut_label(Action::Run))) s.ask(rq::Run{});
    ImGui::MenuItem("Repeat", shortcut_label(Action::Repeat), &s.repeat);
    ImGui::MenuItem("Auto-run on change", nullptr, &s.settings.auto_run);
    ImGui::Separator();
    if (ImGui::BeginMenu("Presets")) {
      presets_menu(s);
      ImGui::EndMenu();
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keyboard shortcuts", shortcut_label(Action::Shortcuts))) s.show_shortcuts = true;
    if (ImGui::MenuItem("About TileScope")) s.show_about = true;
    if (ImGui::MenuItem("OpenGL self-check")) s.gl.popup = true;
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

void draw_help_windows(AppState& s) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  if (s.show_shortcuts) {
    ImGui::SetNextWindowPos(
        ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
        ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    if (ImGui::Begin("Keyboard shortcuts", &s.show_shortcuts,
                     ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoDocking |
                         ImGuiWindowFlags_NoSavedSettings)) {
      if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
        for (int a = 0; a < int(Action::Count); ++a) {
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(shortcut_label(Action(a)));
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(action_name(Action(a)));
        }
        ImGui::EndTable();
      }
      ImGui::TextDisabled("Heatmaps: wheel zooms, drag pans, double-click shows the whole matrix.");
      ImGui::TextDisabled("Size sliders: Alt while dragging picks any value; a run starts when you let go.");
    }
    ImGui::End();
  }
  if (s.gl.popup) {  // the GL self-check: its verdict, what it means, what restores the pictures
    ImGui::SetNextWindowPos(
        ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
        ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 36, 0), ImGuiCond_Appearing);
    if (ImGui::Begin("OpenGL self-check", &s.gl.popup,
                     ImGuiWindowFlags_NoDocking | ImGuiWindowFlags_NoSavedSettings |
                         ImGuiWindowFlags_AlwaysAutoResize)) {
      const AppState::GlHealth& g = s.gl;
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
      const bool damaged = g.state == AppState::GlHealth::State::Damaged;
      if (g.state == AppState::GlHealth::State::Unchecked)
        ImGui::TextUnformatted("Not checked yet.");
      else
        ImGui::TextColored(damaged ? palette().bad : palette().good, "%s: %s", damaged ? "FAILED" : "passed",
                           g.verdict.c_str());
      ImGui::TextDisabled(
          "%d check(s); the last one %s, %.0f ms%s", g.checks, g.trigger.c_str(), g.ms,
          g.rebuilds ? (", GL resources made anew " + std::to_string(g.rebuilds) + " time(s)").c_str() : "");
      ImGui::Separator();
      if (damaged) ImGui::TextUnformatted(gl_damage_advice().c_str());
      text_muted_wrapped(("What was compared: " + g.detail).c_str());
      text_muted_wrapped(
          "TileScope draws a known heatmap and a line of known text through the same code that draws this "
          "window, reads the pixels back and compares them with what they must be. It checks at start, after "
          "every fault or hang of your kernel, before a snapshot or figure is written, and when asked.");
      ImGui::PopTextWrapPos();
      if (ImGui::Button("Check again")) {
        s.ask(rq::CheckGl{rq::kGlCheckOnRequest});
      }
    }
    ImGui::End();
  }
  if (s.show_about) {
    ImGui::SetNextWindowPos(
        ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
        ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    if (ImGui::Begin("About TileScope", &s.show_about,
                     ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoDocking |
                         ImGuiWindowFlags_NoSavedSettings)) {
      ImGui::Text("TileScope %s (commit %s)", kVersion, kGitCommit);
      ImGui::TextDisabled("A microscope for CUDA matrix multiplication.");
      ImGui::Separator();
      ImGui::Text("backend: %s", s.backend_kind().c_str());
      ImGui::Text("device: %s", s.device_name().c_str());
      if (const std::string v = s.backend ? s.backend->version_info() : ""; !v.empty())
        ImGui::Text("%s", v.c_str());
      ImGui::Text("OpenGL: %s", s.gl_renderer.c_str());
      ImGui::Text("Dear ImGui %s, ImPlot %s", IMGUI_VERSION, IMPLOT_VERSION);
      ImGui::TextDisabled("Fonts: Roboto (Apache 2.0), Source Code Pro (SIL OFL 1.1)");
    }
    ImGui::End();
  }
}

}  // namespace ts::ui

// Kernel source: the person's file in TileScope's own editor (ImGuiColorTextEdit from the pinned imgui-bundle
// sources). Save (the button, or Ctrl+S in the editor) writes the file, which is then rebuilt and re-run, as
// a save from any other editor is; a compile error selects its line. Sources over kMaxEditorBytes are left to
// the person's own editor (TileScope still watches them).
#include <cstdio>

#include <TextEditor.h>
#include <imgui.h>

#include "ui/panels/panel.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

class KernelEditorPanel final : public Panel {
 public:
  KernelEditorPanel() {
    m_editor.SetLanguageDefinition(TextEditor::LanguageDefinitionId::Cpp);
    m_editor.SetShowWhitespacesEnabled(false);
    m_editor.SetTabSize(4);
  }
  const char* name() const override { return "Kernel source"; }
  int window_flags() const override {
    return ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  }

 protected:
  void draw_content(AppState& s, FrameReport& out) override {
    UserKernelUi& u = s.user;
    out.panels[name()].state = u.active ? (u.editable ? "editing" : "too large") : "empty";
    u.editor_focused = false;
    if (!u.active) {
      ImGui::TextDisabled("No kernel file open (File > Open kernel, or drop a .cu file on the window).");
      return;
    }
    if (!u.editable) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(
          palette().warn,
          "%s is larger than %zu KiB: edit it in your own editor; TileScope watches it and rebuilds on "
          "every save.",
          u.label.c_str(), kMaxEditorBytes / 1024);
      ImGui::PopTextWrapPos();
      return;
    }
    const TextEditor::PaletteId want =
        s.settings.view.theme == Theme::Light ? TextEditor::PaletteId::Light : TextEditor::PaletteId::Dark;
    if (m_editor.GetPalette() != want) m_editor.SetPalette(want);
    if (m_serial != u.editor_serial) {  // the controller loaded the file
      m_editor.SetText(u.editor_text);
      m_serial = u.editor_serial;
      m_clean_undo = m_editor.GetUndoIndex();
    }
    if (u.jump_to_line > 0) {
      const int line = u.jump_to_line - 1;
      u.jump_to_line = 0;
      if (line < m_editor.GetLineCount()) {
        m_editor.SetCursorPosition(line, 0);
        m_editor.SelectLine(line);
        m_editor.SetViewAtLine(line, TextEditor::SetViewAtLineMode::Centered);
      }
      ImGui::SetWindowFocus();
    }
    u.editor_dirty = m_editor.GetUndoIndex() != m_clean_undo;
    ImGui::BeginDisabled(!u.editor_dirty);
    const bool save_clicked = ImGui::Button("Save");
    ImGui::SameLine();
    const bool revert_clicked = ImGui::Button("Revert");
    ImGui::EndDisabled();
    ImGui::SameLine();
    int line = 0, col = 0;
    m_editor.GetCursorPosition(line, col);
    char where[64];
    std::snprintf(where, sizeof where, "line %d, column %d%s", line + 1, col + 1,
                  u.editor_dirty ? "  (modified)" : "");
    text_fit(
        u.label + (u.from_python ? " (Python: the kernel is the load_inline source)" : "") + "   " + where,
        &palette().muted);
    ImGui::PushFont(mono_font());
    const bool focused = m_editor.Render("##source", ImGui::IsWindowFocused(), ImVec2(-1, -1));
    ImGui::PopFont();
    u.editor_focused = focused;
    const bool ctrl_s = focused && ImGui::GetIO().KeyCtrl && ImGui::IsKeyPressed(ImGuiKey_S, false);
    if ((save_clicked || ctrl_s) && u.editor_dirty) {
      u.editor_buffer = m_editor.GetText();
      s.ask(rq::SaveKernel{});
      m_clean_undo = m_editor.GetUndoIndex();
    }
    if (revert_clicked) s.ask(rq::RevertKernel{});
  }

 private:
  TextEditor m_editor;
  uint64_t m_serial = ~0ull;
  int m_clean_undo = 0;
};

}  // namespace

std::unique_ptr<Panel> make_kernel_editor_panel() {
  return std::make_unique<KernelEditorPanel>();
}

}  // namespace ts::ui

#include "ui/shortcuts.hpp"

#include <imgui.h>

namespace ts::ui {

namespace {
struct Entry {
  const char* label;
  const char* name;
  ImGuiKeyChord primary, secondary;  // 0: none
};
const Entry kTable[int(Action::Count)] = {
    {"Space / F5", "Run the problem", ImGuiKey_Space, ImGuiKey_F5},
    {"Ctrl+R", "Repeat: keep re-running the problem", ImGuiMod_Ctrl | ImGuiKey_R, 0},
    {"Ctrl+O", "Open A and B from .npy files", ImGuiMod_Ctrl | ImGuiKey_O, 0},
    {"Ctrl+S", "Save C as a .npy file", ImGuiMod_Ctrl | ImGuiKey_S, 0},
    {"F12", "Save a screenshot of the window", ImGuiKey_F12, 0},
    {"Ctrl+Shift+L", "Reset the layout", ImGuiMod_Ctrl | ImGuiMod_Shift | ImGuiKey_L, 0},
    {"Ctrl+=", "Larger text", ImGuiMod_Ctrl | ImGuiKey_Equal, 0},
    {"Ctrl+-", "Smaller text", ImGuiMod_Ctrl | ImGuiKey_Minus, 0},
    {"F1", "Keyboard shortcuts", ImGuiKey_F1, 0},
    {"Ctrl+Q", "Quit", ImGuiMod_Ctrl | ImGuiKey_Q, 0},
};

bool chord_pressed(ImGuiKeyChord c) {
  if (!c) return false;
  const ImGuiIO& io = ImGui::GetIO();
  const ImGuiKey key = ImGuiKey(c & ~ImGuiMod_Mask_);
  const bool mods = ((c & ImGuiMod_Ctrl) != 0) == io.KeyCtrl && ((c & ImGuiMod_Shift) != 0) == io.KeyShift &&
                    ((c & ImGuiMod_Alt) != 0) == io.KeyAlt;
  // A key without Ctrl (Space) belongs to the text field that is being typed into.
  if (!(c & ImGuiMod_Ctrl) && io.WantTextInput) return false;
  return mods && ImGui::IsKeyPressed(key, false);
}
}  // namespace

const char* shortcut_label(Action a) {
  return kTable[int(a)].label;
}
const char* action_name(Action a) {
  return kTable[int(a)].name;
}
bool shortcut_pressed(Action a) {
  const Entry& e = kTable[int(a)];
  return chord_pressed(e.primary) || chord_pressed(e.secondary);
}

}  // namespace ts::ui

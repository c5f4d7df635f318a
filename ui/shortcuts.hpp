#pragma once
// [SECTION] Every keyboard shortcut, in one table: the frame loop asks which were pressed, menus and tooltips
// print their labels, and Help > Keyboard shortcuts lists them all, so the three never disagree.
namespace ts::ui {

enum class Action {
  Run,          // Space or F5 (Space only when no text field has the keyboard)
  Repeat,       // Ctrl+R
  OpenInputs,   // Ctrl+O
  SaveC,        // Ctrl+S
  Screenshot,   // F12
  ResetLayout,  // Ctrl+Shift+L
  FontBigger,   // Ctrl+=
  FontSmaller,  // Ctrl+-
  Shortcuts,    // F1
  Quit,         // Ctrl+Q
  Count
};

const char* shortcut_label(Action a);  // e.g. "Space / F5"
const char* action_name(Action a);     // e.g. "Run the problem"
// True on the frame the shortcut is pressed (key repeat off), routed so that typing in a text field never
// triggers a single-key shortcut.
bool shortcut_pressed(Action a);

}  // namespace ts::ui

#pragma once
// [SECTION] Open and save dialogs, drawn inside the window (ImFileDialog from the pinned imgui-bundle
// sources), with TileScope's rules on top: what a person picks is handed back for checking before anything
// uses it, and saving over an existing file asks first (a modal with the file's name), never silently.
#include <optional>
#include <string>

namespace ts::ui {

class FileDialogs {
 public:
  FileDialogs();  // GL context current: the dialog's icons are GL textures

  void ask_open_inputs();   // A, then B (.npy)
  void ask_save_c();        // one .npy path; asks before replacing a file
  void ask_open_session();  // a saved session (.json) to open beside the current one
  void ask_open_kernel();   // a .cu (or KernelBench .py) file
  bool busy() const { return m_step != Step::Idle; }

  struct Opened {
    std::string a, b;
  };
  // Draws the dialog in progress, if any; returns a finished choice on the frame it is made.
  std::optional<Opened> draw_open();
  struct SaveTo {
    std::string path;
    bool replace = false;  // the file existed and the person confirmed replacing it
  };
  std::optional<SaveTo> draw_save();
  std::optional<std::string> draw_open_session();
  std::optional<std::string> draw_open_kernel();

 private:
  enum class Step { Idle, PickA, PickB, PickSave, ConfirmReplace, PickSession, PickKernel };
  Step m_step = Step::Idle;
  std::string m_a, m_save;
};

}  // namespace ts::ui

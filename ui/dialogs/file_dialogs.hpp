#pragma once
// [SECTION] Open and save dialogs, with TileScope's rules on top: what a person picks is handed back for
// checking before anything uses it, and saving over an existing file asks first (a modal with the file's
// name; only a regular file can be replaced), never silently.
// Which dialog: the desktop's own (native_file_dialog.hpp: zenity or kdialog, where installed and a display
// is there) while Settings::file_dialog is Desktop (File > Desktop file dialog), else, and whenever the
// desktop's cannot be shown, the one drawn in the window (file_browser.hpp). Either way the frame loop keeps
// drawing.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "ui/app_state.hpp"
#include "ui/frame_report.hpp"
#include "ui/dialogs/file_browser.hpp"
#include "ui/dialogs/native_file_dialog.hpp"

namespace ts::ui {

class FileDialogs {
 public:
  void ask_open_inputs(AppState& s);   // A, then B (.npy)
  void ask_save_c(AppState& s);        // one .npy path; asks before replacing a file
  void ask_open_session(AppState& s);  // a saved session (.json) to open beside the current one
  void ask_open_kernel(AppState& s);   // a .cu (or KernelBench .py) file
  bool busy() const { return m_step != Step::Idle; }

  // Once per frame, between NewFrame() and Render(): draws the window's dialog or polls the desktop's (never
  // waits for it), and the "Replace file?" question; fills `out`. A finished choice is then handed
  // over once by the take_ call of its kind.
  void frame(AppState& s, FileDialogReport& out);

  struct Opened {
    std::string a, b;
  };
  std::optional<Opened> take_open() { return std::exchange(m_opened, std::nullopt); }
  struct SaveTo {
    std::string path;
    bool replace = false;  // the file existed and the person confirmed replacing it
  };
  std::optional<SaveTo> take_save() { return std::exchange(m_saved, std::nullopt); }
  std::optional<std::string> take_open_session() { return std::exchange(m_session, std::nullopt); }
  std::optional<std::string> take_open_kernel() { return std::exchange(m_kernel, std::nullopt); }

 private:
  enum class Step { Idle, PickA, PickB, PickSave, ConfirmReplace, PickSession, PickKernel };
  struct Spec;  // key, title, open or save, file types
  static Spec spec_of(Step step);
  void show(AppState& s, Step step, bool in_window = false);
  void chosen(AppState& s, const std::string& path);
  void confirm_replace();

  Step m_step = Step::Idle;
  FileBrowser m_browser;
  NativeFileDialog m_native;
  bool m_native_open = false;
  bool m_in_window = false;  // this dialog is the window's own although the desktop's was asked for
  bool m_said_no_desktop = false;
  uint64_t m_frames_while_desktop = 0;
  std::filesystem::path m_last_folder;  // where the desktop's dialog starts (the window's keeps its own)
  std::string m_a, m_save;
  std::optional<Opened> m_opened;
  std::optional<SaveTo> m_saved;
  std::optional<std::string> m_session, m_kernel;
};

}  // namespace ts::ui

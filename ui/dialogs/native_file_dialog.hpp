#pragma once
// [SECTION] The desktop's own open and save dialog: zenity (GNOME and most desktops; matedialog and qarma
// too) or kdialog (KDE), run as a child process by portable-file-dialogs. The child runs from a thread of
// its own: the frame loop only polls, so the window keeps drawing (and its runs keep going) while the dialog
// is open. Used where a display is there and one of those programs is on PATH; file_dialogs.cpp falls back
// to the dialog drawn in the window otherwise, and when the program fails to show its dialog.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ts::ui {

// The program portable-file-dialogs would run ("zenity", "kdialog", ...), or "" with the reason in *why: no
// display ($DISPLAY, $WAYLAND_DISPLAY), or none of them on $PATH. Looks at the environment only (no process).
std::string desktop_dialog_helper(std::string* why = nullptr);

struct NativeDialogRequest {
  bool save = false;
  std::string title;
  std::string start;  // a folder, or a file name in one
  // Label and patterns, in pairs: {"NumPy arrays (*.npy)", "*.npy", "All files", "*"}.
  std::vector<std::string> filters;
};

class NativeFileDialog {
 public:
  NativeFileDialog() = default;
  ~NativeFileDialog();  // a dialog still open is closed (its process killed), then the thread joined
  NativeFileDialog(const NativeFileDialog&) = delete;
  NativeFileDialog& operator=(const NativeFileDialog&) = delete;

  // Starts the helper on the thread (one dialog at a time).
  void start(const NativeDialogRequest& req, const std::string& helper);
  bool running() const { return m_thread.joinable() && !m_done->load(); }
  const std::string& helper() const { return m_helper; }

  struct Answer {
    std::string path;     // empty: cancelled
    bool failed = false;  // the helper did not show a dialog (exit status other than 0 or 1)
    int exit_code = 0;
  };
  // The answer on the first call after the dialog closed; nullopt while it is open (never blocks).
  std::optional<Answer> poll();
  void cancel();  // closes the dialog, without an answer

 private:
  struct Shared;
  std::shared_ptr<Shared> m_shared;
  std::shared_ptr<std::atomic<bool>> m_done = std::make_shared<std::atomic<bool>>(true);
  std::thread m_thread;
  std::string m_helper;
};

}  // namespace ts::ui

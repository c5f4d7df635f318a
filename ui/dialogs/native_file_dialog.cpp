#include <portable_file_dialogs.h>

#include "ui/dialogs/native_file_dialog.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <sstream>

namespace ts::ui {

namespace {

bool executable_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) dir = ".";
    if (::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

bool set(const char* var) {
  const char* v = std::getenv(var);
  return v && *v;
}

// portable-file-dialogs' dialog with the helper's exit status: 0 chosen, 1 cancelled, anything else means it
// could not show its dialog (no display it can open, a crash). The library keeps the status to itself; its
// executor is a protected member that a subclass may read.
template <class Dialog>
struct WithStatus : Dialog {
  using Dialog::Dialog;
  int status() {
    int code = -1;
    this->m_async->result(&code);
    return code;
  }
};

}  // namespace

std::string desktop_dialog_helper(std::string* why) {
  if (!set("DISPLAY") && !set("WAYLAND_DISPLAY")) {
    if (why) *why = "no display ($DISPLAY and $WAYLAND_DISPLAY are not set)";
    return "";
  }
  // The order portable-file-dialogs prefers (it takes kdialog over zenity on a KDE session).
  const bool kde = set("XDG_SESSION_DESKTOP") && std::string(std::getenv("XDG_SESSION_DESKTOP")) == "KDE";
  if (kde && executable_on_path("kdialog")) return "kdialog";
  for (const char* h : {"zenity", "matedialog", "qarma", "kdialog"})
    if (executable_on_path(h)) return h;
  if (why) *why = "neither zenity nor kdialog is installed";
  return "";
}

struct NativeFileDialog::Shared {
  std::atomic<bool> cancel{false};
  std::mutex mutex;
  std::optional<Answer> answer;
  bool taken = false;
};

NativeFileDialog::~NativeFileDialog() {
  cancel();
}

void NativeFileDialog::cancel() {
  if (m_shared) m_shared->cancel = true;
  if (m_thread.joinable()) m_thread.join();  // the thread kills the helper within one poll (20 ms)
  m_shared.reset();
  *m_done = true;
}

void NativeFileDialog::start(const NativeDialogRequest& req, const std::string& helper) {
  cancel();
  m_helper = helper;
  m_shared = std::make_shared<Shared>();
  m_done = std::make_shared<std::atomic<bool>>(false);
  auto shared = m_shared;
  auto done = m_done;
  m_thread = std::thread([shared, done, req] {
    Answer a;
    try {
      pfd::settings::rescan();  // $PATH may have changed since the last dialog
      if (!pfd::settings::available()) {
        a.failed = true;
      } else if (req.save) {
        // TileScope asks before replacing a file itself (and replaces regular files only): the helper must
        // not.
        WithStatus<pfd::save_file> d(req.title, req.start, req.filters, pfd::opt::force_overwrite);
        while (!d.ready(20))
          if (shared->cancel) {
            d.kill();
            break;
          }
        if (!shared->cancel) {
          a.path = d.result();
          a.exit_code = d.status();
        }
      } else {
        WithStatus<pfd::open_file> d(req.title, req.start, req.filters, pfd::opt::none);
        while (!d.ready(20))
          if (shared->cancel) {
            d.kill();
            break;
          }
        if (!shared->cancel) {
          const std::vector<std::string> paths = d.result();
          if (!paths.empty()) a.path = paths.front();
          a.exit_code = d.status();
        }
      }
      if (a.exit_code != 0 && a.exit_code != 1) a.failed = true;
      if (a.exit_code != 0) a.path.clear();
    } catch (const std::exception&) {
      a.failed = true;
    }
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      shared->answer = a;
    }
    *done = true;
  });
}

std::optional<NativeFileDialog::Answer> NativeFileDialog::poll() {
  if (!m_shared || !*m_done) return std::nullopt;
  std::optional<Answer> a;
  {
    std::lock_guard<std::mutex> lock(m_shared->mutex);
    if (m_shared->taken) return std::nullopt;
    m_shared->taken = true;
    a = m_shared->answer;
  }
  if (m_thread.joinable()) m_thread.join();  // done: returns at once
  return a;
}

}  // namespace ts::ui

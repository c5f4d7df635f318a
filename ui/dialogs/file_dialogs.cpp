#include "ui/dialogs/file_dialogs.hpp"

#include <system_error>
#include <utility>

#include <imgui.h>
#include <nlohmann/json.hpp>

namespace ts::ui {

namespace fs = std::filesystem;

namespace {

const std::vector<FileType>& npy_types() {
  static const std::vector<FileType> t{{"NumPy arrays (*.npy)", {".npy"}}, {"All files", {}}};
  return t;
}

}  // namespace

struct FileDialogs::Spec {
  const char* key;
  const char* title;
  bool save;
  std::vector<FileType> types;
  const char* name;  // suggested for a save
};

FileDialogs::Spec FileDialogs::spec_of(Step step) {
  switch (step) {
    case Step::PickA:
      return {"ts-open-a", "Open A (M x K) from a .npy file", false, npy_types(), ""};
    case Step::PickB:
      return {"ts-open-b", "Open B (K x N) from a .npy file", false, npy_types(), ""};
    case Step::PickSave:
    case Step::ConfirmReplace:
      return {"ts-save-c", "Save C (M x N) as a .npy file", true, npy_types(), "C.npy"};
    case Step::PickSession:
      return {"ts-open-session",
              "Open a session to overlay",
              false,
              {{"TileScope sessions (*.json)", {".json"}}, {"All files", {}}},
              ""};
    default:
      return {"ts-open-kernel",
              "Open your kernel (.cu, or a KernelBench answer .py)",
              false,
              {{"Kernels (*.cu, *.cuh, *.py)", {".cu", ".cuh", ".py"}},
               {"CUDA sources (*.cu, *.cuh)", {".cu", ".cuh"}},
               {"KernelBench answers (*.py)", {".py"}},
               {"All files", {}}},
              ""};
  }
}

void FileDialogs::ask_open_inputs(AppState& s) {
  if (!busy()) show(s, Step::PickA);
}
void FileDialogs::ask_save_c(AppState& s) {
  if (!busy()) show(s, Step::PickSave);
}
void FileDialogs::ask_open_session(AppState& s) {
  if (!busy()) show(s, Step::PickSession);
}
void FileDialogs::ask_open_kernel(AppState& s) {
  if (!busy()) show(s, Step::PickKernel);
}

void FileDialogs::show(AppState& s, Step step, bool in_window) {
  m_step = step;
  m_in_window = in_window;
  const Spec d = spec_of(step);
  std::string why, helper;
  if (!in_window && s.settings.file_dialog == FileDialogChoice::Desktop) {
    helper = desktop_dialog_helper(&why);
    if (helper.empty() && !m_said_no_desktop) {
      s.say(Severity::Info, "no desktop file dialog here (" + why + "): TileScope shows its own");
      m_said_no_desktop = true;
    }
  }
  if (helper.empty()) {
    m_browser.open(d.key, d.title, d.save ? FileBrowser::Mode::Save : FileBrowser::Mode::Open, d.types,
                   d.name);
    return;
  }
  NativeDialogRequest r;
  r.save = d.save;
  r.title = d.title;
  std::error_code ec;
  if (m_last_folder.empty()) m_last_folder = fs::current_path(ec);
  r.start = d.save ? (m_last_folder / d.name).string() : m_last_folder.string();
  for (const FileType& t : d.types) {
    std::string patterns;
    for (const std::string& e : t.extensions) patterns += (patterns.empty() ? "*" : " *") + e;
    r.filters.push_back(t.label);
    r.filters.push_back(patterns.empty() ? "*" : patterns);
  }
  m_native.start(r, helper);
  m_native_open = true;
}

void FileDialogs::chosen(AppState& s, const std::string& path) {
  m_last_folder = fs::path(path).parent_path();
  switch (m_step) {
    case Step::PickA:
      m_a = path;
      show(s, Step::PickB, m_in_window);  // B in the same kind of dialog as A
      return;
    case Step::PickB:
      m_opened = Opened{m_a, path};
      break;
    case Step::PickSave: {
      fs::path p = path;
      if (p.extension() != ".npy") p += ".npy";
      m_save = p.string();
      std::error_code ec;
      if (!fs::exists(fs::symlink_status(m_save, ec))) {
        m_saved = SaveTo{m_save, false};
        break;
      }
      m_step = Step::ConfirmReplace;
      ImGui::OpenPopup("Replace file?");
      return;
    }
    case Step::PickSession:
      m_session = path;
      break;
    case Step::PickKernel:
      m_kernel = path;
      break;
    default:
      break;
  }
  m_step = Step::Idle;
}

void FileDialogs::frame(AppState& s, FileDialogReport& out) {
  FileDialogReport rep;
  if (m_native_open) {
    if (auto a = m_native.poll()) {
      m_native_open = false;
      if (a->failed) {
        s.say(Severity::Warning,
              m_native.helper() + " could not show its file dialog" +
                  (a->exit_code ? " (exit status " + std::to_string(a->exit_code) + ")" : "") +
                  ": TileScope shows its own");
        show(s, m_step, true);
      } else if (a->path.empty()) {
        m_step = Step::Idle;  // cancelled
      } else {
        chosen(s, a->path);
      }
    }
  }
  // The desktop's dialog is a window of its own: this one keeps drawing and says where to look. Its Cancel
  // closes the desktop's dialog too (when it went behind another window, say).
  const char* const waiting = "###ts-desktop-dialog";
  if (m_native_open || ImGui::IsPopupOpen(waiting)) {
    const Spec d = spec_of(m_step);
    if (m_native_open) {
      ++m_frames_while_desktop;
      rep.open = rep.desktop = true;
      rep.helper = m_native.helper();
      rep.title = d.title;
      if (!ImGui::IsPopupOpen(waiting)) ImGui::OpenPopup(waiting);
    }
    const std::string win = std::string(d.title) + waiting;
    if (ImGui::BeginPopupModal(win.c_str(), nullptr,
                               ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings)) {
      if (!m_native_open) {
        ImGui::CloseCurrentPopup();  // answered: the window's input is its own again
      } else {
        ImGui::Text("Choose the file in the %s window.", m_native.helper().c_str());
        ImGui::TextDisabled("File > Desktop file dialog switches to the one drawn in this window.");
        if (ImGui::Button("Cancel")) {
          m_native.cancel();
          m_native_open = false;
          m_step = Step::Idle;
          ImGui::CloseCurrentPopup();
        }
      }
      ImGui::EndPopup();
    }
  }
  if (m_browser.is_open()) {
    fs::path p;
    switch (m_browser.draw(&p, &rep)) {
      case FileBrowser::Outcome::Chosen:
        chosen(s, p.string());
        break;
      case FileBrowser::Outcome::Cancelled:
        m_step = Step::Idle;
        break;
      case FileBrowser::Outcome::Showing:
        break;
    }
  }
  if (m_step == Step::ConfirmReplace) confirm_replace();
  rep.frames_while_desktop = m_frames_while_desktop;
  out = std::move(rep);
}

void FileDialogs::confirm_replace() {
  if (!ImGui::IsPopupOpen("Replace file?")) ImGui::OpenPopup("Replace file?");
  if (ImGui::BeginPopupModal("Replace file?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    std::error_code ec;
    const bool regular = fs::is_regular_file(fs::symlink_status(m_save, ec));
    ImGui::Text("%s already exists.", m_save.c_str());
    if (regular) {
      ImGui::TextUnformatted("Replace it with C?");
      if (ImGui::Button("Replace")) {
        m_saved = SaveTo{m_save, true};
        m_step = Step::Idle;
        ImGui::CloseCurrentPopup();
      }
      ImGui::SameLine();
    } else {
      ImGui::TextUnformatted("It is not a regular file, so TileScope will not replace it.");
    }
    if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGuiKey_Escape)) {
      m_step = Step::Idle;
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }
}

}  // namespace ts::ui

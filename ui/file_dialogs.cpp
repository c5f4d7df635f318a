#include "file_dialogs.hpp"

#include <filesystem>
#include <system_error>

#include <ImFileDialog.h>
#include <imgui.h>

#include "gl.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

namespace {
const char* const kNpyFilter = "NumPy arrays (*.npy){.npy},All files (*.*){.*}";
const char* const kSessionFilter = "TileScope sessions (*.json){.json},All files (*.*){.*}";
const char* const kKernelFilter =
    "CUDA sources (*.cu, *.cuh){.cu,.cuh},KernelBench answers (*.py){.py},All files (*.*){.*}";
}  // namespace

FileDialogs::FileDialogs() {
  ifd::FileDialog& d = ifd::FileDialog::Instance();
  d.CreateTexture = [](uint8_t* data, int w, int h, char fmt) -> ImTextureID {
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, fmt == 0 ? GL_BGRA : GL_RGBA, GL_UNSIGNED_BYTE, data);
    glBindTexture(GL_TEXTURE_2D, 0);
    return ImTextureID(intptr_t(tex));
  };
  d.DeleteTexture = [](ImTextureID id) {
    GLuint tex = GLuint(intptr_t(id));
    if (tex) glDeleteTextures(1, &tex);
  };
}

void FileDialogs::ask_open_inputs() {
  if (busy()) return;
  m_step = Step::PickA;
  ifd::FileDialog::Instance().Open("ts-open-a", "Open A (M x K) from a .npy file", kNpyFilter);
}

void FileDialogs::ask_save_c() {
  if (busy()) return;
  m_step = Step::PickSave;
  ifd::FileDialog::Instance().Save("ts-save-c", "Save C (M x N) as a .npy file", kNpyFilter);
}

void FileDialogs::ask_open_session() {
  if (busy()) return;
  m_step = Step::PickSession;
  ifd::FileDialog::Instance().Open("ts-open-session", "Open a session to overlay", kSessionFilter);
}

std::optional<std::string> FileDialogs::draw_open_session() {
  ifd::FileDialog& d = ifd::FileDialog::Instance();
  if (m_step != Step::PickSession || !d.IsDone("ts-open-session")) return std::nullopt;
  const bool picked = d.HasResult();
  std::string path = picked ? d.GetResult().string() : "";
  d.Close();
  m_step = Step::Idle;
  if (picked) return path;
  return std::nullopt;
}

void FileDialogs::ask_open_kernel() {
  if (busy()) return;
  m_step = Step::PickKernel;
  ifd::FileDialog::Instance().Open("ts-open-kernel", "Open your kernel (.cu, or a KernelBench answer .py)",
                                   kKernelFilter);
}

std::optional<std::string> FileDialogs::draw_open_kernel() {
  ifd::FileDialog& d = ifd::FileDialog::Instance();
  if (m_step != Step::PickKernel || !d.IsDone("ts-open-kernel")) return std::nullopt;
  const bool picked = d.HasResult();
  std::string path = picked ? d.GetResult().string() : "";
  d.Close();
  m_step = Step::Idle;
  if (picked) return path;
  return std::nullopt;
}

std::optional<FileDialogs::Opened> FileDialogs::draw_open() {
  ifd::FileDialog& d = ifd::FileDialog::Instance();
  if (m_step == Step::PickA && d.IsDone("ts-open-a")) {
    const bool picked = d.HasResult();
    if (picked) m_a = d.GetResult().string();
    d.Close();
    m_step = picked ? Step::PickB : Step::Idle;
    if (picked) d.Open("ts-open-b", "Open B (K x N) from a .npy file", kNpyFilter);
  } else if (m_step == Step::PickB && d.IsDone("ts-open-b")) {
    const bool picked = d.HasResult();
    std::string b = picked ? d.GetResult().string() : "";
    d.Close();
    m_step = Step::Idle;
    if (picked) return Opened{m_a, b};
  }
  return std::nullopt;
}

std::optional<FileDialogs::SaveTo> FileDialogs::draw_save() {
  ifd::FileDialog& d = ifd::FileDialog::Instance();
  if (m_step == Step::PickSave && d.IsDone("ts-save-c")) {
    const bool picked = d.HasResult();
    if (picked) {
      fs::path p = d.GetResult();
      if (p.extension() != ".npy") p += ".npy";
      m_save = p.string();
    }
    d.Close();
    if (!picked) {
      m_step = Step::Idle;
      return std::nullopt;
    }
    std::error_code ec;
    if (!fs::exists(m_save, ec)) {
      m_step = Step::Idle;
      return SaveTo{m_save, false};
    }
    m_step = Step::ConfirmReplace;
    ImGui::OpenPopup("Replace file?");
  }
  if (m_step == Step::ConfirmReplace) {
    if (!ImGui::IsPopupOpen("Replace file?")) ImGui::OpenPopup("Replace file?");
    std::optional<SaveTo> out;
    if (ImGui::BeginPopupModal("Replace file?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
      std::error_code ec;
      const bool regular = fs::is_regular_file(m_save, ec);
      ImGui::Text("%s already exists.", m_save.c_str());
      if (regular) {
        ImGui::TextUnformatted("Replace it with C?");
        if (ImGui::Button("Replace")) {
          out = SaveTo{m_save, true};
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
    return out;
  }
  return std::nullopt;
}

}  // namespace ts::ui

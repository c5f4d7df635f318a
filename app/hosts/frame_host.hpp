#pragma once
// [SECTION] What every host of the App's frame shares (the window, the offscreen snapshot and benchmarks):
// Dear ImGui + ImPlot contexts and backends (ImGuiSession, with the layout file read and written through the
// program's writer), starting, drawing and rendering a frame, and the exports and screenshots a frame was
// asked for. Internal to app/hosts.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <implot.h>

#include "ui/app.hpp"
#include "core/io/files.hpp"
#include "gfx/gl.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

// [SECTION] Dear ImGui + ImPlot contexts and backends, torn down in reverse order.
class ImGuiSession {
 public:
  // window == nullptr: no platform backend (headless EGL): the caller sets the display size and time step.
  // ini_file == nullptr: no saved layout (snapshots are reproducible).
  ImGuiSession(GLFWwindow* window, const char* ini_file) : m_glfw(window != nullptr) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImPlot::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    // ImGui never touches imgui.ini itself (its fopen writes through a link, in place): the layout is read
    // and written here, as every other file (load_ini, save_ini).
    io.IniFilename = nullptr;
    if (ini_file) m_ini = ini_file;
    // Docking on; keyboard navigation off, so Space runs the problem instead of pressing a focused button
    // (Tab still moves between text fields).
    io.ConfigFlags |= ImGuiConfigFlags_DockingEnable;
    io.ConfigWindowsMoveFromTitleBarOnly = true;
    load_fonts();
    if (m_glfw) ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
  }
  ~ImGuiSession() {
    ImGui_ImplOpenGL3_Shutdown();
    if (m_glfw) ImGui_ImplGlfw_Shutdown();
    ImPlot::DestroyContext();
    ImGui::DestroyContext();
  }
  ImGuiSession(const ImGuiSession&) = delete;
  ImGuiSession& operator=(const ImGuiSession&) = delete;
  bool glfw() const { return m_glfw; }

  // The saved layout, before the first frame: a regular file of at most 1 MiB (InputFile: a FIFO is refused,
  // never waited on). Returns why it was not read ("" when read, or when there is none yet); a file not read
  // is kept as it is (the layout is then not saved either).
  std::string load_ini() {
    if (m_ini.empty()) return "";
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(m_ini, ec))) return "";
    std::string why;
    try {
      const InputFile f(m_ini);
      std::string text(size_t(std::min<uint64_t>(f.size(), 1u << 20)), '\0');
      if (f.size() > (1u << 20))
        why = m_ini + " is larger than 1 MiB";
      else if (!f.read_at(0, text.data(), text.size()))
        why = m_ini + " changed while it was read";
      if (why.empty()) {
        ImGui::LoadIniSettingsFromMemory(text.data(), text.size());
        m_saved = text;
        return "";
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
    m_ini.clear();
    return why + ": the window layout is neither read nor saved (the file is kept)";
  }
  // Writes the layout when ImGui asks (its settings changed a few seconds ago) or `now`, and it changed: an
  // exclusive temporary file, fsync, rename; a link, FIFO or anything but a regular file there is refused at
  // every save (never written through). Returns why it was not written ("" when written or unchanged).
  std::string save_ini(bool now) {
    ImGuiIO& io = ImGui::GetIO();
    if (m_ini.empty() || !(io.WantSaveIniSettings || now)) return "";
    io.WantSaveIniSettings = false;
    size_t n = 0;
    const char* data = ImGui::SaveIniSettingsToMemory(&n);
    std::string text(data, n);
    if (text == m_saved) return "";
    try {
      write_file(m_ini, text, Replace::RegularFile);
      m_saved = std::move(text);
    } catch (const std::exception& e) {
      return std::string("the window layout was not saved: ") + e.what();
    }
    return "";
  }

  // The renderer's GL objects made anew on the current context (the font atlas is uploaded again at the next
  // frame): after a failed GL self-check.
  void rebuild_renderer() const {
    ImGui_ImplOpenGL3_DestroyDeviceObjects();
    ImGui_ImplOpenGL3_CreateDeviceObjects();
  }
  // Before the window and its context go (after a GL reset), and with the new one current.
  void detach_window() {
    ImGui_ImplOpenGL3_Shutdown();
    if (m_glfw) ImGui_ImplGlfw_Shutdown();
  }
  void attach_window(GLFWwindow* window) {
    if (m_glfw) ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
  }

 private:
  bool m_glfw;
  std::string m_ini;
  std::string m_saved;  // the layout as last read or written
};

// [SECTION] One frame's steps, shared by the window and the offscreen hosts.
// Starts a frame: the platform backend's (glfw) or the offscreen framebuffer's size and time step.
void new_frame(bool glfw, ImVec2 offscreen_size = ImVec2(0, 0), float dt = 1.0f / 60);
// Draws ImGui's draw data into the current framebuffer.
void draw(ImDrawData* data, int fb_w, int fb_h);
// Ends the frame and draws it (`rasterize` false: built and submitted, not rasterised: tests that read no
// pixels).
void render(int fb_w, int fb_h, const std::function<bool()>& rasterize = {});
// The frame drawn again without tooltips into `fbo` (exports show the panel, not the hover).
bool draw_without_tooltips(int fb_w, int fb_h, GLuint fbo);
// Whether the last read-back of `what` can be trusted (the GL self-check's verdict), said when not.
bool read_back_right(AppState& s, const std::string& what);
// A panel's export asked for this frame: its PNG (read back, cropped to where `drawn` says the panel is) and
// CSV written; true when one was.
bool save_panel_export(AppState& s, const FrameReport& drawn, int fb_w, int fb_h, GLuint read_fbo = 0);
// A screenshot asked for this frame (File > Save screenshot), read back and written.
void save_screenshot(AppState& s, int fb_w, int fb_h);

}  // namespace ts::ui

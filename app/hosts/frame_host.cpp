#include "hosts/frame_host.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <unistd.h>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <implot.h>
#include <nlohmann/json.hpp>

#include "ui/app.hpp"
#include "core/engine/measure.hpp"
#include "core/io/csv.hpp"
#include "gfx/egl_context.hpp"
#include "gfx/gl.hpp"
#include "gfx/gl_check.hpp"
#include "ui/gl_health.hpp"
#include "core/io/files.hpp"
#include "gfx/heatmap_set.hpp"
#include "core/io/session.hpp"
#include "core/io/settings.hpp"
#include "gfx/texture.hpp"
#include "ui/theme.hpp"
#include "gfx/window.hpp"
#include "core/user_kernel/kernel_workshop.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

void new_frame(bool glfw, ImVec2 offscreen_size, float dt) {
  ImGui_ImplOpenGL3_NewFrame();
  if (glfw) ImGui_ImplGlfw_NewFrame();
  if (offscreen_size.x > 0) {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = offscreen_size;
    io.DisplayFramebufferScale = ImVec2(1, 1);
    io.DeltaTime = dt;
  }
  ImGui::NewFrame();
}

void draw(ImDrawData* data, int fb_w, int fb_h) {
  glViewport(0, 0, fb_w, fb_h);
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(data);
}

// rasterize (optional), asked after ImGui::Render() (the Test Engine runs a test's step inside it, and the
// step may ask for a screenshot): false submits the frame under GL_RASTERIZER_DISCARD, every call made and no
// pixel drawn.
void render(int fb_w, int fb_h, const std::function<bool()>& rasterize) {
  ImGui::Render();
  const bool discard = rasterize && !rasterize();
  if (discard) glEnable(GL_RASTERIZER_DISCARD);
  draw(ImGui::GetDrawData(), fb_w, fb_h);
  if (discard) glDisable(GL_RASTERIZER_DISCARD);
}

// Draws the frame just rendered once more into `fbo` (0: the window's back buffer) without its tooltips,
// which float over the panels and are not part of them (a panel export pressed with the mouse has its
// button's tooltip on screen). False, drawing nothing, when the frame has no tooltip.
bool draw_without_tooltips(int fb_w, int fb_h, GLuint fbo) {
  ImDrawData* all = ImGui::GetDrawData();
  std::vector<const ImDrawList*> tips;
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    const ImGuiWindow* root = w->RootWindow ? w->RootWindow : w;
    if (w->Active && (root->Flags & ImGuiWindowFlags_Tooltip)) tips.push_back(w->DrawList);
  }
  if (!all || tips.empty()) return false;
  ImDrawData without = *all;
  without.CmdLists.resize(0);
  without.TotalVtxCount = without.TotalIdxCount = 0;
  for (ImDrawList* l : all->CmdLists)
    if (std::find(tips.begin(), tips.end(), l) == tips.end()) {
      without.CmdLists.push_back(l);
      without.TotalVtxCount += l->VtxBuffer.Size;
      without.TotalIdxCount += l->IdxBuffer.Size;
    }
  without.CmdListsCount = without.CmdLists.Size;
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  draw(&without, fb_w, fb_h);
  return true;
}

// A picture read back from the window is written only when OpenGL passes its self-check right after: a
// context lost while the frame was drawn leaves a black or garbled picture behind (seen on an H100 after a
// fault). When it fails, the App's check runs next frame (and makes the context anew where it can).
bool read_back_right(AppState& s, const std::string& what) {
  const GlSelfCheck r = run_gl_self_check(nullptr, nullptr);
  if (r.ok) return true;
  s.say(Severity::Error,
        what + " not written: OpenGL failed its self-check right after the picture was read back (" +
            r.verdict + ")");
  s.ask(rq::CheckGl{"after " + what + " was read back wrong"});
  return false;
}

// A panel's export: the window's rectangle cropped from the frame just rendered (PNG) and its data (CSV),
// under one timestamped stem that does not exist yet. read_fbo: the framebuffer the frame was rendered into
// (0: the window's back buffer). False when the export failed (the status message says why).
bool save_panel_export(AppState& s, const FrameReport& drawn, int fb_w, int fb_h, GLuint read_fbo) {
  const rq::ExportPanel req = *s.asked.take<rq::ExportPanel>();
  if (!s.pictures_trusted()) {
    s.say(Severity::Error, "export of " + req.panel +
                               " not written: OpenGL failed its self-check, so its picture would be wrong (" +
                               s.gl.verdict + ")");
    return false;
  }
  try {
    auto it = drawn.panels.find(req.panel);
    if (it == drawn.panels.end() || !it->second.visible)
      throw std::runtime_error("panel " + req.panel + " is not on screen");
    const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
    const Rect r = it->second.rect;
    const int x0 = std::clamp(int(r.x * scale.x), 0, fb_w), y0 = std::clamp(int(r.y * scale.y), 0, fb_h);
    const int x1 = std::clamp(int((r.x + r.w) * scale.x), 0, fb_w),
              y1 = std::clamp(int((r.y + r.h) * scale.y), 0, fb_h);
    if (x1 <= x0 || y1 <= y0) throw std::runtime_error("panel " + req.panel + " has no visible area");
    fs::path dir = s.settings.export_dir.empty() ? default_export_dir() : fs::path(s.settings.export_dir);
    fs::create_directories(dir);
    // A name of its own kind (Export figure writes tilescope-<plot>-<date>), the pair taken exclusively.
    NewNames names(dir, "tilescope-panel-" + req.stem, {"png", "csv"});
    const fs::path &png = names[0], &csv = names[1];
    // The panel as drawn, without the tooltips over it; then the whole frame again, as the window shows it.
    const bool redrawn = draw_without_tooltips(fb_w, fb_h, read_fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, read_fbo);
    glReadBuffer(read_fbo ? GL_COLOR_ATTACHMENT0 : GL_BACK);
    const std::vector<uint8_t> pixels = gfx::read_pixels_rgba(x0, fb_h - y1, x1 - x0, y1 - y0);
    if (redrawn) draw(ImGui::GetDrawData(), fb_w, fb_h);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (!read_back_right(s, "the export of " + req.panel)) return false;
    // A pair, written whole or not at all: a CSV that cannot be written takes the PNG with it.
    gfx::write_png(png.string(), x1 - x0, y1 - y0, pixels, Replace::Reserved);
    names.written(0);
    write_file(csv, req.csv, Replace::Reserved);
    names.written(1);
    names.complete();
    s.say(Severity::Info, "exported " + png.string() + " and " + csv.filename().string());
  } catch (const std::exception& e) {
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    s.say(Severity::Error, std::string("export failed: ") + e.what());
    return false;
  }
  return true;
}

void save_screenshot(AppState& s, int fb_w, int fb_h) {
  if (!s.pictures_trusted()) {
    s.say(Severity::Error,
          "screenshot not written: OpenGL failed its self-check, so the picture would be wrong (" +
              s.gl.verdict + ")");
    return;
  }
  try {
    fs::path dir = s.settings.export_dir.empty() ? default_export_dir() : fs::path(s.settings.export_dir);
    fs::create_directories(dir);
    const NewNames names(dir, "tilescope", {"png"});
    const fs::path& file = names[0];
    glReadBuffer(GL_BACK);
    const std::vector<uint8_t> pixels = gfx::read_pixels_rgba(0, 0, fb_w, fb_h);
    if (!read_back_right(s, "the screenshot")) return;
    gfx::write_png(file.string(), fb_w, fb_h, pixels, Replace::Reserved);
    s.say(Severity::Info, "screenshot saved: " + file.string());
  } catch (const std::exception& e) {
    s.say(Severity::Error, std::string("screenshot failed: ") + e.what());
  }
}

}  // namespace ts::ui

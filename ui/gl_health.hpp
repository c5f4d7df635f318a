#pragma once
// [SECTION] The GL self-check: does OpenGL still draw what it is told? After a person's kernel faulted on an
// H100, every later OpenGL picture of that GPU came out wrong (text missing glyphs, heatmaps blank or
// striped) while the numbers stayed right; nothing in GL said so. So TileScope checks the pictures
// themselves: it draws a known heatmap through the heatmap path (gfx::HeatmapPatternCheck) and, through the
// very renderer that draws the window (Dear ImGui's OpenGL 3 backend), that heatmap beside a line of known
// glyphs, into an offscreen framebuffer, reads it back and compares it with what the CPU computes from the
// same inputs (the colormap table, the font atlas's own pixels). It also asks the driver whether the context
// was reset.
//
// When: at start, after every fault or hang of a person's kernel (Backend::incidents()), before `snapshot`
// and `figure` write a picture, and when the person asks. The window's answer to a failed check is in
// app.cpp (GlHealth): it says so, stops drawing heatmaps, refuses to export pictures, and tries to rebuild.
#include <memory>
#include <stdexcept>
#include <string>

#include <imgui.h>

#include "gfx/gl_check.hpp"
#include "gfx/headless.hpp"
#include "core/engine/backend.hpp"
#include "core/engine/matrix_store.hpp"

namespace ts::gfx {
class HeatmapSet;
}

namespace ts::ui {

struct GlSelfCheck {
  bool ok = false;
  bool context_lost = false;  // the driver reported a reset: the context must be made anew
  std::string verdict;        // one sentence for people: what was found
  std::string detail;         // every step, for the Messages and the command line
  gfx::ResetStatus reset = gfx::ResetStatus::NotAvailable;
  gfx::ContextRobustness robustness;
  bool pattern_ok = false, glyphs_ok = false;
  bool interop_checked = false, interop_ok = false;  // the window's heatmaps take CUDA-GL interop
  double ms = 0;  // how long the check took (a broken driver took ~50 s for a snapshot on the H100)
};

// Runs the check on the current GL context. Needs a Dear ImGui context whose OpenGL 3 renderer is initialised
// and a frame in progress (between ImGui::NewFrame and ImGui::Render: the glyphs are those of the frame's
// font). Restores the framebuffer binding and viewport it found. Never throws.
// heatmaps, probe: the window's heatmaps and the known picture on their device (Backend::probe_store of
// gfx::HeatmapPatternCheck::pattern()): where the heatmaps take CUDA-GL interop, the picture is drawn that
// way too (an interop failure turns interop off in `heatmaps`, as a failure while drawing does).
GlSelfCheck run_gl_self_check(gfx::HeatmapSet* heatmaps = nullptr, const MatrixStore* probe = nullptr);

// The same outside a frame (the command line, snapshot and figure hosts): one frame of `display` size is
// begun and ended around the check. Needs ImGui_ImplOpenGL3_Init to have been called on the current context.
GlSelfCheck run_gl_self_check_frame(ImVec2 display = ImVec2(640, 360), gfx::HeatmapSet* heatmaps = nullptr,
                                    const MatrixStore* probe = nullptr);

// Thrown by what writes a picture (figures, snapshots) when the check fails before it is written.
class GlDamagedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Runs run_gl_self_check_frame and throws GlDamagedError naming `what` when it fails.
void require_gl_ok(const std::string& what, ImVec2 display = ImVec2(640, 360));

// For the command line (`tilescope gl-check`): an offscreen GL context (EGL device, else a hidden X window)
// with Dear ImGui's OpenGL 3 renderer and TileScope's fonts, checked on demand. Throws gfx::DisplayError.
// With a backend on a GPU, heatmaps of that device are set up as the window's are, and the check draws the
// known picture through CUDA-GL interop too (where the GL context is on that GPU).
class GlCheckHost {
 public:
  GlCheckHost(gfx::GlChoice choice, std::shared_ptr<Backend> backend = nullptr);
  ~GlCheckHost();
  GlCheckHost(const GlCheckHost&) = delete;
  GlCheckHost& operator=(const GlCheckHost&) = delete;
  GlSelfCheck check();
  const std::string& gl_note() const { return m_gl.note; }
  std::string gl_renderer() const { return m_gl.gl_renderer(); }
  std::string heatmap_path() const;  // "CUDA-GL interop" or "host path (<why>)"

 private:
  std::shared_ptr<Backend> m_backend;
  gfx::HeadlessGl m_gl;
  ImGuiContext* m_ctx = nullptr;
  std::unique_ptr<gfx::HeatmapSet> m_heatmaps;
  std::shared_ptr<const MatrixStore> m_probe;
  std::string m_probe_error;
};

// What a person is told when the check fails: which pictures cannot be trusted and what restores them.
std::string gl_damage_advice();

}  // namespace ts::ui

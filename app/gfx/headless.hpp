#pragma once
// [SECTION] An offscreen GL context for snapshots, benchmarks and tests: EGL's device platform first (GPU
// servers: no X server needed, and CUDA interop works when the device is the CUDA one), else a hidden GLFW
// window (an X server such as Xvfb with Mesa). Says which one it got, and why not the other.
#include <memory>
#include <string>

#include "gfx/egl_context.hpp"
#include "gfx/window.hpp"

namespace ts::gfx {

enum class GlChoice { Auto, Egl, X11 };
GlChoice parse_gl_choice(const std::string& s);  // "auto" | "egl" | "x11"; throws std::invalid_argument

struct HeadlessGl {
  std::unique_ptr<EglContext> egl;
  std::unique_ptr<GlfwWindow> window;
  std::string note;  // e.g. "EGL device 0 (CUDA device 0)" or "GLFW/X11 hidden window (EGL: <why not>)"
  std::string gl_renderer() const { return egl ? egl->gl_renderer() : window->gl_renderer(); }
};

// Throws DisplayError naming what was tried when no context can be made.
HeadlessGl make_headless_gl(GlChoice choice, int cuda_device, int width, int height);

}  // namespace ts::gfx

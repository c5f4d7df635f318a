#include "gfx/headless.hpp"

#include <stdexcept>

namespace ts::gfx {

GlChoice parse_gl_choice(const std::string& s) {
  if (s == "auto") return GlChoice::Auto;
  if (s == "egl") return GlChoice::Egl;
  if (s == "x11") return GlChoice::X11;
  throw std::invalid_argument("--gl must be auto, egl or x11 (got '" + s + "')");
}

HeadlessGl make_headless_gl(GlChoice choice, int cuda_device, int width, int height) {
  HeadlessGl g;
  std::string egl_why;
  if (choice != GlChoice::X11) {
    try {
      g.egl = std::make_unique<EglContext>(cuda_device);
      g.note = g.egl->description();
      return g;
    } catch (const DisplayError& e) {
      if (choice == GlChoice::Egl) throw;
      egl_why = e.what();
    }
  }
  try {
    g.window = std::make_unique<GlfwWindow>(width, height, "TileScope (offscreen)", false);
  } catch (const DisplayError& e) {
    if (choice == GlChoice::X11) throw;
    throw DisplayError(std::string("no offscreen OpenGL: ") + egl_why + "; and no X display: " + e.what());
  }
  g.note = "GLFW/X11 hidden window" + (egl_why.empty() ? std::string() : " (" + egl_why + ")");
  return g;
}

}  // namespace ts::gfx

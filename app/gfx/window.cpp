#include "gfx/window.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <GLFW/glfw3.h>

#include "gfx/gl.hpp"

namespace ts::gfx {

namespace {
std::string g_glfw_error;
void on_glfw_error(int code, const char* msg) {
  g_glfw_error = "GLFW error " + std::to_string(code) + ": " + msg;
}

// glfwInit once per process, glfwTerminate at exit (after every window is gone).
void ensure_glfw() {
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    glfwSetErrorCallback(on_glfw_error);
    ok = glfwInit() == GLFW_TRUE;
    if (ok) std::atexit([] { glfwTerminate(); });
  });
  if (!ok) throw DisplayError("cannot initialise GLFW (" + g_glfw_error + ")");
}
}  // namespace

bool display_available(std::string* why) {
  const char* x = std::getenv("DISPLAY");
  const char* w = std::getenv("WAYLAND_DISPLAY");
  if ((x && *x) || (w && *w)) return true;
  if (why) *why = "no display: neither DISPLAY nor WAYLAND_DISPLAY is set";
  return false;
}

void init_glfw() {
  std::string why;
  if (!display_available(&why)) throw DisplayError(why);
  ensure_glfw();
}

GlfwWindow::GlfwWindow(int width, int height, const std::string& title, bool visible, bool maximized) {
  init_glfw();
  glfwDefaultWindowHints();
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_MAXIMIZED, maximized ? GLFW_TRUE : GLFW_FALSE);
  // Reset notification where the driver offers it (GLX/EGL robustness): a GPU reset is then reported by
  // glGetGraphicsResetStatus (gl_check.hpp) instead of leaving a context that draws nothing. Else without.
  glfwWindowHint(GLFW_CONTEXT_ROBUSTNESS, GLFW_LOSE_CONTEXT_ON_RESET);
  m_window = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  m_robust = m_window != nullptr;
  if (!m_window) {
    glfwWindowHint(GLFW_CONTEXT_ROBUSTNESS, GLFW_NO_ROBUSTNESS);
    m_window = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  }
  if (!m_window) throw DisplayError("cannot create an OpenGL 3.3 core window (" + g_glfw_error + ")");
  glfwMakeContextCurrent(m_window);
  current_context_is_new();
  glfwSwapInterval(visible ? 1 : 0);
}

GlfwWindow::~GlfwWindow() {
  if (m_window) glfwDestroyWindow(m_window);
}

bool GlfwWindow::should_close() const {
  return glfwWindowShouldClose(m_window);
}
void GlfwWindow::swap() {
  glfwSwapBuffers(m_window);
}

std::string GlfwWindow::gl_renderer() const {
  return current_gl_renderer();
}

namespace {
std::mutex g_lost_mutex;
std::vector<const void*> g_lost;  // contexts found lost (EGLContext or GLFWwindow*)

const void* current_context() {
  if (const void* e = current_egl_context()) return e;
  return glfwGetCurrentContext();  // nullptr before glfwInit too
}
}  // namespace

bool gl_usable() {
  const void* c = current_context();
  if (!c) return false;
  std::lock_guard<std::mutex> lock(g_lost_mutex);
  return std::find(g_lost.begin(), g_lost.end(), c) == g_lost.end();
}

bool current_context_lost() {
  const void* c = current_context();
  if (!c) return false;
  std::lock_guard<std::mutex> lock(g_lost_mutex);
  return std::find(g_lost.begin(), g_lost.end(), c) != g_lost.end();
}

void mark_current_context_lost() {
  const void* c = current_context();
  if (!c) return;
  std::lock_guard<std::mutex> lock(g_lost_mutex);
  if (std::find(g_lost.begin(), g_lost.end(), c) == g_lost.end()) g_lost.push_back(c);
}

void current_context_is_new() {
  const void* c = current_context();
  std::lock_guard<std::mutex> lock(g_lost_mutex);
  g_lost.erase(std::remove(g_lost.begin(), g_lost.end(), c), g_lost.end());
}

std::string current_gl_renderer() {
  if (!gl_usable()) return "(no usable OpenGL context)";
  const char* r = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const char* v = reinterpret_cast<const char*>(glGetString(GL_VERSION));
  return std::string(r ? r : "?") + ", OpenGL " + (v ? v : "?");
}

}  // namespace ts::gfx

#pragma once
// [SECTION] GL context providers. GlfwWindow: a desktop window (visible) or a hidden one for offscreen
// rendering under an X server. Construction throws DisplayError when there is no display to talk to.
#include <memory>
#include <stdexcept>
#include <string>

struct GLFWwindow;

namespace ts::gfx {

// No display (or no usable OpenGL on it): the caller tells the person to use the headless commands.
class DisplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// GL_RENDERER, OpenGL GL_VERSION of the context current on this thread.
std::string current_gl_renderer();

// True when DISPLAY or WAYLAND_DISPLAY is set; `why` says what is missing otherwise.
bool display_available(std::string* why);

// GLFW initialised (once per process), so monitors can be asked about before a window exists. Throws
// DisplayError when there is no display or GLFW cannot start.
void init_glfw();

class GlfwWindow {
 public:
  // OpenGL 3.3 core context. visible = false: a hidden window whose context renders into framebuffers.
  // maximized: the window asks the window manager to maximise it when it is shown.
  GlfwWindow(int width, int height, const std::string& title, bool visible, bool maximized = false);
  ~GlfwWindow();
  GlfwWindow(const GlfwWindow&) = delete;
  GlfwWindow& operator=(const GlfwWindow&) = delete;

  GLFWwindow* get() const { return m_window; }
  bool should_close() const;
  void swap();
  std::string gl_renderer() const;          // GL_RENDERER / GL_VERSION of the context
  bool robust() const { return m_robust; }  // created with reset notification (LOSE_CONTEXT_ON_RESET)

 private:
  GLFWwindow* m_window = nullptr;
  bool m_robust = false;
};

}  // namespace ts::gfx

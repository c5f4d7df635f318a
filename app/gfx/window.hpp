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

// [SECTION] Whether GL may be called now. After a GPU fault the NVIDIA driver lost GL contexts
// (GL_CONTEXT_LOST) and let go of them, and the first call of a GL function that libepoxy had not resolved
// yet then aborted the program ("Couldn't find current GLX or EGL context"). So: a context must be current
// (EGL or GLFW) and not marked lost; GL objects' destructors skip their deletes otherwise (the objects went
// with the context).
bool gl_usable();
bool current_context_lost();        // a context is current and was found lost (gl_usable() is false for it)
void mark_current_context_lost();   // after GL_CONTEXT_LOST or a reset reported for the current context
void current_context_is_new();      // a context just made (it may reuse a lost one's address)
const void* current_egl_context();  // eglGetCurrentContext() (nullptr: none; egl_context.cpp)

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

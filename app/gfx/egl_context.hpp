#pragma once
// [SECTION] A headless OpenGL context through EGL's device platform (EGL_EXT_device_enumeration +
// EGL_EXT_platform_device): no X server, no window, the GL driver of a GPU directly. This is what works on
// GPU servers (GLFW's own headless path does not, see GPU.md); rendering goes into framebuffer objects.
#include <string>

#include "gfx/window.hpp"  // DisplayError

namespace ts::gfx {

class EglContext {
 public:
  // Picks an EGL device: the one CUDA device `cuda_device` is (EGL_NV_device_cuda) if there is one, else
  // another hardware device, else a software one (Mesa) unless hardware_only. Creates an OpenGL 3.3 core
  // context on it and makes it current. Throws DisplayError saying what was tried.
  explicit EglContext(int cuda_device = -1, bool hardware_only = false);
  ~EglContext();
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;

  void make_current();
  std::string gl_renderer() const;                           // GL_RENDERER, OpenGL GL_VERSION
  const std::string& description() const { return m_desc; }  // e.g. "EGL device 0 (CUDA device 0)"
  int cuda_device() const { return m_cuda; }                 // -1: not a CUDA device
  bool robust() const { return m_robust; }  // created with reset notification (LOSE_CONTEXT_ON_RESET)

 private:
  void* m_display = nullptr;  // EGLDisplay
  void* m_context = nullptr;  // EGLContext
  void* m_surface = nullptr;  // EGLSurface (a 16 x 16 pbuffer; we draw into FBOs)
  std::string m_desc;
  int m_cuda = -1;
  bool m_robust = false;
};

}  // namespace ts::gfx

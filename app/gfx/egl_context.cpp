#include "gfx/egl_context.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#define EGL_NO_X11
#include <EGL/egl.h>
#include <EGL/eglext.h>

namespace ts::gfx {

namespace {

template <class F>
F egl_proc(const char* name) {
  return reinterpret_cast<F>(eglGetProcAddress(name));
}

bool has_ext(const char* list, const char* ext) {
  if (!list) return false;
  const size_t n = std::strlen(ext);
  for (const char* p = list; (p = std::strstr(p, ext)) != nullptr; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  return false;
}

std::string egl_error() {
  char buf[32];
  std::snprintf(buf, sizeof buf, "EGL error 0x%04x", unsigned(eglGetError()));
  return buf;
}

struct Candidate {
  EGLDeviceEXT dev;
  int index;
  int cuda = -1;          // EGL_CUDA_DEVICE_NV, if the device has one
  bool software = false;  // EGL_MESA_device_software
  std::string name;
};

}  // namespace

EglContext::EglContext(int cuda_device, bool hardware_only) {
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!has_ext(client, "EGL_EXT_device_enumeration") && !has_ext(client, "EGL_EXT_device_base"))
    throw DisplayError("EGL: no device enumeration (EGL_EXT_device_enumeration) in this EGL library");
  if (!has_ext(client, "EGL_EXT_platform_device"))
    throw DisplayError("EGL: no device platform (EGL_EXT_platform_device) in this EGL library");
  auto query_devices = egl_proc<PFNEGLQUERYDEVICESEXTPROC>("eglQueryDevicesEXT");
  auto query_attrib = egl_proc<PFNEGLQUERYDEVICEATTRIBEXTPROC>("eglQueryDeviceAttribEXT");
  auto query_string = egl_proc<PFNEGLQUERYDEVICESTRINGEXTPROC>("eglQueryDeviceStringEXT");
  auto platform_display = egl_proc<PFNEGLGETPLATFORMDISPLAYEXTPROC>("eglGetPlatformDisplayEXT");
  if (!query_devices || !platform_display) throw DisplayError("EGL: device functions are missing");

  EGLDeviceEXT devs[16];
  EGLint n = 0;
  if (!query_devices(16, devs, &n) || n <= 0) throw DisplayError("EGL: no devices (" + egl_error() + ")");
  std::vector<Candidate> cands;
  for (EGLint i = 0; i < n; ++i) {
    Candidate c{devs[i], int(i)};
    const char* exts = query_string ? query_string(devs[i], EGL_EXTENSIONS) : nullptr;
    c.software = has_ext(exts, "EGL_MESA_device_software");
    EGLAttrib v = 0;
    if (query_attrib && has_ext(exts, "EGL_NV_device_cuda") && query_attrib(devs[i], EGL_CUDA_DEVICE_NV, &v))
      c.cuda = int(v);
    const char* drm = has_ext(exts, "EGL_EXT_device_drm") && query_string
                          ? query_string(devs[i], EGL_DRM_DEVICE_FILE_EXT)
                          : nullptr;
    c.name = c.cuda >= 0  ? "CUDA device " + std::to_string(c.cuda)
             : c.software ? std::string("software")
             : drm        ? std::string(drm)
                          : std::string("hardware");
    if (hardware_only && c.software) continue;
    cands.push_back(c);
  }
  if (cands.empty()) throw DisplayError("EGL: only software devices, and a hardware one was required");
  auto rank = [&](const Candidate& c) {
    return c.cuda == cuda_device && c.cuda >= 0 ? 0 : c.software ? 2 : 1;
  };
  std::stable_sort(cands.begin(), cands.end(), [&](auto& a, auto& b) { return rank(a) < rank(b); });

  std::string tried;
  for (const Candidate& c : cands) {
    EGLDisplay dpy = platform_display(EGL_PLATFORM_DEVICE_EXT, c.dev, nullptr);
    EGLint major = 0, minor = 0;
    auto fail = [&](const std::string& what) {
      tried += (tried.empty() ? "" : "; ") + ("device " + std::to_string(c.index) + " (" + c.name +
                                              "): " + what + " (" + egl_error() + ")");
    };
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &major, &minor)) {
      fail("no display");
      continue;
    }
    const EGLint cfg_attr[] = {EGL_SURFACE_TYPE,
                               EGL_PBUFFER_BIT,
                               EGL_RENDERABLE_TYPE,
                               EGL_OPENGL_BIT,
                               EGL_RED_SIZE,
                               8,
                               EGL_GREEN_SIZE,
                               8,
                               EGL_BLUE_SIZE,
                               8,
                               EGL_ALPHA_SIZE,
                               8,
                               EGL_NONE};
    EGLConfig cfg;
    EGLint ncfg = 0;
    if (!eglBindAPI(EGL_OPENGL_API) || !eglChooseConfig(dpy, cfg_attr, &cfg, 1, &ncfg) || ncfg < 1) {
      fail("no OpenGL pbuffer config");
      eglTerminate(dpy);
      continue;
    }
    const EGLint pb_attr[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    EGLSurface surf = eglCreatePbufferSurface(dpy, cfg, pb_attr);
    // A robust context with reset notification where the display offers one (EGL 1.5, or
    // EGL_EXT_create_context_robustness): a GPU reset is then reported by glGetGraphicsResetStatus instead of
    // leaving a context that silently draws nothing (gl_check.hpp). Else an ordinary one.
    const char* dpy_exts = eglQueryString(dpy, EGL_EXTENSIONS);
    const bool robust15 = major > 1 || (major == 1 && minor >= 5);
    const bool robust_ext = has_ext(dpy_exts, "EGL_EXT_create_context_robustness");
    std::vector<EGLint> ctx_attr = {EGL_CONTEXT_MAJOR_VERSION,       3,
                                    EGL_CONTEXT_MINOR_VERSION,       3,
                                    EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT};
    const size_t plain = ctx_attr.size();
    if (robust15) {
      ctx_attr.insert(ctx_attr.end(),
                      {EGL_CONTEXT_OPENGL_ROBUST_ACCESS, EGL_TRUE,
                       EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY, EGL_LOSE_CONTEXT_ON_RESET});
    } else if (robust_ext) {
      ctx_attr.insert(ctx_attr.end(),
                      {EGL_CONTEXT_OPENGL_ROBUST_ACCESS_EXT, EGL_TRUE,
                       EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY_EXT, EGL_LOSE_CONTEXT_ON_RESET_EXT});
    }
    ctx_attr.push_back(EGL_NONE);
    EGLContext ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr.data());
    if (ctx == EGL_NO_CONTEXT && ctx_attr.size() > plain + 1) {
      ctx_attr.resize(plain);
      ctx_attr.push_back(EGL_NONE);
      ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr.data());
    }
    const bool robust = ctx != EGL_NO_CONTEXT && ctx_attr.size() > plain + 1;
    if (surf == EGL_NO_SURFACE || ctx == EGL_NO_CONTEXT || !eglMakeCurrent(dpy, surf, surf, ctx)) {
      fail("no OpenGL 3.3 core context");
      if (ctx != EGL_NO_CONTEXT) eglDestroyContext(dpy, ctx);
      if (surf != EGL_NO_SURFACE) eglDestroySurface(dpy, surf);
      eglTerminate(dpy);
      continue;
    }
    current_context_is_new();
    m_display = dpy;
    m_context = ctx;
    m_surface = surf;
    m_cuda = c.cuda;
    m_robust = robust;
    m_desc = "EGL device " + std::to_string(c.index) + " (" + c.name + "), EGL " + std::to_string(major) +
             "." + std::to_string(minor);
    return;
  }
  throw DisplayError("EGL: no device gave an OpenGL context: " + tried);
}

const void* current_egl_context() {
  const EGLContext c = eglGetCurrentContext();
  return c == EGL_NO_CONTEXT ? nullptr : c;
}

EglContext::~EglContext() {
  if (!m_display) return;
  eglMakeCurrent(m_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  if (m_context) eglDestroyContext(m_display, m_context);
  if (m_surface) eglDestroySurface(m_display, m_surface);
  eglTerminate(m_display);
}

void EglContext::make_current() {
  if (!eglMakeCurrent(m_display, m_surface, m_surface, m_context))
    throw DisplayError("EGL: cannot make the context current (" + egl_error() + ")");
}

std::string EglContext::gl_renderer() const {
  return current_gl_renderer();  // epoxy's GL header and EGL's cannot share a file
}

}  // namespace ts::gfx

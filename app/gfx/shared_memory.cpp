#include "gfx/shared_memory.hpp"
#include "gfx/window.hpp"  // gl_usable

#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#if defined(TILESCOPE_HAVE_CUDA) && defined(TILESCOPE_HAVE_VULKAN)
#include <dlfcn.h>

#include <atomic>
#include <epoxy/egl.h>
#include <epoxy/glx.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <vulkan/vulkan.h>
#endif

namespace ts::gfx {

#if defined(TILESCOPE_HAVE_CUDA) && defined(TILESCOPE_HAVE_VULKAN)

namespace {
void vk_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS)
    throw std::runtime_error(std::string("Vulkan: ") + what + " failed (VkResult " + std::to_string(int(r)) +
                             ")");
}
void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
  }
}
void gl_check(const char* what) {
  const GLenum e = glGetError();
  if (e != GL_NO_ERROR)
    throw std::runtime_error(std::string("OpenGL: ") + what + " failed (GL error " + std::to_string(e) + ")");
}
}  // namespace

// The GL context that was current on this thread when the shared memory was made, made current again after
// Vulkan calls: NVIDIA's Vulkan driver shares thread state with its OpenGL driver, and creating or destroying
// a Vulkan device can leave no GL context current (every GL call after it then does nothing, and CUDA finds
// no GL device). EGL (headless) or GLX (the window); only a library the process has already loaded is asked.
class GlCurrent {
 public:
  GlCurrent() {
    if (loaded("libEGL.so.1") && (m_egl_ctx = eglGetCurrentContext()) != EGL_NO_CONTEXT) {
      m_egl_dpy = eglGetCurrentDisplay();
      m_egl_draw = eglGetCurrentSurface(EGL_DRAW);
      m_egl_read = eglGetCurrentSurface(EGL_READ);
    } else if ((loaded("libGLX.so.0") || loaded("libGL.so.1")) && (m_glx_ctx = glXGetCurrentContext())) {
      m_glx_dpy = glXGetCurrentDisplay();
      m_glx_draw = glXGetCurrentDrawable();
      m_glx_read = glXGetCurrentReadDrawable();
    }
  }
  // Makes it current again if it no longer is, or if the driver no longer answers for it (glGetString null
  // while EGL or GLX still names it current: only releasing and binding again brings it back). Returns
  // whether it had to.
  bool restore() const {
    const bool answers = glGetString(GL_RENDERER) != nullptr;
    if (m_egl_ctx != EGL_NO_CONTEXT) {
      if (answers && eglGetCurrentContext() == m_egl_ctx) return false;
      eglMakeCurrent(m_egl_dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglMakeCurrent(m_egl_dpy, m_egl_draw, m_egl_read, m_egl_ctx);
      return true;
    }
    if (m_glx_ctx) {
      if (answers && glXGetCurrentContext() == m_glx_ctx) return false;
      glXMakeContextCurrent(m_glx_dpy, None, None, nullptr);
      glXMakeContextCurrent(m_glx_dpy, m_glx_draw, m_glx_read, m_glx_ctx);
      return true;
    }
    return false;
  }

 private:
  static bool loaded(const char* lib) {
    void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != nullptr;
  }
  EGLContext m_egl_ctx = EGL_NO_CONTEXT;
  EGLDisplay m_egl_dpy = EGL_NO_DISPLAY;
  EGLSurface m_egl_draw = EGL_NO_SURFACE, m_egl_read = EGL_NO_SURFACE;
  GLXContext m_glx_ctx = nullptr;
  Display* m_glx_dpy = nullptr;
  GLXDrawable m_glx_draw = 0, m_glx_read = 0;
};

// Puts the GL context back when a scope with Vulkan calls ends (and counts how often that was needed).
struct RestoreGl {
  const GlCurrent& gl;
  ~RestoreGl() {
    if (gl.restore()) g_restored.fetch_add(1);
  }
  static inline std::atomic<int> g_restored{0};
};

struct SharedContext::Impl {
  GlCurrent gl_current;  // the GL context of this shared memory
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;
  PFN_vkGetSemaphoreFdKHR get_semaphore_fd = nullptr;
  VkSemaphore vk_written = VK_NULL_HANDLE;  // CUDA -> GL
  cudaExternalSemaphore_t cu_written = nullptr;
  GLuint gl_written = 0;
  // A binary semaphore: each signal must be waited for before the next signal. written_pending: CUDA
  // signalled, GL has not waited yet.
  bool written_pending = false;
  // GL -> CUDA: a fence after GL's last reads (and waits); CUDA's next writes start once it has passed.
  GLsync gl_done = nullptr;
  std::vector<GLuint> buffers;  // every shared GL buffer (named in GL's waits and signals)
  int device_index = -1;
  cudaStream_t stream = nullptr;

  ~Impl() {
    RestoreGl restore{gl_current};
    if (gl_usable()) {  // else gone with a lost context
      if (gl_done) glDeleteSync(gl_done);
      if (gl_written) glDeleteSemaphoresEXT(1, &gl_written);
    }
    if (cu_written) cudaDestroyExternalSemaphore(cu_written);
    if (device && vk_written) vkDestroySemaphore(device, vk_written, nullptr);
    // The Vulkan instance and device are the process's (vulkan_exporter()): never destroyed here.
  }

  int memory_fd(VkDeviceMemory mem) const {
    VkMemoryGetFdInfoKHR info{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    info.memory = mem;
    info.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    vk_check(get_memory_fd(device, &info, &fd), "vkGetMemoryFdKHR");
    return fd;
  }
  int semaphore_fd(VkSemaphore s) const {
    VkSemaphoreGetFdInfoKHR info{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
    info.semaphore = s;
    info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    vk_check(get_semaphore_fd(device, &info, &fd), "vkGetSemaphoreFdKHR");
    return fd;
  }
  // An exportable binary semaphore, imported into CUDA and into GL (each import owns its descriptor).
  void make_semaphore(VkSemaphore* vk, cudaExternalSemaphore_t* cu, GLuint* gl) {
    VkExportSemaphoreCreateInfo exp{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
    exp.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    ci.pNext = &exp;
    vk_check(vkCreateSemaphore(device, &ci, nullptr, vk), "vkCreateSemaphore");
    cudaExternalSemaphoreHandleDesc d{};
    d.type = cudaExternalSemaphoreHandleTypeOpaqueFd;
    d.handle.fd = semaphore_fd(*vk);
    const cudaError_t e = cudaImportExternalSemaphore(cu, &d);
    if (e != cudaSuccess) {
      close(d.handle.fd);
      cuda_check(e, "cudaImportExternalSemaphore");
    }
    gl_current.restore();
    glGenSemaphoresEXT(1, gl);
    glImportSemaphoreFdEXT(*gl, GL_HANDLE_TYPE_OPAQUE_FD_EXT, semaphore_fd(*vk));
    gl_check("glImportSemaphoreFdEXT");
  }
  void before_cuda_writes();
  void after_cuda_writes();
  void before_gl_reads();
  void after_gl_reads();
};

SharedContext::SharedContext(std::shared_ptr<Impl> impl) : m(std::move(impl)) {}
SharedContext::~SharedContext() = default;

namespace {

// One Vulkan instance and device per CUDA device for the whole process, made on first use and never
// destroyed: on the H100 (driver 580.159.04, EGL device platform) destroying the Vulkan device that had
// exported memory to GL left no GL context working on the thread (glGetString returned null), even after the
// buffers were gone. Only allocation and export happen on it; buffers and semaphores come and go with the
// heatmaps.
struct VulkanExporter {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;
  PFN_vkGetSemaphoreFdKHR get_semaphore_fd = nullptr;
  std::string why;  // empty: usable
};

const VulkanExporter& vulkan_exporter(int cuda_device) {
  static std::mutex mu;
  static auto* made = new std::map<int, VulkanExporter>();  // leaked on purpose: see above
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = made->find(cuda_device); it != made->end()) return it->second;
  VulkanExporter& x = (*made)[cuda_device];
  try {
    cudaDeviceProp prop{};
    cuda_check(cudaGetDeviceProperties(&prop, cuda_device), "cudaGetDeviceProperties");
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "TileScope";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    vk_check(vkCreateInstance(&ici, nullptr, &x.instance), "vkCreateInstance");
    uint32_t n = 0;
    vk_check(vkEnumeratePhysicalDevices(x.instance, &n, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devs(n);
    vk_check(vkEnumeratePhysicalDevices(x.instance, &n, devs.data()), "vkEnumeratePhysicalDevices");
    for (VkPhysicalDevice d : devs) {  // the Vulkan device that is this CUDA device: same UUID
      VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
      VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
      p2.pNext = &id;
      vkGetPhysicalDeviceProperties2(d, &p2);
      if (std::memcmp(id.deviceUUID, prop.uuid.bytes, VK_UUID_SIZE) == 0) x.physical = d;
    }
    if (!x.physical) {
      x.why = "no Vulkan device has CUDA device " + std::to_string(cuda_device) + "'s UUID";
      return x;
    }
    const float priority = 0.0f;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueFamilyIndex = 0;  // never used: Vulkan only allocates and exports here
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    const char* exts[] = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
                          VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME};
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &q;
    dci.enabledExtensionCount = 2;
    dci.ppEnabledExtensionNames = exts;
    vk_check(vkCreateDevice(x.physical, &dci, nullptr, &x.device), "vkCreateDevice");
    x.get_memory_fd =
        reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(x.device, "vkGetMemoryFdKHR"));
    x.get_semaphore_fd =
        reinterpret_cast<PFN_vkGetSemaphoreFdKHR>(vkGetDeviceProcAddr(x.device, "vkGetSemaphoreFdKHR"));
    if (!x.get_memory_fd || !x.get_semaphore_fd)
      x.why = "Vulkan lacks vkGetMemoryFdKHR or vkGetSemaphoreFdKHR";
  } catch (const std::exception& e) {
    x.why = e.what();
  }
  return x;
}

}  // namespace

std::unique_ptr<SharedContext> SharedContext::create(int cuda_device, void* stream, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return std::unique_ptr<SharedContext>();
  };
  if (cuda_device < 0) return fail("the engine runs on the CPU");
  if (!epoxy_has_gl_extension("GL_EXT_memory_object_fd") || !epoxy_has_gl_extension("GL_EXT_semaphore_fd"))
    return fail("the GL context lacks GL_EXT_memory_object_fd or GL_EXT_semaphore_fd");
  try {
    auto impl = std::make_shared<Impl>();
    RestoreGl restore{impl->gl_current};
    impl->device_index = cuda_device;
    impl->stream = static_cast<cudaStream_t>(stream);
    const VulkanExporter& vk = vulkan_exporter(cuda_device);
    if (!vk.why.empty()) return fail(vk.why);
    impl->instance = vk.instance;
    impl->physical = vk.physical;
    impl->device = vk.device;
    impl->get_memory_fd = vk.get_memory_fd;
    impl->get_semaphore_fd = vk.get_semaphore_fd;
    cuda_check(cudaSetDevice(cuda_device), "cudaSetDevice");
    impl->make_semaphore(&impl->vk_written, &impl->cu_written, &impl->gl_written);
    return std::unique_ptr<SharedContext>(new SharedContext(std::move(impl)));
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

int SharedContext::gl_restores() {
  return RestoreGl::g_restored.load();
}

std::unique_ptr<SharedBuffer> SharedContext::make_buffer(size_t bytes) {
  Impl& c = *m;
  std::unique_ptr<SharedBuffer> b(new SharedBuffer());
  b->m_ctx = m;
  b->m_bytes = bytes;
  VkExternalMemoryBufferCreateInfo ext{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.pNext = &ext;
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer vb = VK_NULL_HANDLE;
  vk_check(vkCreateBuffer(c.device, &bci, nullptr, &vb), "vkCreateBuffer");
  b->m_vk_buffer = vb;
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(c.device, vb, &req);
  VkPhysicalDeviceMemoryProperties mp{};
  vkGetPhysicalDeviceMemoryProperties(c.physical, &mp);
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; ++i)
    if ((req.memoryTypeBits & (1u << i)) &&
        (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      type = i;
  if (type == UINT32_MAX) throw std::runtime_error("Vulkan: no device-local memory type for a shared buffer");
  VkExportMemoryAllocateInfo exp{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
  exp.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.pNext = &exp;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  VkDeviceMemory vm = VK_NULL_HANDLE;
  vk_check(vkAllocateMemory(c.device, &ai, nullptr, &vm), "vkAllocateMemory");
  b->m_vk_memory = vm;
  vk_check(vkBindBufferMemory(c.device, vb, vm, 0), "vkBindBufferMemory");
  // CUDA: a plain device pointer over the whole allocation.
  cudaExternalMemoryHandleDesc md{};
  md.type = cudaExternalMemoryHandleTypeOpaqueFd;
  md.handle.fd = c.memory_fd(vm);
  md.size = req.size;
  cudaExternalMemory_t em = nullptr;
  const cudaError_t e = cudaImportExternalMemory(&em, &md);
  if (e != cudaSuccess) {
    close(md.handle.fd);
    cuda_check(e, "cudaImportExternalMemory");
  }
  b->m_cuda_memory = em;
  cudaExternalMemoryBufferDesc bd{};
  bd.offset = 0;
  bd.size = bytes;
  void* ptr = nullptr;
  cuda_check(cudaExternalMemoryGetMappedBuffer(&ptr, em, &bd), "cudaExternalMemoryGetMappedBuffer");
  b->m_ptr = static_cast<float*>(ptr);
  // GL: a memory object, a buffer in it, a texture buffer of R32F over the buffer.
  if (c.gl_current.restore()) RestoreGl::g_restored.fetch_add(1);
  glCreateMemoryObjectsEXT(1, &b->m_gl_memory);
  glImportMemoryFdEXT(b->m_gl_memory, req.size, GL_HANDLE_TYPE_OPAQUE_FD_EXT, c.memory_fd(vm));
  gl_check("glImportMemoryFdEXT");
  GLint prev_buf = 0, prev_tex = 0;
  glGetIntegerv(GL_TEXTURE_BUFFER_BINDING, &prev_buf);
  glGetIntegerv(GL_TEXTURE_BINDING_BUFFER, &prev_tex);
  glGenBuffers(1, &b->m_gl_buffer);
  glBindBuffer(GL_TEXTURE_BUFFER, b->m_gl_buffer);
  glBufferStorageMemEXT(GL_TEXTURE_BUFFER, GLsizeiptr(bytes), b->m_gl_memory, 0);
  gl_check("glBufferStorageMemEXT");
  glGenTextures(1, &b->m_gl_texture);
  glBindTexture(GL_TEXTURE_BUFFER, b->m_gl_texture);
  glTexBuffer(GL_TEXTURE_BUFFER, GL_R32F, b->m_gl_buffer);
  gl_check("glTexBuffer");
  glBindTexture(GL_TEXTURE_BUFFER, GLuint(prev_tex));
  glBindBuffer(GL_TEXTURE_BUFFER, GLuint(prev_buf));
  c.buffers.push_back(b->m_gl_buffer);
  return b;
}

SharedBuffer::~SharedBuffer() {
  if (!m_ctx) return;  // set first by make_buffer
  RestoreGl restore{m_ctx->gl_current};
  {
    auto& v = m_ctx->buffers;
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] == m_gl_buffer) v.erase(v.begin() + long(i)), i = v.size();
  }
  // GL's last reads and CUDA's last writes are done before the memory goes: the caller synchronises its
  // stream after every batch, and glFinish here covers GL.
  glFinish();
  if (gl_usable()) {  // else gone with a lost context
    if (m_gl_texture) glDeleteTextures(1, &m_gl_texture);
    if (m_gl_buffer) glDeleteBuffers(1, &m_gl_buffer);
    if (m_gl_memory) glDeleteMemoryObjectsEXT(1, &m_gl_memory);
  }
  if (m_ptr) cudaFree(m_ptr);  // a pointer from cudaExternalMemoryGetMappedBuffer is freed like any other
  if (m_cuda_memory) cudaDestroyExternalMemory(static_cast<cudaExternalMemory_t>(m_cuda_memory));
  if (m_ctx && m_ctx->device) {
    if (m_vk_buffer) vkDestroyBuffer(m_ctx->device, static_cast<VkBuffer>(m_vk_buffer), nullptr);
    if (m_vk_memory) vkFreeMemory(m_ctx->device, static_cast<VkDeviceMemory>(m_vk_memory), nullptr);
  }
}

std::vector<float> SharedBuffer::read_back(size_t count) const {
  // Through a copy on the GPU into a plain GL buffer: glGetBufferSubData straight from the imported buffer
  // returned the values of the first read every time after it (NVIDIA 580.159.04, H100), while draws sampling
  // the buffer saw every new write.
  std::vector<float> v(count);
  const GLsizeiptr bytes = GLsizeiptr(count * sizeof(float));
  GLint prev_read = 0, prev_write = 0;
  glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &prev_read);
  glGetIntegerv(GL_COPY_WRITE_BUFFER_BINDING, &prev_write);
  GLuint copy = 0;
  glGenBuffers(1, &copy);
  glBindBuffer(GL_COPY_WRITE_BUFFER, copy);
  glBufferData(GL_COPY_WRITE_BUFFER, bytes, nullptr, GL_STREAM_READ);
  glBindBuffer(GL_COPY_READ_BUFFER, m_gl_buffer);
  glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, bytes);
  glGetBufferSubData(GL_COPY_WRITE_BUFFER, 0, bytes, v.data());
  glBindBuffer(GL_COPY_READ_BUFFER, GLuint(prev_read));
  glBindBuffer(GL_COPY_WRITE_BUFFER, GLuint(prev_write));
  glDeleteBuffers(1, &copy);
  return v;
}

// CUDA -> GL: a binary semaphore, signalled by the stream after the writes and waited for by GL before it
// draws (the wait also makes the writes visible to GL's caches). GL -> CUDA: a GL fence after the last draw
// that read the buffers, which the CPU waits for before it queues the next writes. The fence is nearly always
// behind us (a frame's draws finish long before the next result arrives), so the refresh costs no handover;
// a GL-to-CUDA semaphore instead made every refresh wait for GL's queue on the GPU (0.77 ms on an H100 for A,
// B and C at 4096^2 into 1024^2 views, against 0.12 ms for the kernels), and an earlier protocol that
// signalled it once per draw stalled the window under Repeat.
// The binary semaphore is never signalled twice without a wait between: a new signal is sent only after GL
// has waited for the previous one (written_pending false), and GL's wait has then executed, because the fence
// (made after every wait and every batch of reads) has passed. When GL has not drawn since the last signal,
// no new one is sent: every refresh ends with the stream synchronised (the range readback), so these writes
// are complete before GL's pending wait is even queued, and that wait still orders the reads after them.
void SharedContext::Impl::before_cuda_writes() {
  if (!gl_done) return;
  constexpr GLuint64 kStep = 100'000'000;  // 100 ms
  for (int i = 0;; ++i) {
    const GLenum r = glClientWaitSync(gl_done, GL_SYNC_FLUSH_COMMANDS_BIT, kStep);
    if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) break;
    if (r == GL_WAIT_FAILED) throw std::runtime_error("glClientWaitSync failed before CUDA's writes");
    if (i == 49) throw std::runtime_error("GL's reads of the shared buffers did not finish within 5 s");
  }
  glDeleteSync(gl_done);
  gl_done = nullptr;
}

void SharedContext::Impl::after_cuda_writes() {
  if (written_pending) return;  // GL has not waited for the last signal yet: see above
  cudaExternalSemaphoreSignalParams p{};
  cuda_check(cudaSignalExternalSemaphoresAsync(&cu_written, &p, 1, stream),
             "cudaSignalExternalSemaphoresAsync");
  written_pending = true;
}

void SharedContext::Impl::before_gl_reads() {
  if (!written_pending) return;
  std::vector<GLenum> layouts;  // buffers have no layouts
  glWaitSemaphoreEXT(gl_written, GLuint(buffers.size()), buffers.data(), 0, nullptr, layouts.data());
  written_pending = false;
  after_gl_reads();  // a fence behind the wait, so the next signal waits for it
}

void SharedContext::Impl::after_gl_reads() {
  if (gl_done) glDeleteSync(gl_done);
  gl_done = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
}

void SharedContext::before_cuda_writes() {
  m->before_cuda_writes();
}
void SharedContext::after_cuda_writes() {
  m->after_cuda_writes();
}
void SharedContext::before_gl_reads() {
  m->before_gl_reads();
}
void SharedContext::after_gl_reads() {
  m->after_gl_reads();
}
void SharedBuffer::before_gl_reads() const {
  m_ctx->before_gl_reads();
}
void SharedBuffer::after_gl_reads() const {
  m_ctx->after_gl_reads();
}

#else  // without CUDA or Vulkan there is nothing to share memory with

struct SharedContext::Impl {};
SharedContext::SharedContext(std::shared_ptr<Impl> impl) : m(std::move(impl)) {}
SharedContext::~SharedContext() = default;
std::unique_ptr<SharedContext> SharedContext::create(int, void*, std::string* why) {
#if defined(TILESCOPE_HAVE_CUDA)
  if (why) *why = "this build has no Vulkan (libvulkan-dev) to allocate memory CUDA and OpenGL can share";
#else
  if (why) *why = "this build has no CUDA support";
#endif
  return nullptr;
}
std::unique_ptr<SharedBuffer> SharedContext::make_buffer(size_t) {
  throw std::runtime_error("no shared memory in this build");
}
int SharedContext::gl_restores() {
  return 0;
}
void SharedContext::before_cuda_writes() {}
void SharedContext::after_cuda_writes() {}
void SharedContext::before_gl_reads() {}
void SharedContext::after_gl_reads() {}
void SharedBuffer::before_gl_reads() const {}
void SharedBuffer::after_gl_reads() const {}
SharedBuffer::~SharedBuffer() = default;
std::vector<float> SharedBuffer::read_back(size_t) const {
  return {};
}

#endif

}  // namespace ts::gfx

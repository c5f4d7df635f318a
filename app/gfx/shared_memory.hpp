#pragma once
// [SECTION] Heatmap values in memory that CUDA and OpenGL share for good: no map and unmap per refresh.
//
// Neither CUDA nor OpenGL can export memory the other can import, so Vulkan (on the same GPU, matched by
// UUID) allocates it and exports it twice as opaque file descriptors: CUDA imports it as a plain device
// buffer the level-of-detail kernel writes, GL as a buffer object the heatmap shader reads through a texture
// buffer (R32F). Two binary semaphores, made by Vulkan and imported by both, order the two: CUDA's writes
// before GL's reads (with the buffers named in GL's wait, so its caches see the new values), GL's reads
// before CUDA's next writes. Every step is checked; any failure leaves the caller on the mapped-texture path,
// with the reason. Needs VK_KHR_external_memory_fd and VK_KHR_external_semaphore_fd (Vulkan),
// GL_EXT_memory_object_fd and GL_EXT_semaphore_fd (OpenGL); built without CUDA, create() says so.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gfx/gl.hpp"

namespace ts::gfx {

class SharedBuffer;

class SharedContext {
 public:
  // The Vulkan device of CUDA device `cuda_device` and the two semaphores, imported into CUDA and into the GL
  // context current on this thread; `stream` (a cudaStream_t) is where CUDA writes the buffers. nullptr (and
  // `why`) when any part is missing.
  static std::unique_ptr<SharedContext> create(int cuda_device, void* stream, std::string* why);
  ~SharedContext();
  SharedContext(const SharedContext&) = delete;
  SharedContext& operator=(const SharedContext&) = delete;

  // A buffer of `bytes` (rounded up by Vulkan) shared by the three. Throws std::runtime_error.
  std::unique_ptr<SharedBuffer> make_buffer(size_t bytes);

  // The ordering of a batch of CUDA writes (on the stream) and the GL draws that read them. GL's wait for
  // CUDA is queued on the GPU; CUDA's for GL is a fence the CPU checks (it has nearly always passed).
  void before_cuda_writes();  // the CPU waits for GL's last reads (a fence, nearly always passed already)
  void after_cuda_writes();   // announces that the writes are done (a semaphore the stream signals)
  void before_gl_reads();     // GL waits for announced writes, if any are pending
  void after_gl_reads();      // a fence behind GL's reads so far

  // How often a Vulkan call left another (or no) GL context current and it was made current again.
  static int gl_restores();

  struct Impl;

 private:
  explicit SharedContext(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> m;  // shared with every buffer: the Vulkan device outlives the memory made on it
  friend class SharedBuffer;
};

// One heatmap's values: w x h floats, row 0 first, written by CUDA through device_ptr() and read by GL
// through texture() (a GL_TEXTURE_BUFFER of GL_R32F).
class SharedBuffer {
 public:
  ~SharedBuffer();
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;
  float* device_ptr() const { return m_ptr; }
  GLuint buffer() const { return m_gl_buffer; }
  GLuint texture() const { return m_gl_texture; }
  size_t bytes() const { return m_bytes; }
  std::vector<float> read_back(size_t count) const;  // through GL (tests)
  // The ordering of its context (SharedContext::before_gl_reads, after_gl_reads), usable after that context
  // object has gone.
  void before_gl_reads() const;
  void after_gl_reads() const;

 private:
  friend class SharedContext;
  SharedBuffer() = default;
  std::shared_ptr<SharedContext::Impl> m_ctx;
  size_t m_bytes = 0;
  float* m_ptr = nullptr;
  void* m_vk_buffer = nullptr;    // VkBuffer
  void* m_vk_memory = nullptr;    // VkDeviceMemory
  void* m_cuda_memory = nullptr;  // cudaExternalMemory_t
  GLuint m_gl_memory = 0, m_gl_buffer = 0, m_gl_texture = 0;
};

}  // namespace ts::gfx

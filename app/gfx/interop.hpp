#pragma once
// [SECTION] CUDA-OpenGL interop: a GL pixel buffer registered with CUDA, so a CUDA kernel writes heatmap values
// straight into GL memory (no copy through the host). Registration happens once per buffer (ValueTexture makes a
// new buffer only when its size changes), mapping once per update, on the GL thread. Built without CUDA, the
// probe says so and everything falls back to the host path.
#include <memory>
#include <string>
#include <vector>

#include "gl.hpp"

namespace ts::gfx {

struct InteropStatus {
  bool on = false;
  std::string why;  // when off: the reason, for the status bar ("interop off: <why>")
};

// Can CUDA device `cuda_device` write buffers of the GL context current on this thread? Asks CUDA which devices
// drive the context (cudaGLGetDevices). cuda_device < 0: the engine runs on the CPU.
InteropStatus probe_interop(int cuda_device);

// A GL buffer registered with CUDA (write-discard): RAII, unregistered on destruction or re-attach.
class InteropBuffer {
 public:
  InteropBuffer() = default;
  ~InteropBuffer();
  InteropBuffer(const InteropBuffer&) = delete;
  InteropBuffer& operator=(const InteropBuffer&) = delete;

  // Registers `buffer` (unregistering any previous one); throws std::runtime_error with CUDA's message.
  void attach(GLuint buffer);
  void detach();  // before the GL buffer is deleted or resized
  bool attached() const { return m_res != nullptr; }
  GLuint buffer() const { return m_buffer; }
  int registrations() const { return m_registrations; }  // how many times a buffer was registered (tests)

  // Maps the buffer for CUDA on `stream` (a cudaStream_t) and returns its device address; unmap() before GL
  // uses the buffer again. Use Mapping for exception safety.
  float* map(void* stream);
  void unmap(void* stream);
  // Several buffers mapped (or unmapped) by one CUDA call: the GL-CUDA handover is paid once per batch.
  static std::vector<float*> map_all(const std::vector<InteropBuffer*>& bufs, void* stream);
  static void unmap_all(const std::vector<InteropBuffer*>& bufs, void* stream);

 private:
  void* m_res = nullptr;  // cudaGraphicsResource_t
  GLuint m_buffer = 0;
  bool m_mapped = false;
  int m_registrations = 0;
};

class InteropMapping {
 public:
  InteropMapping(InteropBuffer& b, void* stream) : m_b(b), m_stream(stream), m_ptr(b.map(stream)) {}
  ~InteropMapping() { m_b.unmap(m_stream); }
  InteropMapping(const InteropMapping&) = delete;
  InteropMapping& operator=(const InteropMapping&) = delete;
  float* get() const { return m_ptr; }

 private:
  InteropBuffer& m_b;
  void* m_stream;
  float* m_ptr;
};

// The GUI's CUDA stream: non-blocking and high priority, so heatmap refreshes are scheduled ahead of the pending
// blocks of a long GEMM on the engine's stream. RAII.
class DisplayStream {
 public:
  explicit DisplayStream(int cuda_device);
  ~DisplayStream();
  DisplayStream(const DisplayStream&) = delete;
  DisplayStream& operator=(const DisplayStream&) = delete;
  void* get() const { return m_stream; }
  void synchronize() const;
  // Range keys for a batch of n heatmaps: device memory initialised (asynchronously) to kRangeKeysInit pairs.
  unsigned* reset_range_keys(int n);
  // Copies the batch's keys back and synchronises the stream; 2n keys, valid until the next reset.
  const unsigned* fetch_range_keys(int n);

 private:
  void* m_stream = nullptr;
  unsigned* m_keys = nullptr;       // device, 2 * m_capacity
  unsigned* m_host_keys = nullptr;  // pinned, 2 * m_capacity (init pattern first, then fetched values)
  unsigned* m_host_init = nullptr;  // pinned, 2 * m_capacity of kRangeKeysInit
  int m_capacity = 0;
};

}  // namespace ts::gfx

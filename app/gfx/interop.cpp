#include "interop.hpp"

#include "heatmap.hpp"  // kRangeKeysInit

#include <stdexcept>
#include <string>

#if defined(TILESCOPE_HAVE_CUDA)
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>
#endif

namespace ts::gfx {

#if defined(TILESCOPE_HAVE_CUDA)
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("CUDA error: ") + cudaGetErrorString(e) + " in " + what);
  }
}
}  // namespace

InteropStatus probe_interop(int cuda_device) {
  InteropStatus st;
  if (cuda_device < 0) {
    st.why = "the engine runs on the CPU (matrices are in host memory)";
    return st;
  }
  unsigned count = 0;
  int devices[8] = {};
  const cudaError_t e = cudaGLGetDevices(&count, devices, 8, cudaGLDeviceListAll);
  if (e != cudaSuccess) {
    cudaGetLastError();
    const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    st.why = std::string("no CUDA device drives this GL context (") + (renderer ? renderer : "unknown renderer") +
             "; cudaGLGetDevices: " + cudaGetErrorString(e) + ")";
    return st;
  }
  for (unsigned i = 0; i < count; ++i)
    if (devices[i] == cuda_device) {
      st.on = true;
      return st;
    }
  st.why = "the GL context runs on another GPU than CUDA device " + std::to_string(cuda_device);
  return st;
}

InteropBuffer::~InteropBuffer() {
  detach();
}

void InteropBuffer::attach(GLuint buffer) {
  detach();
  cudaGraphicsResource_t r = nullptr;
  check(cudaGraphicsGLRegisterBuffer(&r, buffer, cudaGraphicsRegisterFlagsWriteDiscard),
        "cudaGraphicsGLRegisterBuffer");
  m_res = r;
  m_buffer = buffer;
  ++m_registrations;
}

void InteropBuffer::detach() {
  if (!m_res) return;
  auto r = static_cast<cudaGraphicsResource_t>(m_res);
  if (m_mapped) cudaGraphicsUnmapResources(1, &r, nullptr);
  const cudaError_t e = cudaGraphicsUnregisterResource(r);
  if (e != cudaSuccess) cudaGetLastError();  // destructor path: nothing more to do
  m_res = nullptr;
  m_buffer = 0;
  m_mapped = false;
}

float* InteropBuffer::map(void* stream) {
  if (!m_res) throw std::logic_error("interop buffer: map() before attach()");
  auto r = static_cast<cudaGraphicsResource_t>(m_res);
  check(cudaGraphicsMapResources(1, &r, static_cast<cudaStream_t>(stream)), "cudaGraphicsMapResources");
  m_mapped = true;
  void* p = nullptr;
  size_t bytes = 0;
  check(cudaGraphicsResourceGetMappedPointer(&p, &bytes, r), "cudaGraphicsResourceGetMappedPointer");
  return static_cast<float*>(p);
}

void InteropBuffer::unmap(void* stream) {
  if (!m_mapped) return;
  auto r = static_cast<cudaGraphicsResource_t>(m_res);
  m_mapped = false;
  const cudaError_t e = cudaGraphicsUnmapResources(1, &r, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) cudaGetLastError();  // called from destructors too: never throws
}

DisplayStream::DisplayStream(int cuda_device) {
  check(cudaSetDevice(cuda_device), "cudaSetDevice");
  int lo = 0, hi = 0;
  check(cudaDeviceGetStreamPriorityRange(&lo, &hi), "cudaDeviceGetStreamPriorityRange");
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, hi), "cudaStreamCreateWithPriority");
  m_stream = s;
}

DisplayStream::~DisplayStream() {
  if (m_stream) cudaStreamSynchronize(static_cast<cudaStream_t>(m_stream));
  if (m_keys) cudaFree(m_keys);
  if (m_host_keys) cudaFreeHost(m_host_keys);
  if (m_host_init) cudaFreeHost(m_host_init);
  if (m_stream) cudaStreamDestroy(static_cast<cudaStream_t>(m_stream));
}

unsigned* DisplayStream::reset_range_keys(int n) {
  if (n > m_capacity) {
    // Grown rarely (a panel has four heatmaps); the old buffers are idle (every batch ends with a sync).
    if (m_keys) cudaFree(m_keys);
    if (m_host_keys) cudaFreeHost(m_host_keys);
    if (m_host_init) cudaFreeHost(m_host_init);
    m_keys = m_host_keys = m_host_init = nullptr;
    m_capacity = 0;
    const size_t bytes = size_t(2 * n) * sizeof(unsigned);
    void* d = nullptr;
    void* h = nullptr;
    void* i = nullptr;
    check(cudaMalloc(&d, bytes), "cudaMalloc");
    m_keys = static_cast<unsigned*>(d);
    check(cudaMallocHost(&h, bytes), "cudaMallocHost");
    m_host_keys = static_cast<unsigned*>(h);
    check(cudaMallocHost(&i, bytes), "cudaMallocHost");
    m_host_init = static_cast<unsigned*>(i);
    for (int k = 0; k < n; ++k) {
      m_host_init[2 * k] = kRangeKeysInit[0];
      m_host_init[2 * k + 1] = kRangeKeysInit[1];
    }
    m_capacity = n;
  }
  check(cudaMemcpyAsync(m_keys, m_host_init, size_t(2 * n) * sizeof(unsigned), cudaMemcpyHostToDevice,
                        static_cast<cudaStream_t>(m_stream)),
        "cudaMemcpyAsync");
  return m_keys;
}

const unsigned* DisplayStream::fetch_range_keys(int n) {
  check(cudaMemcpyAsync(m_host_keys, m_keys, size_t(2 * n) * sizeof(unsigned), cudaMemcpyDeviceToHost,
                        static_cast<cudaStream_t>(m_stream)),
        "cudaMemcpyAsync");
  synchronize();
  return m_host_keys;
}

std::vector<float*> InteropBuffer::map_all(const std::vector<InteropBuffer*>& bufs, void* stream) {
  std::vector<cudaGraphicsResource_t> res;
  for (InteropBuffer* b : bufs) {
    if (!b->m_res) throw std::logic_error("interop buffer: map_all() before attach()");
    res.push_back(static_cast<cudaGraphicsResource_t>(b->m_res));
  }
  check(cudaGraphicsMapResources(int(res.size()), res.data(), static_cast<cudaStream_t>(stream)),
        "cudaGraphicsMapResources");
  std::vector<float*> ptrs;
  for (size_t i = 0; i < bufs.size(); ++i) {
    bufs[i]->m_mapped = true;
    void* p = nullptr;
    size_t bytes = 0;
    check(cudaGraphicsResourceGetMappedPointer(&p, &bytes, res[i]), "cudaGraphicsResourceGetMappedPointer");
    ptrs.push_back(static_cast<float*>(p));
  }
  return ptrs;
}

void InteropBuffer::unmap_all(const std::vector<InteropBuffer*>& bufs, void* stream) {
  std::vector<cudaGraphicsResource_t> res;
  for (InteropBuffer* b : bufs)
    if (b->m_mapped) {
      res.push_back(static_cast<cudaGraphicsResource_t>(b->m_res));
      b->m_mapped = false;
    }
  if (res.empty()) return;
  const cudaError_t e =
      cudaGraphicsUnmapResources(int(res.size()), res.data(), static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) cudaGetLastError();  // also called on error paths: never throws
}

void DisplayStream::synchronize() const {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(m_stream)), "cudaStreamSynchronize");
}

#else  // built without CUDA: there is no device to share buffers with.

InteropStatus probe_interop(int) {
  return {false, "this build has no CUDA support"};
}
InteropBuffer::~InteropBuffer() = default;
void InteropBuffer::attach(GLuint) {
  throw std::runtime_error("this build has no CUDA support");
}
void InteropBuffer::detach() {}
float* InteropBuffer::map(void*) {
  throw std::runtime_error("this build has no CUDA support");
}
void InteropBuffer::unmap(void*) {}
DisplayStream::DisplayStream(int) {
  throw std::runtime_error("this build has no CUDA support");
}
DisplayStream::~DisplayStream() = default;
void DisplayStream::synchronize() const {}
unsigned* DisplayStream::reset_range_keys(int) {
  throw std::runtime_error("this build has no CUDA support");
}
const unsigned* DisplayStream::fetch_range_keys(int) {
  throw std::runtime_error("this build has no CUDA support");
}
std::vector<float*> InteropBuffer::map_all(const std::vector<InteropBuffer*>&, void*) {
  throw std::runtime_error("this build has no CUDA support");
}
void InteropBuffer::unmap_all(const std::vector<InteropBuffer*>&, void*) {}

#endif

}  // namespace ts::gfx

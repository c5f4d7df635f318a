#include "interop.hpp"

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
  if (m_stream) cudaStreamDestroy(static_cast<cudaStream_t>(m_stream));
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

#endif

}  // namespace ts::gfx

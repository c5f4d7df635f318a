#include "gfx/interop.hpp"

#include "core/plots/heatmap.hpp"  // kRangeKeysInit
#include "core/engine/matrix_store.hpp"

#include <chrono>
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
    st.why = std::string("no CUDA device drives this GL context (") +
             (renderer ? renderer : "unknown renderer") + "; cudaGLGetDevices: " + cudaGetErrorString(e) +
             ")";
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

InteropTexture::~InteropTexture() {
  detach();
}

void InteropTexture::attach(GLuint texture) {
  detach();
  cudaGraphicsResource_t r = nullptr;
  check(cudaGraphicsGLRegisterImage(
            &r, texture, GL_TEXTURE_2D,
            cudaGraphicsRegisterFlagsSurfaceLoadStore | cudaGraphicsRegisterFlagsWriteDiscard),
        "cudaGraphicsGLRegisterImage");
  m_res = r;
  m_texture = texture;
  ++m_registrations;
}

void InteropTexture::drop_surface() {
  if (m_surface) cudaDestroySurfaceObject(m_surface);  // stream-safe: after the kernels already issued
  m_surface = 0;
  m_array = nullptr;
}

void InteropTexture::detach() {
  if (!m_res) return;
  if (m_mapped) unmap_all({this}, nullptr);
  drop_surface();
  const cudaError_t e = cudaGraphicsUnregisterResource(static_cast<cudaGraphicsResource_t>(m_res));
  if (e != cudaSuccess) cudaGetLastError();  // destructor path: nothing more to do
  m_res = nullptr;
  m_texture = 0;
}

std::vector<uint64_t> InteropTexture::map_all(const std::vector<InteropTexture*>& texs, void* stream) {
  std::vector<cudaGraphicsResource_t> res;
  for (InteropTexture* t : texs) {
    if (!t->m_res) throw std::logic_error("interop texture: map_all() before attach()");
    res.push_back(static_cast<cudaGraphicsResource_t>(t->m_res));
  }
  check(cudaGraphicsMapResources(int(res.size()), res.data(), static_cast<cudaStream_t>(stream)),
        "cudaGraphicsMapResources");
  for (InteropTexture* t : texs) t->m_mapped = true;
  std::vector<uint64_t> surfaces;
  try {
    for (size_t i = 0; i < texs.size(); ++i) {
      cudaArray_t array = nullptr;
      check(cudaGraphicsSubResourceGetMappedArray(&array, res[i], 0, 0),
            "cudaGraphicsSubResourceGetMappedArray");
      InteropTexture& t = *texs[i];
      if (!t.m_surface || t.m_array != static_cast<void*>(array)) {
        t.drop_surface();
        cudaResourceDesc desc{};
        desc.resType = cudaResourceTypeArray;
        desc.res.array.array = array;
        cudaSurfaceObject_t surf = 0;
        check(cudaCreateSurfaceObject(&surf, &desc), "cudaCreateSurfaceObject");
        t.m_surface = surf;
        t.m_array = array;
      }
      surfaces.push_back(t.m_surface);
    }
  } catch (...) {
    unmap_all(texs, stream);
    throw;
  }
  return surfaces;
}

void InteropTexture::unmap_all(const std::vector<InteropTexture*>& texs, void* stream) {
  std::vector<cudaGraphicsResource_t> res;
  for (InteropTexture* t : texs) {
    if (t->m_mapped) {
      res.push_back(static_cast<cudaGraphicsResource_t>(t->m_res));
      t->m_mapped = false;
    }
  }
  if (res.empty()) return;
  const cudaError_t e =
      cudaGraphicsUnmapResources(int(res.size()), res.data(), static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) cudaGetLastError();
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

void DisplayStream::synchronize() const {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(m_stream)), "cudaStreamSynchronize");
}

const unsigned* DisplayStream::fetch_range_keys(int n) {
  check(cudaMemcpyAsync(m_host_keys, m_keys, size_t(2 * n) * sizeof(unsigned), cudaMemcpyDeviceToHost,
                        static_cast<cudaStream_t>(m_stream)),
        "cudaMemcpyAsync");
  synchronize();
  return m_host_keys;
}

AsyncElementRead::AsyncElementRead(DisplayStream& ds) : m_ds(ds) {
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  m_event = e;
  void* h = nullptr;
  const cudaError_t err = cudaMallocHost(&h, sizeof(float));
  if (err != cudaSuccess) {
    cudaEventDestroy(e);
    check(err, "cudaMallocHost");
  }
  m_host = static_cast<float*>(h);
}

AsyncElementRead::~AsyncElementRead() {
  if (m_in_flight) cudaEventSynchronize(static_cast<cudaEvent_t>(m_event));
  cudaFreeHost(m_host);
  cudaEventDestroy(static_cast<cudaEvent_t>(m_event));
}

bool AsyncElementRead::start(const MatrixStore& store, MatrixId id, int64_t row, int64_t col) {
  if (m_in_flight) return false;
  store.element_async(id, row, col, m_host, m_ds.get());
  check(cudaEventRecord(static_cast<cudaEvent_t>(m_event), static_cast<cudaStream_t>(m_ds.get())),
        "cudaEventRecord");
  m_in_flight = true;
  return true;
}

bool AsyncElementRead::poll(float* value) {
  if (!m_in_flight) return false;
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(m_event));
  if (e == cudaErrorNotReady) return false;
  m_in_flight = false;
  check(e, "cudaEventQuery");
  *value = *m_host;
  return true;
}

InteropPhases time_interop_phases(DisplayStream& ds, const std::vector<InteropTexture*>& texs,
                                  const std::vector<InteropPhaseJob>& jobs, int repeats) {
  using clk = std::chrono::steady_clock;
  InteropPhases out;
  for (int i = -3; i < repeats; ++i) {
    const auto t0 = clk::now();
    InteropTexture::map_all(texs, ds.get());
    InteropTexture::unmap_all(texs, ds.get());
    ds.synchronize();
    if (i >= 0)
      out.map_unmap_ms.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
  }
  std::vector<float*> outs;
  for (const auto& j : jobs) {
    void* p = nullptr;
    check(cudaMalloc(&p, size_t(j.region.w) * size_t(j.region.h) * sizeof(float)), "cudaMalloc");
    outs.push_back(static_cast<float*>(p));
  }
  try {
    for (int i = -3; i < repeats; ++i) {
      const auto t0 = clk::now();
      unsigned* keys = ds.reset_range_keys(int(jobs.size()));
      for (size_t k = 0; k < jobs.size(); ++k)
        jobs[k].store->reduce_device_async(MatrixId(jobs[k].id), jobs[k].region, Reduce::Mean,
                                           DeviceOut{outs[k], 0}, keys + 2 * k, ds.get());
      ds.fetch_range_keys(int(jobs.size()));
      if (i >= 0)
        out.kernels_ms.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
    }
  } catch (...) {
    for (float* p : outs) cudaFree(p);
    throw;
  }
  for (float* p : outs) cudaFree(p);
  return out;
}

#else  // built without CUDA: there is no device to share buffers with.

InteropStatus probe_interop(int) {
  return {false, "this build has no CUDA support"};
}
InteropTexture::~InteropTexture() = default;
void InteropTexture::attach(GLuint) {
  throw std::runtime_error("this build has no CUDA support");
}
void InteropTexture::detach() {}
void InteropTexture::drop_surface() {}
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
std::vector<uint64_t> InteropTexture::map_all(const std::vector<InteropTexture*>&, void*) {
  throw std::runtime_error("this build has no CUDA support");
}
AsyncElementRead::AsyncElementRead(DisplayStream& ds) : m_ds(ds) {
  throw std::runtime_error("this build has no CUDA support");
}
AsyncElementRead::~AsyncElementRead() = default;
bool AsyncElementRead::start(const MatrixStore&, MatrixId, int64_t, int64_t) {
  return false;
}
bool AsyncElementRead::poll(float*) {
  return false;
}
void InteropTexture::unmap_all(const std::vector<InteropTexture*>&, void*) {}
InteropPhases time_interop_phases(DisplayStream&, const std::vector<InteropTexture*>&,
                                  const std::vector<InteropPhaseJob>&, int) {
  throw std::runtime_error("this build has no CUDA support");
}

#endif

}  // namespace ts::gfx

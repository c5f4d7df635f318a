#pragma once
// [SECTION] CUDA-OpenGL interop: GL textures registered with CUDA, so a CUDA kernel writes heatmap values
// straight into GL memory (no copy through the host). Registration happens once per texture size, mapping
// once per refresh, on the GL thread. Built without CUDA, the probe says so and everything takes the host
// path.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gfx/gl.hpp"
#include "core/plots/heatmap.hpp"
#include "core/engine/matrix_store.hpp"

namespace ts::gfx {

struct InteropStatus {
  bool on = false;
  std::string why;  // when off: the reason, for the status bar ("interop off: <why>")
};

// Can CUDA device `cuda_device` write buffers of the GL context current on this thread? Asks CUDA which
// devices drive the context (cudaGLGetDevices). cuda_device < 0: the engine runs on the CPU.
InteropStatus probe_interop(int cuda_device);

// A GL texture (R32F) registered with CUDA for surface writes: a CUDA kernel writes heatmap values straight
// into the texture's memory (no pixel buffer, no copy on the GL side). RAII: unregistered on destruction or
// before the texture's storage is respecified (detach). Registered once per texture storage, mapped once per
// refresh.
class InteropTexture {
 public:
  InteropTexture() = default;
  ~InteropTexture();
  InteropTexture(const InteropTexture&) = delete;
  InteropTexture& operator=(const InteropTexture&) = delete;

  // Registers `texture` (unregistering any previous one); throws std::runtime_error with CUDA's message.
  void attach(GLuint texture);
  void detach();  // before GL deletes the texture or changes its size
  bool attached() const { return m_res != nullptr; }
  GLuint texture() const { return m_texture; }
  int registrations() const { return m_registrations; }  // how many times a texture was registered (tests)

  // Maps several textures with one CUDA call (the GL-CUDA handover is paid once per batch) and returns a
  // surface object (cudaSurfaceObject_t) for each; unmap_all() destroys them and hands the textures back to
  // GL, ordered after the CUDA work already issued on `stream`. unmap_all never throws (it runs on error
  // paths too).
  static std::vector<uint64_t> map_all(const std::vector<InteropTexture*>& texs, void* stream);
  static void unmap_all(const std::vector<InteropTexture*>& texs, void* stream);

 private:
  void* m_res = nullptr;  // cudaGraphicsResource_t
  GLuint m_texture = 0;
  // The surface object over the mapped array, kept from one map to the next while the driver hands back the
  // same array (it does for a registered texture whose storage is unchanged): one create per storage, not per
  // refresh. Destroyed on detach, or when the array changes.
  uint64_t m_surface = 0;
  void* m_array = nullptr;  // cudaArray_t the surface was made for
  bool m_mapped = false;
  void drop_surface();
  int m_registrations = 0;
};

// The GUI's CUDA stream: non-blocking and high priority, so heatmap refreshes are scheduled ahead of the
// pending blocks of a long GEMM on the engine's stream. RAII.
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

// One element of a device store read without blocking the frame (hover readouts): the copy is enqueued on
// the display stream into pinned memory, and an event says when it has landed. One read in flight at a time.
class AsyncElementRead {
 public:
  explicit AsyncElementRead(DisplayStream& ds);
  ~AsyncElementRead();
  AsyncElementRead(const AsyncElementRead&) = delete;
  AsyncElementRead& operator=(const AsyncElementRead&) = delete;
  // Starts reading element (row, col) of `id`; refused (false) while a read is still in flight.
  bool start(const MatrixStore& store, MatrixId id, int64_t row, int64_t col);
  bool in_flight() const { return m_in_flight; }
  // True once the read started last has landed; `value` holds it. Never blocks.
  bool poll(float* value);

 private:
  DisplayStream& m_ds;
  void* m_event = nullptr;  // cudaEvent_t
  float* m_host = nullptr;  // pinned
  bool m_in_flight = false;
};

// Where an interop refresh spends its time (bench heatmap): `repeats` timings (ms, wall clock, each ending
// with a stream synchronisation) of (a) mapping and unmapping `texs` together, (b) only the LOD kernels of
// `jobs` into plain device buffers. Each job: the store, matrix and region of one heatmap.
struct InteropPhaseJob {
  const MatrixStore* store;
  int id;  // MatrixId
  LodRegion region;
};
struct InteropPhases {
  std::vector<double> map_unmap_ms, kernels_ms;
};
InteropPhases time_interop_phases(DisplayStream& ds, const std::vector<InteropTexture*>& texs,
                                  const std::vector<InteropPhaseJob>& jobs, int repeats);

}  // namespace ts::gfx

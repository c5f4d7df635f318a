#pragma once
// [SECTION] The last run's matrices, kept where they were computed (host memory for the CPU backend, GPU
// memory for the CUDA backend), so heatmaps can be reduced from them at any zoom without copying the whole
// matrix. A store is immutable once published; the GUI may read it from its own thread while the engine runs
// the next problem into new buffers.
#include <cstdint>
#include <memory>
#include <string>

#include "core/plots/heatmap.hpp"
#include "core/engine/matrix.hpp"

namespace ts {

enum class MatrixId { A, B, C, Error };  // Error: C - reference, signed
const char* matrix_name(MatrixId id);    // "A", "B", "C", "C - reference"

// Where a device reduction writes its values: device memory (ptr) or a CUDA surface object of an R32F 2-D
// array (surface != 0, e.g. a GL texture mapped through interop), value (x, y) at texel (x, y).
struct DeviceOut {
  float* ptr = nullptr;
  uint64_t surface = 0;
};

// A reduction or an element on its way from a remote engine (RemoteStore): ready() never waits, so a frame
// asks, draws what it has, and collects on a later frame.
class PendingReduce {
 public:
  virtual ~PendingReduce() = default;
  virtual bool ready() const = 0;
  // Once ready: the w * h values into `out` and the region's finite range. Throws what failed (the link
  // lost, the engine's error).
  virtual ValueRange take(float* out) = 0;
};
class PendingElement {
 public:
  virtual ~PendingElement() = default;
  virtual bool ready() const = 0;
  virtual float take() = 0;  // once ready; throws what failed
};

// What the link to a remote store has measured (0: not yet): the bytes a second its long answers arrived at
// and the round trip. A heatmap decides from them whether a view comes coarse first (coarse_first()).
struct LinkFigures {
  double bytes_per_s = 0;
  double rtt_ms = 0;
};

class MatrixStore {
 public:
  virtual ~MatrixStore() = default;
  virtual int64_t rows(MatrixId id) const = 0;
  virtual int64_t cols(MatrixId id) const = 0;
  // >= 0: the CUDA device holding the matrices (reduce_device works); -1: host memory.
  virtual int cuda_device() const { return -1; }
  // The region reduced into host memory (h * w floats). For a device store the reduction runs on the GPU and
  // only the w * h values are copied back. Returns the finite min and max of the region's elements.
  virtual ValueRange reduce(MatrixId id, const LodRegion& r, Reduce mode, float* out) const = 0;
  // Device stores only: the region reduced into device memory `dev_out` (h * w floats, e.g. a mapped GL
  // buffer) on `stream` (a cudaStream_t), and the finite range of the region's elements. Synchronises the
  // stream. Throws std::logic_error on a host store.
  virtual ValueRange reduce_device(MatrixId id, const LodRegion& r, Reduce mode, float* dev_out,
                                   void* stream) const;
  // Device stores only, asynchronous: enqueues the reduction into `out` and the range as keys into
  // dev_range_keys (2 unsigned on the device, initialised by the caller to kRangeKeysInit) on `stream`; the
  // caller synchronises and decodes with range_from_keys. Lets a caller batch several heatmaps behind one
  // sync.
  virtual void reduce_device_async(MatrixId id, const LodRegion& r, Reduce mode, DeviceOut out,
                                   unsigned* dev_range_keys, void* stream) const;
  // One element, exactly. Synchronous: for a device store it waits for a copy (use element_async on the GUI
  // thread). Throws std::out_of_range outside the matrix.
  virtual float element(MatrixId id, int64_t row, int64_t col) const = 0;
  // The whole matrix in host memory (File > Save C). Synchronous; for a device store one device-to-host copy.
  virtual HostMatrix copy(MatrixId id) const = 0;
  // Device stores only: enqueues the copy of one element into host_dst (pinned host memory) on `stream`,
  // without waiting; the caller records an event after it and polls. Throws std::out_of_range outside the
  // matrix, std::logic_error on a host store.
  virtual void element_async(MatrixId id, int64_t row, int64_t col, float* host_dst, void* stream) const;
  // The matrices are in a remote engine: reduce() and element() wait for the link, so a frame asks with
  // reduce_later() and element_later() instead (both nullptr on a store that is not remote).
  virtual bool remote() const { return false; }
  virtual std::shared_ptr<PendingReduce> reduce_later(MatrixId id, const LodRegion& r, Reduce mode) const {
    (void)id, (void)r, (void)mode;
    return nullptr;
  }
  virtual std::shared_ptr<PendingElement> element_later(MatrixId id, int64_t row, int64_t col) const {
    (void)id, (void)row, (void)col;
    return nullptr;
  }
  // A remote store: its link as measured so far ({} elsewhere).
  virtual LinkFigures link_figures() const { return {}; }
};

// A store over host matrices (the CPU backend). error = c - ref.
std::shared_ptr<const MatrixStore> make_host_store(std::shared_ptr<const HostMatrix> a,
                                                   std::shared_ptr<const HostMatrix> b,
                                                   std::shared_ptr<const HostMatrix> c,
                                                   std::shared_ptr<const HostMatrix> error);

}  // namespace ts

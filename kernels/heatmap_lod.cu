// Heatmap level of detail on the GPU: the visible region of a matrix reduced to the view's pixel size,
// straight from the engine's buffers (no copy of the matrix through the host). One thread per view value
// walks its block of source elements; the same block boundaries as the CPU reference (lod_begin in
// app/core/heatmap.hpp), the same rules for NaN and Inf, so the two paths give the same picture. The finite
// range of the region's elements (their true min and max, which a block mean never reaches) is reduced in the
// same pass (warp shuffles, one atomic per warp) for the colour scale.
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#include <cstring>
#include <stdexcept>

#include <math_constants.h>

#include "cuda_check.cuh"
#include "cuda_raii.cuh"
#include "heatmap_lod.cuh"

namespace ts {

void free_device_memory_later(void* p) noexcept {
  if (!p) return;
  // One thread for the whole process, started on first use and never joined (memory may be released during
  // static destruction, when joining would be too late anyway).
  struct Reaper {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<void*> queue;
    Reaper() {
      std::thread([this] {
        for (;;) {
          std::vector<void*> batch;
          {
            std::unique_lock<std::mutex> lock(mu);
            cv.wait(lock, [&] { return !queue.empty(); });
            batch.swap(queue);
          }
          for (void* q : batch) CUDA_CHECK_NOEXCEPT(cudaFree(q));
        }
      }).detach();
    }
  };
  static Reaper* reaper = new Reaper();  // never destroyed
  try {
    std::lock_guard<std::mutex> lock(reaper->mu);
    reaper->queue.push_back(p);
  } catch (...) {
    CUDA_CHECK_NOEXCEPT(cudaFree(p));
    return;
  }
  reaper->cv.notify_one();
}

cudaStream_t release_stream() {
  static cudaStream_t s = [] {
    cudaStream_t st = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    return st;  // never destroyed: pool buffers may be released during static destruction
  }();
  return s;
}

void configure_memory_pool(int device, size_t cached_bytes) {
  cudaMemPool_t pool;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t threshold = cached_bytes;
  CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
}

void trim_memory_pool(int device) {
  cudaMemPool_t pool;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  CUDA_CHECK(cudaStreamSynchronize(release_stream()));
  CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
}

namespace {

// Order-preserving float -> unsigned key (negative floats reversed), so atomicMin/atomicMax give float
// min/max.
__device__ inline unsigned range_key(float f) {
  unsigned u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// out.surface != 0: the values go to a surface (an R32F texture mapped through interop), else to out.ptr.
__global__ void lod_kernel(const float* __restrict__ src, int64_t ld, LodRegion r, Reduce mode, DeviceOut out,
                           unsigned* range /* [min key, max key] */) {
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x), y = int(blockIdx.y);
  unsigned kmin = 0xffffffffu, kmax = 0u;
  if (x < r.w && y < r.h) {
    const int64_t r0 = lod_begin(r.row0, r.rows, r.h, y), r1 = lod_begin(r.row0, r.rows, r.h, y + 1);
    const int64_t c0 = lod_begin(r.col0, r.cols, r.w, x), c1 = lod_begin(r.col0, r.cols, r.w, x + 1);
    double acc = mode == Reduce::Min ? CUDART_INF : mode == Reduce::Max ? -CUDART_INF : 0.0;
    float best = 0.0f, lo = CUDART_INF_F, hi = -CUDART_INF_F;
    bool nan = false, inf = false;
    for (int64_t i = r0; i < r1; ++i) {
      const float* row = src + i * ld;
      for (int64_t j = c0; j < c1; ++j) {
        const float v = row[j];
        nan |= isnan(v);
        inf |= isinf(v);
        if (isfinite(v)) {
          lo = fminf(lo, v);
          hi = fmaxf(hi, v);
        }
        switch (mode) {
          case Reduce::Mean:
            acc += double(v);
            break;
          case Reduce::Min:
            acc = fmin(acc, double(v));
            break;
          case Reduce::Max:
            acc = fmax(acc, double(v));
            break;
          case Reduce::AbsMax:
            if (fabsf(v) > fabsf(best)) best = v;
            break;
        }
      }
    }
    float o;
    if (mode == Reduce::Mean)
      o = float(acc / double((r1 - r0) * (c1 - c0)));
    else if (mode == Reduce::AbsMax)
      o = best;
    else
      o = float(acc);
    if (nan || (inf && (mode == Reduce::Mean || mode == Reduce::AbsMax))) o = CUDART_NAN_F;
    if (out.surface)
      surf2Dwrite(o, cudaSurfaceObject_t(out.surface), x * int(sizeof(float)), y);
    else
      out.ptr[int64_t(y) * r.w + x] = o;
    if (lo <= hi) {
      kmin = range_key(lo);
      kmax = range_key(hi);
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    kmin = min(kmin, __shfl_xor_sync(0xffffffffu, kmin, off));
    kmax = max(kmax, __shfl_xor_sync(0xffffffffu, kmax, off));
  }
  if ((threadIdx.x & 31) == 0 && kmin <= kmax) {
    atomicMin(&range[0], kmin);
    atomicMax(&range[1], kmax);
  }
}

__global__ void subtract_kernel(float* out, const float* a, const float* b, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = a[i] - b[i];
}

}  // namespace

void device_lod_launch(const float* src, int64_t ld, int64_t rows, int64_t cols, const LodRegion& r,
                       Reduce mode, DeviceOut out, unsigned* range_keys, cudaStream_t s) {
  validate_lod_region(r, rows, cols);
  const dim3 block(128), grid(unsigned((r.w + 127) / 128), unsigned(r.h));
  lod_kernel<<<grid, block, 0, s>>>(src, ld, r, mode, out, range_keys);
  CUDA_CHECK_LAUNCH();
}

ValueRange device_lod_reduce(const float* src, int64_t ld, int64_t rows, int64_t cols, const LodRegion& r,
                             Reduce mode, float* out, cudaStream_t s) {
  PoolBuffer<unsigned> keys(2, s);  // stream-ordered: a cudaFree here would wait for the engine's GEMM
  CUDA_CHECK(cudaMemcpyAsync(keys.get(), kRangeKeysInit, sizeof kRangeKeysInit, cudaMemcpyHostToDevice, s));
  device_lod_launch(src, ld, rows, cols, r, mode, DeviceOut{out, 0}, keys.get(), s);
  unsigned h[2];
  CUDA_CHECK(cudaMemcpyAsync(h, keys.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return range_from_keys(h);
}

void device_subtract(float* out, const float* a, const float* b, int64_t n, cudaStream_t s) {
  const unsigned grid = unsigned(std::min<int64_t>((n + 255) / 256, 65535 * 4));
  subtract_kernel<<<grid, 256, 0, s>>>(out, a, b, n);
  CUDA_CHECK_LAUNCH();
}

// [SECTION] The CUDA backend's matrix store: the run's buffers, kept on the device.
namespace {

class DeviceStore final : public MatrixStore {
 public:
  DeviceStore(int device, DeviceMatrices m) : m_device(device), m_m(std::move(m)) {}

  int64_t rows(MatrixId id) const override { return id == MatrixId::B ? m_m.k : m_m.m; }
  int64_t cols(MatrixId id) const override { return id == MatrixId::A ? m_m.k : m_m.n; }
  int cuda_device() const override { return m_device; }

  ValueRange reduce(MatrixId id, const LodRegion& r, Reduce mode, float* out) const override {
    validate_lod_region(r, rows(id), cols(id));
    CUDA_CHECK(cudaSetDevice(m_device));
    cudaStream_t s = side_stream();
    PoolBuffer<float> tmp(size_t(r.w) * size_t(r.h), s);
    const ValueRange range = device_lod_reduce(get(id), cols(id), rows(id), cols(id), r, mode, tmp.get(), s);
    CUDA_CHECK(cudaMemcpyAsync(out, tmp.get(), tmp.bytes(), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return range;
  }

  HostMatrix copy(MatrixId id) const override {
    CUDA_CHECK(cudaSetDevice(m_device));
    HostMatrix h(rows(id), cols(id));
    cudaStream_t s = side_stream();
    CUDA_CHECK(
        cudaMemcpyAsync(h.data.data(), get(id), h.data.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return h;
  }

  void element_async(MatrixId id, int64_t row, int64_t col, float* host_dst, void* stream) const override {
    if (row < 0 || row >= rows(id) || col < 0 || col >= cols(id))
      throw std::out_of_range("element (" + std::to_string(row) + ", " + std::to_string(col) +
                              ") is outside " + matrix_name(id));
    CUDA_CHECK(cudaSetDevice(m_device));
    CUDA_CHECK(cudaMemcpyAsync(host_dst, get(id) + row * cols(id) + col, sizeof(float),
                               cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)));
  }

  ValueRange reduce_device(MatrixId id, const LodRegion& r, Reduce mode, float* dev_out,
                           void* stream) const override {
    CUDA_CHECK(cudaSetDevice(m_device));
    return device_lod_reduce(get(id), cols(id), rows(id), cols(id), r, mode, dev_out,
                             static_cast<cudaStream_t>(stream));
  }

  void reduce_device_async(MatrixId id, const LodRegion& r, Reduce mode, DeviceOut dev_out, unsigned* keys,
                           void* stream) const override {
    CUDA_CHECK(cudaSetDevice(m_device));
    device_lod_launch(get(id), cols(id), rows(id), cols(id), r, mode, dev_out, keys,
                      static_cast<cudaStream_t>(stream));
  }

  float element(MatrixId id, int64_t row, int64_t col) const override {
    if (row < 0 || row >= rows(id) || col < 0 || col >= cols(id))
      throw std::out_of_range("element (" + std::to_string(row) + ", " + std::to_string(col) +
                              ") is outside " + matrix_name(id));
    CUDA_CHECK(cudaSetDevice(m_device));
    float v = 0;
    cudaStream_t s = side_stream();
    CUDA_CHECK(cudaMemcpyAsync(&v, get(id) + row * cols(id) + col, sizeof v, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return v;
  }

 private:
  const float* get(MatrixId id) const {
    switch (id) {
      case MatrixId::A:
        return m_m.a.get();
      case MatrixId::B:
        return m_m.b.get();
      case MatrixId::C:
        return m_m.c.get();
      case MatrixId::Error:
        return m_m.err.get();
    }
    return nullptr;
  }
  // Reads for the GUI go through a stream of their own, high priority and non-blocking, so they neither wait
  // for nor serialise with the engine's stream (which may be running the next problem).
  // One per thread, never destroyed (a thread_local destructor would run after the CUDA runtime unloads).
  static cudaStream_t side_stream() {
    thread_local cudaStream_t s = [] {
      int lo = 0, hi = 0;
      CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
      cudaStream_t st = nullptr;
      CUDA_CHECK(cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, hi));
      return st;
    }();
    return s;
  }

  int m_device;
  DeviceMatrices m_m;
};

}  // namespace

std::shared_ptr<const MatrixStore> make_device_store(int device, DeviceMatrices m) {
  return std::make_shared<DeviceStore>(device, std::move(m));
}

}  // namespace ts

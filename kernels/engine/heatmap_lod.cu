// Heatmap level of detail on the GPU: the visible region of a matrix reduced to the view's pixel size,
// straight from the engine's buffers (no copy of the matrix through the host). One thread per view value
// walks its block of source elements; the same block boundaries as the CPU reference (lod_begin in
// app/core/plots/heatmap.hpp), the same rules for NaN and Inf, so the two paths give the same picture. The
// finite range of the region's elements (their true min and max, which a block mean never reaches) is reduced
// in the same pass (warp shuffles, one atomic per warp) for the colour scale.
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#include <cstring>
#include <stdexcept>

#include <math_constants.h>

#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/cuda_raii.cuh"
#include "kernels/engine/heatmap_lod.cuh"

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

cudaStream_t release_stream() noexcept {
  static cudaStream_t s = [] {
    cudaStream_t st = nullptr;
    // Asked first by a PoolBuffer's deleter (noexcept) after a kernel fault, the creation fails on the broken
    // context: a throw here ended the process ("terminate called ... cudaStreamCreateWithFlags") before the
    // run could report the fault. The legacy stream then: the context is lost for good anyway.
    if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) {
      (void)cudaGetLastError();
      return cudaStream_t(nullptr);
    }
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

// One view value's reduction: the element rules of lod_reduce() on the host (NaN anywhere, or Inf under
// Mean and AbsMax, makes the value NaN), and the finite range of the elements seen.
template <Reduce M>
struct LodAcc {
  double acc = M == Reduce::Min ? double(INFINITY) : M == Reduce::Max ? -double(INFINITY) : 0.0;
  float best = 0.0f, lo = INFINITY, hi = -INFINITY;
  bool nan = false, inf = false;
  __device__ void add(float v) {
    nan |= isnan(v);
    inf |= isinf(v);
    if (isfinite(v)) {
      lo = fminf(lo, v);
      hi = fmaxf(hi, v);
    }
    if constexpr (M == Reduce::Mean)
      acc += double(v);
    else if constexpr (M == Reduce::Min)
      acc = fmin(acc, double(v));
    else if constexpr (M == Reduce::Max)
      acc = fmax(acc, double(v));
    else if (fabsf(v) > fabsf(best) || (fabsf(v) == fabsf(best) && v > best))
      best = v;  // the largest magnitude; of +x and -x, +x (as on the host: order-independent)
  }
  __device__ float value(int64_t count) const {
    float o = M == Reduce::Mean ? float(acc / double(count)) : M == Reduce::AbsMax ? best : float(acc);
    if (nan || (inf && (M == Reduce::Mean || M == Reduce::AbsMax))) o = CUDART_NAN_F;
    return o;
  }
};

// One thread per view value, walking its block of source elements row by row; a block of 128 threads covers
// 128 x kLodRows view values. The loads are what limits it (a 4096^2 matrix is 64 MiB for a 1024^2 view), so
// each row's elements are read in groups of four whose loads are all issued before any is used: one 16-byte
// load where the group is aligned (a view that divides the matrix by four, the common case), else four
// predicated scalar loads; rows go two at a time. The finite range is reduced in the block (warp shuffles,
// then shared memory) and reaches the two range words with one atomic each per block: with one per warp, the
// 32 K warps of a 1024^2 view queued on the same two addresses and took longer than the loads (0.23 ms for
// A, B and C on an H100).
// out.surface != 0: the values go to a surface (an R32F texture mapped through interop), else to out.ptr.
constexpr int kLodThreads = 128, kLodRows = 4;

template <Reduce M>
__global__ void __launch_bounds__(kLodThreads)
    lod_kernel(const float* __restrict__ src, int64_t ld, LodRegion r, DeviceOut out,
               unsigned* range /* [min key, max key] */) {
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x);
  unsigned kmin = 0xffffffffu, kmax = 0u;
  for (int yy = 0; yy < kLodRows; ++yy) {
    const int y = int(blockIdx.y) * kLodRows + yy;
    if (x >= r.w || y >= r.h) break;
    const int64_t r0 = lod_begin(r.row0, r.rows, r.h, y), r1 = lod_begin(r.row0, r.rows, r.h, y + 1);
    const int64_t c0 = lod_begin(r.col0, r.cols, r.w, x), c1 = lod_begin(r.col0, r.cols, r.w, x + 1);
    // 16-byte loads stay inside the row (and the allocation) when the row stride and c0 are multiples of 4.
    const bool vec = (c0 & 3) == 0 && (ld & 3) == 0 && (reinterpret_cast<uintptr_t>(src) & 15) == 0;
    LodAcc<M> a;
    auto group = [&](const float* row, int64_t j, float(&v)[4]) {
      if (vec) {
        const float4 q = __ldg(reinterpret_cast<const float4*>(row + j));
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = j + k < c1 ? __ldg(row + j + k) : 0.0f;
      }
    };
    auto use = [&](int64_t j, const float(&v)[4]) {
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (j + k < c1) a.add(v[k]);
    };
    int64_t i = r0;
    for (; i + 1 < r1; i += 2) {
      const float* p0 = src + i * ld;
      const float* p1 = p0 + ld;
      for (int64_t j = c0; j < c1; j += 4) {
        float v0[4], v1[4];
        group(p0, j, v0);
        group(p1, j, v1);
        use(j, v0);
        use(j, v1);
      }
    }
    if (i < r1) {
      const float* p0 = src + i * ld;
      for (int64_t j = c0; j < c1; j += 4) {
        float v0[4];
        group(p0, j, v0);
        use(j, v0);
      }
    }
    const float o = a.value((r1 - r0) * (c1 - c0));
    if (out.surface)
      surf2Dwrite(o, cudaSurfaceObject_t(out.surface), x * int(sizeof(float)), y);
    else
      out.ptr[int64_t(y) * r.w + x] = o;
    if (a.lo <= a.hi) {
      kmin = min(kmin, range_key(a.lo));
      kmax = max(kmax, range_key(a.hi));
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    kmin = min(kmin, __shfl_xor_sync(0xffffffffu, kmin, off));
    kmax = max(kmax, __shfl_xor_sync(0xffffffffu, kmax, off));
  }
  __shared__ unsigned wmin[kLodThreads / 32], wmax[kLodThreads / 32];
  if ((threadIdx.x & 31) == 0) {
    wmin[threadIdx.x / 32] = kmin;
    wmax[threadIdx.x / 32] = kmax;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kLodThreads / 32; ++w) {
      kmin = min(kmin, wmin[w]);
      kmax = max(kmax, wmax[w]);
    }
    if (kmin <= kmax) {
      atomicMin(&range[0], kmin);
      atomicMax(&range[1], kmax);
    }
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
  const dim3 block(kLodThreads),
      grid(unsigned((r.w + kLodThreads - 1) / kLodThreads), unsigned((r.h + kLodRows - 1) / kLodRows));
  switch (mode) {
    case Reduce::Mean:
      lod_kernel<Reduce::Mean><<<grid, block, 0, s>>>(src, ld, r, out, range_keys);
      break;
    case Reduce::Min:
      lod_kernel<Reduce::Min><<<grid, block, 0, s>>>(src, ld, r, out, range_keys);
      break;
    case Reduce::Max:
      lod_kernel<Reduce::Max><<<grid, block, 0, s>>>(src, ld, r, out, range_keys);
      break;
    case Reduce::AbsMax:
      lod_kernel<Reduce::AbsMax><<<grid, block, 0, s>>>(src, ld, r, out, range_keys);
      break;
  }
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

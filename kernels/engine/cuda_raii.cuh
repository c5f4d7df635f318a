#pragma once
// Move-only owners of CUDA resources (unique_ptr with noexcept deleters, after nvbench's cuda_stream.cuh).
#include <cstddef>
#include <memory>

#include "kernels/engine/cublas_api.hpp"
#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/launch_gate.cuh"

namespace ts {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : m_count(count) {
    void* p = nullptr;
    if (count) CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    m_ptr.reset(static_cast<T*>(p));
  }
  T* get() const { return m_ptr.get(); }
  size_t size() const { return m_count; }
  size_t bytes() const { return m_count * sizeof(T); }

 private:
  struct Free {
    void operator()(T* p) const noexcept { CUDA_CHECK_NOEXCEPT(cudaFree(p)); }
  };
  std::unique_ptr<T, Free> m_ptr;
  size_t m_count = 0;
};

// The stream on which pool memory is given back: created once, lives as long as the process (a PoolBuffer can
// outlive any backend that allocated it). Never throws (deleters call it): the legacy stream where the
// context could not make one.
cudaStream_t release_stream() noexcept;
// Keeps up to `cached_bytes` of freed pool memory for reuse on `device` (reallocating 64 MiB matrices on
// every run would map and unmap pages each time).
void configure_memory_pool(int device, size_t cached_bytes);
// Returns the pool's cached memory to the device (before deciding whether a large problem fits).
void trim_memory_pool(int device);

// Frees cudaMalloc memory on a background thread (cudaFree waits for the whole device), so that dropping it
// from the GUI thread never stalls a frame behind a kernel in flight.
void free_device_memory_later(void* p) noexcept;

// Memory from the device's stream-ordered pool (cudaMallocAsync), returned with cudaFreeAsync on a stream of
// its own: dropping the last run's matrices from the GUI thread never waits for a kernel in flight (a plain
// cudaFree synchronises the device). Free memory stays cached in the pool (see trim_memory_pool).
// PoolBuffer::shareable(): plain cudaMalloc memory instead, which CUDA IPC can hand to another process (pool
// memory cannot), freed through free_device_memory_later.
template <class T>
class PoolBuffer {
 public:
  PoolBuffer() = default;
  PoolBuffer(size_t count, cudaStream_t stream) : m_count(count) {
    void* p = nullptr;
    if (count) CUDA_CHECK(cudaMallocAsync(&p, count * sizeof(T), stream));
    m_ptr.reset(static_cast<T*>(p));
  }
  static PoolBuffer shareable(size_t count) {
    PoolBuffer b;
    b.m_count = count;
    void* p = nullptr;
    if (count) CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    b.m_ptr = std::unique_ptr<T, Free>(static_cast<T*>(p), Free{true});
    return b;
  }
  T* get() const { return m_ptr.get(); }
  size_t size() const { return m_count; }
  size_t bytes() const { return m_count * sizeof(T); }

 private:
  struct Free {
    bool shareable = false;
    void operator()(T* p) const noexcept {
      if (shareable)
        free_device_memory_later(p);
      else
        CUDA_CHECK_NOEXCEPT(cudaFreeAsync(p, release_stream()));
    }
  };
  std::unique_ptr<T, Free> m_ptr;
  size_t m_count = 0;
};

class CudaStream {
 public:
  // Non-blocking (never synchronises with the legacy default stream); high_priority: its blocks are scheduled
  // ahead of pending blocks of normal-priority streams (the GUI's reads next to a long GEMM).
  explicit CudaStream(bool high_priority = false) {
    cudaStream_t s;
    int lo = 0, hi = 0;
    if (high_priority) CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high_priority ? hi : lo));
    m_s.reset(s);
  }
  cudaStream_t get() const { return m_s.get(); }

 private:
  struct Destroy {
    void operator()(cudaStream_t s) const noexcept { CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s)); }
  };
  std::unique_ptr<CUstream_st, Destroy> m_s;
};

class CudaEvent {
 public:
  // flags: cudaEventDisableTiming for an event that only orders streams (cheaper to record and wait on).
  explicit CudaEvent(unsigned flags = cudaEventDefault) {
    cudaEvent_t e;
    CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    m_e.reset(e);
  }
  cudaEvent_t get() const { return m_e.get(); }

 private:
  struct Destroy {
    void operator()(cudaEvent_t e) const noexcept { CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e)); }
  };
  std::unique_ptr<CUevent_st, Destroy> m_e;
};

// The time of what `work` enqueues on `stream`, by a cudaEvent pair around it (waits for it to finish):
// every launch the engine times, the worker's excepted (it reports its CUDA errors as its own messages).
// The work is queued behind a closed LaunchGate and starts once all of it is queued, so what is timed is the
// GPU's time for it, not the host's for queuing it (launch_gate.cuh). `work` must not wait for the stream.
class StreamTimer {
 public:
  explicit StreamTimer(cudaStream_t stream) : m_stream(stream) {}
  template <class Work>
  double ms(Work&& work) {
    {
      LaunchGate::Held held(m_gate, m_stream);
      CUDA_CHECK(cudaEventRecord(m_start.get(), m_stream));
      work();
      CUDA_CHECK(cudaEventRecord(m_stop.get(), m_stream));
    }
    CUDA_CHECK(cudaEventSynchronize(m_stop.get()));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, m_start.get(), m_stop.get()));
    return double(t);
  }

 private:
  cudaStream_t m_stream;
  CudaEvent m_start, m_stop;
  LaunchGate m_gate;
};

// A cuBLAS handle, through the library opened on first use (cublas_api.hpp).
class CublasHandle {
 public:
  CublasHandle() {
    cublasHandle_t h;
    CUBLAS_CHECK(cublas_api().create(&h));
    m_h.reset(h);
  }
  cublasHandle_t get() const { return m_h.get(); }

 private:
  struct Destroy {
    void operator()(cublasHandle_t h) const noexcept { cublas_api().destroy(h); }
  };
  std::unique_ptr<cublasContext, Destroy> m_h;
};

}  // namespace ts

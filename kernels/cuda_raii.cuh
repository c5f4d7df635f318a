#pragma once
// Move-only owners of CUDA resources (unique_ptr with noexcept deleters, after nvbench's cuda_stream.cuh).
#include <cstddef>
#include <memory>

#include "cuda_check.cuh"

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

class CudaStream {
 public:
  CudaStream() {
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
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
  CudaEvent() {
    cudaEvent_t e;
    CUDA_CHECK(cudaEventCreate(&e));
    m_e.reset(e);
  }
  cudaEvent_t get() const { return m_e.get(); }

 private:
  struct Destroy {
    void operator()(cudaEvent_t e) const noexcept { CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e)); }
  };
  std::unique_ptr<CUevent_st, Destroy> m_e;
};

class CublasHandle {
 public:
  CublasHandle() {
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    m_h.reset(h);
  }
  cublasHandle_t get() const { return m_h.get(); }

 private:
  struct Destroy {
    void operator()(cublasHandle_t h) const noexcept { cublasDestroy(h); }
  };
  std::unique_ptr<cublasContext, Destroy> m_h;
};

}  // namespace ts

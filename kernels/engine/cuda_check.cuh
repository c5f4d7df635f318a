#pragma once
// CUDA errors become exceptions carrying the call, file, line and the runtime's message; the _NOEXCEPT twin
// only logs, for destructors.
#include <cstdio>
#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace ts {

class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& call, const char* file, int line, const std::string& msg)
      : std::runtime_error("CUDA error: " + msg + " in " + call + " (" + file + ":" + std::to_string(line) +
                           ")") {}
};

inline const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "cuBLAS error";
  }
}

}  // namespace ts

#define CUDA_CHECK(call)                                                             \
  do {                                                                               \
    cudaError_t ts_err_ = (call);                                                    \
    if (ts_err_ != cudaSuccess)                                                      \
      throw ::ts::CudaError(#call, __FILE__, __LINE__, cudaGetErrorString(ts_err_)); \
  } while (0)

#define CUDA_CHECK_NOEXCEPT(call)                                                                          \
  do {                                                                                                     \
    cudaError_t ts_err_ = (call);                                                                          \
    if (ts_err_ != cudaSuccess)                                                                            \
      std::fprintf(stderr, "CUDA error (ignored): %s in %s (%s:%d)\n", cudaGetErrorString(ts_err_), #call, \
                   __FILE__, __LINE__);                                                                    \
  } while (0)

#define CUBLAS_CHECK(call)                                                                \
  do {                                                                                    \
    cublasStatus_t ts_st_ = (call);                                                       \
    if (ts_st_ != CUBLAS_STATUS_SUCCESS)                                                  \
      throw ::ts::CudaError(#call, __FILE__, __LINE__, ::ts::cublas_status_name(ts_st_)); \
  } while (0)

// After a kernel launch: configuration errors surface here, not at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

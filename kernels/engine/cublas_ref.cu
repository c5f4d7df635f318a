// cuBLAS SGEMM: the trusted reference and the speed to beat.
// cuBLAS is column-major; a row-major C = A * B is the column-major C^T = B^T * A^T, so we pass B first and
// swap m and n. cublas: FP32 math (CUBLAS_DEFAULT_MATH, no TF32 unless NVIDIA_TF32_OVERRIDE says otherwise);
// cublas_tf32: CUBLAS_TF32_TENSOR_OP_MATH.
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include "kernels/engine/cublas_api.hpp"
#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/cuda_raii.cuh"
#include "kernels/engine/launch.hpp"
#include "kernels/engine/matrix_ops.cuh"

#include <algorithm>
#include <vector>

#include "core/engine/stats.hpp"

namespace ts {

cublasHandle_t thread_cublas_handle() {
  // One handle per thread (cuBLAS handles are not to be shared across threads): the engine's worker and the
  // tests.
  thread_local CublasHandle handle;
  return handle.get();
}

static void sgemm(const GemmArgs& a, void* stream, cublasMath_t math) {
  const CublasApi& api = cublas_api();
  cublasHandle_t h = thread_cublas_handle();
  CUBLAS_CHECK(api.set_stream(h, static_cast<cudaStream_t>(stream)));
  CUBLAS_CHECK(api.set_math_mode(h, math));
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(
      api.sgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &alpha, a.B, a.n, a.A, a.k, &beta, a.C, a.n));
}

// cuBLAS chooses (and hides) its kernels: no occupancy query, no instrumented build.
void launch_cublas(const GemmArgs& a, int /*tile*/, void* stream, LaunchQuery* q) {
  if (q) {
    *q = LaunchQuery{};
    return;
  }
  sgemm(a, stream, CUBLAS_DEFAULT_MATH);
}

// TF32 tensor cores: inputs rounded to TF32 inside cuBLAS, FP32 accumulation.
void launch_cublas_tf32(const GemmArgs& a, int /*tile*/, void* stream, LaunchQuery* q) {
  if (q) {
    *q = LaunchQuery{};
    return;
  }
  sgemm(a, stream, CUBLAS_TF32_TENSOR_OP_MATH);
}

double time_cublas_alone(const GemmArgs& a, bool tf32, int batch, void* stream) {
  const cublasMath_t math = tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  batch = std::max(1, batch);
  StreamTimer timer(static_cast<cudaStream_t>(stream));
  sgemm(a, stream, math);  // warm-up: cuBLAS picks and loads its kernel
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i)
    ms.push_back(timer.ms([&] {
      for (int j = 0; j < batch; ++j) sgemm(a, stream, math);
    }) / batch);
  return quantile(ms, 0.5);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entry (plain data: also compiled without nvcc).
namespace ts {

KernelEntry entry_cublas() {
  KernelInfo k =
      kernel_info("cublas", "cuBLAS SGEMM (FP32)",
                  "NVIDIA's tuned FP32 GEMM (no TF32): the trusted reference and the speed to beat.", {}, {},
                  0, "chosen by cuBLAS");
  k.is_reference = true;
  return {k, TS_LAUNCHER(launch_cublas)};
}

KernelEntry entry_cublas_tf32() {
  KernelInfo k = kernel_info("cublas_tf32", "cuBLAS TF32 (tensor cores)",
                             "cuBLAS with TF32 tensor-core math: the speed to beat for the TF32 kernels.", {},
                             {}, 0, "chosen by cuBLAS");
  k.tf32 = true;
  k.min_sm = 80;
  return {k, TS_LAUNCHER(launch_cublas_tf32)};
}

}  // namespace ts

#include "registry.hpp"

#include <stdexcept>

#include "cpu_backend.hpp"
#include "cpu_gemm.hpp"

#if defined(TILESCOPE_HAVE_CUDA)
#include "cuda_backend.hpp"
#define TS_CUDA(fn) fn
#else
#define TS_CUDA(fn) nullptr
#endif

namespace ts {

namespace {
KernelEntry entry(KernelInfo info, CudaLaunchFn cuda) {
  info.has_cuda = cuda != nullptr;
  return KernelEntry{std::move(info), cuda};
}
}  // namespace

const std::vector<KernelEntry>& register_kernels() {
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> e;
    e.push_back(entry({"naive",
                       "Naive",
                       "One thread per element of C reading A and B straight from global memory: simplest, "
                       "but every product costs two global loads.",
                       {8, 16, 32},
                       16,
                       "TILE x TILE",
                       false,
                       false,
                       false,
                       &cpu_gemm_naive},
                      TS_CUDA(&launch_naive)));
    e.push_back(
        entry({"tiled",
               "Classic shared-memory tiled",
               "Each block stages TILE x TILE tiles of A and B in shared memory and reuses each loaded "
               "value TILE times; costs two __syncthreads() per step and TILE^2 threads per block.",
               {8, 16, 32},
               16,
               "TILE x TILE",
               false,
               false,
               false,
               &cpu_gemm_tiled},
              TS_CUDA(&launch_tiled)));
    e.push_back(entry({"cublas",
                       "cuBLAS SGEMM (reference)",
                       "NVIDIA's tuned FP32 GEMM (no TF32): the trusted reference and the speed to beat.",
                       {},
                       0,
                       "chosen by cuBLAS",
                       true,
                       false,
                       false,
                       nullptr},
                      TS_CUDA(&launch_cublas)));
    return e;
  }();
  return entries;
}

std::vector<KernelInfo> kernel_infos() {
  std::vector<KernelInfo> v;
  for (const auto& e : register_kernels()) v.push_back(e.info);
  return v;
}

bool cuda_compiled() {
#if defined(TILESCOPE_HAVE_CUDA)
  return true;
#else
  return false;
#endif
}

int cuda_device_count(std::string* why) {
#if defined(TILESCOPE_HAVE_CUDA)
  return cuda_devices(why);
#else
  if (why) *why = "this build has no CUDA backend (built without nvcc)";
  return 0;
#endif
}

std::shared_ptr<Backend> make_backend(BackendChoice choice, std::string* note) {
  if (choice == BackendChoice::Cpu) return std::make_shared<CpuBackend>(kernel_infos());
  std::string why;
  const int n = cuda_device_count(&why);
#if defined(TILESCOPE_HAVE_CUDA)
  if (n > 0) return make_cuda_backend(0);
#endif
  if (choice == BackendChoice::Cuda) throw std::runtime_error("the CUDA backend is not available: " + why);
  if (note) *note = "no CUDA device (" + why + "): using the CPU backend";
  (void)n;
  return std::make_shared<CpuBackend>(kernel_infos());
}

}  // namespace ts

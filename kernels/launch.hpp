#pragma once
// The launcher signature shared by every CUDA kernel file (plain C++: the stream is passed opaquely).
#include <cstdint>

namespace ts {

struct GemmArgs {
  const float* A;  // device, m x k row-major
  const float* B;  // device, k x n row-major
  float* C;        // device, m x n row-major
  int64_t m, n, k;
};

// Launches one GEMM on `stream` (a cudaStream_t). Throws CudaError when the launch fails.
using CudaLaunchFn = void (*)(const GemmArgs& args, int tile, void* stream);

#if defined(TILESCOPE_HAVE_CUDA)
// One per kernel file (kernels/<name>.cu), registered in registry.cpp.
void launch_naive(const GemmArgs& args, int tile, void* stream);
void launch_coalesced(const GemmArgs& args, int tile, void* stream);
void launch_tiled(const GemmArgs& args, int tile, void* stream);
void launch_tiled_nosync(const GemmArgs& args, int tile, void* stream);
void launch_tiled_floork(const GemmArgs& args, int tile, void* stream);
void launch_blocktile1d(const GemmArgs& args, int tile, void* stream);
void launch_blocktile2d(const GemmArgs& args, int tile, void* stream);
void launch_vectorized(const GemmArgs& args, int tile, void* stream);
void launch_warptile(const GemmArgs& args, int tile, void* stream);
void launch_async(const GemmArgs& args, int tile, void* stream);
void launch_wmma_tf32(const GemmArgs& args, int tile, void* stream);
void launch_cublas(const GemmArgs& args, int tile, void* stream);
void launch_cublas_tf32(const GemmArgs& args, int tile, void* stream);
#endif

}  // namespace ts

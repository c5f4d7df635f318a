#pragma once
// The launcher signature shared by every CUDA kernel file (plain C++: the stream is passed opaquely).
#include <cstddef>
#include <cstdint>

#include "core/engine/schedule.hpp"

namespace ts {

struct GemmArgs {
  const float* A;  // device, m x k row-major
  const float* B;  // device, k x n row-major
  float* C;        // device, m x n row-major
  int64_t m, n, k;
  TileRecord* trace = nullptr;  // device, one record per block: launch the instrumented build
  // Device memory a kernel needs beside A, B and C (LaunchQuery::workspace_bytes of this launch), zeroed
  // once when allocated; the kernel leaves it ready for its next launch. Null when none is needed.
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// What a launch would be, for occupancy queries: the kernel function, grid, block and dynamic shared memory.
struct LaunchQuery {
  const void* func = nullptr;
  unsigned grid_x = 0, grid_y = 0;
  unsigned grid_z = 1;  // blocks per tile of C (split-K: one per slice of K); trace records grid_x * y * z
  size_t workspace_bytes = 0;  // GemmArgs::workspace this launch needs
  int threads = 0;
  size_t dynamic_smem = 0;
  int tile_m = 0, tile_n = 0;  // rows and columns of C per block
  bool x_covers_rows = false;  // blockIdx.x walks down M (the uncoalesced naive kernel) instead of along N
  // blockIdx.z takes a share of the tile's columns instead of a slice of K (a cluster of blocks that make one
  // tile of C together: wgmma_tf32 tile 512, tile_n / grid_z columns per block).
  bool z_splits_columns = false;
  int k_step = 0;  // split-K: the K steps its slices are cut in (TileTrace::k_step); 0 otherwise
  // Stream-K (TileTrace::k_segments): grid_x * grid_y * grid_z is the trace's records (tiles x the most
  // segments a tile has), and the kernel launches launch_blocks blocks instead.
  bool k_segments = false;
  int64_t launch_blocks = 0;  // blocks launched, when not grid_x * grid_y * grid_z (0: that product)
  // k_segments and some tiles are shared by blocks in K segments at this shape (stream-K where its plan has
  // units, wgmma_tf32's tail): the blocks differ in length and do not run in waves. False where every block
  // makes whole tiles (stream-K at 4096^3 is rung 9's launch alone), whatever the trace's form.
  bool shares_tiles = false;
  // Set by the caller when known: the device's SM count (stream-K plans its units by it; 0: the launcher asks
  // the device, or an offline query plans for an H100's 132).
  int sm_count = 0;
  // Set by the caller: describe the launch without any CUDA call (no device needed; the build-time resource
  // table is made this way). Without it, a query also prepares the kernel (e.g. its dynamic shared memory
  // limit) so that the occupancy API gives the figures of a real launch.
  bool offline = false;
};

// Launches one GEMM on `stream` (a cudaStream_t), or with `query` set fills it and launches nothing.
// Throws CudaError when the launch fails, std::invalid_argument for a tile the kernel lacks.
using CudaLaunchFn = void (*)(const GemmArgs& args, int tile, void* stream, LaunchQuery* query);

#if defined(TILESCOPE_HAVE_CUDA)
// One per kernel, each in its rung file (kernels/rungs/NN_name.cu) beside its registry entry
// (kernel_entry.hpp).
void launch_naive(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_coalesced(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_tiled(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_tiled_nosync(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_tiled_floork(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_tiled_mirror(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_blocktile1d(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_blocktile2d(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_vectorized(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_warptile(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_async(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_pipelined(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_splitk(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_streamk(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_wmma_tf32(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_mma_tf32(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
#if defined(TILESCOPE_HAVE_WGMMA)
// Compiled for sm_90a (kernels/CMakeLists.txt), only when the architecture list holds 90.
void launch_wgmma_tf32(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
#endif
void launch_cublas(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
void launch_cublas_tf32(const GemmArgs& args, int tile, void* stream, LaunchQuery* query = nullptr);
// cuBLAS of one precision timed on its own (where it was not interleaved with the kernel's samples): the
// median of 5 samples after a warm-up, each the mean of `batch` launches back to back, as the kernel's
// samples were (RunResult::launches_per_sample), so both sides carry the same share of launch gaps.
double time_cublas_alone(const GemmArgs& args, bool tf32, int batch, void* stream);
#endif

}  // namespace ts

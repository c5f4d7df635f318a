#pragma once
// [SECTION] A registry entry: one kernel's metadata (KernelInfo), its CUDA launcher and its CPU algorithm.
// Each kernel file defines its entries beside its launcher, as complete values built from nothing (no entry
// starts from another's fields, so none can silently inherit a tile list, a label or a flag). The kernel
// files are compiled by nvcc when their device code is built, and as plain C++ for their entries alone
// otherwise (a build without nvcc; 13_wgmma_tf32.cu without sm_90): TS_LAUNCHER is then a null launcher.
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/engine/cpu_gemm.hpp"
#include "kernels/engine/launch.hpp"

namespace ts {

struct KernelEntry {
  KernelInfo info;
  CudaLaunchFn cuda = nullptr;  // nullptr: no CUDA implementation in this build
};

#if defined(__CUDACC__)
#define TS_LAUNCHER(fn) (&(fn))
#else
#define TS_LAUNCHER(fn) (static_cast<::ts::CudaLaunchFn>(nullptr))
#endif

// A kernel's metadata with every field that has no default given (flags are set by the caller).
KernelInfo kernel_info(std::string id, std::string title, std::string description, std::vector<int> tiles,
                       std::vector<std::string> tile_labels, int default_tile, std::string threads_per_block);

// A tile as its launcher builds it (KernelInfo::geometry): a bm x bn block tile of C summed in bk-deep steps,
// `stages` of them in shared memory at once; thread 0's outputs as pieces_m x pieces_n pieces of piece_m x
// piece_n, step_m rows and step_n columns apart; warp 0's tile (0: none).
TileGeometry block_tile(int bm, int bn, int bk, int stages = 1);
TileGeometry& thread_pieces(TileGeometry& g, int piece_m, int piece_n, int pieces_m = 1, int pieces_n = 1,
                            int step_m = 0, int step_n = 0);
TileGeometry& warp_tile(TileGeometry& g, int warp_m, int warp_n);

// The entries, one function per kernel, defined in the kernel's own file: kernels/rungs/NN_name.cu, numbered
// in ladder order (cuBLAS, the reference: kernels/engine/cublas_ref.cu).
KernelEntry entry_naive();         // 01_naive_coalesced.cu
KernelEntry entry_coalesced();     // 01_naive_coalesced.cu
KernelEntry entry_tiled();         // 03_tiled.cu
KernelEntry entry_tiled_nosync();  // 03_tiled.cu
KernelEntry entry_tiled_floork();  // 03_tiled.cu
KernelEntry entry_tiled_mirror();  // 03_tiled.cu
KernelEntry entry_blocktile1d();   // 04_blocktile1d.cu
KernelEntry entry_blocktile2d();   // 05_blocktile2d.cu
KernelEntry entry_vectorized();    // 06_vectorized.cu
KernelEntry entry_warptile();      // 07_warptile.cu
KernelEntry entry_async();         // 08_async.cu
KernelEntry entry_pipelined();     // 09_pipelined_splitk.cu
KernelEntry entry_splitk();        // 09_pipelined_splitk.cu
KernelEntry entry_streamk();       // 10_streamk.cu
KernelEntry entry_wmma_tf32();     // 11_wmma_tf32.cu
KernelEntry entry_mma_tf32();      // 12_mma_tf32.cu
KernelEntry entry_wgmma_tf32();    // 13_wgmma_tf32.cu
KernelEntry entry_cublas();        // ../engine/cublas_ref.cu
KernelEntry entry_cublas_tf32();   // ../engine/cublas_ref.cu

}  // namespace ts

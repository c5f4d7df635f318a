#include "kernels/engine/registry.hpp"

#include <stdexcept>

#include "core/engine/cpu_backend.hpp"
#include "kernels/user/nvrtc_workshop.hpp"

#if defined(TILESCOPE_HAVE_CUDA)
#include "kernels/engine/cuda_backend.hpp"
#endif

namespace ts {

TileGeometry block_tile(int bm, int bn, int bk, int stages) {
  TileGeometry g;
  g.block_m = bm;
  g.block_n = bn;
  g.block_k = bk;
  g.stages = stages;
  return g;
}

TileGeometry& thread_pieces(TileGeometry& g, int piece_m, int piece_n, int pieces_m, int pieces_n, int step_m,
                            int step_n) {
  g.piece_m = piece_m;
  g.piece_n = piece_n;
  g.pieces_m = pieces_m;
  g.pieces_n = pieces_n;
  g.step_m = step_m;
  g.step_n = step_n;
  return g;
}

TileGeometry& warp_tile(TileGeometry& g, int warp_m, int warp_n) {
  g.warp_m = warp_m;
  g.warp_n = warp_n;
  return g;
}

KernelInfo kernel_info(std::string id, std::string title, std::string description, std::vector<int> tiles,
                       std::vector<std::string> tile_labels, int default_tile,
                       std::string threads_per_block) {
  KernelInfo k;
  k.id = std::move(id);
  k.title = std::move(title);
  k.description = std::move(description);
  k.tiles = std::move(tiles);
  k.tile_labels = std::move(tile_labels);
  k.default_tile = default_tile;
  k.threads_per_block = std::move(threads_per_block);
  return k;
}

const std::vector<KernelEntry>& register_kernels() {
  // The ladder, slowest to fastest, then cuBLAS, then the teaching variants. Each description says what the
  // rung buys and what it costs; the kernel files say why in more detail.
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> e = {
        entry_naive(),        entry_coalesced(),    entry_tiled(),       entry_blocktile1d(),
        entry_blocktile2d(),  entry_vectorized(),   entry_warptile(),    entry_async(),
        entry_pipelined(),    entry_splitk(),       entry_streamk(),     entry_wmma_tf32(),
        entry_mma_tf32(),     entry_wgmma_tf32(),   entry_cublas(),      entry_cublas_tf32(),
        entry_tiled_nosync(), entry_tiled_floork(), entry_tiled_mirror()};
    for (KernelEntry& k : e) {
      k.info.has_cuda = k.cuda != nullptr;
      // Our kernels carry an instrumented build (kTrace); cuBLAS's are closed.
      k.info.traceable = k.cuda != nullptr && !k.info.is_reference && k.info.id.rfind("cublas", 0) != 0;
    }
    return e;
  }();
  return entries;
}

std::vector<KernelInfo> builtin_kernel_infos() {
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

std::string cuda_build_note() {
#if defined(TILESCOPE_HAVE_CUDA) && defined(TILESCOPE_CUDA_TOOLKIT_VERSION)
  return "built with the CUDA " TILESCOPE_CUDA_TOOLKIT_VERSION " toolkit";
#elif defined(TILESCOPE_HAVE_CUDA)
  return "built with CUDA";
#else
  return "built without CUDA (no nvcc at build time)";
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

std::shared_ptr<Backend> make_backend(BackendChoice choice, std::string* note, int device) {
  // Every backend has a workshop of its own for a person's kernels: the CPU backend's builds for any
  // architecture and runs nothing on a GPU.
  if (choice == BackendChoice::Cpu)
    return std::make_shared<CpuBackend>(builtin_kernel_infos(), std::make_shared<NvrtcWorkshop>(-1, 0),
                                        cuda_build_note());
  std::string why;
  const int n = cuda_device_count(&why);
  if (n > 0 && (device < 0 || device >= n))
    throw ValidationError("there is no CUDA device " + std::to_string(device) + ": this machine has " +
                          std::to_string(n) + " (0" +
                          (n > 1 ? " to " + std::to_string(n - 1) : std::string()) + ")");
#if defined(TILESCOPE_HAVE_CUDA)
  if (n > 0) return make_cuda_backend(device);
#endif
  if (choice == BackendChoice::Cuda) throw std::runtime_error("the CUDA backend is not available: " + why);
  if (note) *note = "no CUDA device (" + why + "): using the CPU backend";
  (void)n;
  return std::make_shared<CpuBackend>(
      builtin_kernel_infos(), std::make_shared<NvrtcWorkshop>(-1, 0),
      cuda_compiled() ? cuda_build_note() + ", but " + why : cuda_build_note());
}

}  // namespace ts

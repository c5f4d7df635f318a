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

const std::vector<KernelEntry>& register_kernels() {
  // The ladder, slowest to fastest, then the teaching variants. Each description says what the rung buys and
  // what it costs; the kernel files say why in more detail.
  static const std::vector<KernelEntry> entries = [] {
    const std::vector<int> classic = {8, 16, 32};
    const std::vector<std::string> classic_labels = {
        "8 x 8 threads, 8 x 8 tile", "16 x 16 threads, 16 x 16 tile", "32 x 32 threads, 32 x 32 tile"};
    std::vector<KernelEntry> e;
    auto add = [&](KernelInfo info, CudaLaunchFn cuda) {
      info.has_cuda = cuda != nullptr;
      // Our kernels carry an instrumented build (kTrace); cuBLAS's are closed.
      info.traceable = cuda != nullptr && info.id.rfind("cublas", 0) != 0;
      e.push_back(KernelEntry{std::move(info), cuda});
    };
    KernelInfo k;

    k = {};
    k.id = "naive";
    k.title = "1. Naive (uncoalesced)";
    k.description =
        "One thread per element of C with threadIdx.x walking down rows: simplest, but a warp's loads "
        "and stores hit 32 different rows, so every access is its own transaction.";
    k.tiles = classic;
    k.tile_labels = classic_labels;
    k.default_tile = 16;
    k.threads_per_block = "TILE x TILE";
    k.cpu = &cpu_gemm_naive;
    add(k, TS_CUDA(&launch_naive));

    k.id = "coalesced";
    k.title = "2. Coalesced";
    k.description =
        "The naive kernel with threadIdx.x walking along a row of C: a warp reads one broadcast value "
        "of A and 32 consecutive values of B; still two global loads per multiply-add.";
    k.cpu = &cpu_gemm_naive;
    add(k, TS_CUDA(&launch_coalesced));

    k.id = "tiled";
    k.title = "3. Classic shared-memory tiled";
    k.description =
        "Each block stages TILE x TILE tiles of A and B in shared memory and reuses each loaded value "
        "TILE times; costs two __syncthreads() per step and TILE^2 threads per block.";
    k.cpu = &cpu_gemm_tiled;
    add(k, TS_CUDA(&launch_tiled));

    k = {};
    k.id = "blocktile1d";
    k.title = "4. 1-D register blocking";
    k.description =
        "Each thread computes 8 outputs down a column from registers, reusing each B value 8 times: "
        "fewer shared-memory loads per FMA, at the cost of 8 accumulators per thread.";
    k.tiles = {64};
    k.tile_labels = {"block 64 x 64 x 8, thread 8 x 1, 512 threads"};
    k.default_tile = 64;
    k.threads_per_block = "512";
    add(k, TS_CUDA(&launch_blocktile1d));

    k = {};
    k.id = "blocktile2d";
    k.title = "5. 2-D register blocking";
    k.description =
        "Each thread computes an outer product (up to 8 x 8) per k: 1/4 of a shared-memory load per "
        "FMA, paid for with about 100 registers per thread.";
    k.tiles = {64, 128};
    k.tile_labels = {"block 64 x 64 x 8, thread 4 x 4, 256 threads",
                     "block 128 x 128 x 8, thread 8 x 8, 256 threads"};
    k.default_tile = 128;
    k.threads_per_block = "256";
    add(k, TS_CUDA(&launch_blocktile2d));

    k.id = "vectorized";
    k.title = "6. Vectorized loads";
    k.description =
        "2-D blocking with 128-bit loads and stores and A transposed in shared memory: a quarter of "
        "the load instructions; needs K and N to be multiples of 4 for the vector path.";
    add(k, TS_CUDA(&launch_vectorized));

    k = {};
    k.id = "warptile";
    k.title = "7. Warp tiling";
    k.description =
        "Block tile split into 32 x 64 warp tiles, each thread's 8 x 8 outputs spread as 4 x 4 pieces: "
        "shared-memory reads without bank conflicts, at the cost of harder index arithmetic.";
    k.tiles = {128};
    k.tile_labels = {"block 128 x 128 x 8, warp 32 x 64, thread 8 x 8, 256 threads"};
    k.default_tile = 128;
    k.threads_per_block = "256";
    add(k, TS_CUDA(&launch_warptile));

    k.id = "async";
    k.title = "8. Double-buffered (cp.async)";
    k.description =
        "Two shared-memory stages filled by cp.async while the other is computed on: load latency "
        "hides behind FMAs, for twice the shared memory and pipeline bookkeeping.";
    k.tile_labels = {"block 128 x 128 x 16, warp 32 x 64, thread 8 x 8, 2 stages, 256 threads"};
    k.min_sm = 80;
    add(k, TS_CUDA(&launch_async));

    k.id = "pipelined";
    k.title = "9. Software pipeline";
    k.description =
        "Three cp.async stages, A transposed in shared memory, fragments double-buffered in registers and "
        "one barrier per tile, so loads and barriers hide behind FFMAs; tile 256 adds 8 x 16 outputs per "
        "thread. Costs up to 243 registers per thread and index arithmetic that is harder to follow.";
    k.tiles = {128, 256};
    k.tile_labels = {"block 128 x 128 x 16, thread 8 x 8, 3 stages, 2 blocks/SM, 256 threads",
                     "block 128 x 256 x 8, thread 8 x 16, 3 stages, 256 threads"};
    k.default_tile = 256;
    add(k, TS_CUDA(&launch_pipelined));

    k = {};
    k.id = "wmma_tf32";
    k.title = "10. Tensor cores, TF32 (WMMA)";
    k.description =
        "Warps issue 16 x 16 x 8 TF32 tensor-core MMAs fed by a cp.async pipeline: many times the "
        "FP32 throughput, but inputs are rounded to a 10-bit mantissa.";
    k.tiles = {128};
    k.tile_labels = {"block 128 x 128 x 32, warp 64 x 32, 2 stages, 256 threads"};
    k.default_tile = 128;
    k.threads_per_block = "256";
    k.tf32 = true;
    k.min_sm = 80;
    add(k, TS_CUDA(&launch_wmma_tf32));

    k.id = "mma_tf32";
    k.title = "11. Tensor cores, TF32 (mma.sync)";
    k.description =
        "The PTX instruction under WMMA, with fragments loaded by hand from padded shared memory (no bank "
        "conflicts), 64 x 64 warp tiles and a 4-stage cp.async pipeline: about twice the WMMA rung, for "
        "hand-written register layouts; on Hopper still the older, slower tensor-core path.";
    k.tiles = {128, 256};
    k.tile_labels = {"block 128 x 128 x 32, warp 64 x 32, 3 stages, 256 threads, 2 blocks per SM",
                     "block 128 x 256 x 32, warp 64 x 64, 4 stages, 256 threads"};
    k.default_tile = 256;
    add(k, TS_CUDA(&launch_mma_tf32));

    k.id = "wgmma_tf32";
    k.title = "12. Hopper warpgroup MMA, TF32 (wgmma)";
    k.description =
        "Four warps issue one asynchronous 64 x N x 8 MMA that reads A straight from shared memory (C^T = "
        "B^T A^T, since TF32 wgmma wants k-contiguous tiles), tiles loaded by TMA: Hopper's full tensor-core "
        "rate, for sm_90a-only code, tensor maps and asynchronous-register rules.";
    k.tiles = {256};
    k.tile_labels = {
        "block 256 x 128 x 32, 2 warpgroups of 64 x 256 (C^T), 4 stages, TMA (cp.async when K or N "
        "is not a multiple of 4)"};
    k.default_tile = 256;
    k.min_sm = 90;
#if defined(TILESCOPE_HAVE_WGMMA)
    add(k, &launch_wgmma_tf32);
#else
    add(k, nullptr);  // built without sm_90 in CMAKE_CUDA_ARCHITECTURES
#endif

    k = {};
    k.id = "cublas";
    k.title = "cuBLAS SGEMM (FP32, reference)";
    k.description = "NVIDIA's tuned FP32 GEMM (no TF32): the trusted reference and the speed to beat.";
    k.threads_per_block = "chosen by cuBLAS";
    k.is_reference = true;
    add(k, TS_CUDA(&launch_cublas));

    k.id = "cublas_tf32";
    k.title = "cuBLAS TF32 (tensor cores)";
    k.description = "cuBLAS with TF32 tensor-core math: the speed to beat for the TF32 kernels.";
    k.is_reference = false;
    k.tf32 = true;
    k.min_sm = 80;
    add(k, TS_CUDA(&launch_cublas_tf32));

    k = {};
    k.id = "tiled_nosync";
    k.title = "Teaching: tiled without the second __syncthreads()";
    k.description =
        "Broken on purpose: fast threads overwrite the shared tiles while slow ones still read them "
        "(a race; wrong values appear where warps drift apart).";
    k.tiles = classic;
    k.tile_labels = classic_labels;
    k.default_tile = 32;
    k.threads_per_block = "TILE x TILE";
    k.teaching = true;
    add(k, TS_CUDA(&launch_tiled_nosync));

    k.id = "tiled_floork";
    k.title = "Teaching: tiled with K / TILE steps";
    k.description =
        "Broken on purpose: loops K / TILE times instead of ceil(K / TILE), so whenever TILE does not "
        "divide K the last partial tile is dropped and every element of C is wrong.";
    k.default_tile = 16;
    k.cpu = &cpu_gemm_tiled_floork;
    add(k, TS_CUDA(&launch_tiled_floork));
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

// Rungs 1 and 2: one thread per element of C, a dot product straight out of global memory.
// naive: threadIdx.x walks down a column of C (rows), so the 32 threads of a warp read 32 different rows of A
//   (32 separate memory transactions) and write C with a stride of N: uncoalesced.
// coalesced: threadIdx.x walks along a row of C, so a warp reads one broadcast value of A and 32 consecutive
//   values of B, and writes 32 consecutive values of C. Same arithmetic, far fewer transactions.
// Both still load two values per multiply-add and reuse nothing on chip: bound by memory, not by FLOPs.
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include "kernels/rungs/gemm_common.cuh"

namespace ts {

template <int T, bool kCoalesced, bool kTrace>
__device__ __forceinline__ void naive_body(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int64_t m, int64_t n, int64_t k,
                                           TileRecord* trace) {
  trace_begin<kTrace>(trace);
  const int64_t fast = int64_t(blockIdx.x) * T + threadIdx.x;
  const int64_t slow = int64_t(blockIdx.y) * T + threadIdx.y;
  const int64_t row = kCoalesced ? slow : fast;
  const int64_t col = kCoalesced ? fast : slow;
  if (row < m && col < n) {  // no early return: every thread must reach trace_end
    float acc = 0.0f;
    for (int64_t p = 0; p < k; ++p) acc += A[row * k + p] * B[p * n + col];
    C[row * n + col] = acc;
  }
  trace_end<kTrace>(trace);
}

// The plain build, exactly as the compiler likes it. (The coalesced variant runs 2.9-3.2 TFLOP/s at 4096^3 on
// an H100, its traced build 5.2: the two compile to different loops, the plain one with more 64-bit address
// arithmetic per step; holding this build to 32 registers too changed nothing. Not pursued yet.)
template <int T, bool kCoalesced>
__global__ void naive_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  naive_body<T, kCoalesced, false>(A, B, C, m, n, k, trace);
}

// The instrumented build: the same body with kTrace, capped at the plain build's 32 registers with
// __maxnreg__, so tracing does not lose resident blocks (uncapped, T=32 traced ran 1.46x slower on an H100).
// Not with
// __launch_bounds__(T*T, 2048/(T*T)): that also tells the compiler the block size, it then laid out a
// different main loop, and the traced TILE 32 build ran 6 % slower than the plain one (0.99x with
// __maxnreg__).
template <int T, bool kCoalesced>
__global__ void __maxnreg__(32)
    naive_kernel_traced(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                        int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  naive_body<T, kCoalesced, true>(A, B, C, m, n, k, trace);
}

template <int T, bool kCoalesced>
static void launch_t(const GemmArgs& a, cudaStream_t s, LaunchQuery* q) {
  // x covers the dimension threadIdx.x walks along; trace records are indexed by (blockIdx.y, blockIdx.x).
  const dim3 block(T, T), grid(blocks_for(kCoalesced ? a.n : a.m, T), blocks_for(kCoalesced ? a.m : a.n, T));
  launch_or_query(naive_kernel<T, kCoalesced>, naive_kernel_traced<T, kCoalesced>, grid, block, 0, s, q, T, T,
                  a);
  if (q) q->x_covers_rows = !kCoalesced;
}

template <bool kCoalesced>
static void launch(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (tile) {
    case 8:
      return launch_t<8, kCoalesced>(a, s, q);
    case 16:
      return launch_t<16, kCoalesced>(a, s, q);
    case 32:
      return launch_t<32, kCoalesced>(a, s, q);
  }
  bad_tile(kCoalesced ? "coalesced" : "naive", tile);
}

void launch_naive(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  launch<false>(a, tile, stream, q);
}
void launch_coalesced(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  launch<true>(a, tile, stream, q);
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entries (plain data: also compiled without nvcc).
namespace ts {

namespace {
const std::vector<int> kTiles = {8, 16, 32};
const std::vector<std::string> kLabels = {"8 x 8 threads, 8 x 8 tile", "16 x 16 threads, 16 x 16 tile",
                                          "32 x 32 threads, 32 x 32 tile"};
// A TILE x TILE block of threads, one output each, nothing staged in shared memory.
std::vector<TileGeometry> geometry() {
  std::vector<TileGeometry> out;
  for (int t : kTiles) {
    TileGeometry g = block_tile(t, t, 0);
    out.push_back(thread_pieces(g, 1, 1));
  }
  return out;
}
}  // namespace

KernelEntry entry_naive() {
  KernelInfo k =
      kernel_info("naive", "1. Naive (uncoalesced)",
                  "One thread per element of C with threadIdx.x walking down rows: simplest, but a "
                  "warp's loads and stores hit 32 different rows, so every access is its own "
                  "transaction.",
                  kTiles, kLabels, 16, "TILE x TILE");
  k.geometry = geometry();
  k.cpu = &cpu_gemm_naive;
  k.cpu_blocks_c = true;
  return {k, TS_LAUNCHER(launch_naive)};
}

KernelEntry entry_coalesced() {
  KernelInfo k =
      kernel_info("coalesced", "2. Coalesced",
                  "The naive kernel with threadIdx.x walking along a row of C: a warp reads one "
                  "broadcast value of A and 32 consecutive values of B; still two global loads per "
                  "multiply-add.",
                  kTiles, kLabels, 16, "TILE x TILE");
  k.geometry = geometry();
  k.cpu = &cpu_gemm_naive;
  k.cpu_blocks_c = true;
  return {k, TS_LAUNCHER(launch_coalesced)};
}

}  // namespace ts

// Rung 3: the classic shared-memory tiled SGEMM (the textbook kernel TileScope grew from).
// A TILE x TILE thread block computes a TILE x TILE tile of C. For each of ceil(K / TILE) steps it stages one
// tile of A and one of B in shared memory, waits, accumulates TILE products per thread, and waits again.
// What it buys: every value loaded from global memory is used TILE times from shared memory.
// What it costs: two block-wide barriers per step, one output per thread (so every FMA still needs two
// shared-memory loads), and TILE^2 threads per block, which limits resident blocks per SM.
//
// The three teaching variants are the same code with one template flag flipped (never a copy):
//   kSecondSync = false: no barrier after the compute loop, so fast threads overwrite the tiles while slow
//     ones still read them (a shared-memory race: compute-sanitizer racecheck reports it).
//   kCeilSteps = false: K / TILE steps instead of ceil(K / TILE), dropping the last partial tile whenever K
//     is not a multiple of TILE (every element of C is then wrong by the missing products).
//   kMirror = true: assumes C = A B is symmetric because A and B are, so blocks below the diagonal do nothing
//     and every block on or above it writes its upper-triangle outputs twice, at (row, col) and (col, row).
//     For symmetric A and B the lower triangle then holds (A B)^T = B A, which is not A B unless they
//     commute: the error map is a triangle. On a shape that is not square, part of C is never written.
#include "kernels/rungs/kernel_entry.hpp"

#if defined(__CUDACC__)
#include "kernels/rungs/gemm_common.cuh"

namespace ts {

template <int T, bool kSecondSync, bool kCeilSteps, bool kMirror, bool kTrace>
__device__ __forceinline__ void tiled_body(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int64_t m, int64_t n, int64_t k,
                                           TileRecord* trace) {
  trace_begin<kTrace>(trace);
  if (kMirror && blockIdx.x < blockIdx.y) {  // below the diagonal: "the mirror will fill it in"
    trace_end<kTrace>(trace);
    return;
  }
  __shared__ float As[T][T];
  __shared__ float Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = int64_t(blockIdx.y) * T + ty;
  const int64_t col = int64_t(blockIdx.x) * T + tx;
  const int64_t steps = kCeilSteps ? (k + T - 1) / T : k / T;
  float acc = 0.0f;
  for (int64_t s = 0; s < steps; ++s) {
    // Bounds-checked loads: past the edge of A or B, load zero, which adds nothing to the dot product.
    As[ty][tx] = load_or_zero(A, row, s * T + tx, m, k, k);
    Bs[ty][tx] = load_or_zero(B, s * T + ty, col, k, n, n);
    __syncthreads();  // the whole tile must be loaded before anyone reads it
#pragma unroll
    for (int p = 0; p < T; ++p) acc += As[ty][p] * Bs[p][tx];
    if (kSecondSync) __syncthreads();  // and fully read before the next step overwrites it
  }
  if (kMirror) {
    // Only the upper triangle (col >= row) is computed; each value is written at (row, col) and mirrored to
    // (col, row) where that is inside C.
    if (row < m && col < n && col >= row) {
      C[row * n + col] = acc;
      if (col != row && col < m && row < n) C[col * n + row] = acc;
    }
  } else if (row < m && col < n) {
    C[row * n + col] = acc;
  }
  trace_end<kTrace>(trace);
}

// The plain build, exactly as the compiler likes it.
template <int T, bool kSecondSync, bool kCeilSteps, bool kMirror>
__global__ void tiled_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  tiled_body<T, kSecondSync, kCeilSteps, kMirror, false>(A, B, C, m, n, k, trace);
}

// The instrumented build: the same body with kTrace, capped at the plain build's 32 registers with
// __maxnreg__, so tracing does not lose resident blocks (uncapped, T=32 traced ran 1.46x slower on an H100).
// Not with
// __launch_bounds__(T*T, 2048/(T*T)): that also tells the compiler the block size, it then laid out a
// different main loop, and the traced TILE 32 build ran 6 % slower than the plain one (0.99x with
// __maxnreg__).
template <int T, bool kSecondSync, bool kCeilSteps, bool kMirror>
__global__ void __maxnreg__(32)
    tiled_kernel_traced(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                        int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  tiled_body<T, kSecondSync, kCeilSteps, kMirror, true>(A, B, C, m, n, k, trace);
}

template <bool kSecondSync, bool kCeilSteps, bool kMirror = false>
static void launch(const GemmArgs& a, int tile, void* stream, LaunchQuery* q, const char* name) {
  auto s = static_cast<cudaStream_t>(stream);
  auto go = [&](auto t) {
    constexpr int T = decltype(t)::value;
    const dim3 block(T, T), grid(blocks_for(a.n, T), blocks_for(a.m, T));
    launch_or_query(tiled_kernel<T, kSecondSync, kCeilSteps, kMirror>,
                    tiled_kernel_traced<T, kSecondSync, kCeilSteps, kMirror>, grid, block, 0, s, q, T, T, a);
  };
  switch (tile) {
    case 8:
      return go(std::integral_constant<int, 8>());
    case 16:
      return go(std::integral_constant<int, 16>());
    case 32:
      return go(std::integral_constant<int, 32>());
  }
  bad_tile(name, tile);
}

void launch_tiled(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  launch<true, true>(a, tile, stream, q, "tiled");
}
void launch_tiled_nosync(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  launch<false, true>(a, tile, stream, q, "tiled_nosync");
}
void launch_tiled_floork(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  launch<true, false>(a, tile, stream, q, "tiled_floork");
}
void launch_tiled_mirror(const GemmArgs& a, int tile, void* stream, LaunchQuery* q) {
  launch<true, true, true>(a, tile, stream, q, "tiled_mirror");
}

}  // namespace ts
#endif  // __CUDACC__

// [SECTION] Registry entries (plain data: also compiled without nvcc).
namespace ts {

namespace {
const std::vector<int> kTiles = {8, 16, 32};
const std::vector<std::string> kLabels = {"8 x 8 threads, 8 x 8 tile", "16 x 16 threads, 16 x 16 tile",
                                          "32 x 32 threads, 32 x 32 tile"};
// TILE x TILE tiles of C summed in TILE-deep steps, one output per thread; `bug`: what the variant gets
// wrong.
std::vector<TileGeometry> geometry(StagingBug bug) {
  std::vector<TileGeometry> out;
  for (int t : kTiles) {
    TileGeometry g = block_tile(t, t, t);
    g.bug = bug;
    out.push_back(thread_pieces(g, 1, 1));
  }
  return out;
}
}  // namespace

KernelEntry entry_tiled() {
  KernelInfo k =
      kernel_info("tiled", "3. Classic shared-memory tiled",
                  "Each block stages TILE x TILE tiles of A and B in shared memory and reuses each "
                  "loaded value TILE times; costs two __syncthreads() per step and TILE^2 threads per "
                  "block.",
                  kTiles, kLabels, 16, "TILE x TILE");
  k.cpu = &cpu_gemm_tiled;
  k.cpu_blocks_c = true;
  k.geometry = geometry(StagingBug::None);
  return {k, TS_LAUNCHER(launch_tiled)};
}

KernelEntry entry_tiled_nosync() {
  KernelInfo k =
      kernel_info("tiled_nosync", "tiled without the second __syncthreads()",
                  "Broken on purpose: fast threads overwrite the shared tiles while slow ones still "
                  "read them (a race; wrong values appear where warps drift apart).",
                  kTiles, kLabels, 32, "TILE x TILE");
  k.teaching = true;
  k.geometry = geometry(StagingBug::NoSecondSync);
  return {k, TS_LAUNCHER(launch_tiled_nosync)};
}

KernelEntry entry_tiled_floork() {
  KernelInfo k =
      kernel_info("tiled_floork", "tiled with K / TILE steps",
                  "Broken on purpose: loops K / TILE times instead of ceil(K / TILE), so whenever TILE "
                  "does not divide K the last partial tile is dropped and every element of C is wrong.",
                  kTiles, kLabels, 16, "TILE x TILE");
  k.teaching = true;
  k.cpu = &cpu_gemm_tiled_floork;
  k.cpu_blocks_c = true;
  k.geometry = geometry(StagingBug::FloorK);
  return {k, TS_LAUNCHER(launch_tiled_floork)};
}

KernelEntry entry_tiled_mirror() {
  KernelInfo k =
      kernel_info("tiled_mirror", "tiled, upper triangle mirrored",
                  "Broken on purpose: assumes C is symmetric because A and B are, computes only the "
                  "upper triangle and mirrors it; but the mirror image of A B is B A, which differs from "
                  "A B unless A and B commute, so the error map shows a triangle (and a shape that is "
                  "not square leaves part of C unwritten).",
                  kTiles, kLabels, 32, "TILE x TILE");
  k.teaching = true;
  k.cpu = &cpu_gemm_tiled_mirror;
  k.geometry = geometry(StagingBug::Mirror);
  return {k, TS_LAUNCHER(launch_tiled_mirror)};
}

}  // namespace ts

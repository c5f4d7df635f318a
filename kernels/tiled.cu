// Rung 3: the classic shared-memory tiled SGEMM (the textbook kernel TileScope grew from).
// A TILE x TILE thread block computes a TILE x TILE tile of C. For each of ceil(K / TILE) steps it stages one
// tile of A and one of B in shared memory, waits, accumulates TILE products per thread, and waits again.
// What it buys: every value loaded from global memory is used TILE times from shared memory.
// What it costs: two block-wide barriers per step, one output per thread (so every FMA still needs two
// shared-memory loads), and TILE^2 threads per block, which limits resident blocks per SM.
//
// The two teaching variants are the same code with one template flag flipped (never a copy):
//   kSecondSync = false: no barrier after the compute loop, so fast threads overwrite the tiles while slow
//     ones still read them (a shared-memory race: compute-sanitizer racecheck reports it).
//   kCeilSteps = false: K / TILE steps instead of ceil(K / TILE), dropping the last partial tile whenever K
//   is
//     not a multiple of TILE (every element of C is then wrong by the missing products).
#include "gemm_common.cuh"

namespace ts {

template <int T, bool kSecondSync, bool kCeilSteps, bool kTrace>
__device__ __forceinline__ void tiled_body(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int64_t m, int64_t n, int64_t k,
                                           TileRecord* trace) {
  trace_begin<kTrace>(trace);
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
  if (row < m && col < n) C[row * n + col] = acc;
  trace_end<kTrace>(trace);
}

// The plain build, exactly as the compiler likes it.
template <int T, bool kSecondSync, bool kCeilSteps>
__global__ void tiled_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  tiled_body<T, kSecondSync, kCeilSteps, false>(A, B, C, m, n, k, trace);
}

// The instrumented build: the same body with kTrace, capped at the plain build's 32 registers with
// __maxnreg__, so tracing does not lose resident blocks (uncapped, T=32 traced ran 1.46x slower on an H100).
// Not with
// __launch_bounds__(T*T, 2048/(T*T)): that also tells the compiler the block size, it then laid out a
// different main loop, and the traced TILE 32 build ran 6 % slower than the plain one (0.99x with
// __maxnreg__).
template <int T, bool kSecondSync, bool kCeilSteps>
__global__ void __maxnreg__(32)
    tiled_kernel_traced(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                        int64_t m, int64_t n, int64_t k, TileRecord* trace) {
  tiled_body<T, kSecondSync, kCeilSteps, true>(A, B, C, m, n, k, trace);
}

template <bool kSecondSync, bool kCeilSteps>
static void launch(const GemmArgs& a, int tile, void* stream, LaunchQuery* q, const char* name) {
  auto s = static_cast<cudaStream_t>(stream);
  auto go = [&](auto t) {
    constexpr int T = decltype(t)::value;
    const dim3 block(T, T), grid(blocks_for(a.n, T), blocks_for(a.m, T));
    launch_or_query(tiled_kernel<T, kSecondSync, kCeilSteps>, tiled_kernel_traced<T, kSecondSync, kCeilSteps>,
                    grid, block, 0, s, q, T, T, a);
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

}  // namespace ts

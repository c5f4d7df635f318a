#pragma once
// Device helpers shared by the kernel files: bounds-checked (zero-filling) loads and cp.async wrappers.
// Every kernel handles any M, N, K >= 1: loads past an edge read zero (adding nothing to a dot product),
// stores past an edge are skipped. Global indices are 64-bit.
#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/launch.hpp"
#include "kernels/rungs/trace.cuh"

namespace ts {

__device__ __forceinline__ float load_or_zero(const float* __restrict__ p, int64_t r, int64_t c, int64_t rows,
                                              int64_t cols, int64_t ld) {
  return (r < rows && c < cols) ? p[r * ld + c] : 0.0f;
}

// p[r][c .. c+3], zero past the edges. `vec`: rows are 16-byte aligned (ld % 4 == 0, c % 4 == 0), so a
// fully in-bounds group is one 128-bit load.
__device__ __forceinline__ float4 load4_or_zero(const float* __restrict__ p, int64_t r, int64_t c,
                                                int64_t rows, int64_t cols, int64_t ld, bool vec) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (r >= rows) return v;
  const float* row = p + r * ld;
  if (vec && c + 3 < cols) return *reinterpret_cast<const float4*>(row + c);
  if (c < cols) v.x = row[c];
  if (c + 1 < cols) v.y = row[c + 1];
  if (c + 2 < cols) v.z = row[c + 2];
  if (c + 3 < cols) v.w = row[c + 3];
  return v;
}

// C[r][c .. c+3] = v where in bounds.
__device__ __forceinline__ void store4_checked(float* __restrict__ p, int64_t r, int64_t c, int64_t rows,
                                               int64_t cols, int64_t ld, bool vec, float4 v) {
  if (r >= rows) return;
  float* row = p + r * ld;
  if (vec && c + 3 < cols) {
    *reinterpret_cast<float4*>(row + c) = v;
    return;
  }
  if (c < cols) row[c] = v.x;
  if (c + 1 < cols) row[c + 1] = v.y;
  if (c + 2 < cols) row[c + 2] = v.z;
  if (c + 3 < cols) row[c + 3] = v.w;
}

// [SECTION] Split-K and stream-K blocks that wait for each other (a cooperative launch: every block is
// resident). Each block of a tile has written its partial (and fenced it); this counts it in on the tile's
// 64-bit counter and returns once all `per` blocks of the tile are in, their partials visible to every thread
// of this block. The counter only grows (64 bits: it never wraps), so it needs no reset between launches:
// this launch's blocks of the tile are all in when it reaches the next multiple of `per`.
// `threads` > 0: only the block's first `threads` threads take part (a warp-specialised block whose other
// warps have left), joined on named barrier 1 instead of __syncthreads.
__device__ __forceinline__ void wait_for_tile(unsigned long long* count, unsigned per, unsigned threads = 0) {
  auto join = [threads] {
    if (threads)
      asm volatile("bar.sync 1, %0;\n" ::"r"(threads) : "memory");
    else
      __syncthreads();
  };
  join();  // every thread's partial is written and fenced
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const unsigned long long all_in = (atomicAdd(count, 1ull) / per + 1) * per;
    for (;;) {
      unsigned long long now;
      asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(now) : "l"(count) : "memory");
      if (now >= all_in) break;
      __nanosleep(64);
    }
  }
  join();
  __threadfence();
}

// [SECTION] cp.async (sm_80+): global -> shared copies that bypass registers and overlap with compute.
// src_bytes < size zero-fills the rest, which is how tails are handled; src must stay a valid address.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
#if __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
#else
  const float* g = static_cast<const float*>(gmem);
  float* d = static_cast<float*>(smem);
  for (int i = 0; i < 4; ++i) d[i] = i * 4 < src_bytes ? g[i] : 0.0f;
#endif
}
__device__ __forceinline__ void cp_async4(void* smem, const void* gmem, int src_bytes) {
#if __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
#else
  *static_cast<float*>(smem) = src_bytes ? *static_cast<const float*>(gmem) : 0.0f;
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// FP32 -> TF32 (10-bit mantissa), rounded to nearest with ties away from zero, as a 32-bit register for the
// tensor-core instructions (mma.sync and wgmma take TF32 operands as .b32).
__device__ __forceinline__ uint32_t to_tf32(float x) {
#if __CUDA_ARCH__ >= 800
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
#else
  return __float_as_uint(x);
#endif
}

// Whether a launcher may call CUDA (configure a kernel, ask the device): not for an offline query.
inline bool needs_device(const LaunchQuery* q) {
  return !(q && q->offline);
}

// Launches `kernel` (the kTrace = true or false build, chosen by args.trace), or describes the launch to `q`.
template <class Plain, class Traced, class... Params>
void launch_or_query(Plain plain, Traced traced, dim3 grid, dim3 block, size_t smem, cudaStream_t s,
                     LaunchQuery* q, int tile_m, int tile_n, const GemmArgs& a, Params... extra) {
  if (q) {
    *q = LaunchQuery{reinterpret_cast<const void*>(a.trace ? traced : plain),
                     grid.x,
                     grid.y,
                     grid.z,
                     0,
                     int(block.x * block.y * block.z),
                     smem,
                     tile_m,
                     tile_n};
    return;
  }
  if (a.trace)
    traced<<<grid, block, smem, s>>>(a.A, a.B, a.C, a.m, a.n, a.k, a.trace, extra...);
  else
    plain<<<grid, block, smem, s>>>(a.A, a.B, a.C, a.m, a.n, a.k, nullptr, extra...);
  CUDA_CHECK_LAUNCH();
}

// Copies a ROWS x COLS tile of a row-major global matrix (rows x cols, leading dimension ld), starting at
// (r0, c0), into shared memory with row stride LDS, using all NT threads; elements past the matrix edges are
// zero-filled. kVec: ld % 4 == 0, so each group of 4 is one 16-byte copy, wholly inside or outside the
// matrix.
template <int ROWS, int COLS, int LDS, int NT, bool kVec>
__device__ __forceinline__ void cp_async_tile(float* dst, const float* __restrict__ src, int64_t rows,
                                              int64_t cols, int64_t ld, int64_t r0, int64_t c0, int tid) {
  static_assert(COLS % 4 == 0 && (ROWS * COLS / 4) % NT == 0, "whole groups of 4 per thread");
#pragma unroll
  for (int it = 0; it < ROWS * COLS / 4 / NT; ++it) {
    const int idx = tid + it * NT, r = idx / (COLS / 4), c = (idx % (COLS / 4)) * 4;
    const int64_t gr = r0 + r, gc = c0 + c;
    if (kVec) {
      const bool ok = gr < rows && gc < cols;
      cp_async16(dst + r * LDS + c, ok ? src + gr * ld + gc : src, ok ? 16 : 0);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ok = gr < rows && gc + e < cols;
        cp_async4(dst + r * LDS + c + e, ok ? src + gr * ld + gc + e : src, ok ? 4 : 0);
      }
    }
  }
}

inline unsigned blocks_for(int64_t n, int64_t per_block) {
  return unsigned((n + per_block - 1) / per_block);
}

// Rows of `cols` floats rounded up to a multiple of 32 floats: every row starts on a 128-byte line, so a
// 16-byte cp.async copy or a TMA box row (which need 16-byte aligned rows) touches no more lines than it
// must. Rounding to 4 floats (16 bytes, the least they need) left wgmma_tf32 at 148 TFLOP/s at 4099^3, where
// 32 gives 215 (H100, alternating runs); rungs 9 and 10 ran the same either way.
inline int64_t padded_ld(int64_t cols) {
  return (cols + 31) / 32 * 32;
}

// Copies a rows x cols row-major matrix (row stride cols) into `dst` with row stride `ld` (padded_ld(cols)),
// on `stream` (cudaMemcpy2DAsync: part of the launch that needs it). The padding is not written: readers stop
// at `cols` (zero-byte or partial copies, TMA's bounds).
inline void copy_to_padded_rows(float* dst, int64_t ld, const float* src, int64_t rows, int64_t cols,
                                cudaStream_t stream) {
  CUDA_CHECK(cudaMemcpy2DAsync(dst, size_t(ld) * sizeof(float), src, size_t(cols) * sizeof(float),
                               size_t(cols) * sizeof(float), size_t(rows), cudaMemcpyDeviceToDevice, stream));
}

// Where a workspace's copies of matrices begin, after `split` bytes of split-K (or stream-K) partials and
// counts: 256-byte aligned. (Rungs 9 and 10b: B with rows padded to a multiple of 32 floats when N % 4 != 0;
// wgmma_tf32: A and B so when K or N is not a multiple of 4.)
inline size_t padded_b_offset(size_t split) {
  return (split + 255) / 256 * 256;
}

// The SMs a launch plans for (stream-K's units, wgmma_tf32's slices of K): LaunchQuery::sm_count when the
// caller set it, else the current device's, or an H100's 132 for an offline query (no device).
inline int sm_count_for(const LaunchQuery* q) {
  if (q && q->sm_count > 0) return q->sm_count;
  if (q && q->offline) return 132;
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

// Launches `kernel` with the cooperative attribute: every block resident at once, or the launch fails (it
// never leaves blocks that wait for each other unscheduled). For kernels that use wait_for_tile.
template <class... Params, class... Args>
void launch_cooperative(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                        Args... args) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;
  attr[0].val.cooperative = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

[[noreturn]] inline void bad_tile(const char* kernel, int tile) {
  throw std::invalid_argument(std::string(kernel) + ": unsupported tile " + std::to_string(tile));
}

}  // namespace ts

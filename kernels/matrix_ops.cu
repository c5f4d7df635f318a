#include <algorithm>
#include <cmath>
#include <cstring>

#include <math_constants.h>
#include <limits>
#include <vector>

#include "cuda_check.cuh"
#include "cuda_raii.cuh"
#include "matrix_ops.cuh"

namespace ts {

namespace {

constexpr int kThreads = 256;

unsigned grid_for(size_t n) {
  return unsigned(std::min<size_t>((n + kThreads - 1) / kThreads, 65535u * 4u));
}

// Maps a float to an unsigned key with the same order (negative floats reversed), so atomicMin/Max work.
__device__ inline unsigned float_key(float f) {
  unsigned u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
inline float key_float(unsigned k) {
  unsigned u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

__global__ void generate_kernel(float* out, int64_t rows, int64_t cols, GenKind kind, uint64_t seed,
                                int matrix) {
  const int64_t n = rows * cols;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = gen_element(kind, seed, matrix, i / cols, i % cols);
}

// |x| as non-negative double bits (NaN -> +inf), max-reduced with a 64-bit atomicMax.
__device__ inline unsigned long long abs_bits(double d) {
  d = fabs(d);
  if (isnan(d)) d = CUDART_INF;
  return __double_as_longlong(d);
}

__global__ void max_abs_kernel(const float* p, int64_t n, unsigned long long* out) {
  unsigned long long m = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    m = max(m, abs_bits(double(p[i])));
  atomicMax(out, m);
}

struct CompareAcc {
  unsigned long long max_err;  // double bits
  unsigned long long max_ref;  // double bits
  unsigned long long bad;
  unsigned long long worst;  // smallest index reaching max_err (second pass)
};

__global__ void compare_kernel(const float* c, const float* ref, int64_t n, double tol, CompareAcc* acc) {
  unsigned long long me = 0, mr = 0, bad = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    double d = fabs(double(c[i]) - double(ref[i]));
    if (!isfinite(d)) d = CUDART_INF;
    me = max(me, (unsigned long long)__double_as_longlong(d));
    mr = max(mr, abs_bits(double(ref[i])));
    if (!(d <= tol)) ++bad;
  }
  atomicMax(&acc->max_err, me);
  atomicMax(&acc->max_ref, mr);
  if (bad) atomicAdd(&acc->bad, bad);
}

__global__ void worst_kernel(const float* c, const float* ref, int64_t n, CompareAcc* acc) {
  const unsigned long long target = acc->max_err;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    double d = fabs(double(c[i]) - double(ref[i]));
    if (!isfinite(d)) d = CUDART_INF;
    if ((unsigned long long)__double_as_longlong(d) == target) atomicMin(&acc->worst, (unsigned long long)i);
  }
}

// One thread per view value: reduces its block of source elements (|src - ref| when ref is given).
__global__ void view_kernel(const float* src, const float* ref, int64_t rows, int64_t cols, int w, int h,
                            Reduce mode, float* out, unsigned* range /* [min key, max key] */) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  const int64_t r0 = int64_t(y) * rows / h, r1 = int64_t(y + 1) * rows / h;
  const int64_t c0 = int64_t(x) * cols / w, c1 = int64_t(x + 1) * cols / w;
  double a = mode == Reduce::Min ? CUDART_INF : mode == Reduce::Max ? -CUDART_INF : 0.0;
  unsigned kmin = 0xffffffffu, kmax = 0u;
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t i = r * cols + c;
      float v = ref ? fabsf(src[i] - ref[i]) : src[i];
      if (isfinite(v)) {
        kmin = min(kmin, float_key(v));
        kmax = max(kmax, float_key(v));
      }
      switch (mode) {
        case Reduce::Mean:
          a += v;
          break;
        case Reduce::Min:
          a = fmin(a, double(v));
          break;
        case Reduce::Max:
          a = fmax(a, double(v));
          break;
        case Reduce::AbsMax:
          a = fmax(a, fabs(double(v)));
          break;
      }
    }
  if (mode == Reduce::Mean) a /= double((r1 - r0) * (c1 - c0));
  out[int64_t(y) * w + x] = float(a);
  atomicMin(&range[0], kmin);
  atomicMax(&range[1], kmax);
}

double bits_to_double(unsigned long long b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

}  // namespace

void device_generate(float* out, int64_t rows, int64_t cols, GenKind kind, uint64_t seed, int matrix,
                     cudaStream_t s) {
  generate_kernel<<<grid_for(size_t(rows * cols)), kThreads, 0, s>>>(out, rows, cols, kind, seed, matrix);
  CUDA_CHECK_LAUNCH();
}

double device_max_abs(const float* p, size_t n, cudaStream_t s) {
  DeviceBuffer<unsigned long long> d(1);
  CUDA_CHECK(cudaMemsetAsync(d.get(), 0, sizeof(unsigned long long), s));
  max_abs_kernel<<<grid_for(n), kThreads, 0, s>>>(p, int64_t(n), d.get());
  CUDA_CHECK_LAUNCH();
  unsigned long long h = 0;
  CUDA_CHECK(cudaMemcpyAsync(&h, d.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return bits_to_double(h);
}

ErrorStats device_compare(const float* c, const float* ref, int64_t rows, int64_t cols, double tolerance,
                          cudaStream_t s) {
  const int64_t n = rows * cols;
  DeviceBuffer<CompareAcc> d(1);
  CompareAcc init{0, 0, 0, ~0ull};
  CUDA_CHECK(cudaMemcpyAsync(d.get(), &init, sizeof init, cudaMemcpyHostToDevice, s));
  compare_kernel<<<grid_for(size_t(n)), kThreads, 0, s>>>(c, ref, n, tolerance, d.get());
  CUDA_CHECK_LAUNCH();
  worst_kernel<<<grid_for(size_t(n)), kThreads, 0, s>>>(c, ref, n, d.get());
  CUDA_CHECK_LAUNCH();
  CompareAcc h;
  CUDA_CHECK(cudaMemcpyAsync(&h, d.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  ErrorStats e;
  e.max_abs_err = bits_to_double(h.max_err);
  const double max_ref = bits_to_double(h.max_ref);
  e.max_rel_err = max_ref > 0 ? e.max_abs_err / max_ref : e.max_abs_err;
  e.tolerance = tolerance;
  e.bad_elements = int64_t(h.bad);
  if (e.max_abs_err > 0 && h.worst != ~0ull) {
    e.worst_row = int64_t(h.worst) / cols;
    e.worst_col = int64_t(h.worst) % cols;
  }
  e.passed = h.bad == 0 && std::isfinite(tolerance);  // an infinite tolerance verifies nothing
  return e;
}

HeatmapView device_view(const float* src, const float* ref, int64_t rows, int64_t cols, int max_w, int max_h,
                        Reduce mode, cudaStream_t s) {
  HeatmapView v;
  v.rows = rows;
  v.cols = cols;
  v.w = int(std::min<int64_t>(cols, std::max(1, max_w)));
  v.h = int(std::min<int64_t>(rows, std::max(1, max_h)));
  DeviceBuffer<float> out(size_t(v.w) * size_t(v.h));
  DeviceBuffer<unsigned> range(2);
  const unsigned init[2] = {0xffffffffu, 0u};
  CUDA_CHECK(cudaMemcpyAsync(range.get(), init, sizeof init, cudaMemcpyHostToDevice, s));
  dim3 block(128), grid(unsigned((v.w + 127) / 128), unsigned(v.h));
  view_kernel<<<grid, block, 0, s>>>(src, ref, rows, cols, v.w, v.h, mode, out.get(), range.get());
  CUDA_CHECK_LAUNCH();
  v.values.resize(out.size());
  unsigned hr[2];
  CUDA_CHECK(cudaMemcpyAsync(v.values.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaMemcpyAsync(hr, range.get(), sizeof hr, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  if (hr[0] > hr[1]) {
    v.vmin = v.vmax = 0.0f;
  } else {
    v.vmin = key_float(hr[0]);
    v.vmax = key_float(hr[1]);
  }
  return v;
}

}  // namespace ts

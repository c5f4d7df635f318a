#include <algorithm>
#include <cmath>
#include <cstring>

#include <math_constants.h>
#include <limits>
#include <vector>

#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/cuda_raii.cuh"
#include "kernels/engine/matrix_ops.cuh"

namespace ts {

namespace {

constexpr int kThreads = 256;

unsigned grid_for(size_t n) {
  return unsigned(std::min<size_t>((n + kThreads - 1) / kThreads, 65535u * 4u));
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
  unsigned long long bad;      // elements over the tolerance (second pass)
  unsigned long long worst;    // smallest index reaching max_err (second pass)
};

__global__ void compare_kernel(const float* c, const float* ref, int64_t n, CompareAcc* acc) {
  unsigned long long me = 0, mr = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    double d = fabs(double(c[i]) - double(ref[i]));
    if (!isfinite(d)) d = CUDART_INF;
    me = max(me, (unsigned long long)__double_as_longlong(d));
    mr = max(mr, abs_bits(double(ref[i])));
  }
  atomicMax(&acc->max_err, me);
  atomicMax(&acc->max_ref, mr);
}

// The tolerance resolved at the first pass's max|ref|, then the bad elements and the worst one's index.
__global__ void worst_kernel(const float* c, const float* ref, int64_t n, Tolerance tol, CompareAcc* acc) {
  const unsigned long long target = acc->max_err;
  const double allowed = tol.at(__longlong_as_double((long long)acc->max_ref));
  unsigned long long bad = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    double d = fabs(double(c[i]) - double(ref[i]));
    if (!isfinite(d)) d = CUDART_INF;
    if ((unsigned long long)__double_as_longlong(d) == target) atomicMin(&acc->worst, (unsigned long long)i);
    if (!(d <= allowed)) ++bad;
  }
  if (bad) atomicAdd(&acc->bad, bad);
}

__global__ void count_bits_kernel(const float* p, int64_t n, uint32_t bits, unsigned long long* count) {
  unsigned long long mine = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    mine += __float_as_uint(p[i]) == bits;
  if (mine) atomicAdd(count, mine);
}

__global__ void count_same_kernel(const float* a, const float* b, int64_t n, unsigned long long* count) {
  unsigned long long mine = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    mine += __float_as_uint(a[i]) == __float_as_uint(b[i]);
  if (mine) atomicAdd(count, mine);
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

int64_t device_count_bits(const float* p, size_t n, uint32_t bits, cudaStream_t s) {
  DeviceBuffer<unsigned long long> d(1);
  CUDA_CHECK(cudaMemsetAsync(d.get(), 0, sizeof(unsigned long long), s));
  count_bits_kernel<<<grid_for(n), kThreads, 0, s>>>(p, int64_t(n), bits, d.get());
  CUDA_CHECK_LAUNCH();
  unsigned long long h = 0;
  CUDA_CHECK(cudaMemcpyAsync(&h, d.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return int64_t(h);
}

int64_t device_count_same(const float* a, const float* b, size_t n, cudaStream_t s) {
  DeviceBuffer<unsigned long long> d(1);
  CUDA_CHECK(cudaMemsetAsync(d.get(), 0, sizeof(unsigned long long), s));
  count_same_kernel<<<grid_for(n), kThreads, 0, s>>>(a, b, int64_t(n), d.get());
  CUDA_CHECK_LAUNCH();
  unsigned long long h = 0;
  CUDA_CHECK(cudaMemcpyAsync(&h, d.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return int64_t(h);
}

ErrorStats device_compare(const float* c, const float* ref, int64_t rows, int64_t cols, Tolerance tolerance,
                          cudaStream_t s) {
  const int64_t n = rows * cols;
  DeviceBuffer<CompareAcc> d(1);
  CompareAcc init{0, 0, 0, ~0ull};
  CUDA_CHECK(cudaMemcpyAsync(d.get(), &init, sizeof init, cudaMemcpyHostToDevice, s));
  compare_kernel<<<grid_for(size_t(n)), kThreads, 0, s>>>(c, ref, n, d.get());
  CUDA_CHECK_LAUNCH();
  worst_kernel<<<grid_for(size_t(n)), kThreads, 0, s>>>(c, ref, n, tolerance, d.get());
  CUDA_CHECK_LAUNCH();
  CompareAcc h;
  CUDA_CHECK(cudaMemcpyAsync(&h, d.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  ErrorStats e;
  e.max_abs_err = bits_to_double(h.max_err);
  const double max_ref = bits_to_double(h.max_ref);
  e.max_rel_err = max_ref > 0 ? e.max_abs_err / max_ref : e.max_abs_err;
  e.tolerance = tolerance.at(max_ref);  // as worst_kernel resolved it
  e.bad_elements = int64_t(h.bad);
  if (e.max_abs_err > 0 && h.worst != ~0ull) {
    e.worst_row = int64_t(h.worst) / cols;
    e.worst_col = int64_t(h.worst) % cols;
  }
  e.passed = h.bad == 0 && std::isfinite(e.tolerance);  // an infinite tolerance verifies nothing
  return e;
}

}  // namespace ts

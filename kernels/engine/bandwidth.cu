// The copy kernel behind the roofline's DRAM roof. A grid-stride loop of float4 loads and stores, a few
// blocks per SM: the simplest kernel that saturates HBM (the same as the STREAM "copy" kernel).
#include <algorithm>
#include <cstdio>

#include "kernels/engine/bandwidth.cuh"
#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/cuda_raii.cuh"

namespace ts {

namespace {

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

}  // namespace

BandwidthResult measure_copy_bandwidth(cudaStream_t st, int64_t l2_bytes, const CancelToken& cancel) {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  // Far past the L2 (so every byte comes from DRAM), within a quarter of free memory for the two buffers.
  size_t bytes = std::max<size_t>(size_t(512) << 20, size_t(std::max<int64_t>(l2_bytes, 0)) * 8);
  bytes = std::min(bytes, free_b / 4);
  bytes = bytes / 16 * 16;
  if (bytes < (size_t(16) << 20)) throw std::runtime_error("not enough free GPU memory to measure bandwidth");
  DeviceBuffer<float4> src(bytes / 16), dst(bytes / 16);
  CUDA_CHECK(cudaMemsetAsync(src.get(), 0, src.bytes(), st));
  const int threads = 256, blocks = sms * 8;
  StreamTimer timer(st);
  auto launch = [&] {
    copy_kernel<<<blocks, threads, 0, st>>>(src.get(), dst.get(), int64_t(src.size()));
    CUDA_CHECK_LAUNCH();
  };
  MeasurePolicy p = MeasurePolicy::bench();
  p.name = "bandwidth";
  p.min_seconds = 0.1;
  p.max_seconds = 2;
  p.max_noise = 0.01;
  MeasureHooks h;
  h.untimed = [&] {
    launch();
    CUDA_CHECK(cudaStreamSynchronize(st));
  };
  h.timed = [&] { return timer.ms(launch); };
  const Measurement m = measure(p, h, cancel);
  BandwidthResult r;
  r.bytes = int64_t(bytes);
  r.ms = m.stats;
  r.gbs = m.stats.median > 0 ? 2.0 * double(bytes) / (m.stats.median * 1e-3) / 1e9 : 0;
  r.best_gbs = m.stats.min > 0 ? 2.0 * double(bytes) / (m.stats.min * 1e-3) / 1e9 : 0;
  char b[160];
  std::snprintf(b, sizeof b, "copy kernel, %lld MiB read + written per launch, float4, %d x %d threads",
                (long long)(bytes >> 20), blocks, threads);
  r.method = b;
  return r;
}

}  // namespace ts

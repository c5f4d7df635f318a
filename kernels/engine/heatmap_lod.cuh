#pragma once
// Device side of the heatmaps: level-of-detail reduction of a matrix region (same blocks and rules as
// lod_reduce() on the host), and the CUDA backend's matrix store.
#include <cstdint>
#include <memory>

#include <cuda_runtime.h>

#include "kernels/engine/cuda_raii.cuh"
#include "core/plots/heatmap.hpp"
#include "core/engine/matrix_store.hpp"

namespace ts {

// Reduces the region of src (device, row stride ld) into out (device, r.h x r.w) on s; the finite range of
// the region's elements (not of the reduced values) goes to range_keys (device, 2 unsigned, initialised to
// kRangeKeysInit by the caller; decode with range_from_keys). Does not synchronise.
void device_lod_launch(const float* src, int64_t ld, int64_t rows, int64_t cols, const LodRegion& r,
                       Reduce mode, DeviceOut out, unsigned* range_keys, cudaStream_t s);

// The same, returning the range. Synchronises s.
ValueRange device_lod_reduce(const float* src, int64_t ld, int64_t rows, int64_t cols, const LodRegion& r,
                             Reduce mode, float* out, cudaStream_t s);

// out = a - b, n elements.
void device_subtract(float* out, const float* a, const float* b, int64_t n, cudaStream_t s);

// A run's matrices on the device: A (m x k), B (k x n), C (m x n), C - reference (m x n).
struct DeviceMatrices {
  int64_t m = 0, n = 0, k = 0;
  PoolBuffer<float> a, b, c, err;
};
std::shared_ptr<const MatrixStore> make_device_store(int device, DeviceMatrices m);

}  // namespace ts

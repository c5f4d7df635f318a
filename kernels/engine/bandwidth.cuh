#pragma once
// DRAM bandwidth from a copy kernel: the roofline's memory roof, measured rather than taken from a datasheet.
#include <cuda_runtime.h>

#include "core/engine/backend.hpp"

namespace ts {

// Copies a buffer far larger than the L2 cache (at least 8 x L2 and 512 MiB, less when free memory is short)
// with 16-byte loads and stores, timed with cudaEvents under a short bench policy. Bytes moved per copy =
// 2 x buffer size (read once, written once). Throws CudaError, Cancelled.
BandwidthResult measure_copy_bandwidth(cudaStream_t stream, int64_t l2_bytes, const CancelToken& cancel);

}  // namespace ts

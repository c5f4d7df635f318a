#pragma once
// Device-side helpers of the engine: input generation, value ranges and verification.
// Everything here runs on the engine's stream; results come back in small host structs.
#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/engine/input_gen.hpp"
#include "core/engine/verify.hpp"

namespace ts {

cublasHandle_t thread_cublas_handle();

// out (rows x cols) = generated matrix `matrix` (0 = A, 1 = B), bit-identical to generate_input() on the
// host.
void device_generate(float* out, int64_t rows, int64_t cols, GenKind kind, uint64_t seed, int matrix,
                     cudaStream_t s);

// max |x| over n elements (NaN counts as infinity). Synchronises the stream.
double device_max_abs(const float* p, size_t n, cudaStream_t s);

// How many of the n elements still hold the bit pattern `bits` (e.g. 0xffffffff: the NaN C is poisoned with
// before a kernel runs, so the count is how much of C the kernel never wrote). Synchronises the stream.
int64_t device_count_bits(const float* p, size_t n, uint32_t bits, cudaStream_t s);

// How many of the n elements of a and b are bit for bit the same (changing inputs: C unchanged since an
// earlier launch). Synchronises the stream.
int64_t device_count_same(const float* a, const float* b, size_t n, cudaStream_t s);

// The same statistics as compare() on the host, computed on the device in two passes (the second resolves the
// tolerance at the first one's max|ref| on the device). Synchronises the stream.
ErrorStats device_compare(const float* c, const float* ref, int64_t rows, int64_t cols, Tolerance tolerance,
                          cudaStream_t s);

}  // namespace ts

#pragma once
// [SECTION] Deterministic inputs, identical on the host and on the device.
// Every element is a pure function of (kind, seed, which matrix, row, col): a counter-based hash, so the CUDA
// backend generates A and B in place on the GPU and the CPU backend and the tests get the very same numbers.
#include <cstdint>

#if defined(__CUDACC__)
#define TS_HD __host__ __device__
#else
#define TS_HD
#endif

namespace ts {

enum class GenKind : int { Random = 0, Symmetric = 1, Identity = 2, Ones = 3, Ramp = 4 };

TS_HD inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1), 24 random bits so the value is exact in float32.
TS_HD inline float hash_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t h = splitmix64(splitmix64(seed * 0x2545F4914F6CDD1Dull + stream) ^ index);
  return float(int64_t(h >> 40) - (int64_t(1) << 23)) * (1.0f / float(1 << 23));
}

// matrix: 0 for A, 1 for B. Identity: A is the identity (C reproduces B); B stays random. Ramp: A[i][j] = i
// (its row) and B[i][j] = j (its column), so C[i][j] = K i j: every picture is dark at row 0 (top) or column
// 0 (left) and bright at the far end, which makes orientation and layout visible at a glance. Exact in
// float32 up to 2^24 rows or columns.
TS_HD inline float gen_element(GenKind kind, uint64_t seed, int matrix, int64_t row, int64_t col) {
  switch (kind) {
    case GenKind::Ramp:
      return float(matrix == 0 ? row : col);
    case GenKind::Ones:
      return 1.0f;
    case GenKind::Identity:
      if (matrix == 0) return row == col ? 1.0f : 0.0f;
      return hash_uniform(seed, uint64_t(matrix), (uint64_t(row) << 32) ^ uint64_t(col));
    case GenKind::Symmetric: {
      int64_t lo = row < col ? row : col, hi = row < col ? col : row;
      return hash_uniform(seed, uint64_t(matrix) + 16, (uint64_t(lo) << 32) ^ uint64_t(hi));
    }
    case GenKind::Random:
    default:
      return hash_uniform(seed, uint64_t(matrix), (uint64_t(row) << 32) ^ uint64_t(col));
  }
}

// Changing inputs (MeasurePolicy::changing_inputs): input set `set` >= 1 is Random A (matrix 0) and B (matrix
// 1) from the stream 2 set + matrix (gen_element's `matrix`), whatever the run's own input kind: streams the
// run's own inputs (0, 1; symmetric: 16, 17) never use, so every set differs from them for any seed.
TS_HD inline int changed_input_stream(int set, int matrix) {
  return 2 * set + matrix;
}

// The matrices whose elements depend on the seed (kSeedsA | kSeedsB), read off gen_element above: random and
// symmetric seed both; identity seeds B alone (A is the identity); ones and ramp neither.
inline constexpr int kSeedsA = 1, kSeedsB = 2;
TS_HD inline int seeded_matrices(GenKind kind) {
  switch (kind) {
    case GenKind::Random:
    case GenKind::Symmetric:
      return kSeedsA | kSeedsB;
    case GenKind::Identity:
      return kSeedsB;
    case GenKind::Ones:
    case GenKind::Ramp:
      return 0;
  }
  return kSeedsA | kSeedsB;
}

}  // namespace ts

#pragma once
// [SECTION] Compression of the bytes a remote engine sends (reduced heatmap values, matrices, traces): zstd
// (Debian libzstd-dev), level 1 by default, which compresses a float heatmap ~1.5-4x at several hundred MB/s
// so a slow link carries fewer bytes without the engine or the window waiting on it.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ts {

class CompressError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string zstd_compress(const void* data, size_t bytes, int level = 1);
inline std::string zstd_compress(const std::string& s, int level = 1) {
  return zstd_compress(s.data(), s.size(), level);
}
// Decompresses a whole zstd frame into exactly `expected_bytes` bytes at `out`. Throws CompressError when the
// input is not one zstd frame, is damaged, or does not hold exactly that many bytes (never writes past out).
void zstd_decompress(const std::string& frame, void* out, size_t expected_bytes);
// The bytes a zstd frame says it holds (before anything is allocated for them); -1 when it does not say or is
// not zstd.
int64_t zstd_content_size(const std::string& frame);

}  // namespace ts

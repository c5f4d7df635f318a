#include "core/base/compress.hpp"

#include <zstd.h>

namespace ts {

std::string zstd_compress(const void* data, size_t bytes, int level) {
  std::string out(ZSTD_compressBound(bytes), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), data, bytes, level);
  if (ZSTD_isError(n)) throw CompressError(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

void zstd_decompress(const std::string& frame, void* out, size_t expected_bytes) {
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR) throw CompressError("not zstd data");
  if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != expected_bytes)
    throw CompressError("zstd data of " + std::to_string(size) + " bytes where " +
                        std::to_string(expected_bytes) + " were expected");
  if (ZSTD_findFrameCompressedSize(frame.data(), frame.size()) != frame.size())
    throw CompressError("zstd data with bytes after its frame, or a damaged frame");
  const size_t n = ZSTD_decompress(out, expected_bytes, frame.data(), frame.size());
  if (ZSTD_isError(n)) throw CompressError(std::string("zstd: ") + ZSTD_getErrorName(n));
  if (n != expected_bytes)
    throw CompressError("zstd data of " + std::to_string(n) + " bytes where " +
                        std::to_string(expected_bytes) + " were expected");
}

int64_t zstd_content_size(const std::string& frame) {
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > (1ull << 62)) return -1;
  return int64_t(size);
}

}  // namespace ts

#pragma once
// SHA-256 (FIPS 180-4), for cache keys: the compiled-module cache names a build by the hash of everything
// that went into it (source, options, architecture, compiler version), so a different input never hits a
// stale entry.
#include <cstddef>
#include <cstdint>
#include <string>

namespace ts {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  void update(const std::string& s) { update(s.data(), s.size()); }
  // A field of a key: its length first, so ("ab", "c") and ("a", "bc") hash differently.
  void field(const std::string& s);
  std::string hex();  // 64 lower-case hex digits; finishes the hash

 private:
  void block(const uint8_t* p);
  uint32_t m_h[8];
  uint8_t m_buf[64];
  size_t m_fill = 0;
  uint64_t m_bytes = 0;
};

std::string sha256_hex(const std::string& data);

}  // namespace ts

#include "core/user_kernel/cubin_info.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace ts {

namespace {

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0, size = 0;
  uint32_t link = 0, info = 0;
  uint64_t entsize = 0;
};

class Bytes {
 public:
  explicit Bytes(const std::string& s) : m_s(s) {}
  bool has(uint64_t at, uint64_t n) const { return at <= m_s.size() && n <= m_s.size() - at; }
  template <typename T>
  T get(uint64_t at) const {  // callers check has() first
    T v;
    std::memcpy(&v, m_s.data() + at, sizeof v);
    return v;
  }
  std::string cstr(uint64_t at, uint64_t end) const {
    if (at >= end || end > m_s.size()) return "";
    const size_t z = m_s.find('\0', at);
    return m_s.substr(at, (z == std::string::npos || z > end ? end : z) - at);
  }

 private:
  const std::string& m_s;
};

constexpr uint32_t kSymtab = 2;
constexpr uint8_t kFormatSval = 4;  // EIFMT_SVAL: u16 size, then the payload
constexpr uint8_t kFormatHval = 3;  // EIFMT_HVAL: a u16 value
constexpr uint8_t kFormatBval = 2;  // EIFMT_BVAL: a u8 value
constexpr uint8_t kFormatNval = 1;  // EIFMT_NVAL: no value
constexpr uint8_t kRegCount = 0x2f, kFrameSize = 0x11, kMinStackSize = 0x12;

}  // namespace

std::optional<PtxasResources> read_cubin_resources(const std::string& cubin, const std::string& function) {
  const Bytes b(cubin);
  if (!b.has(0, 64) ||
      std::memcmp(cubin.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      cubin[4] != 2 || cubin[5] != 1)
    return std::nullopt;
  const uint64_t shoff = b.get<uint64_t>(0x28);
  const uint16_t shentsize = b.get<uint16_t>(0x3a), shnum = b.get<uint16_t>(0x3c),
                 shstrndx = b.get<uint16_t>(0x3e);
  if (shentsize < 64 || shstrndx >= shnum || !b.has(shoff, uint64_t(shentsize) * shnum)) return std::nullopt;
  std::vector<Section> secs(shnum);
  std::vector<uint32_t> name_at(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t h = shoff + uint64_t(i) * shentsize;
    name_at[i] = b.get<uint32_t>(h);
    secs[i].type = b.get<uint32_t>(h + 4);
    secs[i].offset = b.get<uint64_t>(h + 24);
    secs[i].size = b.get<uint64_t>(h + 32);
    secs[i].link = b.get<uint32_t>(h + 40);
    secs[i].info = b.get<uint32_t>(h + 44);
    secs[i].entsize = b.get<uint64_t>(h + 56);
  }
  const Section& names = secs[shstrndx];
  if (!b.has(names.offset, names.size)) return std::nullopt;
  for (uint16_t i = 0; i < shnum; ++i)
    secs[i].name = b.cstr(names.offset + name_at[i], names.offset + names.size);

  // The function's symbol index (EIATTR payloads name functions by it).
  int64_t symbol = -1;
  bool has_text = false, reserved_smem = false;
  PtxasResources r;
  for (const Section& s : secs) {
    if (s.name == ".text." + function) has_text = true;
    if (s.name.rfind(".nv.shared.reserved.", 0) == 0) reserved_smem = true;
    if (s.type != kSymtab || s.entsize < 24 || !b.has(s.offset, s.size) || s.link >= shnum) continue;
    const Section& strs = secs[s.link];
    if (!b.has(strs.offset, strs.size)) continue;
    for (uint64_t at = 0; at + 24 <= s.size; at += s.entsize)
      if (b.cstr(strs.offset + b.get<uint32_t>(s.offset + at), strs.offset + strs.size) == function) {
        symbol = int64_t(at / s.entsize);
        break;
      }
  }
  if (!has_text || symbol < 0) return std::nullopt;
  for (const Section& s : secs) {
    if (s.name == ".nv.shared." + function) r.static_smem = int(s.size);
    if ((s.name != ".nv.info" && s.name != ".nv.info." + function) || !b.has(s.offset, s.size)) continue;
    for (uint64_t at = s.offset, end = s.offset + s.size; at + 2 <= end;) {
      const uint8_t format = b.get<uint8_t>(at), attr = b.get<uint8_t>(at + 1);
      if (format == kFormatSval) {
        if (at + 4 > end) break;
        const uint16_t n = b.get<uint16_t>(at + 2);
        if (at + 4 + n > end) break;
        if (n == 8 && b.get<uint32_t>(at + 4) == uint32_t(symbol)) {
          const int v = int(b.get<uint32_t>(at + 8));
          if (attr == kRegCount) {
            r.regs = v;
            r.found = true;
          }
          if (attr == kFrameSize || attr == kMinStackSize) r.stack_bytes = std::max(r.stack_bytes, v);
        }
        at += 4 + n;
      } else if (format == kFormatHval || format == kFormatBval) {
        at += 4;
      } else if (format == kFormatNval) {
        at += 2;
      } else {
        break;  // a format this reader does not know: stop rather than guess
      }
    }
  }
  if (reserved_smem) r.static_smem = std::max(0, r.static_smem - 1024);
  if (!r.found) return std::nullopt;
  return r;
}

}  // namespace ts

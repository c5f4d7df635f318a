// libFuzzer target: the .npy reader on arbitrary bytes. Every input must either be refused with a
// ValidationError (any other exception, a crash, a sanitizer report or a hang is a finding) or give a matrix
// that keeps the header's promise exactly. Seeds: the generated corpus (tests/npy/make_corpus.py).
#include <cstdint>
#include <cstdlib>

#include "core/io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const ts::HostMatrix m = ts::decode_npy(data, size, "fuzz.npy");
    const ts::NpyHeader h = ts::parse_npy_header(data, size, size, "fuzz.npy");
    const bool kept = m.rows == h.rows && m.cols == h.cols && m.rows >= 1 && m.cols >= 1 &&
                      m.rows <= ts::kMaxNpyDim && m.cols <= ts::kMaxNpyDim &&
                      m.data.size() == size_t(m.rows) * size_t(m.cols) &&
                      h.data_offset + h.data_bytes == size && h.data_bytes == m.data.size() * sizeof(float) &&
                      h.data_offset <= 12 + ts::kNpyMaxHeader;
    if (!kept) std::abort();
  } catch (const ts::ValidationError&) {
    // Refused, with a reason: what every malformed file must get.
  }
  return 0;
}

#pragma once
// What the two protocol targets (fuzz_worker_protocol, fuzz_engine_protocol) share: the first byte of an
// input picks what the rest is, a stream of frames (mode < 0x80: unframed one after another as a socket
// delivers them, each handed to `decode_any`) or one payload for the decoder of a type the byte chooses; and
// the seeds, a stream of every sample message and each payload alone. The protocol's own refusals
// (`Refused...`) end one frame (in a stream) or the input; anything else that escapes is a finding.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace ts::fuzz {

// The first byte of a one-payload input for type number `type` (1 = the protocol's first type).
inline char payload_mode(uint16_t type) {
  return char(0x80 + (type - 1));
}

// Runs `f` and ignores the protocol's refusals Refused... (the exception types it throws for bad input).
template <class... Refused, class F>
void refusals_allowed(F&& f) {
  if constexpr (sizeof...(Refused) == 0) {
    f();
  } else {
    try {
      refusals_allowed<>(f);
    } catch (const std::exception& e) {
      if (!((dynamic_cast<const Refused*>(&e) != nullptr) || ...)) throw;
    }
  }
}

// A stream: up to 64 frames of `bytes`, each taken by `unframe(bytes, &frame)` (returns the bytes it took, 0
// when the rest is not a whole frame) and decoded by `decode_any(frame)`; a refusal ends that frame only.
template <class Frame, class... Refused, class Unframe, class Decode>
void fuzz_stream(std::string bytes, size_t header_bytes, Unframe unframe, Decode decode_any) {
  for (int i = 0; i < 64; ++i) {
    Frame f;
    const size_t took = unframe(bytes, &f);
    if (took == 0) return;
    if (took > bytes.size() || took != header_bytes + f.payload.size()) std::abort();
    refusals_allowed<Refused...>([&] { decode_any(f); });
    bytes.erase(0, took);
  }
}

// Seeds into `dir`: "stream" (mode 0x01 and every sample framed) and "payload-<i>" (each payload alone).
template <class Frame, class Bytes>
void write_seeds(const std::string& dir, const std::vector<Frame>& samples, Bytes frame_bytes) {
  std::string stream = "\x01";
  int i = 0;
  for (const Frame& f : samples) {
    stream += frame_bytes(f);
    std::ofstream(dir + "/payload-" + std::to_string(i++), std::ios::binary)
        << payload_mode(uint16_t(f.type)) << f.payload;
  }
  std::ofstream(dir + "/stream", std::ios::binary) << stream;
}

}  // namespace ts::fuzz

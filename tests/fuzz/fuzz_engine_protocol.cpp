// libFuzzer target: the remote engine's frames and messages (app/core/remote/protocol.hpp) on arbitrary bytes
// (issue 28). The first byte picks what the rest is: a stream of frames (unframed one after another, each
// decoded by the decoder of its type), or one payload for a decoder chosen by that byte. Every input must be
// refused with a ProtocolError (IncompatiblePeer for a Hello of another version) or decoded; a decoded
// message must encode to bytes that decode and encode to the same bytes again. A matrix part that decodes is
// also put through the assembler. Any other exception, a crash, a sanitizer report or a hang is a finding.
// Seeds: TILESCOPE_FUZZ_SEEDS=DIR writes a stream of every message and each payload alone into DIR at start.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/base/compress.hpp"
#include "core/remote/protocol.hpp"
#include "frame_fuzz.hpp"
#include "remote_samples.hpp"

namespace {

using namespace ts::remote;

template <class Msg>
void round_trip(const Frame& f) {
  const Msg d = decode<Msg>(f);
  const Frame again = encode(d, f.id);
  if (again.type != f.type) std::abort();
  if (encode(decode<Msg>(again), f.id).payload != again.payload) std::abort();
  if constexpr (std::is_same_v<Msg, MatrixPartMsg>) {
    if (d.count <= 4096 && d.offset == 0 && d.rows * d.cols <= 4096) {  // small enough to allocate
      MatrixAssembler a;
      a.add(d);
    }
  }
}

void decode_any(const Frame& f) {
  switch (f.type) {
    case Type::Hello:
      return round_trip<HelloMsg>(f);
    case Type::Error:
      return round_trip<ErrorMsg>(f);
    case Type::Run:
      return round_trip<RunMsg>(f);
    case Type::RunDone:
      return round_trip<RunDoneMsg>(f);
    case Type::Validate:
      return round_trip<ValidateMsg>(f);
    case Type::Validated:
      return round_trip<ValidatedMsg>(f);
    case Type::BandwidthDone:
      return round_trip<BandwidthDoneMsg>(f);
    case Type::LaunchInfo:
      return round_trip<LaunchInfoMsg>(f);
    case Type::LaunchInfoReply:
      return round_trip<LaunchInfoReplyMsg>(f);
    case Type::Reduce:
      return round_trip<ReduceMsg>(f);
    case Type::Reduced:
      return round_trip<ReducedMsg>(f);
    case Type::Element:
      return round_trip<ElementMsg>(f);
    case Type::ElementValue:
      return round_trip<ElementValueMsg>(f);
    case Type::CopyMatrix:
      return round_trip<CopyMatrixMsg>(f);
    case Type::MatrixPart:
      return round_trip<MatrixPartMsg>(f);
    case Type::ReleaseStore:
      return round_trip<ReleaseStoreMsg>(f);
    case Type::Ping:
      return round_trip<PingMsg>(f);
    case Type::Pong:
      return round_trip<PongMsg>(f);
    case Type::Publish:
      return round_trip<PublishMsg>(f);
    case Type::Published:
      return round_trip<PublishedMsg>(f);
    case Type::Withdraw:
      return round_trip<WithdrawMsg>(f);
    case Type::Build:
      return round_trip<BuildMsg>(f);
    case Type::Built:
      return round_trip<BuiltMsg>(f);
    case Type::Sanitize:
      return round_trip<SanitizeMsg>(f);
    case Type::Sanitized:
      return round_trip<SanitizedMsg>(f);
    case Type::Sass:
      return round_trip<SassMsg>(f);
    case Type::SassReply:
      return round_trip<SassReplyMsg>(f);
    case Type::Cancel:
    case Type::Bandwidth:
      return;
  }
  std::abort();  // unframe let an unknown type through
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("TILESCOPE_FUZZ_SEEDS"))
    ts::fuzz::write_seeds(dir, ts::test::sample_frames(), [](const Frame& f) { return frame_bytes(f); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  ts::fuzz::refusals_allowed<ProtocolError, IncompatiblePeer>([&] {
    if (mode < 0x80) {
      ts::fuzz::fuzz_stream<Frame, ProtocolError, IncompatiblePeer>(
          rest, kHeaderBytes, [](const std::string& b, Frame* f) { return unframe(b, f); }, decode_any);
    } else {
      Frame f;
      f.type = Type(uint16_t(uint16_t(Type::Hello) + (mode - 0x80) % uint16_t(Type::Last)));
      f.payload = rest;
      decode_any(f);
    }
  });
  return 0;
}

// libFuzzer target: the messages between TileScope and its worker and compiler processes (app/core/
// worker_protocol.hpp), and the compute-sanitizer job file, on arbitrary bytes (issue 26). The first byte
// picks what the rest is: a frame stream (unframed one frame after another, each decoded by the decoder of
// its type), a payload for one decoder, or a job file. Every input must be refused with a ProtocolError or
// decoded; a decoded message must encode to a message that decodes again to the same bytes (nothing the
// decoder accepts is lost or changed by a round trip). Any other exception, a crash, a sanitizer report or a
// hang is a finding. Seeds: TILESCOPE_FUZZ_SEEDS=DIR writes a stream of every message, each payload alone and
// a job file into DIR at start (scripts/fuzz.sh does).
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/io/worker_protocol.hpp"
#include "frame_fuzz.hpp"

namespace {

using namespace ts::wire;

// Decodes `m` by its type; when it decodes, re-encodes it and checks the round trip is exact.
template <class Msg>
void round_trip(const Message& m, Msg (*dec)(const Message&)) {
  const Msg d = dec(m);
  const Message again = encode(d);
  if (again.type != m.type) std::abort();
  const Message third = encode(dec(again));
  if (third.payload != again.payload) std::abort();
}

void decode_any(const Message& m) {
  switch (m.type) {
    case Type::Hello:
      return round_trip(m, decode<HelloMsg>);
    case Type::Load:
      return round_trip(m, decode<LoadMsg>);
    case Type::Loaded:
      return round_trip(m, decode<LoadedMsg>);
    case Type::Begin:
      return round_trip(m, decode<BeginMsg>);
    case Type::Launch:
      return round_trip(m, decode<LaunchMsg>);
    case Type::Launched:
      return round_trip(m, decode<LaunchedMsg>);
    case Type::Measure:
      return round_trip(m, decode<MeasureMsg>);
    case Type::Progress:
      return round_trip(m, decode<ProgressMsg>);
    case Type::Measured:
      return round_trip(m, decode<MeasuredMsg>);
    case Type::Occupancy:
      return round_trip(m, decode<OccupancyMsg>);
    case Type::OccupancyReply:
      return round_trip(m, decode<OccupancyReplyMsg>);
    case Type::Error:
      return round_trip(m, decode<ErrorMsg>);
    case Type::Compile:
      return round_trip(m, decode<CompileMsg>);
    case Type::Compiled:
      return round_trip(m, decode<CompiledMsg>);
    case Type::Inputs:
      return round_trip(m, decode<InputsMsg>);
    case Type::End:
    case Type::Ok:
    case Type::Cancel:
    case Type::Shutdown:
      return;
  }
  std::abort();  // unframe let an unknown type through
}

std::vector<Message> every_message() {
  LaunchSpec l;
  l.grid = {64, 32, 1};
  l.block = {16, 16, 1};
  l.args = {{ts::ParamType::F32Ptr, ts::ParamRole::C, 0}, {ts::ParamType::I32, ts::ParamRole::Value, 4096}};
  MeasureMsg mm;
  mm.launch = l;
  mm.policy = ts::MeasurePolicy::bench();
  ts::Measurement m;
  m.samples_ms = {1.5, 1.25};
  CompileMsg c;
  c.source = "__global__ void k(float* c) { c[0] = 1; }";
  c.label = "k.cu";
  c.name_expression = "&k";
  c.arch = 90;
  c.options = {"-DTILE=16"};
  c.headers = {{"a.h", "#define A 1"}};
  c.time_limit_s = 120;
  return {encode(HelloMsg{kVersion, 1, 0, "H100"}),
          encode(LoadMsg{"cubin", "_Z1kPf", "", ""}),
          encode(LoadedMsg{}),
          encode(BeginMsg{64, 64, 64, {}, {}, {}}),
          encode(LaunchMsg{l}),
          encode(LaunchedMsg{0.5}),
          encode(mm),
          encode(ProgressMsg{3, 0.5}),
          encode(MeasuredMsg{m}),
          encode(OccupancyMsg{false, 256, 0}),
          encode(OccupancyReplyMsg{{32, 0, 0, 1024, 0, 0, 90}, 8}),
          encode(ErrorMsg{ErrorKind::Fault, 700, "cudaErrorIllegalAddress", "boom"}),
          encode(c),
          encode(CompiledMsg{true, "NVRTC_SUCCESS", "log", "_Z1kPf", "cubin", "ptx", 0.25}),
          encode(InputsMsg{{{{}, {}}, {{}, {}}}}),
          empty(Type::Shutdown)};
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("TILESCOPE_FUZZ_SEEDS");
  if (!dir) return 0;
  ts::fuzz::write_seeds(dir, every_message(), [](const Message& m) { return frame(m); });
  ts::WorkerJob j;
  j.load = LoadMsg{"cubin", "_Z1kPf", "", ""};
  j.launch.args = {{ts::ParamType::F32Ptr, ts::ParamRole::A, 0}};
  j.m = j.n = j.k = 64;
  std::ofstream(std::string(dir) + "/job", std::ios::binary) << char(0xf0) << ts::encode_worker_job(j);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  ts::fuzz::refusals_allowed<ProtocolError>([&] {
    if (mode < 0x80) {
      // A stream of frames, as a socket delivers them.
      ts::fuzz::fuzz_stream<Message, ProtocolError>(
          rest, kHeaderBytes, [](const std::string& b, Message* m) { return unframe(b, m); }, decode_any);
    } else if (mode < 0xf0) {
      // One payload for the decoder of a type chosen by the first byte.
      const uint16_t type = uint16_t(uint16_t(Type::Hello) + (mode - 0x80) % uint16_t(Type::Last));
      decode_any(Message{Type(type), rest});
    } else {
      const ts::WorkerJob j = ts::decode_worker_job(rest);
      if (ts::decode_worker_job(ts::encode_worker_job(j)).launch.args.size() != j.launch.args.size())
        std::abort();
    }
  });
  return 0;
}

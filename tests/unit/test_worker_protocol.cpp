// The worker's message protocol: every message survives a round trip, and every malformed frame (bad magic,
// another version, an unknown type, an oversized or truncated payload, trailing bytes, out-of-range values)
// is refused with a ProtocolError instead of being trusted. Frames on a real socket pair: timeouts and a
// closed peer are told apart.
#include <cmath>
#include <thread>

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/io/worker_protocol.hpp"

using namespace ts;
using namespace ts::wire;

namespace {

IpcHandle handle(char fill) {
  IpcHandle h;
  h.fill(fill);
  return h;
}

LaunchSpec sample_launch() {
  LaunchSpec l;
  l.traced = true;
  l.grid = {64, 32, 1};
  l.block = {16, 16, 1};
  l.smem = 2048;
  l.args = {{ParamType::F32Ptr, ParamRole::C, 0},
            {ParamType::F32Ptr, ParamRole::A, 0},
            {ParamType::I32, ParamRole::Value, 1024},
            {ParamType::U64, ParamRole::Value, int64_t(1) << 40}};
  l.poison_c = true;
  l.trace = handle('t');
  return l;
}

struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~SocketPair() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
};

}  // namespace

TEST(WorkerProtocol, EveryMessageSurvivesARoundTrip) {
  HelloMsg h{kVersion, 1234, 0, "NVIDIA H100 80GB HBM3"};
  const HelloMsg h2 = decode<HelloMsg>(encode(h));
  EXPECT_EQ(h2.pid, 1234);
  EXPECT_EQ(h2.device_name, h.device_name);

  LoadMsg l{std::string(100000, '\x7f'), "_Z6matmulPfS_S_i", "cubin2", "tilescope_traced"};
  const LoadMsg l2 = decode<LoadMsg>(encode(l));
  EXPECT_EQ(l2.cubin, l.cubin);
  EXPECT_EQ(l2.traced_name, "tilescope_traced");

  BeginMsg b{4096, 2048, 8192, handle('a'), handle('b'), handle('c')};
  const BeginMsg b2 = decode<BeginMsg>(encode(b));
  EXPECT_EQ(b2.n, 2048);
  EXPECT_EQ(b2.c, handle('c'));

  const LaunchMsg lm = decode<LaunchMsg>(encode(LaunchMsg{sample_launch()}));
  EXPECT_EQ(lm.launch.grid, (std::array<int64_t, 3>{64, 32, 1}));
  ASSERT_EQ(lm.launch.args.size(), 4u);
  EXPECT_EQ(lm.launch.args[1].role, ParamRole::A);
  EXPECT_EQ(lm.launch.args[3].value, int64_t(1) << 40);
  EXPECT_TRUE(lm.launch.poison_c);
  EXPECT_EQ(lm.launch.trace, handle('t'));

  MeasureMsg mm;
  mm.launch = sample_launch();
  mm.policy = MeasurePolicy::bench();
  mm.already_warm = 1;
  mm.l2_bytes = 50 << 20;
  const MeasureMsg mm2 = decode<MeasureMsg>(encode(mm));
  EXPECT_EQ(mm2.policy.name, "bench");
  EXPECT_EQ(mm2.policy.max_noise, mm.policy.max_noise);
  EXPECT_EQ(mm2.policy.min_sample_ms, 1.0);  // the worker times short launches in batches too
  EXPECT_EQ(mm2.l2_bytes, 50 << 20);

  Measurement m;
  m.samples_ms = {1.5, 1.25, 1.75};
  m.stop = StopReason::CountReached;  // the last reason: every one of them crosses
  m.warmups = 3;
  m.clocks = {{1980, ""}, {1755, "power"}};
  m.launches_per_sample = 37;
  const MeasuredMsg out = decode<MeasuredMsg>(encode(MeasuredMsg{m}));
  EXPECT_EQ(out.m.samples_ms, m.samples_ms);
  EXPECT_EQ(out.m.launches_per_sample, 37);
  EXPECT_EQ(out.m.stats.median, 1.5);  // statistics are recomputed from the samples, not trusted
  EXPECT_EQ(out.m.stop, StopReason::CountReached);
  EXPECT_EQ(out.m.clocks[1].throttle, "power");

  const ErrorMsg e =
      decode<ErrorMsg>(encode(ErrorMsg{ErrorKind::Fault, 700, "cudaErrorIllegalAddress", "boom"}));
  EXPECT_EQ(e.kind, ErrorKind::Fault);
  EXPECT_EQ(e.cuda_code, 700);

  const OccupancyReplyMsg o =
      decode<OccupancyReplyMsg>(encode(OccupancyReplyMsg{{32, 2048, 0, 1024, 0, 0, 90}, 8}));
  EXPECT_EQ(o.attrs.regs, 32);
  EXPECT_EQ(o.blocks_per_sm, 8);
  EXPECT_EQ(decode<ProgressMsg>(encode(ProgressMsg{7, 2.5})).launches, 7);
  EXPECT_EQ(decode<LaunchedMsg>(encode(LaunchedMsg{0.25})).ms, 0.25);
  EXPECT_TRUE(decode<LoadedMsg>(encode(LoadedMsg{{}, true, {}})).has_traced);
  EXPECT_EQ(decode<OccupancyMsg>(encode(OccupancyMsg{false, 256, 0})).threads, 256);

  // The compiler process's request and answer (issue 26).
  CompileMsg c;
  c.source = "__global__ void k() {}";
  c.label = "k.cu";
  c.name_expression = "&" + std::string(100000, 'k');  // a name NVRTC crashes on travels whole
  c.arch = 90;
  c.options = {"--gpu-architecture=sm_90", "-DTILE=16"};
  c.headers = {{"inc/a.h", "#define A 1\n"}, {"b.h", ""}};
  c.time_limit_s = 120;
  c.memory_limit = uint64_t(16) << 30;
  c.stack_bytes = uint64_t(1) << 30;
  const CompileMsg c2 = decode<CompileMsg>(encode(c));
  EXPECT_EQ(c2.source, c.source);
  EXPECT_EQ(c2.name_expression, c.name_expression);
  EXPECT_EQ(c2.options, c.options);
  EXPECT_EQ(c2.headers, c.headers);
  EXPECT_EQ(c2.time_limit_s, 120);
  EXPECT_EQ(c2.memory_limit, c.memory_limit);
  EXPECT_EQ(c2.stack_bytes, c.stack_bytes);
  CompiledMsg d{true, "NVRTC_SUCCESS", "ptxas info", "_Z1kv", std::string(5000, '\x7f'), ".entry", 0.25};
  const CompiledMsg d2 = decode<CompiledMsg>(encode(d));
  EXPECT_TRUE(d2.ok);
  EXPECT_EQ(d2.cubin, d.cubin);
  EXPECT_EQ(d2.lowered_name, "_Z1kv");
  EXPECT_EQ(d2.compile_s, 0.25);
}

// Changing inputs (issue 30): the other input sets travel to the worker (Inputs), a launch names the set it
// reads, a measurement how many sets it switches between, and its answer the set of its last launch; values
// out of range are refused.
TEST(WorkerProtocol, ChangingInputsTravelAndOutOfRangeSetsAreRefused) {
  InputsMsg in;
  in.sets = {{handle('a'), handle('b')}, {handle('c'), handle('d')}};
  const InputsMsg in2 = decode<InputsMsg>(encode(in));
  ASSERT_EQ(in2.sets.size(), 2u);
  EXPECT_EQ(in2.sets[1].first, handle('c'));
  EXPECT_EQ(in2.sets[1].second, handle('d'));
  in.sets.assign(size_t(kMaxInputSets), {handle('a'), handle('b')});  // set 0 is Begin's: one too many
  EXPECT_THROW(decode<InputsMsg>(encode(in)), ProtocolError);

  LaunchSpec l = sample_launch();
  l.input_set = 2;
  EXPECT_EQ(decode<LaunchMsg>(encode(LaunchMsg{l})).launch.input_set, 2);
  l.input_set = -1;
  EXPECT_THROW(decode<LaunchMsg>(encode(LaunchMsg{l})), ProtocolError);
  l.input_set = kMaxInputSets;
  EXPECT_THROW(decode<LaunchMsg>(encode(LaunchMsg{l})), ProtocolError);

  MeasureMsg mm;
  mm.launch = sample_launch();
  mm.policy = MeasurePolicy::quick();
  EXPECT_EQ(decode<MeasureMsg>(encode(mm)).input_sets, 1);  // fixed inputs unless asked
  mm.input_sets = MeasurePolicy::kChangingInputSets;
  EXPECT_EQ(decode<MeasureMsg>(encode(mm)).input_sets, 3);
  mm.input_sets = 0;
  EXPECT_THROW(decode<MeasureMsg>(encode(mm)), ProtocolError);

  Measurement m;
  m.samples_ms = {1.0, 1.1};
  m.last_input_set = 2;
  EXPECT_EQ(decode<MeasuredMsg>(encode(MeasuredMsg{m})).m.last_input_set, 2);
  m.last_input_set = kMaxInputSets;
  EXPECT_THROW(decode<MeasuredMsg>(encode(MeasuredMsg{m})), ProtocolError);
  EXPECT_STREQ(to_string(Type::Inputs), "Inputs");
}

TEST(WorkerProtocol, MalformedFramesAndPayloadsAreRefused) {
  Message out;
  const std::string good = frame(encode(ProgressMsg{1, 1.0}));
  EXPECT_EQ(unframe(good, &out), good.size());
  EXPECT_EQ(out.type, Type::Progress);
  EXPECT_EQ(unframe(good.substr(0, 5), &out), 0u);                // incomplete header: wait for more
  EXPECT_EQ(unframe(good.substr(0, good.size() - 1), &out), 0u);  // incomplete payload: wait for more

  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_THROW(unframe(bad_magic, &out), ProtocolError);
  std::string other_version = good;
  other_version[4] = 9;
  try {
    unframe(other_version, &out);
    FAIL();
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("version 9, expected " + std::to_string(kVersion)),
              std::string::npos)
        << e.what();
  }
  std::string unknown_type = good;
  unknown_type[6] = 99;
  EXPECT_THROW(unframe(unknown_type, &out), ProtocolError);
  std::string huge = good;
  huge[11] = char(0x7f);  // a length of ~2 GiB
  EXPECT_THROW(unframe(huge, &out), ProtocolError);
  EXPECT_THROW(frame(Message{Type::Load, std::string(kMaxPayload + 1, 'x')}), ProtocolError);

  // Payloads: truncated, with bytes left over, of the wrong type, with values out of range.
  Message p = encode(ProgressMsg{1, 1.0});
  p.payload.pop_back();
  EXPECT_THROW(decode<ProgressMsg>(p), ProtocolError);
  p = encode(ProgressMsg{1, 1.0});
  p.payload += "x";
  EXPECT_THROW(decode<ProgressMsg>(p), ProtocolError);
  EXPECT_THROW(decode<LaunchedMsg>(encode(ProgressMsg{1, 1.0})), ProtocolError);
  LaunchSpec l = sample_launch();
  l.block = {2048, 1, 1};
  EXPECT_THROW(decode<LaunchMsg>(encode(LaunchMsg{l})), ProtocolError);
  BeginMsg b{0, 1, 1, {}, {}, {}};
  EXPECT_THROW(decode<BeginMsg>(encode(b)), ProtocolError);
  MeasureMsg mm;
  mm.launch = sample_launch();
  mm.policy.min_samples = 0;  // not a valid policy
  EXPECT_THROW(decode<MeasureMsg>(encode(mm)), ProtocolError);
  mm.policy = MeasurePolicy::bench();
  mm.policy.min_sample_ms = -1;
  EXPECT_THROW(decode<MeasureMsg>(encode(mm)), ProtocolError);
  for (int launches : {0, MeasurePolicy::kMaxLaunchesPerSample + 1}) {
    Measurement bad;
    bad.samples_ms = {1.0};
    bad.launches_per_sample = launches;
    EXPECT_THROW(decode<MeasuredMsg>(encode(MeasuredMsg{bad})), ProtocolError) << launches;
  }
  // A list count that claims more elements than the message can hold.
  Writer w;
  w.u32(1u << 30);
  EXPECT_THROW(decode<MeasuredMsg>(Message{Type::Measured, w.take()}), ProtocolError);
  EXPECT_THROW(decode<LoadMsg>(encode(LoadMsg{"", "", "", ""})), ProtocolError);
  // A compile without a time limit, for no architecture, or with a stack of terabytes; an impossible time.
  CompileMsg c;
  c.arch = 90;
  c.time_limit_s = 0;
  EXPECT_THROW(decode<CompileMsg>(encode(c)), ProtocolError);
  c.time_limit_s = 10;
  c.arch = 0;
  EXPECT_THROW(decode<CompileMsg>(encode(c)), ProtocolError);
  c.arch = 90;
  c.stack_bytes = uint64_t(1) << 40;
  EXPECT_THROW(decode<CompileMsg>(encode(c)), ProtocolError);
  CompiledMsg d;
  d.compile_s = -1;
  EXPECT_THROW(decode<CompiledMsg>(encode(d)), ProtocolError);
  d.compile_s = std::nan("");
  EXPECT_THROW(decode<CompiledMsg>(encode(d)), ProtocolError);
}

TEST(WorkerProtocol, FramesOnASocketPairTellATimeoutFromAClosedPeer) {
  SocketPair sp;
  Message m;
  EXPECT_EQ(read_message(sp.fd[0], &m, 50), ReadStatus::Timeout);
  // A large message arrives whole even though it is written in pieces by the kernel.
  const LoadMsg big{std::string(5 << 20, 'c'), "k", "", ""};
  std::thread writer([&] { EXPECT_TRUE(write_message(sp.fd[1], encode(big))); });
  ASSERT_EQ(read_message(sp.fd[0], &m, 5000), ReadStatus::Ok);
  writer.join();
  EXPECT_EQ(decode<LoadMsg>(m).cubin.size(), size_t(5) << 20);
  close(sp.fd[1]);
  sp.fd[1] = -1;
  EXPECT_EQ(read_message(sp.fd[0], &m, 1000), ReadStatus::Eof);
  // Writing to a closed peer reports it (and raises no SIGPIPE).
  SocketPair sp2;
  close(sp2.fd[0]);
  sp2.fd[0] = -1;
  EXPECT_FALSE(write_message(sp2.fd[1], encode(ProgressMsg{1, 1})));
  // Garbage on the wire is a protocol error, not a hang or a crash.
  SocketPair sp3;
  ASSERT_EQ(write(sp3.fd[1], "garbage garbage", 15), 15);
  EXPECT_THROW(read_message(sp3.fd[0], &m, 1000), ProtocolError);
}

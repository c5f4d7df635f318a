// The remote engine's protocol (core/remote/protocol.hpp): every message's round trip, frames cut anywhere,
// a peer of another version, malformed frames and fields refused with a ProtocolError naming what.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "core/base/compress.hpp"
#include "core/remote/protocol.hpp"
#include "remote_samples.hpp"
#include "streamk_sample.hpp"

using namespace ts;
using namespace ts::remote;

namespace {

// Decodes a frame with its type's decoder and encodes it again (what the fuzz target checks too).
Frame again(const Frame& f) {
  switch (f.type) {
    case Type::Hello:
      return encode(decode<HelloMsg>(f), f.id);
    case Type::Error:
      return encode(decode<ErrorMsg>(f), f.id);
    case Type::Run:
      return encode(decode<RunMsg>(f), f.id);
    case Type::RunDone:
      return encode(decode<RunDoneMsg>(f), f.id);
    case Type::Validate:
      return encode(decode<ValidateMsg>(f), f.id);
    case Type::Validated:
      return encode(decode<ValidatedMsg>(f), f.id);
    case Type::BandwidthDone:
      return encode(decode<BandwidthDoneMsg>(f), f.id);
    case Type::LaunchInfo:
      return encode(decode<LaunchInfoMsg>(f), f.id);
    case Type::LaunchInfoReply:
      return encode(decode<LaunchInfoReplyMsg>(f), f.id);
    case Type::Reduce:
      return encode(decode<ReduceMsg>(f), f.id);
    case Type::Reduced:
      return encode(decode<ReducedMsg>(f), f.id);
    case Type::Element:
      return encode(decode<ElementMsg>(f), f.id);
    case Type::ElementValue:
      return encode(decode<ElementValueMsg>(f), f.id);
    case Type::CopyMatrix:
      return encode(decode<CopyMatrixMsg>(f), f.id);
    case Type::MatrixPart:
      return encode(decode<MatrixPartMsg>(f), f.id);
    case Type::ReleaseStore:
      return encode(decode<ReleaseStoreMsg>(f), f.id);
    case Type::Ping:
      return encode(decode<PingMsg>(f), f.id);
    case Type::Pong:
      return encode(decode<PongMsg>(f), f.id);
    case Type::Publish:
      return encode(decode<PublishMsg>(f), f.id);
    case Type::Published:
      return encode(decode<PublishedMsg>(f), f.id);
    case Type::Withdraw:
      return encode(decode<WithdrawMsg>(f), f.id);
    case Type::Build:
      return encode(decode<BuildMsg>(f), f.id);
    case Type::Built:
      return encode(decode<BuiltMsg>(f), f.id);
    case Type::Sanitize:
      return encode(decode<SanitizeMsg>(f), f.id);
    case Type::Sanitized:
      return encode(decode<SanitizedMsg>(f), f.id);
    case Type::Sass:
      return encode(decode<SassMsg>(f), f.id);
    case Type::SassReply:
      return encode(decode<SassReplyMsg>(f), f.id);
    case Type::Cancel:
    case Type::Bandwidth:
      return f;
  }
  ADD_FAILURE() << "no decoder for " << to_string(f.type);
  return f;
}

}  // namespace

TEST(RemoteProtocol, EveryMessageRoundTripsExactly) {
  const auto frames = test::sample_frames();
  std::vector<bool> seen(size_t(Type::Last) + 1, false);
  for (const Frame& f : frames) {
    SCOPED_TRACE(to_string(f.type));
    seen[size_t(f.type)] = true;
    const std::string bytes = frame_bytes(f);
    Frame back;
    ASSERT_EQ(unframe(bytes, &back), bytes.size());
    EXPECT_EQ(back.type, f.type);
    EXPECT_EQ(back.id, f.id);
    const Frame re = again(back);
    EXPECT_EQ(re.payload, f.payload);
  }
  for (size_t t = 1; t <= size_t(Type::Last); ++t)
    EXPECT_TRUE(seen[t]) << to_string(Type(t)) << " not sampled";
}

TEST(RemoteProtocol, ValuesSurviveTheTrip) {
  const auto frames = test::sample_frames();
  const RunDoneMsg d = decode<RunDoneMsg>(frames[3]);
  const RunResult want = test::sample_result();
  EXPECT_EQ(d.result.spec, want.spec);
  EXPECT_EQ(d.result.samples_ms, want.samples_ms);
  EXPECT_DOUBLE_EQ(d.result.stats.median, want.stats.median);
  EXPECT_EQ(d.result.error.worst_row, 17);
  EXPECT_TRUE(d.result.error.passed);
  EXPECT_EQ(d.result.interleaved.samples_ms, want.interleaved.samples_ms);
  EXPECT_EQ(d.result.impossible, want.impossible);  // the engine's verdict, not made again by the window
  EXPECT_EQ(d.result.changing.sets, 3);
  EXPECT_EQ(d.result.changing.samples_ms, want.changing.samples_ms);
  EXPECT_FALSE(d.result.changing.passed);
  EXPECT_EQ(d.result.changing.verdict, want.changing.verdict);
  const RunMsg run = decode<RunMsg>(frames[2]);
  ASSERT_TRUE(run.request.policy);
  EXPECT_TRUE(run.request.policy->changing_inputs);
  ASSERT_TRUE(d.result.occupancy);
  EXPECT_EQ(d.result.occupancy->limiter, "threads");
  EXPECT_EQ(d.result.occupancy->function, "_ZN2ts5tiledILi16EEEvPKfS2_Pflll");
  ASSERT_EQ(d.result.occupancy_by_tile.size(), 2u);
  EXPECT_EQ(d.result.occupancy_by_tile[1].first, 32);
  EXPECT_FALSE(d.result.occupancy->k_segments);
  EXPECT_TRUE(d.result.occupancy_by_tile[1].second.k_segments);
  ASSERT_TRUE(d.result.trace);
  ASSERT_EQ(d.result.trace->records.size(), 2u);
  EXPECT_EQ(d.result.trace->records[1].start_ns, 150u);
  EXPECT_EQ(d.result.trace->records[1].smid, 7u);
  EXPECT_EQ(d.result.trace->k_step, 16);  // split-K's K ranges in the Perfetto export
  EXPECT_EQ(d.store.id, 9u);
  EXPECT_EQ(d.store.dims[3][1], 1024);

  const HelloMsg h = decode<HelloMsg>(frames[0]);
  ASSERT_EQ(h.engine.kernels.size(), 2u);
  EXPECT_TRUE(h.engine.kernels[0].has_cpu());  // it has one, on the engine's machine
  EXPECT_EQ(h.engine.kernels[0].cpu, nullptr);
  EXPECT_EQ(h.engine.kernels[0].tiles, (std::vector<int>{8, 16, 32}));
  EXPECT_EQ(h.engine.bench_policy.name, "bench");
  EXPECT_TRUE(h.engine.bench_policy.interleave_reference);
  EXPECT_EQ(h.engine.device.limits.sm_count, 132);

  const ElementValueMsg e = decode<ElementValueMsg>(frames[14]);
  EXPECT_EQ(e.value, -0.25f);
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(decode<ElementValueMsg>(encode(ElementValueMsg{nan}, 1)).value));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(decode<ElementValueMsg>(encode(ElementValueMsg{inf}, 1)).value, inf);  // exact, not a NaN
}

TEST(RemoteProtocol, MatricesTravelInPartsAndComeBackWhole) {
  HostMatrix m(1000, 4200 + 7);  // over one part (kPartElements = 4 Mi floats)
  for (size_t i = 0; i < m.data.size(); ++i) m.data[i] = float(i % 977) * 0.5f - 3;
  const auto parts = matrix_parts(m, MatrixId::B, 42);
  ASSERT_EQ(parts.size(), 2u);
  MatrixAssembler a;
  EXPECT_FALSE(a.add(decode<MatrixPartMsg>(parts[0])));
  EXPECT_TRUE(a.add(decode<MatrixPartMsg>(parts[1])));
  const auto back = a.take();
  EXPECT_EQ(back->rows, 1000);
  EXPECT_EQ(back->cols, 4207);
  EXPECT_EQ(back->data, m.data);
  // Out of order, or a part of another matrix: refused.
  MatrixAssembler b;
  EXPECT_THROW(b.add(decode<MatrixPartMsg>(parts[1])), ProtocolError);
  MatrixAssembler c;
  c.add(decode<MatrixPartMsg>(parts[0]));
  EXPECT_THROW(c.add(decode<MatrixPartMsg>(parts[0])), ProtocolError);
  EXPECT_THROW(c.take(), ProtocolError);
}

TEST(RemoteProtocol, AnotherVersionIsRefusedWithBothVersionsNamed) {
  HelloMsg h;
  h.protocol = 99;
  h.tilescope = "9.9.0";
  h.role = "window";
  Frame f = encode(h, 0);
  f.version = 99;
  Frame back;
  ASSERT_GT(unframe(frame_bytes(f), &back), 0u);  // a Hello of any version is read ...
  try {
    decode<HelloMsg>(back);
    FAIL() << "a Hello of protocol 99 was accepted";
  } catch (const IncompatiblePeer& e) {  // ... and refused with both versions named
    const std::string what = e.what();
    EXPECT_NE(what.find("protocol 99 (TileScope 9.9.0)"), std::string::npos) << what;
    EXPECT_NE(what.find("protocol " + std::to_string(kProtocol) + " (TileScope "), std::string::npos) << what;
  }
  // Any other frame of another version is refused at its header.
  Frame ping = encode(PingMsg{1}, 0);
  ping.version = kProtocol + 1;
  EXPECT_THROW(unframe(frame_bytes(ping), &back), ProtocolError);
}

TEST(RemoteProtocol, FramesCutAnywhereWaitForTheRest) {
  const auto frames = test::sample_frames();
  std::string stream;
  for (const Frame& f : frames) stream += frame_bytes(f);
  // Every prefix: whole frames come out, the rest waits (never an error, never a frame made up).
  for (size_t cut : {size_t(0), size_t(1), kHeaderBytes - 1, kHeaderBytes, kHeaderBytes + 1,
                     stream.size() / 2, stream.size() - 1}) {
    std::string bytes = stream.substr(0, cut);
    size_t whole = 0;
    Frame f;
    while (size_t took = unframe(bytes, &f)) {
      bytes.erase(0, took);
      ++whole;
    }
    EXPECT_LT(whole, frames.size()) << cut;
  }
}

TEST(RemoteProtocol, MalformedFramesAreProtocolErrors) {
  Frame back;
  std::string bytes = frame_bytes(encode(PingMsg{1}, 0));
  std::string bad = bytes;
  bad[0] = 'X';
  try {
    unframe(bad, &back);
    FAIL();
  } catch (const ProtocolError& e) {  // a login banner where frames should be: said so
    EXPECT_NE(std::string(e.what()).find("not a TileScope engine"), std::string::npos) << e.what();
  }
  bad = bytes;
  bad[6] = char(0x7f);  // type 0x7f..
  EXPECT_THROW(unframe(bad, &back), ProtocolError);
  bad = bytes;
  bad[16] = bad[17] = bad[18] = bad[19] = char(0xff);  // 4 GiB payload
  EXPECT_THROW(unframe(bad, &back), ProtocolError);
  // A payload with a byte too many or too few.
  Frame f = encode(PingMsg{1}, 0);
  f.payload += 'x';
  EXPECT_THROW(decode<PingMsg>(f), ProtocolError);
  f.payload.resize(3);
  EXPECT_THROW(decode<PingMsg>(f), ProtocolError);
  // A frame decoded as another type.
  EXPECT_THROW(decode<PongMsg>(encode(PingMsg{1}, 0)), ProtocolError);
}

TEST(RemoteProtocol, FieldsOutOfRangeAreRefusedByName) {
  RunDoneMsg d;
  d.result = test::sample_result();
  d.result.samples_ms = {1, -5};  // a negative time
  d.result.stats = summarize(d.result.samples_ms);
  try {
    decode<RunDoneMsg>(encode(d, 1));
    FAIL();
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("samples_ms[1]"), std::string::npos) << e.what();
  }
  ReduceMsg r{1, MatrixId::C, LodRegion{0, 0, 10, 10, 0, 4}, Reduce::Mean};  // w = 0
  EXPECT_THROW(decode<ReduceMsg>(encode(r, 1)), ProtocolError);
  Frame f = encode(ReduceMsg{1, MatrixId::C, LodRegion{0, 0, 10, 10, 4, 4}, Reduce::Mean}, 1);
  f.payload[8] = 9;  // the matrix: there are 4
  EXPECT_THROW(decode<ReduceMsg>(f), ProtocolError);
  MatrixPartMsg p{MatrixId::A, 4, 4, 10, 8, pack_floats(std::vector<float>(8).data(), 8)};  // past the end
  EXPECT_THROW(decode<MatrixPartMsg>(encode(p, 1)), ProtocolError);
  RunMsg run;
  run.request.policy = MeasurePolicy::quick();
  run.request.policy->min_samples = -1;
  EXPECT_THROW(decode<RunMsg>(encode(run, 1)), ProtocolError);
  // Values that do not decompress to what they say.
  std::vector<float> v(8, 1.f);
  EXPECT_THROW(unpack_floats(pack_floats(v.data(), 8), v.data(), 7), ProtocolError);
  EXPECT_THROW(unpack_floats("not zstd", v.data(), 8), ProtocolError);
}

TEST(RemoteProtocol, ReadFrameOnAPipe) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const std::string bytes = frame_bytes(encode(PongMsg{2, 1, "x"}, 77));
  ASSERT_EQ(write(p[1], bytes.data(), bytes.size()), ssize_t(bytes.size()));
  ASSERT_EQ(write(p[1], bytes.data(), 7), 7);  // then half a header, and the writer goes
  close(p[1]);
  Frame f;
  ASSERT_EQ(read_frame(p[0], &f, 1000), wire::ReadStatus::Ok);
  EXPECT_EQ(f.id, 77u);
  EXPECT_EQ(decode<PongMsg>(f).latest_incident, "x");
  EXPECT_THROW(read_frame(p[0], &f, 1000), ProtocolError);  // truncated: said, not waited for forever
  close(p[0]);
  ASSERT_EQ(pipe(p), 0);
  close(p[1]);
  EXPECT_EQ(read_frame(p[0], &f, 1000), wire::ReadStatus::Eof);
  close(p[0]);
}

TEST(RemoteProtocol, APersonsKernelAndItsBuildsSurviveTheTrip) {
  const auto frames = test::sample_frames();
  auto find = [&](Type t, size_t nth = 0) -> const Frame& {
    for (const Frame& f : frames)
      if (f.type == t && nth-- == 0) return f;
    ADD_FAILURE() << to_string(t) << " not sampled";
    return frames[0];
  };
  const KernelText want = test::sample_kernel_text();
  const KernelText got = decode<BuildMsg>(find(Type::Build)).kernel;
  EXPECT_EQ(got.source.path, want.source.path);
  EXPECT_EQ(got.source.text, want.source.text);
  EXPECT_TRUE(got.source.normalised);
  EXPECT_EQ(got.source.first_line, 3);
  EXPECT_EQ(got.kernel, "mm");
  ASSERT_EQ(got.spec.params.size(), 4u);
  EXPECT_EQ(got.spec.params[3].role, ParamRole::Value);
  EXPECT_EQ(got.spec.params[3].value, "N");
  EXPECT_EQ(got.spec.grid, want.spec.grid);
  EXPECT_EQ(got.spec.block, want.spec.block);
  EXPECT_EQ(got.spec.smem, want.spec.smem);
  EXPECT_EQ(got.spec.hang_limit_s, 7.5);
  EXPECT_EQ(got.spec.size_symbols, want.spec.size_symbols);
  ASSERT_EQ(got.headers.size(), 1u);
  EXPECT_EQ(got.headers[0].name, "common.cuh");
  EXPECT_EQ(got.headers[0].content, want.headers[0].content);
  EXPECT_EQ(decode<BuildMsg>(find(Type::Build)).sizes.k, 512);

  const BuiltMsg ok = decode<BuiltMsg>(find(Type::Built));
  const CompiledModule m = test::sample_module();
  EXPECT_TRUE(ok.module.ok);
  EXPECT_EQ(ok.module.cubin, m.cubin);  // bytes, NULs included
  EXPECT_EQ(ok.module.lowered_name, m.lowered_name);
  EXPECT_EQ(ok.module.resources.regs, 40);
  EXPECT_EQ(ok.module.resources.cmem0, 380);
  EXPECT_EQ(ok.module.options, m.options);
  EXPECT_EQ(ok.module.compile_s, m.compile_s);
  const BuiltMsg failed = decode<BuiltMsg>(find(Type::Built, 1));
  EXPECT_TRUE(failed.failed);
  EXPECT_EQ(failed.first_line, 3);
  ASSERT_EQ(failed.module.diagnostics.size(), 1u);
  EXPECT_EQ(failed.module.diagnostics[0].line, 5);
  EXPECT_EQ(failed.module.diagnostics[0].severity, "error");

  const SanitizedMsg s = decode<SanitizedMsg>(find(Type::Sanitized));
  ASSERT_EQ(s.reports.size(), 2u);
  EXPECT_EQ(s.reports[1].issues, 2);
  EXPECT_EQ(s.reports[0].issues, -1);
  EXPECT_EQ(s.reports[1].shape.k, 257);
  const HelloMsg h = decode<HelloMsg>(find(Type::Hello));
  EXPECT_EQ(h.engine.workshop.architectures, (std::vector<int>{75, 80, 90, 100, 120}));
  EXPECT_EQ(h.engine.workshop.sanitize_why, "compute-sanitizer was not found");
}

TEST(RemoteProtocol, APersonsKernelTravelsWithinTheLimitsOfReadingIt) {
  BuildMsg b;
  b.kernel = test::sample_kernel_text();
  b.tile = 16;
  b.arch = 5;  // no such architecture
  EXPECT_THROW(decode<BuildMsg>(encode(b, 1)), ProtocolError);
  b.arch = 90;
  b.kernel.source.text.assign(size_t(kMaxKernelSourceBytes) + 1, ' ');
  try {
    decode<BuildMsg>(encode(b, 1));
    FAIL() << "a source over 4 MiB was taken";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("'text'"), std::string::npos) << e.what();
  }
  b.kernel = test::sample_kernel_text();
  b.kernel.headers.assign(size_t(kMaxIncludedFiles) + 1, b.kernel.headers[0]);
  EXPECT_THROW(decode<BuildMsg>(encode(b, 1)), ProtocolError);
  // Five headers of 4 MiB: each within its limit, over the 16 MiB of all of them.
  b.kernel.headers.assign(5, IncludedHeader{"h.cuh", "", std::string(size_t(kMaxKernelSourceBytes), 'x')});
  try {
    decode<BuildMsg>(encode(b, 1));
    FAIL() << "headers over 16 MiB were taken";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("over the limit"), std::string::npos) << e.what();
  }
  BuiltMsg built;
  built.module = test::sample_module();
  built.failed = true;  // and yet the module says ok
  EXPECT_THROW(decode<BuiltMsg>(encode(built, 1)), ProtocolError);
}

// Protocol 4: a stream-K trace travels whole: k_segments and K beside the grid, every record's k_first in its
// bytes, the absent records as the zeros they are.
TEST(RemoteProtocol, AStreamKTraceTravelsWithItsSegments) {
  RunDoneMsg d;
  d.result = test::sample_result();
  const TileTrace want = test::streamk_trace();
  d.result.trace = std::make_shared<TileTrace>(want);
  const RunDoneMsg back = decode<RunDoneMsg>(encode(d, 3));
  ASSERT_TRUE(back.result.trace);
  const TileTrace& t = *back.result.trace;
  EXPECT_TRUE(t.k_segments);
  EXPECT_EQ(t.k, 4096);
  EXPECT_EQ(t.k_step, 32);
  EXPECT_EQ(t.grid_z, 3);
  ASSERT_EQ(t.records.size(), want.records.size());
  for (size_t i = 0; i < t.records.size(); ++i) {
    EXPECT_EQ(t.records[i].start_ns, want.records[i].start_ns) << i;
    EXPECT_EQ(t.records[i].end_ns, want.records[i].end_ns) << i;
    EXPECT_EQ(t.records[i].smid, want.records[i].smid) << i;
    EXPECT_EQ(t.records[i].k_first, want.records[i].k_first) << i;
  }
  EXPECT_EQ(check_trace(t), "");
  EXPECT_EQ(describe_grid(t), describe_grid(want));
  // A split-K trace stays one: k_segments false, K as sent (0: not known).
  d.result.trace = test::sample_result().trace;
  const RunDoneMsg plain = decode<RunDoneMsg>(encode(d, 3));
  EXPECT_FALSE(plain.result.trace->k_segments);
  EXPECT_EQ(plain.result.trace->k, 0);
  // K out of range is refused by name.
  auto bad = std::make_shared<TileTrace>(want);
  bad->k = -1;
  d.result.trace = bad;
  try {
    decode<RunDoneMsg>(encode(d, 3));
    FAIL() << "a trace of K = -1 was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("'k' = -1 is outside"), std::string::npos) << e.what();
  }
}

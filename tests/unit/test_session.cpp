// Sessions: a round trip keeps every field and every number exactly, damaged or foreign files are refused
// with their reason, saving is atomic and never replaces unless asked, overlays get distinct labels, and the
// plot series and ladder bars come out of the records as the panels need them.
#include <ctime>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/engine/cpu_backend.hpp"
#include "kernels/engine/registry.hpp"
#include "core/io/session.hpp"
#include "test_util.hpp"

using namespace ts;

namespace {

RunResult fake_result(const std::string& kernel, int tile, int64_t n, double median,
                      const std::string& date) {
  RunResult r;
  r.spec.kernel = kernel;
  r.spec.tile = tile;
  r.spec.m = r.spec.n = r.spec.k = n;
  r.backend = "cuda";
  r.device = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  r.policy = MeasurePolicy::bench().describe();
  r.samples_ms = {median * 0.99, median, median * 1.0 / 3.0 + median * 2.0 / 3.0, median * 1.01};
  r.stats = summarize(r.samples_ms);
  r.stop = "converged";
  r.error.passed = true;
  r.error.max_abs_err = 1.0 / 3.0 * 1e-6;
  r.error.tolerance = 1.953e-3;
  r.clock = summarize_clocks({{1980, ""}, {1755, "sw_power_cap"}}, 1980);
  r.frames_drawn = 7;
  r.tile_m = r.tile_n = tile;
  r.date = date;
  return r;
}

// cuBLAS timed between the samples, as the CUDA backend records it: its own times and its own clock.
RunResult with_reference(RunResult r, double ref_ms, double ref_mhz) {
  r.interleaved.kernel = "cublas";
  r.interleaved.samples_ms = {ref_ms * 1.0 / 3.0 + ref_ms * 2.0 / 3.0, ref_ms * 1.02, ref_ms * 0.97, ref_ms};
  r.interleaved.stats = summarize(r.interleaved.samples_ms);
  r.interleaved.clock = summarize_clocks({{ref_mhz, "sw_power_cap"}, {ref_mhz + 10, ""}}, 1980);
  return r;
}

Session sample_session() {
  DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H100 80GB HBM3";
  d.label = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  d.sm = 90;
  d.sm_count = 132;
  d.max_sm_clock_mhz = 1980;
  d.driver = "580.159.04, CUDA 13.0";
  d.cuda_runtime = "13.0";
  d.l2_bytes = 52428800;
  d.peak_fp32_tflops = 66.90432;
  d.limits.smem_per_sm = 233472;
  d.limits.reserved_smem_per_block = 1024;
  Session s = Session::for_device(d);
  s.dram_gbs = 3001.123456789;
  s.add(with_reference(fake_result("tiled", 32, 1024, 0.2413, "2025-01-31T10:00:00Z"), 0.0701, 1755));
  s.add(fake_result("tiled", 32, 2048, 1.9271, "2025-01-31T10:00:05Z"));
  s.add(fake_result("tiled", 32, 1024, 0.2399, "2025-01-31T11:00:00Z"));  // a newer run at 1024
  RunResult cublas = fake_result("cublas", 0, 1024, 0.0688, "2025-01-31T10:00:01Z");
  cublas.interleaved_note = "cublas is the reference itself";
  s.add(cublas);
  s.add(fake_result("tiled", 8, 1024, 0.4217, "2025-01-31T10:00:02Z"));
  RunResult failed = fake_result("tiled_floork", 16, 1024, 0.3, "2025-01-31T10:00:03Z");
  failed.error.passed = false;
  s.add(failed);
  return s;
}

}  // namespace

TEST(Session, RoundTripKeepsEveryFieldAndEveryNumberExactly) {
  test::TempDir dir;
  const Session s = sample_session();
  const auto path = dir.path() / "s.json";
  save_session(path, s, false);
  const Session back = load_session(path);
  EXPECT_EQ(to_json(back), to_json(s));  // every field, numbers bit for bit
  ASSERT_EQ(back.records.size(), s.records.size());
  const MeasurementRecord& r = back.records[0];
  EXPECT_EQ(r.samples_ms, s.records[0].samples_ms);
  EXPECT_EQ(r.stats.p75, s.records[0].stats.p75);
  EXPECT_EQ(r.clock.throttle_reasons, "sw_power_cap");
  EXPECT_TRUE(r.clock.throttled);
  EXPECT_EQ(r.frames_drawn, 7);
  EXPECT_EQ(r.device, "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)");
  EXPECT_FALSE(r.program_version.empty());
  EXPECT_FALSE(r.commit.empty());
  EXPECT_EQ(back.device.limits.smem_per_sm, 233472);
  EXPECT_EQ(back.dram_gbs, 3001.123456789);
  EXPECT_EQ(back.device.driver, "580.159.04, CUDA 13.0");
}

TEST(Session, SavingIsAtomicAndNeverReplacesUnlessAsked) {
  test::TempDir dir;
  const auto path = dir.path() / "sub" / "session.json";  // the folder is created
  Session s = sample_session();
  save_session(path, s, false);
  EXPECT_THROW(save_session(path, s, false), SessionError);
  s.records.pop_back();
  save_session(path, s, true);
  EXPECT_EQ(load_session(path).records.size(), s.records.size());
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(path.parent_path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  EXPECT_THROW(save_session(dir.path(), s, true), SessionError);  // a folder is never replaced
}

TEST(Session, ACorruptOrForeignFileIsRefusedWithItsReason) {
  test::TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.file(name), std::ios::binary) << text;
    return dir.path() / name;
  };
  auto reason = [](const std::filesystem::path& p) -> std::string {
    try {
      load_session(p);
    } catch (const SessionError& e) {
      return e.what();
    }
    return "accepted";
  };
  const std::string good = to_json(sample_session()).dump(1);
  EXPECT_NE(reason(dir.path() / "missing.json").find("no such file"), std::string::npos);
  EXPECT_NE(reason(dir.path()).find("not a regular file"), std::string::npos);
  EXPECT_NE(reason(write("trunc.json", good.substr(0, good.size() / 2))).find("not JSON (byte"),
            std::string::npos);
  EXPECT_NE(reason(write("settings.json", "{\"m\": 1024}")).find("not a TileScope session"),
            std::string::npos);
  std::string v2 = good;
  v2.replace(v2.find("\"version\": 1"), 12, "\"version\": 7");
  EXPECT_NE(reason(write("v2.json", v2)).find("format version 7 is not the supported 1"), std::string::npos);
  std::string badnum = good;
  const size_t at = badnum.find("\"tflops\": ");
  badnum.replace(at, 10, "\"tflops\": \"fast\", \"x\": ");
  const std::string why = reason(write("badnum.json", badnum));
  EXPECT_NE(why.find("record 1: 'tflops' is not a number"), std::string::npos) << why;
  std::string neg = good;
  neg.replace(neg.find("\"m\": 1024"), 9, "\"m\": -5");
  EXPECT_NE(reason(write("neg.json", neg)).find("'m' = -5 is outside 1..2147483647"), std::string::npos);
  std::string miss = good;
  miss.replace(miss.find("\"stop\""), 6, "\"stpo\"");
  EXPECT_NE(reason(write("miss.json", miss)).find("'stop' is missing"), std::string::npos);
  // Too large: refused from its size, before reading.
  const auto big = dir.path() / "big.json";
  { std::ofstream(big, std::ios::binary) << "x"; }
  std::filesystem::resize_file(big, uint64_t(kMaxSessionBytes) + 1);
  EXPECT_NE(reason(big).find("67108865 bytes) is larger than the limit of 64.0 MiB"), std::string::npos);
  // The reason names the file.
  EXPECT_NE(reason(write("named.json", "[")).find("named.json"), std::string::npos);
}

TEST(Session, OverlaysGetDistinctLabelsAndTheCurrentSessionStaysFirst) {
  SessionSet set;
  set.current() = sample_session();
  const size_t a = set.open(sample_session());
  const size_t b = set.open(sample_session());
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(set.all()[1].label, set.current().label + " (2)");
  EXPECT_EQ(set.all()[2].label, set.current().label + " (3)");
  EXPECT_NE(set.all()[1].label, set.current().label);
  set.close(1);
  EXPECT_EQ(set.size(), 2u);
  set.close(0);  // the current session is never closed
  EXPECT_EQ(set.size(), 2u);
}

TEST(Session, ScalingSeriesPerKernelAndTileAlongTheAxisThatVaries) {
  const Session s = sample_session();
  ProblemSpec at;
  at.m = at.n = at.k = 1024;
  at.kernel = "tiled";
  at.tile = 32;
  EXPECT_EQ(infer_axis(s, at), ScaleAxis::Square);
  const auto series = scaling_series(s, ScaleAxis::Square, at);
  ASSERT_EQ(series.size(), 3u);  // tiled 32, cublas, tiled 8 (the failed point is left out)
  const ScalingSeries& t32 = series[0];
  EXPECT_EQ(t32.label, "tiled T=32");
  ASSERT_EQ(t32.points.size(), 3u);  // each run a point
  EXPECT_EQ(t32.points[0].x, 1024);
  EXPECT_EQ(t32.points[2].x, 2048);
  EXPECT_GT(t32.points[0].clock_mhz, 0);
  const auto line = t32.latest_per_x();
  ASSERT_EQ(line.size(), 2u);
  EXPECT_EQ(line[0].median_ms, s.records[2].stats.median);  // the newer run at 1024
  EXPECT_TRUE(series[1].reference);
  // Rectangular problems: the one dimension that differs is the axis.
  Session r = s;
  RunResult a = fake_result("tiled", 32, 1024, 1.0, "2025-01-31T12:00:00Z");
  a.spec.n = 2048;
  r.add(a);
  a.spec.n = 4096;
  r.add(a);
  ProblemSpec rect = at;
  rect.n = 3072;
  EXPECT_EQ(infer_axis(r, rect), ScaleAxis::N);
  const auto ns = scaling_series(r, ScaleAxis::N, rect);
  ASSERT_EQ(ns.size(), 3u);
  EXPECT_EQ(ns[0].points.size(), 4u);  // 1024^3 twice, 1024 x 2048 x 1024, 1024 x 4096 x 1024
}

TEST(Session, LadderBarsInRegistryOrderWithSpeedups) {
  const Session s = sample_session();
  ProblemSpec at;
  at.m = at.n = at.k = 1024;
  const auto bars = ladder_bars(s, at, builtin_kernel_infos());
  ASSERT_EQ(bars.size(), 3u);
  EXPECT_EQ(bars[0].label, "tiled T=8");
  EXPECT_EQ(bars[1].label, "tiled T=32");
  EXPECT_EQ(bars[1].median_ms, s.records[2].stats.median);  // the newest run
  EXPECT_EQ(bars[2].label, "cublas");
  EXPECT_EQ(speedup_label(bars[2].median_ms, bars[1].median_ms, "tiled T=32"), "3.5x tiled T=32");
  EXPECT_EQ(speedup_label(2.0, 1.0, "x"), "0.50x x");
  EXPECT_EQ(speedup_label(0, 1.0, "x"), "");
}

TEST(Session, RecordsFromARealRunCarryTheEngineFields) {
  CpuBackend b(builtin_kernel_infos());
  RunRequest req;
  req.spec.m = req.spec.n = req.spec.k = 32;
  Session s = Session::for_device(b.device_info());
  s.add(b.run(req, CancelToken()));
  test::TempDir dir;
  save_session(dir.path() / "cpu.json", s, false);
  const Session back = load_session(dir.path() / "cpu.json");
  ASSERT_EQ(back.records.size(), 1u);
  EXPECT_EQ(back.records[0].samples_ms.size(), 3u);
  EXPECT_EQ(back.records[0].backend, "cpu");
  EXPECT_FALSE(back.records[0].clock.available);
  EXPECT_EQ(back.device.backend, "cpu");
}

// [SECTION] The interleaved reference: kept bit for bit, and files written before it existed still load.
// A record keeps its sources; TFLOP/s and the noise are derived from them: written for other readers (the
// values the run reported), checked when read, and computed again from the samples, never read back into a
// copy that could disagree with them.
TEST(Session, DerivedFiguresAreWrittenCheckedAndComputedFromTheSamples) {
  const Session s = sample_session();
  const MeasurementRecord& r = s.records[0];
  const nlohmann::json j = to_json(s);
  const nlohmann::json& rec = j["records"][0];
  EXPECT_EQ(rec["tflops"].get<double>(), r.tflops());
  EXPECT_EQ(rec["tflops"].get<double>(), tflops(r.spec.flops(), r.stats.median));
  EXPECT_EQ(rec["noise"].get<double>(), noise(r.samples_ms));
  EXPECT_GT(r.noise(), 0.0);
  // A file whose tflops disagrees with its samples (edited by hand) reads: the figure comes from the samples.
  nlohmann::json edited = j;
  edited["records"][0]["tflops"] = 123.0;
  edited["records"][0]["noise"] = 0.5;
  const Session back = session_from_json(edited);
  EXPECT_EQ(back.records[0].tflops(), r.tflops());
  EXPECT_EQ(back.records[0].noise(), r.noise());
  // Still checked: a derived figure that is not a number, or outside its range, refuses the file.
  edited["records"][0]["noise"] = "low";
  EXPECT_THROW(session_from_json(edited), SessionError);
  edited["records"][0]["noise"] = -1.0;
  try {
    session_from_json(edited);
    ADD_FAILURE() << "a negative noise was accepted";
  } catch (const SessionError& e) {
    EXPECT_NE(std::string(e.what()).find("record 1: 'noise' = -1.0 is outside 0..1e+15"), std::string::npos)
        << e.what();
  }
}

TEST(Session, RoundTripKeepsTheInterleavedReferenceAndItsClock) {
  test::TempDir dir;
  const Session s = sample_session();
  save_session(dir.path() / "s.json", s, false);
  const Session back = load_session(dir.path() / "s.json");
  const MeasurementRecord& r = back.records[0];
  const InterleavedReference& want = s.records[0].interleaved;
  ASSERT_TRUE(r.cublas_interleaved());
  EXPECT_EQ(r.interleaved.kernel, "cublas");
  EXPECT_EQ(r.interleaved.samples_ms, want.samples_ms);  // bit for bit
  EXPECT_EQ(r.interleaved.stats.median, want.stats.median);
  EXPECT_EQ(r.interleaved.stats.p75, want.stats.p75);
  EXPECT_EQ(r.interleaved.noise(), want.noise());
  EXPECT_EQ(r.cublas_ms(), want.stats.median);
  EXPECT_TRUE(r.interleaved.clock.available);
  EXPECT_EQ(r.interleaved.clock.median_mhz, 1760);
  EXPECT_EQ(r.interleaved.clock.min_mhz, 1755);
  EXPECT_EQ(r.interleaved.clock.max_mhz, 1765);
  EXPECT_TRUE(r.interleaved.clock.throttled);
  EXPECT_EQ(r.interleaved.clock.throttle_reasons, "sw_power_cap");
  EXPECT_EQ(r.clock.median_mhz, s.records[0].clock.median_mhz);  // the kernel's own, beside it
  EXPECT_FALSE(back.records[1].cublas_interleaved());
  EXPECT_EQ(back.records[3].interleaved_note, "cublas is the reference itself");
}

TEST(Session, ARecordWrittenBeforeTheInterleavedReferenceStillLoads) {
  test::TempDir dir;
  Session s = sample_session();
  s.records[0].reference_ms = 0.0712;  // an older point: cuBLAS timed on its own after the samples
  nlohmann::json j = to_json(s);
  for (auto& r : j["records"]) {
    ASSERT_TRUE(r.contains("interleaved_reference"));
    r.erase("interleaved_reference");
  }
  { std::ofstream(dir.file("old.json"), std::ios::binary) << j.dump(1); }
  const Session back = load_session(dir.path() / "old.json");
  ASSERT_EQ(back.records.size(), s.records.size());
  const MeasurementRecord& r = back.records[0];
  EXPECT_FALSE(r.cublas_interleaved());
  EXPECT_TRUE(r.interleaved.samples_ms.empty());
  EXPECT_FALSE(r.interleaved.clock.available);
  EXPECT_TRUE(r.interleaved_note.empty());
  EXPECT_EQ(r.cublas_ms(), 0.0712);  // the separate reference, as before
  EXPECT_EQ(r.samples_ms, s.records[0].samples_ms);
  // A damaged one is refused with its reason.
  nlohmann::json bad = to_json(sample_session());
  bad["records"][0]["interleaved_reference"]["stats_ms"]["count"] = 3;
  { std::ofstream(dir.file("bad.json"), std::ios::binary) << bad.dump(1); }
  try {
    load_session(dir.path() / "bad.json");
    ADD_FAILURE() << "accepted";
  } catch (const SessionError& e) {
    EXPECT_NE(std::string(e.what()).find("interleaved_reference: stats_ms.count = 3 but 4 samples"),
              std::string::npos)
        << e.what();
  }
}

TEST(Session, ScalingPointsCarryTheReferenceAndBothClocks) {
  Session s = sample_session();
  s.records[4].reference_ms = 0.11;  // tiled 8: cuBLAS timed on its own
  ProblemSpec at;
  at.m = at.n = at.k = 1024;
  const auto series = scaling_series(s, ScaleAxis::Square, at);
  ASSERT_EQ(series.size(), 3u);
  const ScalingPoint& p = series[0].points[0];  // tiled 32 at 1024, the first run
  EXPECT_TRUE(p.cublas_interleaved);
  EXPECT_EQ(p.cublas_ms, s.records[0].interleaved.stats.median);
  EXPECT_EQ(p.cublas_clock_mhz, 1760);
  EXPECT_TRUE(p.cublas_throttled);
  EXPECT_EQ(p.clock_mhz, s.records[0].clock.median_mhz);
  EXPECT_TRUE(p.clocks_differ);                 // 1867.5 MHz against 1760
  const ScalingPoint& q = series[0].points[1];  // the newer run at 1024: no reference
  EXPECT_FALSE(q.cublas_interleaved);
  EXPECT_EQ(q.cublas_ms, 0);
  EXPECT_FALSE(q.clocks_differ);
  const ScalingPoint& t8 = series[2].points[0];
  EXPECT_FALSE(t8.cublas_interleaved);
  EXPECT_EQ(t8.cublas_ms, 0.11);
  EXPECT_FALSE(t8.clocks_differ);
}

// Split-K's blocks per tile of C travel with the record (its wave marks depend on them); a file written
// before the field existed loads with one block per tile.
TEST(Session, BlocksPerTileRoundTripAndOlderFilesReadOne) {
  test::TempDir dir;
  Session s = sample_session();
  RunResult split = fake_result("splitk", 2, 1024, 0.0747, "2026-11-23T13:00:00Z");
  split.blocks_per_tile = 2;
  s.add(split);
  save_session(dir.path() / "s.json", s, false);
  const Session back = load_session(dir.path() / "s.json");
  EXPECT_EQ(back.records.back().blocks_per_tile, 2);
  EXPECT_EQ(back.records.front().blocks_per_tile, 1);
  nlohmann::json j = to_json(s);
  for (auto& r : j["records"]) r.erase("blocks_per_tile");
  { std::ofstream(dir.file("old.json"), std::ios::binary) << j.dump(1); }
  EXPECT_EQ(load_session(dir.path() / "old.json").records.back().blocks_per_tile, 1);
  j["records"][0]["blocks_per_tile"] = 0;  // out of range
  { std::ofstream(dir.file("bad.json"), std::ios::binary) << j.dump(1); }
  EXPECT_THROW(load_session(dir.path() / "bad.json"), SessionError);
}

// A stream-K launch's blocks are planned for the SMs: the record says so (its waves are no real waves), and a
// file written before the flag reads false.
TEST(Session, AStreamKPointSaysItsGridIsNotInWavesAndOlderFilesReadFalse) {
  test::TempDir dir;
  Session s = sample_session();
  RunResult sk = fake_result("streamk", 256, 3000, 0.95, "2026-11-28T13:00:00Z");
  OccupancyReport o;
  o.res = {256, 255, 0, 99840};
  o.blocks_per_sm = 1;
  o.grid_blocks = 132;
  o.waves = 1;
  o.k_segments = true;
  sk.occupancy = o;
  s.add(sk);
  EXPECT_TRUE(s.records.back().k_segments);
  EXPECT_FALSE(s.records.front().k_segments);
  save_session(dir.path() / "s.json", s, false);
  const Session back = load_session(dir.path() / "s.json");
  EXPECT_TRUE(back.records.back().k_segments);
  EXPECT_FALSE(back.records.front().k_segments);
  nlohmann::json j = to_json(s);
  for (auto& r : j["records"]) r.erase("k_segments");
  { std::ofstream(dir.file("old.json"), std::ios::binary) << j.dump(1); }
  EXPECT_FALSE(load_session(dir.path() / "old.json").records.back().k_segments);
  j["records"][0]["k_segments"] = 1;  // not true or false
  { std::ofstream(dir.file("bad.json"), std::ios::binary) << j.dump(1); }
  EXPECT_THROW(load_session(dir.path() / "bad.json"), SessionError);
}

// [SECTION] Issue 26: values checked on read, memory bounded, compact saving, two writers, links,
// beside-names.
namespace {

std::string refusal(const std::filesystem::path& p) {
  try {
    load_session(p);
  } catch (const SessionError& e) {
    return e.what();
  }
  return "accepted";
}

// The sample session's text with the first `from` replaced by `to`.
std::filesystem::path edited(test::TempDir& dir, const std::string& name, const std::string& from,
                             const std::string& to) {
  std::string text = session_text(sample_session());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  std::ofstream(dir.file(name), std::ios::binary) << text;
  return dir.path() / name;
}

RunResult numbered(int i) {
  RunResult r = fake_result("tiled", 16, 256, 0.01 + i * 1e-4, "2025-02-01T00:00:00Z");
  r.spec.seed = uint64_t(i);  // two windows' points are never equal in every field
  return r;
}

}  // namespace

TEST(Session, ValuesAPlotCannotDrawAreRefusedOnReadWithTheFileAndTheReason) {
  test::TempDir dir;
  const std::string median = "\"median\":" + nlohmann::json(sample_session().records[0].stats.median).dump();
  const std::string p25 = "\"p25\":" + nlohmann::json(sample_session().records[0].stats.p25).dump();
  const std::string sample =
      "\"samples_ms\":[" + nlohmann::json(sample_session().records[0].samples_ms[0]).dump();
  struct Case {
    const char* name;
    std::string from, to, reason;
  } cases[] = {
      {"overflow.json", median, "\"median\":1e309", "not usable JSON: number overflow parsing '1e309'"},
      {"null.json", median, "\"median\":null", "record 1.stats_ms: 'median' is null, not a number"},
      {"negative.json", sample, "\"samples_ms\":[-1", "record 1: 'samples_ms[0]' = -1 is outside 0..1e+09"},
      {"huge.json", sample, "\"samples_ms\":[1e308", "'samples_ms[0]' = 1e+308 is outside 0..1e+09"},
      {"nullsample.json", sample, "\"samples_ms\":[null", "'samples_ms[0]' is null, not a number"},
      {"zero.json", median, "\"median\":0", "record 1.stats_ms: 'median' = 0 is not above 0"},
      {"negmedian.json", median, "\"median\":-0.5", "'median' = -0.5 is outside 0..1e+09"},
      {"quartiles.json", p25, "\"p25\":5", "record 1.stats_ms: 'p25' = 5 is above 'median'"},
      {"tflops.json", "\"tflops\":", "\"tflops\":-1,\"x\":", "record 1: 'tflops' = -1 is outside 0..1e+15"},
  };
  for (const Case& c : cases) {
    const auto path = edited(dir, c.name, c.from, c.to);
    const std::string why = refusal(path);
    EXPECT_NE(why.find(c.reason), std::string::npos) << c.name << ": " << why;
    EXPECT_EQ(why.rfind(path.string() + ": ", 0), 0u) << why;  // the file, then the reason
  }
}

TEST(Session, ADeeplyNestedOrSwollenFileIsRefusedWhileParsedWithoutBuildingIt) {
  test::TempDir dir;
  // 64 MiB of '[': refused at the 17th level, its reason named.
  const auto nested = dir.path() / "nested.json";
  {
    std::ofstream f(nested, std::ios::binary);
    const std::string block(1 << 20, '[');
    for (int i = 0; i < 64; ++i) f << block;
  }
  ASSERT_EQ(std::filesystem::file_size(nested), uint64_t(kMaxSessionBytes));
  EXPECT_NE(refusal(nested).find("nested.json: nested more than 16 levels deep"), std::string::npos)
      << refusal(nested);
  // A record of a million values, a million values outside the records, and 200000 records that are not
  // records: refused as they are parsed (records are read one at a time; the count limit is said first when
  // there are more than 100000).
  struct Repeated {
    const char* file;
    const char* open;
    const char* element;
    int times;
    const char* close;
    const char* words;
  };
  for (const Repeated& c : {
           Repeated{"wide.json", "{\"format\":\"tilescope-session\",\"records\":[{\"samples_ms\":[", "0,",
                    1000000, "0]}]}", "record 1 holds more than 301000 values"},
           Repeated{"junk.json", "{\"format\":\"tilescope-session\",\"junk\":[", "{},", 1000000, "{}]}",
                    "outside its records hold more than 10000 values"},
           Repeated{"many.json", "{\"format\":\"tilescope-session\",\"records\":[", "{},", 200000, "{}]}",
                    "more than the limit of 100000"},
       }) {
    const auto path = dir.path() / c.file;
    {
      std::ofstream f(path, std::ios::binary);
      f << c.open;
      for (int i = 0; i < c.times; ++i) f << c.element;
      f << c.close;
    }
    EXPECT_NE(refusal(path).find(c.words), std::string::npos) << c.file << ": " << refusal(path);
  }
  const auto few = edited(dir, "few.json", "\"records\":[", "\"records\":[{},");
  EXPECT_NE(refusal(few).find("record 1: 'kernel' is missing"), std::string::npos) << refusal(few);
  // A file that grows past the limit while it is read is refused too: the size is checked before reading.
  const auto big = dir.path() / "big.json";
  { std::ofstream(big, std::ios::binary) << "x"; }
  std::filesystem::resize_file(big, uint64_t(kMaxSessionBytes) + 1);
  EXPECT_NE(refusal(big).find("big.json: 64.0 MiB (67108865 bytes) is larger than the limit of 64.0 MiB"),
            std::string::npos)
      << refusal(big);
}

TEST(Session, AFileThatLoadedWithinTheLimitsIsSavedWhole) {
  // Compact text just under 64 MiB that, indented as the window saved it before, would pass the limit.
  test::TempDir dir;
  Session s = sample_session();
  MeasurementRecord proto = s.records[0];
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.1, 0.2);
  proto.samples_ms.resize(90000);
  for (double& x : proto.samples_ms) x = u(rng);
  proto.stats = summarize(proto.samples_ms);
  // Records of one length (they differ in their date only): the text's size follows from two of them.
  auto dated = [&](size_t i) {
    MeasurementRecord r = proto;
    char d[32];
    std::snprintf(d, sizeof d, "2025-03-01T%02zu:%02zu:00Z", i / 60, i % 60);
    r.date = d;
    return r;
  };
  s.records = {dated(0)};
  const size_t one = session_text(s).size();
  s.records.push_back(dated(1));
  const size_t each = session_text(s).size() - one;
  while (one + each * s.records.size() < size_t(kMaxSessionBytes) - (1u << 20))
    s.records.push_back(dated(s.records.size()));
  const size_t n = s.records.size();
  ASSERT_GT(to_json(s).dump(1).size(), size_t(kMaxSessionBytes));  // the old, indented text would not fit
  const auto path = dir.path() / "session.json";
  save_session(path, s, false);
  Session loaded = load_session(path);
  ASSERT_EQ(loaded.records.size(), n);
  const SessionSave r = save_session_merged(path, loaded);
  EXPECT_TRUE(r.left_out.empty());
  EXPECT_EQ(r.points, n);
  EXPECT_EQ(load_session(path).records.size(), n);
  EXPECT_LE(std::filesystem::file_size(path), uint64_t(kMaxSessionBytes));
  // Past the limit: the oldest points are taken out (for the caller to keep elsewhere), and the file is
  // within the limit as written.
  loaded.records.push_back(loaded.records.back());
  loaded.records.back().date = "2025-03-02T00:00:00Z";
  loaded.records.push_back(loaded.records.back());
  loaded.records.back().date = "2025-03-03T00:00:00Z";
  const SessionSave over = save_session_merged(path, loaded);
  EXPECT_FALSE(over.left_out.empty());
  EXPECT_EQ(over.left_out.size() + over.points, n + 2);
  EXPECT_EQ(over.left_out[0].date, s.records[0].date);  // the oldest first
  EXPECT_GE(over.left_out.size(), 2u);                  // two points over, counted on the text written
  EXPECT_LE(std::filesystem::file_size(path), uint64_t(kMaxSessionBytes));
  EXPECT_EQ(load_session(path).records.size(), over.points);
}

TEST(Session, TwoWindowsOnOneFileMergeInsteadOfReplacingEachOther) {
  test::TempDir dir;
  const auto path = dir.path() / "data" / "session.json";
  Session base = sample_session();
  SessionSave first = save_session_merged(path, base);
  EXPECT_EQ(first.points, base.records.size());
  const size_t n0 = base.records.size();
  // Both windows read the file at start; A saves, then B: A's points stay.
  Session a = load_session(path), b = load_session(path);
  a.add(numbered(1));
  b.add(numbered(2));
  b.add(numbered(3));
  EXPECT_EQ(save_session_merged(path, a).merged, 0u);
  const SessionSave rb = save_session_merged(path, b);
  EXPECT_EQ(rb.merged, 1u);  // A's point, now in B's session too
  EXPECT_EQ(load_session(path).records.size(), n0 + 3);
  a.add(numbered(4));
  EXPECT_EQ(save_session_merged(path, a).merged, 2u);
  EXPECT_EQ(load_session(path).records.size(), n0 + 4);
  // Interleaved for real: two writers on two threads, each adding and saving 20 times.
  Session w1 = load_session(path), w2 = load_session(path);
  auto writer = [&](Session* w, int from) {
    for (int i = 0; i < 20; ++i) {
      w->add(numbered(from + i));
      save_session_merged(path, *w);
    }
  };
  std::thread t1(writer, &w1, 100), t2(writer, &w2, 200);
  t1.join();
  t2.join();
  const Session end = load_session(path);
  EXPECT_EQ(end.records.size(), n0 + 4 + 40);
  std::set<uint64_t> seeds;
  for (const auto& r : end.records) seeds.insert(r.spec.seed);
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(seeds.count(uint64_t(100 + i))) << i;
    EXPECT_TRUE(seeds.count(uint64_t(200 + i))) << i;
  }
  // The file of another device is never replaced.
  Session other = sample_session();
  other.device.name = "Another GPU";
  EXPECT_THROW(save_session_merged(path, other), SessionError);
  EXPECT_EQ(load_session(path).records.size(), n0 + 44);
}

TEST(Session, ASymlinkedSessionFileIsWrittenToTheFileItNamesAndStaysALink) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "dotfiles");
  std::filesystem::create_directories(dir.path() / "data");
  const auto target = dir.path() / "dotfiles" / "session.json";
  const auto link = dir.path() / "data" / "session.json";
  std::filesystem::create_symlink("../dotfiles/session.json", link);  // relative, as dotfile managers make
  Session s = sample_session();
  SessionSave r = save_session_merged(link, s);  // a dangling link: its target is created
  EXPECT_EQ(r.written, dir.path() / "data" / ".." / "dotfiles" / "session.json");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(load_session(target).records.size(), s.records.size());
  s.add(numbered(1));
  r = save_session_merged(link, s);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(load_session(target).records.size(), s.records.size());
  EXPECT_EQ(load_session(link).records.size(), s.records.size());
  // A link to something that is not a regular file: refused, nothing written there.
  const auto to_dir = dir.path() / "data" / "to-folder.json";
  std::filesystem::create_symlink(dir.path() / "dotfiles", to_dir);
  EXPECT_THROW(save_session_merged(to_dir, s), SessionError);
  // A loop is said as a loop.
  const auto loop = dir.path() / "data" / "loop.json";
  std::filesystem::create_symlink("loop.json", loop);
  EXPECT_NE(refusal(loop).find("loop.json"), std::string::npos);
  try {
    save_session_merged(loop, s);
    ADD_FAILURE() << "a loop of links was written";
  } catch (const SessionError& e) {
    EXPECT_NE(std::string(e.what()).find("a loop of symbolic links"), std::string::npos) << e.what();
  }
}

TEST(Session, NamesBesideARefusedFileAreTakenExclusivelyAndNeverReplaceAFile) {
  test::TempDir dir;
  // Files already named for this second and the next two: left as they are.
  const std::time_t now = std::time(nullptr);
  std::vector<std::filesystem::path> theirs;
  for (int d = 0; d < 3; ++d) {
    std::tm tm{};
    const std::time_t t = now + d;
    localtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    theirs.push_back(dir.path() / ("session-" + std::string(stamp) + ".json"));
    std::ofstream(theirs.back()) << "theirs";
  }
  const Session s = sample_session();
  // Eight windows closing at once: eight names, none replacing another or a file that was there.
  std::vector<std::filesystem::path> names(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < names.size(); ++i)
    threads.emplace_back([&, i] { names[i] = save_session_beside(dir.path(), "session", s); });
  for (auto& t : threads) t.join();
  std::set<std::filesystem::path> distinct(names.begin(), names.end());
  EXPECT_EQ(distinct.size(), names.size());
  for (const auto& p : names) EXPECT_EQ(load_session(p).records.size(), s.records.size()) << p;
  for (const auto& p : theirs) {
    std::ifstream f(p);
    std::string text;
    f >> text;
    EXPECT_EQ(text, "theirs") << p;
  }
}

// The impossible flag (RunRecord::impossible) is kept by a session file, and a file written before it read as
// no flag; an impossible point goes into its series' `impossible`, never its points or its line.
TEST(Session, TheImpossibleFlagRoundTripsOlderFilesHaveNoneAndItsPointStaysOffTheLine) {
  test::TempDir dir;
  Session s = sample_session();
  RunResult fake = fake_result("tiled", 32, 1024, 0.001, "2025-01-31T12:00:00Z");
  fake.impossible = "2147 TFLOP/s is above the FP32 peak of NVIDIA H100 80GB HBM3, 66.9 TFLOP/s at 1980 MHz";
  s.add(fake);
  save_session(dir.path() / "s.json", s, false);
  const Session back = load_session(dir.path() / "s.json");
  ASSERT_EQ(back.records.size(), s.records.size());
  EXPECT_EQ(back.records.back().impossible, fake.impossible);
  EXPECT_TRUE(back.records.back().is_impossible());
  EXPECT_FALSE(back.records[0].is_impossible());
  nlohmann::json j = to_json(s);
  for (auto& r : j["records"]) r.erase("impossible");
  { std::ofstream(dir.file("old.json"), std::ios::binary) << j.dump(1); }
  EXPECT_FALSE(load_session(dir.path() / "old.json").records.back().is_impossible());

  ProblemSpec at;
  at.kernel = "tiled";
  at.tile = 32;
  at.m = at.n = at.k = 1024;
  for (const auto& ser : scaling_series(back, ScaleAxis::Square, at))
    if (ser.config.kernel == "tiled" && ser.config.tile == 32) {
      ASSERT_EQ(ser.impossible.size(), 1u);
      EXPECT_EQ(ser.impossible[0].median_ms, fake.stats.median);
      for (const auto& p : ser.latest_per_x()) EXPECT_NE(p.median_ms, fake.stats.median);
      EXPECT_EQ(ser.points.size(), 3u);  // 1024 twice and 2048, the older ones
    }
}

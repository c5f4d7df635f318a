// Sessions: a round trip keeps every field and every number exactly, damaged or foreign files are refused
// with their reason, saving is atomic and never replaces unless asked, overlays get distinct labels, and the
// plot series and ladder bars come out of the records as the panels need them.
#include <fstream>

#include <gtest/gtest.h>

#include "cpu_backend.hpp"
#include "registry.hpp"
#include "session.hpp"
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
  r.times_ms = {median * 0.99, median, median * 1.0 / 3.0 + median * 2.0 / 3.0, median * 1.01};
  r.stats = summarize(r.times_ms);
  r.median_ms = r.stats.median;
  r.tflops = tflops(r.spec.flops(), r.median_ms);
  r.noise = noise(r.times_ms);
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
  r.interleaved.times_ms = {ref_ms * 1.0 / 3.0 + ref_ms * 2.0 / 3.0, ref_ms * 1.02, ref_ms * 0.97, ref_ms};
  r.interleaved.stats = summarize(r.interleaved.times_ms);
  r.interleaved.noise = noise(r.interleaved.times_ms);
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
  const auto bars = ladder_bars(s, at, kernel_infos());
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
  CpuBackend b(kernel_infos());
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
TEST(Session, RoundTripKeepsTheInterleavedReferenceAndItsClock) {
  test::TempDir dir;
  const Session s = sample_session();
  save_session(dir.path() / "s.json", s, false);
  const Session back = load_session(dir.path() / "s.json");
  const MeasurementRecord& r = back.records[0];
  const InterleavedReference& want = s.records[0].interleaved;
  ASSERT_TRUE(r.cublas_interleaved());
  EXPECT_EQ(r.interleaved.kernel, "cublas");
  EXPECT_EQ(r.interleaved.times_ms, want.times_ms);  // bit for bit
  EXPECT_EQ(r.interleaved.stats.median, want.stats.median);
  EXPECT_EQ(r.interleaved.stats.p75, want.stats.p75);
  EXPECT_EQ(r.interleaved.noise, want.noise);
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
  EXPECT_TRUE(r.interleaved.times_ms.empty());
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

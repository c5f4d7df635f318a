#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/io/bench.hpp"
#include "core/engine/measure.hpp"
#include "core/engine/problem.hpp"
#include "core/engine/stats.hpp"

using namespace ts;

TEST(Peaks, MatchTheDataSheets) {
  // H100 SXM at 1980 MHz: 132 x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s FP32 (GPU.md).
  EXPECT_NEAR(peak_tflops(90, 132, 1980, false), 66.9, 0.05);
  // Its dense TF32: 2048 FLOP per SM per clock: 535 TFLOP/s at 1980 MHz (494.7 at the 1830 MHz boost).
  EXPECT_NEAR(peak_tflops(90, 132, 1830, true), 494.7, 0.1);
  // A100: 108 SMs x 64 x 2 x 1.41 GHz = 19.5 FP32, 156 TF32.
  EXPECT_NEAR(peak_tflops(80, 108, 1410, false), 19.5, 0.05);
  EXPECT_NEAR(peak_tflops(80, 108, 1410, true), 155.9, 0.1);
  // RTX 4090 (Ada): 128 SMs x 128 x 2 x 2.52 GHz = 82.6.
  EXPECT_NEAR(peak_tflops(89, 128, 2520, false), 82.6, 0.05);
  EXPECT_EQ(peak_tflops(75, 40, 1500, true), 0.0);  // Turing has no TF32
  // GA10x and Ada: TF32 at the product's rate. GeForce at half the data-center parts' (data sheets: RTX 3090
  // 35.6 dense, RTX 4090 82.6; A10 62.5, L4 60); a name that does not tell gets the higher one (a roof).
  EXPECT_NEAR(peak_tflops(86, 82, 1695, true, "NVIDIA GeForce RTX 3090"), 35.6, 0.05);
  EXPECT_NEAR(peak_tflops(89, 128, 2520, true, "NVIDIA GeForce RTX 4090"), 82.6, 0.05);
  EXPECT_NEAR(peak_tflops(86, 72, 1695, true, "NVIDIA A10"), 62.5, 0.05);
  EXPECT_NEAR(peak_tflops(89, 58, 2040, true, "NVIDIA L4"), 60.6, 0.05);
  EXPECT_EQ(peak_tflops(89, 58, 2040, true), peak_tflops(89, 58, 2040, true, "NVIDIA L4"));
  EXPECT_EQ(peak_tflops(100, 148, 1965, true), 0.0);  // not known yet: no roof rather than a wrong one
  EXPECT_EQ(fp32_lanes_per_sm(75), 64);
}

TEST(Shapes, ParseSquareAndRectangular) {
  auto s = parse_shapes("1024,2048x4096x8192,7");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].m, 1024);
  EXPECT_EQ(s[0].k, 1024);
  EXPECT_EQ(s[1].m, 2048);
  EXPECT_EQ(s[1].n, 4096);
  EXPECT_EQ(s[1].k, 8192);
  EXPECT_EQ(s[2].n, 7);
  EXPECT_THROW(parse_shapes("1024,,4096"), ValidationError);
  EXPECT_THROW(parse_shapes("2x3"), ValidationError);
  EXPECT_THROW(parse_shapes("0"), ValidationError);
  EXPECT_THROW(parse_shapes("ax4x4"), ValidationError);
}

namespace {
std::vector<BenchPoint> sample_points() {
  BenchPoint a;
  a.kernel = "tiled";
  a.tile = 32;
  a.m = a.n = a.k = 4096;
  a.verified = true;
  a.stats = summarize({15.0, 15.5, 16.0});
  BenchPoint ref = a;
  ref.kernel = "cublas";
  ref.tile = 0;
  ref.stats = summarize({2.7, 2.7, 2.7});
  BenchPoint bad = a;
  bad.kernel = "tiled_floork";
  bad.verified = false;
  bad.stats = {};
  bad.error = "16 elements, over the tolerance";
  return {a, ref, bad};
}
BenchMeta sample_meta() {
  BenchMeta m;
  m.device = "NVIDIA H100 80GB HBM3";
  m.sm = 90;
  m.sm_count = 132;
  m.driver = "580.159.04, CUDA 13.0";
  m.cuda_runtime = "13.0";
  m.program_version = "0.1.0";
  m.commit = "abc123";
  return m;
}
}  // namespace

TEST(BenchFormats, PercentOfCublasComesFromTheSameShape) {
  auto pts = sample_points();
  relate_to_cublas(pts);
  EXPECT_NEAR(pts[0].pct_cublas, 100.0 * 2.7 / 15.5, 1e-9);
  EXPECT_NEAR(pts[1].pct_cublas, 100.0, 1e-9);
  EXPECT_EQ(pts[2].pct_cublas, -1);               // not verified: no ratio
  EXPECT_EQ(pts[0].pct_cublas_from, "separate");  // no interleaved reference: the cuBLAS point
  EXPECT_EQ(pts[1].pct_cublas_from, "itself");
  EXPECT_EQ(pts[2].pct_cublas_from, "");
}

TEST(BenchFormats, CsvJsonAndMarkdownCarryMetaAndEveryPoint) {
  auto pts = sample_points();
  relate_to_cublas(pts);
  const BenchMeta m = sample_meta();
  const std::string csv = format_csv(m, pts);
  EXPECT_NE(csv.find("# device,NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(csv.find("# compute_capability,9.0"), std::string::npos);
  EXPECT_NE(csv.find("# commit,abc123"), std::string::npos);
  EXPECT_NE(csv.find("\"16 elements, over the tolerance\""), std::string::npos);  // quoted field with a comma
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 16 + 1 + 3);
  const auto j = nlohmann::json::parse(format_json(m, pts));
  EXPECT_EQ(j["meta"]["driver"], "580.159.04, CUDA 13.0");
  ASSERT_EQ(j["points"].size(), 3u);
  EXPECT_EQ(j["points"][0]["median_ms"], 15.5);
  EXPECT_TRUE(j["points"][2]["pct_cublas"].is_null());
  const std::string md = format_markdown(m, pts);
  EXPECT_NE(md.find("| tiled | 32 | 4096x4096x4096 | 15.5000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("FAIL: 16 elements"), std::string::npos);
  EXPECT_THROW(format_bench("xml", m, pts), ValidationError);
}

// A kernel named like a formula goes into the CSV defused (its own cell, quoted, a ' in front); numbers keep
// their form.
TEST(BenchFormats, TheCsvDefusesCellsThatWouldRunAsFormulas) {
  auto pts = sample_points();
  pts[0].kernel = "=HYPERLINK(\"http://x\",\"y\")";
  pts[0].error = "@bad";
  BenchMeta m = sample_meta();
  m.device = "+device";
  const std::string csv = format_csv(m, pts);
  EXPECT_NE(csv.find("\n\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",32,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",\"'@bad\","), std::string::npos) << csv;
  EXPECT_NE(csv.find("# device,\"'+device\""), std::string::npos) << csv;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);)
    for (const char c : {'=', '@', '+'})
      EXPECT_EQ(line.find(std::string(",") + c), std::string::npos) << line;
}

// [SECTION] The interleaved reference in the tables.
namespace {
// A kernel's result as the CUDA backend records it with cuBLAS timed between its samples.
RunResult interleaved_result(const std::string& kernel, double kernel_ms, double ref_ms, double kernel_mhz,
                             double ref_mhz) {
  RunResult r;
  r.spec.kernel = kernel;
  r.spec.tile = 32;
  r.spec.m = r.spec.n = r.spec.k = 4096;
  r.error.passed = true;
  r.samples_ms = {kernel_ms * 0.99, kernel_ms, kernel_ms * 1.01};
  r.stats = summarize(r.samples_ms);
  r.stop = "converged";
  r.clock = summarize_clocks({{kernel_mhz, ""}, {kernel_mhz, ""}, {kernel_mhz, ""}}, 1980);
  r.interleaved.kernel = "cublas";
  r.interleaved.samples_ms = {ref_ms, ref_ms * 1.02, ref_ms * 0.98};
  r.interleaved.stats = summarize(r.interleaved.samples_ms);
  r.interleaved.clock =
      summarize_clocks({{ref_mhz, ""}, {ref_mhz - 200, "sw_power_cap"}, {ref_mhz, ""}}, 1980);
  r.date = "2025-01-31T10:00:00Z";
  return r;
}

// Splits a CSV text into rows of fields (fields here hold no quotes, commas or newlines but the error).
std::vector<std::vector<std::string>> csv_rows(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::string cur;
    for (char c : line) {
      if (c == ',') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    f.push_back(cur);
    rows.push_back(f);
  }
  return rows;
}
std::string field(const std::vector<std::vector<std::string>>& rows, size_t row, const std::string& column) {
  const auto& h = rows.at(0);
  const auto it = std::find(h.begin(), h.end(), column);
  if (it == h.end()) return "<no column " + column + ">";
  return rows.at(row).at(size_t(it - h.begin()));
}
}  // namespace

TEST(BenchInterleaved, APointCarriesItsReferenceAndBothClocks) {
  const BenchPoint p = bench_point(interleaved_result("tiled", 15.5, 3.1, 1980, 1755), 66.9);
  EXPECT_EQ(p.reference_kernel, "cublas");
  EXPECT_EQ(p.reference_samples, 3);
  EXPECT_DOUBLE_EQ(p.reference_median_ms, 3.1);
  EXPECT_DOUBLE_EQ(p.reference_clock_median_mhz, 1755);
  EXPECT_DOUBLE_EQ(p.reference_clock_min_mhz, 1555);
  EXPECT_DOUBLE_EQ(p.reference_clock_max_mhz, 1755);
  EXPECT_TRUE(p.reference_throttled);
  EXPECT_EQ(p.reference_throttle_reasons, "sw_power_cap");
  EXPECT_DOUBLE_EQ(p.sm_clock_median_mhz, 1980);
  EXPECT_DOUBLE_EQ(p.sm_clock_max_mhz, 1980);
  EXPECT_FALSE(p.throttled);
  EXPECT_TRUE(p.clocks_differ);
  // Clocks within 1 % of each other: no flag.
  EXPECT_FALSE(bench_point(interleaved_result("tiled", 15.5, 3.1, 1980, 1965), 66.9).clocks_differ);
  // A point without one (cuBLAS itself, the CPU): no reference, its note kept.
  RunResult cpu = interleaved_result("tiled", 15.5, 3.1, 1980, 1755);
  cpu.interleaved = InterleavedReference{};
  cpu.clock = ClockRecord{};
  cpu.interleaved_note = "CPU backend: no cuBLAS to time beside the kernel";
  const BenchPoint q = bench_point(cpu, 0);
  EXPECT_EQ(q.reference_samples, 0);
  EXPECT_EQ(q.reference_median_ms, 0);
  EXPECT_FALSE(q.clocks_differ);
  EXPECT_EQ(q.reference_note, cpu.interleaved_note);
}

TEST(BenchInterleaved, PercentOfCublasComesFromTheInterleavedReferenceBeforeTheSeparatePoint) {
  std::vector<BenchPoint> pts = sample_points();  // tiled 15.5 ms, cublas 2.7 ms measured on its own
  pts[0] = bench_point(interleaved_result("tiled", 15.5, 3.1, 1980, 1755), 66.9);
  BenchPoint other = pts[0];  // another kernel without a reference beside it: the cuBLAS point
  other.kernel = "naive";
  other.reference_samples = 0;
  other.reference_median_ms = 0;
  pts.push_back(other);
  relate_to_cublas(pts);
  EXPECT_NEAR(pts[0].pct_cublas, 100.0 * 3.1 / 15.5, 1e-9);
  EXPECT_EQ(pts[0].pct_cublas_from, "interleaved");
  EXPECT_NEAR(pts[3].pct_cublas, 100.0 * 2.7 / 15.5, 1e-9);
  EXPECT_EQ(pts[3].pct_cublas_from, "separate");
  // Not verified: no ratio, even with a reference.
  pts[0].verified = false;
  relate_to_cublas(pts);
  EXPECT_EQ(pts[0].pct_cublas, -1);
  EXPECT_EQ(pts[0].pct_cublas_from, "");
}

TEST(BenchInterleaved, MarkdownCsvAndJsonCarryTheReferenceBothClocksAndTheFlag) {
  std::vector<BenchPoint> pts = sample_points();
  pts[0] = bench_point(interleaved_result("tiled", 15.5, 3.1, 1980, 1755), 66.9);  // clocks differ
  BenchPoint same = bench_point(interleaved_result("tiled", 12.0, 3.0, 1980, 1975), 66.9);
  same.tile = 16;
  pts.push_back(same);
  BenchPoint alone = pts[1];  // a kernel with only the separate cuBLAS point to compare with
  alone.kernel = "naive";
  alone.stats = summarize({27.0, 27.0, 27.0});
  pts.push_back(alone);
  relate_to_cublas(pts);
  BenchMeta m = sample_meta();
  m.interleave_reference = true;

  const std::string md = format_markdown(m, pts);
  EXPECT_NE(md.find("| cuBLAS ms | % cuBLAS | SM MHz | cuBLAS SM MHz |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 3.1000 | 20.0 (clocks differ) | 1980 | 1755 (throttled) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 3.0000 | 25.0 | 1980 | 1975 (throttled) |"), std::string::npos)
      << md;  // within 1 %: no mark
  EXPECT_NE(md.find("| - | 10.0 (separate run) |"), std::string::npos) << md;
  EXPECT_NE(md.find("timed interleaved with cuBLAS"), std::string::npos) << md;
  EXPECT_NE(md.find("(clocks differ): the median SM clocks"), std::string::npos) << md;
  EXPECT_NE(md.find("(separate run): no cuBLAS was timed"), std::string::npos) << md;

  const auto rows = csv_rows(format_csv(m, pts));
  ASSERT_EQ(rows.size(), 1 + pts.size());
  EXPECT_EQ(field(rows, 1, "cublas_median_ms"), "3.100000");
  EXPECT_EQ(field(rows, 1, "cublas_kernel"), "cublas");
  EXPECT_EQ(field(rows, 1, "cublas_samples"), "3");
  EXPECT_EQ(field(rows, 1, "sm_clock_median_mhz"), "1980");
  EXPECT_EQ(field(rows, 1, "cublas_sm_clock_median_mhz"), "1755");
  EXPECT_EQ(field(rows, 1, "cublas_sm_clock_min_mhz"), "1555");
  EXPECT_EQ(field(rows, 1, "cublas_throttled"), "yes");
  EXPECT_EQ(field(rows, 1, "clocks_differ"), "yes");
  EXPECT_EQ(field(rows, 1, "pct_cublas"), "20.00");
  EXPECT_EQ(field(rows, 1, "pct_cublas_from"), "interleaved");
  EXPECT_EQ(field(rows, 4, "clocks_differ"), "no");
  EXPECT_EQ(field(rows, 5, "pct_cublas_from"), "separate");
  EXPECT_EQ(field(rows, 5, "cublas_median_ms"), "");  // none beside it: empty, not 0
  EXPECT_EQ(field(rows, 5, "cublas_sm_clock_median_mhz"), "");

  const auto j = nlohmann::json::parse(format_json(m, pts));
  EXPECT_EQ(j["meta"]["interleave_reference"], true);
  const auto& p0 = j["points"][0];
  EXPECT_EQ(p0["reference"]["median_ms"], 3.1);
  EXPECT_EQ(p0["reference"]["kernel"], "cublas");
  EXPECT_EQ(p0["reference"]["sm_clock_median_mhz"], 1755.0);
  EXPECT_EQ(p0["reference"]["throttled"], true);
  EXPECT_EQ(p0["sm_clock_median_mhz"], 1980.0);
  EXPECT_EQ(p0["clocks_differ"], true);
  EXPECT_EQ(p0["pct_cublas_from"], "interleaved");
  EXPECT_NEAR(p0["pct_cublas"].get<double>(), 20.0, 1e-9);
  EXPECT_EQ(j["points"][3]["clocks_differ"], false);
  EXPECT_TRUE(j["points"][4]["reference"].is_null());
  EXPECT_EQ(j["points"][4]["pct_cublas_from"], "separate");
}

TEST(BenchInterleaved, TheCpuBackendSaysItHasNoCublasInsteadOfShowingZero) {
  RunResult r = interleaved_result("tiled", 1.5, 0, 0, 0);
  r.backend = "cpu";
  r.interleaved = InterleavedReference{};
  r.clock = ClockRecord{};
  r.interleaved_note = "CPU backend: no cuBLAS to time beside the kernel";
  std::vector<BenchPoint> pts = {bench_point(r, 0)};
  relate_to_cublas(pts);
  BenchMeta m = sample_meta();
  m.backend = "cpu";
  m.sm = m.sm_count = 0;
  m.interleave_reference = true;
  const std::string md = format_markdown(m, pts);
  EXPECT_NE(md.find("cuBLAS not timed beside tiled 32 (CPU backend: no cuBLAS to time beside the kernel)."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| - | - | - | - | ok |"), std::string::npos) << md;  // cuBLAS ms, %, SM MHz, cuBLAS MHz
  EXPECT_EQ(md.find("timed interleaved with cuBLAS"), std::string::npos) << md;
  const auto rows = csv_rows(format_csv(m, pts));
  EXPECT_EQ(field(rows, 1, "cublas_median_ms"), "");
  EXPECT_EQ(field(rows, 1, "pct_cublas"), "");
  EXPECT_EQ(field(rows, 1, "cublas_note"), "CPU backend: no cuBLAS to time beside the kernel");
  const auto j = nlohmann::json::parse(format_json(m, pts));
  EXPECT_TRUE(j["points"][0]["reference"].is_null());
  EXPECT_TRUE(j["points"][0]["pct_cublas"].is_null());
  EXPECT_EQ(j["points"][0]["reference_note"], "CPU backend: no cuBLAS to time beside the kernel");
}

// The table people read adapts its FLOP/s unit (a CPU's 10 GFLOP/s read "0.01 TFLOP/s"); CSV and JSON keep
// TFLOP/s, named in the field.
TEST(BenchFormats, TheMarkdownTablesUnitAdaptsWhileCsvAndJsonKeepTflops) {
  RunResult r = interleaved_result("tiled", 2.0, 0, 0, 0);
  r.backend = "cpu";
  r.interleaved = InterleavedReference{};
  r.spec.m = r.spec.n = r.spec.k = 256;
  r.samples_ms = {3.3 * 0.99, 3.3, 3.3 * 1.01};  // 10.17 GFLOP/s
  r.stats = summarize(r.samples_ms);
  std::vector<BenchPoint> pts = {bench_point(r, 0)};
  BenchMeta m = sample_meta();
  m.backend = "cpu";
  m.sm = m.sm_count = 0;
  const std::string md = format_markdown(m, pts);
  EXPECT_NE(md.find("| samples | GFLOP/s | % peak |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 10.17 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("TFLOP/s"), std::string::npos) << md;
  const auto rows = csv_rows(format_csv(m, pts));
  EXPECT_EQ(field(rows, 1, "tflops"), "0.010");
  const auto j = nlohmann::json::parse(format_json(m, pts));
  EXPECT_NEAR(j["points"][0]["tflops"].get<double>(), 0.01017, 1e-5);
}

// A point faster than the device can go (BenchPoint::impossible) is said to be so in every table, beside its
// figures (which are what was measured), and an impossible cuBLAS point is no other point's reference.
TEST(BenchFormats, AnImpossiblePointIsFlaggedInEveryTableAndIsNoReference) {
  auto pts = sample_points();
  const std::string why =
      "900 TFLOP/s is above the FP32 peak of NVIDIA H100 80GB HBM3, 66.9 TFLOP/s at 1980 MHz";
  pts[0].impossible = why;
  relate_to_cublas(pts);
  EXPECT_NEAR(pts[0].pct_cublas, 100.0 * 2.7 / 15.5, 1e-9);  // its own ratio is still what was measured
  const BenchMeta m = sample_meta();
  const std::string md = format_markdown(m, pts);
  EXPECT_NE(md.find("| IMPOSSIBLE (1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("IMPOSSIBLE (1), not a record: tiled 32 at 4096x4096x4096: " + why), std::string::npos)
      << md;
  const std::string csv = format_csv(m, pts);
  EXPECT_NE(csv.find(",\"" + why + "\","), std::string::npos) << csv;  // quoted: it holds a comma
  EXPECT_EQ(field(csv_rows(csv), 2, "impossible"), "");
  const auto j = nlohmann::json::parse(format_json(m, pts));
  EXPECT_EQ(j["points"][0]["impossible"], why);
  EXPECT_TRUE(j["points"][1]["impossible"].is_null());
  // The cuBLAS point impossible: no "separate" ratio from it.
  auto q = sample_points();
  q[1].impossible = why;
  relate_to_cublas(q);
  EXPECT_EQ(q[0].pct_cublas, -1);
  EXPECT_EQ(q[0].pct_cublas_from, "");
}

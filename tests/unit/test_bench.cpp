#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "measure.hpp"
#include "problem.hpp"

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
  a.tflops = 8.9;
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
  EXPECT_EQ(pts[2].pct_cublas, -1);  // not verified: no ratio
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
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 15 + 1 + 3);
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

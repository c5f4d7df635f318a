// Which rung for this shape: the fastest kernel of the ladder at one shape and precision, from a session's
// measurements only, with its margins and their noise.
#include <gtest/gtest.h>

#include "core/plots/rung_suggest.hpp"
#include "core/plots/tile_suggest.hpp"

namespace ts {
namespace {

KernelInfo kernel(const std::string& id, std::vector<int> tiles, bool tf32 = false) {
  KernelInfo k;
  k.id = id;
  k.tiles = std::move(tiles);
  k.tf32 = tf32;
  k.has_cuda = true;
  return k;
}

// A small ladder: two FP32 rungs with two tiles each, a teaching kernel, a TF32 rung that needs sm_90, and
// the two cuBLAS.
std::vector<KernelInfo> registry() {
  std::vector<KernelInfo> r;
  r.push_back(kernel("pipelined", {128, 256}));
  r.push_back(kernel("splitk", {2, 4}));
  KernelInfo teaching = kernel("tiled_floork", {16});
  teaching.teaching = true;
  r.push_back(teaching);
  KernelInfo wgmma = kernel("wgmma_tf32", {256, 512}, true);
  wgmma.min_sm = 90;
  r.push_back(wgmma);
  KernelInfo cublas = kernel("cublas", {});
  cublas.is_reference = true;
  r.push_back(cublas);
  r.push_back(kernel("cublas_tf32", {}, true));
  return r;
}

Session h100() {
  Session s;
  s.device.backend = "cuda";
  s.device.name = "NVIDIA H100 80GB HBM3";
  s.device.sm = 90;
  return s;
}

// A benchmarked point (stopped converged) at n^3, its quartiles `iqr` apart, with cuBLAS of its precision
// timed interleaved with it at `cublas_ms` (0: none).
MeasurementRecord point(const std::string& kernel, int tile, int64_t n, double median, double iqr,
                        double cublas_ms = 0, bool tf32 = false) {
  MeasurementRecord r;
  r.spec.kernel = kernel;
  r.spec.tile = tile;
  r.spec.m = r.spec.n = r.spec.k = n;
  r.tf32 = tf32;
  r.timed = true;
  r.error.passed = true;
  r.policy = "bench: warm-up 3 launches and 0.05 s; >= 10 samples and 0.5 s, noise < 0.5 %, limit 10 s";
  r.stop = "converged";
  r.stats.count = 40;
  r.stats.median = r.stats.mean = median;
  r.stats.stddev = iqr / 2;
  r.stats.p25 = median - iqr / 2;
  r.stats.p75 = median + iqr / 2;
  if (cublas_ms > 0) {
    r.interleaved.kernel = tf32 ? "cublas_tf32" : "cublas";
    r.interleaved.stats.count = 40;
    r.interleaved.stats.median = cublas_ms;
    r.interleaved.stats.p25 = cublas_ms - iqr / 2;
    r.interleaved.stats.p75 = cublas_ms + iqr / 2;
  }
  return r;
}

MeasurementRecord quick(MeasurementRecord r) {
  r.policy = "quick: 2 warm-up, 10 timed launches (cap 2 s)";
  r.stop = "samples taken";
  r.interleaved = InterleavedReference{};
  return r;
}

MeasurementRecord failed(MeasurementRecord r) {
  r.error.passed = false;
  r.timed = false;
  r.stats = SampleStats{};
  r.interleaved = InterleavedReference{};
  r.stop.clear();
  return r;
}

// 2 x 4096^3 = 137.4 GFLOP: 53.1 TFLOP/s is 2.588 ms.
constexpr double kBest = 2.588;

TEST(RungSuggest, NamesTheFastestKernelAndTileWithItsMarginsOnlyOnceTheLadderIsMeasured) {
  Session s = h100();
  s.records = {point("pipelined", 256, 4096, kBest, 0.004, kBest * 1.03),
               point("pipelined", 128, 4096, kBest * 1.10, 0.004, kBest * 1.031),
               point("splitk", 2, 4096, kBest * 1.042, 0.004, kBest * 1.029)};
  RungRanking r = rank_rungs(s, registry(), 4096, 4096, 4096, false);
  EXPECT_EQ(r.configurations, 4)
      << "pipelined 128, 256 and splitk 2, 4: no teaching kernel, no cuBLAS, no TF32";
  ASSERT_EQ(r.measured.size(), 3u);
  EXPECT_EQ(rung_label(r.fastest()->config), "pipelined 256");
  EXPECT_FALSE(r.complete());
  EXPECT_EQ(r.missing, (std::vector<KernelTile>{{"splitk", 4}}));
  EXPECT_EQ(
      r.line(),
      "fastest so far: pipelined 256, 53.1 TFLOP/s, 103 % of cuBLAS; 4.2 % ahead of splitk 2; 1 of 4 not "
      "measured");
  const std::vector<ProblemSpec> runs = rung_search_points(r, s.records[0].spec);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].kernel, "splitk");
  EXPECT_EQ(runs[0].tile, 4);
  EXPECT_EQ(runs[0].m, 4096);
  EXPECT_EQ(runs[0].k, 4096);

  s.records.push_back(point("splitk", 4, 4096, kBest * 1.2, 0.004, kBest * 1.03));
  r = rank_rungs(s, registry(), 4096, 4096, 4096, false);
  EXPECT_TRUE(r.complete());
  EXPECT_TRUE(rung_search_points(r, s.records[0].spec).empty());
  EXPECT_EQ(r.line(), "fastest here: pipelined 256, 53.1 TFLOP/s, 103 % of cuBLAS; 4.2 % ahead of splitk 2");
  ASSERT_TRUE(r.next_kernel && r.next_tile && r.to_cublas);
  EXPECT_EQ(r.next_kernel->against, "splitk 2");
  EXPECT_NEAR(r.next_kernel->percent, 4.2, 1e-9);
  EXPECT_FALSE(r.next_kernel->within_noise);
  EXPECT_EQ(r.next_tile->against, "tile 128");
  EXPECT_NEAR(r.next_tile->percent, 10.0, 1e-9);
  EXPECT_EQ(r.to_cublas->against, "cublas");
  EXPECT_NEAR(r.fastest()->percent_of_cublas(), 103.0, 1e-9);
  EXPECT_FALSE(r.to_cublas->within_noise);
  // Fastest first, every configuration once.
  std::vector<std::string> order;
  for (const RungTiming& t : r.measured) order.push_back(rung_label(t.config));
  EXPECT_EQ(order, (std::vector<std::string>{"pipelined 256", "splitk 2", "pipelined 128", "splitk 4"}));
  const std::vector<std::string> notes = r.notes();
  ASSERT_GE(notes.size(), 3u);
  EXPECT_EQ(
      notes[0],
      "pipelined 256 is 4.2 % ahead of splitk 2, the fastest other kernel (their quartiles do not overlap)");
  EXPECT_EQ(notes[1], "pipelined 256 is 10.0 % ahead of its own tile 128 (their quartiles do not overlap)");
  EXPECT_EQ(notes[2], "pipelined 256 reaches 103 % of cublas timed interleaved with it");
}

TEST(RungSuggest, SaysWithinNoiseWhereTheQuartilesOverlap) {
  Session s = h100();
  // splitk 2 is 0.3 % slower, with quartiles 1 % wide: the two cannot be told apart. cuBLAS likewise.
  s.records = {point("pipelined", 128, 1000, 1.000, 0.01, 1.002), point("pipelined", 256, 1000, 1.2, 0.01),
               point("splitk", 2, 1000, 1.003, 0.01), point("splitk", 4, 1000, 1.1, 0.01)};
  const RungRanking r = rank_rungs(s, registry(), 1000, 1000, 1000, false);
  ASSERT_TRUE(r.next_kernel && r.to_cublas);
  EXPECT_TRUE(r.next_kernel->within_noise);
  EXPECT_TRUE(r.to_cublas->within_noise);
  EXPECT_FALSE(r.next_tile->within_noise);
  EXPECT_NE(r.line().find("; within noise of splitk 2 (0.30 % ahead)"), std::string::npos) << r.line();
  EXPECT_NE(r.line().find("100 % of cuBLAS"), std::string::npos) << r.line();
  EXPECT_EQ(r.notes()[2],
            "pipelined 128 reaches 100 % of cublas timed interleaved with it, within noise "
            "(quartiles overlap)");
}

// No cuBLAS timed with the fastest point (a quick run, or the CPU backend): the line leaves it out, the notes
// say why; never a cuBLAS point measured at another time, nor the other precision's.
TEST(RungSuggest, AMissingCublasIsSaidNeverGuessed) {
  Session s = h100();
  s.records = {quick(point("pipelined", 128, 512, 0.10, 0.001)),
               point("pipelined", 256, 512, 0.20, 0.001, 0.1), point("splitk", 2, 512, 0.30, 0.001, 0.1),
               point("splitk", 4, 512, 0.40, 0.001, 0.1), point("cublas", 0, 512, 0.05, 0.001)};
  RungRanking r = rank_rungs(s, registry(), 512, 512, 512, false);
  EXPECT_EQ(rung_label(r.fastest()->config), "pipelined 128");
  EXPECT_FALSE(r.to_cublas) << "cuBLAS's own point is not the one timed with it";
  EXPECT_EQ(r.line().find("cuBLAS"), std::string::npos) << r.line();
  EXPECT_NE(r.line().find("; 3x as fast as splitk 2"), std::string::npos)
      << "from twice the speed on: " << r.line();
  EXPECT_EQ(r.notes()[2], "no cublas to compare pipelined 128 with: none timed with it (quick policy)");
  // The CPU backend says why itself.
  Session cpu;
  cpu.device.backend = "cpu";
  std::vector<KernelInfo> reg = registry();
  for (KernelInfo& k : reg) k.cpu_elsewhere = k.id == "splitk";  // the only one with a CPU implementation
  MeasurementRecord c = point("splitk", 2, 64, 0.5, 0.01);
  c.interleaved_note = "CPU backend: no cuBLAS";
  cpu.records = {c, point("pipelined", 128, 64, 0.1, 0.01)};  // from another device: not on this one's ladder
  r = rank_rungs(cpu, reg, 64, 64, 64, false);
  EXPECT_EQ(r.configurations, 2) << "splitk 2 and 4 run on the CPU, pipelined does not";
  ASSERT_EQ(r.measured.size(), 1u);
  EXPECT_EQ(rung_label(r.fastest()->config), "splitk 2");
  EXPECT_EQ(r.notes()[0], "no cublas to compare splitk 2 with: CPU backend: no cuBLAS");
  EXPECT_EQ(r.line(), "fastest so far: splitk 2, 1.05 GFLOP/s; 1 of 2 not measured");
}

// FP32 kernels are ranked against cuBLAS SGEMM, TF32 ones against cuBLAS TF32, never across: a TF32 point
// whose interleaved reference is the FP32 cuBLAS is not compared with it.
TEST(RungSuggest, PrecisionsAreRankedApartEachAgainstItsOwnCublas) {
  Session s = h100();
  MeasurementRecord wrong = point("wgmma_tf32", 512, 2048, 0.30, 0.002, 0.5, true);
  wrong.interleaved.kernel = "cublas";  // the FP32 one: not this precision's
  s.records = {point("pipelined", 256, 2048, 0.40, 0.002, 0.41),
               point("wgmma_tf32", 256, 2048, 0.20, 0.002, 0.22, true), wrong};
  const RungRanking fp32 = rank_rungs(s, registry(), 2048, 2048, 2048, false);
  ASSERT_EQ(fp32.measured.size(), 1u) << "the TF32 rung is faster, but not in the FP32 ranking";
  EXPECT_EQ(fp32.fastest()->config.kernel, "pipelined");
  EXPECT_EQ(fp32.to_cublas->against, "cublas");
  const RungRanking tf32 = rank_rungs(s, registry(), 2048, 2048, 2048, true);
  EXPECT_EQ(tf32.configurations, 2);
  EXPECT_EQ(tf32.cublas, "cublas_tf32");
  ASSERT_EQ(tf32.measured.size(), 2u);
  EXPECT_EQ(rung_label(tf32.fastest()->config), "wgmma_tf32 256");
  EXPECT_EQ(tf32.to_cublas->against, "cublas_tf32");
  EXPECT_NEAR(tf32.fastest()->percent_of_cublas(), 110.0, 1e-9);
  EXPECT_EQ(tf32.measured[1].cublas_ms, 0.0);
  EXPECT_EQ(tf32.measured[1].cublas_note, "the cuBLAS timed with it is cublas, not cublas_tf32");
  EXPECT_TRUE(tf32.complete());
  // With no other kernel at this precision, the line gives the margin to the kernel's next tile.
  EXPECT_EQ(tf32.line(),
            "fastest here: wgmma_tf32 256, 85.9 TFLOP/s, 110 % of cuBLAS; 50.0 % ahead of tile 512");
  // An older GPU: the sm_90 rung is not on its ladder (nothing to measure, nothing missing).
  Session a100 = s;
  a100.device.sm = 80;
  const RungRanking old = rank_rungs(a100, registry(), 2048, 2048, 2048, true);
  EXPECT_EQ(old.configurations, 0);
  EXPECT_TRUE(old.measured.empty());
  EXPECT_EQ(old.line(), "no TF32 rung runs on this device");
}

// Only points of exactly this M x N x K count; of a configuration's points the newest stands, except that a
// quick run never replaces a benchmarked point; a failure makes it failed until a later point passes. Failed,
// cold-L2, teaching and cuBLAS points are never the fastest.
TEST(RungSuggest, ReadsOnlyThisShapeAndTheStandingPointOfEachConfiguration) {
  Session s = h100();
  MeasurementRecord other_m = point("splitk", 4, 4096, 0.01, 0.001);
  other_m.spec.m = 4095;
  MeasurementRecord other_k = point("splitk", 4, 4096, 0.01, 0.001);
  other_k.spec.k = 8192;
  MeasurementRecord cold = point("splitk", 2, 4096, 0.02, 0.001);
  cold.policy += ", cold L2";
  MeasurementRecord random_input = point("pipelined", 256, 4096, 3.0, 0.01);
  MeasurementRecord ones_input = point("pipelined", 256, 4096, 2.9, 0.01);
  ones_input.spec.input = InputKind::Ones;  // the timing of a GEMM does not depend on the values
  s.records = {other_m,
               other_k,
               cold,
               point("pipelined", 128, 4096, 2.0, 0.01),
               quick(point("pipelined", 128, 4096, 1.0, 0.01)),  // newer, but quick: the bench point stands
               random_input,
               ones_input,  // newer: stands
               point("splitk", 2, 4096, 0.5, 0.01),
               failed(point("splitk", 2, 4096, 0.4, 0.01)),  // newer and failed: splitk 2 failed
               failed(point("splitk", 4, 4096, 0.3, 0.01)),
               point("splitk", 4, 4096, 2.5, 0.01),         // a later pass replaces the failure
               point("tiled_floork", 16, 4096, 0.1, 0.01),  // teaching: never ranked
               point("cublas", 0, 4096, 0.2, 0.01)};        // the reference: never ranked
  RungRanking r = rank_rungs(s, registry(), 4096, 4096, 4096, false);
  std::vector<std::string> order;
  for (const RungTiming& t : r.measured)
    order.push_back(rung_label(t.config) + " " + std::to_string(t.median_ms));
  EXPECT_EQ(order, (std::vector<std::string>{"pipelined 128 2.000000", "splitk 4 2.500000",
                                             "pipelined 256 2.900000"}));
  EXPECT_EQ(r.failed, (std::vector<KernelTile>{{"splitk", 2}}));
  EXPECT_TRUE(r.missing.empty());
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.measured[0].record, 3u);
  EXPECT_NE(r.notes().back().find("failed verification (never the fastest): splitk 2"), std::string::npos);
  // A newer benchmarked point replaces the older one; a quick point stands where there is no benchmarked one.
  s.records.push_back(point("pipelined", 128, 4096, 2.8, 0.01));
  s.records.push_back(quick(point("splitk", 2, 4096, 2.7, 0.01)));
  r = rank_rungs(s, registry(), 4096, 4096, 4096, false);
  order.clear();
  for (const RungTiming& t : r.measured)
    order.push_back(rung_label(t.config) + " " + std::to_string(t.median_ms));
  EXPECT_EQ(order, (std::vector<std::string>{"splitk 4 2.500000", "splitk 2 2.700000",
                                             "pipelined 128 2.800000", "pipelined 256 2.900000"}));
  EXPECT_EQ(r.measured[1].stop, "samples taken");
  EXPECT_TRUE(r.failed.empty());
  // The same reading as the tile suggestion's.
  ProblemSpec at;
  at.m = at.n = at.k = 4096;
  at.kernel = "pipelined";
  at.tile = 256;
  const TileSuggestion t = suggest_tile(s, registry()[0], at);
  ASSERT_TRUE(t.fastest);
  EXPECT_EQ(*t.fastest, 128);
  EXPECT_DOUBLE_EQ(t.measured[0].median_ms, 2.8);
}

TEST(RungSuggest, SaysWhatIsMissingByKernelAndWhenNothingIsMeasured) {
  Session s = h100();
  RungRanking r = rank_rungs(s, registry(), 300, 200, 100, false);
  EXPECT_EQ(r.line(), "no FP32 rung measured at 300 x 200 x 100 yet (4 configurations)");
  EXPECT_EQ(r.missing_text(), "pipelined (128, 256), splitk (2, 4)");
  EXPECT_EQ(r.notes(),
            std::vector<std::string>{"not measured at 300 x 200 x 100: pipelined (128, 256), splitk (2, 4)"});
  ProblemSpec at;
  at.m = 300;
  at.n = 200;
  at.k = 100;
  at.input = InputKind::Ramp;
  at.seed = 7;
  const std::vector<ProblemSpec> runs = rung_search_points(r, at);
  ASSERT_EQ(runs.size(), 4u);
  for (const ProblemSpec& p : runs) {
    EXPECT_EQ(p.m, 300);
    EXPECT_EQ(p.n, 200);
    EXPECT_EQ(p.k, 100);
    EXPECT_EQ(p.input, InputKind::Ramp);
    EXPECT_EQ(p.seed, 7u);
  }
  EXPECT_EQ(runs[3].kernel, "splitk");
  EXPECT_EQ(runs[3].tile, 4);
  const std::vector<KernelInfo> reg = registry();
  for (const KernelInfo* k : {&reg[0], &reg[1]})
    for (int t : k->tiles) {
      MeasurementRecord f = failed(point(k->id, t, 100, 1, 0.1));
      f.spec.m = 300;
      f.spec.n = 200;
      s.records.push_back(f);
    }
  r = rank_rungs(s, reg, 300, 200, 100, false);
  EXPECT_EQ(r.line(), "every FP32 rung failed verification at 300 x 200 x 100");
  EXPECT_TRUE(rung_search_points(r, at).empty()) << "a failed configuration is not measured again";
}

}  // namespace
}  // namespace ts

// Occupancy without a GPU: the catalog's limits and peaks, the calculator and its what-if inputs, the lookup
// of build-time figures (nearest architecture when one was not compiled), the generated table itself, and
// `tilescope list --occupancy`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/engine/gpu_catalog.hpp"
#include "kernels/engine/registry.hpp"
#include "test_util.hpp"

using namespace ts;

TEST(GpuCatalog, KnowsTheFiveGpusWithTheirDataSheetPeaks) {
  EXPECT_EQ(gpu_catalog().size(), 5u);
  EXPECT_NEAR(find_gpu("T4").peak_fp32_tflops(), 8.1, 0.05);
  EXPECT_NEAR(find_gpu("a100").peak_fp32_tflops(), 19.5, 0.05);
  EXPECT_NEAR(find_gpu("a100").peak_tf32_tflops(), 155.9, 0.1);
  EXPECT_NEAR(find_gpu("l4").peak_fp32_tflops(), 30.3, 0.05);
  EXPECT_NEAR(find_gpu("rtx4090").peak_fp32_tflops(), 82.6, 0.05);
  EXPECT_NEAR(find_gpu("H100").peak_fp32_tflops(), 66.9, 0.05);
  EXPECT_EQ(find_gpu("h100").limits.smem_per_sm, 233472);
  EXPECT_EQ(find_gpu("l4").limits.max_threads_per_sm, 1536);
  try {
    find_gpu("v100");
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("known: t4, a100, l4, rtx4090, h100"), std::string::npos)
        << e.what();
  }
}

TEST(GpuCatalog, TheCalculatorGivesTheClassicKernelsFiguresOnAnH100) {
  // The figures the CUDA occupancy API gave for the tiled kernel on an H100 (GPU.md): 32 registers, TILE^2
  // threads, 2 TILE^2 floats of shared memory. T=8: 32 blocks (block limit), T=16: 8, T=32: 2 (threads).
  const GpuModel& h100 = find_gpu("h100");
  auto blocks = [&](int tile) {
    OccupancyInputs in{tile * tile, 32, 2 * tile * tile * 4, 0, tile, tile};
    return theoretical_occupancy(h100, in, 4096, 4096);
  };
  EXPECT_EQ(blocks(8).blocks_per_sm, 32);
  EXPECT_NE(blocks(8).limiter.find("blocks per SM"), std::string::npos);
  EXPECT_EQ(blocks(16).blocks_per_sm, 8);
  EXPECT_EQ(blocks(32).blocks_per_sm, 2);
  EXPECT_NE(blocks(32).limiter.find("threads"), std::string::npos);
  EXPECT_DOUBLE_EQ(blocks(32).occupancy, 1.0);
  EXPECT_EQ(blocks(32).grid_blocks, 128 * 128);
  EXPECT_DOUBLE_EQ(blocks(32).waves, 128.0 * 128.0 / (2 * 132));
  // The same kernel on a T4 (1024 threads, 16 blocks per SM): T=8 is held to 16 blocks.
  OccupancyInputs t8{64, 32, 512, 0, 8, 8};
  EXPECT_EQ(theoretical_occupancy(find_gpu("t4"), t8, 1024, 1024).blocks_per_sm, 16);
}

TEST(GpuCatalog, WhatIfInputsChangeTheLimiterAndBadOnesAreRefused) {
  const GpuModel& h100 = find_gpu("h100");
  OccupancyInputs in{256, 128, 0, 0, 128, 128};  // 128 registers x 256 threads: 2 blocks by registers
  OccupancyReport o = theoretical_occupancy(h100, in, 4096, 4096);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limiter, "registers");
  in.regs_per_thread = 64;  // what if it had 64
  EXPECT_EQ(theoretical_occupancy(h100, in, 4096, 4096).blocks_per_sm, 4);
  in.dynamic_smem = 100 * 1024;  // and 100 KiB of shared memory: 2 blocks by shared memory
  o = theoretical_occupancy(h100, in, 4096, 4096);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limiter, "shared memory");
  auto refused = [&](OccupancyInputs bad, const GpuModel& g, const std::string& what) {
    try {
      theoretical_occupancy(g, bad, 64, 64);
      ADD_FAILURE() << what;
    } catch (const ValidationError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  OccupancyInputs ok{256, 64, 0, 0, 64, 64};
  OccupancyInputs b = ok;
  b.threads_per_block = 2048;
  refused(b, h100, "threads per block = 2048 is outside 1..1024");
  b = ok;
  b.regs_per_thread = 300;
  refused(b, h100, "registers per thread = 300 is outside 1..255");
  b = ok;
  b.dynamic_smem = 70 * 1024;
  refused(b, find_gpu("t4"), "outside 0..65536");
  b = ok;
  b.static_smem = 60 * 1024;
  b.dynamic_smem = 60 * 1024;
  refused(b, find_gpu("l4"), "above NVIDIA L4's limit of 101376");
}

TEST(BuildResources, LookupTakesTheExactArchitectureElseTheNearestAndSaysSo) {
  const std::vector<BuildResource> t = {
      {"tiled", 32, true, 80, "f80", 30, 8192, 0, 0, 1024, 0, 32, 32, 1},
      {"tiled", 32, true, 90, "f90", 32, 8192, 0, 0, 1024, 0, 32, 32, 1},
      {"tiled", 32, false, 90, "g90", 33, 8192, 0, 0, 1024, 0, 32, 32, 1},
  };
  ResourceLookup l = lookup_resources(t, "tiled", 32, true, 90);
  ASSERT_TRUE(l.row);
  EXPECT_TRUE(l.exact_arch);
  EXPECT_EQ(l.row->regs, 32);
  l = lookup_resources(t, "tiled", 32, true, 89);  // L4: sm_89 not compiled, sm_80 stands in
  ASSERT_TRUE(l.row);
  EXPECT_FALSE(l.exact_arch);
  EXPECT_EQ(l.row->arch, 80);
  EXPECT_NE(l.note.find("sm_89 is not compiled in this build: figures of sm_80"), std::string::npos);
  l = lookup_resources(t, "tiled", 32, true, 75);  // nothing below: the nearest above
  ASSERT_TRUE(l.row);
  EXPECT_EQ(l.row->arch, 80);
  EXPECT_EQ(lookup_resources(t, "tiled", 32, false, 90).row->regs, 33);  // the ragged variant
  EXPECT_FALSE(lookup_resources(t, "tiled", 16, true, 90).row);
}

// The Occupancy panel's sentence for an engine that does not name the function it launched: the main row is
// compared with the driver's figures only for a launch of the same blocks per tile of C. wgmma_tf32 tile 128
// at 1000^3 cuts K into 2 slices and runs its split variant (162 registers on the H100) where the main row,
// at 4096^3, is the unsplit one (122): that is another launch, not a difference.
TEST(BuildResources, WithoutTheFunctionTheMainRowIsComparedOnlyWithALaunchOfItsBlocksPerTile) {
  const std::vector<BuildResource> t = {
      {"wgmma_tf32", 128, true, 90, "f", 122, 0, 0, 0, 256, 203872, 128, 128, 1}};
  const ResourceLookup l = lookup_resources(t, "wgmma_tf32", 128, true, 90);
  ASSERT_TRUE(l.row);
  KernelResources driver{256, 122, 0, 203872};
  BuildComparison c = compare_with_build(l, driver, 1, "note");
  EXPECT_EQ(c.kind, BuildComparison::Kind::match);
  EXPECT_EQ(c.text, "The build's figures match the driver's (registers, shared memory, threads).");
  driver.regs_per_thread = 162;
  c = compare_with_build(l, driver, 1, "note");  // the same launch, other figures: a difference, said as one
  EXPECT_EQ(c.kind, BuildComparison::Kind::differ);
  EXPECT_NE(c.text.find("DIFFER from the driver's: build 122 registers, 0 + 203872 B shared, 256 threads; "
                        "driver 162, 0 + 203872 B, 256."),
            std::string::npos)
      << c.text;
  c = compare_with_build(l, driver, 2, "note");  // K in 2 slices: the row is not this launch's
  EXPECT_EQ(c.kind, BuildComparison::Kind::other_launch);
  EXPECT_EQ(c.text.find("DIFFER"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("at 4096^3 (1 block per tile of C, 122 registers); this launch has 2 per tile"),
            std::string::npos)
      << c.text;
  c = compare_with_build(lookup_resources(t, "wgmma_tf32", 256, true, 90), driver, 1, "no nvcc");
  EXPECT_EQ(c.kind, BuildComparison::Kind::no_row);
  EXPECT_EQ(c.text, "The build's resource table has no row for this launch (no nvcc).");
}

// The launch names its function (cudaFuncGetName): the row of that function is compared, the variant's as
// much as the main one's, and a function the table has no row for is another launch. Without a function the
// variant rows are never taken (the calculator, the wave marks and `list --occupancy` use the main rows).
TEST(BuildResources, ALaunchIsComparedWithTheRowOfTheFunctionItRan) {
  std::vector<BuildResource> t = {
      {"wgmma_tf32", 128, true, 90, "unsplit", 122, 0, 0, 0, 256, 203872, 128, 128, 1, 4096, false},
      {"wgmma_tf32", 128, true, 90, "split", 162, 0, 0, 0, 256, 203872, 128, 128, 2, 1024, true},
      {"tiled", 32, true, 80, "tiled32", 32, 8192, 0, 0, 1024, 0, 32, 32, 1, 4096, false}};
  ResourceLookup l = lookup_resources(t, "wgmma_tf32", 128, true, 90);
  ASSERT_TRUE(l.row);
  EXPECT_EQ(std::string(l.row->function), "unsplit");
  EXPECT_FALSE(l.by_function);
  l = lookup_resources(t, "wgmma_tf32", 128, true, 90, "split");
  ASSERT_TRUE(l.row);
  EXPECT_EQ(std::string(l.row->function), "split");
  EXPECT_TRUE(l.by_function);
  // The split launch at 1000^3: 2 blocks per tile, its own row, the same figures.
  KernelResources driver{256, 162, 0, 203872};
  BuildComparison c = compare_with_build(l, driver, 2, "note");
  EXPECT_EQ(c.kind, BuildComparison::Kind::match);
  EXPECT_EQ(
      c.text,
      "The build's figures for the function this launch ran (the kernel's variant at small shapes, as at "
      "1024^3) match the driver's (registers, shared memory, threads).");
  // On another machine the same function may run with other slices (another SM count): still its row.
  EXPECT_EQ(compare_with_build(l, driver, 3, "note").kind, BuildComparison::Kind::match);
  driver.regs_per_thread = 168;
  c = compare_with_build(l, driver, 2, "note");
  EXPECT_EQ(c.kind, BuildComparison::Kind::differ);
  EXPECT_NE(c.text.find("DIFFER from the driver's: build 162 registers"), std::string::npos) << c.text;
  // The main row by its function: no sentence about variants.
  driver.regs_per_thread = 122;
  c = compare_with_build(lookup_resources(t, "wgmma_tf32", 128, true, 90, "unsplit"), driver, 1, "note");
  EXPECT_EQ(c.kind, BuildComparison::Kind::match);
  EXPECT_EQ(c.text, "The build's figures match the driver's (registers, shared memory, threads).");
  // A function the table does not list for this kernel x tile: another launch, never a difference.
  l = lookup_resources(t, "wgmma_tf32", 128, true, 90, "a third one");
  EXPECT_FALSE(l.row);
  EXPECT_TRUE(l.other_function);
  c = compare_with_build(l, driver, 1, "note");
  EXPECT_EQ(c.kind, BuildComparison::Kind::other_launch);
  EXPECT_NE(c.text.find("no row for the function this launch ran"), std::string::npos) << c.text;
  // A kernel with no rows at all (a person's kernel, cuBLAS): no row, whatever its function.
  l = lookup_resources(t, "yours:mm", 16, true, 90, "mm");
  EXPECT_FALSE(l.row);
  EXPECT_FALSE(l.other_function);
  EXPECT_EQ(compare_with_build(l, driver, 1, "note").kind, BuildComparison::Kind::no_row);
  // By function on an architecture not compiled: the nearest one's row of that function, said.
  l = lookup_resources(t, "tiled", 32, true, 89, "tiled32");
  ASSERT_TRUE(l.row);
  EXPECT_FALSE(l.exact_arch);
  EXPECT_FALSE(l.other_function);
  c = compare_with_build(l, KernelResources{1024, 32, 8192, 0}, 1, "note");
  EXPECT_EQ(c.kind, BuildComparison::Kind::match);
  EXPECT_NE(c.text.find("(sm_89 is not compiled in this build: figures of sm_80)"), std::string::npos)
      << c.text;
  // A table with only a variant row for a kernel x tile gives no main row.
  t.erase(t.begin());
  EXPECT_FALSE(lookup_resources(t, "wgmma_tf32", 128, true, 90).row);
}

TEST(BuildResources, TheoreticalWaveMarksComeFromTheTableAndTheCatalog) {
  const std::vector<BuildResource> t = {{"tiled", 32, true, 90, "f", 32, 8192, 0, 0, 1024, 0, 32, 32, 1}};
  SweepSpec s;
  // H100: 2 blocks of 1024 threads per SM x 132 SMs = 264 blocks a wave (WaveMarks test in test_sweep.cpp).
  const auto marks = theoretical_wave_marks(t, find_gpu("h100"), s, {"tiled", 32}, 256, 1024);
  ASSERT_FALSE(marks.empty());
  EXPECT_EQ(marks[0].size, 513);
  // A T4 holds one such block per SM on 40 SMs: 40 blocks a wave, so the first mark comes at 7 x 7 = 49
  // blocks.
  const auto t4 = theoretical_wave_marks(t, find_gpu("t4"), s, {"tiled", 32}, 1, 1024);
  ASSERT_FALSE(t4.empty());
  EXPECT_EQ(t4[0].size, 6 * 32 + 1);
  EXPECT_TRUE(theoretical_wave_marks(t, find_gpu("h100"), s, {"cublas", 0}, 256, 1024).empty());
}

// Split-K launches one block per slice of K for every tile of C: the calculator's grid and waves count them,
// and so do the wave marks (2 slices: the first mark where 2 x tiles passes a wave, not tiles).
TEST(BuildResources, SplitKBlocksPerTileMultiplyTheGridAndMoveTheWaveMarks) {
  const std::vector<BuildResource> t = {{"splitk", 2, true, 90, "s", 128, 0, 0, 0, 256, 49920, 128, 128, 2},
                                        {"splitk", 1, true, 90, "p", 128, 0, 0, 0, 256, 49920, 128, 128, 1}};
  const OccupancyReport two = theoretical_occupancy(find_gpu("h100"), inputs_from(t[0]), 1024, 1024);
  const OccupancyReport one = theoretical_occupancy(find_gpu("h100"), inputs_from(t[1]), 1024, 1024);
  EXPECT_EQ(one.grid_blocks, 64);
  EXPECT_EQ(two.grid_blocks, 128);
  EXPECT_DOUBLE_EQ(two.waves, 2 * one.waves);
  SweepSpec s;
  const auto m2 = theoretical_wave_marks(t, find_gpu("h100"), s, {"splitk", 2}, 128, 3072);
  const auto m1 = theoretical_wave_marks(t, find_gpu("h100"), s, {"splitk", 1}, 128, 3072);
  ASSERT_FALSE(m2.empty());
  ASSERT_FALSE(m1.empty());
  EXPECT_LT(m2[0].size, m1[0].size);
  EXPECT_EQ(m2[0].grid, 2 * grid_blocks(m2[0].size, m2[0].size, 128, 128));
}

// The waves in words: a partial wave, whole waves, whole waves and a partial one, and none for a launch in K
// segments (stream-K: blocks of unequal length planned for the SMs).
TEST(GpuCatalog, TheWavesAreSaidInWordsAndALaunchInKSegmentsHasNone) {
  DeviceLimits h100 = find_gpu("h100").limits;
  const KernelResources one_per_sm{256, 200, 0, 200 * 1024};
  EXPECT_EQ(waves_text(compute_occupancy(h100, one_per_sm, 66)), "0.50: one wave, 50 % full");
  EXPECT_EQ(waves_text(compute_occupancy(h100, one_per_sm, 264)), "2.00: 2 full waves");
  EXPECT_EQ(waves_text(compute_occupancy(h100, one_per_sm, 132)), "1.00: 1 full wave");
  EXPECT_EQ(waves_text(compute_occupancy(h100, one_per_sm, 288)), "2.18: 2 full waves, then one 18 % full");
  // A grid far smaller than a wave is not rounded to nothing: 9 blocks of 32 x 132 slots.
  const KernelResources small{64, 32, 512, 0};
  EXPECT_EQ(waves_text(compute_occupancy(h100, small, 9)), "0.0021: one wave, 0.21 % full");
  OccupancyReport sk = compute_occupancy(h100, one_per_sm, 360);
  sk.k_segments = true;
  EXPECT_EQ(waves_text(sk).rfind("none: ", 0), 0u) << waves_text(sk);
  EXPECT_NE(waves_text(sk).find("K segments"), std::string::npos);
}

TEST(BuildResources, TheGeneratedTableCoversEveryKernelAndTileOfThisBuild) {
  const auto& table = build_resources();
  const std::string note = build_resources_note();
  EXPECT_FALSE(note.empty());
  if (!cuda_compiled()) {
    EXPECT_TRUE(table.empty());
    EXPECT_NE(note.find("without nvcc"), std::string::npos) << note;
    return;
  }
  ASSERT_FALSE(table.empty()) << note;
  EXPECT_NE(note.find("ptxas -v"), std::string::npos) << note;
  for (const auto& e : register_kernels()) {
    if (!e.cuda || e.info.id.rfind("cublas", 0) == 0) continue;
    for (int tile : e.info.tiles)
      for (bool aligned : {true, false}) {
        const ResourceLookup l = lookup_resources(table, e.info.id, tile, aligned, 90);
        ASSERT_TRUE(l.row) << e.info.id << " T=" << tile << (aligned ? " aligned" : " ragged");
        EXPECT_GT(l.row->regs, 0) << e.info.id;
        EXPECT_LE(l.row->regs, 255) << e.info.id;
        EXPECT_GT(l.row->threads, 0) << e.info.id;
        EXPECT_GT(l.row->tile_m, 0) << e.info.id;
      }
  }
  // What the classic kernel's source says: TILE x TILE threads, two TILE x TILE float tiles, at most 32
  // registers (__maxnreg__(32)), TILE x TILE of C per block.
  for (int tile : {8, 16, 32}) {
    const ResourceLookup l = lookup_resources(table, "tiled", tile, true, 90);
    ASSERT_TRUE(l.row);
    EXPECT_EQ(l.row->threads, tile * tile);
    EXPECT_EQ(l.row->static_smem, 2 * tile * tile * 4);
    EXPECT_EQ(l.row->dynamic_smem, 0);
    EXPECT_LE(l.row->regs, 32);
    EXPECT_EQ(l.row->tile_m, tile);
  }
  // The pipelined kernel asks for its stages as dynamic shared memory.
  const ResourceLookup p = lookup_resources(table, "pipelined", 256, true, 90);
  ASSERT_TRUE(p.row);
  EXPECT_EQ(p.row->static_smem, 0);
  EXPECT_GT(p.row->dynamic_smem, 0);
  EXPECT_EQ(p.row->tile_m, 128);
  EXPECT_EQ(p.row->tile_n, 256);
}

TEST(BuildResources, ListOccupancyPrintsATheoreticalTableWithoutAGpu) {
  const auto r = test::run_cmd(std::string(TILESCOPE_BIN) + " list --occupancy T4 --json");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["gpu"], "NVIDIA T4");
  EXPECT_EQ(j["theoretical"], true);
  EXPECT_EQ(j["source"], build_resources_note());
  if (cuda_compiled()) {
    ASSERT_FALSE(j["kernels"].empty());
    int errors = 0;
    for (const auto& k : j["kernels"]) {
      if (k.contains("error")) {  // e.g. the cp.async kernels need sm_80: said, not computed
        ++errors;
        continue;
      }
      EXPECT_GE(k["blocks_per_sm"].get<int>(), 0);
      EXPECT_LE(k["blocks_per_sm"].get<int>(), 16) << k.dump();  // a T4 runs at most 16 blocks per SM
    }
    EXPECT_GT(errors, 0);
    EXPECT_LT(errors, int(j["kernels"].size()));
  }
  const auto text = test::run_cmd(std::string(TILESCOPE_BIN) + " list --occupancy h100");
  EXPECT_EQ(text.code, 0) << text.output;
  EXPECT_NE(text.output.find("THEORETICAL occupancy on NVIDIA H100"), std::string::npos) << text.output;
  const auto bad = test::run_cmd(std::string(TILESCOPE_BIN) + " list --occupancy v100");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("unknown GPU 'v100'"), std::string::npos);
}

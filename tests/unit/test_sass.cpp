// The SASS panel's analysis (core/engine/sass.hpp) on small hand-written listings (a loop, nested loops, no
// loop), on the build's own listings (every FP32 rung and tile has an FFMA main loop, the tensor-core rungs
// HMMA / HGMMA; no GPU needed), the diff of two rungs, `tilescope sass`, and a person's kernel's cubin from
// NVRTC disassembled at run time.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "core/engine/sass.hpp"
#include "core/engine/sass_tool.hpp"
#include "core/remote/remote_backend.hpp"
#include "core/user_kernel/kernel_workshop.hpp"
#include "kernels/engine/registry.hpp"
#include "require_nvrtc.hpp"
#include "test_util.hpp"

using namespace ts;

namespace {

// [SECTION] Hand-written listings.
// A loop of four instructions (0x20 .. 0x50) after a guard, and the trap every function ends with.
const char* kOneLoop =
    "/*0000*/ MOV R1, c[0x0][0x28] ;\n"
    "/*0010*/ @!P0 BRA 0x60 ;\n"
    "/*0020*/ LDS R2, [R3+0x80] ;\n"
    "/*0030*/ FFMA R4, R2.reuse, R5, R4 ;\n"
    "/*0040*/ ISETP.NE.AND P0, PT, R6, RZ, PT ;\n"
    "/*0050*/ @P0 BRA 0x20 ;\n"
    "/*0060*/ EXIT ;\n"
    "/*0070*/ BRA 0x70 ;\n";

TEST(Sass, ParsesAddressesPredicatesOpcodesAndBranchTargets) {
  const auto code = parse_sass(kOneLoop);
  ASSERT_EQ(code.size(), 8u);
  EXPECT_EQ(code[1].address, 0x10u);
  EXPECT_EQ(code[1].predicate, "@!P0");
  EXPECT_EQ(code[1].opcode, "BRA");
  EXPECT_EQ(code[1].target, 0x60);
  EXPECT_EQ(code[2].operands, "R2, [R3+0x80]");
  EXPECT_EQ(code[4].opcode, "ISETP.NE.AND");
  EXPECT_EQ(code[4].base(), "ISETP");
  EXPECT_EQ(code[4].target, -1);
  EXPECT_EQ(code[5].target, 0x20);
}

TEST(Sass, ReadsCuobjdumpsOwnOutputWithItsHeadersAndEncodings) {
  const std::string raw =
      "\n\tcode for sm_90\n\t\tFunction : _Z1kPf\n\t.headerflags\t@\"EF_CUDA_SM90\"\n"
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;                     /* 0x00000a00ff017b82 "
      "*/\n"
      "                                                                              /* 0x000ff00000000800 "
      "*/\n"
      "        /*0010*/              @!P0 BRA 0xa50 ;                                /* 0x00000008007c8947 "
      "*/\n"
      "                                                                              /* 0x000fea0003800000 "
      "*/\n";
  const auto fns = split_cuobjdump(raw);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "_Z1kPf");
  EXPECT_EQ(fns[0].arch, 90);
  EXPECT_EQ(fns[0].text, "/*0000*/ LDC R1, c[0x0][0x28] ;\n/*0010*/ @!P0 BRA 0xa50 ;\n");
  const auto code = parse_sass(raw);  // the encoding lines are not instructions
  ASSERT_EQ(code.size(), 2u);
  EXPECT_EQ(code[1].target, 0xa50);
}

TEST(Sass, FindsTheLoopOfABackwardBranchButNotTheTrapAfterExit) {
  const SassAnalysis an = analyse_sass(kOneLoop, 0, 0, 0);
  ASSERT_EQ(an.loops.size(), 1u);
  EXPECT_EQ(an.loops[0].first, 2u);
  EXPECT_EQ(an.loops[0].last, 5u);
  ASSERT_EQ(an.main_loop, 0);
  EXPECT_EQ(an.loop.total, 4);
  EXPECT_EQ(an.loop.count(SassClass::Ffma), 1);
  EXPECT_EQ(an.loop.count(SassClass::Lds), 1);
  EXPECT_EQ(an.loop.count(SassClass::Other), 2);
  EXPECT_DOUBLE_EQ(an.loop.share(SassClass::Ffma), 0.25);
  EXPECT_EQ(an.whole.total, 8);
  EXPECT_EQ(an.k_per_iteration, 0) << "no launch shape: k per iteration unknown";
}

TEST(Sass, TheMainLoopOfNestedLoopsIsTheInnermostThatCarriesTheMultiplyAdds) {
  // Outer loop 0x10 .. 0x90 (a load, then the inner loop 0x30 .. 0x60 with both FFMAs); a copy loop after it.
  const std::string text =
      "/*0000*/ MOV R1, c[0x0][0x28] ;\n"
      "/*0010*/ LDG.E R2, desc[UR4][R8.64] ;\n"
      "/*0020*/ STS [R3], R2 ;\n"
      "/*0030*/ LDS R4, [R5] ;\n"
      "/*0040*/ FFMA R6, R4, R7, R6 ;\n"
      "/*0050*/ FFMA R9, R4, R7, R9 ;\n"
      "/*0060*/ @P1 BRA 0x30 ;\n"
      "/*0070*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
      "/*0080*/ IADD3 R10, R10, 0x1, RZ ;\n"
      "/*0090*/ @P0 BRA 0x10 ;\n"
      "/*00a0*/ STG.E desc[UR4][R12.64], R6 ;\n"
      "/*00b0*/ @P2 BRA 0xa0 ;\n"
      "/*00c0*/ EXIT ;\n";
  const SassAnalysis an = analyse_sass(text, 64, 8, 8);
  ASSERT_EQ(an.loops.size(), 3u);
  EXPECT_EQ(an.loops[0].depth, 0);  // the outer loop
  EXPECT_EQ(an.loops[1].parent, 0);
  EXPECT_EQ(an.loops[1].depth, 1);
  EXPECT_EQ(an.loops[2].parent, -1);
  ASSERT_EQ(an.main_loop, 1) << an.main_loop_why;
  EXPECT_EQ(an.loop.total, 4);
  EXPECT_EQ(an.loop.count(SassClass::Ffma), 2);
  // Two multiply-adds per thread x 64 threads over an 8 x 8 tile: two k steps per iteration.
  EXPECT_DOUBLE_EQ(an.k_per_iteration, 2);
  ASSERT_EQ(an.per_k.size(), size_t(SassClass::Count));
  EXPECT_DOUBLE_EQ(an.per_k[size_t(SassClass::Ffma)], 1);
  EXPECT_DOUBLE_EQ(an.per_k[size_t(SassClass::Lds)], 0.5);
}

TEST(Sass, AMainLoopWithAnInnerLoaderLoopLeavesTheLoaderOutOfItsMix) {
  // The outer loop holds the FFMAs; its inner loop (0x10 .. 0x30) only loads.
  const std::string text =
      "/*0000*/ MOV R1, c[0x0][0x28] ;\n"
      "/*0010*/ LDG.E R2, desc[UR4][R8.64] ;\n"
      "/*0020*/ STS [R3], R2 ;\n"
      "/*0030*/ @P1 BRA 0x10 ;\n"
      "/*0040*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
      "/*0050*/ FFMA R6, R4, R7, R6 ;\n"
      "/*0060*/ @P0 BRA 0x10 ;\n"
      "/*0070*/ EXIT ;\n";
  const SassAnalysis an = analyse_sass(text, 0, 0, 0);
  ASSERT_EQ(an.loops.size(), 2u);
  ASSERT_EQ(an.main_loop, 0);
  EXPECT_EQ(an.inner_loops, 1);
  EXPECT_EQ(an.loop_all.total, 6);
  EXPECT_EQ(an.loop.total, 3);  // BAR, FFMA, BRA
  EXPECT_EQ(an.loop.count(SassClass::Ldg), 0);
  EXPECT_EQ(an.loop_all.count(SassClass::Ldg), 1);
}

TEST(Sass, StraightCodeHasNoMainLoopAndSaysWhy) {
  const SassAnalysis an =
      analyse_sass("/*0000*/ FFMA R1, R2, R3, R1 ;\n/*0010*/ EXIT ;\n/*0020*/ BRA 0x20 ;\n", 32, 4, 8);
  EXPECT_TRUE(an.loops.empty());
  EXPECT_EQ(an.main_loop, -1);
  EXPECT_NE(an.main_loop_why.find("no loop"), std::string::npos) << an.main_loop_why;
  EXPECT_NE(format_mix(an).find("none"), std::string::npos);
}

TEST(Sass, ALoopWithoutMultiplyAddsIsNoMainLoop) {
  const SassAnalysis an = analyse_sass("/*0000*/ LDS R1, [R2] ;\n/*0010*/ @P0 BRA 0x0 ;\n", 0, 0, 0);
  EXPECT_EQ(an.loops.size(), 1u);
  EXPECT_EQ(an.main_loop, -1);
}

TEST(Sass, CountsTheMultiplyAddsOfTensorCoreInstructions) {
  Instruction in;
  in.opcode = "HMMA.1688.F32.TF32";  // m16 n8 k8 per warp of 32
  EXPECT_DOUBLE_EQ(macs_per_thread(in), 16.0 * 8 * 8 / 32);
  in.opcode = "HMMA.16816.F32.BF16";
  EXPECT_DOUBLE_EQ(macs_per_thread(in), 16.0 * 8 * 16 / 32);
  in.opcode = "HGMMA.64x128x8.F32.TF32";  // per warpgroup of 128
  EXPECT_DOUBLE_EQ(macs_per_thread(in), 64.0 * 128 * 8 / 128);
  in.opcode = "HGMMA.64x99999x8.F32";  // out of range: not counted
  EXPECT_DOUBLE_EQ(macs_per_thread(in), 0);
  in.opcode = "FFMA";
  EXPECT_DOUBLE_EQ(macs_per_thread(in), 1);
  in.opcode = "FMUL";
  EXPECT_DOUBLE_EQ(macs_per_thread(in), 0);
  EXPECT_EQ(classify(in), SassClass::Other);
  in.opcode = "LDGSTS.E.BYPASS.128";
  EXPECT_EQ(classify(in), SassClass::Ldg);
}

TEST(Sass, NormalisingMakesRegistersAnonymousButKeepsConstants) {
  const auto code = parse_sass(
      "/*0000*/ @!P3 FFMA R12, R3.reuse, R40, R12 ;\n/*0010*/ LDS.128 R8, [UR5+0x1b0] ;\n"
      "/*0020*/ @P0 BRA 0x0 ;\n");
  ASSERT_EQ(code.size(), 3u);
  EXPECT_EQ(normalised(code[0]), "@!P FFMA R, R, R, R");
  EXPECT_EQ(normalised(code[1]), "LDS.128 R, [UR+0x1b0]");
  EXPECT_EQ(normalised(code[2]), "@P BRA <target>");
}

TEST(Sass, TheDiffOfTwoHandWrittenLoopsAlignsTheirInstructions) {
  SassListing a, b;
  a.available = b.available = true;
  a.text = kOneLoop;
  // The same loop with other registers and one more FFMA.
  b.text =
      "/*0000*/ MOV R1, c[0x0][0x28] ;\n"
      "/*0010*/ @!P0 BRA 0x70 ;\n"
      "/*0020*/ LDS R7, [R9+0x80] ;\n"
      "/*0030*/ FFMA R4, R7, R5, R4 ;\n"
      "/*0040*/ FFMA R11, R7, R5, R11 ;\n"
      "/*0050*/ ISETP.NE.AND P1, PT, R6, RZ, PT ;\n"
      "/*0060*/ @P1 BRA 0x20 ;\n"
      "/*0070*/ EXIT ;\n";
  const SassDiff d = diff_sass(a, b);
  EXPECT_EQ(d.delta[int(SassClass::Ffma)], 1);
  EXPECT_EQ(d.delta[int(SassClass::Lds)], 0);
  EXPECT_EQ(d.same, 4);
  EXPECT_EQ(d.added, 1);
  EXPECT_EQ(d.removed, 0);
  ASSERT_EQ(d.lines.size(), 5u);
  EXPECT_EQ(d.lines[2].op, '+');
  EXPECT_EQ(d.lines[2].text, "FFMA R, R, R, R");
}

TEST(Sass, ParseRefusesAListingOverItsLimitOfLines) {
  EXPECT_THROW(parse_sass(std::string(kMaxSassLines + 1, '\n')), std::invalid_argument);
}

// [SECTION] The build's listings (CPU backend: no GPU needed).
class BuildSass : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_compiled()) GTEST_SKIP() << "a build without nvcc has no kernels to list";
    set_program_listings(&build_sass_archive());
    m_backend = make_backend(BackendChoice::Cpu, nullptr);
  }
  SassListing listing(const std::string& kernel, int tile) {
    SassListing l = m_backend->sass_listing(kernel, tile, 90);
    EXPECT_TRUE(l.available) << kernel << " T=" << tile << ": " << l.why
                             << " (the build needs cuobjdump: scripts/install-deps.sh)";
    return l;
  }
  std::shared_ptr<Backend> m_backend;
};

TEST_F(BuildSass, EveryFp32RungAndTileHasAnFfmaMainLoop) {
  const std::vector<std::string> fp32 = {
      "naive",       "coalesced",  "tiled",    "tiled_nosync", "tiled_floork", "tiled_mirror", "blocktile1d",
      "blocktile2d", "vectorized", "warptile", "async",        "pipelined",    "splitk"};
  int checked = 0;
  const auto infos = builtin_kernel_infos();
  for (const std::string& id : fp32) {
    const KernelInfo* k = find_kernel(infos, id);
    ASSERT_NE(k, nullptr) << id;
    ASSERT_FALSE(k->tiles.empty()) << id;
    for (int tile : k->tiles) {
      const SassListing l = listing(id, tile);
      if (!l.available) continue;
      SCOPED_TRACE(id + " T=" + std::to_string(tile) + ": " + demangle(l.function));
      EXPECT_EQ(l.function.find("traced"), std::string::npos) << "the plain kernel, not its traced twin";
      EXPECT_EQ(l.arch, 90);
      EXPECT_TRUE(l.build_time);
      EXPECT_NE(l.tool.find("cuobjdump"), std::string::npos);
      EXPECT_GT(l.regs, 0);
      EXPECT_GE(l.spill_bytes, 0);
      EXPECT_GE(l.stack_bytes, 0);
      const SassAnalysis an = analyse_sass(l);
      ASSERT_GE(an.main_loop, 0) << an.main_loop_why;
      EXPECT_GT(an.loop.count(SassClass::Ffma), 0);
      EXPECT_EQ(an.loop.count(SassClass::Mma), 0);
      // Every multiply-add of the block's tile is an FFMA of the main loop: per k step, one per output a
      // thread owns, and an iteration covers a whole number of k steps.
      const double outputs_per_thread = double(l.tile_m) * l.tile_n / l.threads;
      ASSERT_GT(an.k_per_iteration, 0) << an.k_note;
      EXPECT_DOUBLE_EQ(an.k_per_iteration, std::round(an.k_per_iteration)) << an.k_note;
      EXPECT_DOUBLE_EQ(an.per_k[size_t(SassClass::Ffma)], outputs_per_thread);
      // (The function may hold more FFMAs outside it: a remainder loop, a ragged edge's path, the stages a
      // software pipeline peels off before and after its loop: pipelined 256 has 4096 FFMAs, 1024 per
      // iteration.)
      ++checked;
    }
  }
  EXPECT_GE(checked, 30);
}

TEST_F(BuildSass, TensorCoreRungsHaveHmmaOrHgmmaInTheirMainLoop) {
  for (const auto& [id, mma] : std::vector<std::pair<std::string, std::string>>{
           {"wmma_tf32", "HMMA"}, {"mma_tf32", "HMMA"}, {"wgmma_tf32", "HGMMA"}}) {
    const auto infos = builtin_kernel_infos();
    const KernelInfo* k = find_kernel(infos, id);
    ASSERT_NE(k, nullptr) << id;
    for (int tile : k->tiles) {
      const SassListing l = listing(id, tile);
      if (!l.available) continue;
      SCOPED_TRACE(id + " T=" + std::to_string(tile));
      const SassAnalysis an = analyse_sass(l);
      ASSERT_GE(an.main_loop, 0) << an.main_loop_why;
      int found = 0;
      for (size_t i = an.loops[an.main_loop].first; i <= an.loops[an.main_loop].last; ++i)
        found += an.code[i].base() == mma;
      EXPECT_GT(found, 0) << "no " << mma << " in the main loop";
      EXPECT_GT(an.loop.count(SassClass::Mma), 0);
      EXPECT_EQ(an.loop.count(SassClass::Ffma), 0);
      ASSERT_GT(an.k_per_iteration, 0) << an.k_note;
      // BK = 32 (or 16 for wmma): a whole number of BK steps of 8-deep MMAs.
      EXPECT_DOUBLE_EQ(std::fmod(an.k_per_iteration, 8), 0) << an.k_note;
    }
  }
}

TEST_F(BuildSass, TiledThirtyTwoAgainstBlocktile2dSixtyFourRaisesTheFfmaShare) {
  const SassListing a = listing("tiled", 32), b = listing("blocktile2d", 64);
  ASSERT_TRUE(a.available && b.available);
  const SassDiff d = diff_sass(a, b);
  // One output per thread (32 x 32 tile, 1024 threads) against 16 (64 x 64, 256 threads): FFMAs per k step.
  ASSERT_EQ(d.a.per_k.size(), size_t(SassClass::Count));
  ASSERT_EQ(d.b.per_k.size(), size_t(SassClass::Count));
  EXPECT_DOUBLE_EQ(d.a.per_k[size_t(SassClass::Ffma)], 1);
  EXPECT_DOUBLE_EQ(d.b.per_k[size_t(SassClass::Ffma)], 16);
  // tiled 32 takes BK = 32 k steps per iteration; blocktile2d 64 BK = 8.
  EXPECT_DOUBLE_EQ(d.a.k_per_iteration, 32);
  EXPECT_DOUBLE_EQ(d.b.k_per_iteration, 8);
  EXPECT_EQ(d.a.loop.count(SassClass::Ffma), 32);
  EXPECT_EQ(d.b.loop.count(SassClass::Ffma), 128);
  EXPECT_EQ(d.delta[int(SassClass::Ffma)], 96);
  for (int c = 0; c < int(SassClass::Count); ++c)
    EXPECT_EQ(d.delta[c], d.b.loop.counts[c] - d.a.loop.counts[c]) << to_string(SassClass(c));
  EXPECT_GT(d.b.loop.share(SassClass::Ffma), d.a.loop.share(SassClass::Ffma))
      << format_diff(d, "tiled:32", "blocktile2d:64", false);
  // Register blocking: shared memory loads per FFMA fall (tiled reads two values per FFMA, less what LDS.128
  // and broadcasts save; blocktile2d 8 values for 16 FFMAs per k step).
  EXPECT_LT(double(d.b.loop.count(SassClass::Lds)) / d.b.loop.count(SassClass::Ffma),
            double(d.a.loop.count(SassClass::Lds)) / d.a.loop.count(SassClass::Ffma));
  // The opcode diff covers both main loops whole.
  EXPECT_EQ(d.same + d.removed, d.a.loop_all.total);
  EXPECT_EQ(d.same + d.added, d.b.loop_all.total);
  EXPECT_GT(d.same, 0);
  EXPECT_FALSE(d.truncated);
}

TEST_F(BuildSass, ClosedKernelsAndUnknownTilesHaveNoListingAndSayWhy) {
  const SassListing c = m_backend->sass_listing("cublas", 0, 90);
  EXPECT_FALSE(c.available);
  EXPECT_NE(c.why.find("closed"), std::string::npos) << c.why;
  const SassListing t = m_backend->sass_listing("tiled", 7, 90);
  EXPECT_FALSE(t.available);
  // An architecture not compiled: the nearest one's listing, and the note says so.
  const SassListing old = m_backend->sass_listing("tiled", 16, 70);
  if (old.available && old.arch != 70) EXPECT_NE(old.note.find("not compiled"), std::string::npos);
}

TEST_F(BuildSass, ARemoteEngineAnswersWithItsBuildsListing) {
  remote::RemoteBackend engine(std::string("exec ") + TILESCOPE_BIN + " serve --backend cpu --quiet");
  ASSERT_TRUE(engine.connection()->engine_can("sass"));
  const SassListing here = m_backend->sass_listing("tiled", 32, 90);
  const SassListing there = engine.sass_listing("tiled", 32, 90);
  ASSERT_TRUE(there.available) << there.why;
  EXPECT_EQ(there.text, here.text);
  EXPECT_EQ(there.function, here.function);
  EXPECT_EQ(there.regs, here.regs);
  EXPECT_EQ(there.tool, here.tool);
  EXPECT_FALSE(there.engine.empty());
  const SassListing closed = engine.sass_listing("cublas", 0, 90);
  EXPECT_FALSE(closed.available);
  EXPECT_NE(closed.why.find("closed"), std::string::npos) << closed.why;
}

TEST(SassCli, PrintsTheListingTheMixAndTheDiffAndRefusesBadInput) {
  const std::string bin = TILESCOPE_BIN;
  const auto list = test::run_cmd(bin + " sass --kernel tiled --tile 32 --backend cpu");
  if (!cuda_compiled()) {
    EXPECT_EQ(list.code, 1) << list.output;
    return;
  }
  ASSERT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("tiled_kernel<32"), std::string::npos);
  EXPECT_NE(list.output.find("cuobjdump"), std::string::npos);
  EXPECT_NE(list.output.find("// main loop head"), std::string::npos);
  EXPECT_NE(list.output.find("> /*"), std::string::npos);
  const auto mix = test::run_cmd(bin + " sass --kernel tiled --tile 32 --mix --backend cpu");
  ASSERT_EQ(mix.code, 0) << mix.output;
  EXPECT_NE(mix.output.find("one iteration covers 32 k step(s)"), std::string::npos) << mix.output;
  EXPECT_NE(mix.output.find("FFMA                 32       1.00"), std::string::npos) << mix.output;
  const auto diff = test::run_cmd(bin + " sass --kernel tiled --tile 32 --diff blocktile2d:64 --backend cpu");
  ASSERT_EQ(diff.code, 0) << diff.output;
  EXPECT_NE(diff.output.find("FFMA               32      128      +96"), std::string::npos) << diff.output;
  EXPECT_NE(diff.output.find("main loops, registers made anonymous"), std::string::npos);
  const auto json = test::run_cmd(bin + " sass --kernel pipelined --tile 256 --json --backend cpu");
  ASSERT_EQ(json.code, 0) << json.output;
  EXPECT_NE(json.output.find("\"k_per_iteration\""), std::string::npos);
  for (const char* bad : {"--kernel tiled --tile 7", "--kernel nosuch", "--kernel tiled --diff :32",
                          "--kernel tiled --diff tiled:abc", "--kernel tiled --arch sm_x", "--tile 32"}) {
    const auto r = test::run_cmd(bin + " sass --backend cpu " + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.output;
  }
  const auto closed = test::run_cmd(bin + " sass --kernel cublas --backend cpu");
  EXPECT_EQ(closed.code, 1) << closed.output;
  EXPECT_NE(closed.output.find("closed"), std::string::npos) << closed.output;
}

// [SECTION] A person's kernel: NVRTC's cubin disassembled at run time (no GPU needed).
TEST(SassUserKernel, NvrtcsCubinIsDisassembledAtRunTimeWhenTheToolExists) {
  REQUIRE_NVRTC();
  std::string why;
  if (!find_sass_tool(&why)) GTEST_SKIP() << why;
  test::TempDir dir;
  setenv("TILESCOPE_CACHE_DIR", dir.file("cache").c_str(), 1);
  const std::string path = dir.file("mine.cu");
  std::ofstream(path) << "#define TILE_WIDTH 16\n"
                         "__global__ void my_matmul(float* C, const float* A, const float* B, int N) {\n"
                         "  int r = blockIdx.y * TILE_WIDTH + threadIdx.y, c = blockIdx.x * TILE_WIDTH + "
                         "threadIdx.x;\n"
                         "  if (r >= N || c >= N) return;\n"
                         "  float s = 0;\n"
                         "  for (int k = 0; k < N; ++k) s += A[r * N + k] * B[k * N + c];\n"
                         "  C[r * N + c] = s;\n"
                         "}\n";
  auto cpu = make_backend(BackendChoice::Cpu, nullptr);
  KernelWorkshop* w = cpu->workshop();
  ASSERT_NE(w, nullptr);
  w->publish(w->open(path, {}));
  const SassListing l = cpu->sass_listing("yours:my_matmul", 16, 90);
  unsetenv("TILESCOPE_CACHE_DIR");
  ASSERT_TRUE(l.available) << l.why;
  EXPECT_FALSE(l.build_time);
  EXPECT_EQ(l.arch, 90);
  EXPECT_NE(demangle(l.function).find("my_matmul"), std::string::npos) << l.function;
  EXPECT_NE(l.origin().find("at run time"), std::string::npos) << l.origin();
  EXPECT_GT(l.regs, 0);
  const SassAnalysis an = analyse_sass(l);
  ASSERT_GE(an.main_loop, 0) << an.main_loop_why;
  EXPECT_GT(an.loop.count(SassClass::Ffma), 0);
  EXPECT_GT(an.loop.count(SassClass::Ldg), 0);
}

}  // namespace

// Points that cannot be right (core/engine/impossible.hpp, issue 30): a time faster than the compute roof of
// the kernel's precision or shorter than the DRAM floor is flagged with its reason and figures; just inside
// either roof is not; an unknown roof never flags; TF32 kernels are held to the TF32 roof, FP32 kernels to
// the FP32 one. Checked on a DeviceInfo made here (the CPU backend has no roofs, so nothing flags there).
#include <gtest/gtest.h>

#include "core/engine/impossible.hpp"
#include "device_samples.hpp"

using namespace ts;

namespace {

ProblemSpec cube(int64_t n) {
  ProblemSpec s;
  s.kernel = "tiled";
  s.tile = 32;
  s.m = s.n = s.k = n;
  return s;
}

// The median time (ms) at which `s` reaches `tflops`.
double ms_at(const ProblemSpec& s, double tflops) {
  return s.flops() / (tflops * 1e12) * 1e3;
}

}  // namespace

TEST(Impossible, JustUnderTheComputeRoofPassesJustOverIsFlaggedWithTheFigures) {
  const DeviceInfo d = test::sample_h100();
  const ProblemSpec s = cube(4096);
  EXPECT_EQ(impossible_reason(s, false, ms_at(s, 66.9 * 0.9999), d), "");
  const std::string why = impossible_reason(s, false, ms_at(s, 66.9 * 1.0001), d);
  ASSERT_FALSE(why.empty());
  // The achieved figure and the roof told apart ("66.91 ... 66.9", never "66.9 is above 66.9").
  EXPECT_NE(
      why.find("66.91 TFLOP/s is above the FP32 peak of NVIDIA H100 80GB HBM3, 66.9 TFLOP/s at 1980 MHz"),
      std::string::npos)
      << why;
  EXPECT_NE(why.find("the timing cannot be right (a kernel that skipped work, or a clock that lied)"),
            std::string::npos)
      << why;
}

TEST(Impossible, TheRoofIsTheKernelsPrecision) {
  const DeviceInfo d = test::sample_h100();
  const ProblemSpec s = cube(4096);
  const double t = ms_at(s, 200);  // over the FP32 roof, well under the TF32 one
  EXPECT_NE(impossible_reason(s, false, t, d).find("FP32 peak"), std::string::npos);
  EXPECT_EQ(impossible_reason(s, true, t, d), "") << "a TF32 kernel at 200 TFLOP/s is possible";
  const std::string tf32 = impossible_reason(s, true, ms_at(s, 600), d);
  EXPECT_NE(tf32.find("600 TFLOP/s is above the TF32 peak"), std::string::npos) << tf32;
  EXPECT_EQ(compute_roof_tflops(d, true), 535.2);
  EXPECT_EQ(compute_roof_tflops(d, false), 66.9);
}

TEST(Impossible, JustOverTheDramFloorPassesJustUnderIsFlagged) {
  // 8192 x 8192 x 16: C is 268 MB, more than the L2 can keep: a memory-bound shape (0.017 TFLOP/s per us).
  DeviceInfo d = test::sample_h100();
  ProblemSpec s = cube(8192);
  s.k = 16;
  const double bytes = 4.0 * (8192.0 * 16 * 2 + 8192.0 * 8192) - 2.0 * double(50 << 20);
  EXPECT_DOUBLE_EQ(floor_bytes(d, s.m, s.n, s.k), bytes);
  const double floor = bytes / 3352e9 * 1e3;
  EXPECT_DOUBLE_EQ(dram_floor_ms(d, s.m, s.n, s.k), floor);
  EXPECT_EQ(impossible_reason(s, false, floor * 1.0001, d), "");
  const std::string why = impossible_reason(s, false, floor * 0.9999, d);
  ASSERT_FALSE(why.empty());
  EXPECT_NE(why.find("is below the DRAM floor of NVIDIA H100 80GB HBM3"), std::string::npos) << why;
  EXPECT_NE(why.find("3352 GB/s (datasheet)"), std::string::npos) << why;
  EXPECT_NE(why.find("A and B read once, C written once, less twice the"), std::string::npos) << why;
  // A measured bandwidth above the datasheet's (it never is, but if) lowers the floor: the larger one counts.
  EXPECT_EQ(impossible_reason(s, false, floor * 0.9999, d, 3400), "");
  // Without a datasheet figure, the measured bandwidth makes the floor.
  d.datasheet_bandwidth_gbs = 0;
  EXPECT_NE(impossible_reason(s, false, bytes / 3000e9 * 1e3 * 0.99, d, 3000).find("(measured)"),
            std::string::npos);
}

// The L2 spares a launch less where its samples leave it less to hold: a batch of launches back to back
// shares it between one launch's dirty C and the next one's inputs, and a flush before each launch leaves it
// only C's writes. The same time can be possible for warm single launches and impossible for cold ones.
TEST(Impossible, TheL2IsCreditedAsTheSamplesWereTaken) {
  const DeviceInfo d = test::sample_h100();
  const double l2 = double(50 << 20);
  EXPECT_EQ(l2_credit(false, 1), 2.0);
  EXPECT_EQ(l2_credit(false, 4), 1.25);
  EXPECT_EQ(l2_credit(true, 1), 1.0);
  EXPECT_EQ(l2_credit(false, 0), 2.0);  // no batch known: the most credit, never a false flag
  ProblemSpec s = cube(8192);
  s.k = 16;
  const double compulsory = 4.0 * (8192.0 * 16 * 2 + 8192.0 * 8192);
  EXPECT_DOUBLE_EQ(floor_bytes(d, s.m, s.n, s.k, 1.25), compulsory - 1.25 * l2);
  EXPECT_DOUBLE_EQ(floor_bytes(d, s.m, s.n, s.k, 1), compulsory - l2);
  EXPECT_DOUBLE_EQ(floor_bytes(d, s.m, s.n, s.k, 7), compulsory - 2 * l2);  // at most twice
  const double warm = dram_floor_ms(d, s.m, s.n, s.k), cold = dram_floor_ms(d, s.m, s.n, s.k, 0, 1);
  ASSERT_GT(cold, warm);
  const double t = 0.5 * (warm + cold);
  EXPECT_EQ(impossible_reason(s, false, t, d), "");
  const std::string why = impossible_reason(s, false, t, d, 0, l2_credit(true, 1));
  EXPECT_NE(
      why.find("C written once, less once the 52.43 MB L2 that may hold some of it (flushed before each "
               "launch: C's writes only)"),
      std::string::npos)
      << why;
  const std::string batched =
      impossible_reason(s, false, 0.999 * dram_floor_ms(d, s.m, s.n, s.k, 0, 1.25), d, 0, 1.25);
  EXPECT_NE(batched.find("less 1.25 times the 52.43 MB L2 that may hold some of it (launches back to back "
                         "share what it holds)"),
            std::string::npos)
      << batched;
  // A problem twice the L2 or less has a floor only where the credit is below two.
  const ProblemSpec mid = cube(2048);  // 50.3 MB: under one L2
  EXPECT_EQ(floor_bytes(d, mid.m, mid.n, mid.k, 1), 0);
  const ProblemSpec big = cube(2900);  // 100.9 MB: between one and two L2 sizes
  EXPECT_EQ(floor_bytes(d, big.m, big.n, big.k), 0);
  EXPECT_GT(floor_bytes(d, big.m, big.n, big.k, 1), 0);
}

TEST(Impossible, AProblemTheL2CanHoldHasNoDramFloor) {
  const DeviceInfo d = test::sample_h100();
  const ProblemSpec s = cube(1024);  // 12.6 MB: well under twice the 52 MB L2
  EXPECT_EQ(floor_bytes(d, s.m, s.n, s.k), 0);
  EXPECT_EQ(dram_floor_ms(d, s.m, s.n, s.k), 0);
  EXPECT_EQ(impossible_reason(s, false, ms_at(s, 60), d), "");
}

TEST(Impossible, UnknownRoofsNeverFlag) {
  DeviceInfo cpu;  // the CPU backend's: no peaks, no bandwidth
  cpu.backend = "cpu";
  cpu.name = "CPU (2 threads)";
  const ProblemSpec s = cube(1024);
  EXPECT_EQ(impossible_reason(s, false, 1e-9, cpu), "") << "a CPU point is never impossible";
  EXPECT_EQ(impossible_reason(s, true, 1e-9, cpu), "");
  // A GPU whose TF32 peak is unknown (before sm_80) holds TF32 kernels to nothing, FP32 ones to their roof.
  DeviceInfo old = test::sample_h100();
  old.peak_tf32_tflops = 0;
  old.datasheet_bandwidth_gbs = 0;
  EXPECT_EQ(impossible_reason(s, true, 1e-6, old), "");
  EXPECT_FALSE(impossible_reason(s, false, 1e-6, old).empty());
  // Not timed: nothing to judge.
  EXPECT_EQ(impossible_reason(s, false, 0, test::sample_h100()), "");
}

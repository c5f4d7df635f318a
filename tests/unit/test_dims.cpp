// Sizes a person can pick (capacity, largest size that fits, slider snapping, presets), the window's view
// settings and the message log.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/engine/dims.hpp"
#include "core/base/message_log.hpp"
#include "core/io/view_settings.hpp"

using namespace ts;

TEST(Dims, RunBytesCountsABTheReferenceCAndTheErrorMap) {
  EXPECT_EQ(run_bytes(10, 20, 30), 4.0 * (10 * 30 + 30 * 20 + 3 * 10 * 20));
  // 46341^2 overflows 32-bit counts: the arithmetic is in double.
  EXPECT_GT(run_bytes(46341, 46341, 8), 4.0 * 3 * 46341.0 * 46341.0);
}

TEST(Dims, TheLargestSizeThatFitsTheCpuLimitIs1024Square) {
  const Capacity cpu{double(int64_t(1) << 30), 0, "cpu"};
  EXPECT_EQ(max_dim(cpu, true, Dim::N, 1, 1, 1), 1024);
  // Not square: the other two fixed. 1024 x N x 512 <= 2^30 -> N <= 2048.
  EXPECT_EQ(max_dim(cpu, false, Dim::N, 1024, 7, 512), 2048);
  EXPECT_TRUE(fits(cpu, 1024, 1024, 1024));
  EXPECT_FALSE(fits(cpu, 1025, 1024, 1024));
  EXPECT_FALSE(fits(cpu, 0, 1, 1));
  // A memory limit: 80 GB at 20 bytes per element of N^2 (square) -> N = 63245.
  const Capacity gpu{0, 0.9 * 80e9, "gpu"};
  const int64_t n = max_dim(gpu, true, Dim::N, 1, 1, 1);
  EXPECT_TRUE(fits(gpu, n, n, n));
  EXPECT_FALSE(fits(gpu, n + 1, n + 1, n + 1));
  EXPECT_NEAR(double(n), std::sqrt(0.9 * 80e9 / 20.0), 1.0);
  // Nothing fits: 0.
  EXPECT_EQ(max_dim(Capacity{0.5, 0, ""}, true, Dim::N, 1, 1, 1), 0);
  // No limit: the largest dimension accepted anywhere.
  EXPECT_EQ(max_dim(Capacity{}, true, Dim::N, 1, 1, 1), kMaxDim);
}

// The GPU refuses only what exceeds its memory or CUDA's index range: K = 1000003 at M = N = 1 (4 MB) was
// refused as "above the limit of 131072", the .npy reader's limit.
TEST(GpuLimits, ALongKThatFitsInMemoryIsAcceptedAndOnlyMemoryOrTheGridRefuse) {
  ProblemSpec s;
  s.m = s.n = 1;
  s.k = parse_dim("1000003", "--k");
  EXPECT_NO_THROW(validate_shape(s));
  GpuRunNeeds need;
  need.matrices = run_bytes(s.m, s.n, s.k);
  EXPECT_NEAR(need.total(), 8.0e6, 1e3);  // A and B: 4 MB each
  EXPECT_NO_THROW(check_gpu_memory(s, need, 80e9, "H100"));
  EXPECT_NO_THROW(check_gpu_grid(s, {1, 1, 1}));
  // Memory: 90 % of what is free, named with the numbers.
  EXPECT_TRUE(gpu_memory_fits(need, need.total() / 0.9 + 16));
  EXPECT_FALSE(gpu_memory_fits(need, need.total() / 0.9 - 16));
  try {
    need.l2_flush = 100e6;
    check_gpu_memory(s, need, 50e6, "H100");
    ADD_FAILURE() << "108 MB fit into 90 % of 50 MB";
  } catch (const ValidationError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("M x N x K = 1 x 1 x 1000003 needs 103.0 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("and the L2 flush buffer"), std::string::npos) << m;
    EXPECT_NE(m.find("H100 has 47.7 MiB free"), std::string::npos) << m;
  }
  // The grid: 2^31 - 1 blocks across, 65535 down and deep.
  EXPECT_NO_THROW(check_gpu_grid(s, {kCudaMaxGrid[0], 65535, 65535}));
  try {
    s.m = 65536 * 16;
    s.kernel = "tiled";
    s.tile = 16;
    check_gpu_grid(s, {1, 65536, 1});
    ADD_FAILURE() << "a grid of 65536 rows of blocks was accepted";
  } catch (const ValidationError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("needs a grid of 1 x 65536 x 1 blocks for tiled tile 16"), std::string::npos) << m;
    EXPECT_NE(m.find("grid's y may be at most 65535"), std::string::npos) << m;
  }
  EXPECT_THROW(check_gpu_grid(s, {kCudaMaxGrid[0] + 1, 1, 1}), ValidationError);
  EXPECT_THROW(check_gpu_grid(s, {1, 1, 65536}), ValidationError);
  // The index range itself: cuBLAS's int dimensions.
  s.k = kMaxDim;
  EXPECT_NO_THROW(validate_shape(s));
  s.k = kMaxDim + 1;
  EXPECT_THROW(validate_shape(s), ValidationError);
}

TEST(Dims, SlidersSnapToPowersOfTwoAndMultiplesOfTheTile) {
  EXPECT_EQ(snap_dim(4000, 32, 16, 8192), 4096);  // within 3 % of a power of two
  EXPECT_EQ(snap_dim(3000, 32, 16, 8192), 3008);  // else the nearest multiple of the tile
  EXPECT_EQ(snap_dim(379, 16, 16, 1024), 384);
  EXPECT_EQ(snap_dim(262, 16, 16, 1024), 256);
  EXPECT_EQ(snap_dim(5, 16, 1, 1024), 4);        // below one tile: powers of two
  EXPECT_EQ(snap_dim(1e9, 16, 16, 1024), 1024);  // clamped to the range
  EXPECT_EQ(snap_dim(-3, 16, 16, 1024), 16);
  EXPECT_EQ(snap_dim(std::nan(""), 16, 16, 1024), 16);
  EXPECT_EQ(snap_dim(901, 0, 16, 8192), 904);  // no tile: multiples of 8
}

TEST(Dims, PresetsCoverTheSeedShapesAndTheRaggedOnes) {
  bool square4096 = false, symmetric = false, rect = false, floork = false, ragged = false;
  for (const Preset& p : presets()) {
    EXPECT_FALSE(p.name.empty());
    EXPECT_FALSE(p.why.empty());
    square4096 |= p.m == 4096 && p.n == 4096 && p.k == 4096 && p.input == InputKind::Random;
    symmetric |= p.m == 4096 && p.input == InputKind::Symmetric;
    rect |= p.m == 2048 && p.n == 4096 && p.k == 8192;
    floork |= p.kernel == "tiled_floork" && p.k % p.tile != 0;
    ragged |= p.m == 4099;
  }
  EXPECT_TRUE(square4096 && symmetric && rect && floork && ragged);
}

TEST(ViewSettings, RoundTripAndEveryBadValueKeepsItsDefaultWithAWarning) {
  ViewSettings v;
  v.window = {10, 20, 1300, 760, true};
  v.font_px = 18;
  v.theme = Theme::Light;
  v.panels["Occupancy"] = false;
  v.layout_version = 3;
  std::string w;
  const ViewSettings back = view_settings_from_json(to_json(v), &w);
  EXPECT_TRUE(w.empty()) << w;
  EXPECT_EQ(back.window.w, 1300);
  EXPECT_EQ(back.window.h, 760);
  EXPECT_TRUE(back.window.maximized);
  EXPECT_EQ(back.font_px, 18);
  EXPECT_EQ(back.theme, Theme::Light);
  EXPECT_FALSE(back.shown("Occupancy"));
  EXPECT_TRUE(back.shown("Timings"));
  EXPECT_EQ(back.layout_version, 3);

  w.clear();
  const auto bad = nlohmann::json::parse(
      R"({"window": {"w": 800, "x": "left"}, "font_px": 99, "theme": "purple", "panels": {"Result": 3},
          "layout_version": -1})");
  const ViewSettings d = view_settings_from_json(bad, &w);
  EXPECT_EQ(d.window.w, 0) << "a width without a height is dropped";
  EXPECT_EQ(d.font_px, 16);
  EXPECT_EQ(d.theme, Theme::Dark);
  EXPECT_TRUE(d.shown("Result"));
  EXPECT_EQ(d.layout_version, 0);
  for (const char* what :
       {"window.x", "font_px", "theme", "panels", "layout_version", "width without a height"})
    EXPECT_NE(w.find(what), std::string::npos) << what << " not named in: " << w;
  // A deeply nested value is named by its type, never printed.
  w.clear();
  nlohmann::json deep = 1;
  for (int i = 0; i < 50; ++i) deep = nlohmann::json::array({deep});
  view_settings_from_json(nlohmann::json{{"theme", deep}}, &w);
  EXPECT_LT(w.size(), 200u) << w;
}

TEST(MessageLog, KeepsTheLastMessagesAndFoldsRepeats) {
  MessageLog log(3);
  log.add(Severity::Info, "a", 1);
  log.add(Severity::Info, "a", 2);  // the same again: its time moves, no new entry
  EXPECT_EQ(log.messages().size(), 1u);
  EXPECT_EQ(log.latest()->time, 2);
  log.add(Severity::Warning, "b", 3);
  log.add(Severity::Error, "c", 4);
  log.add(Severity::Info, "d", 5);
  ASSERT_EQ(log.messages().size(), 3u);
  EXPECT_EQ(log.messages().front().text, "b");
  EXPECT_EQ(log.latest()->text, "d");
  EXPECT_GT(log.latest()->serial, log.messages().front().serial);
}

// `tilescope --log`: each new message also goes to the stream, with its time and severity; a repeat that
// only refreshes the last one is not written again.
TEST(MessageLog, EchoesEachNewMessageToTheStreamItIsGiven) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  ASSERT_NE(f, nullptr);
  MessageLog log;
  log.add(Severity::Info, "before", 0);
  log.echo_to(f);
  log.add(Severity::Warning, "careful", 1);
  log.add(Severity::Warning, "careful", 2);
  log.add(Severity::Error, "broken", 3);
  std::fclose(f);
  const std::string out(buf, len);
  std::free(buf);
  // "HH:MM:SS warning: careful\nHH:MM:SS error: broken\n"
  const size_t nl = out.find('\n');
  ASSERT_NE(nl, std::string::npos) << out;
  const std::string first = out.substr(0, nl), second = out.substr(nl + 1);
  EXPECT_EQ(first.substr(8), " warning: careful") << out;
  EXPECT_EQ(second.substr(8), " error: broken\n") << out;
  for (const std::string& line : {first, second})
    EXPECT_TRUE(line.size() > 8 && line[2] == ':' && line[5] == ':') << out;
}

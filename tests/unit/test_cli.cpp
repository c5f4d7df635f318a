// The command line end to end: exit codes 0 / 1 / 2 and messages that name the value and the limit.
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cpu_gemm.hpp"
#include "npy.hpp"
#include "registry.hpp"
#include "session.hpp"
#include "test_util.hpp"

using namespace ts;
using test::run_cmd;

namespace {
const std::string kBin = TILESCOPE_BIN;
test::CmdResult ts_run(const std::string& args) {
  return run_cmd(kBin + " " + args);
}
}  // namespace

TEST(Cli, ListPrintsEveryKernel) {
  auto r = ts_run("list");
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* k : {"naive", "tiled", "cublas"}) EXPECT_NE(r.output.find(k), std::string::npos) << k;
  auto j = ts_run("list --json");
  ASSERT_EQ(j.code, 0);
  auto parsed = nlohmann::json::parse(j.output);
  EXPECT_EQ(parsed["kernels"].size(), kernel_infos().size());
  EXPECT_GE(parsed["kernels"].size(), 13u);
}

TEST(Cli, RunOnTheCpuPrintsJsonWithEveryKey) {
  auto r = run_cmd(kBin + " run --backend cpu --m 33 --n 65 --k 17 --tile 8 --json 2>/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  for (const char* key : {"kernel", "tile", "m", "n", "k", "backend", "device", "median_ms", "tflops",
                          "max_abs_err", "max_rel_err", "passed"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["m"], 33);
  EXPECT_EQ(j["n"], 65);
  EXPECT_EQ(j["k"], 17);
  EXPECT_EQ(j["tile"], 8);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["passed"], true);
}

TEST(Cli, BadInputExitsWithTwoAndSaysWhy) {
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"run --backend cpu --size 0", "--size = 0 must be at least 1"},
      {"run --backend cpu --size -5", "negative"},
      {"run --backend cpu --size abc", "'abc' is not a whole number"},
      {"run --backend cpu --m 4 --n 4", "all three of --m, --n and --k"},
      {"run --backend cpu --size 8 --m 4 --n 4 --k 4", "either --size or --m/--n/--k"},
      {"run --backend cpu --tile 12", "tile 12 is not allowed for kernel 'tiled' (allowed: 8, 16, 32)"},
      {"run --backend cpu --tile x", "--tile = 'x' is not a whole number"},
      {"run --backend cpu --kernel fastest", "unknown kernel 'fastest'"},
      {"run --backend cpu --kernel cublas", "needs the CUDA backend"},
      {"run --backend cpu --input gaussian", "unknown input kind 'gaussian'"},
      {"run --backend cpu --input symmetric --m 4 --n 5 --k 4", "symmetric inputs need square matrices"},
      {"run --backend cpu --size 4096", "above the CPU backend's limit"},
      {"run --backend cpu --seed -1", "--seed"},
      {"run --backend quantum", "unknown backend 'quantum'"},
      {"run --no-such-option", "not expected"},
      {"snapshot --backend cpu", "--out is required"},
      {"bench --shapes 1024,,8", "empty entry"},
      {"bench --shapes 0", "must be at least 1"},
      {"bench --format xml", "--format 'xml' is not one of"},
      {"bench --kernels tiled,fastest", "unknown kernel 'fastest'"},
      {"bench --max-noise -1", "not a positive number"},
      {"bench --sizes 8192:256:256", "FROM (8192) is greater than TO (256)"},
      {"bench --sizes 256:8192:0", "STEP = 0 must be at least 1"},
      {"bench --sizes -256:8192:256", "FROM = -256 is negative"},
      {"bench --sizes 256:8192:-1", "STEP = -1 is negative"},
      {"bench --sizes lots", "size = 'lots' is not a whole number"},
      {"bench --sizes 1:4096:1", "more than the limit of 1024"},
      {"bench --backend cpu --kernels tiled,naive --sizes 1:1024:1", "more than the limit of 4096"},
      {"bench --sizes 256:1024:256 --shapes 1024", "either --shapes or --sizes"},
      {"bench --sizes 256:1024:256 --fix-m 0", "--fix-m = 0 must be at least 1"},
      {"bench --sizes 256:1024:256 --fix-m 64 --fix-k 64", "at most one of --fix-m and --fix-k"},
      {"bench --shapes 1024 --ragged 1", "go with --sizes"},
      {"bench --sizes 256 --ragged 5000", "--ragged = 5000 is above 1024"},
      {"bench --backend auto", "bench --backend is cuda or cpu"},
      {"bench --min-samples 20 --max-samples 5", "maximum samples = 5 is outside 20..1000000"},
      {"list --occupancy v100", "unknown GPU 'v100'"},
      {"bench --backend cpu --kernels tiled --sizes 2048", "above the CPU backend's limit"},
      {"snapshot --backend cpu --out x.png --width 10", "outside 320..8192"},
  };
  for (const auto& c : cases) {
    auto r = ts_run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(Cli, NpyInputsAndOutputRoundTrip) {
  test::TempDir dir;
  HostMatrix A = generate_input(InputKind::Random, 4, 0, 20, 13),
             B = generate_input(InputKind::Random, 4, 1, 13, 9);
  write_npy(dir.file("a.npy"), A);
  write_npy(dir.file("b.npy"), B);
  auto r = ts_run("run --backend cpu --a " + dir.file("a.npy") + " --b " + dir.file("b.npy") + " --out " +
                  dir.file("c.npy") + " --tile 8");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("20 x 9 x 13"), std::string::npos) << r.output;
  HostMatrix C = read_npy(dir.file("c.npy"));
  ASSERT_EQ(C.rows, 20);
  ASSERT_EQ(C.cols, 9);
  const auto want = cpu_gemm_reference_f64(A.data.data(), B.data.data(), 20, 9, 13);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(C.data[i], want[i], 1e-5);

  // Never overwrite without being asked; --force replaces.
  const auto before = std::filesystem::last_write_time(dir.file("c.npy"));
  auto again = ts_run("run --backend cpu --a " + dir.file("a.npy") + " --b " + dir.file("b.npy") + " --out " +
                      dir.file("c.npy"));
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.output.find("already exists"), std::string::npos);
  EXPECT_EQ(std::filesystem::last_write_time(dir.file("c.npy")), before);
  auto forced = ts_run("run --backend cpu --a " + dir.file("a.npy") + " --b " + dir.file("b.npy") +
                       " --out " + dir.file("c.npy") + " --force");
  EXPECT_EQ(forced.code, 0) << forced.output;
}

TEST(Cli, NpyProblemsExitWithTwo) {
  test::TempDir dir;
  write_npy(dir.file("a.npy"), HostMatrix(5, 7));
  write_npy(dir.file("b.npy"), HostMatrix(6, 3));
  auto mismatch = ts_run("run --backend cpu --a " + dir.file("a.npy") + " --b " + dir.file("b.npy"));
  EXPECT_EQ(mismatch.code, 2);
  EXPECT_NE(mismatch.output.find("A's columns (7) must equal B's rows (6)"), std::string::npos)
      << mismatch.output;
  std::filesystem::copy_file(dir.file("a.npy"), dir.file("t.npy"));
  std::filesystem::resize_file(dir.file("t.npy"), std::filesystem::file_size(dir.file("t.npy")) - 3);
  auto trunc = ts_run("run --backend cpu --a " + dir.file("t.npy") + " --b " + dir.file("b.npy"));
  EXPECT_EQ(trunc.code, 2);
  EXPECT_NE(trunc.output.find("truncated"), std::string::npos) << trunc.output;
  auto one = ts_run("run --backend cpu --a " + dir.file("a.npy"));
  EXPECT_EQ(one.code, 2);
  EXPECT_NE(one.output.find("both --a and --b"), std::string::npos);
  auto nofolder = ts_run("run --backend cpu --size 8 --out " + dir.file("missing/c.npy"));
  EXPECT_EQ(nofolder.code, 2);
  EXPECT_NE(nofolder.output.find("does not exist"), std::string::npos);
}

TEST(Cli, WithoutADisplayTheGuiPointsToTheHeadlessCommands) {
  auto r = run_cmd("env -u DISPLAY -u WAYLAND_DISPLAY " + kBin);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("no display"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tilescope run"), std::string::npos);
  // A snapshot asked to use an X server, without one: exit 2 and the way out.
  test::TempDir dir;
  auto s = run_cmd("env -u DISPLAY -u WAYLAND_DISPLAY " + kBin +
                   " snapshot --gl x11 --backend cpu --size 16 --out " + dir.file("never.png"));
  EXPECT_EQ(s.code, 2);
  EXPECT_NE(s.output.find("xvfb-run"), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("--gl egl"), std::string::npos) << s.output;
}

TEST(Cli, BenchWithoutAGpuSaysSoAndExitsWithOne) {
  std::string why;
  if (cuda_device_count(&why) > 0) GTEST_SKIP() << "a CUDA device is present";
  auto r = ts_run("bench --kernels tiled --shapes 64");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("needs"), std::string::npos) << r.output;
}

TEST(Cli, BenchSweepsOnTheCpuBackendThroughTheEngine) {
  test::TempDir dir;
  auto r = ts_run(
      "bench --backend cpu --kernels tiled --tiles 8,16 --sizes 16:48:16 --ragged 1 --min-time 0.001 "
      "--max-time 0.2 --format json --out " +
      dir.file("sweep.json") + " --session-out " + dir.file("session.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("[12/12]"), std::string::npos) << r.output;  // progress on stderr, one line a point
  std::ifstream f(dir.file("sweep.json"));
  const auto j = nlohmann::json::parse(f);
  ASSERT_EQ(j["points"].size(), 12u);  // 16, 17, 32, 33, 48, 49 x tiles 8, 16
  EXPECT_EQ(j["points"][0]["n"], 16);
  EXPECT_EQ(j["points"][2]["n"], 17);
  EXPECT_GE(j["points"][0]["samples"].get<int>(), 10);
  EXPECT_EQ(j["meta"]["backend"], "cpu");
  EXPECT_NE(j["meta"]["sweep"].get<std::string>().find("16..49"), std::string::npos);
  EXPECT_NE(j["meta"]["policy"].get<std::string>().find("bench"), std::string::npos);
  EXPECT_GT(j["meta"]["dram_gbs_measured"].get<double>(), 0.0);
  EXPECT_GT(j["meta"]["wall_seconds"].get<double>(), 0.0);
  const Session s = load_session(dir.file("session.json"));
  EXPECT_EQ(s.records.size(), 12u);
  EXPECT_EQ(s.device.backend, "cpu");
  // Never replaces an existing file without --force.
  auto again = ts_run("bench --backend cpu --kernels tiled --sizes 16 --out " + dir.file("sweep.json"));
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.output.find("already exists"), std::string::npos);
}

TEST(Cli, HelpAndVersionExitWithZero) {
  EXPECT_EQ(ts_run("--help").code, 0);
  auto v = ts_run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.output.find("tilescope"), std::string::npos);
}

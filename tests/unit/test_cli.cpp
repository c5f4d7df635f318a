// The command line end to end: exit codes 0 / 1 / 2 and messages that name the value and the limit.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/engine/cpu_gemm.hpp"
#include "core/io/npy.hpp"
#include "kernels/user/nvrtc_workshop.hpp"
#include "kernels/engine/registry.hpp"
#include "core/io/session.hpp"
#include "test_util.hpp"
#include "core/user_kernel/your_kernel.hpp"
#if defined(TILESCOPE_HAVE_CUDA)
#include "kernels/engine/cublas_api.hpp"
#endif

using namespace ts;
using test::run_cmd;

namespace {
const std::string kBin = TILESCOPE_BIN;
test::CmdResult ts_run(const std::string& args) {
  return run_cmd(kBin + " " + args);
}

// A build without the window (-DTILESCOPE_GUI=OFF) has the engine's commands only: there a case of the
// window's (no command, snapshot, figure, gl-check, bench heatmap) is checked for what it says instead, that
// this build has no window (exit 2).
#if defined(TILESCOPE_HAVE_GUI)
constexpr bool kHaveWindow = true;
#else
constexpr bool kHaveWindow = false;
#endif
bool asks_for_the_window(const std::string& args) {
  for (const char* name : {"snapshot", "figure", "gl-check", "bench heatmap"})
    if (args.rfind(std::string(name) + " ", 0) == 0 || args == name) return true;
  return args.empty() || args[0] == '-';
}
// True where the case was checked so (a window case in a build without the window).
bool checked_as_no_window(const std::string& args) {
  if (kHaveWindow || !asks_for_the_window(args)) return false;
  auto r = ts_run(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find("this build has no window: built with -DTILESCOPE_GUI=OFF"), std::string::npos)
      << args << "\n"
      << r.output;
  return true;
}
}  // namespace

TEST(Cli, ListPrintsEveryKernel) {
  auto r = ts_run("list");
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* k : {"naive", "tiled", "cublas"}) EXPECT_NE(r.output.find(k), std::string::npos) << k;
  // Each kernel's role said once: not "cuBLAS SGEMM (FP32, reference) (reference)", nor "Teaching: ...
  // (teaching: wrong on purpose)".
  EXPECT_NE(r.output.find("cublas        Reference: cuBLAS SGEMM (FP32) ["), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tiled_floork  Teaching, wrong on purpose: tiled with K / TILE steps ["),
            std::string::npos)
      << r.output;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    auto count = [&](const std::string& word) {
      size_t n = 0;
      for (size_t at = line.find(word); at != std::string::npos; at = line.find(word, at + 1)) ++n;
      return n;
    };
    EXPECT_LE(count("reference"), 1u) << line;
    EXPECT_LE(count("eaching"), 1u) << line;
  }
  auto j = ts_run("list --json");
  ASSERT_EQ(j.code, 0);
  auto parsed = nlohmann::json::parse(j.output);
  EXPECT_EQ(parsed["kernels"].size(), builtin_kernel_infos().size());
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

// --changing-inputs (run and bench): both timings and what C showed on the changing inputs, in the text, the
// JSON and the tables; with --sanitize (which does not time) it is refused.
TEST(Cli, ChangingInputsPrintBothTimingsInEveryOutput) {
  auto r = ts_run("run --backend cpu --size 48 --tile 16 --changing-inputs");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("changing   median "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("on 3 input sets switched between samples (fixed inputs: "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("           PASS: C matched the reference of input set"), std::string::npos)
      << r.output;
  auto j = run_cmd(kBin + " run --backend cpu --size 48 --tile 16 --changing-inputs --json 2>/dev/null");
  ASSERT_EQ(j.code, 0) << j.output;
  const auto parsed = nlohmann::json::parse(j.output);
  ASSERT_TRUE(parsed["changing_inputs"].is_object()) << j.output;
  EXPECT_EQ(parsed["changing_inputs"]["sets"], 3);
  EXPECT_EQ(parsed["changing_inputs"]["samples"], 3);
  EXPECT_EQ(parsed["changing_inputs"]["passed"], true);
  EXPECT_TRUE(parsed["impossible"].is_null());
  auto plain = run_cmd(kBin + " run --backend cpu --size 48 --tile 16 --json 2>/dev/null");
  ASSERT_EQ(plain.code, 0);
  EXPECT_TRUE(nlohmann::json::parse(plain.output)["changing_inputs"].is_null());
  auto b =
      run_cmd(kBin +
              " bench --backend cpu --kernels tiled --tiles 16 --shapes 48 --max-samples 5 --min-samples 3 "
              "--changing-inputs --format md 2>&1");
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_NE(b.output.find("| median ms | changing inputs ms | IQR ms |"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("changing inputs ms: the median of a second timing"), std::string::npos)
      << b.output;
  EXPECT_NE(b.output.find(", changing inputs"), std::string::npos) << b.output;  // the policy line
  auto bad = ts_run("run --backend cpu --size 48 --changing-inputs --sanitize");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--changing-inputs times the kernel and --sanitize does not"), std::string::npos)
      << bad.output;
}

// Text for people in the unit the window would use: a CPU's speed is not "0.010 TFLOP/s", and sampling
// without a noise target is not "converged".
TEST(Cli, RunAndBenchOnTheCpuSpeakInUnitsThatFitAndSayWhySamplingStopped) {
  auto r = ts_run("run --backend cpu --size 128");
  ASSERT_EQ(r.code, 0) << r.output;
  const size_t at = r.output.find("speed      ");
  ASSERT_NE(at, std::string::npos) << r.output;
  std::istringstream speed(r.output.substr(at + 11));
  double value = 0;
  std::string unit;
  speed >> value >> unit;
  EXPECT_TRUE(unit == "GFLOP/s" || unit == "MFLOP/s") << r.output;
  EXPECT_GE(value, 1.0) << r.output;
  EXPECT_NE(r.output.find("sampling   3 samples, as many as the policy takes (it has no noise target)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("converged"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" % of the median"), std::string::npos) << r.output;
  // The bench's progress line (standard error) likewise; its JSON keeps TFLOP/s.
  auto b = run_cmd(
      kBin +
      " bench --backend cpu --kernels tiled --shapes 64 --max-samples 12 --min-time 0.001 --format json");
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_EQ(b.output.find("TFLOP/s"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("FLOP/s"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("\"tflops\""), std::string::npos) << b.output;
}

// On the CPU, bench and figure measure with the CPU's bench policy (a noise target a shared CPU reaches, a
// time budget of half a second per point) unless told otherwise; what is given goes over it.
TEST(Cli, OnTheCpuBenchTakesTheCpusBenchPolicyAndWhatIsGivenGoesOverIt) {
  auto b = run_cmd(kBin + " bench --backend cpu --kernels tiled --tiles 16 --shapes 32 --format json");
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_NE(b.output.find(">= 10 samples and 0.05 s, noise < 2 %, limit 0.5 s"), std::string::npos)
      << b.output;
  auto given =
      run_cmd(kBin +
              " bench --backend cpu --kernels tiled --tiles 16 --shapes 32 --min-samples 7 --max-samples 9 "
              "--max-noise 5 --format json");
  ASSERT_EQ(given.code, 0) << given.output;
  EXPECT_NE(given.output.find(">= 7 samples and 0.05 s, noise < 5 %, limit 0.5 s"), std::string::npos)
      << given.output;
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
      {"bench --backend cpu --kernels tiled --sizes 2049", "above the CPU backend's limit"},
      {"snapshot --backend cpu --out x.png --width 10", "outside 320..8192"},
      // Empty values are refused, not taken for "not given".
      {"run --backend cpu --size ''", "--size is empty"},
      {"run --backend cpu --tile ''", "--tile is empty"},
      {"run --backend cpu --m 4 --n 4 --k ' '", "--k is empty"},
      {"run --backend cpu --kernel ''", "--kernel is empty"},
      {"--backend ''", "--backend is empty"},
      {"snapshot --backend cpu --out x.png --zoom ''", "--zoom is empty"},
      {"snapshot --backend cpu --out '' --size 8", "--out is empty"},
      {"bench --out ''", "--out is empty"},
      // Lists with an extra or a missing value.
      {"snapshot --backend cpu --size 8 --out x.png --zoom 0,0,1,1,1", "four whole numbers, not 5 values"},
      {"snapshot --backend cpu --size 8 --out x.png --zoom 0,0,1,", "'' is not a whole number"},
      {"bench --shapes 4096x", "'4096x' is neither N nor MxNxK"},
      {"bench --shapes 4096x4096x", "shape K is empty"},
      {"bench --shapes 64,", "has an empty entry"},
      {"bench --shapes ,64", "has an empty entry"},
      {"bench --kernels tiled,", "--kernels 'tiled,' has an empty entry"},
      {"bench --kernels ,tiled", "has an empty entry"},
      {"bench --tiles 8,", "--tiles '8,' has an empty entry"},
      {"bench --tiles 8,,16", "has an empty entry"},
  };
  for (const auto& c : cases) {
    if (checked_as_no_window(c.args)) continue;
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
  if (checked_as_no_window("")) return;  // a build without the window: no display is asked for
  auto r = run_cmd("env -u DISPLAY -u WAYLAND_DISPLAY " + kBin);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("no display"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tilescope run"), std::string::npos);
  // A snapshot asked to use an X server, without one: exit 2 and the way out.
  test::TempDir dir;
  auto s = run_cmd("env -u DISPLAY -u WAYLAND_DISPLAY " + kBin +
                   " snapshot --gl x11 --backend cpu --size 16 --out " + dir.file("never.png"));
  EXPECT_EQ(s.code, 2);
  EXPECT_NE(s.output.find("xvfb-run -a tilescope snapshot ..."), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("--gl egl"), std::string::npos) << s.output;
  // A subcommand's hint names it as it is typed.
  auto h = run_cmd("env -u DISPLAY -u WAYLAND_DISPLAY " + kBin +
                   " bench heatmap --gl x11 --backend cpu --size 16 --frame-seconds 0 --repeats 1");
  EXPECT_EQ(h.code, 2) << h.output;
  EXPECT_NE(h.output.find("bench heatmap draws offscreen"), std::string::npos) << h.output;
  EXPECT_NE(h.output.find("xvfb-run -a tilescope bench heatmap ..."), std::string::npos) << h.output;
}

TEST(Cli, OneCommandAtATime) {
  auto r = ts_run("list run");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("run"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("yours:"), std::string::npos) << "nothing was listed: " << r.output;
  auto b = ts_run("bench heatmap run");
  EXPECT_EQ(b.code, 2) << b.output;
}

// The window's commands are in a build with the window; a build without it (-DTILESCOPE_GUI=OFF) knows their
// names and says why they are missing (exit 2), and its --help lists the engine's commands and says so too.
TEST(Cli, WithoutTheWindowItsCommandsSaySoAndExitWithTwo) {
  const auto help = ts_run("--help");
  EXPECT_EQ(help.code, 0) << help.output;
  for (const char* engine : {"list", "run", "bench", "merge", "serve"})
    EXPECT_NE(help.output.find(engine), std::string::npos) << engine;
  for (const std::string window : {"snapshot", "figure", "gl-check", "bench heatmap"}) {
    const auto r = ts_run(window + " --help");
    EXPECT_EQ(r.code, 0) << window << "\n" << r.output;
    EXPECT_EQ(r.output.find("has no window") == std::string::npos, kHaveWindow) << window << "\n" << r.output;
    checked_as_no_window(window + " --backend cpu --size 16");
  }
  checked_as_no_window("");
  checked_as_no_window("--backend cpu");
  EXPECT_EQ(help.output.find("This build has no window") == std::string::npos, kHaveWindow) << help.output;
  // A word that is no command is not taken for the window.
  const auto typo = ts_run("lsit");
  EXPECT_EQ(typo.code, 2) << typo.output;
  EXPECT_EQ(typo.output.find("has no window"), std::string::npos) << typo.output;
}

TEST(Cli, BenchWithoutAGpuSaysSoAndExitsWithOne) {
  std::string why;
  if (cuda_device_count(&why) > 0) GTEST_SKIP() << "a CUDA device is present";
  auto r = ts_run("bench --kernels tiled --shapes 64");
  EXPECT_EQ(r.code, 1) << r.output;
  if (cuda_compiled())  // the runtime's "CUDA driver version is insufficient" means: no driver, no GPU
    EXPECT_NE(r.output.find("tilescope bench needs a CUDA device (or --backend cpu): no NVIDIA GPU found"),
              std::string::npos)
        << r.output;
  else
    EXPECT_NE(r.output.find("this build has no CUDA backend"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("insufficient"), std::string::npos) << r.output;
}

// [SECTION] Files a person names: what is read, what is written, and what is never touched.
namespace {
std::string content(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A .npy whose header promises rows x cols float32 values, made sparse: the size of the real thing, no data.
void sparse_npy(const std::string& path, int64_t rows, int64_t cols) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                  std::to_string(cols) + "), }";
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  {
    std::ofstream f(path, std::ios::binary);
    f << "\x93NUMPY" << char(1) << char(0) << char(h.size() & 0xff) << char(h.size() >> 8) << h;
  }
  std::filesystem::resize_file(path, 10 + h.size() + uint64_t(rows) * uint64_t(cols) * 4);
}
}  // namespace

TEST(Cli, FilesAreCheckedFromTheirHeadersBeforeAnyDataIsRead) {
  test::TempDir dir;
  // Two 1 GiB files over the CPU backend's limit: refused from the headers. The command runs with 1.3 GB of
  // address space, so reading the data first would end in std::bad_alloc (exit 1), not in exit 2 (except
  // under AddressSanitizer, which needs far more address space for itself).
  sparse_npy(dir.file("a.npy"), 16384, 16384);
  sparse_npy(dir.file("b.npy"), 16384, 16384);
#if defined(__SANITIZE_ADDRESS__)
  const std::string limit;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  const std::string limit;
#else
  const std::string limit = "ulimit -v 1300000; ";
#endif
#else
  const std::string limit = "ulimit -v 1300000; ";
#endif
  auto r = run_cmd("bash -c '" + limit + kBin + " run --backend cpu --a " + dir.file("a.npy") + " --b " +
                   dir.file("b.npy") + "'");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("16384 x 16384 x 16384"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("above the CPU backend's limit"), std::string::npos) << r.output;
  // 131072 x 131072 (64 GiB, sparse): never a std::bad_alloc, always exit 2 with the numbers.
  sparse_npy(dir.file("huge.npy"), 131072, 131072);
  r = ts_run("run --backend cpu --a " + dir.file("huge.npy") + " --b " + dir.file("huge.npy"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("131072"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
}

TEST(Cli, NonFiniteInputsAreRefusedNamingTheFirstOne) {
  test::TempDir dir;
  HostMatrix a = generate_input(InputKind::Random, 1, 0, 6, 5),
             b = generate_input(InputKind::Random, 1, 1, 5, 4);
  write_npy(dir.file("b.npy"), b);
  a.at(2, 3) = std::nanf("");
  a.at(4, 0) = INFINITY;
  write_npy(dir.file("nan.npy"), a);
  auto r = ts_run("run --backend cpu --kernel tiled_floork --a " + dir.file("nan.npy") + " --b " +
                  dir.file("b.npy"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("nan.npy holds NaN at row 2, column 3"), std::string::npos) << r.output;
  a.at(2, 3) = 0;
  write_npy(dir.file("inf.npy"), a);
  r = ts_run("run --backend cpu --a " + dir.file("b.npy") + " --b " + dir.file("inf.npy") +
             " --m 5 --n 5 --k 4");
  EXPECT_EQ(r.code, 2) << r.output;
  r = ts_run("run --backend cpu --a " + dir.file("inf.npy") + " --b " + dir.file("b.npy"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("inf.npy holds +Inf at row 4, column 0"), std::string::npos) << r.output;
}

TEST(Cli, AFifoOrAFolderAsAnInputIsRefusedAtOnce) {
  test::TempDir dir;
  write_npy(dir.file("b.npy"), HostMatrix(4, 4));
  ASSERT_EQ(mkfifo(dir.file("fifo.npy").c_str(), 0600), 0);
  auto r = run_cmd("timeout 20 " + kBin + " run --backend cpu --a " + dir.file("fifo.npy") + " --b " +
                   dir.file("b.npy"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is a FIFO (named pipe); only regular files are read"), std::string::npos)
      << r.output;
  r = ts_run("run --backend cpu --a " + dir.path().string() + " --b " + dir.file("b.npy"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is a folder"), std::string::npos) << r.output;
}

TEST(Cli, EveryMalformedFileOfTheCorpusExitsWithTwoAndNeverCrashes) {
  std::ifstream manifest(std::string(TILESCOPE_NPY_CORPUS) + "/manifest.tsv");
  std::string line;
  int files = 0;
  test::TempDir dir;
  write_npy(dir.file("ok.npy"), HostMatrix(3, 3));
  while (std::getline(manifest, line)) {
    if (line.find("\trefuse\t") == std::string::npos || line.rfind("v1-", 0) != 0) continue;  // one version
    const std::string file = std::string(TILESCOPE_NPY_CORPUS) + "/" + line.substr(0, line.find('\t'));
    auto r = ts_run("run --backend cpu --a '" + file + "' --b " + dir.file("ok.npy"));
    EXPECT_EQ(r.code, 2) << file << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("tilescope: " + file, 0), 0u) << r.output;
    ++files;
  }
  EXPECT_GT(files, 100);
}

TEST(Cli, OutputsThatCannotBeWrittenAreFoundBeforeTheRun) {
  test::TempDir dir;
  const std::string ro = ::geteuid() == 0 ? "/proc" : dir.file("ro");
  if (::geteuid() != 0) {
    std::filesystem::create_directories(ro);
    std::filesystem::permissions(ro, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  }
  // Exit code 2 comes only from the checks before the run (a write that fails after it exits with 1).
  for (const std::string& args :
       {"run --backend cpu --size 1024 --out " + ro + "/c.npy",
        "run --backend cpu --size 1024 --profile --trace-csv " + ro + "/t.csv",
        "run --backend cpu --size 1024 --profile --trace-json " + ro + "/t.json",
        "snapshot --backend cpu --size 1024 --out " + ro + "/s.png",
        "snapshot --backend cpu --size 1024 --out " + dir.file("s.png") + " --layout-json " + ro + "/l.json",
        "snapshot --backend cpu --size 1024 --out " + dir.file("s.png") + " --export-panels " + ro +
            "/exports",
        "bench --shapes 64 --out " + ro + "/b.md",
        "bench heatmap --backend cpu --size 1024 --out " + ro + "/h.md"}) {
    if (checked_as_no_window(args)) continue;
    auto r = ts_run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(ro), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("kernel "), std::string::npos) << "the run happened first:\n" << r.output;
  }
  if (::geteuid() != 0) std::filesystem::permissions(ro, std::filesystem::perms::owner_all);
  EXPECT_FALSE(std::filesystem::exists(dir.file("s.png")));
}

// --trace-json (the traced launch for Perfetto) is checked as --trace-csv is, before the run: it needs
// --profile, never replaces a file without --force, and its folder must exist; both naming one file is
// refused. Without a GPU (here, and through a CPU engine) --profile has no trace: the run says so, and
// neither file is written.
TEST(Cli, TraceJsonIsCheckedLikeTraceCsvBeforeTheRun) {
  test::TempDir dir;
  { std::ofstream(dir.file("old.json")) << "precious"; }
  { std::ofstream(dir.file("old.csv")) << "precious"; }
  const std::string base = "run --backend cpu --size 48 --kernel tiled --tile 8 ";
  struct Case {
    std::string args, says;
  };
  for (const Case& c : std::vector<Case>{
           {base + "--trace-json " + dir.file("t.json"), "--trace-json needs --profile"},
           {base + "--trace-csv " + dir.file("t.csv"), "--trace-csv needs --profile"},
           {base + "--profile --trace-json " + dir.file("old.json"), dir.file("old.json")},
           {base + "--profile --trace-csv " + dir.file("old.csv"), dir.file("old.csv")},
           {base + "--profile --trace-json " + dir.file("no/such/folder/t.json"), dir.file("no/such/folder")},
           {base + "--profile --trace-json " + dir.path().string(), dir.path().string()},
           {base + "--profile --trace-csv " + dir.file("t") + " --trace-json " + dir.file("./t"),
            "--trace-csv and --trace-json name the same file"}}) {
    auto r = ts_run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.find("kernel "), std::string::npos) << "the run happened first:\n" << r.output;
  }
  auto existing = ts_run(base + "--profile --trace-json " + dir.file("old.json"));
  EXPECT_NE(existing.output.find("--force"), std::string::npos) << existing.output;
  EXPECT_EQ(content(dir.file("old.json")), "precious");
  // No GPU: no trace, so no file, as with --trace-csv; the run itself succeeds.
  const std::string serve = "exec " + kBin + " serve --backend cpu --quiet";
  for (const std::string& where : {std::string("--backend cpu"), "--engine '" + serve + "'"}) {
    auto r = ts_run("run " + where + " --size 48 --kernel tiled --tile 8 --profile --trace-json " +
                    dir.file("new.json") + " --trace-csv " + dir.file("new.csv"));
    EXPECT_EQ(r.code, 0) << where << "\n" << r.output;
    EXPECT_NE(r.output.find("--profile needs the CUDA backend"), std::string::npos) << where << "\n"
                                                                                    << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("new.json"))) << where;
    EXPECT_FALSE(std::filesystem::exists(dir.file("new.csv"))) << where;
  }
  auto forced = ts_run(base + "--profile --force --trace-json " + dir.file("old.json"));
  EXPECT_EQ(forced.code, 0) << forced.output;
}

TEST(Cli, ForceReplacesRegularFilesOnlyAndNothingElseIsEverTouched) {
  test::TempDir dir;
  { std::ofstream(dir.file("target.npy")) << "precious"; }
  std::filesystem::create_symlink(dir.file("target.npy"), dir.file("link.npy"));
  ASSERT_EQ(mkfifo(dir.file("fifo.npy").c_str(), 0600), 0);
  { std::ofstream(dir.file("c.npy.part")) << "mine"; }  // the old writers' temporary name
  for (const char* name : {"link.npy", "fifo.npy"}) {
    auto r = run_cmd("timeout 20 " + kBin + " run --backend cpu --size 8 --force --out " + dir.file(name));
    EXPECT_EQ(r.code, 2) << name << "\n" << r.output;
    EXPECT_NE(r.output.find("--force replaces regular files only"), std::string::npos) << r.output;
  }
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.npy")));
  EXPECT_TRUE(std::filesystem::is_fifo(dir.file("fifo.npy")));
  EXPECT_EQ(content(dir.file("target.npy")), "precious");
  auto r = ts_run("run --backend cpu --size 8 --out " + dir.file("c.npy"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(content(dir.file("c.npy.part")), "mine");
  EXPECT_EQ(names_in(dir.path().string()),
            (std::vector<std::string>{"c.npy", "c.npy.part", "fifo.npy", "link.npy", "target.npy"}));
}

TEST(Cli, AFailedWriteExitsWithOneAndLeavesTheOldFileAndNoTemporary) {
  test::TempDir dir;
  { std::ofstream(dir.file("c.npy")) << "old contents"; }
  // A file size limit makes the write fail as a full disk does (EFBIG instead of ENOSPC).
  auto r = run_cmd("bash -c \"trap '' XFSZ; ulimit -f 16; exec " + kBin +
                   " run --backend cpu --size 200 --force --out " + dir.file("c.npy") + "\"");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("write failed"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("wrote"), std::string::npos) << r.output;
  EXPECT_EQ(content(dir.file("c.npy")), "old contents");
  EXPECT_EQ(names_in(dir.path().string()), std::vector<std::string>{"c.npy"});
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
  // No cuBLAS on the CPU: no reference, and the point says why instead of showing 0.
  EXPECT_EQ(j["meta"]["interleave_reference"], true);
  EXPECT_TRUE(j["points"][0]["reference"].is_null());
  EXPECT_TRUE(j["points"][0]["pct_cublas"].is_null());
  EXPECT_NE(j["points"][0]["reference_note"].get<std::string>().find("CPU backend: no cuBLAS"),
            std::string::npos);
  const Session s = load_session(dir.file("session.json"));
  EXPECT_EQ(s.records.size(), 12u);
  EXPECT_EQ(s.device.backend, "cpu");
  EXPECT_FALSE(s.records[0].cublas_interleaved());
  EXPECT_NE(s.records[0].interleaved_note.find("CPU backend: no cuBLAS"), std::string::npos);
  auto md =
      ts_run("bench --backend cpu --kernels tiled --tiles 16 --shapes 16 --min-time 0.001 --max-time 0.2");
  ASSERT_EQ(md.code, 0) << md.output;
  EXPECT_NE(md.output.find("cuBLAS not timed beside tiled 16 (CPU backend: no cuBLAS"), std::string::npos)
      << md.output;
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

// --suggest-tile times every tile of the kernel at the shape and names the fastest from those points.
TEST(Cli, SuggestTileTimesEveryTileAndNamesTheFastestFromThem) {
  auto r = run_cmd(kBin +
                   " run --backend cpu --size 64 --kernel tiled --tile 16 --samples 3 --suggest-tile "
                   "--json 2>/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_TRUE(j.contains("tile_suggestion")) << r.output;
  const auto& t = j["tile_suggestion"];
  ASSERT_EQ(t["measured"].size(), 3u) << "tiles 8, 16 and 32";
  double best = 1e300;
  int best_tile = 0;
  for (const auto& m : t["measured"]) {
    EXPECT_GT(m["median_ms"].get<double>(), 0.0);
    if (m["median_ms"].get<double>() < best)
      best = m["median_ms"].get<double>(), best_tile = m["tile"].get<int>();
  }
  EXPECT_EQ(t["fastest"].get<int>(), best_tile);
  EXPECT_EQ(t["measured"][0]["tile"].get<int>(), best_tile) << "fastest first";
  EXPECT_NE(t["summary"].get<std::string>().find("fastest tile here: " + std::to_string(best_tile)),
            std::string::npos);
  // Text: a row per tile, the chosen one marked, and the summary line.
  auto txt =
      run_cmd(kBin + " run --backend cpu --size 48 --kernel tiled --tile 8 --samples 3 --suggest-tile 2>&1");
  ASSERT_EQ(txt.code, 0) << txt.output;
  EXPECT_NE(txt.output.find("(chosen)"), std::string::npos) << txt.output;
  EXPECT_NE(txt.output.find("fastest tile here: "), std::string::npos) << txt.output;
  // A teaching kernel at K = 40: tile 8 divides K, 16 and 32 fail verification and are named, never picked.
  auto floork = run_cmd(kBin +
                        " run --backend cpu --size 40 --kernel tiled_floork --tile 16 --samples 3 "
                        "--suggest-tile --json 2>/dev/null");
  EXPECT_EQ(floork.code, 1) << "the chosen tile fails: " << floork.output;
  const auto fj = nlohmann::json::parse(floork.output);
  EXPECT_EQ(fj["tile_suggestion"]["fastest"].get<int>(), 8) << floork.output;
  EXPECT_EQ(fj["tile_suggestion"]["failed_verification"], nlohmann::json({16, 32})) << floork.output;
  // A kernel with a single tile has nothing to choose: exit 2, saying so.
  auto one = run_cmd(kBin + " run --backend cpu --size 64 --kernel blocktile1d --suggest-tile 2>&1");
  EXPECT_EQ(one.code, 2) << one.output;
  EXPECT_NE(one.output.find("nothing to choose"), std::string::npos) << one.output;
}

// --suggest-kernel ranks the ladder's kernels of the chosen precision at the shape from measurements: every
// configuration measured, fastest first, with the margins; given a --session, only what it lacks is measured.
TEST(Cli, SuggestKernelRanksTheLadderAndMeasuresOnlyWhatTheSessionLacks) {
  test::TempDir dir;
  const std::string session = dir.file("rungs.json");
  const std::string base = "run --backend cpu --size 48 --samples 3 --suggest-kernel --json";
  auto r = ts_run(base + " --session-out " + session + " 2>/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  const auto& g = j["rung_ranking"];
  EXPECT_EQ(g["precision"], "fp32");
  EXPECT_EQ(g["cublas"], "cublas");
  EXPECT_EQ(g["m"], 48);
  const int configs = g["configurations"].get<int>();
  ASSERT_GE(configs, 2) << "the CPU's ladder: naive, coalesced and tiled with their tiles";
  EXPECT_EQ(j["measured_now"].get<int>(), configs);
  ASSERT_EQ(int(g["measured"].size()), configs) << r.output;
  EXPECT_TRUE(g["complete"].get<bool>());
  EXPECT_TRUE(g["missing"].empty());
  double previous = 0;
  std::set<std::string> kernels;
  for (const auto& row : g["measured"]) {
    EXPECT_GE(row["median_ms"].get<double>(), previous) << "fastest first";
    previous = row["median_ms"].get<double>();
    EXPECT_GT(row["tflops"].get<double>(), 0.0);
    EXPECT_EQ(row["stop"], "samples taken");
    EXPECT_TRUE(row["percent_of_cublas"].is_null()) << "no cuBLAS on the CPU, none guessed";
    EXPECT_EQ(row["cublas_note"], "none timed with it (fixed policy)");
    EXPECT_TRUE(row["measured_now"].get<bool>());
    kernels.insert(row["kernel"].get<std::string>());
  }
  EXPECT_EQ(kernels.count("tiled_floork") + kernels.count("cublas"), 0u)
      << "teaching kernels and cuBLAS are no rung";
  const auto& best = g["measured"][0];
  EXPECT_EQ(g["fastest"]["kernel"], best["kernel"]);
  EXPECT_EQ(g["fastest"]["tile"], best["tile"]);
  const std::string label = best["kernel"].get<std::string>() + " " + std::to_string(best["tile"].get<int>());
  EXPECT_EQ(g["line"].get<std::string>().rfind("fastest here: " + label + ", ", 0), 0u) << g["line"];
  ASSERT_TRUE(g["next_kernel"].is_object());
  EXPECT_GE(g["next_kernel"]["percent_ahead"].get<double>(), 0.0);
  EXPECT_EQ(g["next_kernel"]["against"].get<std::string>().rfind(best["kernel"].get<std::string>() + " ", 0),
            std::string::npos)
      << "the next kernel is another kernel";
  EXPECT_TRUE(g["to_cublas"].is_null());

  // The session holds every configuration: nothing is measured again, and the ranking is the same.
  auto again = ts_run(base + " --session " + session + " 2>/dev/null");
  ASSERT_EQ(again.code, 0) << again.output;
  const auto ja = nlohmann::json::parse(again.output);
  EXPECT_EQ(ja["measured_now"], 0);
  ASSERT_EQ(ja["rung_ranking"]["measured"].size(), g["measured"].size());
  for (size_t i = 0; i < g["measured"].size(); ++i)
    EXPECT_EQ(ja["rung_ranking"]["measured"][i]["median_ms"], g["measured"][i]["median_ms"]) << i;
  EXPECT_EQ(ja["rung_ranking"]["fastest"], g["fastest"]);
  EXPECT_FALSE(ja["rung_ranking"]["measured"][0]["measured_now"].get<bool>());
  // A session without the tiled kernel's points: only tiled's tiles are measured.
  Session partial = load_session(session);
  const size_t all = partial.records.size();
  partial.records.erase(std::remove_if(partial.records.begin(), partial.records.end(),
                                       [](const MeasurementRecord& p) { return p.spec.kernel == "tiled"; }),
                        partial.records.end());
  const size_t tiled = all - partial.records.size();
  ASSERT_GE(tiled, 1u);
  save_session(dir.file("partial.json"), partial, false);
  auto part = ts_run(base + " --session " + dir.file("partial.json") + " 2>/dev/null");
  ASSERT_EQ(part.code, 0) << part.output;
  EXPECT_EQ(nlohmann::json::parse(part.output)["measured_now"].get<size_t>(), tiled);
  // Text: the ranking, where each point comes from, and the line.
  auto text = ts_run("run --backend cpu --size 48 --suggest-kernel --session " + session + " 2>&1");
  ASSERT_EQ(text.code, 0) << text.output;
  for (const char* want : {"FP32 rungs at 48 x 48 x 48 on CPU", "% cuBLAS", "(from the session)",
                           "fastest here: ", "the fastest other kernel", "no cublas to compare"})
    EXPECT_NE(text.output.find(want), std::string::npos) << want << "\n" << text.output;
}

// Bad input to --suggest-kernel is exit 2 with the reason, before anything is measured.
TEST(Cli, SuggestKernelRefusesBadInputWithExit2) {
  test::TempDir dir;
  Session other =
      Session::for_device(DeviceInfo{"cuda", "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3 (sm_90)"});
  save_session(dir.file("h100.json"), other, false);
  { std::ofstream(dir.file("taken.json")) << "{}"; }
  { std::ofstream(dir.file("broken.json")) << "{not json"; }
  const std::string cmd = "run --backend cpu --size 32 --samples 3 --suggest-kernel ";
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases = {
      {cmd + "--session " + dir.file("nowhere.json"), "nowhere.json"},
      {cmd + "--session " + dir.file("broken.json"), "broken.json"},
      {cmd + "--session " + dir.file("h100.json"), "holds points measured on NVIDIA H100 80GB HBM3"},
      {cmd + "--session-out " + dir.file("taken.json"), "taken.json"},
      {"run --backend cpu --size 4096 --suggest-kernel", "above the CPU backend's limit"},
      {cmd + "--kernel wgmma_tf32", "wgmma_tf32"},
      {cmd + "--suggest-tile", "choose one"},
      {cmd + "--out " + dir.file("c.npy"), "--out and --profile go with one run"},
      {"run --backend cpu --size 32 --session " + dir.file("h100.json"), "go with --suggest-kernel"},
      {"run --backend cpu --size 32 --session-out " + dir.file("s.json"), "go with --suggest-kernel"},
  };
  for (const Case& c : cases) {
    auto r = ts_run(c.args + " 2>&1");
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("s.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("c.npy")));
}

// [SECTION] issue 26: outputs checked before any work, text that is not UTF-8, SIGTERM in bench, small
// messages.

// Every output of every command is checked before anything is measured: a path under a file (afile/sub), an
// empty one, a dangling or looping symbolic link, a folder that cannot be written; exit 2 with the path and
// the reason, and nothing measured, made or written.
TEST(Cli, EveryOutputIsCheckedBeforeAnythingIsMeasured) {
  test::TempDir dir;
  { std::ofstream(dir.file("afile")) << "mine"; }
  std::filesystem::create_symlink(dir.file("nowhere.json"), dir.file("dangling.json"));
  std::filesystem::create_symlink(dir.file("loop.json"), dir.file("loop.json"));
  std::filesystem::create_symlink(dir.file("no-folder"), dir.file("dangling-dir"));
  std::filesystem::create_symlink(dir.file("loop-dir"), dir.file("loop-dir"));
  const std::vector<std::string> before = names_in(dir.path().string());
  const std::string ro = ::geteuid() == 0 ? "/proc" : dir.file("ro");
  if (::geteuid() != 0) {
    std::filesystem::create_directories(ro);
    std::filesystem::permissions(ro, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  }
  const std::string afile = dir.file("afile"), out = " --out-dir " + dir.file("figures");
  const std::string fig = "figure --plot timings --backend cpu --sizes 16:32:16 --kernels tiled --quick";
  const std::string bench = "bench --backend cpu --kernels tiled --tiles 8 --shapes 16 --min-time 0.001";
  const std::string snap = "snapshot --backend cpu --size 16 --out " + dir.file("s.png");
  struct Case {
    std::string args, path, reason;
  };
  for (const Case& c : std::vector<Case>{
           {fig + " --out-dir " + afile + "/sub", afile, "is not a folder (a regular file)"},
           {fig + " --out-dir ''", "--out-dir", "is empty"},
           {fig + " --out-dir " + dir.file("dangling-dir"), dir.file("no-folder"), "which does not exist"},
           {fig + " --out-dir " + dir.file("loop-dir") + "/sub", dir.file("loop-dir"), "symbolic links"},
           {fig + " --out-dir " + ro + "/figures", ro, "cannot create"},
           {fig + out + " --session-out " + dir.file("dangling.json"), dir.file("nowhere.json"),
            "which does not exist"},
           {fig + out + " --session-out " + dir.file("loop.json"), dir.file("loop.json"),
            "a loop of symbolic links"},
           {fig + out + " --session-out " + afile + "/s.json", afile, "is not a folder"},
           {bench + " --out " + dir.file("dangling.json"), dir.file("nowhere.json"), "which does not exist"},
           {bench + " --session-out " + dir.file("loop.json"), dir.file("loop.json"),
            "a loop of symbolic links"},
           {bench + " --out " + afile + "/b.md", afile, "is not a folder"},
           {bench + " --out " + ro + "/b.md", ro, "cannot create"},
           {"run --backend cpu --size 16 --out " + afile + "/c.npy", afile, "is not a folder"},
           {"run --backend cpu --size 16 --out " + dir.file("loop.json"), dir.file("loop.json"), "loop"},
           {snap + " --export-panels " + afile + "/sub", afile, "is not a folder (a regular file)"},
           {snap + " --export-panels " + dir.file("dangling-dir"), dir.file("no-folder"), "does not exist"},
           {snap + " --layout-json " + dir.file("dangling.json"), dir.file("nowhere.json"), "does not exist"},
           {"bench heatmap --backend cpu --size 16 --out " + dir.file("loop.json"), dir.file("loop.json"),
            "loop"},
       }) {
    if (checked_as_no_window(c.args)) continue;
    auto r = ts_run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.path), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.reason), std::string::npos) << c.args << "\n" << r.output;
    for (const char* work : {"[1/", "points measured", "kernel ", "json.exception", "filesystem error"})
      EXPECT_EQ(r.output.find(work), std::string::npos) << "work done before the refusal: " << c.args << "\n"
                                                        << r.output;
  }
  // figure has no --force: its message does not offer one.
  if (!checked_as_no_window(fig + out + " --session-out " + afile)) {
    auto exists = ts_run(fig + out + " --session-out " + afile);
    EXPECT_EQ(exists.code, 2) << exists.output;
    EXPECT_NE(exists.output.find(afile + " already exists; choose another name\n"), std::string::npos)
        << exists.output;
  }
  if (::geteuid() != 0) std::filesystem::permissions(ro, std::filesystem::perms::owner_all);
  EXPECT_EQ(names_in(dir.path().string()), before) << "a refused command made or wrote something";
  EXPECT_EQ(content(afile), "mine");
}

// A value that is not UTF-8 (a --title typed in Latin-1) would end in the JSON writer after the work, as
// "[json.exception.type_error.316]" with a PNG and a CSV and no sidecar: it is refused first, naming the
// option and the byte.
TEST(Cli, TextThatIsNotUtf8IsRefusedBeforeAnyWork) {
  test::TempDir dir;
  const std::string figure = "figure --plot bars --backend cpu --size 16 --kernels tiled --quick --out-dir " +
                             dir.file("figures") + " --title \"$(printf 'caf\\351 au lait')\"";
  if (!checked_as_no_window(figure)) {
    auto r = ts_run(figure);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("--title is not valid UTF-8 (byte 0xE9 at offset 3)"), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("points measured"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("json.exception"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("figures")));
  auto b = ts_run("bench --backend cpu --kernels \"$(printf 'tiled\\377')\" --shapes 16");
  EXPECT_EQ(b.code, 2) << b.output;
  EXPECT_NE(b.output.find("--kernels is not valid UTF-8 (byte 0xFF at offset 5)"), std::string::npos)
      << b.output;
  // Valid UTF-8 passes (the check is on the bytes, not on ASCII).
  auto ok = ts_run("run --backend cpu --size 8 --kernel \"$(printf 'caf\\303\\251')\"");
  EXPECT_EQ(ok.code, 2) << ok.output;
  EXPECT_NE(ok.output.find("unknown kernel"), std::string::npos) << ok.output;
}

// SIGTERM (kill, a batch system's time limit) stops bench as Ctrl+C does: the points finished are written,
// then the exit code says which signal (128 + its number). The signal is sent once the first point's
// progress line is read, and each point takes at least --min-time, so points are still to come.
TEST(Cli, BenchOnSigtermOrCtrlCWritesTheFinishedPoints) {
  for (const int sig : {SIGTERM, SIGINT}) {
    test::TempDir dir;
    const std::string out = dir.file("bench.json"), session = dir.file("session.json");
    int err[2];
    ASSERT_EQ(::pipe(err), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::dup2(err[1], 2);
      ::close(err[0]);
      ::close(err[1]);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::execl(kBin.c_str(), kBin.c_str(), "bench", "--backend", "cpu", "--kernels", "tiled", "--tiles", "8",
              "--sizes", "16:320:16", "--min-time", "0.2", "--max-time", "0.4", "--max-samples", "1000000",
              "--format", "json", "--out", out.c_str(), "--session-out", session.c_str(), (char*)nullptr);
      ::_exit(127);
    }
    ::close(err[1]);
    std::string text, line;
    bool signalled = false;
    char buf[4096];
    for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) != 0;) {
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      text.append(buf, size_t(n));
      if (!signalled && text.find("[1/20]") != std::string::npos) {  // one point finished
        ::kill(pid, sig);
        signalled = true;
      }
    }
    ::close(err[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(signalled) << text;
    ASSERT_TRUE(WIFEXITED(status)) << "ended by the signal itself: " << text;
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << text;
    EXPECT_NE(text.find(sig == SIGTERM ? "interrupted (SIGTERM)" : "interrupted (Ctrl+C)"), std::string::npos)
        << text;
    ASSERT_TRUE(std::filesystem::exists(out)) << text;
    const auto j = nlohmann::json::parse(content(out));
    EXPECT_EQ(j["meta"]["interrupted"], true);
    EXPECT_GE(j["points"].size(), 1u);
    EXPECT_LT(j["points"].size(), 20u);
    EXPECT_EQ(j["points"][0]["n"], 16);
    EXPECT_EQ(load_session(session).records.size(), j["points"].size()) << text;
  }
}

// Item 18's small ones: --samples 0 is no default in disguise; a size just over a limit does not read as the
// limit; --arch names what NVRTC takes; a session symlink loop is a loop; too many sessions for figure.
TEST(Cli, SmallRefusalsSayWhatIsWrong) {
  test::TempDir dir;
  for (const std::string s : {"0", "00"}) {
    auto r = ts_run("run --backend cpu --size 8 --samples " + s);
    EXPECT_EQ(r.code, 2) << s << "\n" << r.output;
    EXPECT_NE(r.output.find("--samples = " + s + " must be at least 1"), std::string::npos) << r.output;
  }
  EXPECT_EQ(ts_run("run --backend cpu --size 8 --samples 2").code, 0);

  // Sizes beside their limits, one byte over: sparse files, never read.
  struct OverLimit {
    const char* file;
    const char* start;  // what the file begins with
    uint64_t size;
    const char* command;
    const char* words;
  };
  for (const OverLimit& c :
       {OverLimit{"big.cu", "__global__ void k(float* A) {}\n", (4u << 20) + 1, "list --kernel-file ",
                  "is 4.0 MiB (4194305 bytes); TileScope reads kernel sources of at most 4.0 MiB"},
        OverLimit{"big.json", "{}", (64u << 20) + 1, "figure --plot timings --session ",
                  "64.0 MiB (67108865 bytes) is larger than the limit of 64.0 MiB"}}) {
    SCOPED_TRACE(c.file);
    { std::ofstream(dir.file(c.file)) << c.start; }
    std::filesystem::resize_file(dir.file(c.file), c.size);
    if (checked_as_no_window(c.command + dir.file(c.file))) continue;
    const auto r = ts_run(c.command + dir.file(c.file));
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find(c.words), std::string::npos) << r.output;
  }

  // --arch: what NVRTC compiles for, listed; anything else refused before a compile.
  std::string list;
  for (int a : nvrtc_architectures()) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
  { std::ofstream(dir.file("k.cu")) << "__global__ void k(float* C, float* A, float* B, int N) {}\n"; }
  for (const char* arch : {"sm_76", "sm_99", "sm_121a", "sm_122", "sm_129", "13.0"}) {
    auto r = ts_run("list --kernel-file " + dir.file("k.cu") + " --arch " + arch);
    EXPECT_EQ(r.code, 2) << arch << "\n" << r.output;
    EXPECT_NE(r.output.find(std::string("--arch '") + arch + "' is not an architecture NVRTC"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("(" + list + "; e.g. sm_90 or 8.9)"), std::string::npos) << r.output;
  }
  EXPECT_EQ(list.find("sm_122"), std::string::npos) << list;

  // A session that is a loop of symbolic links is not "no such file" (figure: a command of the window).
  if (!kHaveWindow) return;
  std::filesystem::create_symlink(dir.file("loop.json"), dir.file("loop.json"));
  auto loop = ts_run("figure --plot timings --session " + dir.file("loop.json"));
  EXPECT_EQ(loop.code, 2) << loop.output;
  EXPECT_NE(loop.output.find(dir.file("loop.json") + ": a loop of symbolic links"), std::string::npos)
      << loop.output;
  EXPECT_EQ(loop.output.find("no such file"), std::string::npos) << loop.output;

  // Ten sessions for figure: one plotted and eight overlaid at most; nothing can be "closed" here.
  DeviceInfo d;
  d.backend = "cpu";
  d.name = d.label = "CPU";
  std::string sessions;
  for (int i = 0; i < 10; ++i) {
    save_session(dir.file("s" + std::to_string(i) + ".json"), Session::for_device(d), false);
    sessions += " --session " + dir.file("s" + std::to_string(i) + ".json");
  }
  auto many = ts_run("figure --plot bars" + sessions);
  EXPECT_EQ(many.code, 2) << many.output;
  EXPECT_NE(
      many.output.find("figure takes at most 9 --session files (the first plotted, 8 overlaid on it); 10 "
                       "were given:"),
      std::string::npos)
      << many.output;
  EXPECT_NE(many.output.find(dir.file("s9.json")), std::string::npos) << many.output;
  EXPECT_EQ(many.output.find("close one first"), std::string::npos) << many.output;
}

// cuBLAS is opened when a run first needs it (kernels/engine/cublas_api.hpp), not when a process starts: a
// command that runs no cuBLAS never loads it, and with it the 0.1 s of start-up that every process paid. The
// loader's own record of what it opened (LD_DEBUG=files) says which libraries came in.
TEST(Cli, CommandsThatRunNoCublasNeverLoadIt) {
  for (const std::string args : {"list", "run --backend cpu --size 48 --tile 16 --samples 1"}) {
    const auto r = run_cmd("{ LD_DEBUG=files " + kBin + " " + args + " >/dev/null; }");  // its stderr
    ASSERT_EQ(r.code, 0) << args << "\n" << r.output.substr(0, 2000);
    EXPECT_NE(r.output.find("file=libc.so"), std::string::npos) << "LD_DEBUG=files printed nothing:\n"
                                                                << r.output.substr(0, 2000);
    EXPECT_EQ(r.output.find("libcublas"), std::string::npos) << args;
  }
}

#if defined(TILESCOPE_HAVE_CUDA)
// And where it is needed, it opens: the library of this build's major version, every function found.
TEST(Cublas, OpensOnFirstUseWithEveryFunctionTheEngineCalls) {
  EXPECT_EQ(cublas_library_name(), "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
  const CublasApi& api = cublas_api();
  EXPECT_TRUE(api.create && api.destroy && api.set_stream && api.set_math_mode && api.sgemm_64);
  std::ifstream maps("/proc/self/maps");
  const std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(cublas_library_name()), std::string::npos) << "not mapped into this process";
  EXPECT_EQ(&cublas_api(), &api) << "opened once";
}
#endif

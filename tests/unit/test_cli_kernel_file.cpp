// `--kernel-file` on the command line without a GPU: every bad input is refused with exit code 2 and a
// message that names the file and the reason; `list --kernel-file` reports what was understood and the
// resources per tile; a kernel cannot run on the CPU backend and says so.
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kernels/user/nvrtc_compile.hpp"
#include "kernels/engine/registry.hpp"
#include "test_util.hpp"
#include "kernels/user/worker_client.hpp"

using namespace ts;
using test::run_cmd;

namespace {

class CliKernelFile : public ::testing::Test {
 protected:
  void SetUp() override { setenv("TILESCOPE_CACHE_DIR", m_dir.file("cache").c_str(), 1); }
  void TearDown() override { unsetenv("TILESCOPE_CACHE_DIR"); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = m_dir.file(name);
    std::ofstream(p) << text;
    return p;
  }
  test::CmdResult ts(const std::string& args) { return run_cmd(std::string(TILESCOPE_BIN) + " " + args); }
  test::TempDir m_dir;
};

const char* kGood =
    "#define TILE_WIDTH 16\n__global__ void matmul_kernel(float* C, float* A, float* B, int N) {\n"
    "  __shared__ float s[TILE_WIDTH][TILE_WIDTH];\n  s[threadIdx.y][threadIdx.x] = A[threadIdx.x];\n"
    "  __syncthreads();\n  C[threadIdx.x] = s[threadIdx.x][threadIdx.y] + B[0] * N;\n}\n";

}  // namespace

TEST_F(CliKernelFile, ListReportsRolesTileLaunchAndResourcesWithoutAGpu) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << why;
  const std::string f = write("good.cu", kGood);
  const auto r = ts("list --kernel-file " + f + " --arch sm_80");
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* s : {"matmul_kernel (line 2)  ->  yours:matmul_kernel", "float* C  ->  C", "int N  ->  N",
                        "runs on square shapes", "TILE_WIDTH (#define, line 1, 16 in the file)",
                        "block (TILE, TILE, 1), grid (ceil(N / TILE), ceil(M / TILE), 1)",
                        "resources for sm_80", "NVIDIA A100"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s << "\n" << r.output;
  const auto j = ts("list --kernel-file " + f + " --arch 9.0 --gpu l4 --json 2>/dev/null");
  ASSERT_EQ(j.code, 0) << j.output;
  const auto doc = nlohmann::json::parse(j.output);
  EXPECT_EQ(doc["arch"], 90);
  const auto& tiles = doc["kernels"][0]["tiles"];
  ASSERT_EQ(tiles.size(), 3u);
  EXPECT_EQ(tiles[2]["tile"], 32);
  EXPECT_EQ(tiles[2]["static_smem"], 32 * 32 * 4);
  EXPECT_EQ(tiles[2]["threads"], 1024);
  EXPECT_GT(tiles[2]["regs"].get<int>(), 0);
  EXPECT_GE(tiles[2]["blocks_per_sm"].get<int>(), 1);
}

TEST_F(CliKernelFile, EveryBadInputIsRefusedWithExitCodeTwoAndTheReason) {
  struct Case {
    std::string args, says;
  };
  const std::string good = write("good.cu", kGood);
  const std::string none = write("none.cu", "int main() { return 0; }\n");
  const std::string two =
      write("two.cu", std::string(kGood) + "__global__ void other(float* A, float* B, float* C, int N) {}\n");
  const std::string unmappable = write("struct.cu",
                                       "typedef struct { int w; float* e; } Matrix;\n"
                                       "__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {}\n");
  const std::string broken = write("broken.cu",
                                   "#define TILE 16\n__global__ void k(float* A, float* B, float* C, "
                                   "int N) {\n  C[0] = undefined_thing;\n}\n");
  std::string big(size_t(5) << 20, ' ');
  big += std::string(kGood);
  const std::string huge = write("huge.cu", big);
  std::ofstream(m_dir.file("binary.cu"), std::ios::binary) << std::string(
      "\x7f"
      "ELF\0\x02",
      6);
  const std::vector<Case> cases = {
      {"run --kernel-file " + m_dir.file("missing.cu"), "does not exist"},
      {"run --kernel-file " + m_dir.path().string(), "is a folder"},
      {"run --kernel-file " + m_dir.file("binary.cu"), "is not text: it holds a NUL byte"},
      {"run --kernel-file " + huge,
       "is 5.0 MiB (5243145 bytes); TileScope reads kernel sources of at most 4.0 MiB"},
      {"run --kernel-file " + none, "has no __global__ function"},
      {"run --kernel-file " + two,
       "2 __global__ functions: matmul_kernel (line 2), other (line 8); choose one"},
      {"run --kernel-file " + two + " --kernel nope", "no __global__ function called 'nope'"},
      {"run --kernel-file " + unmappable, "parameter 'A' is of type 'Matrix'"},
      {"run --kernel-file " + broken + " --size 64", "line 3: identifier \"undefined_thing\" is undefined"},
      {"list --kernel-file " + broken, "identifier \"undefined_thing\" is undefined"},
      {"run --kernel-file " + good + " --tile 64 --size 64", "block = 64 x 64 x 1 = 4096 threads"},
      {"run --kernel-file " + good + " --m 64 --n 32 --k 64", "runs on square shapes (M = N = K)"},
      {"run --kernel-file " + good + " --param Q=A", "the kernel has no parameter 'Q'"},
      {"run --kernel-file " + good + " --grid 'ceil(N / TILD)'", "unknown name 'TILD'"},
      {"run --kernel-file " + good + " --hang-limit 0", "--hang-limit = '0' is not a number of seconds"},
      {"run --param C=A", "go with --kernel-file"},
      {"list --kernel-file " + good + " --arch sm_52", "--arch 'sm_52' is not an architecture"},
      {"list --arch sm_90", "--arch and --gpu go with --kernel-file"},
      {"run --kernel-file " + good + " --size 64",
       "needs a GPU to run"},  // the CPU backend, with the way out
      // What a kernel file may include (issue 26): refused before anything is compiled, with its line.
      {"list --kernel-file " + write("abs.cu", "#include \"/etc/passwd\"\n" + std::string(kGood)),
       "abs.cu:1: #include \"/etc/passwd\" is refused: an absolute path; a kernel file may include files in "
       "its "
       "own folder and below"},
      {"run --kernel-file " + write("up.cu", std::string(kGood) + "#include <../../etc/shadow>\n") +
           " --size 64",
       "#include <../../etc/shadow> is refused: a name with a '..' part"},
      // A UTF-8 kernel name is found (issue 26), and said to be one CUDA cannot compile, not garbled errors.
      {"list --kernel-file " +
           write("utf8.cu",
                 "\xEF\xBB\xBF#define TILE 16\r\n__global__ void m\xC3\xA4trix(float* C, float* A, "
                 "float* B, int N) {}\r\n"),
       "utf8.cu:2: the kernel's name 'm\xC3\xA4trix' has characters outside ASCII"},
  };
  const bool nvrtc = nvrtc_available(nullptr);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    // Without NVRTC (a build without the CUDA toolkit) nothing compiles: the compile errors cannot show.
    if (!nvrtc && c.says.find("undefined_thing") != std::string::npos) continue;
    const auto r = ts(c.args);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
  }
}

TEST_F(CliKernelFile, TheWorkerIsNotForPeopleAndRefusesAJobFileThatIsNotOne) {
  const auto r = ts("worker");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("TileScope starts this itself"), std::string::npos) << r.output;
  EXPECT_EQ(ts("--help").output.find("worker"), std::string::npos) << "the internal subcommand is not listed";
  const std::string junk = write("junk.job", "not a job");
  const auto j = ts("worker --job " + junk);
  EXPECT_EQ(j.code, 2) << j.output;
}

// The app's side of the worker against the real `tilescope worker`: spawned, it answers over the socket pair;
// on a machine without a GPU it cannot make a CUDA context and says why, and TileScope reports that instead
// of hanging or crashing.
TEST_F(CliKernelFile, TheWorkerIsSpawnedAndAWorkerThatCannotStartSaysWhy) {
  WorkerClient w(0);
  std::string why;
  const bool gpu = cuda_device_count(&why) > 0;
  try {
    w.ensure_started();
    EXPECT_TRUE(gpu) << "a worker started without a GPU";
    EXPECT_FALSE(w.hello().device_name.empty());
    EXPECT_GT(w.pid(), 0);
  } catch (const WorkerFailure& e) {
    EXPECT_FALSE(gpu) << e.what();
    EXPECT_EQ(e.kind(), WorkerFailure::Kind::Start);
    EXPECT_NE(std::string(e.what()).find("the kernel worker could not start"), std::string::npos) << e.what();
    if (cuda_compiled())  // the worker's own words: why the CUDA context could not be made
      EXPECT_NE(std::string(e.what()).find("while selecting the device"), std::string::npos) << e.what();
  }
}

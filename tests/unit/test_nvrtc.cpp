// NVRTC on a machine without a GPU: a person's kernel compiles for a chosen architecture, ptxas's report
// gives its registers and shared memory, the build is cached (memory and disk, keyed by everything that went
// in), a compile error names its line in the person's file, and the traced build compiles too. SKIP where the
// build has no NVRTC (a build without the CUDA toolkit).
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "core/user_kernel/cubin_info.hpp"

#include "kernels/user/nvrtc_compile.hpp"
#include "kernels/user/nvrtc_workshop.hpp"
#include "require_nvrtc.hpp"
#include "test_util.hpp"
#include "core/user_kernel/your_kernel.hpp"

using namespace ts;

namespace {

const char* kClassic = R"CU(#include <stdio.h>
#define TILE_WIDTH 16

// The classic tiled kernel, as a learner writes it.
__global__ void matmul_kernel(float* C, float* A, float* B, int N) {
  __shared__ float As[TILE_WIDTH][TILE_WIDTH];
  __shared__ float Bs[TILE_WIDTH][TILE_WIDTH];
  int row = blockIdx.y * TILE_WIDTH + threadIdx.y;
  int col = blockIdx.x * TILE_WIDTH + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (N + TILE_WIDTH - 1) / TILE_WIDTH; ++t) {
    As[threadIdx.y][threadIdx.x] = (row < N && t * TILE_WIDTH + threadIdx.x < N) ? A[row * N + t * TILE_WIDTH + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (col < N && t * TILE_WIDTH + threadIdx.y < N) ? B[(t * TILE_WIDTH + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE_WIDTH; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < N && col < N) C[row * N + col] = acc;
}

int main() {
  float* d;
  cudaMalloc(&d, 4);
  printf("done\n");
  return 0;
}
)CU";

// A cache of its own for every test (and none in the person's home folder).
class NvrtcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TILESCOPE_CACHE_DIR", m_dir.path().c_str(), 1);
    reset_module_cache();
  }
  void TearDown() override { unsetenv("TILESCOPE_CACHE_DIR"); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = m_dir.file(name);
    std::ofstream(p) << text;
    return p;
  }
  test::TempDir m_dir;
};

}  // namespace

TEST_F(NvrtcTest, CompilesWithoutAGpuAndReportsRegistersAndSharedMemoryPerTile) {
  REQUIRE_NVRTC();
  const auto k = UserKernel::open_file(write("classic.cu", kClassic), {});
  for (int tile : {8, 16, 32}) {
    SCOPED_TRACE(tile);
    const auto m = build_user_kernel(*k, tile, 90, {});
    ASSERT_TRUE(m->ok) << m->log;
    EXPECT_FALSE(m->cubin.empty());
    EXPECT_NE(m->ptx.find(".entry " + m->lowered_name), std::string::npos);
    EXPECT_EQ(m->lowered_name, "_Z13matmul_kernelPfS_S_i");
    ASSERT_TRUE(m->resources.found) << m->log;
    EXPECT_EQ(m->resources.static_smem, 2 * tile * tile * 4);  // the Tile control reached TILE_WIDTH
    EXPECT_GT(m->resources.regs, 8);
    EXPECT_LE(m->resources.regs, 64);
    EXPECT_EQ(m->resources.barriers, 1);
    EXPECT_EQ(m->resources.spill_stores, 0);
  }
  // Another architecture is another build, with its own report.
  const auto m75 = build_user_kernel(*k, 16, 75, {});
  ASSERT_TRUE(m75->ok) << m75->log;
  EXPECT_NE(m75->key, build_user_kernel(*k, 16, 90, {})->key);
  EXPECT_TRUE(m75->resources.found);
}

// The cubin carries the registers, shared memory and stack itself: read from it, they equal what ptxas said
// (the fallback when a compiler log lacks the report), on three architectures, with and without shared memory
// and with a stack frame. A damaged or foreign file gives nothing, never a crash or a wrong number.
TEST_F(NvrtcTest, TheCubinItselfSaysTheSameResourcesAsPtxas) {
  REQUIRE_NVRTC();
  const auto classic = UserKernel::open_file(write("classic.cu", kClassic), {});
  const auto stack = UserKernel::open_file(write("stack.cu", R"(
__global__ void with_stack(float* C, const float* A, const float* B, int N) {
  float local[64];
  for (int i = 0; i < 64; ++i) local[i] = A[(i * 7 + threadIdx.x) % N];
  C[threadIdx.x] = local[(int)B[threadIdx.x] & 63] + N;
}
)"),
                                           {});
  int checked = 0;
  for (int arch : {75, 80, 90})
    for (const auto& k : {classic, stack})
      for (int tile : {8, 32}) {
        SCOPED_TRACE(k->id() + " sm_" + std::to_string(arch) + " tile " + std::to_string(tile));
        const auto m = build_user_kernel(*k, tile, arch, {});
        ASSERT_TRUE(m->ok) << m->log;
        ASSERT_TRUE(parse_ptxas_info(m->log, m->lowered_name).found) << m->log;
        const auto r = read_cubin_resources(m->cubin, m->lowered_name);
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->regs, m->resources.regs);
        EXPECT_EQ(r->static_smem, m->resources.static_smem);
        EXPECT_EQ(r->stack_bytes, m->resources.stack_bytes);
        ++checked;
      }
  EXPECT_EQ(checked, 12);
  const auto m = build_user_kernel(*stack, 8, 90, {});
  EXPECT_GT(m->resources.stack_bytes, 0);  // the case above really had a stack frame
  EXPECT_FALSE(read_cubin_resources(m->cubin, "no_such_function").has_value());
  EXPECT_FALSE(read_cubin_resources("not an ELF file at all", m->lowered_name).has_value());
  for (size_t cut : {size_t(0), size_t(63), m->cubin.size() / 2}) {
    SCOPED_TRACE(cut);
    EXPECT_FALSE(read_cubin_resources(m->cubin.substr(0, cut), m->lowered_name).has_value());
  }
  // Cut after what the reader needs (the last section's bytes): still the right numbers, or nothing.
  if (const auto r = read_cubin_resources(m->cubin.substr(0, m->cubin.size() - 1), m->lowered_name)) {
    EXPECT_EQ(r->regs, m->resources.regs);
    EXPECT_EQ(r->stack_bytes, m->resources.stack_bytes);
  }
  std::string scrambled = m->cubin;
  for (size_t i = 64; i < scrambled.size(); i += 7) scrambled[i] = char(scrambled[i] ^ 0x5a);
  (void)read_cubin_resources(scrambled, m->lowered_name);  // any answer, but no crash (ASan watches)
}

TEST_F(NvrtcTest, BuildsAreCachedInMemoryAndOnDiskByEverythingThatWentIn) {
  REQUIRE_NVRTC();
  const auto k = UserKernel::open_file(write("classic.cu", kClassic), {});
  const auto first = build_user_kernel(*k, 16, 90, {});
  ASSERT_TRUE(first->ok);
  EXPECT_FALSE(first->from_cache);
  EXPECT_GT(first->compile_s, 0.0);
  EXPECT_EQ(module_cache_stats().compiles, 1);
  const auto again = build_user_kernel(*k, 16, 90, {});
  EXPECT_EQ(again.get(), first.get());
  EXPECT_EQ(module_cache_stats().memory_hits, 1);
  EXPECT_EQ(module_cache_stats().compiles, 1);
  // A fresh process (memory cache empty) finds it on disk.
  reset_module_cache();
  const auto disk = build_user_kernel(*k, 16, 90, {});
  EXPECT_TRUE(disk->from_cache);
  EXPECT_EQ(module_cache_stats().disk_hits, 1);
  EXPECT_EQ(module_cache_stats().compiles, 0);
  EXPECT_EQ(disk->cubin, first->cubin);
  EXPECT_EQ(disk->resources.regs, first->resources.regs);
  EXPECT_EQ(disk->lowered_name, first->lowered_name);
  // A damaged cache file is compiled again, not trusted.
  reset_module_cache();
  std::ofstream(module_cache_dir() + "/" + first->key + ".tsmod", std::ios::trunc) << "TSMOD1 garbage";
  EXPECT_FALSE(build_user_kernel(*k, 16, 90, {})->from_cache);
  // Another tile, another source, another architecture: other keys.
  EXPECT_NE(build_user_kernel(*k, 32, 90, {})->key, first->key);
  std::string edited = kClassic;
  edited.replace(edited.find("float acc = 0.0f;"), 17, "float acc = 0.0f; ");
  const auto k2 = UserKernel::open_file(write("classic.cu", edited), {});
  EXPECT_NE(build_user_kernel(*k2, 16, 90, {})->key, first->key);
  EXPECT_EQ(cached_module(k->plain_job(8, 90, {})), nullptr) << "cached_build never compiles";
}

TEST_F(NvrtcTest, ACompileErrorNamesItsLineInThePersonsFile) {
  REQUIRE_NVRTC();
  std::string broken = kClassic;
  broken.replace(broken.find("acc += As"), 9, "acc += Az");  // line 15
  const auto k = UserKernel::open_file(write("broken.cu", broken), {});
  try {
    build_user_kernel(*k, 16, 90, {});
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("line 15: identifier \"Az\" is undefined"), std::string::npos) << msg;
    EXPECT_NE(msg.find("broken.cu"), std::string::npos) << msg;
    ASSERT_TRUE(e.module());
    ASSERT_FALSE(e.module()->diagnostics.empty());
    EXPECT_EQ(e.module()->diagnostics[0].line, 15);
  }
  // In a KernelBench answer, the line is the .py file's.
  const std::string py = "import torch\nfrom torch.utils.cpp_extension import load_inline\n\nsrc = \"\"\"\n" +
                         broken + "\"\"\"\nm = load_inline(name='m', cpp_sources='', cuda_sources=src)\n";
  const auto kp = UserKernel::open_file(write("answer.py", py), {});
  try {
    build_user_kernel(*kp, 16, 90, {});
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("line 19: identifier \"Az\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lines are those of the .py file"), std::string::npos);
  }
}

TEST_F(NvrtcTest, TheTracedBuildCompilesWithTheSameResourcesAsThePlainOne) {
  REQUIRE_NVRTC();
  const auto k = UserKernel::open_file(write("classic.cu", kClassic), {});
  const auto plain = build_user_kernel(*k, 32, 90, {});
  ASSERT_TRUE(plain->ok);
  std::string why;
  const auto job = k->traced_job(32, 90, {}, plain->resources.regs, &why);
  ASSERT_TRUE(job) << why;
  const auto traced = compile_module(*job);
  ASSERT_TRUE(traced->ok) << traced->log << "\n" << job->source;
  EXPECT_EQ(traced->lowered_name, "tilescope_traced");
  EXPECT_LE(traced->resources.regs, plain->resources.regs);  // capped with __maxnreg__
  EXPECT_EQ(traced->resources.static_smem, plain->resources.static_smem);
}

TEST_F(NvrtcTest, ATemplateKernelIsInstantiatedAtTheTileAndDeviceHeadersAreFound) {
  REQUIRE_NVRTC();
  const auto t = UserKernel::open_file(
      write("templ.cu",
            "#include <cuda_fp16.h>\ntemplate <int TILE>\n__global__ void t(const float* A, const float* "
            "B, float* C, int M, int N, int K) {\n  __shared__ float s[TILE][TILE];\n  __half h = "
            "__float2half(A[threadIdx.x]);\n  s[threadIdx.y][threadIdx.x] = __half2float(h);\n  "
            "__syncthreads();\n  C[threadIdx.x] = s[threadIdx.x][threadIdx.y] + B[0] + M + N + K;\n}\n"),
      {});
  const auto m = build_user_kernel(*t, 32, 90, {});
  ASSERT_TRUE(m->ok) << m->log;
  EXPECT_EQ(m->resources.static_smem, 32 * 32 * 4);
}

TEST_F(NvrtcTest, AKernelInsideANamespaceIsFoundByItsQualifiedName) {
  REQUIRE_NVRTC();
  const auto k = UserKernel::open_file(
      write("ns.cu",
            "namespace mine {\nnamespace inner {\n__global__ void mm(const float* A, const float* B, "
            "float* C, int N) { C[0] = A[0] + B[0] + N; }\n}\n}\n"),
      {});
  EXPECT_EQ(k->scan().scope_of(k->decl()), "mine::inner::");
  const auto m = build_user_kernel(*k, 16, 90, {});
  ASSERT_TRUE(m->ok) << m->log;
  EXPECT_NE(m->lowered_name.find("mine5inner2mm"), std::string::npos) << m->lowered_name;
  std::string why;
  const auto job = k->traced_job(16, 90, {}, m->resources.regs, &why);
  ASSERT_TRUE(job) << why;
  EXPECT_TRUE(compile_module(*job)->ok);
}

// Issue 26, item 4: a header of the kernel's folder (and one of a subfolder it includes) reaches NVRTC in
// memory, under the name the #include writes; NVRTC reads nothing of the folder itself (--no-source-include);
// a changed header is another build; and what leaves the folder is refused before NVRTC runs, without quoting
// the file.
TEST_F(NvrtcTest, HeadersOfTheKernelsFolderAreCompiledInAndTheirContentIsPartOfTheBuildsKey) {
  REQUIRE_NVRTC();
  std::filesystem::create_directories(m_dir.path() / "inc");
  write("inc/scale.cuh",
        "#pragma once\n#include \"factor.h\"\n__device__ float scale(float v) { return v * kFactor; }\n");
  write("inc/factor.h", "constexpr float kFactor = 2.0f;\n");
  const std::string kernel =
      "#include \"inc/scale.cuh\"\n__global__ void k(const float* A, const float* B, float* C, int M, int N, "
      "int K) {\n  C[threadIdx.x] = scale(A[threadIdx.x]) + B[0] + M + N + K;\n}\n";
  const auto k = UserKernel::open_file(write("k.cu", kernel), {});
  const auto first = build_user_kernel(*k, 16, 90, {});
  ASSERT_TRUE(first->ok) << first->log;
  EXPECT_NE(std::find(first->options.begin(), first->options.end(), "--no-source-include"),
            first->options.end());
  write("inc/factor.h", "constexpr float kFactor = 3.0f;\n");
  const auto again = build_user_kernel(*UserKernel::open_file(m_dir.file("k.cu"), {}), 16, 90, {});
  ASSERT_TRUE(again->ok) << again->log;
  EXPECT_NE(again->key, first->key) << "a changed header must not reuse the old build";
  // NVRTC itself reads nothing next to the source: a job whose header was not handed over does not find it in
  // the working folder (where NVRTC looked before --no-source-include).
  write("near.h", "constexpr int kNear = 1;\n");
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(m_dir.path());
  CompileJob bare;
  bare.source = "#include \"near.h\"\n__global__ void n(int* x) { *x = kNear; }\n";
  bare.label = "n.cu";
  bare.name_expression = "&n";
  const auto unseen = compile_module(bare);
  std::filesystem::current_path(cwd);
  EXPECT_FALSE(unseen->ok);
  EXPECT_NE(unseen->log.find("near.h"), std::string::npos) << unseen->log;
  // A computed name is refused before NVRTC runs, and nothing of the file it names is quoted.
  write("secret.h", "hunter2_topsecret\n");
  try {
    UserKernel::open_file(write("bad.cu", "#define H \"secret.h\"\n#include H\n" + kernel), {});
    ADD_FAILURE() << "a computed #include was not refused";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.cu:2: #include H is refused"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
}

// Headers that include each other under #pragma once, by names relative to their own folder: the file
// included as "inc/a.h" by the kernel and as "a.h" by its neighbour reaches NVRTC under both names, the
// second a header that includes the first, so #pragma once (which NVRTC keys by name) sees one file. Before,
// the second name was missing ("cannot open source file \"a.h\"").
TEST_F(NvrtcTest, GuardedHeadersThatIncludeEachOtherCompile) {
  REQUIRE_NVRTC();
  std::filesystem::create_directories(m_dir.path() / "inc");
  write("inc/a.h", "#pragma once\n#include \"b.h\"\nconstexpr float kA = 1.0f + kB;\n");
  write("inc/b.h", "#pragma once\n#include \"a.h\"\nconstexpr float kB = 2.0f;\n");
  const auto k = UserKernel::open_file(
      write("k.cu",
            "#include \"inc/a.h\"\n__global__ void k(const float* A, const float* B, float* C, int N) {\n"
            "  C[threadIdx.x] = A[0] * kA + B[0] + N;\n}\n"),
      {});
  ASSERT_EQ(k->headers().size(), 3u);  // inc/a.h, b.h, and a.h (b.h's name for inc/a.h)
  EXPECT_EQ(k->headers()[2].name, "a.h");
  EXPECT_NE(k->headers()[2].content.find("#include \"inc/a.h\""), std::string::npos)
      << k->headers()[2].content;
  const auto m = build_user_kernel(*k, 16, 90, {});
  EXPECT_TRUE(m->ok) << m->log;
}

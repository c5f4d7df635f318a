// Bring your own kernel, without a GPU: the launch formulas, the source reader (files, text checks, the
// KernelBench Python format), the scanner on a corpus of real-world signatures, the parameter mapping and its
// refusals, the sources NVRTC gets (plain and traced), and reading the compiler's log.
#include <random>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/user_kernel/kernel_source.hpp"
#include "core/user_kernel/launch_expr.hpp"
#include "core/user_kernel/nvrtc_log.hpp"
#include "core/engine/problem.hpp"
#include "core/base/sha256.hpp"
#include "test_util.hpp"
#include "core/user_kernel/user_kernel.hpp"

using namespace ts;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ValidationError& e) {
    return e.what();
  }
  return "(no error)";
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

struct Understood {
  SourceScan scan;
  KernelUnderstanding u;
};
Understood understand(const std::string& source, const std::string& name = "") {
  Understood r;
  r.scan = scan_cuda_source(source);
  const KernelDecl& d = choose_kernel(r.scan, name, "test.cu");
  r.u = understand_kernel(r.scan, d);
  return r;
}

std::vector<std::string> roles(const Understood& x) {
  std::vector<std::string> out;
  for (const auto& b : x.u.spec.params)
    out.push_back(b.role == ParamRole::Value ? b.value : to_string(b.role));
  return out;
}

}  // namespace

// [SECTION] Launch formulas.
TEST(LaunchExpr, EvaluatesTheDefaultsAndRoundsLikeTheTextbook) {
  const ExprVars v{1000, 1000, 1000, 16};
  EXPECT_EQ(eval_launch_expr("ceil(N / TILE)", v, "grid x"), 63);  // 62.5 rounded up
  EXPECT_EQ(eval_launch_expr("(N + TILE - 1) / TILE", v, "grid x"), 63);
  EXPECT_EQ(eval_launch_expr("N / TILE", v, "grid x"), 62);  // not whole: toward zero, as C
  EXPECT_EQ(eval_launch_expr("floor(N / TILE)", v, "grid x"), 62);
  EXPECT_EQ(eval_launch_expr("TILE * TILE", v, "block"), 256);
  EXPECT_EQ(eval_launch_expr("min(M, 64) + max(1, K / 1000)", v, "x"), 65);
  EXPECT_EQ(eval_launch_expr("2 * TILE * TILE * 4", v, "smem"), 2048);
  EXPECT_EQ(eval_launch_expr("-(-3)", v, "x"), 3);
  EXPECT_EQ(eval_launch_expr("  7  ", v, "x"), 7);
  EXPECT_EQ(eval_launch_expr("ceil(N / (TILE * 4)) * 4", ExprVars{1, 4099, 1, 32}, "x"), 132);
}

TEST(LaunchExpr, RefusesBadFormulasWithThePlaceAndTheReason) {
  const ExprVars v{64, 64, 64, 16};
  const std::string tild = error_of([&] { eval_launch_expr("ceil(N / TILD)", v, "grid x"); });
  EXPECT_NE(tild.find("grid x = 'ceil(N / TILD)': unknown name 'TILD' (known: M, N, K, TILE) at column 10"),
            std::string::npos)
      << tild;
  EXPECT_NE(error_of([&] { eval_launch_expr("N / (float)TILE", v, "grid x"); }).find("no casts are needed"),
            std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr("n / TILE", v, "grid x"); }).find("names are upper case"),
            std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr("N / (TILE - 16)", v, "grid x"); }).find("divides by zero"),
            std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr("pow(N, 2)", v, "grid x"); }).find("unknown function 'pow'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr("N +", v, "grid x"); }).find("ends"), std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr("", v, "grid x"); }).find("is empty"), std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr("1.5 * N", v, "grid x"); }).find("not a whole number"),
            std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr("(N", v, "grid x"); }).find("expected ')'"), std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr("99999999999 * 99999999999", v, "grid x"); }).find("overflows"),
            std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr(std::string(300, '1'), v, "grid x"); }).find("at most 256"),
            std::string::npos);
}

TEST(LaunchExpr, BoundsTheNestingInsteadOfRecursingWithoutLimit) {
  const ExprVars v{64, 64, 64, 16};
  std::string deep(20, '(');
  deep += "N" + std::string(20, ')');
  EXPECT_EQ(eval_launch_expr(deep, v, "x"), 64);
  std::string too_deep(100, '(');
  too_deep += "N" + std::string(100, ')');
  EXPECT_NE(error_of([&] { eval_launch_expr(too_deep, v, "x"); }).find("nests deeper than 24"),
            std::string::npos);
  std::string calls;
  for (int i = 0; i < 40; ++i) calls += "ceil(";
  calls += "N" + std::string(40, ')');
  EXPECT_NE(error_of([&] { eval_launch_expr(calls, v, "x"); }).find("nests deeper"), std::string::npos);
  EXPECT_NE(error_of([&] { eval_launch_expr(std::string(100, '-') + "N", v, "x"); }).find("too many signs"),
            std::string::npos);
}

TEST(LaunchExpr, ChecksTextWithoutValuesAndReportsTheNamesUsed) {
  EXPECT_NO_THROW(check_launch_expr("N / (TILE - 1)", "grid x"));  // no value may make a check fail
  EXPECT_EQ(launch_expr_names("ceil(N / TILE)", "x"), 2u | 8u);
  EXPECT_EQ(launch_expr_names("M * K", "x"), 1u | 4u);
  EXPECT_THROW(check_launch_expr("Q", "x"), ValidationError);
}

TEST(Sha256, MatchesTheStandardTestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  Sha256 a, b;
  a.field("ab");
  a.field("c");
  b.field("a");
  b.field("bc");
  EXPECT_NE(a.hex(), b.hex());
}

// [SECTION] Reading files.
TEST(KernelFile, RefusesWhatIsNotARegularTextFileWithThePathAndTheReason) {
  test::TempDir dir;
  EXPECT_NE(error_of([&] { read_kernel_source(dir.file("missing.cu")); }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_kernel_source(dir.path().string()); }).find("is a folder"),
            std::string::npos);
  ASSERT_EQ(mkfifo(dir.file("pipe.cu").c_str(), 0600), 0);  // reading it would block forever
  EXPECT_NE(error_of([&] { read_kernel_source(dir.file("pipe.cu")); }).find("not a regular file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_kernel_source("/dev/zero"); }).find("not a regular file"), std::string::npos);
  write_file(dir.file("bin.cu"), std::string("\x7f"
                                             "ELF\0\0\x01",
                                             7));
  EXPECT_NE(error_of([&] { read_kernel_source(dir.file("bin.cu")); }).find("NUL byte at offset 4"),
            std::string::npos);
  write_file(dir.file("latin1.cu"), "// caf\xe9\n__global__ void k() {}\n");
  EXPECT_NE(error_of([&] { read_kernel_source(dir.file("latin1.cu")); }).find("line 1) is not valid UTF-8"),
            std::string::npos);
  write_file(dir.file("utf8.cu"),
             "// caf\xc3\xa9 \xe2\x9c\x93\n__global__ void k(float* A, float* B, float* C, int N) {}\n");
  EXPECT_EQ(read_kernel_source(dir.file("utf8.cu")).label, "utf8.cu");
}

TEST(KernelFile, ASourceOfSeveralMegabytesIsReadQuicklyAndOneOverTheLimitIsRefusedWithTheNumbers) {
  test::TempDir dir;
  // 3 MiB of comments, strings and host code, the kernel at the very end.
  std::string big;
  while (big.size() < (3u << 20))
    big +=
        "/* block comment with __global__ inside */ static const char* s = \"__global__ void fake()\";\n"
        "int host_function_" +
        std::to_string(big.size()) + "(int x) { return x * 2; }\n";
  big += "#define TILE 16\n__global__ void last(const float* A, const float* B, float* C, int N) { }\n";
  write_file(dir.file("big.cu"), big);
  // Read and scanned in one pass: a scanner that went back over the text for every kernel or bracket would
  // take hours on 3 MiB and run into the test's timeout (no stopwatch here: a busy machine is no failure).
  const KernelSource src = read_kernel_source(dir.file("big.cu"));
  const SourceScan scan = scan_cuda_source(src.text);
  ASSERT_EQ(scan.kernels.size(), 1u);
  EXPECT_EQ(scan.kernels[0].name, "last");
  EXPECT_EQ(scan.kernels[0].line, scan.lines - 1);
  big.append(size_t(2) << 20, ' ');
  write_file(dir.file("huge.cu"), big);
  const std::string e = error_of([&] { read_kernel_source(dir.file("huge.cu")); });
  EXPECT_NE(e.find("is 5.0 MiB"), std::string::npos) << e;
  EXPECT_NE(e.find("at most 4.0 MiB"), std::string::npos) << e;
}

TEST(KernelFile, AKernelBenchAnswerGivesTheCudaSourceOfLoadInlineAndIgnoresTheTorchWrapper) {
  const std::string py = R"PY(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# a comment with load_inline(cuda_sources=wrong) in it
matmul_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

#define TILE_SIZE 16

__global__ void matmul_kernel(const float* A, const float* B, float* C, int N) {
    int row = blockIdx.y * TILE_SIZE + threadIdx.y;
    int col = blockIdx.x * TILE_SIZE + threadIdx.x;
    if (row < N && col < N) { float s = 0; for (int k = 0; k < N; ++k) s += A[row * N + k] * B[k * N + col]; C[row * N + col] = s; }
}

torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B) {
    auto N = A.size(0);
    auto C = torch::zeros({N, N}, A.options());
    dim3 threads(TILE_SIZE, TILE_SIZE);
    dim3 blocks((N + TILE_SIZE - 1) / TILE_SIZE, (N + TILE_SIZE - 1) / TILE_SIZE);
    matmul_kernel<<<blocks, threads>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), N);
    return C;
}
"""

matmul_cpp_source = "torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B);"

matmul = load_inline(
    name="matmul",
    cpp_sources=matmul_cpp_source,
    cuda_sources=matmul_source,
    functions=["matmul_cuda"],
    verbose=True,
)

class ModelNew(nn.Module):
    def forward(self, A, B):
        return matmul.matmul_cuda(A, B)
)PY";
  test::TempDir dir;
  write_file(dir.file("answer.py"), py);
  const KernelSource src = read_kernel_source(dir.file("answer.py"));
  EXPECT_TRUE(src.from_python);
  EXPECT_EQ(src.first_line, 6);  // the line of the opening quotes
  const Understood x = understand(src.text);
  EXPECT_EQ(x.u.decl->name, "matmul_kernel");
  EXPECT_EQ(x.u.decl->line + src.first_line - 1, 12);  // the kernel's line in the .py file
  EXPECT_EQ(roles(x), (std::vector<std::string>{"A", "B", "C", "N"}));
  EXPECT_EQ(x.u.spec.tile_symbol, "TILE_SIZE");
  EXPECT_TRUE(x.u.square_only);
  // The torch wrapper and both includes are host code.
  const std::string dev = blank_spans(src.text, x.scan.host_code);
  EXPECT_EQ(dev.find("torch::Tensor"), std::string::npos);
  EXPECT_EQ(dev.find("#include"), std::string::npos);
  EXPECT_NE(dev.find("__global__ void matmul_kernel"), std::string::npos);
  // Without load_inline, a Python file with no kernel string is refused, saying what it looked for.
  write_file(dir.file("plain.py"), "print('hello')\n");
  EXPECT_NE(error_of([&] { read_kernel_source(dir.file("plain.py")); }).find("load_inline(cuda_sources=...)"),
            std::string::npos);
  write_file(dir.file("unbound.py"), "m = load_inline(name='x', cuda_sources=src_missing)\n");
  EXPECT_NE(error_of([&] { read_kernel_source(dir.file("unbound.py")); }).find("names 'src_missing'"),
            std::string::npos);
}

// [SECTION] The scanner.
TEST(SourceScanner, FindsKernelsAndSkipsCommentsStringsAndHostCodeKeepingLines) {
  const std::string src = R"CU(#include <stdio.h>
#include <cuda_fp16.h>
#include "local.h"
// __global__ void in_a_comment(int x) {}
/* __global__ void in_a_block_comment() {} */
#define TILE_WIDTH 16  // the tile
#define TWICE(x) ((x) * 2)
#define LONG_MACRO 1 + \
  2
const char* banner = "__global__ void in_a_string() {}";
const char* raw = R"x(__global__ void in_a_raw_string() {})x";
float* d_A;
using namespace std;
__device__ float helper(float a) { return a * 2.0f; }
__global__ void __launch_bounds__(256) first(float* C, float* A, float* B, int N) {
  __shared__ float As[TILE_WIDTH][TILE_WIDTH];
  char q = '}';
}
namespace inner {
extern "C" {
__global__ void second(const float* a, const float* b, float* c, int m, int n, int k) { }
}
}
int main(int argc, char** argv) {
  first<<<dim3(1), dim3(1)>>>(0, 0, 0, 1);
  return 0;
}
)CU";
  const SourceScan s = scan_cuda_source(src);
  ASSERT_EQ(s.kernels.size(), 2u);
  EXPECT_EQ(s.kernels[0].name, "first");
  EXPECT_EQ(s.kernels[0].line, 15);
  EXPECT_EQ(s.kernels[0].params.size(), 4u);
  ASSERT_EQ(s.kernels[0].attributes.size(), 1u);
  EXPECT_EQ(src.substr(s.kernels[0].attributes[0].begin,
                       s.kernels[0].attributes[0].end - s.kernels[0].attributes[0].begin),
            "__launch_bounds__(256)");
  EXPECT_EQ(s.kernels[1].name, "second");
  EXPECT_EQ(s.kernels[1].line, 21);
  ASSERT_EQ(s.symbols.size(), 1u);  // TILE_WIDTH (LONG_MACRO is an expression, TWICE a function-like macro)
  EXPECT_EQ(s.symbols[0].name, "TILE_WIDTH");
  EXPECT_EQ(s.symbols[0].value, 16);
  EXPECT_EQ(s.symbols[0].line, 6);
  const std::string dev = blank_spans(src, s.host_code);
  EXPECT_EQ(std::count(dev.begin(), dev.end(), '\n'), std::count(src.begin(), src.end(), '\n'));
  EXPECT_EQ(dev.find("stdio.h"), std::string::npos);
  EXPECT_NE(dev.find("cuda_fp16.h"), std::string::npos);  // a device header NVRTC knows
  EXPECT_NE(dev.find("local.h"), std::string::npos);      // resolved next to the file
  EXPECT_EQ(dev.find("int main"), std::string::npos);
  EXPECT_EQ(dev.find("d_A"), std::string::npos);
  EXPECT_EQ(dev.find("using namespace"), std::string::npos);
  EXPECT_NE(dev.find("__device__ float helper"), std::string::npos);
  EXPECT_NE(dev.find("banner"), std::string::npos);  // a const global stays (device code may use constants)
  bool noted_main = false;
  for (const auto& n : s.notes)
    noted_main = noted_main || n.find("host function main (line 24)") != std::string::npos;
  EXPECT_TRUE(noted_main);
}

TEST(SourceScanner, SurvivesGarbageAndPathologicalNestingQuickly) {
  // Random sequences of what trips scanners up: brackets, quotes, comment starts, continuations, directives,
  // keywords. Every one is scanned to the end (no crash, no endless loop), and whatever is "found" has sane
  // spans.
  const std::vector<std::string> pieces = {"{",
                                           "}",
                                           "(",
                                           ")",
                                           "<",
                                           ">",
                                           "[",
                                           "]",
                                           ";",
                                           ",",
                                           "=",
                                           "\"",
                                           "'",
                                           "/*",
                                           "*/",
                                           "//",
                                           "\\\n",
                                           "\n",
                                           "#define T 16\n",
                                           "#include <x>\n",
                                           "__global__",
                                           "void",
                                           "k",
                                           "float*",
                                           "int",
                                           "template",
                                           "namespace",
                                           "extern \"C\"",
                                           "R\"(",
                                           ")\"",
                                           "__launch_bounds__",
                                           "const",
                                           "N",
                                           " "};
  std::mt19937 rng(12);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int n = 50 + int(rng() % 3000);
    for (int i = 0; i < n; ++i) text += pieces[rng() % pieces.size()];
    const SourceScan s = scan_cuda_source(text);
    for (const auto& k : s.kernels) {
      EXPECT_LE(k.body.begin, k.body.end);
      EXPECT_LE(k.body.end, text.size());
      EXPECT_LE(k.params_span.end, text.size());
    }
    for (const auto& h : s.host_code) EXPECT_LE(h.end, text.size());
    const std::string dev = blank_spans(text, s.host_code);
    EXPECT_EQ(dev.size(), text.size());
  }
  // A million unclosed brackets of each kind (a scanner quadratic in them would run into the test's timeout).
  for (const char* c : {"{", "(", "[", "<"}) {
    std::string deep;
    for (int i = 0; i < 1000000; ++i) deep += c;
    EXPECT_TRUE(scan_cuda_source("__global__ void k(" + deep).kernels.empty());
  }
}

TEST(SourceScanner, NamesWhatItCannotFindOrChoose) {
  EXPECT_NE(error_of([] {
              choose_kernel(scan_cuda_source("int main() { return 0; }"), "", "plain.cu");
            }).find("plain.cu has no __global__ function"),
            std::string::npos);
  const SourceScan two = scan_cuda_source(
      "__global__ void a(float* A, float* B, float* C, int N) {}\n"
      "__global__ void b(float* A, float* B, float* C, int N) {}\n");
  const std::string e = error_of([&] { choose_kernel(two, "", "two.cu"); });
  EXPECT_NE(e.find("2 __global__ functions: a (line 1), b (line 2); choose one with --kernel NAME"),
            std::string::npos)
      << e;
  EXPECT_EQ(choose_kernel(two, "b", "two.cu").name, "b");
  EXPECT_NE(error_of([&] { choose_kernel(two, "c", "two.cu"); }).find("no __global__ function called 'c'"),
            std::string::npos);
}

// [SECTION] Parameter roles on a corpus of signatures people write.
TEST(ParamMapping, TheClassicLearnerSignatures) {
  struct Case {
    std::string source;
    std::vector<std::string> roles;
    bool square;
    std::string tile;
  };
  const std::vector<Case> corpus = {
      // The shapes the issue quotes.
      {"#define TILE_WIDTH 16\n__global__ void matmul_kernel(float* C, float* A, float* B, int N) {}",
       {"C", "A", "B", "N"},
       true,
       "TILE_WIDTH"},
      {"#define TILE 32\n__global__ void mm(const float* A, const float* B, float* C, int N) {}",
       {"A", "B", "C", "N"},
       true,
       "TILE"},
      {"#define BLOCK_SIZE 16\n__global__ void matrixMul(float* C, float* A, float* B, int wA, int wB) {}",
       {"C", "A", "B", "K", "N"},
       false,
       "BLOCK_SIZE"},
      // Kirk & Hwu (PMPP): Md, Nd, Pd and M, N, P with one Width.
      {"#define TILE_WIDTH 16\n__global__ void MatrixMulKernel(float* Md, float* Nd, float* Pd, int Width) "
       "{}",
       {"A", "B", "C", "N"},
       true,
       "TILE_WIDTH"},
      {"__global__ void MatrixMulKernel(float* M, float* N, float* P, int Width) {}",
       {"A", "B", "C", "N"},
       true,
       ""},
      // The UIUC course's numARows ... numCColumns.
      {"#define TILE_WIDTH 16\n__global__ void matrixMultiplyShared(float *A, float *B, float *C, int "
       "numARows, "
       "int numAColumns, int numBRows, int numBColumns, int numCRows, int numCColumns) {}",
       {"A", "B", "C", "M", "K", "K", "N", "M", "N"},
       false,
       "TILE_WIDTH"},
      // siboehm's SGEMM: sizes first, alpha and beta.
      {"template <const uint BLOCKSIZE>\n__global__ void sgemm_shared_mem_block(int M, int N, int K, float "
       "alpha, "
       "const float *A, const float *B, float beta, float *C) {}",
       {"M", "N", "K", "1", "A", "B", "0", "C"},
       false,
       "BLOCKSIZE"},
      {"__global__ void gemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ "
       "out, "
       "int m, int n, int k) {}",
       {"A", "B", "C", "M", "N", "K"},
       false,
       ""},
      // Unknown names: const inputs, the writable one is C; the lone integer is N.
      {"__global__ void f(const float* x, const float* w, float* y, int len) {}",
       {"A", "B", "C", "N"},
       true,
       ""},
      {"__global__ void g(float* p0, float* p1, float* p2, size_t n) {}", {"A", "B", "C", "N"}, true, ""},
      {"#define N 1024\n#define TILE 16\n__global__ void fixed(float* a, float* b, float* c) {}",
       {"A", "B", "C"},
       true,
       "TILE"},
  };
  for (const Case& c : corpus) {
    SCOPED_TRACE(c.source);
    const Understood x = understand(c.source);
    EXPECT_EQ(roles(x), c.roles);
    EXPECT_EQ(x.u.square_only, c.square);
    if (!c.tile.empty()) EXPECT_EQ(x.u.spec.tile_symbol, c.tile);
    EXPECT_NO_THROW(validate_spec(*x.u.decl, x.u.spec));
  }
}

TEST(ParamMapping, ASignatureItCannotMapIsRefusedSayingWhatItUnderstood) {
  struct Case {
    std::string source, says;
  };
  const std::vector<Case> cases = {
      {"typedef struct { int width; float* elements; } Matrix;\n"
       "__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {}",
       "parameter 'A' is of type 'Matrix': TileScope passes float pointers"},
      {"__global__ void d(double* A, double* B, double* C, int N) {}", "a pointer to double"},
      {"__global__ void four(float* A, float* B, float* C, float* bias, int N) {}",
       "this kernel takes 4 float pointers"},
      {"__global__ void two(float* A, float* C, int N) {}", "takes only 2"},
      {"__global__ void q(float* A, float* B, float* C, int p, int q2, int r) {}",
       "parameter 'p' (int p) is not mapped: an integer whose name TileScope does not know"},
      {"__global__ void nosize(float* A, float* B, float* C) {}", "the kernel is told no size"},
      {"template <typename T, int TILE>\n__global__ void tt(const T* A, const T* B, T* C, int N) {}",
       "TileScope instantiates templates with one integer parameter"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source);
    const Understood x = understand(c.source);
    const std::string e = error_of([&] { validate_spec(*x.u.decl, x.u.spec); });
    EXPECT_NE(e.find(c.says), std::string::npos) << e;
    EXPECT_NE(e.find("What TileScope understood:"), std::string::npos) << e;
  }
}

TEST(ParamMapping, CorrectionsFromTheCommandLineAreCheckedAgainstTheSignature) {
  Understood x = understand("__global__ void q(float* A, float* B, float* C, int p, int q2, int r) {}");
  apply_param_override(*x.u.decl, x.u.spec, "p=M");
  apply_param_override(*x.u.decl, x.u.spec, "q2=N");
  apply_param_override(*x.u.decl, x.u.spec, "r=K");
  EXPECT_NO_THROW(validate_spec(*x.u.decl, x.u.spec));
  EXPECT_FALSE(is_square_only(x.u.spec));
  apply_param_override(*x.u.decl, x.u.spec, "A=B");
  apply_param_override(*x.u.decl, x.u.spec, "B=A");
  EXPECT_EQ(roles(x), (std::vector<std::string>{"B", "A", "C", "M", "N", "K"}));
  EXPECT_NE(error_of([&] { apply_param_override(*x.u.decl, x.u.spec, "zz=K"); }).find("no parameter 'zz'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { apply_param_override(*x.u.decl, x.u.spec, "p=A"); }).find("not a float pointer"),
            std::string::npos);
  EXPECT_NE(error_of([&] { apply_param_override(*x.u.decl, x.u.spec, "C=K"); }).find("takes A, B or C"),
            std::string::npos);
  EXPECT_NE(error_of([&] { apply_param_override(*x.u.decl, x.u.spec, "p"); }).find("is not NAME=ROLE"),
            std::string::npos);
  x.u.spec.params[0].role = ParamRole::A;  // two A's, no B
  EXPECT_NE(error_of([&] { validate_spec(*x.u.decl, x.u.spec); }).find("no parameter is the matrix B"),
            std::string::npos);
}

TEST(ParamMapping, ArgumentsAreEvaluatedAndCheckedAgainstTheirTypes) {
  const Understood x =
      understand("__global__ void k(float* A, float* B, float* C, int wA, unsigned wB, float alpha) {}");
  const auto args = kernel_args(*x.u.decl, x.u.spec, ExprVars{100, 300, 200, 16});
  ASSERT_EQ(args.size(), 6u);
  EXPECT_EQ(args[3].value, 200);  // wA = K
  EXPECT_EQ(args[4].value, 300);  // wB = N
  EXPECT_EQ(args[5].value, 1);    // alpha
  UserKernelSpec s = x.u.spec;
  s.params[3].value = "M * N * K";
  EXPECT_NE(error_of([&] {
              kernel_args(*x.u.decl, s, ExprVars{4096, 4096, 4096, 16});
            }).find("does not fit the kernel's int wA"),
            std::string::npos);
}

// [SECTION] Launch geometry and the limits every device shares.
TEST(UserLaunch, DefaultGeometryCoversCAndLimitsAreRefusedWithTheNumbers) {
  const Understood x =
      understand("#define TILE 16\n__global__ void k(float* A, float* B, float* C, int M, int N, int K) {}");
  const LaunchGeometry g = launch_geometry(x.u.spec, ExprVars{100, 300, 7, 16});
  EXPECT_EQ(g.grid, (std::array<int64_t, 3>{19, 7, 1}));  // ceil(300 / 16), ceil(100 / 16)
  EXPECT_EQ(g.block, (std::array<int64_t, 3>{16, 16, 1}));
  EXPECT_EQ(g.smem, 0);
  const std::string e = error_of([&] { launch_geometry(x.u.spec, ExprVars{100, 300, 7, 64}); });
  EXPECT_NE(e.find("block = 64 x 64 x 1 = 4096 threads"), std::string::npos) << e;
  EXPECT_NE(e.find("TILE = 64"), std::string::npos) << e;
  EXPECT_NE(e.find("at most 1024 threads"), std::string::npos) << e;
  UserKernelSpec s = x.u.spec;
  s.grid[1] = "M";
  EXPECT_NE(error_of([&] {
              launch_geometry(s, ExprVars{70000, 16, 16, 16});
            }).find("grid y may be at most 65535"),
            std::string::npos);
  s.grid[1] = "M - M";
  EXPECT_NE(error_of([&] {
              launch_geometry(s, ExprVars{16, 16, 16, 16});
            }).find("must be at least 1"),
            std::string::npos);
}

// [SECTION] What NVRTC compiles.
TEST(UserBuild, ThePlainBuildSubstitutesTheTileInPlaceAndKeepsEveryLine) {
  const std::string src =
      "#include <cstdio>\n#define TILE_WIDTH 16\n__global__ void k(float* C, float* A, float* B, int N) {\n"
      "  __shared__ float s[TILE_WIDTH][TILE_WIDTH];\n}\nint main() { printf(\"hi\"); }\n";
  KernelSource ks;
  ks.text = src;
  const Understood x = understand(src);
  const BuildSource b = plain_build(ks, x.scan, *x.u.decl, x.u.spec, 32, {});
  EXPECT_NE(b.source.find("#define TILE_WIDTH 32\n"), std::string::npos) << b.source;
  EXPECT_EQ(std::count(b.source.begin(), b.source.end(), '\n'), std::count(src.begin(), src.end(), '\n'));
  EXPECT_EQ(b.source.find("printf"), std::string::npos);
  EXPECT_EQ(b.name_expression, "&k");
  EXPECT_TRUE(b.defines.empty());
  // A tile name used but never defined (the person passed -DTILE=... to nvcc) is defined on the command line.
  const std::string undefined =
      "__global__ void u(float* A, float* B, float* C, int N) { float s[TILE][TILE]; }";
  KernelSource ku;
  ku.text = undefined;
  const Understood y = understand(undefined);
  EXPECT_EQ(y.u.spec.tile_symbol, "TILE");
  EXPECT_EQ(plain_build(ku, y.scan, *y.u.decl, y.u.spec, 8, {}).defines,
            std::vector<std::string>{"-DTILE=8"});
  // A template kernel is instantiated at the tile.
  const std::string templ =
      "template <int TILE>\n__global__ void t(const float* A, const float* B, float* C, int N) {}";
  KernelSource kt;
  kt.text = templ;
  const Understood z = understand(templ);
  EXPECT_EQ(z.u.spec.tile_symbol, "TILE");
  EXPECT_EQ(plain_build(kt, z.scan, *z.u.decl, z.u.spec, 32, {}).name_expression, "&t<32>");
  // Size macros are substituted per problem.
  const std::string fixed = "#define N 1024\n__global__ void f(float* A, float* B, float* C) {}";
  KernelSource kf;
  kf.text = fixed;
  const Understood w = understand(fixed);
  EXPECT_NE(plain_build(kf, w.scan, *w.u.decl, w.u.spec, 16, build_sizes(w.u.spec, {96, 96, 96, 16}))
                .source.find("#define N 96"),
            std::string::npos);
}

TEST(UserBuild, TheTracedBuildWrapsTheBodyWithoutTheKernelChanging) {
  const std::string src =
      "#define TILE 16\n__global__ void __launch_bounds__(256) mm(const float* A, const float* B, float* C, "
      "int N) {\n"
      "  int r = blockIdx.y * TILE + threadIdx.y;\n  if (r >= N) return;\n}\n";
  KernelSource ks;
  ks.text = src;
  const Understood x = understand(src);
  std::string why;
  const auto b = traced_build(ks, x.scan, *x.u.decl, x.u.spec, 16, {}, 32, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_NE(b->source.find("__device__ __forceinline__ void  mm__tilescope_body("), std::string::npos)
      << b->source;
  EXPECT_NE(
      b->source.find("extern \"C\" __global__ void __launch_bounds__(256) tilescope_traced(const float* A, "
                     "const float* B, float* C, int N, unsigned long long* tilescope_trace_)"),
      std::string::npos)
      << b->source;
  EXPECT_NE(b->source.find("mm__tilescope_body(A, B, C, N);"), std::string::npos);
  EXPECT_NE(b->source.find("%%smid"), std::string::npos);
  EXPECT_EQ(b->name_expression, "&tilescope_traced");
  // Without __launch_bounds__, the traced kernel is capped at the plain build's registers.
  const std::string plain = "__global__ void p(float* A, float* B, float* C, int N) {}";
  KernelSource kp;
  kp.text = plain;
  const Understood y = understand(plain);
  EXPECT_NE(traced_build(kp, y.scan, *y.u.decl, y.u.spec, 16, {}, 40, &why)
                ->source.find("__maxnreg__(40) tilescope_traced"),
            std::string::npos);
  // What cannot be traced says why.
  const std::string unnamed = "__global__ void u(float* A, float* B, float* C, int) {}";
  KernelSource ku;
  ku.text = unnamed;
  const SourceScan su = scan_cuda_source(unnamed);
  KernelUnderstanding uu = understand_kernel(su, su.kernels[0]);
  EXPECT_FALSE(traced_build(ku, su, su.kernels[0], uu.spec, 16, {}, 0, &why));
  EXPECT_NE(why.find("has no name"), std::string::npos);
}

// [SECTION] The compiler's log.
TEST(CompilerLog, DiagnosticsCarryTheirLinesAndPtxasReportsTheResources) {
  const std::string log =
      "my.cu(12): error: identifier \"TILE_WDTH\" is undefined\n"
      "      __shared__ float As[TILE_WDTH][TILE_WIDTH];\n"
      "                          ^\n\n"
      "my.cu(5): warning #177-D: variable \"x\" was declared but never referenced\n"
      "1 error detected in the compilation of \"my.cu\".\n";
  const auto d = parse_nvrtc_log(log);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].line, 12);
  EXPECT_EQ(d[0].severity, "error");
  EXPECT_EQ(d[0].message, "identifier \"TILE_WDTH\" is undefined");
  EXPECT_NE(d[0].context.find("^"), std::string::npos);
  EXPECT_EQ(d[1].line, 5);
  EXPECT_EQ(d[1].severity, "warning #177-D");
  EXPECT_EQ(describe_errors(d, 5), "line 17: identifier \"TILE_WDTH\" is undefined\n");
  const std::string ptxas =
      "ptxas info    : 2 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z5otherv' for 'sm_90'\n"
      "ptxas info    : Used 8 registers\n"
      "ptxas info    : Compiling entry function '_Z13matmul_kernelPfS_S_i' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z13matmul_kernelPfS_S_i\n"
      "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem, 380 bytes cmem[0]\n";
  const PtxasResources r = parse_ptxas_info(ptxas, "_Z13matmul_kernelPfS_S_i");
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.regs, 32);
  EXPECT_EQ(r.barriers, 1);
  EXPECT_EQ(r.static_smem, 2048);
  EXPECT_EQ(r.stack_bytes, 16);
  EXPECT_EQ(r.spill_stores, 8);
  EXPECT_EQ(r.spill_loads, 4);
  EXPECT_EQ(r.cmem0, 380);
  EXPECT_FALSE(parse_ptxas_info(ptxas, "_Z7missingv").found);
  EXPECT_EQ(parse_ptxas_info(ptxas, "_Z5otherv").regs, 8);
}

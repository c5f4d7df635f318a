// The kernel scanner and the KernelBench (.py) extraction against hostile input (issue 26, items 6 and 14).
// Linear work: no clock anywhere. The scanner counts every byte and token it looks at (SourceScan::work, the
// `work` of extract_load_inline_source), and each hostile input, made here at growing sizes, must cost at
// most a fixed number of steps per byte of input, at every size: a quadratic path makes the ratio grow with
// the size and fails at the second or third size already. Kernels found however they are spelled: a macro for
// __global__, UTF-8 names, CR-only and CRLF line ends, a byte order mark, namespaces nested deeper than 64.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/user_kernel/kernel_source.hpp"
#include "core/engine/problem.hpp"
#include "core/user_kernel/user_kernel.hpp"

using namespace ts;

namespace {

// Steps per byte of input that any input may cost (the hostile inputs below need 1 to about 21 at 64,000
// repetitions; the quadratic paths of issue 26, put back one at a time, cost 85-1000 already at 1,000).
constexpr double kStepsPerByte = 64.0;
const int kSizes[] = {1000, 4000, 16000, 64000};

std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * size_t(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Scans make(n) for each size and checks the work per byte stays under the bound at every size.
void expect_linear_scan(const std::function<std::string(int)>& make) {
  for (const int n : kSizes) {
    const std::string text = make(n);
    ASSERT_LE(int64_t(text.size()), kMaxKernelSourceBytes);
    const SourceScan scan = scan_cuda_source(text);
    const double per_byte = double(scan.work) / double(text.size());
    ASSERT_LE(per_byte, kStepsPerByte)
        << n << " repetitions, " << text.size() << " bytes: " << scan.work << " steps";
    ASSERT_GT(scan.work, text.size()) << "the scan looked at every byte";
  }
}

void expect_linear_python(const std::function<std::string(int)>& make) {
  for (const int n : kSizes) {
    const std::string py = make(n);
    uint64_t work = 0;
    int first = 0;
    try {
      extract_load_inline_source(py, "hostile.py", &first, &work);
    } catch (const ValidationError&) {
      // Refused or not: the work is counted either way.
    }
    const double per_byte = double(work) / double(py.size());
    ASSERT_LE(per_byte, kStepsPerByte)
        << n << " repetitions, " << py.size() << " bytes: " << work << " steps";
  }
}

const char* kKernelText =
    "__global__ void k(const float* A, const float* B, float* C, int N) { C[0] = A[0] + B[0]; }\n";

}  // namespace

// [SECTION] Linear work, whatever the input (item 6).
TEST(KernelScannerWork, EightyThousandDefinesCostLinearWork) {
  expect_linear_scan([](int n) { return repeat("#define D 1\n", n); });
  // The file (80k lines, 0.96 MB), and each symbol's line is still right.
  const std::string text = repeat("#define D 1\n", 80000) + kKernelText;
  const SourceScan scan = scan_cuda_source(text);
  EXPECT_LE(double(scan.work) / double(text.size()), kStepsPerByte);
  ASSERT_EQ(scan.symbols.size(), 80000u);
  EXPECT_EQ(scan.symbols.back().line, 80000);
  ASSERT_EQ(scan.kernels.size(), 1u);
  EXPECT_EQ(scan.kernels[0].line, 80001);
}

TEST(KernelScannerWork, ABraceListCostsLinearWork) {
  expect_linear_scan([](int n) { return repeat("{0},", n); });
  expect_linear_scan([](int n) { return "int table[] = " + repeat("{0},", n) + "{0};\n" + kKernelText; });
  expect_linear_scan([](int n) { return "__device__ int t = " + repeat("{0},", n); });
  // The 200k (800 KB), and the kernel after it is still found.
  const std::string text = "int table[] = " + repeat("{0},", 200000) + "{0};\n" + kKernelText;
  const SourceScan scan = scan_cuda_source(text);
  EXPECT_LE(double(scan.work) / double(text.size()), kStepsPerByte);
  ASSERT_EQ(scan.kernels.size(), 1u);
  EXPECT_EQ(scan.kernels[0].name, "k");
}

TEST(KernelScannerWork, DeepNestingCostsLinearWork) {
  expect_linear_scan([](int n) { return repeat("namespace a {\n", n) + kKernelText + repeat("}\n", n); });
  expect_linear_scan([](int n) { return repeat("extern \"C\" {\n", n) + kKernelText; });
  expect_linear_scan([](int n) { return repeat("(", n) + kKernelText; });
  expect_linear_scan([](int n) { return repeat("{", n) + kKernelText; });
  expect_linear_scan([](int n) { return repeat("}", n) + kKernelText; });
  expect_linear_scan([](int n) { return repeat("[", n); });
  expect_linear_scan([](int n) { return "__global__ void k(" + repeat("(", n); });
  expect_linear_scan([](int n) { return "template <" + repeat("<", n) + "> __global__ void k() {}"; });
  expect_linear_scan([](int n) { return "__global__ void k() {" + repeat("{", n); });
}

TEST(KernelScannerWork, ManyKernelsInALongNamespaceShareItsName) {
  // Each kernel names its namespace by index: a copy of a 100 KB name per kernel would be quadratic.
  expect_linear_scan([](int n) {
    return "namespace " + std::string(size_t(n) * 4, 'n') + " {\n" +
           repeat("__global__ void k(float* A) {}\n", n) + "}\n";
  });
  const SourceScan scan = scan_cuda_source("namespace " + std::string(100000, 'n') + " {\n" +
                                           repeat("__global__ void k(float* A) {}\n", 20000) + "}\n");
  ASSERT_EQ(scan.kernels.size(), 20000u);
  EXPECT_EQ(scan.scope_of(scan.kernels.back()), std::string(100000, 'n') + "::");
}

TEST(KernelScannerWork, OtherHostileTextCostsLinearWork) {
  expect_linear_scan([](int n) { return repeat("struct S {0}, ", n); });
  expect_linear_scan([](int n) { return repeat("__global__ void k(float* A) {}\n", n); });
  expect_linear_scan([](int n) { return repeat("/*", n); });
  expect_linear_scan([](int n) { return repeat("R\"x(", n); });
  expect_linear_scan([](int n) { return repeat("\"\\", n); });
  expect_linear_scan([](int n) { return repeat("#define T\\\n", n); });
  expect_linear_scan([](int n) { return repeat("template <int T> ", n) + kKernelText; });
  expect_linear_scan([](int n) { return repeat("const int TILE = 16;\n", n) + kKernelText; });
  expect_linear_scan([](int n) { return "__global__ void k(" + repeat("float* a, ", n) + "float* z) {}"; });
  // Macros naming macros: defined and used in turn, each use followed a bounded number of steps.
  expect_linear_scan([](int n) {
    std::string s = "#define M0 __global__\n";
    for (int i = 1; i < n / 8; ++i)
      s += "#define M" + std::to_string(i) + " M" + std::to_string(i - 1) + " M" + std::to_string(i - 1) +
           "\nM" + std::to_string(i) + " void k" + std::to_string(i) + "() {}\n";
    return s;
  });
  expect_linear_scan([](int n) {
    return "#define G __global__\n#define K " + repeat("G ", n) + "\n" + repeat("K void k() {}\n", n / 4);
  });
}

TEST(KernelScannerWork, FortyThousandLoadInlineCallsCostLinearWork) {
  expect_linear_python([](int n) { return repeat("load_inline(", n); });
  expect_linear_python([](int n) { return repeat("load_inline(x=(", n) + "cuda_sources=src)"; });
  expect_linear_python([](int n) { return repeat("'\\'", n); });        // unterminated, escaped quotes
  expect_linear_python([](int n) { return repeat("\"\"\"\\\"", n); });  // unterminated triple quotes
  expect_linear_python([](int n) { return repeat("src = 'x'\n", n) + "load_inline(cuda_sources=src)"; });
  // The 40k calls (480 KB): refused with its reason, after linear work.
  uint64_t work = 0;
  int first = 0;
  const std::string py = repeat("load_inline(", 40000);
  try {
    extract_load_inline_source(py, "calls.py", &first, &work);
    ADD_FAILURE() << "accepted";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("has no cuda_sources argument"), std::string::npos) << e.what();
  }
  EXPECT_LE(double(work) / double(py.size()), kStepsPerByte);
}

TEST(KernelScannerWork, EightyThousandSymbolEditsOfAnotherLengthAreAllApplied) {
  // 80,000 `#define N 1` set to the size: the build's edits, each of another length, all applied (in one copy
  // of the text now, where each edit used to move the rest of the text: not counted here, see apply_edits).
  const std::string text =
      repeat("#define N 1\n", 80000) + "__global__ void k(float* A, float* B, float* C) {}\n";
  KernelSource src;
  src.text = text;
  const SourceScan scan = scan_cuda_source(text);
  const KernelUnderstanding u = understand_kernel(scan, scan.kernels.at(0));
  ASSERT_EQ(u.spec.size_symbols.size(), 1u);
  const BuildSource b = plain_build(src, scan, scan.kernels[0], u.spec, 16, {1024, 1024, 1024, 16});
  EXPECT_EQ(b.source.size(), text.size() + 80000 * 3);
  EXPECT_EQ(b.source.compare(0, 15, "#define N 1024\n"), 0);
}

// [SECTION] Kernels found however they are spelled (item 14).
TEST(KernelScannerSpelling, AMacroForGlobalIsResolved) {
  const SourceScan s = scan_cuda_source(
      "#define KERNEL __global__\nKERNEL void mm(const float* A, const float* B, float* C, int N) {}\n");
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels[0].name, "mm");
  EXPECT_EQ(s.kernels[0].line, 2);
  EXPECT_EQ(s.kernels[0].params.size(), 4u);
  EXPECT_TRUE(s.host_code.empty());
  // The traced build turns the macro's use into a device function, as it does __global__ itself.
  const std::string& t =
      "#define KERNEL __global__\nKERNEL void mm(const float* A, const float* B, float* C, int N) {}\n";
  EXPECT_EQ(t.substr(s.kernels[0].global_kw.begin, s.kernels[0].global_kw.end - s.kernels[0].global_kw.begin),
            "KERNEL");

  // Through other macros, defined before or after, and with more in the replacement.
  const SourceScan chain = scan_cuda_source(
      "#define KERNEL G __launch_bounds__(256)\n#define G extern \"C\" __global__ /* the kernel */\n"
      "KERNEL void mm(float* A, float* B, float* C, int N) {}\n");
  ASSERT_EQ(chain.kernels.size(), 1u);
  EXPECT_EQ(chain.kernels[0].line, 3);

  // Not a kernel: a macro after its #undef, a macro whose replacement only has __global__ in a string or a
  // comment, a function-like macro of the same name, a macro for __device__ (kept for NVRTC, not host code).
  const std::string odd =
      "#define KERNEL __global__\n#undef KERNEL\nKERNEL void a() {}\n"
      "#define S \"__global__\" // __global__\nS void b() {}\n"
      "#define G __global__\n#define G(x) x\nG void c() {}\n"
      "#define DEV __device__ __forceinline__\nDEV float twice(float x) { return 2 * x; }\n";
  const SourceScan none = scan_cuda_source(odd);
  EXPECT_TRUE(none.kernels.empty());
  ASSERT_EQ(none.host_code.size(), 3u);  // a, b and c are host functions; twice is device code
  const std::string dev = blank_spans(odd, none.host_code);
  EXPECT_EQ(dev.find("void a"), std::string::npos);
  EXPECT_EQ(dev.find("void b"), std::string::npos);
  EXPECT_EQ(dev.find("void c"), std::string::npos);
  EXPECT_NE(dev.find("DEV float twice(float x) { return 2 * x; }"), std::string::npos);
}

TEST(KernelScannerSpelling, UTF8KernelNamesAreFound) {
  const std::string text =
      "__global__ void matmul_\xc3\xbc(float* A, float* B, float* C, int N) {}\n"
      "__global__ void \xe6\xa0\xb8(float* A, float* B, float* C, int N) {}\n";
  const SourceScan s = scan_cuda_source(text);
  ASSERT_EQ(s.kernels.size(), 2u);
  EXPECT_EQ(s.kernels[0].name, "matmul_\xc3\xbc");
  EXPECT_EQ(s.kernels[1].name, "\xe6\xa0\xb8");
  EXPECT_EQ(s.kernels[1].line, 2);
  // And in a .py: a UTF-8 name bound to the source.
  int first = 0;
  EXPECT_EQ(extract_load_inline_source(
                "\xe6\xba\x90 = '''__global__ void k() {}'''\nload_inline(cuda_sources=\xe6\xba\x90)\n",
                "u.py", &first),
            "__global__ void k() {}");
}

TEST(KernelScannerSpelling, CROnlyAndCRLFLineEndsAreLineEnds) {
  for (const std::string nl : {"\r", "\r\n"}) {
    const std::string text = "#include <cstdio>" + nl + "#define TILE 16" + nl + "// a comment \\" + nl +
                             "continued" + nl + "__global__ void k(float* A, float* B, float* C, int N)" +
                             nl + "{ C[0] = TILE; }" + nl + "int main() {" + nl + " return 0;" + nl + "}" +
                             nl;
    const SourceScan s = scan_cuda_source(text);
    ASSERT_EQ(s.kernels.size(), 1u) << (nl == "\r" ? "CR" : "CRLF");
    EXPECT_EQ(s.kernels[0].line, 5);
    ASSERT_EQ(s.symbols.size(), 1u);
    EXPECT_EQ(s.symbols[0].name, "TILE");
    EXPECT_EQ(s.symbols[0].line, 2);
    EXPECT_EQ(s.lines, 10);
    ASSERT_EQ(s.host_code.size(), 2u);  // <cstdio> and main, their line ends kept
    const std::string dev = blank_spans(text, s.host_code);
    EXPECT_EQ(std::count(dev.begin(), dev.end(), '\r'), std::count(text.begin(), text.end(), '\r'));
  }
  // What NVRTC gets from a CR-only file: LF, the same length (so lines and offsets stay).
  const KernelSource src =
      kernel_source_from_text("#define TILE 16\r__global__ void k(float* A) {}\r", "cr.cu", false);
  EXPECT_EQ(src.text, "#define TILE 16\n__global__ void k(float* A) {}\n");
  EXPECT_TRUE(src.normalised);
  EXPECT_FALSE(kernel_source_from_text("a\r\nb\n", "crlf.cu", false).normalised);
  EXPECT_EQ(line_of("a\rb\r\nc\nd", 7), 4);
  // A refusal names the line as the person's editor shows it.
  EXPECT_THROW(
      try { kernel_source_from_text("a\rb\rc\xff\r", "bad.cu", false); } catch (const ValidationError& e) {
        EXPECT_NE(std::string(e.what()).find("(line 3)"), std::string::npos) << e.what();
        throw;
      },
      ValidationError);
  // A CR-only .py.
  const KernelSource py = kernel_source_from_text(
      "# a comment\rsrc = '''\r__global__ void k(float* A) {}\r'''\rmod = load_inline(cuda_sources=src)\r",
      "cr.py", true);
  EXPECT_EQ(py.text, "\n__global__ void k(float* A) {}\n");
  EXPECT_EQ(py.first_line, 2);
}

TEST(KernelScannerSpelling, AByteOrderMarkIsNotAToken) {
  const std::string bom = "\xEF\xBB\xBF";
  const std::string body =
      "template <int TILE>\n__global__ void k(const float* A, const float* B, float* C, "
      "int N) { C[0] = TILE; }\n";
  const SourceScan s = scan_cuda_source(bom + body);
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels[0].template_params, "int TILE");
  EXPECT_EQ(s.kernels[0].line, 2);
  // The text NVRTC compiles has no BOM, and its lines are the file's.
  const KernelSource src = kernel_source_from_text(bom + body, "bom.cu", false);
  EXPECT_EQ(src.text, body);
  EXPECT_TRUE(src.normalised);
  const SourceScan scan = scan_cuda_source(src.text);
  const KernelUnderstanding u = understand_kernel(scan, scan.kernels.at(0));
  const BuildSource b = plain_build(src, scan, scan.kernels[0], u.spec, 16, {64, 64, 64, 16});
  EXPECT_EQ(b.source.find(bom), std::string::npos);
  EXPECT_EQ(b.source.compare(0, 19, "template <int TILE>"), 0);
  // A .py with a BOM: the name bound on its first line is still found.
  const KernelSource py = kernel_source_from_text(
      bom + "src = '__global__ void k() {}'\nload_inline(cuda_sources=src)\n", "b.py", true);
  EXPECT_EQ(py.text, "__global__ void k() {}");
  EXPECT_EQ(py.first_line, 1);
}

TEST(KernelScannerSpelling, NamespacesNestedDeeperThanSixtyFourAreFollowed) {
  for (const int depth : {65, 100, 5000}) {
    std::string text;
    for (int i = 0; i < depth; ++i) text += "namespace n" + std::to_string(i) + " {\n";
    text += kKernelText;
    for (int i = 0; i < depth; ++i) text += "}\n";
    text += "extern \"C\" {\n" + std::string("__global__ void after(float* A) {}\n") + "}\n";
    const SourceScan s = scan_cuda_source(text);
    ASSERT_EQ(s.kernels.size(), 2u) << depth;
    const std::string scope = s.scope_of(s.kernels[0]);
    EXPECT_EQ(scope.rfind("n0::n1::", 0), 0u);
    EXPECT_EQ(scope.size() - scope.rfind("::n" + std::to_string(depth - 1) + "::"),
              std::to_string(depth - 1).size() + 5);
    EXPECT_EQ(s.scope_of(s.kernels[1]), "");
  }
  const SourceScan in_inline = scan_cuda_source("inline namespace v1 {\n" + std::string(kKernelText) + "}\n");
  ASSERT_EQ(in_inline.kernels.size(), 1u);
  EXPECT_EQ(in_inline.scope_of(in_inline.kernels[0]), "v1::");
}

#pragma once
// [SECTION] Reading a person's kernel source: the file (a .cu, or a .py in the KernelBench answer format),
// the
// `__global__` functions in it with their parameters, the numeric macros and constants (where the tile size
// lives), and which parts are host code that NVRTC cannot compile (main(), cudaMalloc calls, system
// #includes). A hand-written scanner: it skips comments, string and character literals and line
// continuations, works in one pass over at most kMaxKernelSourceBytes, never recurses, and uses no regular
// expressions. Its work is linear in the size of the text whatever the text is (each byte and token is
// looked at a bounded number of times; SourceScan::work counts them, and the tests hold it to that).
// Nothing here compiles or runs anything.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

inline constexpr int64_t kMaxKernelSourceBytes = 4 << 20;  // 4 MiB: far beyond any hand-written kernel file

struct KernelSource {
  std::string path;   // as given ("" for text that came from the editor)
  std::string label;  // the name compiler messages use, e.g. "my.cu"
  std::string text;   // the CUDA source (for a .py file: the string passed to load_inline's cuda_sources)
  bool from_python = false;
  // `text` differs from the file's bytes besides the Python extraction: a UTF-8 byte order mark removed
  // (NVRTC takes it for a token) or lone CR line ends made LF (same length, so lines and offsets stay).
  bool normalised = false;
  int first_line = 1;  // line of the file on which `text` starts (1 for a .cu; inside the .py otherwise)
};

// Reads a kernel source from a file a person named: it must be a regular file of at most
// kMaxKernelSourceBytes holding text (no NUL byte, valid UTF-8). A .py file is searched for the CUDA source
// passed to torch's load_inline (cuda_sources=...), written as a string literal or a name bound to one; the
// torch host wrapper in it is ignored like any host code. Throws ValidationError naming the path and why.
KernelSource read_kernel_source(const std::string& path);
// The same checks for text (the editor's buffer). `label` names it in messages.
KernelSource kernel_source_from_text(std::string text, const std::string& label, bool python);
// The CUDA source inside a KernelBench answer (Python). Throws ValidationError saying what is missing.
// `first_line` receives the line on which the extracted text starts; `work`, when given, the number of bytes
// and tokens looked at (linear in the size of `python`: the tests check it).
std::string extract_load_inline_source(const std::string& python, const std::string& label, int* first_line,
                                       uint64_t* work = nullptr);
// What the compiler and the scanner take: a leading UTF-8 byte order mark removed, and every lone CR (a line
// end of old Macs) made LF, so that a line is a line for TileScope, NVRTC and the person's editor alike. CRLF
// stays as it is. Returns whether anything changed.
bool normalise_source_text(std::string* text);

// [SECTION] What the scanner finds.
enum class ParamType { F32Ptr, I32, U32, I64, U64, F32, F64, Unsupported };
const char* to_string(ParamType t);

struct KernelParam {
  std::string decl;  // the declaration as written, spaces normalised ("const float* __restrict__ A")
  std::string type;  // the declaration without its name ("const float* __restrict__")
  std::string name;  // "" when unnamed
  ParamType kind = ParamType::Unsupported;
  bool const_pointee = false;  // const float* (an input)
  std::string why;             // for Unsupported: what TileScope cannot pass, in words
};

struct Span {
  size_t begin = 0, end = 0;  // byte offsets into the text, [begin, end)
};

struct KernelDecl {
  std::string name;
  int scope = -1;  // the innermost namespace around it, an index into SourceScan::scopes (-1: file scope)
  int line = 0;    // of `__global__` (1-based, in KernelSource::text)
  std::vector<KernelParam> params;
  std::string template_params;  // "int TILE" for template <int TILE> (empty: not a template)
  Span global_kw;               // the `__global__` keyword (or the macro of the file that stands for it)
  Span name_span;
  Span params_span;              // between the parentheses, exclusive
  Span body;                     // from '{' to '}' inclusive
  std::vector<Span> attributes;  // __launch_bounds__(...), __maxnreg__(...) and the like, as written
  bool dynamic_smem = false;     // its body declares `extern __shared__`
};

// `#define NAME <integer>` or a `const`/`constexpr` integer NAME = <integer>; at file scope.
struct NumericSymbol {
  std::string name;
  int64_t value = 0;
  Span value_span;  // where the number is written (substituted when the Tile control binds the symbol)
  int line = 0;
  bool is_macro = true;  // false: a const variable
};

// A namespace block, `name` as written between `namespace` and `{` ("" for an anonymous one). Kernels point
// at theirs and each at its parent, so that no kernel holds a copy of a long chain of names.
struct ScopeNode {
  int parent = -1;
  std::string name;
};

struct SourceScan {
  std::vector<KernelDecl> kernels;
  std::vector<ScopeNode> scopes;
  std::vector<NumericSymbol> symbols;  // in source order; a name may appear more than once (#ifndef guards)
  std::vector<Span> host_code;         // host functions, host globals, system #includes: blanked for NVRTC
  std::vector<std::string> notes;      // what was left out, in words ("host function main (line 40)")
  std::vector<std::string>
      identifiers_used;  // identifiers in kernel bodies that look like a tile size but are
                         // never defined (expected from -D on a compiler command line)
  int lines = 0;
  uint64_t work = 0;  // bytes and tokens the scan looked at: at most a constant times the size of the text

  // The namespaces around a kernel, "ns::inner::" ("" at file scope).
  std::string scope_of(const KernelDecl& k) const;
};

// Scans `text`. Never throws for odd C++; stops at kMaxKernelSourceBytes (read_kernel_source refuses more).
SourceScan scan_cuda_source(const std::string& text);

// The source with every span replaced by spaces (newlines kept, so line numbers stay where they were).
std::string blank_spans(const std::string& text, const std::vector<Span>& spans);

// 1-based line of a byte offset (lines end at LF, CRLF or a lone CR).
int line_of(const std::string& text, size_t offset);

}  // namespace ts

#include "core/user_kernel/kernel_source.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "core/io/files.hpp"
#include "core/engine/problem.hpp"

namespace ts {

namespace fs = std::filesystem;

namespace {

// "<what> is 4.0 MiB (4194305 bytes); TileScope reads kernel sources of at most 4.0 MiB"
ValidationError too_large(const std::string& what, uint64_t bytes) {
  return ValidationError(what + " is " + format_bytes_exact(bytes) +
                         "; TileScope reads kernel sources of at most " +
                         format_bytes_exact(uint64_t(kMaxKernelSourceBytes)));
}

void check_text(const std::string& text, const std::string& label) {
  if (int64_t(text.size()) > kMaxKernelSourceBytes) throw too_large(label, text.size());
  if (const void* z = std::memchr(text.data(), 0, text.size()))
    throw ValidationError(label + " is not text: it holds a NUL byte at offset " +
                          std::to_string(static_cast<const char*>(z) - text.data()) +
                          " (a compiled file or an archive?)");
  const size_t bad = first_invalid_utf8(text);
  if (bad != std::string::npos)
    throw ValidationError(label + " is not text: the byte at offset " + std::to_string(bad) + " (line " +
                          std::to_string(line_of(text, bad)) + ") is not valid UTF-8");
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Identifiers may hold UTF-8 letters (C++ and Python both allow them, and nvcc and NVRTC compile them): every
// byte of a multi-byte character counts as an identifier character. (The text is valid UTF-8 by then.)
bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}

constexpr char kBom[] = "\xEF\xBB\xBF";

}  // namespace

int line_of(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  for (size_t i = 0; i < offset; ++i)  // LF, or a CR that no LF follows
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) ++line;
  return line;
}

std::string blank_spans(const std::string& text, const std::vector<Span>& spans) {
  std::string out = text;
  for (const Span& s : spans)
    for (size_t i = s.begin; i < s.end && i < out.size(); ++i)
      if (out[i] != '\n' && out[i] != '\r') out[i] = ' ';
  return out;
}

const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::F32Ptr:
      return "float*";
    case ParamType::I32:
      return "int";
    case ParamType::U32:
      return "unsigned int";
    case ParamType::I64:
      return "64-bit int";
    case ParamType::U64:
      return "64-bit unsigned";
    case ParamType::F32:
      return "float";
    case ParamType::F64:
      return "double";
    case ParamType::Unsupported:
      return "unsupported";
  }
  return "?";
}

// [SECTION] Reading files.
bool normalise_source_text(std::string* text) {
  std::string& t = *text;
  bool changed = false;
  if (t.compare(0, 3, kBom) == 0) {
    t.erase(0, 3);
    changed = true;
  }
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i] == '\r' && (i + 1 == t.size() || t[i + 1] != '\n')) {
      t[i] = '\n';
      changed = true;
    }
  return changed;
}

KernelSource kernel_source_from_text(std::string text, const std::string& label, bool python) {
  check_text(text, label);
  KernelSource s;
  s.label = label;
  s.normalised = normalise_source_text(&text);
  if (python) {
    int first = 1;
    s.text = extract_load_inline_source(text, label, &first);
    s.first_line = first;
    s.from_python = true;
  } else {
    s.text = std::move(text);
  }
  return s;
}

KernelSource read_kernel_source(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw ValidationError("kernel file " + path + " does not exist");
  if (fs::is_directory(st)) throw ValidationError("kernel file " + path + " is a folder, not a file");
  if (!fs::is_regular_file(st))
    throw ValidationError("kernel file " + path + " is not a regular file (a device, pipe or socket?)");
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) throw ValidationError("kernel file " + path + ": cannot read its size (" + ec.message() + ")");
  if (int64_t(size) > kMaxKernelSourceBytes) throw too_large("kernel file " + path, size);
  // Opened non-blocking and checked again once open (files.hpp): a path swapped for a FIFO meanwhile cannot
  // block the read.
  const InputFile f(path);
  if (int64_t(f.size()) > kMaxKernelSourceBytes) throw too_large("kernel file " + path, f.size());
  std::string text(size_t(f.size()), '\0');
  if (!f.read_at(0, text.data(), text.size()))
    throw ValidationError("kernel file " + path + " changed while it was read; try again");
  const std::string label = fs::path(path).filename().string();
  KernelSource s = kernel_source_from_text(std::move(text), "kernel file " + path, ends_with(path, ".py"));
  s.path = path;
  s.label = label;
  return s;
}

// [SECTION] KernelBench answers: the CUDA source of load_inline(cuda_sources=...) in a Python file.
namespace {

struct PyString {
  size_t begin = 0, end = 0;  // the literal, quotes included
  std::string value;          // decoded
  size_t content = 0;         // offset of the first character after the opening quotes
};

bool py_line_end(const std::string& s, size_t i) {
  return s[i] == '\n' || (s[i] == '\r' && (i + 1 == s.size() || s[i + 1] != '\n'));
}

// Reads a Python string literal starting at `i` (at its prefix or quote). Returns false if it is not one;
// `*stop` then receives where an unterminated literal ends (its line's end, or the end of the text for a
// triple-quoted one), so that nothing in it is read twice; or `i` when there is no quote at all.
bool read_py_string(const std::string& s, size_t i, PyString* out, size_t* stop, uint64_t* work) {
  size_t p = i;
  bool raw = false;
  *stop = i;
  while (p < s.size() && p < i + 2 && s[p] != '\0' && std::strchr("rRbBuUfF", s[p])) {
    if (s[p] == 'r' || s[p] == 'R') raw = true;
    ++p;
  }
  if (p >= s.size() || (s[p] != '"' && s[p] != '\'')) return false;
  const char q = s[p];
  const bool triple = p + 2 < s.size() && s[p + 1] == q && s[p + 2] == q;
  const size_t open = triple ? 3 : 1;
  size_t j = p + open;
  out->content = j;
  std::string v;
  for (;;) {
    ++*work;
    if (j >= s.size()) {  // unterminated
      *stop = s.size();
      return false;
    }
    const char c = s[j];
    if (c == '\\' && j + 1 < s.size()) {
      const char e = s[j + 1];
      if (raw) {
        v += c;
        v += e;
      } else if (e == 'n') {
        v += '\n';
      } else if (e == 't') {
        v += '\t';
      } else if (e == '\n' || e == '\r') {
        // a continued line: nothing (CRLF: the LF goes as well)
        if (e == '\r' && j + 2 < s.size() && s[j + 2] == '\n') ++j;
      } else if (e == '\\' || e == '\'' || e == '"') {
        v += e;
      } else {
        v += c;
        v += e;
      }
      j += 2;
      continue;
    }
    if (!triple && py_line_end(s, j)) {
      *stop = j;
      return false;
    }
    if (c == q && (!triple || (j + 2 < s.size() && s[j + 1] == q && s[j + 2] == q))) {
      out->begin = i;
      out->end = j + open;
      out->value = std::move(v);
      return true;
    }
    v += c;
    ++j;
  }
}

// Python tokens we need: identifiers, string literals, and single punctuation; comments skipped. One pass:
// every byte is read once by the tokenizer and at most once more by a string literal that starts before it.
struct PyTok {
  enum Kind { Ident, Str, Punct } kind;
  size_t pos;
  std::string text;  // identifier or punctuation
  PyString str;
};

std::vector<PyTok> py_tokens(const std::string& s, uint64_t* work) {
  std::vector<PyTok> t;
  size_t i = 0;
  while (i < s.size()) {
    ++*work;
    const char c = s[i];
    if (c == '#') {
      while (i < s.size() && !py_line_end(s, i)) {
        ++*work;
        ++i;
      }
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    PyString ps;
    size_t stop = i;
    if ((c == '"' || c == '\'' || (c != '\0' && std::strchr("rRbBuUfF", c))) &&
        read_py_string(s, i, &ps, &stop, work)) {
      t.push_back({PyTok::Str, i, "", ps});
      i = ps.end;
      continue;
    }
    if (stop > i) {  // an unterminated string: Python reads the rest of its line (or file) as its text
      i = stop;
      continue;
    }
    if (is_ident_start(c)) {
      size_t j = i;
      while (j < s.size() && is_ident_char(s[j])) ++j;
      *work += j - i;
      t.push_back({PyTok::Ident, i, s.substr(i, j - i), {}});
      i = j;
      continue;
    }
    t.push_back({PyTok::Punct, i, std::string(1, c), {}});
    ++i;
  }
  return t;
}

bool py_punct(const PyTok& t, char c) {
  return t.kind == PyTok::Punct && t.text[0] == c;
}

}  // namespace

std::string extract_load_inline_source(const std::string& py, const std::string& label, int* first_line,
                                       uint64_t* work) {
  uint64_t local_work = 0;
  if (!work) work = &local_work;
  const std::vector<PyTok> t = py_tokens(py, work);
  auto take = [&](const PyString& ps) {
    *work += ps.content;  // line_of counts the lines before it
    *first_line = line_of(py, ps.content);
    return ps.value;
  };
  // The name bound to the source: cuda_sources=NAME, cuda_sources=[NAME], or the literal itself; the first
  // `cuda_sources=` (in the file's order) inside the parentheses of a load_inline call. One pass, a stack of
  // the open brackets: which of them are load_inline's.
  std::string name;
  bool saw_call = false;
  std::vector<bool> open_brackets;  // true: the '(' of a load_inline call
  size_t open_calls = 0;
  for (size_t j = 0; j < t.size(); ++j) {
    ++*work;
    const PyTok& x = t[j];
    if (py_punct(x, '(') || py_punct(x, '[') || py_punct(x, '{')) {
      const bool call =
          py_punct(x, '(') && j > 0 && t[j - 1].kind == PyTok::Ident && t[j - 1].text == "load_inline";
      saw_call = saw_call || call;
      open_brackets.push_back(call);
      open_calls += call ? 1 : 0;
      continue;
    }
    if (py_punct(x, ')') || py_punct(x, ']') || py_punct(x, '}')) {
      if (!open_brackets.empty()) {
        open_calls -= open_brackets.back() ? 1 : 0;
        open_brackets.pop_back();
      }
      continue;
    }
    if (open_calls > 0 && x.kind == PyTok::Ident && x.text == "cuda_sources" && j + 2 < t.size() &&
        py_punct(t[j + 1], '=')) {
      size_t v = j + 2;
      if (py_punct(t[v], '[') && v + 1 < t.size()) ++v;
      if (t[v].kind == PyTok::Str) return take(t[v].str);
      if (t[v].kind == PyTok::Ident) {
        name = t[v].text;
        break;
      }
    }
  }
  if (!name.empty()) {
    // The last assignment NAME = "..." before the call wins; take the last one in the file.
    const PyString* found = nullptr;
    for (size_t i = 0; i + 2 < t.size(); ++i) {
      ++*work;
      if (t[i].kind == PyTok::Ident && t[i].text == name && py_punct(t[i + 1], '=') &&
          t[i + 2].kind == PyTok::Str)
        found = &t[i + 2].str;
    }
    if (found) return take(*found);
    throw ValidationError(label + ": load_inline(cuda_sources=" + name + ") names '" + name +
                          "', but no string is assigned to it in the file");
  }
  // No load_inline: the first string literal that holds a __global__ function.
  for (const auto& tok : t) {
    ++*work;
    if (tok.kind != PyTok::Str) continue;
    *work += tok.str.value.size();
    if (tok.str.value.find("__global__") != std::string::npos) return take(tok.str);
  }
  throw ValidationError(label +
                        (saw_call ? ": load_inline(...) has no cuda_sources argument"
                                  : ": a Python file, but it holds no load_inline(cuda_sources=...) "
                                    "call and no string with a __global__ function in it") +
                        " (TileScope reads the CUDA source of a KernelBench answer)");
}

// [SECTION] The C++ lexer: just enough to find top-level items, parameter lists and bodies.
namespace {

struct Tok {
  enum Kind : uint8_t { Ident, Number, Punct, String, Char, Directive, End } kind;
  uint32_t len;
  size_t pos;
  int line;
};

class Lexer {
 public:
  Lexer(const std::string& s, uint64_t* work) : m_s(s), m_work(work) {}

  std::vector<Tok> run() {
    std::vector<Tok> out;
    out.reserve(m_s.size() / 4);
    bool line_start = true;
    if (m_s.compare(0, 3, kBom) == 0) m_i = 3;  // a byte order mark: not a token
    while (m_i < m_s.size()) {
      const char c = at(m_i);
      if (line_end(m_i)) {
        ++m_line;
        ++m_i;
        line_start = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {  // '\r' here: the CR of a CRLF
        ++m_i;
        continue;
      }
      if (c == '\\' && continuation(m_i)) {
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        skip_line_comment();
        continue;
      }
      if (c == '/' && peek(1) == '*') {
        skip_block_comment();
        continue;
      }
      const size_t start = m_i;
      const int line = m_line;
      if (c == '#' && line_start) {
        skip_directive();
        out.push_back({Tok::Directive, uint32_t(m_i - start), start, line});
        continue;
      }
      line_start = false;
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
        ++m_i;
        while (m_i < m_s.size()) {
          const char d = at(m_i);
          if ((d == '+' || d == '-') && std::strchr("eEpP", m_s[m_i - 1])) {
            ++m_i;
          } else if (is_ident_char(d) || d == '.' || (d == '\'' && is_ident_char(peek(1)))) {
            ++m_i;
          } else {
            break;
          }
        }
        out.push_back({Tok::Number, uint32_t(m_i - start), start, line});
        continue;
      }
      if (is_ident_start(c)) {
        while (m_i < m_s.size() && is_ident_char(at(m_i))) ++m_i;
        // String and character literal prefixes: u8"", L'', R"(...)".
        if (m_i < m_s.size() && (m_s[m_i] == '"' || m_s[m_i] == '\'') && m_i - start <= 3) {
          const std::string prefix = m_s.substr(start, m_i - start);
          static const std::set<std::string> kPrefixes = {"u8", "u", "U", "L", "R", "u8R", "uR", "UR", "LR"};
          if (kPrefixes.count(prefix)) {
            const bool raw = prefix.back() == 'R';
            if (m_s[m_i] == '"')
              raw ? skip_raw_string() : skip_quoted('"');
            else
              skip_quoted('\'');
            out.push_back({m_s[start + prefix.size()] == '"' ? Tok::String : Tok::Char, uint32_t(m_i - start),
                           start, line});
            continue;
          }
        }
        out.push_back({Tok::Ident, uint32_t(m_i - start), start, line});
        continue;
      }
      if (c == '"' || c == '\'') {
        skip_quoted(c);
        out.push_back({c == '"' ? Tok::String : Tok::Char, uint32_t(m_i - start), start, line});
        continue;
      }
      ++m_i;
      out.push_back({Tok::Punct, 1, start, line});
    }
    m_lines = m_line;
    return out;
  }
  int lines() const { return m_lines; }

 private:
  // Every byte the lexer looks at goes through at(): the work counter sees a rescan at once.
  char at(size_t i) const {
    ++*m_work;
    return m_s[i];
  }
  char peek(size_t ahead) const { return m_i + ahead < m_s.size() ? at(m_i + ahead) : '\0'; }
  // A line ends at LF, or at a CR that no LF follows (CR-only files); the CR of a CRLF is a space.
  bool line_end(size_t i) const {
    const char c = at(i);
    return c == '\n' || (c == '\r' && (i + 1 == m_s.size() || at(i + 1) != '\n'));
  }
  // A backslash at `i` that ends its line (LF, CRLF or CR): steps over it and counts the line.
  bool continuation(size_t i) {
    if (i + 1 >= m_s.size()) return false;
    const char n = at(i + 1);
    if (n == '\n' || n == '\r') {
      m_i = i + (n == '\r' && i + 2 < m_s.size() && at(i + 2) == '\n' ? 3 : 2);
      ++m_line;
      return true;
    }
    return false;
  }

  void skip_line_comment() {
    while (m_i < m_s.size() && !line_end(m_i)) {
      if (at(m_i) == '\\' && continuation(m_i)) continue;  // a comment continued by a backslash
      ++m_i;
    }
  }
  void skip_block_comment() {
    m_i += 2;
    while (m_i < m_s.size() && !(at(m_i) == '*' && peek(1) == '/')) {
      if (line_end(m_i)) ++m_line;
      ++m_i;
    }
    m_i = std::min(m_i + 2, m_s.size());
  }
  // A quoted literal; stops at an unescaped line end (an unterminated literal ends with its line).
  void skip_quoted(char q) {
    ++m_i;
    while (m_i < m_s.size() && at(m_i) != q && !line_end(m_i)) {
      if (at(m_i) == '\\' && m_i + 1 < m_s.size()) {
        if (continuation(m_i)) continue;
        ++m_i;
      }
      ++m_i;
    }
    if (m_i < m_s.size() && at(m_i) == q) ++m_i;
  }
  void skip_raw_string() {  // R"delim( ... )delim"
    const size_t open = m_i;
    size_t p = m_i + 1;
    while (p < m_s.size() && p - open <= 17 && at(p) != '(') ++p;
    if (p >= m_s.size() || m_s[p] != '(') {
      skip_quoted('"');
      return;
    }
    const std::string end = ")" + m_s.substr(open + 1, p - open - 1) + "\"";
    const size_t close = m_s.find(end, p + 1);
    const size_t stop = close == std::string::npos ? m_s.size() : close + end.size();
    for (size_t k = m_i; k < stop; ++k)
      if (line_end(k)) ++m_line;
    *m_work += (stop - m_i) * end.size();  // the search, at worst
    m_i = stop;
  }
  // A preprocessor line, with its continuations; comments inside it end it where they start (a // comment) or
  // are skipped over (a /* */ comment).
  void skip_directive() {
    while (m_i < m_s.size() && !line_end(m_i)) {
      if (at(m_i) == '\\' && continuation(m_i)) continue;
      if (at(m_i) == '\r' && peek(1) == '\n') break;  // the CR of a CRLF ends the directive too
      if (at(m_i) == '/' && peek(1) == '*') {
        skip_block_comment();
        continue;
      }
      if (at(m_i) == '/' && peek(1) == '/') {
        while (m_i < m_s.size() && !line_end(m_i) && !(at(m_i) == '\r' && peek(1) == '\n')) ++m_i;
        return;
      }
      ++m_i;
    }
  }

  const std::string& m_s;
  uint64_t* m_work;
  size_t m_i = 0;
  int m_line = 1;
  int m_lines = 1;
};

// Headers NVRTC can use in device code (it has no C or C++ standard library and no host runtime API).
bool device_header(const std::string& h) {
  static const char* kDevice[] = {"cuda_fp16.h",
                                  "cuda_bf16.h",
                                  "cuda_fp8.h",
                                  "mma.h",
                                  "cooperative_groups.h",
                                  "cuda_pipeline.h",
                                  "cuda_pipeline_primitives.h",
                                  "cuda_awbarrier.h",
                                  "cuda_awbarrier_primitives.h",
                                  "sm_60_atomic_functions.h",
                                  "crt/"};
  for (const char* d : kDevice)
    if (h == d || (std::strchr(d, '/') && h.rfind(d, 0) == 0)) return true;
  return h.rfind("cuda/", 0) == 0 || h.rfind("cooperative_groups/", 0) == 0;
}

bool is_qualifier(const std::string& w) {
  static const std::set<std::string> k = {"const",    "volatile", "__restrict__",     "__restrict",
                                          "restrict", "register", "__grid_constant__"};
  return k.count(w) > 0;
}
bool is_type_word(const std::string& w) {
  static const std::set<std::string> k = {
      "float",    "double",    "int",     "unsigned", "signed",  "long",    "short",
      "char",     "bool",      "void",    "size_t",   "int32_t", "int64_t", "uint32_t",
      "uint64_t", "ptrdiff_t", "ssize_t", "uint",     "half",    "__half",  "auto"};
  return k.count(w) > 0;
}

bool tile_like(const std::string& name) {
  if (name.size() < 2) return false;
  for (char c : name)
    if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '_'))
      return false;
  return name.find("TILE") != std::string::npos || name.find("BLOCK") != std::string::npos || name == "BS" ||
         name == "TS" || name == "TW";
}

// CUDA's declaration specifiers, as bits: what an item's head says about it (written out, or through an
// object-like macro of the file that expands to them).
enum : unsigned {
  kGlobal = 1,
  kDevice = 2,
  kConstantMem = 4,
  kShared = 8,
  kManaged = 16,
};

unsigned cuda_keyword_bits(std::string_view w) {
  if (w == "__global__") return kGlobal;
  if (w == "__device__") return kDevice;
  if (w == "__constant__") return kConstantMem;
  if (w == "__shared__") return kShared;
  if (w == "__managed__") return kManaged;
  return 0;
}

class Scanner {
 public:
  explicit Scanner(const std::string& s) : m_s(s) {}

  SourceScan run() {
    Lexer lx(m_s, &m_work);
    m_t = lx.run();
    m_scan.lines = lx.lines();
    top_level();
    find_undefined_tile_names();
    m_scan.work = m_work;
    return std::move(m_scan);
  }

  // Object-like macros whose expansion may hold a CUDA specifier are followed this far at most (macros
  // naming macros), each use: a bound on the work, not on what a plain file does (one or two levels).
  static constexpr int kMacroDepth = 16;
  static constexpr int kMacroVisits = 256;
  static constexpr size_t kMacroWords = 64;  // identifiers of a macro's replacement that are followed

 private:
  // Every read of a token goes through these (each counts in SourceScan::work, a copy by its length).
  const Tok& tok(size_t i) const {
    static const Tok kEnd{Tok::End, 0, 0, 0};  // past the last token: a kind nothing asks for
    ++m_work;
    return i < m_t.size() ? m_t[i] : kEnd;
  }
  std::string text(size_t i) const {
    m_work += 1 + m_t[i].len;
    return m_s.substr(m_t[i].pos, m_t[i].len);
  }
  std::string_view view(size_t i) const {
    ++m_work;
    return std::string_view(m_s).substr(m_t[i].pos, m_t[i].len);
  }
  bool is(size_t i, const char* w) const {
    ++m_work;
    const size_t n = std::strlen(w);
    return i < m_t.size() && m_t[i].len == n && m_s.compare(m_t[i].pos, n, w) == 0;
  }
  bool punct(size_t i, char c) const {
    ++m_work;
    return i < m_t.size() && tok(i).kind == Tok::Punct && m_s[m_t[i].pos] == c;
  }
  size_t end_of(size_t i) const { return m_t[i].pos + m_t[i].len; }
  int line(size_t i) const { return m_t[i].line; }

  // The token after the one matching the bracket at `i` (or the end).
  size_t skip_group(size_t i) const {
    const char open = m_s[m_t[i].pos];
    const char close = open == '(' ? ')' : open == '[' ? ']' : '}';
    int depth = 0;
    for (size_t j = i; j < m_t.size(); ++j) {
      if (punct(j, open)) ++depth;
      if (punct(j, close) && --depth == 0) return j + 1;
    }
    return m_t.size();
  }

  void host(size_t from_tok, size_t to_tok_inclusive) {
    m_scan.host_code.push_back(Span{m_t[from_tok].pos, end_of(to_tok_inclusive)});
  }

  // [SECTION] File scope, and namespace / extern "C" blocks scanned as if they were file scope. Any depth:
  // an open block costs one entry on a stack, and a kernel names its namespace by index (SourceScan::scopes).
  void top_level() {
    std::vector<int> enclosing;  // one per open block: the namespace that was current when it opened
    int current = -1;
    size_t i = 0;
    while (i < m_t.size()) {
      const Tok& t = tok(i);
      if (t.kind == Tok::Directive) {
        directive(i);
        ++i;
        continue;
      }
      if (punct(i, '}')) {  // closes a namespace or extern "C" block (or stray)
        if (!enclosing.empty()) {
          current = enclosing.back();
          enclosing.pop_back();
        }
        ++i;
        continue;
      }
      if (punct(i, ';')) {
        ++i;
        continue;
      }
      const size_t ns = is(i, "inline") && is(i + 1, "namespace") ? i + 1 : i;
      if (is(ns, "namespace")) {
        size_t j = ns + 1;
        while (j < m_t.size() && (tok(j).kind == Tok::Ident || punct(j, ':'))) ++j;
        if (punct(j, '{')) {
          std::string n;
          for (size_t k = ns + 1; k < j; ++k) n += text(k);
          enclosing.push_back(current);
          m_scan.scopes.push_back({current, std::move(n)});  // an anonymous one is reachable without a name
          current = int(m_scan.scopes.size()) - 1;
          m_scope = current;
          i = j + 1;
          continue;
        }
      }
      if (is(i, "extern") && i + 2 < m_t.size() && tok(i + 1).kind == Tok::String && punct(i + 2, '{')) {
        enclosing.push_back(current);
        i += 3;
        continue;
      }
      m_scope = current;
      i = item(i);
    }
  }

  // One declaration or definition starting at token `i`; returns the token after it.
  size_t item(size_t i) {
    const size_t start = i;
    int paren = 0, angle = 0;
    bool saw_assign = false, saw_paren = false;
    bool type_kw = is(start, "union") || is(start, "enum");  // struct and class: below, at this level
    size_t j = i;
    for (; j < m_t.size(); ++j) {
      if (tok(j).kind == Tok::Directive) break;  // a directive inside a declaration: end the item before it
      if (paren == 0 && (is(j, "struct") || is(j, "class"))) type_kw = true;
      if (punct(j, '(') || punct(j, '[')) {
        ++paren;
        saw_paren = saw_paren || (punct(j, '(') && !saw_assign);
      } else if (punct(j, ')') || punct(j, ']')) {
        paren = std::max(0, paren - 1);
      } else if (paren == 0 && punct(j, '<') && j > start && tok(j - 1).kind == Tok::Ident &&
                 (is(j - 1, "template") || angle > 0)) {
        ++angle;
      } else if (paren == 0 && angle > 0 && punct(j, '>')) {
        --angle;
      } else if (paren == 0 && punct(j, '=')) {
        saw_assign = true;
      } else if (paren == 0 && punct(j, ';')) {
        classify(start, j, false, 0);
        return j + 1;
      } else if (paren == 0 && punct(j, '{')) {
        const size_t close = skip_group(j) - 1;
        if (saw_paren && !saw_assign && !type_kw) {  // a function definition
          classify(start, close, true, j);
          return close + 1;
        }
        // A type definition or a braced initializer: the item goes on to its ';'.
        j = close;
        continue;
      } else if (paren == 0 && punct(j, '}')) {
        break;  // the end of an enclosing block: the item is malformed, leave it
      }
    }
    if (j > start) classify(start, std::min(j, m_t.size()) - 1, false, 0);
    return std::max(j, start + 1);
  }

  bool has_kw_before(size_t from, size_t to, const char* w) const {
    for (size_t k = from; k < to; ++k)
      if (is(k, w)) return true;
    return false;
  }

  // [SECTION] Object-like macros that stand for CUDA specifiers: `#define KERNEL __global__`.
  struct Macro {
    unsigned bits = 0;                    // specifiers written in the replacement itself
    std::vector<std::string_view> words;  // its other identifiers (the first kMacroWords), maybe macros
  };

  // The specifiers token `i` stands for: its own, or those its macro expands to (followed through other
  // macros of the file, at most kMacroDepth deep and kMacroVisits macros a use; remembered until the
  // next #define or #undef).
  unsigned spec_bits(size_t i) {
    if (tok(i).kind != Tok::Ident) return 0;
    const std::string_view w = view(i);
    if (const unsigned b = cuda_keyword_bits(w)) return b;
    if (m_macros.empty()) return 0;
    const auto m = m_macros.find(w);
    if (m == m_macros.end()) return 0;
    auto& memo = m_macro_memo[w];
    if (memo.first == m_macro_generation) return memo.second;
    unsigned bits = 0;
    std::vector<std::pair<std::string_view, int>> todo = {{w, 0}};
    std::set<std::string_view> seen = {w};
    for (int visits = 0; !todo.empty() && visits < kMacroVisits; ++visits) {
      ++m_work;
      const auto [name, depth] = todo.back();
      todo.pop_back();
      const auto it = m_macros.find(name);
      if (it == m_macros.end()) continue;
      bits |= it->second.bits;
      if (depth + 1 >= kMacroDepth) continue;
      for (const std::string_view x : it->second.words) {
        m_work += 1;
        if (seen.insert(x).second) todo.push_back({x, depth + 1});
      }
    }
    memo = {m_macro_generation, bits};
    return bits;
  }

  // Records `#define NAME replacement` (object-like) for spec_bits; `d` is the directive's text, `p` where
  // the replacement starts. Strings and comments in it are skipped.
  void record_macro(const std::string& d, std::string_view name, size_t p) {
    Macro m;
    while (p < d.size()) {
      const char c = d[p];
      if (c == '/' && p + 1 < d.size() && d[p + 1] == '/') break;
      if (c == '/' && p + 1 < d.size() && d[p + 1] == '*') {
        const size_t e = d.find("*/", p + 2);
        p = e == std::string::npos ? d.size() : e + 2;
        continue;
      }
      if (c == '"' || c == '\'') {
        ++p;
        while (p < d.size() && d[p] != c) p += d[p] == '\\' ? 2 : 1;
        ++p;
        continue;
      }
      if (is_ident_start(c)) {
        const size_t w = p;
        while (p < d.size() && is_ident_char(d[p])) ++p;
        const std::string_view word = std::string_view(d).substr(w, p - w);
        const unsigned b = cuda_keyword_bits(word);
        m.bits |= b;
        // Views into the file, not into `d` (a copy): the directive starts at the same offset.
        if (!b && m.words.size() < kMacroWords)
          m.words.push_back(std::string_view(m_s).substr(m_dir_pos + w, p - w));
        continue;
      }
      ++p;
    }
    ++m_macro_generation;
    if (m.bits == 0 && m.words.empty()) {
      m_macros.erase(name);
      return;
    }
    m_macros[name] = std::move(m);
  }

  void classify(size_t s, size_t e, bool function_def, size_t body_open) {
    // What the head says (for a definition, what comes before its body): one pass over its tokens.
    const size_t head_end = function_def ? body_open : e + 1;
    unsigned bits = 0;
    bool is_const = false;
    for (size_t k = s; k < head_end; ++k) {
      bits |= spec_bits(k);
      is_const = is_const || is(k, "const") || is(k, "constexpr");
    }
    if (bits & kGlobal) {
      if (function_def) kernel(s, body_open, e);
      return;
    }
    if (bits & (kDevice | kConstantMem | kShared | kManaged)) {
      if (function_def) local_constants(body_open, e);
      return;
    }
    if (is(s, "using") && is(s + 1, "namespace")) {
      host(s, e);
      m_scan.notes.push_back("left out `using namespace " + text(s + 2) + ";` (line " +
                             std::to_string(line(s)) + "): there is no host library on the device");
      return;
    }
    if (is(s, "typedef") || is(s, "using") || is(s, "static_assert") || is(s, "struct") || is(s, "class") ||
        is(s, "union") || is(s, "enum"))
      return;
    if (is(s, "template") && !function_def) return;  // class templates, declarations
    if (function_def) {
      size_t name = body_open;
      for (size_t k = s; k < body_open; ++k)
        if (punct(k, '(')) {
          name = k;
          break;
        }
      const std::string fname = name > s && name < m_t.size() ? text(name - 1) : "?";
      host(s, e);
      m_scan.notes.push_back("left out host function " + fname + " (line " + std::to_string(line(s)) +
                             "): NVRTC compiles device code only");
      return;
    }
    if (is_const) {
      constant(s, e);
      return;
    }
    host(s, e);
    if (!m_noted_host_decl) {
      m_noted_host_decl = true;
      m_scan.notes.push_back("left out host declarations (first at line " + std::to_string(line(s)) + ")");
    }
  }

  // `[static] const|constexpr <integer type> NAME = <number>;` between tokens s and e (the ';').
  void constant(size_t s, size_t e) {
    size_t k = s;
    bool is_const = false, int_type = false;
    while (k < e && tok(k).kind == Tok::Ident) {
      const std::string w = text(k);
      if (w == "const" || w == "constexpr") {
        is_const = true;
      } else if (w == "static" || w == "inline" || w == "__device__" || w == "__constant__") {
      } else if (w == "int" || w == "unsigned" || w == "long" || w == "size_t" || w == "short" ||
                 w == "int32_t" || w == "int64_t" || w == "uint32_t" || w == "uint64_t" || w == "signed") {
        int_type = true;
      } else {
        break;
      }
      ++k;
    }
    if (!is_const || !int_type || k + 3 > e || tok(k).kind != Tok::Ident || !punct(k + 1, '=')) return;
    size_t v = k + 2;
    const bool paren = punct(v, '(');
    if (paren) ++v;
    if (v >= e || tok(v).kind != Tok::Number) return;
    const size_t after = v + 1 + (paren ? 1 : 0);
    if (after != e || (paren && !punct(v + 1, ')'))) return;
    add_number(text(k), v, false);
  }

  void add_number(const std::string& name, size_t num_tok, bool macro) {
    const std::string n = text(num_tok);
    size_t digits = 0;
    while (digits < n.size() && std::isdigit(static_cast<unsigned char>(n[digits]))) ++digits;
    if (digits == 0 || digits > 12) return;
    const std::string suffix = n.substr(digits);
    for (char c : suffix)
      if (!std::strchr("uUlL", c)) return;                  // 16.0f, 0x10: not a plain whole number
    if (n.size() > 1 && n[0] == '0' && digits > 1) return;  // octal
    NumericSymbol sym;
    sym.name = name;
    sym.value = std::stoll(n.substr(0, digits));
    sym.value_span = Span{m_t[num_tok].pos, m_t[num_tok].pos + digits};
    sym.line = line(num_tok);
    sym.is_macro = macro;
    m_scan.symbols.push_back(sym);
  }

  // `const int TILE = 16;` inside a device function or kernel body: the Tile control can bind it too.
  void local_constants(size_t body_open, size_t body_close) {
    for (size_t k = body_open + 1; k + 4 < body_close; ++k) {
      if (!(is(k, "const") || is(k, "constexpr"))) continue;
      size_t j = k + 1;
      while (j < body_close && (is(j, "static") || is(j, "const") || is(j, "constexpr"))) ++j;
      if (!(is(j, "int") || is(j, "unsigned") || is(j, "size_t") || is(j, "long"))) continue;
      while (j < body_close && (is(j, "int") || is(j, "unsigned") || is(j, "long"))) ++j;
      if (tok(j).kind != Tok::Ident || !punct(j + 1, '=') || tok(j + 2).kind != Tok::Number ||
          !punct(j + 3, ';'))
        continue;
      add_number(text(j), j + 2, false);
      m_local_names.insert(text(j));
    }
  }

  // [SECTION] Preprocessor lines: #define NAME <number>, and the #includes NVRTC cannot follow.
  void directive(size_t i) {
    const std::string d = text(i);
    m_dir_pos = m_t[i].pos;
    size_t p = 1;
    auto skip_ws = [&] {
      while (p < d.size() && (d[p] == ' ' || d[p] == '\t')) ++p;
    };
    skip_ws();
    size_t w = p;
    while (p < d.size() && is_ident_char(d[p])) ++p;
    const std::string word = d.substr(w, p - w);
    if (word == "include") {
      skip_ws();
      if (p < d.size() && d[p] == '<') {
        const size_t close = d.find('>', p);
        const std::string header = d.substr(p + 1, close == std::string::npos ? 0 : close - p - 1);
        if (!device_header(header)) {
          host(i, i);
          m_scan.notes.push_back("left out #include <" + header + "> (line " + std::to_string(line(i)) +
                                 "): a host header");
        }
      }
      return;
    }
    if (word == "undef") {
      skip_ws();
      w = p;
      while (p < d.size() && is_ident_char(d[p])) ++p;
      if (m_macros.erase(std::string_view(m_s).substr(m_dir_pos + w, p - w))) ++m_macro_generation;
      return;
    }
    if (word != "define") return;
    skip_ws();
    w = p;
    while (p < d.size() && is_ident_char(d[p])) ++p;
    const std::string name = d.substr(w, p - w);
    const std::string_view name_in_file = std::string_view(m_s).substr(m_dir_pos + w, p - w);
    if (name.empty()) return;
    if (p < d.size() &&
        d[p] == '(') {  // a function-like macro (not followed): it replaces an object-like one
      if (m_macros.erase(name_in_file)) ++m_macro_generation;
      return;
    }
    record_macro(d, name_in_file, p);
    skip_ws();
    const bool paren = p < d.size() && d[p] == '(';
    if (paren) {
      ++p;
      skip_ws();
    }
    const size_t v = p;
    while (p < d.size() && is_ident_char(d[p])) ++p;
    size_t q = p;
    if (paren) {
      while (q < d.size() && (d[q] == ' ' || d[q] == '\t')) ++q;
      if (q >= d.size() || d[q] != ')') return;
      ++q;
    }
    while (q < d.size() && (d[q] == ' ' || d[q] == '\t' || d[q] == '\r')) ++q;
    // Anything after the number other than a comment: an expression, not a plain number.
    if (q < d.size() && !(d[q] == '/' && q + 1 < d.size() && (d[q + 1] == '/' || d[q + 1] == '*'))) return;
    const std::string num = d.substr(v, p - v);
    size_t digits = 0;
    while (digits < num.size() && std::isdigit(static_cast<unsigned char>(num[digits]))) ++digits;
    if (digits == 0 || digits > 12) return;
    for (char c : num.substr(digits))
      if (!std::strchr("uUlL", c)) return;
    if (num.size() > 1 && num[0] == '0' && digits > 1) return;
    NumericSymbol sym;
    sym.name = name;
    sym.value = std::stoll(num.substr(0, digits));
    sym.value_span = Span{m_t[i].pos + v, m_t[i].pos + v + digits};
    // The directive's line plus the lines it continues over before the number (not line_of: counting from the
    // start of the file for every #define made 80,000 of them quadratic).
    sym.line = line(i);
    for (size_t k = 0; k < v; ++k)
      if (d[k] == '\n' || (d[k] == '\r' && (k + 1 == d.size() || d[k + 1] != '\n'))) ++sym.line;
    sym.is_macro = true;
    m_scan.symbols.push_back(sym);
  }

  // [SECTION] A __global__ function definition: tokens s .. close, its body opening at `open`.
  void kernel(size_t s, size_t open, size_t close) {
    KernelDecl k;
    size_t i = s;
    if (is(i, "template") && punct(i + 1, '<')) {
      int depth = 0;
      size_t j = i + 1;
      for (; j < open; ++j) {
        if (punct(j, '<')) ++depth;
        if (punct(j, '>') && --depth == 0) break;
      }
      k.template_params = normalise(i + 2, j);
      i = j + 1;
    }
    size_t params_open = 0;
    static const std::set<std::string> kAttributes = {"__launch_bounds__", "__maxnreg__", "__cluster_dims__",
                                                      "__attribute__",     "__declspec",  "__block_size__"};
    for (; i < open; ++i) {
      if (k.global_kw.end == 0 && (spec_bits(i) & kGlobal)) {
        k.global_kw = Span{m_t[i].pos, end_of(i)};
        k.line = line(i);
      }
      if (tok(i).kind == Tok::Ident && kAttributes.count(text(i)) && punct(i + 1, '(')) {
        const size_t after = skip_group(i + 1);
        k.attributes.push_back(Span{m_t[i].pos, end_of(after - 1)});
        i = after - 1;
        continue;
      }
      if (punct(i, '(')) {
        params_open = i;
        break;
      }
    }
    if (params_open == 0 || params_open <= s || tok(params_open - 1).kind != Tok::Ident) return;
    k.name = text(params_open - 1);
    k.scope = m_scope;
    k.name_span = Span{m_t[params_open - 1].pos, end_of(params_open - 1)};
    if (k.global_kw.end == 0) k.line = line(s);
    const size_t params_close = skip_group(params_open) - 1;
    k.params_span = Span{end_of(params_open), m_t[params_close].pos};
    // Parameters: split at commas outside brackets.
    size_t from = params_open + 1;
    int depth = 0;
    for (size_t t = params_open + 1; t <= params_close; ++t) {
      if (punct(t, '(') || punct(t, '[') || punct(t, '<') || punct(t, '{')) ++depth;
      if (punct(t, ')') || punct(t, ']') || punct(t, '>') || punct(t, '}')) --depth;
      if ((depth == 0 && punct(t, ',')) || t == params_close) {
        if (t > from) k.params.push_back(param(from, t));
        from = t + 1;
      }
    }
    if (k.params.size() == 1 && k.params[0].decl == "void") k.params.clear();
    k.body = Span{m_t[open].pos, end_of(close)};
    for (size_t t = open; t + 1 < close; ++t)
      if (is(t, "extern") && is(t + 1, "__shared__")) k.dynamic_smem = true;
    local_constants(open, close);
    m_body_ranges.emplace_back(open, close);
    m_scan.kernels.push_back(std::move(k));
  }

  std::string normalise(size_t from, size_t to) const {
    std::string out;
    for (size_t t = from; t < to; ++t) {
      const std::string w = text(t);
      const bool tight_before = w == "*" || w == "&" || w == "[" || w == "]" || w == "," || w == ")";
      const bool prev_tight = !out.empty() && (out.back() == '[' || out.back() == '(');
      if (!out.empty() && !tight_before && !prev_tight) out += ' ';
      out += w;
    }
    return out;
  }

  KernelParam param(size_t from, size_t to) const {
    KernelParam p;
    // A default value (not allowed on kernels, but harmless to read past).
    size_t end = to;
    for (size_t t = from; t < to; ++t)
      if (punct(t, '=')) {
        end = t;
        break;
      }
    p.decl = normalise(from, end);
    int stars = 0;
    bool const_before_star = false, reference = false, arrays = false;
    std::vector<std::string> words;
    size_t name_tok = SIZE_MAX;
    for (size_t t = from; t < end; ++t) {
      if (punct(t, '*')) ++stars;
      if (punct(t, '&')) reference = true;
      if (punct(t, '[')) {
        arrays = true;
        ++stars;
        t = skip_group(t) - 1;
        continue;
      }
      if (tok(t).kind != Tok::Ident) continue;
      const std::string w = text(t);
      if (w == "const" && stars == 0) const_before_star = true;
      if (is_qualifier(w)) continue;
      words.push_back(w);
      name_tok = t;
    }
    // The name: the last identifier, when something names a type before it.
    if (words.size() >= 2 && !is_type_word(words.back())) {
      p.name = words.back();
      words.pop_back();
      p.type = normalise(from, name_tok) + (arrays ? "[]" : "");
    } else {
      p.type = p.decl;
      name_tok = SIZE_MAX;
    }
    std::string base;
    for (const auto& w : words) base += (base.empty() ? "" : " ") + w;
    if (reference) {
      p.why = "a reference (" + p.decl + "): kernels take values and pointers";
      return p;
    }
    if (stars == 1) {
      if (base == "float") {
        p.kind = ParamType::F32Ptr;
        p.const_pointee = const_before_star;
      } else {
        p.why = "a pointer to " + (base.empty() ? std::string("?") : base) +
                ": TileScope's matrices are float32 (float*)";
      }
      return p;
    }
    if (stars > 1) {
      p.why = "a pointer to pointers (" + p.decl + "): TileScope passes one float* per matrix";
      return p;
    }
    static const std::vector<std::pair<std::vector<std::string>, ParamType>> kScalars = {
        {{"int", "signed", "signed int", "int32_t"}, ParamType::I32},
        {{"unsigned", "unsigned int", "uint32_t", "uint"}, ParamType::U32},
        {{"long", "long int", "long long", "long long int", "int64_t", "ptrdiff_t", "ssize_t", "signed long",
          "signed long long"},
         ParamType::I64},
        {{"unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int", "size_t",
          "uint64_t"},
         ParamType::U64},
        {{"float"}, ParamType::F32},
        {{"double"}, ParamType::F64}};
    for (const auto& [names, kind] : kScalars)
      if (std::find(names.begin(), names.end(), base) != names.end()) {
        p.kind = kind;
        return p;
      }
    p.why = "of type '" + (base.empty() ? p.decl : base) +
            "': TileScope passes float pointers for A, B and C and whole numbers for sizes";
    return p;
  }

  // Tile-like names (TILE_WIDTH, BLOCK_SIZE) used in kernel bodies but defined nowhere in the file: the
  // person passes them with -D on their compiler's command line.
  void find_undefined_tile_names() {
    std::set<std::string> defined;
    for (const auto& s : m_scan.symbols) defined.insert(s.name);
    std::set<std::string> seen;
    for (const auto& [open, close] : m_body_ranges)
      for (size_t t = open; t < close; ++t) {
        if (tok(t).kind != Tok::Ident) continue;
        const std::string w = text(t);
        if (!tile_like(w) || defined.count(w) || m_local_names.count(w) || seen.count(w)) continue;
        // Declared right here (`int TILE = ...`): a local variable, not a macro.
        if (t > open && tok(t - 1).kind == Tok::Ident && is_type_word(text(t - 1))) continue;
        seen.insert(w);
        m_scan.identifiers_used.push_back(w);
      }
  }

  const std::string& m_s;
  std::vector<Tok> m_t;
  SourceScan m_scan;
  mutable uint64_t m_work = 0;
  bool m_noted_host_decl = false;
  std::vector<std::pair<size_t, size_t>> m_body_ranges;
  int m_scope = -1;  // the namespace block around the current item (SourceScan::scopes), -1: file scope
  std::set<std::string> m_local_names;
  size_t m_dir_pos = 0;  // where the directive being read starts
  std::unordered_map<std::string_view, Macro> m_macros;
  std::unordered_map<std::string_view, std::pair<uint64_t, unsigned>> m_macro_memo;  // generation, bits
  uint64_t m_macro_generation = 1;
};

}  // namespace

std::string SourceScan::scope_of(const KernelDecl& k) const {
  std::vector<const std::string*> names;
  for (int s = k.scope; s >= 0 && size_t(s) < scopes.size(); s = scopes[size_t(s)].parent)
    if (!scopes[size_t(s)].name.empty()) names.push_back(&scopes[size_t(s)].name);
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) out += **it + "::";
  return out;
}

SourceScan scan_cuda_source(const std::string& text) {
  if (int64_t(text.size()) > kMaxKernelSourceBytes)
    return Scanner(text.substr(0, kMaxKernelSourceBytes)).run();
  return Scanner(text).run();
}

}  // namespace ts

#include "core/user_kernel/include_resolver.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "core/io/files.hpp"
#include "core/user_kernel/kernel_source.hpp"
#include "core/engine/problem.hpp"  // ValidationError

namespace fs = std::filesystem;

namespace ts {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}
bool is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;  // UTF-8 identifiers
}

// Translation phases 1-2: backslash-newline pairs removed (a backslash followed by blanks and a newline too,
// as GCC accepts it: joining more than a compiler does can only find more directives). `starts` receives, for
// each physical line after the first, the offset in the spliced text where it starts.
std::string splice(const std::string& text, std::vector<size_t>* starts) {
  std::string s;
  s.reserve(text.size());
  const size_t n = text.size();
  auto newline_len = [&](size_t i) -> size_t {
    if (i >= n) return 0;
    if (text[i] == '\r') return i + 1 < n && text[i + 1] == '\n' ? 2 : 1;
    return text[i] == '\n' ? 1 : 0;
  };
  for (size_t i = 0; i < n;) {
    if (text[i] == '\\') {
      size_t j = i + 1;
      while (j < n && is_blank(text[j])) ++j;
      if (const size_t nl = newline_len(j)) {
        starts->push_back(s.size());
        i = j + nl;
        continue;
      }
    }
    if (const size_t nl = newline_len(i)) {
      s.push_back('\n');
      starts->push_back(s.size());
      i += nl;
      continue;
    }
    s.push_back(text[i++]);
  }
  return s;
}

// The directives of a spliced text, in one pass. `next_close[i]`: where the first "*/" at or after i starts
// (n when none), so that skipping a comment is one step however many `#` stand inside it.
class DirectiveScanner {
 public:
  DirectiveScanner(const std::string& s, const std::vector<size_t>& starts) : m_s(s), m_starts(starts) {
    const size_t n = s.size();
    m_next_close.assign(n + 1, uint32_t(n));
    for (size_t i = n; i-- > 0;)
      m_next_close[i] = i + 1 < n && s[i] == '*' && s[i + 1] == '/' ? uint32_t(i) : m_next_close[i + 1];
  }

  std::vector<IncludeDirective> run() {
    std::vector<IncludeDirective> out;
    const size_t n = m_s.size();
    bool blank_line = true, comment_mark = false;  // what stands before position i on its line
    for (size_t i = 0; i < n; ++i) {
      const char c = m_s[i];
      if (c == '\n') {
        blank_line = true;
        comment_mark = false;
        continue;
      }
      if (c == '#' || (c == '%' && i + 1 < n && m_s[i + 1] == ':')) {
        // A directive starts a line, after blanks and comments; where a comment mark stands before it on the
        // line, it may be one (the comment may have started on an earlier line).
        directive(i + (c == '#' ? 1 : 2), blank_line || comment_mark, i, &out);
      } else if (c == '_' && (i == 0 || !is_ident(m_s[i - 1]))) {
        has_include(i, &out);
      }
      if (!is_blank(c)) blank_line = false;
      if (i + 1 < n && ((c == '/' && m_s[i + 1] == '*') || (c == '*' && m_s[i + 1] == '/')))
        comment_mark = true;
    }
    return out;
  }

 private:
  int line_of(size_t pos) const {
    return int(std::upper_bound(m_starts.begin(), m_starts.end(), pos) - m_starts.begin()) + 1;
  }

  // Past blanks and /* */ comments, not past the end of the line.
  size_t skip_blank(size_t i) const {
    const size_t n = m_s.size();
    while (i < n) {
      ++m_steps;
      if (is_blank(m_s[i])) {
        ++i;
      } else if (i + 1 < n && m_s[i] == '/' && m_s[i + 1] == '*') {
        const size_t close = m_next_close[std::min(i + 2, n)];
        i = close >= n ? n : close + 2;
      } else {
        break;
      }
    }
    return i;
  }

  // The end of the identifier at i (i when none).
  size_t ident_end(size_t i) const {
    while (i < m_s.size() && is_ident(m_s[i])) ++i, ++m_steps;
    return i;
  }

  // The first `close` or newline at or after `from`; remembered, so that many names opened on one line cost
  // one walk over it.
  size_t find_close(size_t from, char close) {
    Memo& m = close == '"' ? m_quote : m_angle;
    if (from >= m.from && from <= m.at) return m.at;
    size_t i = from;
    while (i < m_s.size() && m_s[i] != close && m_s[i] != '\n') ++i, ++m_steps;
    m.from = from;
    m.at = i;
    return i;
  }

  // The header name at i: "..." or <...>; anything else is computed (a macro).
  bool header_name(size_t i, IncludeDirective* d) {
    const size_t n = m_s.size();
    if (i < n && (m_s[i] == '"' || m_s[i] == '<')) {
      const char close = m_s[i] == '"' ? '"' : '>';
      const size_t end = find_close(i + 1, close);
      if (end < n && m_s[end] == close) {
        d->kind = close == '"' ? IncludeDirective::Kind::Quoted : IncludeDirective::Kind::Angled;
        d->name = m_s.substr(i + 1, end - i - 1);
        return true;
      }
    }
    d->kind = IncludeDirective::Kind::Computed;
    size_t end = i;
    while (end < n && m_s[end] != '\n' && end - i < 40) ++end, ++m_steps;
    d->name = m_s.substr(i, end - i);
    return true;
  }

  void directive(size_t i, bool line_start, size_t hash, std::vector<IncludeDirective>* out) {
    i = skip_blank(i);
    const size_t end = ident_end(i);
    const std::string word = m_s.substr(i, std::min<size_t>(end - i, 16));
    if (end - i > 12 || (word != "include" && word != "include_next" && word != "import" && word != "embed"))
      return;
    IncludeDirective d;
    d.keyword = word;
    d.line = line_of(hash);
    header_name(skip_blank(end), &d);
    // A computed name is a directive only at the start of a line ("see the #include lines" in prose is not).
    if (d.kind == IncludeDirective::Kind::Computed && !line_start) return;
    out->push_back(std::move(d));
  }

  void has_include(size_t i, std::vector<IncludeDirective>* out) {
    const size_t end = ident_end(i);
    if (end - i != 13 && end - i != 18) return;
    const std::string word = m_s.substr(i, end - i);
    if (word != "__has_include" && word != "__has_include_next") return;
    IncludeDirective d;
    d.keyword = word;
    d.line = line_of(i);
    size_t j = skip_blank(end);
    if (j < m_s.size() && m_s[j] == '(') j = skip_blank(j + 1);
    header_name(j, &d);
    out->push_back(std::move(d));
  }

  struct Memo {
    size_t from = 1, at = 0;  // empty
  };
  const std::string& m_s;
  const std::vector<size_t>& m_starts;
  std::vector<uint32_t> m_next_close;
  Memo m_quote, m_angle;

 public:
  mutable uint64_t m_steps = 0;  // characters looked at by the searches above
};

// Why a name may not be included at all ("" when it may).
std::string refusal(const IncludeDirective& d) {
  if (d.kind == IncludeDirective::Kind::Computed)
    return "the file's name must be written in quotes or <> (a name a macro computes could be any file; if "
           "this is prose in a comment, reword it)";
  if (d.name.empty()) return "it names no file";
  if (d.name.front() == '/') return "an absolute path";
  for (const auto& part : fs::path(d.name))
    if (part == "..") return "a name with a '..' part";
  return "";
}

std::string shown(const IncludeDirective& d) {
  std::string name = d.name.size() > 80 ? d.name.substr(0, 80) + "..." : d.name;
  if (d.kind == IncludeDirective::Kind::Quoted) return "\"" + name + "\"";
  if (d.kind == IncludeDirective::Kind::Angled) return "<" + name + ">";
  return name;
}

// The first line of a header that stands for another name of a file handed over already.
constexpr const char* kAliasMark = "// TileScope: the same file as";

const char* kWhatMayBeIncluded =
    "a kernel file may include files in its own folder and below (in quotes) and the CUDA toolkit's headers";

bool inside(const fs::path& root, const fs::path& p) {
  const fs::path rel = p.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

struct Resolver {
  fs::path root;  // canonical; empty when the text has no file
  std::vector<IncludedHeader> headers;
  std::map<std::string, std::string> by_name;  // include name -> canonical path
  std::set<std::string> visited;
  int64_t bytes = 0;

  void scan(const std::string& text, const std::string& where_file, const fs::path& dir, int first_line) {
    for (const IncludeDirective& d : find_include_directives(text)) {
      const std::string where = where_file + ":" + std::to_string(d.line + first_line - 1) + ": #" +
                                (d.keyword.rfind("__", 0) == 0 ? d.keyword.substr(2) : d.keyword) + " " +
                                shown(d) + " is refused: ";
      if (const std::string why = refusal(d); !why.empty())
        throw ValidationError(where + why + "; " + kWhatMayBeIncluded);
      if (d.kind != IncludeDirective::Kind::Quoted || root.empty()) continue;  // the toolkit's, for NVRTC
      const fs::path candidate = dir / d.name;
      std::error_code ec;
      const fs::file_status link = fs::symlink_status(candidate, ec);
      if (ec || !fs::exists(link)) continue;  // not here: NVRTC looks in the toolkit's folder
      const fs::path real = fs::canonical(candidate, ec);
      if (ec) throw ValidationError(where + "it cannot be resolved (" + ec.message() + ")");
      if (!inside(root, real))
        throw ValidationError(where + "it leads out of the kernel file's folder (to " + real.string() +
                              "); " + kWhatMayBeIncluded);
      if (fs::is_directory(real, ec)) throw ValidationError(where + "it is a folder");
      const auto known = by_name.find(d.name);
      if (known != by_name.end() && known->second != real.string())
        throw ValidationError(where + "another file (" + known->second +
                              ") is included under the same name; NVRTC takes headers by the name the "
                              "#include writes, so give the two different names");
      if (!visited.insert(real.string()).second) {
        // Read already under another name (included as "inc/a.h" by the kernel, as "a.h" by a neighbour in
        // inc/). NVRTC takes headers by the name the #include writes, and its #pragma once by that name too:
        // this name gets a header that includes the first one, so the file is one file to NVRTC (guarded
        // mutual includes compile; an unguarded cycle is NVRTC's to report).
        if (known == by_name.end()) {
          for (const IncludedHeader& h : headers)
            if (h.path == real.string() && h.content.rfind(kAliasMark, 0) != 0) {
              if (int(headers.size()) >= kMaxIncludedFiles)
                throw ValidationError(where + "a kernel may include at most " +
                                      std::to_string(kMaxIncludedFiles) + " files of its folder");
              by_name[d.name] = real.string();
              const IncludedHeader alias{
                  d.name, h.path,
                  std::string(kAliasMark) + " \"" + h.name + "\"\n#include \"" + h.name + "\"\n"};
              headers.push_back(alias);
              break;
            }
        }
        continue;
      }
      if (int(headers.size()) >= kMaxIncludedFiles)
        throw ValidationError(where + "a kernel may include at most " + std::to_string(kMaxIncludedFiles) +
                              " files of its folder");
      std::string content;
      try {
        const InputFile f(real.string());  // non-blocking: a FIFO is refused, never waited on
        if (int64_t(f.size()) > kMaxKernelSourceBytes)
          throw ValidationError("it is " + format_bytes(double(f.size())) + "; a header may be at most " +
                                format_bytes(double(kMaxKernelSourceBytes)));
        if (bytes + int64_t(f.size()) > kMaxIncludedBytes)
          throw ValidationError("the headers of one kernel may be " +
                                format_bytes(double(kMaxIncludedBytes)) + " in all");
        content.assign(size_t(f.size()), '\0');
        if (!f.read_at(0, content.data(), content.size()))
          throw ValidationError("it changed while it was read; try again");
      } catch (const ValidationError& e) {
        throw ValidationError(where + e.what());
      }
      if (content.find('\0') != std::string::npos)
        throw ValidationError(where + "it holds a NUL byte (not text)");
      bytes += int64_t(content.size());
      by_name[d.name] = real.string();
      headers.push_back({d.name, real.string(), content});
      const std::string shown_path = real.lexically_relative(root).string();
      scan(content, shown_path, real.parent_path(), 1);
    }
  }
};

}  // namespace

std::vector<IncludeDirective> find_include_directives(const std::string& text, uint64_t* steps) {
  std::vector<size_t> starts;
  const std::string s = splice(text, &starts);
  DirectiveScanner scanner(s, starts);
  std::vector<IncludeDirective> d = scanner.run();
  if (steps) *steps = scanner.m_steps;
  return d;
}

std::vector<IncludedHeader> resolve_includes(const std::string& text, const std::string& source_path,
                                             const std::string& label, int first_line) {
  Resolver r;
  fs::path dir;
  if (!source_path.empty()) {
    std::error_code ec;
    fs::path parent = fs::path(source_path).parent_path();
    if (parent.empty()) parent = ".";
    r.root = fs::canonical(parent, ec);
    if (ec) throw ValidationError(label + ": its folder cannot be resolved (" + ec.message() + ")");
    dir = r.root;
  }
  r.scan(text, label, dir, first_line);
  return std::move(r.headers);
}

void check_given_headers(const std::string& text, const std::vector<IncludedHeader>& headers,
                         const std::string& label, int first_line) {
  auto check_directives = [](const std::string& t, const std::string& where_file, int first) {
    for (const IncludeDirective& d : find_include_directives(t))
      if (const std::string why = refusal(d); !why.empty())
        throw ValidationError(where_file + ":" + std::to_string(d.line + first - 1) + ": #" +
                              (d.keyword.rfind("__", 0) == 0 ? d.keyword.substr(2) : d.keyword) + " " +
                              shown(d) + " is refused: " + why + "; " + kWhatMayBeIncluded);
  };
  check_directives(text, label, first_line);
  if (int64_t(headers.size()) > kMaxIncludedFiles)
    throw ValidationError(label + ": " + std::to_string(headers.size()) +
                          " headers; a kernel may include at most " + std::to_string(kMaxIncludedFiles) +
                          " files of its folder");
  std::set<std::string> names;
  int64_t bytes = 0;
  for (const IncludedHeader& h : headers) {
    const std::string where =
        label + ": the header \"" + (h.name.size() > 80 ? h.name.substr(0, 80) + "..." : h.name) + "\"";
    IncludeDirective as_named;
    as_named.name = h.name;
    if (const std::string why = refusal(as_named); !why.empty())
      throw ValidationError(where + " is refused: " + why + "; " + kWhatMayBeIncluded);
    if (!names.insert(h.name).second) throw ValidationError(where + " is given twice");
    if (int64_t(h.content.size()) > kMaxKernelSourceBytes)
      throw ValidationError(where + " is " + format_bytes(double(h.content.size())) +
                            "; a header may be at most " + format_bytes(double(kMaxKernelSourceBytes)));
    bytes += int64_t(h.content.size());
    if (bytes > kMaxIncludedBytes)
      throw ValidationError(where + ": the headers of one kernel may be " +
                            format_bytes(double(kMaxIncludedBytes)) + " in all");
    if (h.content.find('\0') != std::string::npos)
      throw ValidationError(where + " holds a NUL byte (not text)");
    check_directives(h.content, h.name, 1);
  }
}

}  // namespace ts

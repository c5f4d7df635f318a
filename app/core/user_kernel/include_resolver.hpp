#pragma once
// [SECTION] What a person's kernel file may include. NVRTC would open any path an #include names (absolute,
// "../", /proc/self/environ) and wait forever on a FIFO; its errors then quote tokens of whatever it read. So
// TileScope resolves the includes itself, before NVRTC sees the source:
//   - `#include "name"` of a file in the kernel file's folder or below (symbolic links followed, but never
//   out
//     of that folder): read here (a regular file, opened without blocking, at most kMaxKernelSourceBytes, all
//     headers together at most kMaxIncludedBytes) and handed to NVRTC in memory under that name, with the
//     headers it includes in turn;
//   - `#include "name"` found nowhere there, and `#include <name>`: left to NVRTC, which then looks only in
//   the
//     CUDA toolkit's include folder (--no-source-include: not in the source's folder, not in the working
//     one);
//   - refused, with the line in the file where it stands: an absolute name, a name with a ".." part, a name
//     computed by a macro, a name that is a folder, a FIFO or a device, or a link out of the folder; the same
//     for __has_include.
// The directives are found without understanding comments or string literals (every `#` or `%:` followed by
// `include`, wherever it stands), so a refusal may come from a commented-out line, but no directive is ever
// missed. One pass over each file: linear in its size. Plain C++17, no CUDA.
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

inline constexpr int64_t kMaxIncludedBytes = 16 << 20;  // every header of one kernel together
inline constexpr int kMaxIncludedFiles = 256;

struct IncludedHeader {
  std::string name;     // as the #include writes it ("common.cuh", "sub/tile.h"): NVRTC's lookup key
  std::string path;     // where it was read
  std::string content;  // what NVRTC gets
};

// An #include or __has_include found in a text.
struct IncludeDirective {
  int line = 0;  // 1-based, in the text given
  enum class Kind { Quoted, Angled, Computed } kind = Kind::Quoted;
  std::string name;     // between the quotes or brackets; for Computed, what follows the keyword
  std::string keyword;  // "include", "include_next", "import", "embed" or "__has_include"
};
// Every include directive of `text` (see above: comments and literals are not understood). Linear: `steps`
// (optional) receives how many characters its searches looked at beyond the one pass (for the tests).
std::vector<IncludeDirective> find_include_directives(const std::string& text, uint64_t* steps = nullptr);

// The headers a source includes from its folder, resolved as described above. `source_path`: the kernel
// file ("" for text with no file: then no header of its own folder can be included); `label`: how messages
// name it; `first_line`: the line of that file on which `text` starts (a .py file's CUDA string). Throws
// ValidationError "<file>:<line>: #include "../x.h" is refused: <why>".
std::vector<IncludedHeader> resolve_includes(const std::string& text, const std::string& source_path,
                                             const std::string& label, int first_line = 1);

// Headers resolved elsewhere (a window on another machine read them from the kernel file's folder: a remote
// engine has no such folder), checked without touching any file: the same refusals for every directive of
// `text` and of each header, at most kMaxIncludedFiles headers of at most kMaxKernelSourceBytes each and
// kMaxIncludedBytes in all, text without a NUL byte, each under a name an #include may write, no name twice.
// Throws ValidationError as resolve_includes() does.
void check_given_headers(const std::string& text, const std::vector<IncludedHeader>& headers,
                         const std::string& label, int first_line = 1);

}  // namespace ts

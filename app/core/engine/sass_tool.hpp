#pragma once
// [SECTION] cuobjdump, the tool that turns a cubin into a SASS listing: finding it, reading its output into
// one compact listing per function, and running it on a cubin at run time (a person's kernel, built by
// NVRTC). The build-time generator (kernels/engine/sass_gen.cpp) reads the kernels' objects with the same
// split_cuobjdump(), so both listings have one form. Plain C++ and POSIX.
#include <optional>
#include <string>
#include <vector>

namespace ts {

struct SassTool {
  std::string path;     // absolute
  std::string version;  // "13.2.51" (from `cuobjdump --version`), "" when it does not say
  std::string label() const { return "cuobjdump" + (version.empty() ? std::string() : " " + version); }
};

// Where cuobjdump is at run time, first found of: $TILESCOPE_CUOBJDUMP (a path), `cuobjdump` on $PATH, the
// CUDA toolkit's bin folder this build was made with, /usr/local/cuda/bin, and the copy the build used (a
// pinned wheel under the source tree: scripts/install-deps.sh). nullopt, with why, when none runs.
std::optional<SassTool> find_sass_tool(std::string* why);
// `path --version` read for its "V13.2.51"; "" when it does not answer that way.
std::string sass_tool_version(const std::string& path);

struct SassFunctionText {
  std::string name;  // mangled
  int arch = 0;      // 90 for sm_90 and sm_90a
  std::string text;  // "/*0040*/ ISETP.GE.AND P0, PT, R3, 0x1, PT ;" lines
};
// cuobjdump -sass output split by "code for sm_XX" and "Function : NAME", each instruction on one line
// without its encoding and padding. Functions over `max_bytes` of text are refused (std::runtime_error).
std::vector<SassFunctionText> split_cuobjdump(const std::string& output, size_t max_bytes = size_t(64) << 20);

// Runs `tool -sass` on `cubin` (written to a private temporary file) and returns `function`'s listing.
// Throws std::runtime_error naming the tool and what went wrong (it failed, it ran past `timeout_s`, the
// function is not in the cubin).
SassFunctionText disassemble_cubin(const SassTool& tool, const std::string& cubin,
                                   const std::string& function, double timeout_s = 30);

}  // namespace ts

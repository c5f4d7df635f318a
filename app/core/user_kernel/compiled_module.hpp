#pragma once
// [SECTION] What one build of a person's kernel is, as data: the job NVRTC gets (CompileJob) and what comes
// back (CompiledModule: the CUBIN, the PTX, ptxas's resource report, NVRTC's log and diagnostics). Plain C++:
// app/core describes builds; kernels/ makes them (nvrtc_compile.hpp, in a compiler process) behind the kernel
// workshop (kernel_workshop.hpp).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/user_kernel/nvrtc_log.hpp"
#include "core/user_kernel/user_kernel.hpp"

namespace ts {

struct CompileJob {
  std::string source;
  std::string label;                 // the file name compiler messages use ("my.cu")
  std::vector<std::string> options;  // extra options (-DTILE=16, --include-path=...)
  std::string name_expression;       // "&matmul_kernel" or "&k<16>"
  int arch = 90;                     // compute capability major * 10 + minor
  // The headers of the kernel file's folder it includes (app/core/user_kernel/include_resolver.hpp), handed
  // to NVRTC in memory: {name as the #include writes it, content}. NVRTC reads no other file of that folder.
  std::vector<std::pair<std::string, std::string>> headers;
  // NVRTC is stopped when it has not finished by then (not part of the cache key).
  double time_limit_s = kDefaultCompileLimitS;
  uint64_t memory_limit = 0;  // bytes NVRTC may take (0: compiler_memory_limit())
  uint64_t stack_bytes = 0;   // the stack of the thread that runs NVRTC (0: compiler_stack_bytes())
};

struct CompiledModule {
  bool ok = false;
  std::string log;  // NVRTC's log: diagnostics and ptxas's report
  std::vector<CompileDiagnostic> diagnostics;
  std::string cubin, ptx;
  std::string lowered_name;  // the kernel's mangled name in the CUBIN
  PtxasResources resources;
  int arch = 0;
  double compile_s = 0;              // wall time of the compile (0 for a cached module)
  bool from_cache = false;           // memory or disk
  std::string key;                   // SHA-256 of the inputs
  std::vector<std::string> options;  // every option NVRTC got
  // Not "": the compiler process did not finish (it crashed, ran out of time or memory, or could not start),
  // in words; `log` begins with the same words, and NVRTC's own output when it printed any.
  std::string compiler_failure;
};

}  // namespace ts

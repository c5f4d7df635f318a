#pragma once
// [SECTION] Reading what the compiler said: NVRTC's diagnostics ("my.cu(12): error: identifier "x" is
// undefined") with their lines, and ptxas's resource report (-Xptxas -v, which NVRTC passes on and puts in
// its log: registers, spills, stack, barriers and static shared memory of each entry function). Plain text
// parsing, shared by the compiler wrapper, the window and the tests.
#include <string>
#include <vector>

namespace ts {

struct CompileDiagnostic {
  int line = 0;          // in the compiled text (1-based); 0 when the message names no line
  std::string severity;  // "error", "warning", "catastrophic error", ...
  std::string message;   // the first line of the message
  std::string context;   // the source line and caret the compiler printed under it, if any
};
std::vector<CompileDiagnostic> parse_nvrtc_log(const std::string& log);
// The errors only, one per line, as "line 12: identifier "x" is undefined" (lines shifted by line_offset).
std::string describe_errors(const std::vector<CompileDiagnostic>& d, int line_offset, size_t max_errors = 10);

struct PtxasResources {
  bool found = false;
  int regs = 0;
  int static_smem = 0;  // bytes
  int stack_bytes = 0;
  int spill_stores = 0, spill_loads = 0;
  int barriers = 0;
  int cmem0 = 0;  // constant bank 0 (kernel parameters)
};
// The report of `function` (its mangled name, as NVRTC lowers it).
PtxasResources parse_ptxas_info(const std::string& log, const std::string& function);

}  // namespace ts

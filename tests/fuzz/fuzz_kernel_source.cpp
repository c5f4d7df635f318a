// libFuzzer target: the kernel scanner and the KernelBench (.py) extraction on arbitrary bytes (issue 26).
// The first byte picks the path: even, the text as a .cu (read, normalised, scanned, its host code blanked);
// odd, as a .py (the load_inline source extracted, then scanned). Every input must be refused with a
// ValidationError or scanned; any other exception, a crash, a sanitizer report, a hang or a slow input
// (libFuzzer's -timeout in scripts/fuzz.sh) is a finding, and so is work beyond the linear bound the unit
// tests hold the scanner to.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/user_kernel/include_resolver.hpp"
#include "core/user_kernel/kernel_source.hpp"
#include "core/engine/problem.hpp"

namespace {

constexpr uint64_t kStepsPerByte = 256;  // far above what any input needs (the unit tests: 64)

void check_scan(const std::string& text) {
  const ts::SourceScan scan = ts::scan_cuda_source(text);
  if (scan.work > kStepsPerByte * (text.size() + 16)) std::abort();
  for (const auto& k : scan.kernels) {
    if (k.name.empty() || k.body.end > text.size() || k.body.begin > k.body.end ||
        k.name_span.end > text.size() || k.global_kw.end > text.size())
      std::abort();
    if (k.scope >= int(scan.scopes.size())) std::abort();
    (void)scan.scope_of(k);
  }
  for (const auto& s : scan.symbols)
    if (s.value_span.end > text.size() || s.line < 1 || s.line > scan.lines) std::abort();
  const std::string dev = ts::blank_spans(text, scan.host_code);
  if (dev.size() != text.size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool python = data[0] & 1;
  const std::string raw(reinterpret_cast<const char*>(data + 1), size - 1);
  // The scanner takes any bytes (the editor's text is checked first, but it must never misbehave anyway).
  check_scan(raw);
  // So does the #include finder, in counted linear work, with lines inside the text.
  {
    uint64_t steps = 0;
    const auto found = ts::find_include_directives(raw, &steps);
    if (steps > 8 * raw.size() + 100) std::abort();
    for (const auto& d : found)
      if (d.line < 1 || size_t(d.line) > raw.size() + 1) std::abort();
  }
  if (python) {
    uint64_t work = 0;
    int first = 0;
    try {
      (void)ts::extract_load_inline_source(raw, "fuzz.py", &first, &work);
    } catch (const ts::ValidationError&) {
    }
    if (work > kStepsPerByte * (raw.size() + 16)) std::abort();
  }
  try {
    const ts::KernelSource src = ts::kernel_source_from_text(raw, "fuzz", python);
    if (src.text.compare(0, 3, "\xEF\xBB\xBF") == 0) std::abort();  // no BOM reaches NVRTC
    check_scan(src.text);
  } catch (const ts::ValidationError&) {
    // Refused, with a reason: not text, too large, or a .py without a CUDA source.
  }
  return 0;
}

#pragma once
// [SECTION] A person's own kernel as a backend's kernel workshop holds it ("yours: <name>"): one version of
// one kernel of one source, immutable once made (a new save or a corrected form makes a new version that
// replaces it), with what TileScope understood of it (user_kernel.hpp), the headers of its folder it
// includes, and the NVRTC jobs of its builds. Plain C++: the workshop (kernel_workshop.hpp) builds it, checks
// it and registers it; the engine runs it through the worker process (kernels/user_run.*);
// `tilescope list --kernel-file` and the window's form describe it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/base/cancel.hpp"
#include "core/user_kernel/include_resolver.hpp"
#include "core/user_kernel/kernel_source.hpp"
#include "core/user_kernel/compiled_module.hpp"
#include "core/user_kernel/user_kernel.hpp"

namespace ts {

// A build that failed: the message carries the compiler's errors with their lines in the person's file.
class CompileError : public ValidationError {
 public:
  CompileError(const std::string& what, std::shared_ptr<const CompiledModule> module, int first_line)
      : ValidationError(what), m_module(std::move(module)), m_first_line(first_line) {}
  const std::shared_ptr<const CompiledModule>& module() const { return m_module; }
  int first_line() const { return m_first_line; }  // add first_line - 1 to a diagnostic's line for the file's

 private:
  std::shared_ptr<const CompiledModule> m_module;
  int m_first_line;
};

// The longest kernel name TileScope takes (characters).
inline constexpr size_t kMaxKernelName = 1024;

// Corrections from the command line (the window edits the UserKernelSpec directly).
struct UserKernelOptions {
  std::string kernel;               // which __global__ function ("" when there is one)
  std::vector<std::string> params;  // "NAME=ROLE"
  std::string grid, block;          // "fx,fy[,fz]"
  std::string smem;                 // a formula
  std::string tile_macro;           // the symbol bound to the Tile control ("none": none)
  int tile = 0;                     // a tile the person asked for (added to the Tile control's values)
  double hang_limit_s = 0;          // 0: the default
  double compile_limit_s = 0;       // 0: the default
  bool tf32 = false;
};

class UserKernel {
 public:
  // Reads, scans and understands a file; applies the corrections; checks the result. Throws ValidationError.
  static std::shared_ptr<const UserKernel> open_file(const std::string& path, const UserKernelOptions& o);
  // From a source already read (the editor's text) and the kernel's name; `spec`: the form's corrections
  // (null: what TileScope proposes); `headers`: the headers it includes, read already where the file is (a
  // remote engine's, checked with check_given_headers; null: read from the source's folder now). Throws
  // ValidationError.
  static std::shared_ptr<const UserKernel> make(KernelSource src, const std::string& kernel,
                                                const UserKernelSpec* spec,
                                                const std::vector<IncludedHeader>* headers = nullptr);

  std::string id() const { return "yours:" + decl().name; }
  // Its entry in a kernel list (has_cuda false: the workshop that lists it says whether it can build it).
  KernelInfo info() const;
  const KernelSource& source() const { return m_source; }
  const SourceScan& scan() const { return m_scan; }
  const KernelDecl& decl() const { return m_scan.kernels[m_kernel]; }
  const UserKernelSpec& spec() const { return m_spec; }
  const std::vector<std::string>& notes() const { return m_notes; }
  bool square_only() const { return is_square_only(m_spec); }
  uint64_t version() const { return m_version; }  // increases with every UserKernel made in this process
  // The headers of its folder it includes, as read when it was made.
  const std::vector<IncludedHeader>& headers() const { return m_headers; }

  // The NVRTC jobs of one build: the plain kernel, and the traced one (nullopt with the reason).
  CompileJob plain_job(int tile, int arch, const ExprVars& sizes) const;
  std::optional<CompileJob> traced_job(int tile, int arch, const ExprVars& sizes, int max_regs,
                                       std::string* why_not) const;
  // What TileScope understood, in words (`tilescope list --kernel-file`, the window).
  std::string describe() const;

 private:
  UserKernel() = default;
  KernelSource m_source;
  SourceScan m_scan;
  size_t m_kernel = 0;
  UserKernelSpec m_spec;
  std::vector<std::string> m_notes;
  uint64_t m_version = 0;
  // The headers of its folder it includes, read when it was made (a new save reads them again).
  std::vector<IncludedHeader> m_headers;
};

}  // namespace ts

#pragma once
// [SECTION] The kernel workshop: where a person's own kernels are opened, understood, built, checked with
// compute-sanitizer and registered, one workshop per backend (Backend::workshop()), never a process-wide
// list. app/core declares it and keeps the register; kernels/ implements what needs the toolkit or the GPU
// (kernels/user/nvrtc_workshop.hpp: NVRTC in a compiler process, compute-sanitizer in a worker). The window
// and the command line reach a person's kernel only through it, and a backend runs only the kernels its own
// workshop registered: a backend in another process or on another machine brings its own.
// Calls that take time (build, sanitize) block and take a CancelToken, as Backend::run does: the window
// makes them off its thread. Thread-safe.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/base/cancel.hpp"
#include "core/user_kernel/compiled_module.hpp"
#include "core/user_kernel/your_kernel.hpp"

namespace ts {

// What one compute-sanitizer tool found in one run of a person's kernel.
struct SanitizerReport {
  std::string tool;  // "memcheck" or "racecheck"
  bool ran = false;  // the tool ran to the end (its summary line was seen)
  int issues = -1;   // errors (memcheck) or hazards (racecheck) it reported; -1: unknown
  std::string
      summary;  // its summary line, e.g. "RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)"
  std::string output;  // everything it printed (capped at 1 MiB)
  double seconds = 0;
  std::string problem;  // why it did not run, in words (no tool, a timeout, a build error)
  ProblemSpec shape;    // the shape it ran on
};

// One report per tool that did not run, each saying why.
std::vector<SanitizerReport> reports_not_run(const std::vector<std::string>& tools, const ProblemSpec& shape,
                                             const std::string& why);

class KernelWorkshop {
 public:
  virtual ~KernelWorkshop() = default;

  // [SECTION] Open and understand (plain C++, where the file is: its text and the headers of its folder it
  // includes travel with the kernel). Throw ValidationError.
  // Reads, scans and understands a file, applies the command line's corrections and checks the result.
  std::shared_ptr<const UserKernel> open(const std::string& path, const UserKernelOptions& o) const;
  // A source already read (the editor's text) and the kernel's name; `spec`: the form's corrections (null:
  // what TileScope proposes); `headers`: the headers it includes as read where the file is (a remote
  // engine's: its window sent them; null: read from the source's folder now). The same source, kernel, spec
  // and headers give the same kernel (id, entry, builds) in every process.
  std::shared_ptr<const UserKernel> understand(KernelSource src, const std::string& kernel,
                                               const UserKernelSpec* spec,
                                               const std::vector<IncludedHeader>* headers = nullptr) const;

  // [SECTION] Build.
  // Whether kernels can be built here (this build has NVRTC); `why` says why not.
  virtual bool can_build(std::string* why) const = 0;
  virtual std::string compiler() const = 0;  // e.g. "NVRTC 13.0"
  // The architectures it builds for (compute capability major * 10 + minor).
  virtual std::vector<int> architectures() const = 0;
  // The architecture of the backend's GPU (0: the backend has none; the window then shows a catalog GPU's).
  virtual int device_arch() const = 0;
  // The plain build of `k` at `tile` for `arch`, compiled or from the cache. Throws CompileError with the
  // errors at their lines in the person's file, Cancelled when `cancel` stops it.
  virtual std::shared_ptr<const CompiledModule> build(const UserKernel& k, int tile, int arch,
                                                      const ExprVars& sizes,
                                                      const CancelToken* cancel = nullptr) const = 0;
  // The plain build if it is cached already (never compiles; nullptr otherwise).
  virtual std::shared_ptr<const CompiledModule> cached_build(const UserKernel& k, int tile, int arch,
                                                             const ExprVars& sizes) const = 0;

  // [SECTION] Check: `tools` (memcheck, racecheck) one after the other on the backend's GPU, at the shape
  // of `spec` made small (each side at most 511, the same partial tiles). A report that did not run says
  // why (no GPU, no compute-sanitizer, a build error); each tool gets at most `timeout_s`.
  virtual bool can_sanitize(std::string* why) const = 0;
  virtual std::vector<SanitizerReport> sanitize(const UserKernel& k, const ProblemSpec& spec,
                                                const std::vector<std::string>& tools, double timeout_s,
                                                const CancelToken* cancel = nullptr) const = 0;

  // [SECTION] Register: the kernels its backend lists and runs.
  // Adds the kernel, or replaces the one with the same id (a new version of the same file's kernel).
  // Never waits for a build or a link (the window publishes from its frame).
  void publish(std::shared_ptr<const UserKernel> k);
  void withdraw(const std::string& id);
  std::shared_ptr<const UserKernel> find(const std::string& id) const;
  std::vector<std::shared_ptr<const UserKernel>> registered() const;
  // Their entries for the backend's kernel list (has_cuda: this workshop can build them).
  std::vector<KernelInfo> infos() const;
  // Counts every publish and withdraw: the register changed when it did (Backend::kernel_list()).
  uint64_t serial() const { return m_serial.load(); }

 protected:
  // The register changed under `id` (published or withdrawn; find(id) says which): called after the change,
  // outside the register's lock, on the thread that made it. A workshop whose kernels also live elsewhere (a
  // remote engine's, remote_workshop.hpp) tells it there; a local one has nothing to do.
  virtual void registered_changed(const std::string& id) { (void)id; }

 private:
  mutable std::mutex m_mu;
  std::atomic<uint64_t> m_serial{0};
  std::vector<std::shared_ptr<const UserKernel>> m_kernels;
};

// "sm_90" / "90" / "9.0" / "compute_90" -> 90. Throws ValidationError naming the accepted forms and every
// architecture of the workshop (sm_76, sm_122 are none).
int parse_arch(const std::string& text, const KernelWorkshop& w);

}  // namespace ts

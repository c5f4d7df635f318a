#pragma once
// [SECTION] The kernel workshop of this build's backends (app/core/user_kernel/kernel_workshop.hpp): a
// person's kernel built by NVRTC in a compiler process (nvrtc_compile.hpp, cached) and checked by
// compute-sanitizer in a worker (user_sanitize.hpp) on the backend's GPU. make_backend() gives every backend
// one of its own. Plain C++ header.
#include <memory>
#include <string>
#include <vector>

#include "core/user_kernel/kernel_workshop.hpp"

namespace ts {

class NvrtcWorkshop final : public KernelWorkshop {
 public:
  // `device`: the CUDA device ordinal the backend measures on and `sm` its architecture; -1 and 0 for a
  // backend without a GPU (it builds for any architecture, but sanitizes nothing).
  NvrtcWorkshop(int device, int sm) : m_device(device), m_sm(sm) {}
  bool can_build(std::string* why) const override;
  std::string compiler() const override;
  std::vector<int> architectures() const override;
  int device_arch() const override { return m_sm; }
  std::shared_ptr<const CompiledModule> build(const UserKernel& k, int tile, int arch, const ExprVars& sizes,
                                              const CancelToken* cancel = nullptr) const override;
  std::shared_ptr<const CompiledModule> cached_build(const UserKernel& k, int tile, int arch,
                                                     const ExprVars& sizes) const override;
  bool can_sanitize(std::string* why) const override;
  std::vector<SanitizerReport> sanitize(const UserKernel& k, const ProblemSpec& spec,
                                        const std::vector<std::string>& tools, double timeout_s,
                                        const CancelToken* cancel = nullptr) const override;

 private:
  int m_device = -1;
  int m_sm = 0;
};

// The plain build of `k` (NvrtcWorkshop::build without a workshop: the worker's runner and the sanitizer
// use it). Throws CompileError, Cancelled.
std::shared_ptr<const CompiledModule> build_user_kernel(const UserKernel& k, int tile, int arch,
                                                        const ExprVars& sizes,
                                                        const CancelToken* cancel = nullptr);

// The architectures NVRTC compiles for: its own list (nvrtcGetSupportedArchs) where this build has NVRTC,
// else NVRTC 13.0's.
std::vector<int> nvrtc_architectures();

}  // namespace ts

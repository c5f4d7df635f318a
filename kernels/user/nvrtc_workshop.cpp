#include "kernels/user/nvrtc_workshop.hpp"

#include "kernels/user/nvrtc_compile.hpp"
#include "kernels/engine/registry.hpp"

#if defined(TILESCOPE_HAVE_NVRTC)
#include <nvrtc.h>
#endif
#if defined(TILESCOPE_HAVE_CUDA)
#include "kernels/user/user_sanitize.hpp"
#endif

namespace ts {

std::vector<int> nvrtc_architectures() {
#if defined(TILESCOPE_HAVE_NVRTC)
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
    std::vector<int> archs(size_t(n), 0);
    if (nvrtcGetSupportedArchs(archs.data()) == NVRTC_SUCCESS) return archs;
  }
#endif
  // A build without NVRTC (nothing can be compiled in it, but a kernel file is still checked as far as it
  // can be): what nvrtcGetSupportedArchs says for NVRTC 13.0, the toolkit TileScope is built with.
  return {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
}

std::shared_ptr<const CompiledModule> build_user_kernel(const UserKernel& k, int tile, int arch,
                                                        const ExprVars& sizes, const CancelToken* cancel) {
  auto m = compile_module(k.plain_job(tile, arch, sizes), cancel);
  if (m->ok) return m;
  const std::string file = k.source().path.empty() ? k.source().label : k.source().path;
  const std::string where = " (" + file + ", " +
                            (k.spec().tile_symbol.empty() ? "TILE" : k.spec().tile_symbol) + " = " +
                            std::to_string(tile) + ", sm_" + std::to_string(arch) + "):\n";
  if (!m->compiler_failure.empty())
    throw CompileError("yours: " + k.decl().name + " was not built" + where + m->log +
                           "\nThe last good build, if any, stays in use.",
                       m, k.source().first_line);
  std::string errors = describe_errors(m->diagnostics, k.source().first_line - 1);
  if (errors.empty()) errors = m->log + "\n";
  throw CompileError("yours: " + k.decl().name + " does not compile" + where + errors +
                         (k.source().from_python ? "(lines are those of the .py file)\n" : "") +
                         "The last good build, if any, stays in use.",
                     m, k.source().first_line);
}

bool NvrtcWorkshop::can_build(std::string* why) const {
  if (!cuda_compiled()) {
    if (why) *why = cuda_build_note();
    return false;
  }
  return nvrtc_available(why);
}

std::string NvrtcWorkshop::compiler() const {
#if defined(TILESCOPE_HAVE_NVRTC)
  return "NVRTC " + nvrtc_version();
#else
  return "NVRTC 13.0";
#endif
}

std::vector<int> NvrtcWorkshop::architectures() const {
  return nvrtc_architectures();
}

std::shared_ptr<const CompiledModule> NvrtcWorkshop::build(const UserKernel& k, int tile, int arch,
                                                           const ExprVars& sizes,
                                                           const CancelToken* cancel) const {
  return build_user_kernel(k, tile, arch, sizes, cancel);
}

std::shared_ptr<const CompiledModule> NvrtcWorkshop::cached_build(const UserKernel& k, int tile, int arch,
                                                                  const ExprVars& sizes) const {
  return cached_module(k.plain_job(tile, arch, sizes));
}

bool NvrtcWorkshop::can_sanitize(std::string* why) const {
  if (m_device < 0) {
    if (why) *why = "compute-sanitizer runs the kernel, so it needs a GPU";
    return false;
  }
  return can_build(why);
}

std::vector<SanitizerReport> NvrtcWorkshop::sanitize(const UserKernel& k, const ProblemSpec& spec,
                                                     const std::vector<std::string>& tools, double timeout_s,
                                                     const CancelToken* cancel) const {
  std::string why;
  if (can_sanitize(&why)) {
#if defined(TILESCOPE_HAVE_CUDA)
    return sanitize_user_kernel(k, spec, m_sm, m_device, tools, timeout_s, cancel);
#else
    why = "this build has no CUDA backend (built without nvcc)";
#endif
  }
  (void)k;
  (void)timeout_s;
  (void)cancel;
  return reports_not_run(tools, spec, why);
}

}  // namespace ts

#pragma once
// [SECTION] The kernel registry and backend factory: a plain C++ header, so app/ compiles without nvcc. The
// built-in kernels are listed once, in ladder order, in registry.cpp; each defines its entry (its metadata,
// CUDA launcher and CPU algorithm) beside its launcher in its own file (kernel_entry.hpp). A person's own
// kernels are not here: each backend's workshop registers them (app/core/user_kernel/kernel_workshop.hpp),
// and the backend lists them after these as "yours: <name>".
#include <memory>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "kernels/rungs/kernel_entry.hpp"
#include "kernels/engine/launch.hpp"

namespace ts {

// The built-in kernels, in ladder order, then the teaching variants.
const std::vector<KernelEntry>& register_kernels();
// Their entries (a backend adds the kernels its workshop registered: Backend::kernels()).
std::vector<KernelInfo> builtin_kernel_infos();

// Whether this build has the CUDA backend at all.
bool cuda_compiled();
// What this build has of CUDA, in words: "built with the CUDA 12.4 toolkit", or "built without CUDA".
std::string cuda_build_note();
// Number of usable CUDA devices; 0 with a reason in `why` when there is none (no driver, no GPU, no CUDA
// build).
int cuda_device_count(std::string* why);

// Creates the backend: Auto picks CUDA when a device is present, else the CPU (with `note` saying why).
// Cuda without a device throws std::runtime_error naming the reason; a `device` the machine does not have
// throws ValidationError naming how many it has.
std::shared_ptr<Backend> make_backend(BackendChoice choice, std::string* note, int device = 0);

}  // namespace ts

#pragma once
// [SECTION] The kernel registry and backend factory: a plain C++ header, so ui/ and app/ compile without
// nvcc. The built-in kernels are listed once, in ladder order, in registry.cpp; each defines its entry (its
// metadata, CUDA launcher and CPU algorithm) beside its launcher in its own file (kernel_entry.hpp). A
// person's own kernels (user_kernel.hpp) join the same registry at run time, as "yours: <name>".
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include "kernel_entry.hpp"
#include "launch.hpp"

namespace ts {

class UserKernel;

// The built-in kernels, in ladder order, then the teaching variants.
const std::vector<KernelEntry>& register_kernels();
// Every kernel: the built-ins, then the user kernels registered now.
std::vector<KernelInfo> kernel_infos();

// [SECTION] User kernels (thread-safe: the window registers, the engine's thread looks up).
// Adds the kernel, or replaces the one with the same id (a new version of the same file's kernel).
void register_user_kernel(std::shared_ptr<const UserKernel> k);
void remove_user_kernel(const std::string& id);
std::shared_ptr<const UserKernel> find_user_kernel(const std::string& id);
std::vector<std::shared_ptr<const UserKernel>> user_kernels();
std::vector<KernelInfo> user_kernel_infos();

// Whether this build has the CUDA backend at all.
bool cuda_compiled();
// What this build has of CUDA, in words: "built with the CUDA 12.4 toolkit", or "built without CUDA".
std::string cuda_build_note();
// Number of usable CUDA devices; 0 with a reason in `why` when there is none (no driver, no GPU, no CUDA
// build).
int cuda_device_count(std::string* why);

// Creates the backend: Auto picks CUDA when a device is present, else the CPU (with `note` saying why).
// Cuda without a device throws std::runtime_error naming the reason.
std::shared_ptr<Backend> make_backend(BackendChoice choice, std::string* note);

}  // namespace ts

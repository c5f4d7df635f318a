#pragma once
// [SECTION] The kernel registry and backend factory: a plain C++ header, so ui/ and app/ compile without
// nvcc. Every matmul variant is registered once, in register_kernels() (registry.cpp), with its metadata, its
// CUDA launcher (when CUDA was compiled in) and its CPU implementation (when it has one).
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include "launch.hpp"

namespace ts {

struct KernelEntry {
  KernelInfo info;
  CudaLaunchFn cuda = nullptr;  // nullptr: no CUDA implementation (or CUDA not compiled in)
};

const std::vector<KernelEntry>& register_kernels();
std::vector<KernelInfo> kernel_infos();

// Whether this build has the CUDA backend at all.
bool cuda_compiled();
// Number of usable CUDA devices; 0 with a reason in `why` when there is none (no driver, no GPU, no CUDA
// build).
int cuda_device_count(std::string* why);

// Creates the backend: Auto picks CUDA when a device is present, else the CPU (with `note` saying why).
// Cuda without a device throws std::runtime_error naming the reason.
std::shared_ptr<Backend> make_backend(BackendChoice choice, std::string* note);

}  // namespace ts

#pragma once
// The CUDA backend's entry points (plain C++; the implementation is in cuda_backend.cu).
#include <memory>
#include <string>

#include "core/engine/backend.hpp"

namespace ts {

// Usable CUDA devices; 0 with the runtime's reason in `why`.
int cuda_devices(std::string* why);
std::shared_ptr<Backend> make_cuda_backend(int device);

}  // namespace ts

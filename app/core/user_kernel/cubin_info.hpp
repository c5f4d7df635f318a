#pragma once
// [SECTION] A kernel's resources read from its cubin (an ELF file), for when the compiler's log does not say
// them. Registers come from the EIATTR_REGCOUNT attribute in .nv.info (the same number ptxas -v prints),
// static shared memory from the size of the function's .nv.shared section, less the 1 KB the architecture
// reserves per block where the cubin marks it (.nv.shared.reserved.*, sm_90 and later), and the stack from
// EIATTR_MIN_STACK_SIZE / EIATTR_FRAME_SIZE. Spills and barriers are not in the cubin and stay 0.
#include <optional>
#include <string>

#include "core/user_kernel/nvrtc_log.hpp"

namespace ts {

// nullopt when `cubin` is not a 64-bit little-endian ELF or has no function named `function` (mangled).
// Never reads outside `cubin` (a damaged file gives nullopt).
std::optional<PtxasResources> read_cubin_resources(const std::string& cubin, const std::string& function);

}  // namespace ts

#pragma once
// [SECTION] "Check with compute-sanitizer": the person's kernel run once under memcheck and racecheck, in a
// worker of its own (`compute-sanitizer --tool T tilescope worker --job FILE`), on generated inputs of the
// problem's shape made small (small_dim_like: each side at most 511, the same partial tiles; the tools slow a
// kernel down a hundredfold). The
// report is the tool's own text, with its summary line and the count of errors or hazards read out of it. The
// missing second __syncthreads() shows up here as a shared-memory race even when the result happens to be
// right. Plain C++ and POSIX; the tool comes from $TILESCOPE_COMPUTE_SANITIZER, PATH or the CUDA toolkit.
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/base/cancel.hpp"
#include "core/user_kernel/kernel_workshop.hpp"

namespace ts {

class UserKernel;

// Where compute-sanitizer is ("" with the reason in `why` when it is nowhere).
std::string find_compute_sanitizer(std::string* why);

// The first few errors of a tool's report, each with the source line it names ("Invalid __global__ write of
// size 4 bytes ... at k(float*, ...)+0x1d0 in k.cu:12"), one per line.
std::string first_sanitizer_errors(const std::string& output, int max_errors = 3);

// Runs `tools` (memcheck, racecheck, ...) one after the other on the kernel at `spec` (its shape capped, its
// tile as given) for a device of compute capability `arch`. Each tool gets at most `timeout_s`.
std::vector<SanitizerReport> sanitize_user_kernel(const UserKernel& k, const ProblemSpec& spec, int arch,
                                                  int device, const std::vector<std::string>& tools,
                                                  double timeout_s, const CancelToken* cancel = nullptr);

}  // namespace ts

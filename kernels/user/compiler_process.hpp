#pragma once
// [SECTION] The app's side of the compiler process (`tilescope compiler`, nvrtc_compile.hpp): starts one per
// compile, sends the job, drains what it prints, and waits for its answer under the job's time limit and the
// caller's cancel token. A crash, a time limit reached, memory exhausted or a process that cannot start
// becomes a failure in words, with what NVRTC printed: never a crash, a hang or a signal of the caller's own.
// Plain C++ and POSIX.
#include <string>

#include "core/base/cancel.hpp"
#include "core/io/worker_protocol.hpp"

namespace ts {

struct CompilerOutcome {
  wire::CompiledMsg reply;  // when failure is empty
  std::string failure;      // "" when the compiler answered
  std::string output;       // what the compiler process printed (its last 16 KiB)
  double wall_s = 0;        // from the start of the process to its answer
};

// Throws Cancelled when `cancel` is set before the answer (the process is killed first).
CompilerOutcome compile_in_child(const wire::CompileMsg& job, const CancelToken* cancel);

// How many compiler processes this process has running now (the window's status; tests that cancel one
// mid-compile wait for it to start, and check that none is left after).
int compilers_running();

// The address space this process maps now (field "VmSize:") or at most so far ("VmPeak:"), in bytes (0 when
// unknown): the base of the compiler's memory limit, and how it knows it reached it.
uint64_t address_space_bytes(const char* field = "VmSize:");

}  // namespace ts

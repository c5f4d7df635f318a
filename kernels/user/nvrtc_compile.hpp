#pragma once
// [SECTION] NVRTC: a person's kernel compiled at run time for one GPU architecture (a CUBIN for sm_XX), with
// ptxas's resource report (registers, spills, stack, barriers, static shared memory per block) read from
// NVRTC's own log (-Xptxas -v: NVRTC hands the option to the ptxas it embeds and appends its report to the
// program log), the PTX kept for the window, and every build cached by the SHA-256 of all that went into it
// (NVRTC's version, the architecture, the options, the kernel's name expression and the source): in memory,
// and on disk under $XDG_CACHE_HOME/tilescope/kernels (TILESCOPE_CACHE_DIR overrides; "off" disables).
// NVRTC is a library of the CUDA toolkit: it needs no GPU and no driver. It runs in a process of its own
// (`tilescope compiler`, started per compile; a cached module starts none), with a time limit, a stack of
// its own and a memory limit, in a process group of its own: NVRTC may crash (it does on some inputs),
// recurse past any stack, run for minutes or install its own signal handlers without touching the window or
// the command line, and a compile can be cancelled at once. Plain C++ header.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/cancel.hpp"
#include "core/user_kernel/compiled_module.hpp"

namespace ts {

// Whether this build can compile at run time (it was built with the CUDA toolkit); `why` says why not.
bool nvrtc_available(std::string* why);
std::string nvrtc_version();  // e.g. "13.0"

// Compiles `job` in a compiler process, or returns the cached module of the same inputs. A compile error, a
// crash of NVRTC, a compile over its time limit or out of memory is a module with ok == false (its log and
// diagnostics, or compiler_failure, say why); `cancel` stops the compile within ~20 ms and throws Cancelled.
// Throws std::runtime_error only when this build has no NVRTC.
std::shared_ptr<const CompiledModule> compile_module(const CompileJob& job,
                                                     const CancelToken* cancel = nullptr);
// The cached module of `job` (memory, then disk), without compiling; nullptr when there is none.
std::shared_ptr<const CompiledModule> cached_module(const CompileJob& job);

// Counters since the start (or the last reset), for the tests and the figures.
struct ModuleCacheStats {
  int compiles = 0, memory_hits = 0, disk_hits = 0;
};
ModuleCacheStats module_cache_stats();
// Forgets the memory cache and the counters (the disk cache stays): for tests and benchmarks of a cold start.
void reset_module_cache();
// The disk cache folder ("" when disabled).
std::string module_cache_dir();

// The limits the compiler process sets itself: the stack of the thread that runs NVRTC (the main thread's is
// the system's 8 MiB, which a source of nested macros overflows), and how much memory NVRTC may take beyond
// what the process has when it starts (the smaller of 16 GiB and half of this machine's memory).
uint64_t compiler_stack_bytes();
uint64_t compiler_memory_limit();

// `tilescope compiler --fd N --parent P`: the compiler process's side. Reads one Compile message from `fd`,
// sets its limits, compiles on a thread with the stack asked for, answers Compiled and returns 0 (2 for a
// request that makes no sense). Exits with the app (PR_SET_PDEATHSIG) and by itself after the time limit.
int run_compiler(int fd, int parent_pid);

}  // namespace ts

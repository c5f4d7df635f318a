#pragma once
// [SECTION] The command line's side of a person's own kernel: the options that name the file and correct what
// TileScope understood (shared by run, bench, snapshot and list), loading it into the registry, `tilescope
// list --kernel-file` (what was understood, and registers, shared memory and occupancy per tile for a chosen
// architecture, without a GPU), `tilescope run --sanitize`, and the `tilescope worker` subcommand.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/engine/backend.hpp"

namespace ts::cli {

struct KernelFileArgs {
  std::string file;                 // --kernel-file
  std::vector<std::string> params;  // --param NAME=ROLE
  std::string grid, block, smem, tile_macro, hang_limit, compile_limit;
  bool tf32 = false;
  bool no_guard = false;  // --no-guard: no memcheck before a new build's first launch (RunRequest)
};
void add_kernel_file_options(CLI::App* cmd, KernelFileArgs& a);

// Reads, understands, checks and registers the file's kernel with the backend's workshop (`name`: which
// __global__ function; "" when it has one); `tile`: a --tile the person gave ("" none). Returns its id
// ("yours:<name>"). Throws ValidationError.
std::string load_kernel_file(const KernelFileArgs& a, const std::string& name, const std::string& tile,
                             Backend& backend);

// `tilescope list --kernel-file FILE [--arch A] [--gpu G] [--json]`: every kernel in the file. Exit code.
int list_kernel_file(const KernelFileArgs& a, const std::string& arch, const std::string& gpu, bool json);

// `tilescope run --sanitize`: compute-sanitizer memcheck and racecheck on the request's kernel. Exit code: 0
// clean, 1 errors or hazards (or the tool could not run).
int sanitize(const RunRequest& req, Backend& backend, bool json);

// `tilescope worker --fd N | --job FILE`.
struct WorkerArgs {
  int fd = -1, device = 0, parent = 0;
  std::string job;
};
void add_worker_options(CLI::App* cmd, WorkerArgs& a);
int worker(WorkerArgs& a, const CLI::App& cmd);

// `tilescope compiler --fd N --parent P`: NVRTC for TileScope in a process of its own (nvrtc_compile.hpp).
struct CompilerArgs {
  int fd = -1, parent = 0;
};
void add_compiler_options(CLI::App* cmd, CompilerArgs& a);
int compiler(CompilerArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

// `tilescope worker`: the process that runs a person's kernel for the app (kernels/user/user_worker.hpp), and
// `tilescope compiler`: the process that compiles one with NVRTC (kernels/user/nvrtc_compile.hpp). Started by
// TileScope itself, not by people: `--fd N` is the socket to the app, `--job FILE` one launch for
// compute-sanitizer.
#include <cstdio>
#include <cstdlib>

#include "cli/kernel_file.hpp"
#include "cli/cli.hpp"
#include "kernels/user/nvrtc_compile.hpp"
#include "kernels/engine/registry.hpp"

#if defined(TILESCOPE_HAVE_CUDA)
#include "kernels/user/user_worker.hpp"
#endif

namespace ts::cli {

void add_worker_options(CLI::App* cmd, WorkerArgs& a) {
  cmd->add_option("--fd", a.fd, "the socket to the app (started by TileScope)");
  cmd->add_option("--device", a.device, "CUDA device")->capture_default_str();
  cmd->add_option("--parent", a.parent, "the app's process id (the worker exits with it)");
  cmd->add_option("--job", a.job, "run one launch from this job file (what compute-sanitizer runs)");
}

int worker(WorkerArgs& a, const CLI::App& cmd) {
  (void)cmd;
  if (a.job.empty() && a.fd < 0) {
    std::fprintf(stderr, "tilescope worker: TileScope starts this itself (--fd N or --job FILE)\n");
    return kExitUsage;
  }
#if defined(TILESCOPE_HAVE_CUDA)
  // A job ends normally (compute-sanitizer, which runs it, reports at the end of the process).
  if (!a.job.empty()) return run_worker_job(a.job, a.device);
  const int rc = run_worker(a.fd, a.device, a.parent);
  // The app's worker goes straight out: after a fault its CUDA context is ruined, and tearing that down at
  // exit could only hang or complain; the driver frees everything of a process that ends.
  std::fflush(nullptr);
  std::_Exit(rc);
#else
  (void)a;
  std::fprintf(stderr, "tilescope worker: this build has no CUDA backend (built without nvcc)\n");
  return kExitUsage;
#endif
}

void add_compiler_options(CLI::App* cmd, CompilerArgs& a) {
  cmd->add_option("--fd", a.fd, "the socket to the app (started by TileScope)");
  cmd->add_option("--parent", a.parent, "the app's process id (the compiler exits with it)");
}

int compiler(CompilerArgs& a, const CLI::App& cmd) {
  (void)cmd;
  if (a.fd < 0) {
    std::fprintf(stderr, "tilescope compiler: TileScope starts this itself (--fd N)\n");
    return kExitUsage;
  }
  const int rc = run_compiler(a.fd, a.parent);
  // Straight out: NVRTC's state needs no tearing down, and the process held nothing else.
  std::fflush(nullptr);
  std::_Exit(rc);
}

}  // namespace ts::cli

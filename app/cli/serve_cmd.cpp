#include "cli/serve_cmd.hpp"

#include <csignal>
#include <cstdio>

#include <unistd.h>

#include "cli/cli.hpp"
#include "core/remote/engine_server.hpp"
#include "kernels/engine/registry.hpp"

namespace ts::cli {

void add_serve_options(CLI::App* cmd, ServeArgs& a) {
  cmd->add_option("--backend", a.backend, "auto (CUDA if a GPU is present), cuda or cpu")
      ->capture_default_str();
  cmd->add_option("--device", a.device, "the CUDA device to serve (0, 1, ...)")->capture_default_str();
  cmd->add_flag("--quiet", a.quiet, "say nothing on standard error when starting and stopping");
}

int cmd_serve(ServeArgs& a, const CLI::App& cmd) {
  const BackendChoice choice = parse_backend_choice(a.backend);
  if (a.device < 0) throw ValidationError("--device " + std::to_string(a.device) + " is not a device number");
  if (cmd.count("--device") && choice == BackendChoice::Cpu)
    throw ValidationError("--device picks a CUDA device; the CPU backend has none");
  if (::isatty(STDOUT_FILENO))
    std::fprintf(
        stderr,
        "tilescope serve: standard output is a terminal. This command speaks TileScope's engine protocol "
        "to a window or a command line, e.g.\n  tilescope --engine \"ssh this-host tilescope serve\"\n");
  // Standard output carries frames only: whatever else would print there (a library, a stray printf) goes to
  // standard error instead.
  const int out = ::dup(STDOUT_FILENO);
  if (out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw std::runtime_error("cannot set up standard output");
  std::signal(SIGPIPE, SIG_IGN);
  std::string note;
  const auto backend = make_backend(choice, &note, a.device);
  if (!a.quiet)
    std::fprintf(stderr, "tilescope serve: %s engine on %s%s%s\n", backend->kind().c_str(),
                 backend->device_name().c_str(), note.empty() ? "" : "; ", note.c_str());
  const remote::ServeStats s = remote::serve(backend, STDIN_FILENO, out);
  if (!a.quiet)
    std::fprintf(stderr, "tilescope serve: %s after %llu requests (%llu bytes in, %llu out)\n",
                 s.ended.c_str(), (unsigned long long)s.requests, (unsigned long long)s.bytes_in,
                 (unsigned long long)s.bytes_out);
  ::close(out);
  return kExitOk;
}

}  // namespace ts::cli

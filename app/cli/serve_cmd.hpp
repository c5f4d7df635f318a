#pragma once
// [SECTION] `tilescope serve`: this machine's engine (CUDA, or the CPU where there is no GPU) behind the
// engine protocol on standard input and output, for a window or a command line elsewhere (`tilescope --engine
// "ssh gpu-box tilescope serve"`). It exits when its input closes; it never listens on a network port (ssh,
// srun, docker exec or kubectl exec carry the bytes and do the authentication and encryption). Exit codes: 0
// the window closed the connection, 1 a broken link or a malformed frame, 2 bad usage (no such device).
#include <string>

#include <CLI/CLI.hpp>

namespace ts::cli {

struct ServeArgs {
  std::string backend = "auto";
  int device = 0;
  bool quiet = false;
};

void add_serve_options(CLI::App* cmd, ServeArgs& a);
int cmd_serve(ServeArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

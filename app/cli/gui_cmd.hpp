#pragma once
// [SECTION] `tilescope` with no command: the window (--backend, --kernel-file to open a kernel file, --log to
// echo its messages). Exit codes: 0, 2 (no display, a kernel file that cannot be read).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"

namespace ts::cli {

struct GuiArgs {
  std::string backend = "auto", kernel_file, engine;
  std::vector<std::string> also_engines;
  bool log = false;
};

void add_gui_options(CLI::App* cmd, GuiArgs& a);
int cmd_gui(GuiArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

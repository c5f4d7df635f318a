#pragma once
// [SECTION] `tilescope list`: the kernels and their metadata (--json), the theoretical occupancy of every
// kernel x tile on a GPU (--occupancy), or what TileScope understands of a person's kernel file
// (--kernel-file, in kernel_file.cpp). Exit codes: 0, 1 (a mismatch with the driver), 2 (bad input).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"

namespace ts::cli {

struct ListArgs {
  bool json = false;
  std::string occupancy, arch, gpu;
  KernelFileArgs file;
};

void add_list_options(CLI::App* cmd, ListArgs& a);
int cmd_list(ListArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

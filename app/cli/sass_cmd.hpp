#pragma once
// [SECTION] `tilescope sass`: the machine code (SASS) of a kernel at a tile, from the build's listings (a
// person's kernel: its cubin disassembled now), with its main loop marked; --mix prints the main loop's
// instruction mix per iteration and per k step instead; --diff K2:T2 compares the two main loops (mix deltas
// and an opcode-level diff, registers made anonymous). No GPU needed. Exit codes: 0, 1 (no listing: the
// reason is printed), 2 (bad input).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"

namespace ts::cli {

struct SassArgs {
  std::string backend = "auto", engine, kernel, tile, diff, arch;
  bool mix = false, json = false;
};

void add_sass_options(CLI::App* cmd, SassArgs& a);
int cmd_sass(SassArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

#pragma once
// [SECTION] `tilescope merge`: the parts of a sweep that `tilescope bench --shard I/N --session-out` wrote on
// several machines, joined (core/io/merge.hpp): the table one run prints (md, csv or json, same rows in the
// same order) and, with --session-out, one session of every point. Refuses parts of different sweeps, a shard
// twice, a shard or points missing (unless --partial), and different devices, TileScope versions or policies
// (unless --allow-mixed), naming the files and the values. Exit codes: 0, 1 (a write failed), 2 (bad input:
// an option, a file that cannot be read as a session, parts that do not belong together).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"

namespace ts::cli {

struct MergeArgs {
  std::vector<std::string> inputs;  // the parts' session files
  std::string format = "md", out, session_out;
  bool force = false, allow_mixed = false, partial = false;
};

void add_merge_options(CLI::App* cmd, MergeArgs& a);
int cmd_merge(MergeArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

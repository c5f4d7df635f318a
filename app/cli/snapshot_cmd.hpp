#pragma once
// [SECTION] `tilescope snapshot`: the whole window rendered offscreen after a run of the problem, written as
// a PNG (and the panels' rectangles as JSON, the profiler panels' exports). Exit codes: 0, 1 (the run it
// shows failed verification or errored), 2 (bad input, no offscreen GL).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"

namespace ts::cli {

struct SnapshotArgs {
  ProblemArgs problem;
  std::string out, width = "1600", height = "1000", layout_json, scale = "1", theme = "dark", gl = "auto";
  std::string zoom, export_panels, front, session, replay_at, feed_tile;
  bool force = false;
};

void add_snapshot_options(CLI::App* cmd, SnapshotArgs& a);
int cmd_snapshot(SnapshotArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

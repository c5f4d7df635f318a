#pragma once
// [SECTION] `tilescope run`: one kernel once, verified against the reference, timed under the quick policy
// (or
// --samples N), printed as text or JSON; --profile adds occupancy and a traced launch's tile schedule,
// --suggest-tile times every other tile at the shape, --suggest-kernel the ladder's kernels (only those a
// --session lacks) and ranks them, --sanitize runs the person's kernel under compute-sanitizer instead. Exit
// codes: 0, 1 (verification failed, runtime error), 2 (bad input).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"

namespace ts::cli {

struct RunArgs {
  ProblemArgs problem;
  std::string out, samples, trace_csv, trace_json;  // samples "": the backend's default policy
  std::string session, session_out;                 // --suggest-kernel: points read first, all points written
  bool json = false, force = false, profile = false, suggest = false, sanitize = false;
  bool suggest_kernel = false;
  bool changing_inputs = false;  // also time on inputs that change between samples (MeasurePolicy)
};

void add_run_options(CLI::App* cmd, RunArgs& a);
int cmd_run(RunArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

#pragma once
// [SECTION] `tilescope bench heatmap`: heatmap refreshes (CUDA-GL interop against the host path) and the
// window's frames while the kernel re-runs, a sweep runs, sizes are committed or the person's kernel file is
// saved; drawn offscreen. Exit codes: 0, 1 (runtime error), 2 (bad input, no offscreen GL).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"

namespace ts::cli {

struct HeatmapBenchArgs {
  ProblemArgs problem;
  std::string view = "1024", repeats = "50", frame_seconds = "10", gl = "auto";
  std::string format = "md", out, commits = "0", saves = "0";
  std::string sweep, sweep_kernels = "tiled,cublas", sweep_limit = "600", sweep_session_out;
  std::string sweep_min_time = "0.5", sweep_max_time = "10";
  bool force = false, sweep_quick = false;
};

void add_bench_heatmap_options(CLI::App* cmd, HeatmapBenchArgs& a);
int cmd_bench_heatmap(HeatmapBenchArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

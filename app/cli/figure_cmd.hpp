#pragma once
// [SECTION] `tilescope figure`: the window's "Export figure" without a window, so a GPU server makes a figure
// over SSH. Plots a saved session (--session FILE, more for overlays) or measures first (a sweep with
// --sizes, or the ladder at one shape), then renders one plot offscreen through the same code as the window
// and writes PNG + CSV + JSON into --out-dir, never replacing a file. Exit codes: 0, 1 (runtime error), 2
// (bad input).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ts::cli {

struct FigureArgs {
  std::string plot;                   // timings | bars | roofline | occupancy | schedule | replay
  std::vector<std::string> sessions;  // plot these (the first is current, the rest overlays)
  std::string figure_size = "1920x1080", theme = "dark", title, y = "flops", gpu, out_dir = ".", gl = "auto";
  std::string session_out;  // also write the measured points as a session
  // Sweep (as for bench).
  std::string sizes, fix_m, fix_k, ragged, kernels, tiles;
  std::string min_time, max_time, max_samples;  // empty: the backend's bench policy
  bool quick = false;
  // The problem (as for run): the configuration highlighted, the shape of the ladder.
  std::string backend = "auto", kernel = "tiled", tile, size, m, n, k, input = "random", seed = "1";
  std::string engine;  // --engine: a remote engine's command
  // --plot replay: the moments of the still (empty: the waves' starts and the end), the animated WebP.
  std::string times, frames;
  bool webp = false;
  bool kernel_given = false, shape_given = false;  // set by cmd_figure from the parsed options
};

void add_figure_options(CLI::App* cmd, FigureArgs& a);
// `cmd`: the parsed subcommand (which problem options were given).
int cmd_figure(FigureArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

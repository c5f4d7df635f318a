// The window and the commands that draw (cli.hpp: add_window_commands), and what a missing display means to
// each: the window points to the headless commands, the offscreen ones to EGL or a virtual X server.
#include "cli/window_commands.hpp"

#include <cstdio>
#include <functional>
#include <stdexcept>

#include "cli/bench_heatmap_cmd.hpp"
#include "cli/cli.hpp"
#include "cli/figure_cmd.hpp"
#include "cli/gl_check_cmd.hpp"
#include "cli/gui_cmd.hpp"
#include "cli/snapshot_cmd.hpp"
#include "core/engine/problem.hpp"
#include "gfx/window.hpp"

namespace ts::cli {

namespace {

enum class Drawing { Window, Offscreen };

// `run`, where a missing display (gfx::DisplayError) is said as what the command needs, with exit code 2.
template <class Args>
std::function<int(Args&, const CLI::App&)> drawing(int (*run)(Args&, const CLI::App&), Drawing how) {
  return [run, how](Args& a, const CLI::App& cmd) {
    try {
      return run(a, cmd);
    } catch (const gfx::DisplayError& e) {
      if (how == Drawing::Offscreen) {
        // The command as it is typed ("bench heatmap", not "heatmap").
        std::string name;
        for (const CLI::App* c = &cmd; c && c->get_parent(); c = c->get_parent())
          name = c->get_name() + (name.empty() ? "" : " " + name);
        std::fprintf(stderr,
                     "tilescope: %s.\n%s draws offscreen: it needs an EGL device (--gl egl: a GPU driver or "
                     "Mesa) or an "
                     "X server (--gl x11), e.g. under a virtual one: xvfb-run -a tilescope %s ...\n",
                     e.what(), name.c_str(), name.c_str());
      } else {
        std::fprintf(stderr,
                     "tilescope: %s. Use the headless commands (tilescope run, tilescope list) instead.\n",
                     e.what());
      }
      return int(kExitUsage);
    }
  };
}

}  // namespace

gfx::GlChoice parse_gl_choice_or_usage(const std::string& s) {
  try {
    return gfx::parse_gl_choice(s);
  } catch (const std::invalid_argument& e) {
    throw ValidationError(e.what());
  }
}

void add_window_commands(CommandTable& table, CLI::App& app, CLI::App& bench) {
  app.description(app.get_description() + "\nWith no command, opens the window.");
  table.set_default<GuiArgs>(add_gui_options, drawing(cmd_gui, Drawing::Window));
  table.add<SnapshotArgs>(app, "snapshot", "render the whole GUI offscreen and write a PNG",
                          add_snapshot_options, drawing(cmd_snapshot, Drawing::Offscreen));
  table.add<FigureArgs>(
      app, "figure",
      "one plot as a figure (PNG + CSV + JSON): of a saved session, or measured first (a sweep, the ladder)",
      add_figure_options, drawing(cmd_figure, Drawing::Offscreen));
  table.add<GlCheckArgs>(app, "gl-check",
                         "check that OpenGL draws what it is told (after a kernel faulted, it may not)",
                         add_gl_check_options, drawing(cmd_gl_check, Drawing::Offscreen));
  table.add<HeatmapBenchArgs>(
      bench, "heatmap",
      "time heatmap refreshes (CUDA-GL interop vs host) and GUI frames while the kernel re-runs",
      add_bench_heatmap_options, drawing(cmd_bench_heatmap, Drawing::Offscreen));
}

}  // namespace ts::cli

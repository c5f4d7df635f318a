// A build without the window (-DTILESCOPE_GUI=OFF): the window's commands by their names alone (cli.hpp:
// add_window_commands), so that asking for one says why it is missing instead of "unknown command".
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace ts::cli {

namespace {

constexpr const char* kNoWindow = "this build has no window: built with -DTILESCOPE_GUI=OFF";

struct NoWindowArgs {};

// Whatever follows the name (the window's options) is taken, not refused: the answer is the same.
void take_anything(CLI::App* cmd, NoWindowArgs&) {
  cmd->allow_extras();
}

// A window command asked for: this build has none.
int no_window(NoWindowArgs&, const CLI::App& cmd) {
  std::string name;  // as it is typed ("bench heatmap")
  for (const CLI::App* c = &cmd; c && c->get_parent(); c = c->get_parent())
    name = c->get_name() + (name.empty() ? "" : " " + name);
  std::fprintf(stderr,
               "tilescope %s: %s. The engine's commands are here: tilescope list, run, bench, merge, "
               "serve (tilescope --help).\n",
               name.c_str(), kNoWindow);
  return kExitUsage;
}

// No command: the window, with its options (tilescope --backend cpu) -- or a word that is no command.
int no_command(NoWindowArgs&, const CLI::App& app) {
  const std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest.front().rfind('-', 0) != 0) {
    std::fprintf(stderr, "tilescope: '%s' is not a command (tilescope --help lists them)\n",
                 rest.front().c_str());
    return kExitUsage;
  }
  std::fprintf(stderr,
               "tilescope: %s, so it cannot open one. The engine's commands are here: tilescope list, run, "
               "bench, merge, serve (tilescope --help); the window of another machine reaches this one with "
               "--engine \"ssh this-host tilescope serve\".\n",
               kNoWindow);
  return kExitUsage;
}

}  // namespace

void add_window_commands(CommandTable& table, CLI::App& app, CLI::App& bench) {
  app.footer(
      std::string("This build has no window (built with -DTILESCOPE_GUI=OFF): the window and its commands ") +
      "(snapshot, figure, gl-check, bench heatmap) are not in it.");
  table.set_default<NoWindowArgs>(take_anything, no_command);
  for (const char* name : {"snapshot", "figure", "gl-check"})
    table.add<NoWindowArgs>(app, name, kNoWindow, take_anything, no_window)->group("");
  table.add<NoWindowArgs>(bench, "heatmap", kNoWindow, take_anything, no_window)->group("");
}

}  // namespace ts::cli

// tilescope: the window by default; the commands run the same engine without one. Each command is a file of
// app/cli (its options and its run function); this is their table. Exit codes (cli.hpp): 0 done, 1
// verification failed or a runtime error, 2 bad usage or input.
#include <CLI/CLI.hpp>

#include "cli/bench_cmd.hpp"
#include "cli/cli.hpp"
#include "cli/kernel_file.hpp"
#include "cli/list_cmd.hpp"
#include "cli/merge_cmd.hpp"
#include "cli/run_cmd.hpp"
#include "cli/sass_cmd.hpp"
#include "cli/serve_cmd.hpp"
#include "core/engine/sass.hpp"
#include "tilescope/version.hpp"

int main(int argc, char** argv) {
  using namespace ts::cli;
  ts::set_program_listings(&ts::build_sass_archive());  // the kernels' machine code, for every backend
  CLI::App app{"TileScope: see how a CUDA matrix multiplication really runs."};
  app.set_version_flag("--version", std::string("tilescope ") + ts::kVersion + " (" + ts::kGitCommit + ")");
  CommandTable table(app);
  // The engine's commands: in every build, a server's without the window (-DTILESCOPE_GUI=OFF) too.
  table.add<ListArgs>(app, "list", "print the kernels and their metadata", add_list_options, cmd_list);
  table.add<RunArgs>(app, "run", "run one kernel once, verify it against the reference, print the result",
                     add_run_options, cmd_run);
  CLI::App* bench =
      table.add<BenchArgs>(app, "bench", "measure kernels x shapes on the GPU, verified against cuBLAS first",
                           add_bench_options, cmd_bench);
  table.add<MergeArgs>(app, "merge",
                       "join the parts of a sweep measured with bench --shard I/N into its table and session",
                       add_merge_options, cmd_merge);
  table.add<SassArgs>(
      app, "sass",
      "print a kernel's machine code (SASS) with its main loop, its instruction mix (--mix) or "
      "a diff with another kernel and tile (--diff)",
      add_sass_options, cmd_sass);
  table.add<ServeArgs>(app, "serve",
                       "be the engine of a window or a command line elsewhere, on standard input and output "
                       "(tilescope --engine \"ssh this-host tilescope serve\")",
                       add_serve_options, cmd_serve);
  // Started by TileScope itself: not listed in --help.
  table
      .add<WorkerArgs>(app, "worker", "(internal) run a person's kernel for TileScope in its own process",
                       add_worker_options, worker)
      ->group("");
  table
      .add<CompilerArgs>(app, "compiler", "(internal) compile a person's kernel for TileScope",
                         add_compiler_options, compiler)
      ->group("");
  // The window (what runs with no command) and the commands that draw: snapshot, figure, gl-check, bench
  // heatmap; in a build without the window, their names, each saying so (cli.hpp).
  add_window_commands(table, app, *bench);
  return table.run(argc, argv);
}

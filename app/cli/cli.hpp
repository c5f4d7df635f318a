#pragma once
// [SECTION] What the commands share: the exit codes, the problem options of run, snapshot and bench heatmap
// and the request they make, opening a backend, writing an output, and the table main.cpp fills with the
// commands (CommandTable): each command's options and run function, in a file of its own, and the one place
// where what a command throws becomes its message and exit code. The engine's side only: nothing here draws
// (what the window's commands share is in window_commands.hpp).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/engine/backend.hpp"
#include "core/io/files.hpp"
#include "cli/kernel_file.hpp"

namespace ts::cli {

// The exit codes of every command: 0 done, 1 verification failed or a runtime error, 2 bad usage or input
// (bench: 128 + the signal that stopped it).
enum ExitCode : int { kExitOk = 0, kExitFailed = 1, kExitUsage = 2 };

// [SECTION] Problem options shared by `run` and `snapshot`. Taken as text and validated by app/core, so every
// message names the value and the limit the same way in the GUI and here.
struct ProblemArgs {
  std::string backend = "auto";
  std::string engine;  // --engine: a remote engine's command
  std::string kernel;  // default: tiled, or the only __global__ function of --kernel-file
  std::string tile, size, m, n, k, input = "random", seed = "1", a, b;
  KernelFileArgs file;  // your own kernel
};
void add_problem_options(CLI::App* cmd, ProblemArgs& p);
// Builds and validates the request against the chosen backend (a --kernel-file is registered with its
// workshop). Throws ValidationError.
RunRequest build_request(const ProblemArgs& p, Backend& backend);

Replace replace_if(bool force);  // --force: a regular file may be replaced
// This machine's backend (`choice`), or with `engine` the remote engine that command starts
// (core/remote/remote_backend.hpp); `backend_given`: --backend was given too, which is refused beside
// --engine (the engine's own --backend chooses there). A command that does not start or does not speak the
// protocol is a ValidationError with what it printed.
std::shared_ptr<Backend> open_backend(const std::string& choice, std::string* note,
                                      const std::string& engine = "", bool backend_given = false);
// --engine COMMAND, the same words on every command that opens a backend.
void add_engine_option(CLI::App* cmd, std::string& engine);
// Standard output, or `path` written whole through the program's writer (checked by check_output_path first).
void write_text_output(const std::string& path, const std::string& text, bool force);
// "0" or "00": the documented "none" of an option that takes 0 (--frame-seconds 0 skips), however many zeros;
// false for anything else, which the option's own parser then checks.
bool means_zero(const std::string& text);

// [SECTION] The command table.
class CommandTable {
 public:
  // One command at a time: `tilescope list run` is refused as a usage error.
  explicit CommandTable(CLI::App& app) : m_app(app) { m_app.require_subcommand(0, 1); }
  // A subcommand of `parent` (the app, or another command): its options are added now, and `run` is called
  // when it is the command given.
  template <class Args>
  CLI::App* add(CLI::App& parent, const std::string& name, const std::string& help,
                void (*options)(CLI::App*, Args&), std::function<int(Args&, const CLI::App&)> run) {
    auto args = std::make_shared<Args>();
    CLI::App* cmd = parent.add_subcommand(name, help);
    cmd->require_subcommand(0, 1);
    options(cmd, *args);
    m_commands.push_back({cmd, [args, run, cmd] { return run(*args, *cmd); }});
    return cmd;
  }
  // What runs when no command is given (the window), with its options on the app itself.
  template <class Args>
  void set_default(void (*options)(CLI::App*, Args&), std::function<int(Args&, const CLI::App&)> run) {
    auto args = std::make_shared<Args>();
    options(&m_app, *args);
    m_default = {&m_app, [args, run, app = &m_app] { return run(*args, *app); }};
  }
  // Parses the command line and runs the command given: its exit code, or the exit code of what it threw
  // (ValidationError: 2, anything else: 1), said in one line on standard error. (The window's commands say
  // themselves what a missing display means: window_commands.cpp.)
  int run(int argc, char** argv);

 private:
  struct Command {
    CLI::App* cmd = nullptr;
    std::function<int()> run;
  };
  CLI::App& m_app;
  std::vector<Command> m_commands;
  Command m_default;
};

// The window and the commands that draw, added to `table` (bench heatmap under `bench`), the window as what
// runs with no command (window_commands.cpp). In a build without the window (-DTILESCOPE_GUI=OFF) their
// names alone, hidden from --help, each saying that this build has no window and exiting 2
// (no_window_commands.cpp): the one place the two builds differ.
void add_window_commands(CommandTable& table, CLI::App& app, CLI::App& bench);

}  // namespace ts::cli

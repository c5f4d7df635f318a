#include "cli/gui_cmd.hpp"

#include <cstdio>

#include "cli/cli.hpp"
#include "hosts/gui.hpp"
#include "core/user_kernel/kernel_source.hpp"
#include "gfx/window.hpp"

namespace ts::cli {

void add_gui_options(CLI::App* cmd, GuiArgs& a) {
  cmd->add_option("--backend", a.backend, "GUI backend: auto, cuda or cpu")->capture_default_str();
  add_engine_option(cmd, a.engine);
  cmd->add_option(
      "--also-engine", a.also_engines,
      "connect this engine too (repeat for more): the Controls' Device chooses where runs go, and "
      "a sweep can run on every device or split across identical ones");
  cmd->add_option("--kernel-file", a.kernel_file,
                  "open the window with your own kernel (a .cu file or a KernelBench answer, .py)");
  cmd->add_flag(
      "--log", a.log,
      "the window also prints its messages (View > Messages) and every point it measures to standard "
      "error");
}

int cmd_gui(GuiArgs& a, const CLI::App& cmd) {
  std::string why;
  // The GUI.
  if (!ts::gfx::display_available(&why)) {
    std::fprintf(stderr,
                 "tilescope: %s, so the window cannot open.\n"
                 "Headless commands work without one:\n"
                 "  tilescope list\n"
                 "  tilescope run --size 4096 --kernel tiled --tile 32\n"
                 "  xvfb-run -a tilescope snapshot --out tilescope.png\n",
                 why.c_str());
    return kExitUsage;
  }
  ts::ui::GuiOptions go;
  if (!a.kernel_file.empty()) {
    ts::read_kernel_source(a.kernel_file);  // a file that cannot be read is refused before the window opens
    go.kernel_file = a.kernel_file;
  }
  go.log = a.log;
  go.backend = open_backend(a.backend, &go.backend_note, a.engine, cmd.count("--backend") > 0);
  // File > Connect to engine...: a command, or "" for this machine's own engine (auto: CUDA where a GPU is).
  go.engine_factory = [](const std::string& command, std::string* note) {
    return open_backend("auto", note, command);
  };
  go.also_engines = a.also_engines;
  if (!go.backend_note.empty()) std::fprintf(stderr, "tilescope: %s\n", go.backend_note.c_str());
  return ts::ui::run_gui(go);
}

}  // namespace ts::cli

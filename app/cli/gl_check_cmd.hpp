#pragma once
// [SECTION] `tilescope gl-check`: does OpenGL on this machine draw what it is told? The GL self-check of the
// window (ui/gl_health.hpp) in a fresh offscreen context: a known heatmap through the heatmap path, that
// heatmap and a line of known glyphs through the window's renderer, read back and compared with the CPU's
// pictures, and the driver's reset status. With --watch it keeps one context and checks it again and again,
// one line per check, so a long-lived context can be watched while something else happens on the GPU (a
// kernel that faults). Exit codes: 0 (every check passed), 1 (one failed), 2 (bad input or no GL at all).
#include <string>

#include <CLI/CLI.hpp>

namespace ts::cli {

struct GlCheckArgs {
  std::string gl = "auto", backend = "auto", watch = "0", every = "0.5";
  bool json = false;
};

void add_gl_check_options(CLI::App* cmd, GlCheckArgs& a);
int cmd_gl_check(GlCheckArgs& a, const CLI::App& cmd);

}  // namespace ts::cli

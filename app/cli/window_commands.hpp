#pragma once
// [SECTION] What the window's commands share (the commands that draw: built with TILESCOPE_GUI=ON only;
// cli.hpp holds what every command shares).
#include <string>

#include "gfx/headless.hpp"

namespace ts::cli {

// --gl: auto, egl or x11; anything else is a ValidationError (exit 2).
gfx::GlChoice parse_gl_choice_or_usage(const std::string& s);

}  // namespace ts::cli

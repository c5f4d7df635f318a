#!/usr/bin/env python3
"""scripts/check_layers.py on small trees whose violations are known: it passes a clean tree and names every
include that climbs a layer, every CUDA or graphics header where it does not belong, a CUDA library linked by the
window, and anything of the window included by an engine's command (app/cli but the window's commands, which
app/CMakeLists.txt lists)."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "check_layers.py")


def tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def check(files):
    with tempfile.TemporaryDirectory() as root:
        tree(root, files)
        p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
        return p.returncode, p.stdout


CLEAN = {
    "app/core/engine/backend.hpp": "#pragma once\n#include <vector>\n",
    "app/core/engine/engine.cpp": '#include "core/engine/backend.hpp"\n#include "tilescope/version.hpp"\n',
    "app/gfx/heatmap_set.cpp": '#include "core/engine/backend.hpp"\n#include <cuda_runtime.h>\n#include <epoxy/gl.h>\n',
    "kernels/engine/registry.hpp": '#include "core/engine/backend.hpp"\n',
    "kernels/rungs/03_tiled.cu": '#include <cuda_runtime.h>\n#include "kernels/engine/registry.hpp"\n',
    "ui/app.cpp": '#include "core/engine/backend.hpp"\n#include "gfx/heatmap_set.cpp"\n#include <imgui.h>\n',
    "app/cli/run_cmd.cpp": '#include "kernels/engine/registry.hpp"\n#include "cli/cli.hpp"\n',
    "app/cli/cli.hpp": '#include "core/engine/backend.hpp"\n',
    "app/cli/snapshot_cmd.hpp": '#include "cli/cli.hpp"\n',
    "app/cli/snapshot_cmd.cpp": '#include "cli/snapshot_cmd.hpp"\n#include "ui/app.cpp"\n#include <epoxy/gl.h>\n',
    "app/main.cpp": '#include "kernels/engine/registry.hpp"\n#include "cli/cli.hpp"\n',
    "app/CMakeLists.txt": "set(TILESCOPE_WINDOW_COMMAND_SOURCES cli/snapshot_cmd.cpp)\n",
    "ui/CMakeLists.txt": "target_link_libraries(tilescope_ui PUBLIC tilescope_core tilescope_gfx)\n",
}


def main():
    rc, out = check(CLEAN)
    assert rc == 0, out
    assert "0 violation(s)" in out, out
    bad = dict(CLEAN)
    bad["ui/app.cpp"] = '#include "kernels/engine/registry.hpp"\n#include <cuda_runtime.h>\n'
    bad["app/core/engine/engine.cpp"] = ('#include "core/engine/backend.hpp"\n#include <GLFW/glfw3.h>\n'
                                         '#include "kernels/engine/registry.hpp"\n#include "backend.hpp"\n')
    bad["kernels/rungs/03_tiled.cu"] = '#include "ui/app.cpp"\n#include "engine/registry.hpp"\n'
    bad["ui/CMakeLists.txt"] = "target_link_libraries(tilescope_ui PUBLIC tilescope_core\n  tilescope_kernels)\n"
    bad["app/cli/run_cmd.cpp"] = '#include "kernels/engine/registry.hpp"\n#include "gfx/heatmap_set.cpp"\n'
    bad["app/main.cpp"] = '#include "cli/snapshot_cmd.hpp"\n#include <GLFW/glfw3.h>\n'
    rc, out = check(bad)
    assert rc == 1, out
    expected = [
        'ui/app.cpp:1: ui includes "kernels/engine/registry.hpp" of kernels',
        "ui/app.cpp:2: ui includes <cuda_runtime.h>",
        "app/core/engine/engine.cpp:2: app/core includes <GLFW/glfw3.h>",
        'app/core/engine/engine.cpp:3: app/core includes "kernels/engine/registry.hpp" of kernels',
        'app/core/engine/engine.cpp:4: "backend.hpp" does not show its layer: write "core/engine/backend.hpp"',
        'kernels/rungs/03_tiled.cu:1: kernels includes "ui/app.cpp" of ui',
        'kernels/rungs/03_tiled.cu:2: "engine/registry.hpp" does not show its layer: write "kernels/engine/registry.hpp"',
        "ui/CMakeLists.txt:1: ui links tilescope_kernels",
        'app/cli/run_cmd.cpp:2: app/cli includes "gfx/heatmap_set.cpp" of app/gfx',
        'app/main.cpp:1: app includes "cli/snapshot_cmd.hpp" of app/cli (window)',
        "app/main.cpp:2: app includes <GLFW/glfw3.h>",
    ]
    for e in expected:
        assert e in out, f"missing: {e}\n{out}"
    assert "11 violation(s)" in out, out
    print("check_layers: a clean tree passes; 11 known violations found, each with its line")


if __name__ == "__main__":
    main()

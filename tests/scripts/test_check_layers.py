#!/usr/bin/env python3
"""scripts/check_layers.py on small trees whose violations are known: it passes a clean tree and names every
include that climbs a layer, every CUDA or graphics header where it does not belong, and a CUDA library linked
by the window."""
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
    "app/core/backend.hpp": "#pragma once\n#include <vector>\n",
    "app/core/engine.cpp": '#include "backend.hpp"\n',
    "app/gfx/heatmap_set.cpp": '#include "backend.hpp"\n#include <cuda_runtime.h>\n#include <epoxy/gl.h>\n',
    "kernels/registry.hpp": '#include "backend.hpp"\n',
    "kernels/tiled.cu": '#include <cuda_runtime.h>\n#include "registry.hpp"\n',
    "ui/app.cpp": '#include "backend.hpp"\n#include "heatmap_set.cpp"\n#include <imgui.h>\n',
    "app/cli/run_cmd.cpp": '#include "registry.hpp"\n#include "app.cpp"\n',
    "app/main.cpp": '#include "registry.hpp"\n',
    "ui/CMakeLists.txt": "target_link_libraries(tilescope_ui PUBLIC tilescope_core tilescope_gfx)\n",
}


def main():
    rc, out = check(CLEAN)
    assert rc == 0, out
    assert "0 violation(s)" in out, out
    bad = dict(CLEAN)
    bad["ui/app.cpp"] = '#include "registry.hpp"\n#include <cuda_runtime.h>\n'
    bad["app/core/engine.cpp"] = '#include "backend.hpp"\n#include <GLFW/glfw3.h>\n#include "registry.hpp"\n'
    bad["kernels/tiled.cu"] = '#include "app.cpp"\n'
    bad["ui/CMakeLists.txt"] = "target_link_libraries(tilescope_ui PUBLIC tilescope_core\n  tilescope_kernels)\n"
    rc, out = check(bad)
    assert rc == 1, out
    expected = [
        'ui/app.cpp:1: ui includes "registry.hpp" of kernels',
        "ui/app.cpp:2: ui includes <cuda_runtime.h>",
        "app/core/engine.cpp:2: app/core includes <GLFW/glfw3.h>",
        'app/core/engine.cpp:3: app/core includes "registry.hpp" of kernels',
        'kernels/tiled.cu:1: kernels includes "app.cpp" of ui',
        "ui/CMakeLists.txt:1: ui links tilescope_kernels",
    ]
    for e in expected:
        assert e in out, f"missing: {e}\n{out}"
    assert "6 violation(s)" in out, out
    print("check_layers: a clean tree passes; 6 known violations found, each with its line")


if __name__ == "__main__":
    main()

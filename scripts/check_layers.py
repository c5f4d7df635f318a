#!/usr/bin/env python3
"""The layering check: no layer of TileScope includes a header of a layer above it, the window links no
CUDA library, and the engine's commands include nothing of the window.

The layers, bottom to top (README, "Architecture"):
  app/core   the engine's model and pipeline: plain C++, no CUDA, no OpenGL, no ImGui
  app/gfx    OpenGL, the window and CUDA-OpenGL interop (sees app/core)
  kernels    the CUDA backend, the rungs, NVRTC, the worker (sees app/core)
  ui         panels and the app (sees app/core and app/gfx; reaches the engine through Backend only)
  app/hosts  what hosts the app's frame: the window, the offscreen snapshot and benchmarks (sees ui and below)
  app/cli    the commands, and app/main.cpp: the engine's commands see app/core and kernels; the window's
             commands (app/CMakeLists.txt: TILESCOPE_WINDOW_COMMAND_SOURCES, and each one's header), built only
             with TILESCOPE_GUI=ON, see everything (they wire a backend of kernels/ to a host)

Every include of the tree's own headers is written with its layer, from the include roots app/ and the top:
"core/engine/backend.hpp", "gfx/heatmap_set.hpp", "kernels/engine/registry.hpp", "ui/panels/panel.hpp",
"hosts/gui.hpp", "cli/cli.hpp". A quoted include is resolved from those roots to the layer of the file it names;
one that names a header of the tree by a bare or partial name (resolved only through an include folder, so the
reader cannot see its layer) is a violation too. An angle include is checked against the system headers a layer
may not use. Exit 0 when every include respects the layers, 1 with one line per violation (file:line: what and
why).
Usage: check_layers.py [SOURCE_ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))

WINDOW_CLI = "app/cli (window)"


def window_commands():
    """The files of app/cli built with the window only: app/CMakeLists.txt's TILESCOPE_WINDOW_COMMAND_SOURCES, and
    the header of each."""
    try:
        with open(os.path.join(ROOT, "app", "CMakeLists.txt"), encoding="utf-8") as f:
            m = re.search(r"set\(TILESCOPE_WINDOW_COMMAND_SOURCES([^)]*)\)", f.read())
    except OSError:
        return set()
    files = set()
    for src in (m.group(1).split() if m else []):
        rel = os.path.normpath(os.path.join("app", src))
        files |= {rel, os.path.splitext(rel)[0] + ".hpp"}
    return files


WINDOW_COMMANDS = window_commands()

# What each layer may include of the tree (besides itself). The engine's commands (app/cli but the window's, and
# app/main.cpp) are in a build without the window (TILESCOPE_GUI=OFF) too: nothing of the window for them.
ALLOWED = {
    "app/core": set(),
    "app/gfx": {"app/core"},
    "kernels": {"app/core"},
    "ui": {"app/core", "app/gfx"},
    "app/hosts": {"app/core", "app/gfx", "ui"},
    "app/cli": {"app/core", "kernels"},
    WINDOW_CLI: {"app/core", "app/gfx", "kernels", "ui", "app/hosts", "app/cli"},
    "app": {"app/core", "kernels", "app/cli"},
}
# System headers a layer may not include (prefixes of the name inside <>).
CUDA = ("cuda", "cublas", "nvrtc", "nvml", "cooperative_groups", "mma.h", "device_launch_parameters")
GRAPHICS = ("GL/", "GLFW/", "epoxy/", "EGL/", "imgui", "implot", "vulkan/")
FORBIDDEN_SYSTEM = {
    "app/core": CUDA + GRAPHICS,
    "kernels": GRAPHICS,
    "ui": CUDA,
    "app/hosts": CUDA,
    "app/gfx": ("imgui", "implot"),
    "app/cli": GRAPHICS,
    "app": GRAPHICS,
}
SOURCE = (".hpp", ".cpp", ".cu", ".cuh", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of(rel):
    if rel in WINDOW_COMMANDS:
        return WINDOW_CLI
    for layer in ("app/core", "app/gfx", "app/hosts", "app/cli", "kernels", "ui"):
        if rel.startswith(layer + "/"):
            return layer
    if rel.startswith("app/") and rel.count("/") == 1:
        return "app"
    return None


def sources():
    for top in ("app", "kernels", "ui"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith(SOURCE):
                    yield os.path.relpath(os.path.join(dirpath, f), ROOT)


def resolve(name):
    """The tree file a quoted include names from the include roots (app/, the top), or None."""
    for root in ("app", ""):
        rel = os.path.normpath(os.path.join(root, name))
        if layer_of(rel) and os.path.isfile(os.path.join(ROOT, rel)):
            return rel
    return None


def main():
    files = sorted(sources())
    by_base = {}
    for rel in files:
        if layer_of(rel):
            by_base.setdefault(os.path.basename(rel), []).append(rel)
    problems = []
    for rel in files:
        layer = layer_of(rel)
        if layer is None:
            continue
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                kind, name = m.groups()
                if kind == "<":
                    for bad in FORBIDDEN_SYSTEM.get(layer, ()):
                        if name.startswith(bad):
                            problems.append(f"{rel}:{n}: {layer} includes <{name}>, which it may not use")
                    continue
                target = resolve(name)
                if target is None:
                    mine = [c for c in by_base.get(os.path.basename(name), []) if c.endswith("/" + name)]
                    if mine:  # a header of the tree, named so that its layer does not show
                        shown = mine[0][len("app/"):] if mine[0].startswith("app/") else mine[0]
                        problems.append(f"{rel}:{n}: \"{name}\" does not show its layer: write \"{shown}\"")
                    continue  # generated or third-party
                other = layer_of(target)
                if other != layer and other not in ALLOWED[layer]:
                    problems.append(f"{rel}:{n}: {layer} includes \"{name}\" of {other}, a layer it may not see")
    # The window links no CUDA library and no kernels library: ui and its hosts reach the engine through
    # Backend.
    for folder in ("ui", "app/hosts"):
        cmake = os.path.join(ROOT, folder, "CMakeLists.txt")
        if not os.path.exists(cmake):
            continue
        with open(cmake, encoding="utf-8") as f:
            text = f.read()
        for m in re.finditer(r"target_link_libraries\(([^)]*)\)", text):
            for bad in ("tilescope_kernels", "CUDA::", "cudart", "cublas", "nvrtc"):
                if bad in m.group(1):
                    line = text[: m.start()].count("\n") + 1
                    problems.append(f"{folder}/CMakeLists.txt:{line}: {folder} links {bad}; the window links no "
                                    "CUDA library")
    for p in problems:
        print(p)
    checked = sum(1 for r in files if layer_of(r))
    print(f"check_layers: {checked} files, {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

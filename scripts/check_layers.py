#!/usr/bin/env python3
"""The layering check: no layer of TileScope includes a header of a layer above it, and the window links no
CUDA library.

The layers, bottom to top (README, "Architecture"):
  app/core   the engine's model and pipeline: plain C++, no CUDA, no OpenGL, no ImGui
  app/gfx    OpenGL, the window and CUDA-OpenGL interop (sees app/core)
  kernels    the CUDA backend, the rungs, NVRTC, the worker (sees app/core)
  ui         panels and the app (sees app/core and app/gfx; reaches the engine through Backend only)
  app/hosts  what hosts the app's frame: the window, the offscreen snapshot and benchmarks (sees ui and below)
  app/cli    the commands, and app/main.cpp (sees everything: it wires the layers together)

Includes are checked by name: a quoted include is resolved to the folder of the tree that holds a file of that
name, and an angle include is checked against the system headers a layer may not use. Exit 0 when every
include respects the layers, 1 with one line per violation (file:line: what and why).
Usage: check_layers.py [SOURCE_ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))

# What each layer may include of the tree (besides itself).
ALLOWED = {
    "app/core": set(),
    "app/gfx": {"app/core"},
    "kernels": {"app/core"},
    "ui": {"app/core", "app/gfx"},
    "app/hosts": {"app/core", "app/gfx", "ui"},
    "app/cli": {"app/core", "app/gfx", "kernels", "ui", "app/hosts"},
    "app": {"app/core", "app/gfx", "kernels", "ui", "app/hosts", "app/cli"},
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
}
SOURCE = (".hpp", ".cpp", ".cu", ".cuh", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of(rel):
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


def main():
    files = sorted(sources())
    # A header's layer, by the name an include writes (its path below its layer's folder, or its base name).
    owner = {}
    for rel in files:
        layer = layer_of(rel)
        if layer is None:
            continue
        below = rel[len(layer) + 1:]
        for name in {below, os.path.basename(rel)}:
            owner.setdefault(name, set()).add(layer)
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
                layers = owner.get(name) or owner.get(os.path.basename(name))
                if not layers or layer in layers:
                    continue  # generated, third-party, or its own layer's
                if not layers & (ALLOWED[layer] | {layer}):
                    where = " or ".join(sorted(layers))
                    problems.append(f"{rel}:{n}: {layer} includes \"{name}\" of {where}, a layer it may not see")
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

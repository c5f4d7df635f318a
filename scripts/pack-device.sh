#!/usr/bin/env bash
# Packs a build folder for a GPU machine that has the NVIDIA driver and the CUDA runtime but not this
# project's other libraries (the `device` tool's machines): the app and the GPU, GL and UI test binaries,
# stripped and xz-compressed into DEST/bins.tar.xz (they must travel under 64 MiB) with the shared libraries
# the binaries need that such a machine lacks (OpenBLAS, GLFW, libepoxy, X11's client libraries) in its lib/.
# On the GPU machine: tar -xJf DEST/bins.tar.xz -C DEST, then DEST has the layout of a build folder
# (app/tilescope, tests/{gpu,gl,ui,tools}/..., lib/) that tests/gpu/*_device.sh take as BUILD_DIR.
# Usage: scripts/pack-device.sh BUILD_DIR DEST
set -euo pipefail
build=${1:?build folder}
dest=${2:?destination folder}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for f in app/tilescope tests/gpu/tilescope_gpu_tests tests/gl/tilescope_gl_tests tests/ui/tilescope_ui_tests \
  tests/tools/link_sim; do
  mkdir -p "$stage/$(dirname "$f")"
  strip -o "$stage/$f" "$build/$f"
done
# The libraries travel inside the archive too: OpenBLAS alone (the CPU checks' float64 reference) is 36 MiB.
mkdir -p "$stage/lib" "$dest"
for lib in libzstd.so.1 libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libwebp.so.7 libwebpmux.so.3 \
  libwebpdemux.so.2 libglfw.so.3 libepoxy.so.0 libX11.so.6 libxcb.so.1 libXau.so.6 libXdmcp.so.6 libbsd.so.0 libmd.so.0; do
  cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')" "$stage/lib/"
done
rm -rf "$dest/lib" "$dest/bins.tar.xz"
tar -C "$stage" -cf - app tests lib | xz -T2 -6 > "$dest/bins.tar.xz"
du -sh "$dest"

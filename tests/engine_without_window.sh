#!/usr/bin/env bash
# The engine alone (-DTILESCOPE_GUI=OFF) configures where none of the window's dependencies can be found, links
# none of their libraries, and runs: the check that a server without GLFW, X11, GL or ImGui can build and run
# TileScope's engine (ctest engine.without_window).
#   1. configure from scratch (the objects of an earlier run are kept) with glfw3, OpenGL, Vulkan and X11
#      disabled for find_package, pkg-config finding libzstd and openblas alone (the engine's; not epoxy), stb's folder
#      ignored and no imgui-bundle to extract or download: any of them asked for fails the configure, and so
#      does cmake/CheckNoWindow.cmake when a target links one;
#   2. the binary: ENGINE_BINARY when given (ctest passes the build's own engine without the window, made of
#      the same objects as its tilescope: a few seconds instead of minutes), else the tilescope target built in
#      WORK_DIR (CUDA off: about 3.5 min of one core);
#   3. ldd: no libglfw, libGL*, libEGL, libepoxy, libvulkan, libX11 or libxcb;
#   4. --version, list and a CPU run work; a window command says that this build has no window (exit 2).
# Usage: engine_without_window.sh SOURCE_DIR WORK_DIR [ENGINE_BINARY]   (exit 0: all of it holds)
set -euo pipefail
src=${1:?source folder}
work=${2:?work folder}
bin=${3:-}
start=$SECONDS
# Not Mesa's driver, which scripts/test-sanitizers.sh preloads for the window's tests: ldd would list it (and its
# libxcb) as the engine's.
unset LD_PRELOAD
fail() {
  echo "engine_without_window: FAILED: $*" >&2
  exit 1
}
mkdir -p "$work"
rm -f "$work/build/CMakeCache.txt"  # a fresh configure: every find_package runs again
args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DTILESCOPE_GUI=OFF -DTILESCOPE_CUDA=OFF -DTILESCOPE_BUILD_TESTS=OFF
      -DCMAKE_DISABLE_FIND_PACKAGE_glfw3=ON -DCMAKE_DISABLE_FIND_PACKAGE_OpenGL=ON
      -DCMAKE_DISABLE_FIND_PACKAGE_Vulkan=ON -DCMAKE_DISABLE_FIND_PACKAGE_X11=ON
      -DCMAKE_IGNORE_PATH=/usr/include/stb
      "-DTILESCOPE_THIRD_PARTY_DIR=$work/no-third-party" -DTILESCOPE_IMGUI_BUNDLE_URL=file:///nonexistent)
if command -v ccache > /dev/null; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# pkg-config's only folder: the engine's .pc files (libzstd, openblas), nothing of the window's.
mkdir -p "$work/pkgconfig"
for pc in libzstd openblas; do
  dir="$(pkg-config --variable=pcfiledir "$pc")" || fail "pkg-config finds no $pc"
  ln -sf "$dir/$pc.pc" "$work/pkgconfig/$pc.pc"
done
PKG_CONFIG_LIBDIR="$work/pkgconfig" PKG_CONFIG_PATH= cmake -S "$src" -B "$work/build" "${args[@]}" > "$work/configure.log" 2>&1 ||
  { tail -n 30 "$work/configure.log"; fail "the configure without the window's dependencies"; }
grep -q "none links GLFW" "$work/configure.log" || fail "cmake/CheckNoWindow.cmake did not run"
[ ! -e "$work/no-third-party" ] || fail "the configure fetched imgui-bundle"
echo "engine_without_window: configured in $((SECONDS - start)) s"
if [ -z "$bin" ]; then
  cmake --build "$work/build" --target tilescope > "$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log"; fail "the build of tilescope"; }
  echo "engine_without_window: built after $((SECONDS - start)) s"
  bin="$work/build/app/tilescope"
fi
libs=$(ldd "$bin")
if grep -E 'glfw|libGL|libEGL|libOpenGL|epoxy|vulkan|X11|xcb' <<< "$libs"; then
  fail "the engine links a library of the window (above)"
fi
"$bin" --version > /dev/null || fail "--version"
"$bin" list > /dev/null || fail "list"
"$bin" run --backend cpu --size 64 | grep -q "result     PASS" || fail "run --backend cpu --size 64"
set +e
out=$("$bin" snapshot --out "$work/never.png" 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "snapshot exited with $rc, not 2: $out"
grep -q "this build has no window: built with -DTILESCOPE_GUI=OFF" <<< "$out" || fail "snapshot said: $out"
echo "engine_without_window: ok after $((SECONDS - start)) s; $bin needs $(awk '{print $1}' <<< "$libs" | tr '\n' ' ')"

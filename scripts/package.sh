#!/usr/bin/env bash
# Builds TileScope's Debian packages with CPack (cmake/Packaging.cmake says what is in them and what they
# depend on), each from a Release build of its own with CUDA (nvcc needed) and without the tests, and checks
# what they hold (scripts/check_packages.py):
#   build-pkg-app/tilescope_<version>-1_<arch>.deb            the window and the engine (TILESCOPE_GUI=ON)
#   build-pkg-engine/tilescope-engine_<version>-1_<arch>.deb  the engine alone (TILESCOPE_GUI=OFF): what a GPU
#                                                             server installs; it needs no GLFW, GL, X11 or ImGui,
#                                                             to build or to run
# --engine-only makes the second alone (on a server: scripts/install-deps.sh --engine installs what it needs).
# Other arguments go to CMake's configure step of both, e.g. -DCMAKE_CUDA_ARCHITECTURES=90 (default: the
# project's list of architectures), -DTILESCOPE_DEB_CUDA_DEPENDS=OFF (cuBLAS and NVRTC recommended instead of
# depended on, for a toolkit that did not come from NVIDIA's apt repository), or
# -DCMAKE_CXX_COMPILER_LAUNCHER=ccache.
# Usage: scripts/package.sh [--engine-only] [CMAKE_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
kinds=(app engine)
if [ "${1:-}" = "--engine-only" ]; then
  kinds=(engine)
  shift
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
debs=()
for kind in "${kinds[@]}"; do
  gui=ON
  [ "$kind" = engine ] && gui=OFF
  dir="build-pkg-$kind"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILESCOPE_GUI=$gui -DTILESCOPE_CUDA=ON \
    -DTILESCOPE_BUILD_TESTS=OFF "$@"
  cmake --build "$dir" --parallel "$(nproc)"
  rm -f "$dir"/*.deb
  (cd "$dir" && cpack -G DEB)
  debs+=("$dir"/*.deb)
done
echo
# What each holds (the copyright, the changelog, the window's desktop entry and icon): scripts/check_packages.py.
if command -v python3 > /dev/null; then
  python3 scripts/check_packages.py "${debs[@]}"
else
  echo "package.sh: no python3, so the packages were not checked (scripts/check_packages.py)"
fi
for deb in "${debs[@]}"; do
  echo "package.sh: $deb"
  dpkg-deb -f "$deb" Package Version Depends | sed 's/^/  /'
done
echo "Install one with: sudo apt install ./${debs[-1]}"

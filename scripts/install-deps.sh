#!/usr/bin/env bash
# Installs what TileScope needs to build and test, from Debian's packages (Debian 12 / Ubuntu 22.04+).
# Idempotent: packages already present are skipped. The CUDA toolkit is not installed here (see README):
# without nvcc the build has the CPU backend only.
# --engine: only what the engine alone needs to build and be packaged (-DTILESCOPE_GUI=OFF, without the tests:
# scripts/package.sh --engine-only), for a server without a window: no GLFW, GL, X11, Vulkan, stb or test tools.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libglfw3-dev      # windows, input, OpenGL context
  libx11-dev libxrandr-dev  # headers the ImGui GLFW backend includes through glfw3native.h
  libepoxy-dev      # OpenGL function loader
  libgl-dev libegl-dev  # GL and EGL (glvnd); EGL's device platform gives headless contexts without X
  libegl-mesa0      # Mesa's EGL (software device when there is no GPU)
  libvulkan-dev     # Vulkan allocates the heatmap memory CUDA and OpenGL share on a GPU
  libstb-dev        # stb_image_write (PNG) / stb_image (tests)
  libwebp-dev       # the replay figure's animated WebP (WebPAnimEncoder); the tests decode it (WebPAnimDecoder)
  libcli11-dev      # command line parsing
  nlohmann-json3-dev
  libzstd-dev       # zstd: a remote engine's heatmaps and matrices travel compressed
  libopenblas-dev   # OpenBLAS (pthread): dgemm for the float64 reference of the CPU checks
  libgtest-dev      # GoogleTest
  xvfb xauth        # the UI smoke test renders under a virtual X server
  libgl1-mesa-dri   # software OpenGL for Xvfb
  clang-format-14   # the pinned formatter: ctest checks every source against .clang-format
  desktop-file-utils  # desktop-file-validate: ctest package.desktop_entry checks the window's desktop entry
  python3           # generates the .npy test corpus (tests/npy/make_corpus.py), at build time
  clang-14 libclang-rt-14-dev  # the sanitizer build (ASan + UBSan) and libFuzzer (scripts/test-sanitizers.sh, fuzz.sh)
  llvm-14           # llvm-symbolizer: sanitizer reports with file and line
  python3-pip       # pip --target: the pinned cuobjdump below (Debian's pip refuses system installs)
)
if [ "${1:-}" = "--engine" ]; then
  # build-essential brings dpkg-dev, whose dpkg-shlibdeps CPack runs.
  packages=(build-essential cmake ninja-build pkg-config git ca-certificates libcli11-dev libzstd-dev
            libopenblas-dev nlohmann-json3-dev python3-pip)
fi

# cuobjdump (and the nvdisasm it runs) for the build-time SASS listings (the SASS panel, `tilescope sass`), pinned with its hash in
# scripts/requirements-cuda-tools.txt, into third_party/cuda-tools (ignored by git; CMake looks there when the
# CUDA toolkit has none). Skipped when the toolkit has one, when the pinned copy is there already, and on a
# machine that is not x86_64 (the hash is the x86_64 wheel's): the build then says it has no listings.
install_cuobjdump() {
  local root dest req stamp want
  root="$(cd "$(dirname "$0")/.." && pwd)"
  dest="$root/third_party/cuda-tools"
  req="$root/scripts/requirements-cuda-tools.txt"
  stamp="$dest/.requirements.sha256"
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ -x /usr/local/cuda/bin/cuobjdump ] || command -v cuobjdump >/dev/null; then
    echo "install-deps: cuobjdump: the CUDA toolkit's"
    return 0
  fi
  if [ -x "$dest/nvidia/cu13/bin/cuobjdump" ] && [ -x "$dest/nvidia/cu13/bin/nvdisasm" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "install-deps: cuobjdump: $dest (pinned, present)"
    return 0
  fi
  if [ "$(uname -m)" != "x86_64" ]; then
    echo "install-deps: cuobjdump: no pinned wheel for $(uname -m); the build will have no SASS listings" >&2
    return 0
  fi
  rm -rf "$dest.tmp"
  if python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --only-binary=:all: --require-hashes \
       --target "$dest.tmp" -r "$req"; then
    rm -rf "$dest"
    mv "$dest.tmp" "$dest"
    echo "$want" >"$stamp"
    echo "install-deps: cuobjdump $("$dest/nvidia/cu13/bin/cuobjdump" --version | grep -o "V[0-9][0-9.]*" | head -1) in $dest"
  else
    rm -rf "$dest.tmp"
    echo "install-deps: cuobjdump could not be installed (pip failed); the build will have no SASS listings" >&2
  fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages present"
  install_cuobjdump
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_cuobjdump

#!/usr/bin/env bash
# Configures and builds TileScope into build/ (Release). Extra arguments go to CMake's configure step, e.g.
#   scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90
set -euo pipefail
cd "$(dirname "$0")/.."
# The CUDA toolkit's usual home, when nvcc is not on PATH yet.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build --parallel "$(nproc)"

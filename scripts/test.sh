#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, GPU, UI smoke). GPU tests report SKIP on a
# machine without an NVIDIA GPU; the UI smoke test starts its own virtual X server (Xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure --parallel "$(nproc)"

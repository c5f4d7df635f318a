#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   1. build/: unit, GPU (each reports SKIP without an NVIDIA GPU), GL and UI tests (each under its own virtual
#      X server), and the format check;
#   2. build-asan/: the CPU side again under AddressSanitizer + UndefinedBehaviorSanitizer (clang-14),
#      unit, UI and GL tests (scripts/test-sanitizers.sh);
#   3. the fuzz targets (the .npy reader; the kernel scanner, .py extraction and #include finder; the session
#      reader), sharing
#      TILESCOPE_FUZZ_SECONDS (default 60; 0 skips them) (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stage() { echo "test.sh: $1 done after $((SECONDS - start)) s"; }
scripts/install-deps.sh
scripts/build.sh
stage "build"
(cd build && ctest --output-on-failure --parallel "$(nproc)")
stage "tests"
scripts/test-sanitizers.sh
stage "sanitizer build and tests"
fuzz_seconds=${TILESCOPE_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" -gt 0 ]; then
  scripts/fuzz.sh "$fuzz_seconds"
  stage "fuzzing ($fuzz_seconds s)"
fi

#!/usr/bin/env bash
# The CPU side under AddressSanitizer + UndefinedBehaviorSanitizer: a second build in build-asan/ with
# Debian's clang-14 (CUDA off, so it runs anywhere), then its unit, UI and GL tests. Any sanitizer report makes
# the program that hit it exit with code 99, which no test expects: a finding in a `tilescope` child process
# fails its test as surely as one in the test itself. The same build holds the fuzz target (scripts/fuzz.sh).
#
# Mesa, and only Mesa: libEGL_mesa/libGLX_mesa dlclose() the software DRI driver (swrast_dri.so) when the GL
# display is closed, while the driver's own allocations stay behind; LeakSanitizer then finds them unreachable,
# in an "<unknown module>", and no suppression can even name them. Preloading that driver keeps it mapped, so
# they stay reachable from its globals and nothing needs suppressing: no LeakSanitizer suppressions are used.
# Usage: scripts/test-sanitizers.sh [extra CMake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DTILESCOPE_CUDA=OFF -DTILESCOPE_SANITIZE=address,undefined -DTILESCOPE_FUZZ=ON "$@"
cmake --build build-asan --parallel "$(nproc)"
export ASAN_OPTIONS=exitcode=99:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1
export UBSAN_OPTIONS=exitcode=99:print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=exitcode=99
for driver in /usr/lib/*/dri/swrast_dri.so /usr/lib/dri/swrast_dri.so; do
  if [ -f "$driver" ]; then
    export LD_PRELOAD="$driver"
    echo "test-sanitizers.sh: keeping Mesa's $driver loaded (see above)"
    break
  fi
done
cd build-asan
ctest --output-on-failure --parallel "$(nproc)" -L 'unit|ui|gl'

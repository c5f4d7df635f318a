#!/usr/bin/env bash
# Runs the GPU checks on a machine with an NVIDIA GPU, from a build folder made elsewhere (see README,
# "On a headless GPU server"): GPU tests, a compute-sanitizer pass, and the reference figures. (The unit tests
# run the tilescope binary by its build-time path: they belong to the build machine and CI.)
# Usage: tests/gpu/run_on_device.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=${1:?build folder}
out=${2:?output folder}
mkdir -p "$out"
export LD_LIBRARY_PATH="$build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
ts="$build/app/tilescope"
# A person's kernel runs in the same binary started as a worker; the GPU tests find it and the examples here.
export TILESCOPE_TEST_BIN="$ts" TILESCOPE_WORKER="$ts"
export TILESCOPE_LINK_SIM="$build/tests/tools/link_sim"  # the simulated link, for the remote engine's snapshot
export TILESCOPE_EXAMPLES="${TILESCOPE_EXAMPLES:-$(cd "$(dirname "$0")/../.." && pwd)/examples/kernels}"

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt" 2>&1
"$build/tests/gpu/tilescope_gpu_tests" > "$out/gpu_tests.log" 2>&1; echo "gpu tests rc=$?" | tee -a "$out/summary.txt"

# compute-sanitizer: memcheck and racecheck clean on every kernel, the teaching race caught.
if command -v compute-sanitizer >/dev/null; then
  "$(dirname "$0")/sanitize.sh" "$ts" "$out/sanitizer.log" > "$out/sanitizer_summary.txt" 2>&1
  echo "sanitizer rc=$?" | tee -a "$out/summary.txt"
fi

# Figures: the whole ladder on the reference shapes (tilescope bench), markdown and JSON.
"$ts" bench --shapes "${BENCH_SHAPES:-1024,4096,2048x4096x8192,4099}" --format json --out "$out/bench.json" \
  ${BENCH_ARGS:-} 2> "$out/bench_progress.log"
echo "bench rc=$?" | tee -a "$out/summary.txt"
"$ts" run --size 4096 --kernel tiled --tile 32 > "$out/run_4096_t32.txt" 2>&1
echo "run 4096 T=32 rc=$?" | tee -a "$out/summary.txt"

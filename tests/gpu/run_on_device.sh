#!/usr/bin/env bash
# Runs the GPU checks on a machine with an NVIDIA GPU, from a build folder made elsewhere (see README,
# "On a headless GPU server"): GPU tests, unit tests, a compute-sanitizer pass, and the reference figures.
# Usage: tests/gpu/run_on_device.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=${1:?build folder}
out=${2:?output folder}
mkdir -p "$out"
export LD_LIBRARY_PATH="$build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
ts="$build/app/tilescope"

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt" 2>&1
"$build/tests/gpu/tilescope_gpu_tests" > "$out/gpu_tests.log" 2>&1; echo "gpu tests rc=$?" | tee -a "$out/summary.txt"
"$build/tests/unit/tilescope_unit_tests" > "$out/unit_tests.log" 2>&1; echo "unit tests rc=$?" | tee -a "$out/summary.txt"

# Memory errors in every kernel at a small, ragged shape.
if command -v compute-sanitizer >/dev/null; then
  for k in "naive --tile 8" "tiled --tile 8" "tiled --tile 16" "tiled --tile 32" "cublas"; do
    compute-sanitizer --tool memcheck --error-exitcode 9 "$ts" run --backend cuda --kernel $k --m 67 --n 45 --k 33 \
      --samples 1 >> "$out/sanitizer.log" 2>&1
    echo "memcheck $k rc=$?" | tee -a "$out/summary.txt"
  done
  compute-sanitizer --tool racecheck --error-exitcode 9 "$ts" run --backend cuda --kernel tiled --tile 16 --m 67 \
    --n 45 --k 33 --samples 1 >> "$out/sanitizer.log" 2>&1
  echo "racecheck tiled T=16 rc=$?" | tee -a "$out/summary.txt"
fi

# Figures: every kernel on the reference shapes, JSON lines.
for shape in "--size 1024" "--size 4096" "--m 2048 --n 4096 --k 8192" "--size 4099"; do
  for k in "naive --tile 16" "tiled --tile 8" "tiled --tile 16" "tiled --tile 32" "cublas"; do
    "$ts" run --backend cuda --kernel $k $shape --samples 15 --json 2>&1 | tr -d '\n ' >> "$out/figures.jsonl"
    echo >> "$out/figures.jsonl"
  done
done
"$ts" run --size 4096 --kernel tiled --tile 32 > "$out/run_4096_t32.txt" 2>&1
echo "run 4096 T=32 rc=$?" | tee -a "$out/summary.txt"

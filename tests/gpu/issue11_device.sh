#!/usr/bin/env bash
# Issue #11 on a GPU, in one go (under 8 minutes on an H100): the GPU tests, the GUI's timing path against
# `tilescope bench` at one point, the sweep N = 256..8192 step 256 for tiled TILE 8/16/32, pipelined and cuBLAS
# (with its duration, the DRAM bandwidth and the wave marks), and the occupancy tables against the driver.
# Writes at most 8 files under OUT_DIR. Run from a build folder made elsewhere, like run_on_device.sh.
# Usage: tests/gpu/issue11_device.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=${1:?build folder}
out=${2:?output folder}
mkdir -p "$out"
export LD_LIBRARY_PATH="$build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
ts="$build/app/tilescope"
sum="$out/summary.txt"
: > "$sum"
. "$(dirname "$0")/device_lib.sh"  # step()
num() {  # num KEY FILE: the first number after "KEY": in a JSON file written one key a line
  grep -m1 "\"$1\":" "$2" | sed -E 's/.*": *(-?[0-9.eE+-]+).*/\1/'
}

{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv
  "$ts" --version; } >> "$sum" 2>&1

# 1. GPU tests: every kernel through the engine, clocks recorded, bench policy, bandwidth, sweeps, and the
#    build-time occupancy table against cudaFuncGetAttributes and the occupancy API (BuildResources.*).
step gpu_tests timeout 240 "$build/tests/gpu/tilescope_gpu_tests" > "$out/gpu_tests.log" 2>&1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/gpu_tests.log" | head -40 >> "$sum"

# 2. Occupancy: the measured device's table with the driver's figures beside the build's, and the catalog's
#    theoretical H100 table (made without touching the GPU) for comparison.
{ "$ts" list --occupancy device; echo "rc=$?"; echo; "$ts" list --occupancy h100; echo "rc=$?"; } \
  > "$out/occupancy.txt" 2>&1
echo "occupancy: $(grep -c 'match$' "$out/occupancy.txt") rows match the driver, $(grep -c 'DIFFERENT' "$out/occupancy.txt") differ" | tee -a "$sum"

# 3. The GUI's path (quick policy through the run queue, as `tilescope run`) against `tilescope bench` (nvbench
#    policy) at the same point, 3 quick runs to see their spread. Medians agree when |quick - bench| is within
#    the larger IQR.
cmp="$out/gui_vs_bench.txt"
: > "$cmp"
for i in 1 2 3; do
  "$ts" run --size 4096 --kernel tiled --tile 32 --json > "$out/.run$i.json" 2>> "$cmp"
done
step bench_point "$ts" bench --kernels tiled --tiles 32 --shapes 4096 --format json --out "$out/.bench_point.json" \
  2>> "$cmp"
{
  bench_med=$(num median_ms "$out/.bench_point.json")
  bench_iqr=$(num iqr_ms "$out/.bench_point.json")
  echo "bench (nvbench policy): median $bench_med ms, IQR $bench_iqr ms"
  for i in 1 2 3; do
    med=$(num median_ms "$out/.run$i.json")
    iqr=$(num iqr_ms "$out/.run$i.json")
    clk=$(num sm_clock_median_mhz "$out/.run$i.json")
    awk -v q="$med" -v qi="$iqr" -v b="$bench_med" -v bi="$bench_iqr" -v c="$clk" -v i="$i" 'BEGIN {
      d = q - b; if (d < 0) d = -d; tol = (qi > bi ? qi : bi);
      printf "GUI path run %d (quick policy): median %s ms, IQR %s ms, SM %s MHz; |diff| %.4f ms = %.2f %% of bench; %s\n",
             i, q, qi, c, d, 100 * d / b, (d <= tol ? "within the larger IQR" : "OUTSIDE the larger IQR") }'
  done
  echo; echo "--- tilescope run --json (last) ---"; cat "$out/.run3.json"
  echo "--- tilescope bench --format json ---"; cat "$out/.bench_point.json"
} >> "$cmp" 2>&1
rm -f "$out"/.run?.json "$out/.bench_point.json"
grep -E '^(bench|GUI path)' "$cmp" | tee -a "$sum"

# 4. The sweep: N = 256..8192 step 256, tiled TILE 8/16/32, pipelined 128/256 and cuBLAS (192 points), bench
#    policy with a shorter time limit and a sample cap so it fits the session; JSON table, the session (for the
#    window's overlays and figures) and the per-point progress with the total duration.
step sweep "$ts" bench --kernels tiled,pipelined,cublas --sizes 256:8192:256 --min-time 0.2 --max-time 0.75 \
  --max-samples 2000 --format json --out "$out/sweep.json" --session-out "$out/sweep_session.json" \
  2> "$out/sweep_progress.log"
grep -E 'tilescope bench:' "$out/sweep_progress.log" | tee -a "$sum"
grep -c 'THROTTLED' "$out/sweep_progress.log" | sed 's/^/sweep points throttled: /' | tee -a "$sum"
ls -l "$out" >> "$sum"

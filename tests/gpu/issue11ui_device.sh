#!/usr/bin/env bash
# Issue #11's window half on a GPU, in one go (under 8 minutes on an H100; 8 files):
# 1. the window's sweep N = 256..8192 step 256 for tiled TILE 8/16/32, pipelined (128 and 256) and cuBLAS
#    (192 points), started as the Sweep panel starts it and drawn offscreen frame by frame while the
#    SweepRunner measures (`bench heatmap --sweep`, run_frame_bench): the sweep's duration, every frame's time
#    (goal: none over 50 ms) and where the slowest frames spent it; the Roofline panel's DRAM bandwidth first;
# 2. the figures of that sweep from the window's session through `tilescope figure --session`: time and FLOP/s
#    against N with the wave-quantisation marks of tiled T=32, the ladder bars at 4096^3, the roofline with the
#    measured DRAM roof, each as PNG + JSON sidecar (the CSV holds the same numbers and is left out).
# The bench policy is the Sweep panel's with "at least 0.2 s, at most 0.75 s" per point, as issue11_device.sh
# sweeps, so the two can be compared; the sweep is cancelled after 360 s (its points so far are kept).
# Usage: tests/gpu/issue11ui_device.sh BUILD_DIR OUT_DIR   (a build folder made elsewhere, see run_on_device.sh)
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

# 1. The window's sweep, frames drawn while it runs (EGL device context on the CUDA device: interop on).
frames="$out/.frames.json"
step window_sweep timeout 450 "$ts" bench heatmap --size 1024 --kernel tiled --tile 32 --repeats 3 \
  --frame-seconds 0 --sweep 256:8192:256 --sweep-kernels tiled,pipelined,cublas --sweep-min-time 0.2 \
  --sweep-max-time 0.75 --sweep-limit 360 --sweep-session-out "$out/sweep_session.json" --gl egl \
  --format json --out "$frames"
if [ -s "$frames" ]; then
  awk -v s="$(num seconds "$frames")" -v d="$(num done "$frames")" -v t="$(num total "$frames")" \
      -v c="$(num count "$frames")" -v m="$(num median_ms "$frames")" -v w="$(num max_ms "$frames")" \
      -v o="$(num over_50ms "$frames")" -v bw="$(num dram_gbs "$frames")" 'BEGIN {
    printf "window sweep: %s of %s points in %.1f s; DRAM %.0f GB/s\n", d, t, s, bw
    printf "GUI frames during the sweep: %s, median %.2f ms, worst %.2f ms, %s over 50 ms (goal: none) -> %s\n",
           c, m, w, o, (o == 0 ? "MET" : "MISSED") }' | tee -a "$sum"
  { echo; echo "--- bench heatmap --sweep (JSON) ---"; cat "$frames"; } >> "$sum"
fi

# 2. The figures of that sweep, drawn by the window's own plotting code from its session.
figs="$out/.figures"
mkdir -p "$figs"
if [ -s "$out/sweep_session.json" ]; then
  step fig_timings "$ts" figure --plot timings --session "$out/sweep_session.json" --kernel tiled --tile 32 \
    --size 4096 --y both --out-dir "$figs" --gl egl
  step fig_bars "$ts" figure --plot bars --session "$out/sweep_session.json" --kernel tiled --tile 32 \
    --size 4096 --out-dir "$figs" --gl egl
  step fig_roofline "$ts" figure --plot roofline --session "$out/sweep_session.json" --kernel tiled --tile 32 \
    --size 4096 --out-dir "$figs" --gl egl
fi
for png in "$figs"/*.png; do
  [ -e "$png" ] || continue
  name=$(basename "$png" .png | sed -E 's/-[0-9]{8}-[0-9]{6}(-[0-9]+)?$//')
  cp "$png" "$out/$name.png"
  cp "${png%.png}.json" "$out/$name.json"
  echo "$name: $(grep -m1 '"caption"' "${png%.png}.json" | sed -E 's/ *"caption": *//')" >> "$sum"
done
rm -rf "$figs" "$frames"
ls -l "$out" >> "$sum"

#!/usr/bin/env bash
# The window (issue #10) on a GPU, in one go (under 9 minutes on an H100): the GPU and GL tests (interop
# included), the orientation tests through CUDA-GL interop, the heatmap figures (refresh of A, B and C, frames
# while Repeat re-runs 4096^3, commit -> picture at 1024^3) and the README's screenshots. At most 8 files.
# Usage: tests/gpu/window_device.sh BUILD_DIR OUT_DIR     (a build folder made elsewhere, see run_on_device.sh)
set -uo pipefail
build=${1:?build folder}
out=${2:?output folder}
mkdir -p "$out"
export LD_LIBRARY_PATH="$build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
ts="$build/app/tilescope"
# A person's kernel runs in the same binary started as a worker; the GPU tests find it and the examples here.
export TILESCOPE_TEST_BIN="$ts" TILESCOPE_WORKER="$ts"
export TILESCOPE_EXAMPLES="${TILESCOPE_EXAMPLES:-$(cd "$(dirname "$0")/../.." && pwd)/examples/kernels}"
sum="$out/summary.txt"
log="$out/tests.log"
: > "$sum"
: > "$log"
. "$(dirname "$0")/device_lib.sh"  # step()
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; "$ts" --version; } >> "$sum" 2>&1

# 1. GPU tests (every kernel through the engine, device stores, profiles) and the GL tests (host path and
#    interop on an EGL context on the CUDA device).
#    A person's kernels that fault and hang run last (section 5): after a hang ended by killing the worker,
#    the H100 (driver 580.159.04) logged Xid 109 (CTX SWITCH TIMEOUT) and OpenGL on it then drew black and
#    stalled.
# GPU_TESTS=0 leaves out the GPU suite (run elsewhere, e.g. issue14_device.sh); USER_KERNELS=0 leaves out
# section 5.
if [ "${GPU_TESTS:-1}" != 0 ]; then
step gpu_tests timeout 300 "$build/tests/gpu/tilescope_gpu_tests" --gtest_filter='-UserKernels.*' >> "$log" 2>&1
fi
step gl_tests timeout 120 "$build/tests/gl/tilescope_gl_tests" >> "$log" 2>&1
# 2. Orientation and layout through the real renderer on the GPU: --backend auto picks CUDA, so the heatmaps are
#    written by CUDA through interop (the test prints which path ran).
step ui_orientation env TILESCOPE_TEST_BIN="$ts" timeout 180 "$build/tests/ui/tilescope_ui_tests" \
  --gtest_filter='Orientation.*:Snapshot.EglDeviceNeedsNoXServer' >> "$log" 2>&1
# The device is found and runs (the driver probe changed): list and a one-point bench.
{ "$ts" list | tail -2; "$ts" bench --kernels tiled --tiles 16 --shapes 64 --max-time 0.2 --min-time 0.05 --format csv; } \
  >> "$log" 2>&1
grep -E '^\[  (PASSED|FAILED|SKIPPED) |^heatmaps through|FAILED  \]' "$log" | tee -a "$sum"

# 3. Figures: refreshes of A, B and C (4096^2 into 1024^2 views), GUI frames while Repeat re-runs 4096^3, and the
#    time from a committed size to its heatmaps and Result at 1024^3 (tiled TILE 32).
step bench_heatmap "$ts" bench heatmap --size 4096 --kernel tiled --tile 32 --frame-seconds 10 --gl egl \
  --format json --out "$out/bench_heatmap.json"
step commit_1024 "$ts" bench heatmap --size 1024 --kernel tiled --tile 32 --frame-seconds 0 --repeats 5 \
  --commits 12 --gl egl --format json --out "$out/commit_1024.json"

# 4. The README's screenshots: the whole window at 4096^3, and zoomed to the top-left 100 x 100 elements
#    (SHOTS=0 skips them).
if [ "${SHOTS:-1}" != 0 ]; then
step shot_window "$ts" snapshot --gl egl --size 4096 --kernel tiled --tile 32 --width 1920 --height 1080 \
  --out "$out/screenshot.png" --layout-json "$out/screenshot_layout.json"
step shot_zoom "$ts" snapshot --gl egl --size 4096 --kernel tiled --tile 32 --width 1920 --height 1080 \
  --zoom 0,0,100,100 --out "$out/screenshot-zoom.png"
fi

# 5. A person's kernels (examples, a fault, a hang, a worker that dies): last, see section 1.
[ "${USER_KERNELS:-1}" != 0 ] && step gpu_tests_user timeout 200 "$build/tests/gpu/tilescope_gpu_tests" --gtest_filter='UserKernels.*' >> "$log" 2>&1
ls -l "$out" >> "$sum"

#!/usr/bin/env bash
# The top of the ladder (issue #14) on a GPU, in one go (under 9 minutes on an H100): the GPU suite without a
# person's kernels (every rung, split-K included, on ragged and 64-bit shapes, traces, build-time resources),
# one bench run of the best rungs against cuBLAS at the issue's shapes (interleaved, both clocks), the
# split-K schedule at 1024^3 against rung 9's, and compute-sanitizer (memcheck, racecheck, synccheck,
# initcheck) on split-K, rung 9 and wgmma_tf32. At most 8 files come back: summary.txt, tests.log, bench.md,
# bench_session.json, sanitize.log, schedules.txt.
# Usage: tests/gpu/issue14_device.sh BUILD_DIR OUT_DIR [STEPS]   STEPS: any of tests,bench,schedule,sanitize
set -uo pipefail
build=${1:?build folder}
out=${2:?output folder}
steps=${3:-tests,bench,schedule,sanitize}
mkdir -p "$out"
export LD_LIBRARY_PATH="$build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
ts="$build/app/tilescope"
export TILESCOPE_TEST_BIN="$ts" TILESCOPE_WORKER="$ts"
sum="$out/summary.txt"
: > "$sum"
. "$(dirname "$0")/device_lib.sh"  # step()
want() { [[ ",$steps," == *",$1,"* ]]; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; "$ts" --version; } >> "$sum" 2>&1

if want tests; then
  # A person's kernels (UserKernels.*) are left out: the hang test ends a worker by killing it, after which
  # this driver logged Xid 109 and the GPU misbehaved (window_device.sh runs them last).
  step gpu_tests timeout 420 "$build/tests/gpu/tilescope_gpu_tests" --gtest_filter='-UserKernels.*' \
    > "$out/tests.log" 2>&1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]' "$out/tests.log" | tee -a "$sum"
fi

if want bench; then
  # The README's ladder table and the issue's: every rung (teaching variants aside) at each shape, cuBLAS of
  # the same precision timed between the samples. BENCH_KERNELS narrows it.
  step bench timeout 560 "$ts" bench --kernels "${BENCH_KERNELS:-all}" \
    --shapes 1024,2048,4096,8192,2048x4096x8192,4099,1000 --min-time 0.2 --max-time 1 \
    --format md --out "$out/bench.md" \
    --session-out "$out/bench_session.json" --force
fi

if want schedule; then
  # The tail wave: rung 9 (tile 128) and split-K at 1024^3, traced; the schedule summaries side by side.
  for cfg in "pipelined 128" "splitk 1" "splitk 2" "splitk 3" "splitk 4" "splitk 8"; do
    set -- $cfg
    echo "== $1 tile $2 at 1024^3" >> "$out/schedules.txt"
    timeout 60 "$ts" run --backend cuda --kernel "$1" --tile "$2" --size 1024 --profile --trace-csv \
      "$out/sched_$1_$2.csv" --force 2>&1 | tail -12 >> "$out/schedules.txt"
    python3 - "$out/sched_$1_$2.csv" >> "$out/schedules.txt" 2>&1 <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
end = max(float(r["end_us"]) for r in rows)
sms = {}
for r in rows:
    sms.setdefault(r["sm"], []).append((float(r["start_us"]), float(r["end_us"])))
busy = sum(sum(e - s for s, e in v) for v in sms.values())
# The tail: from the moment the first SM runs out of work to the end of the launch.
first_idle = min(max(e for _, e in v) for v in sms.values())
print(f"blocks {len(rows)}, SMs used {len(sms)}, launch {end:.1f} us, "
      f"first SM idle at {first_idle:.1f} us ({100 * first_idle / end:.0f} %), "
      f"block-us per SM-us {busy / (132 * end):.2f}")
PY
    rm -f "$out/sched_$1_$2.csv"
  done
fi

if want sanitize; then
  : > "$out/sanitize.log"
  # Split-K at 1 (rung 9's tile 128), 2 and 8 slices, rung 9's tile 256, and wgmma_tf32 (both tiles; at N = 261
  # tile 512's second cluster has a block wholly past N), on ragged shapes whose rows are not 16-byte aligned
  # (B copied into padded rows first, then cp.async or TMA), and on one whose rows are (300 x 520 x 1000):
  # there the blocks wholly inside C take the copies without bounds checks, and tile 256 (K a multiple of
  # its 8) runs its whole loop that way.
  for cfg in "splitk 1" "splitk 2" "splitk 8" "pipelined 256" "wgmma_tf32 256" "wgmma_tf32 512"; do
    set -- $cfg
    for shape in "--m 130 --n 141 --k 70" "--m 300 --n 261 --k 1001" "--m 300 --n 520 --k 1000"; do
      for tool in memcheck racecheck synccheck initcheck; do
        o=$(timeout 120 compute-sanitizer --tool $tool "$ts" run --backend cuda --kernel $1 --tile $2 \
          $shape --samples 1 2>&1)
        echo "== $tool $1 $2 $shape" >> "$out/sanitize.log"
        echo "$o" | tail -5 >> "$out/sanitize.log"
        if echo "$o" | grep -q "ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards"; then
          echo "clean    $tool $1 $2 $shape" >> "$sum"
        else
          echo "DIRTY    $tool $1 $2 $shape" >> "$sum"
        fi
      done
    done
  done
fi
ls -l "$out" >> "$sum"

#!/bin/bash
# On a GPU machine: the window's sweep against `tilescope bench`, the same kernels, sizes and policy, to show
# that drawing the window does not slow what the sweep measures (the window draws 4 frames a second while a
# kernel is timed: app/core/engine/measure.hpp, TimingGate). Order: bench, the window's sweep, bench again, so that
# a drift of the GPU (clocks, power) shows as a difference between the two bench runs.
#   usage: tests/gpu/sweep_vs_bench_device.sh TILESCOPE OUT_DIR [SIZES] [KERNELS]
# Writes OUT_DIR/sweep_vs_bench.txt (per point: bench, window, bench again, window / bench, frames drawn while
# timed, SM clocks) and the three sessions.
ts=${1:?tilescope binary}
out=${2:?output folder}
sizes=${3:-1024:8192:1024}
kernels=${4:-tiled,cublas}
mkdir -p "$out"
policy=(--min-time 0.2 --max-time 0.75)
timeout 280 "$ts" bench --kernels "$kernels" --sizes "$sizes" "${policy[@]}" --format json \
  --out "$out/bench1.json" --session-out "$out/bench1_session.json" --force > "$out/bench1.log" 2>&1
echo "bench 1: rc=$?" > "$out/sweep_vs_bench.txt"
timeout 400 "$ts" bench heatmap --size 1024 --kernel tiled --tile 32 --repeats 3 --frame-seconds 0 \
  --sweep "$sizes" --sweep-kernels "$kernels" --sweep-min-time 0.2 --sweep-max-time 0.75 --sweep-limit 360 \
  --sweep-session-out "$out/window_session.json" --gl egl --format json --out "$out/window_frames.json" \
  > "$out/window.log" 2>&1
echo "window sweep: rc=$?" >> "$out/sweep_vs_bench.txt"
timeout 280 "$ts" bench --kernels "$kernels" --sizes "$sizes" "${policy[@]}" --format json \
  --out "$out/bench2.json" --session-out "$out/bench2_session.json" --force > "$out/bench2.log" 2>&1
echo "bench 2: rc=$?" >> "$out/sweep_vs_bench.txt"
python3 - "$out" >> "$out/sweep_vs_bench.txt" 2>&1 <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
def load(name):
    try:
        doc = json.load(open(os.path.join(out, name)))
    except Exception as e:
        print(f"{name}: {e}")
        return {}
    pts = {}
    for r in doc.get("records", []):
        if not r.get("timed") or not r.get("passed"):
            continue
        pts[(r["kernel"], r.get("tile", 0), r["n"])] = r
    return pts
b1, w, b2 = load("bench1_session.json"), load("window_session.json"), load("bench2_session.json")
print(f"{'kernel':10s} {'tile':>4s} {'N':>5s} {'bench ms':>9s} {'window ms':>9s} {'bench2 ms':>9s} "
      f"{'win/bench':>9s} {'frames':>6s} {'MHz b/w/b2':>15s}")
ratios = []
for key in sorted(w):
    if key not in b1:
        continue
    rb, rw = b1[key], w[key]
    rb2 = b2.get(key)
    mb, mw = rb["stats_ms"]["median"], rw["stats_ms"]["median"]
    mb2 = rb2["stats_ms"]["median"] if rb2 else float("nan")
    ref = statistics.median([mb, mb2]) if rb2 else mb
    ratios.append(mw / ref)
    clk = lambda r: f"{r['clock']['median_mhz']:.0f}" if r and r["clock"]["available"] else "-"
    print(f"{key[0]:10s} {key[1]:4d} {key[2]:5d} {mb:9.3f} {mw:9.3f} {mb2:9.3f} {mw / ref:9.3f} "
          f"{rw.get('frames_drawn', 0):6d} {clk(rb):>4s}/{clk(rw)}/{clk(rb2)}")
if ratios:
    print(f"\nwindow / bench (median of the two bench runs): median {statistics.median(ratios):.3f}, "
          f"min {min(ratios):.3f}, max {max(ratios):.3f} over {len(ratios)} points")
try:
    f = json.load(open(os.path.join(out, "window_frames.json")))
    sw = f.get("sweep", {})
    print(f"window sweep: {sw.get('done')} of {sw.get('total')} points in {sw.get('seconds', 0):.1f} s, "
          f"{sw.get('frames')} frames drawn")
except Exception as e:
    print("window_frames.json:", e)
PY
cat "$out/sweep_vs_bench.txt"

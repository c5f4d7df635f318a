#!/usr/bin/env bash
# Issue 25: what a person's faulting kernel does to OpenGL on this GPU, and what TileScope does about it, in one
# go on a FRESH machine. After the fault OpenGL on the GPU may stay broken for every later process: run nothing
# that draws after this script (GPU tests that need no GL may follow).
#   1. Before: the GL self-check in a new process (tilescope gl-check) and a snapshot of a known picture
#      (identity A at 64^3, tiled T=16), whose pixels are checked.
#   2. The guard: a kernel that writes far outside C, run with memcheck first (the default): refused with the
#      line of the write, nothing reaches the GPU, and gl-check passes again. What the guard costs: a correct
#      kernel's first run with it and without it, and a second run of the same build.
#   3. The fault itself (--no-guard) while a long-lived context checks itself every half second (gl-check
#      --watch, one JSON line per check): what that context sees (pictures, reset status), then what a new
#      process sees (gl-check; a snapshot, which must exit 1 and write nothing), the kernel log (Xid) where it
#      can be read, and nvidia-smi -q.
#   4. A snapshot whose own run faults (the window's code offscreen): the incident makes it check its pictures
#      again before anything is written.
# Usage: tests/gpu/gl_fault_device.sh BUILD_DIR OUT_DIR        (at most 8 files in OUT_DIR)
set -uo pipefail
build=${1:?build folder}
out=${2:?output folder}
mkdir -p "$out"
export LD_LIBRARY_PATH="$build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
ts="$build/app/tilescope"
export TILESCOPE_WORKER="$ts"
export PATH="/usr/local/cuda/bin:$PATH"  # compute-sanitizer
examples="$(cd "$(dirname "$0")/../.." && pwd)/examples/kernels"
sum="$out/summary.txt"
log="$out/log.txt"
: > "$sum"
: > "$log"
. "$(dirname "$0")/device_lib.sh"  # step()
work=$(mktemp -d)
export TILESCOPE_CACHE_DIR="$work/cache"
export XDG_CONFIG_HOME="$work/config"
cat > "$work/faulty.cu" <<'EOF'
__global__ void faulty(float* C, const float* A, const float* B, int N) {
  C[(long long)(blockIdx.x + 1) * (1ll << 40)] = A[0] + B[0] + N;  // far outside any allocation
}
EOF
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; "$ts" --version
  command -v compute-sanitizer; } >> "$sum" 2>&1
# The known picture: identity A at 64^3 (tiled T=16), the whole window at 1366 x 768, its layout beside it.
snapshot() {  # NAME EXTRA-ARGS...: a snapshot into $out/NAME.png (and its layout), timed
  local name=$1; shift
  step "snapshot_$name" timeout 240 "$ts" snapshot --gl egl --size 64 --kernel tiled --tile 16 --input identity \
    --width 1366 --height 768 --out "$out/$name.png" --layout-json "$work/$name.json" "$@" >> "$log" 2>&1
}

echo "== 1. before" >> "$log"
step gl_check_before "$ts" gl-check --gl egl >> "$log" 2>&1
snapshot before
# A snapshot's pixels: A's diagonal (identity) against its off-diagonal, in A's plot rectangle from the layout.
pixels() {  # NAME
  [ -e "$out/$1.png" ] || { echo "$1.png: not written" >> "$sum"; return; }
  python3 - "$out/$1.png" "$work/$1.json" >> "$sum" 2>&1 <<'PYEOF' || echo "$1.png: pixel check failed" >> "$sum"
import json, sys, zlib, struct
def png(path):
    d = open(path, 'rb').read(); i = 8; idat = b''; w = h = 0
    while i < len(d):
        n, t = struct.unpack('>I4s', d[i:i + 8]); c = d[i + 8:i + 8 + n]; i += 12 + n
        if t == b'IHDR': w, h = struct.unpack('>II', c[:8])
        if t == b'IDAT': idat += c
    raw = zlib.decompress(idat); rows = []; prev = bytearray(w * 4); s = w * 4 + 1
    for y in range(h):
        f = raw[y * s]; line = bytearray(raw[y * s + 1:(y + 1) * s])
        for x in range(len(line)):
            a = line[x - 4] if x >= 4 else 0; b = prev[x]; cc = prev[x - 4] if x >= 4 else 0
            p = a + b - cc; pa, pb, pc = abs(p - a), abs(p - b), abs(p - cc)
            pred = [0, a, b, (a + b) // 2, a if pa <= pb and pa <= pc else (b if pb <= pc else cc)][f]
            line[x] = (line[x] + pred) & 255
        rows.append(line); prev = line
    return w, h, rows
w, h, rows = png(sys.argv[1]); lay = json.load(open(sys.argv[2]))
hm = lay['heatmaps']['heatmap A']; x, y, pw, ph = hm['plot']
def at(r, c):  # the pixel at element (r, c) of A's plot
    px = int(x + (c + 0.5 - hm['x0']) / (hm['x1'] - hm['x0']) * pw); py = int(y + (r + 0.5 - hm['y0']) / (hm['y1'] - hm['y0']) * ph)
    return tuple(rows[py][px * 4:px * 4 + 3])
diag = {at(i, i) for i in range(0, 64, 7)}; off = {at(i, (i + 32) % 64) for i in range(0, 64, 7)}
print(sys.argv[1].split('/')[-1] + ': diagonal', diag, 'off-diagonal', off, '->', 'identity seen' if len(diag) == 1 and len(off) == 1 and diag != off else 'WRONG PICTURE')
PYEOF
}
pixels before

echo "== 2. the guard" >> "$log"
step guard_refuses env TILESCOPE_CACHE_DIR="$work/cache-guard" "$ts" run --kernel-file "$work/faulty.cu" --size 512 >> "$log" 2>&1
grep -E "was not run on the GPU|Invalid __global__|faulty.cu:2" "$log" | head -3 >> "$sum"
step gl_check_after_guard timeout 60 "$ts" gl-check --gl egl --backend cuda >> "$log" 2>&1
snapshot after_guard
pixels after_guard
for n in 1024 4096; do
  step "classic_${n}_noguard" env TILESCOPE_CACHE_DIR="$work/cache-a$n" "$ts" run --kernel-file "$examples/tiled_classic.cu" --size $n --tile 16 --no-guard >> "$log" 2>&1
  step "classic_${n}_guard_first" env TILESCOPE_CACHE_DIR="$work/cache-b$n" "$ts" run --kernel-file "$examples/tiled_classic.cu" --size $n --tile 16 >> "$log" 2>&1
  step "classic_${n}_guard_again" env TILESCOPE_CACHE_DIR="$work/cache-b$n" "$ts" run --kernel-file "$examples/tiled_classic.cu" --size $n --tile 16 >> "$log" 2>&1
done
grep -E "checked under compute-sanitizer" "$log" >> "$sum"

echo "== 3. the fault, a long-lived context watching" >> "$log"
"$ts" gl-check --gl egl --backend cpu --watch 40 --every 0.5 --json > "$out/watch.jsonl" 2>> "$log" &
watcher=$!
"$ts" gl-check --gl egl --backend cuda --watch 40 --every 0.5 --json > "$work/watch_cuda.jsonl" 2>> "$log" &
watcher_cuda=$!
sleep 4
date +%s.%N > "$work/fault_time"
step fault_no_guard "$ts" run --kernel-file "$work/faulty.cu" --size 512 --no-guard >> "$log" 2>&1
grep -E "faulted|illegal" "$log" | tail -2 >> "$sum"
sleep 4
step gl_check_new_process_gl timeout 60 "$ts" gl-check --gl egl --backend cpu >> "$log" 2>&1
step gl_check_new_process_cuda timeout 60 "$ts" gl-check --gl egl --backend cuda >> "$log" 2>&1
snapshot after
pixels after
# The CUDA backend with the heatmaps through host memory from the start (no CUDA-GL interop in the process).
step snapshot_after_nointerop env TILESCOPE_INTEROP=off timeout 240 "$ts" snapshot --gl egl --size 64 --kernel tiled \
  --tile 16 --input identity --width 1366 --height 768 --out "$out/after_nointerop.png" \
  --layout-json "$work/after_nointerop.json" >> "$log" 2>&1
pixels after_nointerop
grep -E "not written|self-check|interop" "$log" | tail -4 | cut -c1-400 >> "$sum"

echo "== 4. a snapshot whose own run faults" >> "$log"
step snapshot_own_fault timeout 240 "$ts" snapshot --gl egl --kernel-file "$work/faulty.cu" --no-guard --size 256 \
  --width 1366 --height 768 --out "$work/own_fault.png" >> "$log" 2>&1
[ -e "$work/own_fault.png" ] && echo "own_fault.png written" >> "$sum" || echo "own_fault.png not written" >> "$sum"
sleep 30; kill -9 $watcher $watcher_cuda 2>/dev/null  # a watcher stuck in a GL call never ends by itself
cat "$work/watch_cuda.jsonl" >> "$out/watch.jsonl"
echo "watchers: $(grep -c '"ok":true' "$out/watch.jsonl") passed, $(grep -c '"ok":false' "$out/watch.jsonl") failed; fault at $(cat "$work/fault_time")" >> "$sum"
python3 - "$out/watch.jsonl" >> "$sum" 2>&1 <<'EOF'
import json, sys
last = None
for line in open(sys.argv[1]):
    try: j = json.loads(line)
    except ValueError: continue
    key = (j['heatmaps'], j['ok'], j['reset_status'], j['verdict'])
    if key != last: print('watch (%s) %.1f s: %s, reset: %s, %.0f ms: %s' % (j['heatmaps'][:16], j['t_s'], 'PASS' if j['ok'] else 'FAIL', j['reset_status'], j['ms'], j['detail'][:300]))
    last = key
EOF
{ echo "== kernel log"; dmesg 2>&1 | grep -iE "xid|nvrm" | tail -20; echo "== nvidia-smi -q"; nvidia-smi -q; } > "$out/nvidia.txt" 2>&1
grep -iE "xid" "$out/nvidia.txt" | head -5 >> "$sum"
ls -l "$out" >> "$sum"

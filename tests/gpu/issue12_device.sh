#!/usr/bin/env bash
# Issue #12 (bring your own kernel) on a GPU, in one go (under 8 minutes on an H100), at most 8 files:
#   summary.txt           every step's exit code and time, the figures in one place
#   gpu_tests.log         the GPU tests: the built-in suite, then user kernels (examples, fault, hang, death, writes into A,
#                         untouched C, refused launches, traces, sanitizer), then the rest of the suite
#   examples.txt          each example kernel through `tilescope run --kernel-file`: PASS or FAIL as it should
#   failures.txt          a fault, a hang, untouched C and a refused launch from the command line: messages,
#                         exit codes, time to detect and to recover, and the next run working
#   compile.txt           NVRTC compile times: first (empty cache) and cached, per tile
#   save_heatmap.json     time from saving the kernel file to the new heatmaps at 1024^3 (bench heatmap --saves)
#   worker_vs_builtin.txt the built-in tiled kernel against the same code through the worker at 4096^3 TILE 32
#                         (bench policy, alternating, twice): the goal is within 2 %
#   sanitizer.txt         compute-sanitizer from the worker: the missing barrier caught, the classic kernel clean
# Usage: tests/gpu/issue12_device.sh BUILD_DIR OUT_DIR     (a build folder made elsewhere, see run_on_device.sh;
# run from the repository root, or with TILESCOPE_EXAMPLES pointing at examples/kernels)
set -uo pipefail
build=${1:?build folder}
out=${2:?output folder}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export LD_LIBRARY_PATH="$build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
ts="$build/app/tilescope"
export TILESCOPE_TEST_BIN="$ts" TILESCOPE_WORKER="$ts"
export TILESCOPE_EXAMPLES="${TILESCOPE_EXAMPLES:-$repo/examples/kernels}"
ex="$TILESCOPE_EXAMPLES"
cache=$(mktemp -d /tmp/tilescope-issue12-cache.XXXXXX)
export TILESCOPE_CACHE_DIR="$cache"
work=$(mktemp -d /tmp/tilescope-issue12-work.XXXXXX)
sum="$out/summary.txt"
: > "$sum"
. "$(dirname "$0")/device_lib.sh"  # step()
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; "$ts" --version
  command -v compute-sanitizer || echo "compute-sanitizer: not on PATH"; } >> "$sum" 2>&1

# Order: everything that draws with OpenGL or times comes first, the kernels that fault or hang last. A hang
# ended by killing the worker can leave the GPU with an Xid 109 (CTX SWITCH TIMEOUT) on some drivers, after
# which OpenGL on the same GPU may stall until the machine is reset (seen on the H100 with driver 580.159.04).

# 4. Compile times: the first build of every tile (empty cache), then the same builds from the cache (a new
#    process: from disk), for the classic kernel and the built-in-as-a-file.
cp="$out/compile.txt"
: > "$cp"
rm -rf "$cache"/*
for f in tiled_classic.cu tiled_as_builtin.cu; do
  for pass in first cached; do
    t0=$(date +%s.%N)
    "$ts" list --kernel-file "$ex/$f" --json > "$work/list.json" 2>> "$cp"
    t1=$(date +%s.%N)
    python3 - "$f" "$pass" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$work/list.json" >> "$cp" 2>&1 <<'EOF'
import json, sys
name, passname, wall, path = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
doc = json.load(open(path))
for k in doc["kernels"]:
    for t in k.get("tiles", []):
        print(f"{name:22s} {passname:7s} tile {t['tile']:3d}: compile {1000 * t.get('compile_s', 0):7.1f} ms, "
              f"cached {t.get('cached')}, {t.get('regs')} regs, {t.get('static_smem')} B smem")
print(f"{name:22s} {passname:7s} whole `tilescope list --kernel-file` process: {wall:.2f} s (NVRTC {doc['nvrtc']}, sm_{doc['arch']})")
EOF
  done
done
grep -E 'tile  32|whole' "$cp" | tee -a "$sum"

# 5. Save -> new heatmaps at 1024^3 (the classic kernel, TILE 32): another program writes the file (the watcher
#    polls every second) or the window's editor saves it.
step save_heatmap "$ts" bench heatmap --kernel-file "$ex/tiled_classic.cu" --size 1024 --tile 32 --frame-seconds 0 \
  --repeats 3 --saves 8 --gl egl --format json --out "$out/save_heatmap.json" 2>> "$sum"
python3 - "$out/save_heatmap.json" <<'EOF' 2>&1 | tee -a "$sum"
import json, statistics, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    print("save -> heatmap: no figures (", e, ")"); sys.exit(0)
for frm in ("another program (the watcher)", "the window's editor"):
    s = [x for x in doc.get("saves", []) if x["from"] == frm]
    if s:
        print(f"save -> heatmap, {frm}: drawn median {statistics.median(x['drawn_ms'] for x in s):.0f} ms "
              f"(noticed {statistics.median(x['noticed_ms'] for x in s):.0f}, built {statistics.median(x['built_ms'] for x in s):.0f}; n={len(s)})")
EOF

# 6. The same kernel as a built-in and through the worker, 4096^3 TILE 32, bench policy, alternating twice.
wb="$out/worker_vs_builtin.txt"
: > "$wb"
for round in 1 2; do
  step "builtin_tiled_r$round" "$ts" bench --kernels tiled --tiles 32 --shapes 4096 --format json \
    --out "$work/builtin_$round.json" 2>> "$wb"
  step "worker_tiled_r$round" "$ts" bench --kernel-file "$ex/tiled_as_builtin.cu" --tiles 32 --shapes 4096 \
    --format json --out "$work/worker_$round.json" 2>> "$wb"
done
step worker_classic "$ts" bench --kernel-file "$ex/tiled_classic.cu" --tiles 32 --shapes 4096 --format json \
  --out "$work/classic.json" 2>> "$wb"
python3 - "$work" >> "$wb" 2>&1 <<'EOF'
import json, os, sys
work = sys.argv[1]
def point(path, kernel):
    doc = json.load(open(os.path.join(work, path)))
    rows = doc.get("points", [])
    for r in rows:
        if r.get("kernel") == kernel:
            return r
    raise KeyError(f"{kernel} not in {path}: keys {list(doc.keys())}")
for rnd in (1, 2):
    b = point(f"builtin_{rnd}.json", "tiled")
    w = point(f"worker_{rnd}.json", "yours:tiled_builtin")
    d = 100.0 * (w["median_ms"] - b["median_ms"]) / b["median_ms"]
    print(f"round {rnd}: built-in tiled {b['median_ms']:.4f} ms (IQR {b.get('iqr_ms', 0):.4f}, clock {b.get('sm_clock_median_mhz', 0):.0f} MHz) | "
          f"worker {w['median_ms']:.4f} ms (IQR {w.get('iqr_ms', 0):.4f}, clock {w.get('sm_clock_median_mhz', 0):.0f} MHz) | "
          f"worker - built-in = {d:+.2f} % ({'within' if abs(d) <= 2 else 'OUTSIDE'} 2 %)")
c = point("classic.json", "yours:matmul_kernel")
print(f"the learner's classic kernel (examples/kernels/tiled_classic.cu) TILE 32: {c['median_ms']:.4f} ms, "
      f"{c.get('tflops', 0):.2f} TFLOP/s, {c.get('pct_cublas', 0):.1f} % of cuBLAS")
EOF
grep -E '^round|classic kernel' "$wb" | tee -a "$sum"

# 7. compute-sanitizer from the worker (the window's action, here through run --sanitize): racecheck catches
#    the missing barrier; memcheck and racecheck pass the classic kernel.
sz="$out/sanitizer.txt"
: > "$sz"
step sanitize_missing_sync "$ts" run --kernel-file "$ex/bug_missing_sync.cu" --size 256 --tile 16 --sanitize >> "$sz" 2>&1
step sanitize_classic "$ts" run --kernel-file "$ex/tiled_classic.cu" --size 256 --tile 16 --sanitize >> "$sz" 2>&1
grep -E '^(CLEAN|FOUND|PROBLEM)' "$sz" | tee -a "$sum"

# 2. The examples from the command line: exit code 0 for PASS, 1 for FAIL.
exs="$out/examples.txt"
: > "$exs"
example() {  # example EXPECTED_RC FILE ARGS...
  local want=$1 file=$2; shift 2
  local t0 t1 rc
  echo "== tilescope run --kernel-file $file $* (expect rc=$want)" >> "$exs"
  t0=$(date +%s.%N)
  "$ts" run --kernel-file "$ex/$file" "$@" >> "$exs" 2>&1; rc=$?
  t1=$(date +%s.%N)
  awk -v f="$file" -v a="$*" -v rc="$rc" -v w="$want" -v t0="$t0" -v t1="$t1" \
    'BEGIN { printf "%-20s %-44s rc=%d (%s) %.1f s\n", f, a, rc, (w == "any" || rc == w) ? "as it should" : "NOT AS IT SHOULD", t1 - t0 }' |
    tee -a "$sum" >> "$exs"
  echo >> "$exs"
}
example 0 tiled_classic.cu --size 1000 --tile 16
example 0 tiled_classic.cu --size 4099 --tile 32 --profile
example 0 bug_floor_k.cu --size 1024 --tile 16
example 1 bug_floor_k.cu --m 1000 --n 1000 --k 1000 --tile 16
example 1 bug_symmetric.cu --size 1024 --input symmetric
example 1 bug_symmetric.cu --size 1000 --tile 32
example any bug_missing_sync.cu --size 2048 --tile 32
example 0 tiled_as_builtin.cu --m 1000 --n 700 --k 300 --profile
{ echo "== tilescope list --kernel-file tiled_classic.cu (this GPU)"; "$ts" list --kernel-file "$ex/tiled_classic.cu"; } \
  >> "$exs" 2>&1

# 8. The rest of the GPU suite (every built-in kernel, including tiled_mirror, through the refactored
#    registry), appended to the same log.
step gpu_tests_rest timeout 200 "$build/tests/gpu/tilescope_gpu_tests" --gtest_filter='-UserKernels.*' \
  > "$out/gpu_tests.log" 2>&1

# 1. The GPU tests of a person's kernel (the worker is this build's tilescope).
step gpu_tests_user timeout 200 "$build/tests/gpu/tilescope_gpu_tests" --gtest_filter='UserKernels.*' \
  >> "$out/gpu_tests.log" 2>&1
grep -E '^\[  (PASSED|FAILED|SKIPPED) |^(fault|hang):' "$out/gpu_tests.log" | tee -a "$sum"

# 3. What a kernel can do to its worker, from the command line: a fault, a hang, C left untouched, a launch the
#    device cannot take; after each, the next run works.
fl="$out/failures.txt"
: > "$fl"
cat > "$work/faulty.cu" <<'EOF'
__global__ void faulty(float* C, const float* A, const float* B, int N) {
  C[(long long)(blockIdx.x + 1) * (1ll << 40)] = A[0] + B[0] + N;  // far outside any allocation
}
EOF
cat > "$work/spins.cu" <<'EOF'
__global__ void spins(float* C, const float* A, const float* B, int N) {
  volatile float* v = C;
  while (v[0] == v[0] || true) { }  // never ends
  C[0] = A[0] + B[0] + N;
}
EOF
cat > "$work/lazy.cu" <<'EOF'
__global__ void lazy(float* C, const float* A, const float* B, int N) {
  if (N < 0) C[0] = A[0] + B[0];
}
EOF
failure() {  # failure NAME EXPECTED_RC ARGS...
  local name=$1 want=$2; shift 2
  local t0 t1 rc
  echo "== $name: tilescope run $* (expect rc=$want)" >> "$fl"
  t0=$(date +%s.%N)
  "$ts" run "$@" >> "$fl" 2>&1; rc=$?
  t1=$(date +%s.%N)
  awk -v n="$name" -v rc="$rc" -v w="$want" -v a="$t0" -v b="$t1" \
    'BEGIN { printf "%-22s rc=%d (%s), whole command %.2f s\n", n, rc, rc == w ? "as it should" : "NOT AS IT SHOULD", b - a }' |
    tee -a "$sum" >> "$fl"
  echo >> "$fl"
}
failure fault 1 --kernel-file "$work/faulty.cu" --size 512
failure fault_then_good 0 --kernel-file "$ex/tiled_classic.cu" --size 512
failure hang_limit_2s 1 --kernel-file "$work/spins.cu" --size 256 --hang-limit 2
failure hang_then_good 0 --kernel-file "$ex/tiled_classic.cu" --size 512
failure untouched_c 1 --kernel-file "$work/lazy.cu" --size 512
failure refused_tile_64 2 --kernel-file "$ex/tiled_classic.cu" --size 512 --tile 64
failure refused_smem 2 --kernel-file "$ex/tiled_classic.cu" --size 512 --smem 1000000
grep -hE 'noticed .* after the request|did not finish|left untouched|threads, but|allows at most' "$fl" | sed 's/^/  /' |
  tee -a "$sum" > /dev/null

grep -cE '^\[       OK \]' "$out/gpu_tests.log" | sed 's/^/GPU tests OK: /' | tee -a "$sum"
grep -E '^\[  FAILED  \]' "$out/gpu_tests.log" | sort -u | tee -a "$sum"
rm -rf "$cache" "$work"
ls -l "$out" >> "$sum"

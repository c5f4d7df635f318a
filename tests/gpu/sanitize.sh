#!/usr/bin/env bash
# compute-sanitizer on a GPU machine: memcheck, racecheck, synccheck and initcheck must be clean for every
# kernel that is not a teaching variant (TOOLS="memcheck racecheck" for the two that matter most, faster),
# and racecheck must report the race of tiled_nosync (proof that the check can fail).
# Usage: tests/gpu/sanitize.sh path/to/tilescope [LOG]   Exit status: 0 when all of that holds.
set -uo pipefail
ts=${1:?path to tilescope}
log=${2:-sanitize.log}
: > "$log"
status=0
# Ragged for every tile size, more than one k-tile everywhere; the second keeps rows 16-byte aligned (K and N
# multiples of 4), the only case in which wgmma_tf32 loads through TMA.
shapes=("--m 130 --n 141 --k 70" "--m 130 --n 140 --k 68")

configs=$("$ts" list --json | python3 -c '
import json, sys
for k in json.load(sys.stdin)["kernels"]:
    if not k["cuda"]: continue
    for t in (k["tiles"] or [0]):
        print(k["name"], t, "teaching" if k["teaching"] else "normal")')

# Every tool on one run ("run" arguments): clean or DIRTY, the whole output in the log.
check() {
  local tool out
  for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
    out=$(compute-sanitizer --tool $tool "$ts" run --backend cuda "$@" --samples 1 2>&1)
    echo "== $tool $*" >> "$log"; echo "$out" >> "$log"
    if echo "$out" | grep -q "ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards"; then
      echo "clean    $tool $*"
    else
      echo "DIRTY    $tool $*"; status=1
    fi
  done
}

while read -r kernel tile kind; do
  [ "$kind" = teaching ] && continue
  targs="--kernel $kernel"; [ "$tile" != 0 ] && targs="$targs --tile $tile"
  for shape in "${shapes[@]}"; do
    check $targs $shape
  done
done <<< "$configs"

# Paths that only grids smaller than the GPU take, which the shapes above are too small to reach: wgmma_tf32
# tiles 128, 256 and 512 with K in slices (a cooperative launch, of clusters for 512; rows TMA reads in place, then
# rows copied first) and stream-K's units that wait for each other (every unit one piece of one tile). And
# wgmma_tf32 256's tail, which only grids of whole waves and a partial one take (2600 x 1700: 9 rows of tiles
# whole on the side stream, 2 rows in 4 slices of K beside them, on 132 SMs).
while read -r targs; do
  kernel=$(echo "$targs" | awk '{print $2}')
  echo "$configs" | grep -q "^$kernel " || continue  # not on this GPU (wgmma_tf32: compute capability 9.0)
  check $targs
done <<'EOF_SMALL'
--kernel wgmma_tf32 --tile 128 --m 256 --n 256 --k 512
--kernel wgmma_tf32 --tile 128 --m 257 --n 257 --k 511
--kernel wgmma_tf32 --tile 256 --m 256 --n 256 --k 512
--kernel wgmma_tf32 --tile 256 --m 257 --n 257 --k 511
--kernel wgmma_tf32 --tile 512 --m 256 --n 256 --k 512
--kernel wgmma_tf32 --tile 512 --m 257 --n 257 --k 511
--kernel streamk --tile 256 --size 257
--kernel wgmma_tf32 --tile 256 --m 2600 --n 1700 --k 700
--kernel wgmma_tf32 --tile 256 --m 2599 --n 1699 --k 701
EOF_SMALL

# The teaching variant without the second __syncthreads() must be caught.
for tile in 8 16 32; do
  out=$(compute-sanitizer --tool racecheck "$ts" run --backend cuda --kernel tiled_nosync --tile $tile --size 96 \
        --samples 1 2>&1)
  echo "== racecheck tiled_nosync $tile" >> "$log"; echo "$out" >> "$log"
  summary=$(echo "$out" | grep "RACECHECK SUMMARY" | tail -1)
  if echo "$summary" | grep -qE "RACECHECK SUMMARY: [1-9][0-9]* hazard"; then
    echo "caught   racecheck tiled_nosync --tile $tile: $summary"
  else
    echo "MISSED   racecheck tiled_nosync --tile $tile: ${summary:-no summary}"; status=1
  fi
done
exit $status

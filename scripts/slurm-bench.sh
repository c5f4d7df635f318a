#!/usr/bin/env bash
# One large `tilescope bench` sweep spread over N GPUs by a Slurm job array, then joined by `tilescope merge`
# into the table one run prints.
#
#   scripts/slurm-bench.sh N OUT_DIR [bench options...]
#   scripts/slurm-bench.sh 4 results/h100 --kernels all --sizes 256:8192:256
#
# Submits a job array of N tasks, one GPU each (--array=1-N: the task ids are the shard numbers, from 1), task
# I running `tilescope bench [bench options] --shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT"` with its
# table in OUT_DIR/part-I.md, its session in OUT_DIR/part-I.json and its progress in OUT_DIR/part-I.log; and a
# job that runs once the whole array has ended and merges the parts: OUT_DIR/bench.md, bench.csv and
# bench.json (the table) and OUT_DIR/session.json (every point), its messages in OUT_DIR/merge.log. When a
# task failed or ran out of time, merge refuses and names the shard that is missing or incomplete: run that
# shard again (`sbatch --array=I ...`, or `tilescope bench ... --shard I/N` by hand) and merge the parts again
# with `scripts/slurm-bench.sh --merge OUT_DIR N`, or add --partial there to keep the points there are.
#
# Environment: SBATCH_OPTIONS, sbatch options of your site for both jobs (e.g. "--partition=gpu
# --account=proj --time=04:00:00"); TILESCOPE, the binary (default: tilescope on PATH; give an absolute path,
# the jobs may start in another folder).
set -euo pipefail
tilescope=${TILESCOPE:-tilescope}

usage() {
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# [SECTION] Inside the job array: one shard.
if [ "${1:-}" = "--task" ]; then
  out=$2
  shift 2
  if [ -z "${SLURM_ARRAY_TASK_ID:-}" ] || [ -z "${SLURM_ARRAY_TASK_COUNT:-}" ]; then
    echo "slurm-bench: --task runs inside a Slurm job array (SLURM_ARRAY_TASK_ID is not set)" >&2
    exit 2
  fi
  i=$SLURM_ARRAY_TASK_ID
  exec "$tilescope" bench "$@" --shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" \
    --out "$out/part-$i.md" --session-out "$out/part-$i.json"
fi

# [SECTION] After the array: the parts there are, merged (merge names the shards that are missing).
if [ "${1:-}" = "--merge" ]; then
  [ $# -ge 3 ] || usage
  out=$2
  n=$3
  shift 3
  parts=()
  for ((i = 1; i <= n; i++)); do
    [ -e "$out/part-$i.json" ] && parts+=("$out/part-$i.json")
  done
  if [ ${#parts[@]} -eq 0 ]; then
    echo "slurm-bench: no part in $out (part-1.json ... part-$n.json): did the array's tasks run?" >&2
    exit 2
  fi
  "$tilescope" merge "${parts[@]}" "$@" --out "$out/bench.md" --session-out "$out/session.json"
  "$tilescope" merge "${parts[@]}" "$@" --format csv --out "$out/bench.csv"
  "$tilescope" merge "${parts[@]}" "$@" --format json --out "$out/bench.json"
  exit 0
fi

# [SECTION] On the login node: submit the array and the merge after it.
[ $# -ge 2 ] || usage
n=$1
out=$2
shift 2
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 4096 ]; then
  echo "slurm-bench: N = '$n' is not a number of shards from 1 to 4096" >&2
  exit 2
fi
for f in "$out"/part-*.json "$out"/bench.md "$out"/session.json; do
  if [ -e "$f" ]; then
    echo "slurm-bench: $out already holds results ($f): give another OUT_DIR" >&2
    exit 2
  fi
done
mkdir -p "$out"
script=$(realpath "$0")
# shellcheck disable=SC2086 # SBATCH_OPTIONS is a list of options
array=$(sbatch --parsable ${SBATCH_OPTIONS:-} --job-name=tilescope-bench --array="1-$n" --gres=gpu:1 \
  --output="$out/part-%a.log" "$script" --task "$out" "$@")
array=${array%%;*} # --parsable: "id" or "id;cluster"
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_OPTIONS:-} --job-name=tilescope-merge --dependency="afterany:$array" \
  --output="$out/merge.log" "$script" --merge "$out" "$n")
merge=${merge%%;*}
echo "slurm-bench: job array $array (shards 1-$n of the sweep), then job $merge merges them into $out/bench.md"

#!/usr/bin/env bash
# Runs a command under its own virtual X server (Xvfb, 1920x1200x24). Xvfb picks a free display number itself
# (-displayfd), so tests that CTest runs in parallel never race for one the way `xvfb-run -a` can.
# Usage: tests/xvfb_run.sh COMMAND [ARGS...]   Exit status: the command's (1 when Xvfb cannot start).
set -uo pipefail
dir=$(mktemp -d "${TMPDIR:-/tmp}/tilescope-xvfb.XXXXXX")
Xvfb -displayfd 3 -screen 0 1920x1200x24 -nolisten tcp 3>"$dir/display" 2>"$dir/log" &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 200); do
  [ -s "$dir/display" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "xvfb_run.sh: Xvfb did not start:" >&2
    cat "$dir/log" >&2
    exit 1
  fi
  sleep 0.05
done
if [ ! -s "$dir/display" ]; then
  echo "xvfb_run.sh: Xvfb gave no display number in 10 s" >&2
  exit 1
fi
DISPLAY=":$(head -n1 "$dir/display")" "$@"

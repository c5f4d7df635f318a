#!/usr/bin/env bash
# Usage: two_windows.sh TILESCOPE DATA_HOME CONFIG_A CONFIG_B together|a-then-b
# Two TileScope windows (CPU backend, --log) on one data folder (XDG_DATA_HOME), each with a config folder of
# its own. Waits until each has measured its first point (its "point:" line), then closes them with SIGTERM:
# "a-then-b" closes A, waits for it, then closes B; "together" closes both at once. Prints each window's exit
# code ("a=N", "b=N") and then their logs, each line prefixed with "A| " or "B| ". A window that measured no
# point within 60 s or did not close within 20 s says so.
bin=$1 data=$2 config_a=$3 config_b=$4 order=$5
logs=$(mktemp -d)
XDG_DATA_HOME="$data" XDG_CONFIG_HOME="$config_a" "$bin" --backend cpu --log 2>"$logs/a" &
a=$!
XDG_DATA_HOME="$data" XDG_CONFIG_HOME="$config_b" "$bin" --backend cpu --log 2>"$logs/b" &
b=$!
for i in $(seq 600); do
  grep -q '^point:' "$logs/a" && grep -q '^point:' "$logs/b" && break
  sleep 0.1
done
grep -q '^point:' "$logs/a" || echo "window A measured no point within 60 s"
grep -q '^point:' "$logs/b" || echo "window B measured no point within 60 s"
close() {
  for i in $(seq 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$1" 2>/dev/null; then kill -KILL "$1"; echo "a window was still running 20 s after SIGTERM"; fi
  wait "$1"
}
if [ "$order" = together ]; then
  kill -TERM "$a" "$b"
  close "$a"; echo "a=$?"
  close "$b"; echo "b=$?"
else
  kill -TERM "$a"
  close "$a"; echo "a=$?"
  kill -TERM "$b"
  close "$b"; echo "b=$?"
fi
sed 's/^/A| /' "$logs/a"
sed 's/^/B| /' "$logs/b"
rm -rf "$logs"

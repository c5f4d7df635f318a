#!/usr/bin/env bash
# Usage: ctrl_c_while_compiling.sh TILESCOPE ARGS...
# Starts `TILESCOPE ARGS...` in a process group of its own (as a shell starts a foreground command), waits for
# its compiler process (`tilescope compiler --fd 3 --parent PID`), then sends SIGINT to the whole group, as a
# terminal's Ctrl+C does. Prints the compiler's pid ("compiler=none" when none came within 60 s), the
# command's exit code ("exit=N"; 128 + N for a signal N), "still running ..." when it did not end within 20 s,
# and "the compiler outlived ..." when its compiler was still there 5 s after it ended.
# Job control: the command gets a process group of its own, and SIGINT at its default (a shell without job
# control starts a background command with SIGINT ignored).
set -m
"$@" &
pid=$!
compiler=
for i in $(seq 600); do
  for p in /proc/[0-9]*; do
    tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q -- "compiler --fd 3 --parent $pid " && compiler=${p#/proc/}
  done
  [ -n "$compiler" ] && break
  sleep 0.1
done
echo "compiler=${compiler:-none}"
kill -INT -- "-$pid"
for i in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then kill -KILL -- "-$pid"; echo "still running 20 s after Ctrl+C"; fi
wait "$pid"
echo "exit=$?"
for i in $(seq 50); do [ -n "$compiler" ] && kill -0 "$compiler" 2>/dev/null || break; sleep 0.1; done
if [ -n "$compiler" ] && kill -0 "$compiler" 2>/dev/null; then
  echo "the compiler outlived the command"
  kill -KILL "$compiler"
fi

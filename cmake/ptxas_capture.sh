#!/bin/sh
# Compiler launcher for the kernels (CUDA_COMPILER_LAUNCHER): runs the compile command it is given (ccache
# included, which replays ptxas's output on a cache hit), writes ptxas's resource lines (-Xptxas -v: registers,
# shared memory, spills per kernel and architecture) to <object>.ptxas for the build-time occupancy table
# (kernels/engine/resource_gen.cpp), and passes every other line of output through.
obj=""
prev=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then obj="$a"; fi
  prev="$a"
done
log=$(mktemp "${TMPDIR:-/tmp}/tilescope-ptxas.XXXXXX") || exit 1
"$@" >"$log" 2>&1
rc=$?
grep -v -e '^ptxas info' -e '^    [0-9]* bytes stack frame' "$log" >&2
if [ $rc -eq 0 ] && [ -n "$obj" ]; then
  grep -e '^ptxas info' -e '^    [0-9]* bytes stack frame' "$log" >"$obj.ptxas.tmp" && mv "$obj.ptxas.tmp" "$obj.ptxas" ||
    { rm -f "$obj.ptxas.tmp"; : >"$obj.ptxas"; }
fi
rm -f "$log"
exit $rc

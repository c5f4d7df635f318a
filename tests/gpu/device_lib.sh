# Shared by the tests/gpu/*_device.sh scripts (sourced, not run).
# step NAME COMMAND...: runs the command, timed; its exit status and seconds go to stdout and to "$sum" (the
# calling script's summary file). Returns the command's exit status.
step() {
  local name=$1; shift
  local t0 t1 rc
  t0=$(date +%s.%N)
  "$@"; rc=$?
  t1=$(date +%s.%N)
  awk -v n="$name" -v rc="$rc" -v a="$t0" -v b="$t1" 'BEGIN { printf "%-28s rc=%d  %.1f s\n", n, rc, b - a }' |
    tee -a "$sum"
  return $rc
}

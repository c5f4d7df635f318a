#!/usr/bin/env bash
# Formats every tracked C++/CUDA source with the pinned clang-format (Debian 12's clang-format-14), or, with
# --check, lists the files that differ and exits 1. CTest runs the check (tests/CMakeLists.txt: format.check).
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || true)
if [ -z "$cf" ]; then
  echo "format: clang-format-14 is missing (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "format: SKIP (not a git checkout: no list of tracked files)"
  exit 77
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.cc')
if [ "${1:-}" = "--check" ]; then
  # One clang-format for every file first (a process per file took 17 s of CI for 380 files); only when that
  # finds a difference, a process per file to name them.
  if "$cf" --dry-run -Werror "${files[@]}" >/dev/null 2>&1; then
    echo "format: ${#files[@]} files match .clang-format ($("$cf" --version))"
    exit 0
  fi
  bad=()
  why=""
  for f in "${files[@]}"; do
    if ! out=$("$cf" --dry-run -Werror "$f" 2>&1); then
      bad+=("$f")
      # The first lines of clang-format's own words: a real difference, or why it could not check the file.
      [ ${#bad[@]} -le 3 ] && why+="$(printf '%s\n' "$out" | head -n 4)"$'\n'
    fi
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: ${#bad[@]} file(s) differ from .clang-format (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    printf '%s' "$why" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format ($("$cf" --version))"
else
  "$cf" -i "${files[@]}"
fi

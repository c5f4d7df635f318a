#!/usr/bin/env bash
# Fuzzes the .npy reader (libFuzzer + ASan + UBSan, tests/fuzz) for SECONDS (default 600), starting from the
# generated corpus (tests/npy/make_corpus.py) and a dictionary of the header's tokens. Builds build-asan/ with
# clang-14 when the target is missing. A finding (crash, sanitizer report, an exception other than the
# reader's refusal, a timeout) stops it with a nonzero exit status and leaves the input in
# build-asan/fuzz-findings/. Then the session reader (tests/fuzz/fuzz_session.cpp) for as long, from two valid
# sessions the target writes itself and a dictionary of a session's keys, under a 1 GiB RSS limit (reading a
# session holds bounded memory). Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
target=build-asan/tests/fuzz/tilescope_fuzz_npy
if [ ! -x "$target" ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 -DTILESCOPE_CUDA=OFF -DTILESCOPE_SANITIZE=address,undefined -DTILESCOPE_FUZZ=ON
fi
cmake --build build-asan --target tilescope_fuzz_npy
work=build-asan/fuzz-corpus
mkdir -p "$work" build-asan/fuzz-findings
cp build-asan/tests/unit/npy_corpus/*.npy "$work/"
export ASAN_OPTIONS=detect_leaks=1
"$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=40000 -print_final_stats=1 \
  -dict=tests/fuzz/npy.dict -artifact_prefix=build-asan/fuzz-findings/ "$work"

# The session reader (issue 26).
cmake --build build-asan --target tilescope_fuzz_session
work=build-asan/fuzz-corpus-session
mkdir -p "$work"
TILESCOPE_FUZZ_SEEDS="$work" build-asan/tests/fuzz/tilescope_fuzz_session -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
  -max_len=200000 -print_final_stats=1 -dict=tests/fuzz/session.dict -artifact_prefix=build-asan/fuzz-findings/ \
  "$work"

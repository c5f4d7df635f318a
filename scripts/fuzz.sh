#!/usr/bin/env bash
# Fuzzes every libFuzzer target (tests/fuzz; libFuzzer + ASan + UBSan) within one time budget of SECONDS
# (default 600), split evenly between them, so that adding a target adds no time:
#   - tilescope_fuzz_npy: the .npy reader, from the generated corpus (tests/npy/make_corpus.py) and a
#     dictionary of the header's tokens;
#   - tilescope_fuzz_kernel_source: the kernel scanner, the .py (KernelBench) extraction and the #include
#     finder, from the example kernels and a dictionary of the tokens they look for;
#   - tilescope_fuzz_session: the session reader, from two valid sessions the target writes itself and a
#     dictionary of a session's keys, under a 1 GiB RSS limit (reading a session holds bounded memory);
#   - tilescope_fuzz_worker_protocol: the frames and messages between TileScope and its worker and compiler
#     processes, and the compute-sanitizer job file, from every message the target writes itself;
#   - tilescope_fuzz_launch_expr: the launch formulas and the launch they give, from the example rules the
#     target writes itself;
#   - tilescope_fuzz_engine_protocol: the remote engine's frames and messages (tilescope serve), from every
#     message the target writes itself.
# Builds build-asan/ with clang-14 when a target is missing. A finding (crash, sanitizer report, an exception
# other than the reader's refusal, an input slower than the -timeout below, work beyond the scanner's linear
# bound) stops it with a nonzero exit status and leaves the input in build-asan/fuzz-findings/.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
targets=(tilescope_fuzz_npy tilescope_fuzz_kernel_source tilescope_fuzz_session tilescope_fuzz_worker_protocol
  tilescope_fuzz_launch_expr tilescope_fuzz_engine_protocol)
missing=0
for t in "${targets[@]}"; do [ -x "build-asan/tests/fuzz/$t" ] || missing=1; done
if [ "$missing" = 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 -DTILESCOPE_CUDA=OFF -DTILESCOPE_SANITIZE=address,undefined -DTILESCOPE_FUZZ=ON
fi
cmake --build build-asan --target "${targets[@]}"
share=$((seconds / ${#targets[@]}))
[ "$share" -ge 1 ] || share=1
mkdir -p build-asan/fuzz-findings
export ASAN_OPTIONS=detect_leaks=1

npy_corpus=build-asan/fuzz-corpus
mkdir -p "$npy_corpus"
cp build-asan/tests/unit/npy_corpus/*.npy "$npy_corpus/"
build-asan/tests/fuzz/tilescope_fuzz_npy -max_total_time="$share" -timeout=10 -rss_limit_mb=2048 -max_len=40000 \
  -print_final_stats=1 -dict=tests/fuzz/npy.dict -artifact_prefix=build-asan/fuzz-findings/npy- "$npy_corpus"

# Seeds: each example kernel as a .cu (first byte even) and wrapped in a KernelBench answer (first byte odd).
src_corpus=build-asan/fuzz-corpus-kernel-source
mkdir -p "$src_corpus"
for f in examples/kernels/*.cu; do
  name=$(basename "$f" .cu)
  { printf '\x00'; cat "$f"; } >"$src_corpus/$name.cu"
  { printf '\x01'; printf 'src = r"""\n'; cat "$f"; printf '"""\nmod = load_inline(name="x", cpp_sources="", cuda_sources=src)\n'; } \
    >"$src_corpus/$name.py"
done
# -timeout: the scanner's work is linear, so a few MB take well under a second even under ASan; 5 s is a hang.
build-asan/tests/fuzz/tilescope_fuzz_kernel_source -max_total_time="$share" -timeout=5 -rss_limit_mb=2048 \
  -max_len=200000 -print_final_stats=1 -dict=tests/fuzz/kernel_source.dict \
  -artifact_prefix=build-asan/fuzz-findings/kernel-source- "$src_corpus"

session_corpus=build-asan/fuzz-corpus-session
mkdir -p "$session_corpus"
TILESCOPE_FUZZ_SEEDS="$session_corpus" build-asan/tests/fuzz/tilescope_fuzz_session -max_total_time="$share" \
  -timeout=10 -rss_limit_mb=1024 -max_len=200000 -print_final_stats=1 -dict=tests/fuzz/session.dict \
  -artifact_prefix=build-asan/fuzz-findings/session- "$session_corpus"

protocol_corpus=build-asan/fuzz-corpus-worker-protocol
mkdir -p "$protocol_corpus"
TILESCOPE_FUZZ_SEEDS="$protocol_corpus" build-asan/tests/fuzz/tilescope_fuzz_worker_protocol \
  -max_total_time="$share" -timeout=10 -rss_limit_mb=2048 -max_len=100000 -print_final_stats=1 \
  -artifact_prefix=build-asan/fuzz-findings/worker-protocol- "$protocol_corpus"

expr_corpus=build-asan/fuzz-corpus-launch-expr
mkdir -p "$expr_corpus"
# -timeout: a formula is at most 256 characters and 24 levels deep; a second is a hang.
TILESCOPE_FUZZ_SEEDS="$expr_corpus" build-asan/tests/fuzz/tilescope_fuzz_launch_expr -max_total_time="$share" \
  -timeout=5 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 -dict=tests/fuzz/launch_expr.dict \
  -artifact_prefix=build-asan/fuzz-findings/launch-expr- "$expr_corpus"

engine_corpus=build-asan/fuzz-corpus-engine-protocol
mkdir -p "$engine_corpus"
TILESCOPE_FUZZ_SEEDS="$engine_corpus" build-asan/tests/fuzz/tilescope_fuzz_engine_protocol \
  -max_total_time="$share" -timeout=10 -rss_limit_mb=2048 -max_len=100000 -print_final_stats=1 \
  -artifact_prefix=build-asan/fuzz-findings/engine-protocol- "$engine_corpus"

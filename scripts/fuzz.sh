#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS
# (default 600), merging new coverage into fuzz/corpus/<target>/.
#   scripts/fuzz.sh [SECONDS]         (FUZZ_TARGETS="requests" picks targets)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-600}"
command -v clang++ >/dev/null || { echo "fuzz: clang++ is required (apt install clang libclang-rt-14-dev)" >&2; exit 2; }
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DSPEAKERMEM_FUZZ=ON \
  -DSPEAKERMEM_BUILD_TESTS=OFF -DSPEAKERMEM_BUILD_BENCH=OFF >/dev/null
targets="${FUZZ_TARGETS:-writer_output ingest_validation requests}"
cmake --build build-fuzz -j 2 --target $(for t in $targets; do printf '%s_fuzzer ' "$t"; done)
mkdir -p build-fuzz/findings
for t in $targets; do
  work="build-fuzz/corpus-$t"
  rm -rf "$work" && mkdir -p "$work"
  echo "fuzz: $t for ${SECONDS_PER_TARGET}s" >&2
  "build-fuzz/fuzz/${t}_fuzzer" "$work" "fuzz/corpus/$t" -max_total_time="$SECONDS_PER_TARGET" \
    -artifact_prefix="build-fuzz/findings/$t-" -print_final_stats=1 -max_len=8192 \
    2>&1 | tee "build-fuzz/$t.log" | grep -E "^#[0-9]+ *(INITED|DONE)|stat::|ERROR|Done" || true
  # Keep only inputs that add coverage.
  "build-fuzz/fuzz/${t}_fuzzer" -merge=1 "fuzz/corpus/$t" "$work" >/dev/null 2>&1 || true
done
ls build-fuzz/findings

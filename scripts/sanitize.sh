#!/usr/bin/env bash
# Builds the project with a sanitizer and runs the test suite under it.
#   scripts/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer
#   scripts/sanitize.sh tsan   # ThreadSanitizer
# Build trees: build-asan/, build-tsan/. Extra arguments go to ctest (e.g.
# -R pattern). The system libraries (gRPC, RocksDB, FAISS) are not
# instrumented: ASan/UBSan findings in our code are reported; TSan sees our
# synchronisation but not theirs, so races inside them are not claimed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kind="${1:-asan}"
shift || true
case "$kind" in
  asan) flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" ;;
  tsan) flags="-fsanitize=thread -fno-omit-frame-pointer" ;;
  *) echo "usage: scripts/sanitize.sh asan|tsan [ctest args]" >&2; exit 2 ;;
esac
build="$root/build-$kind"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
    -DSPEAKERMEM_BUILD_BENCH=OFF
fi
cmake --build "$build" -j "${JOBS:-2}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1"
cd "$build"
ctest --output-on-failure -j "${JOBS:-2}" "$@"

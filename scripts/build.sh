#!/usr/bin/env bash
# Configures (once) and builds everything into build/ with Ninja on 2 jobs,
# through ccache. Environment:
#   BUILD_DIR   build tree (default build/)
#   BUILD_TYPE  CMake build type (default RelWithDebInfo)
#   JOBS        parallel jobs (default 2)
#   SHIPPED_ONLY=1  only the shipped binaries (speakermemd, speakermem): no
#               tests, benchmarks or fuzzers configured (the image build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
cmake_args=()
targets=()
if [ "${SHIPPED_ONLY:-0}" = 1 ]; then
  cmake_args=(-DSPEAKERMEM_BUILD_TESTS=OFF -DSPEAKERMEM_BUILD_BENCH=OFF)
  targets=(--target speakermemd speakermem)
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
    "${cmake_args[@]}"
fi
cmake --build "$build" -j "${JOBS:-2}" "${targets[@]}"

#!/usr/bin/env bash
# Configures (once) and builds everything into build/ with Ninja on 2 jobs,
# through ccache. BUILD_DIR and BUILD_TYPE override the defaults.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}"
fi
cmake --build "$build" -j "${JOBS:-2}"

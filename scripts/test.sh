#!/usr/bin/env bash
# The README's second command: install dependencies, build, run every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/deploy/install-deps.sh"
"$root/scripts/build.sh"
cd "${BUILD_DIR:-$root/build}"
ctest --output-on-failure -j 2 --timeout 600

#!/usr/bin/env bash
# The README's second command: install dependencies, build, run every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/deploy/install-deps.sh"
"$root/scripts/build.sh"
# The Node client's pinned dependencies (client/node/package-lock.json).
echo "test: npm ci in client/node" >&2
(cd "$root/client/node" && npm ci --no-audit --no-fund --loglevel=error)
cd "${BUILD_DIR:-$root/build}"
ctest --output-on-failure -j 2 --timeout 600

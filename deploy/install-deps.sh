#!/usr/bin/env bash
# Installs every Debian 12 package the build, the tests and the demo need.
# Idempotent: does nothing when they are all present. Uses sudo when not root.
#   deploy/install-deps.sh               everything (build, tests, demo, image check)
#   deploy/install-deps.sh --build-only  what building speakermemd and the CLI needs
#                                        (the Dockerfile's build stage)
set -euo pipefail

# Building the shipped binaries.
BUILD_PACKAGES=(
  g++ cmake ninja-build pkg-config ccache
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  librocksdb-dev libfaiss-dev libopenblas-dev libcurl4-openssl-dev
  nlohmann-json3-dev prometheus-cpp-dev libutf8proc-dev libstemmer-dev libssl-dev
  libgoogle-perftools-dev
)
# The tests, benchmarks and demo, and the tools they run: nginx, Prometheus,
# docker-compose (config validation), podman and debootstrap (the image check).
TEST_PACKAGES=(
  catch2 curl ca-certificates gnuplot-nox openssl clang-format
  nginx-light prometheus docker-compose python3-grpcio python3-protobuf python3-yaml
  podman debootstrap
)
case "${1:-}" in
  --build-only) PACKAGES=("${BUILD_PACKAGES[@]}") ;;
  "") PACKAGES=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  *) echo "usage: $0 [--build-only]" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# The Node client's tests need node and npm (any recent ones: a machine may
# have them from elsewhere, e.g. NodeSource; Debian's otherwise).
if [ -z "${1:-}" ] && ! { command -v node && command -v npm; } >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}" >&2
# nginx and prometheus are tools the tests run on their own ports: keep
# their packages from starting system services while installing.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod +x "$policy"
  own_policy=1
fi
cleanup() { if [ "$own_policy" = 1 ]; then $SUDO rm -f "$policy"; fi; }
trap cleanup EXIT
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

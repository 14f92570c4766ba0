#!/usr/bin/env bash
# Proves the README's two commands on a pristine Debian 12: makes a minimal
# root with debootstrap, clones this repository into it (with ../shared
# beside it, as CI has), and runs `./scripts/demo.sh` then `./scripts/test.sh`
# inside it with chroot. Needs root and Debian's package mirror.
#   deploy/debootstrap-check.sh [ROOT_DIR]     (default /tmp/speakermem-pristine)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
root="${1:-/tmp/speakermem-pristine}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
start=$(date +%s)
if [ ! -x "$root/bin/bash" ]; then
  debootstrap --variant=minbase bookworm "$root" "$mirror"
fi
t_boot=$(( $(date +%s) - start ))
# sudo-less root inside; git to clone; the scripts install everything else.
cleanup() {
  umount -l "$root/proc" "$root/sys" "$root/dev/pts" "$root/dev" 2>/dev/null || true
}
trap cleanup EXIT
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp /etc/resolv.conf "$root/etc/resolv.conf"
chroot "$root" /bin/bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git ca-certificates >/dev/null"
rm -rf "$root/work" && mkdir -p "$root/work"
git clone -q "$repo" "$root/work/main"
if [ -d "$repo/../shared" ]; then cp -r "$repo/../shared" "$root/work/shared"; fi
t0=$(date +%s)
chroot "$root" /bin/bash -c "cd /work/main && ./scripts/demo.sh" > "$root/work/demo.log" 2>&1
t_demo=$(( $(date +%s) - t0 ))
t0=$(date +%s)
chroot "$root" /bin/bash -c "cd /work/main && CI=true ./scripts/test.sh" > "$root/work/test.log" 2>&1
t_test=$(( $(date +%s) - t0 ))
echo "debootstrap: ${t_boot}s; README command 1 (demo, incl. deps and build): ${t_demo}s; README command 2 (tests): ${t_test}s"
grep -E "tests passed|tests failed" "$root/work/test.log"

#!/usr/bin/env bash
# Builds the Dockerfile and proves the image serves, without a Docker engine:
#   1. a debian:12 base made with debootstrap (minbase) and `podman import`
#      (tagged debian:12 and debian:12-slim: no registry is reached);
#   2. `podman build --isolation=chroot` of the Dockerfile, apt downloads and
#      ccache in mounted cache folders;
#   3. the runtime image exported to a folder and speakermemd started from it
#      with chroot, as the image's user, with the image's environment;
#   4. checks: every shared library of the binaries resolves inside the image,
#      gRPC health is SERVING, an ingest, a Writer flush, a query with an
#      answer, and /metrics counting the ingest.
# Prints each step's duration. Needs root, podman and debootstrap
# (deploy/install-deps.sh installs them) and Debian's package mirror.
#   deploy/image-check.sh
# Environment: SPEAKERMEM_IMAGE_CACHE (default ~/.cache/speakermem-image: the
# base tarball, apt downloads, ccache; podman keeps the layers itself),
# DEBIAN_MIRROR, JOBS (compile jobs in the build stage, default 2),
# IMAGE_TAG (default localhost/speakermem:check).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${SPEAKERMEM_IMAGE_CACHE:-$HOME/.cache/speakermem-image}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
tag="${IMAGE_TAG:-localhost/speakermem:check}"

fail() {
  echo "image-check: FAIL: $*" >&2
  exit 1
}
for tool in podman debootstrap chroot curl; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (deploy/install-deps.sh installs it)"
done
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, podman build, chroot)"

step_start=0
step() {
  step_start=$(date +%s)
  echo "== image-check: $*"
}
done_step() { echo "   done in $(($(date +%s) - step_start)) s"; }
total_start=$(date +%s)

work="$(mktemp -d /tmp/speakermem-image-check.XXXXXX)"
rootfs="$work/rootfs"
container=""
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  for m in "$rootfs/dev" "$rootfs/proc"; do
    if mountpoint -q "$m" 2>/dev/null; then umount -l "$m" || true; fi
  done
  if [ -n "$container" ]; then podman rm -f "$container" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$cache/apt/partial" "$cache/ccache"

# 1. The base image.
step "base image debian:12 (debootstrap minbase, cached as a tarball)"
base_tar="$cache/debian-12-minbase.tar"
if [ ! -s "$base_tar" ]; then
  debootstrap --variant=minbase bookworm "$work/base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; fail "debootstrap"; }
  # The mirror the build stages' apt uses.
  echo "deb $mirror bookworm main" >"$work/base/etc/apt/sources.list"
  echo "deb $mirror bookworm-updates main" >>"$work/base/etc/apt/sources.list"
  echo "deb http://deb.debian.org/debian-security bookworm-security main" \
    >>"$work/base/etc/apt/sources.list"
  rm -rf "$work/base/var/cache/apt/archives/"*.deb "$work/base/var/lib/apt/lists/"*
  tar -C "$work/base" -cf "$base_tar.tmp" . && mv "$base_tar.tmp" "$base_tar"
  rm -rf "$work/base"
fi
base_id=$(sha256sum "$base_tar" | cut -c1-16)
if [ "$(podman image inspect --format '{{index .Labels "base_id"}}' docker.io/library/debian:12 \
  2>/dev/null)" != "$base_id" ]; then
  podman import --change "LABEL base_id=$base_id" --change 'CMD ["/bin/bash"]' "$base_tar" \
    docker.io/library/debian:12 >/dev/null
fi
podman tag docker.io/library/debian:12 docker.io/library/debian:12-slim
done_step

# 2. The Dockerfile.
step "podman build (chroot isolation; apt and ccache caches mounted)"
podman build --isolation=chroot --pull=never --layers \
  --build-arg JOBS="${JOBS:-2}" \
  -v "$cache/apt:/var/cache/apt/archives" -v "$cache/ccache:/root/.cache/ccache" \
  -t "$tag" -f "$repo/Dockerfile" "$repo" >"$work/build.log" 2>&1 ||
  { cp "$work/build.log" "$cache/last-build.log"; tail -40 "$work/build.log" >&2; fail "podman build"; }
cp "$work/build.log" "$cache/last-build.log"
# Each Dockerfile step, and which of them came from podman's layer cache.
awk '/STEP [0-9]/ {if (s != "") print "   " s (c ? "  (cached)" : ""); s = $0; c = 0}
     /Using cache/ {c = 1}
     END {if (s != "") print "   " s (c ? "  (cached)" : "")}' "$work/build.log"
size=$(podman image inspect --format '{{.Size}}' "$tag")
echo "   image $tag: $((size / 1000000)) MB"
done_step

# 3. The runtime filesystem, and what the image says to run it with.
step "export the runtime image"
container=$(podman create "$tag")
mkdir -p "$rootfs"
podman export "$container" | tar -C "$rootfs" -xf -
user=$(podman image inspect --format '{{.Config.User}}' "$tag")
mapfile -t image_env < <(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' \
  "$tag" | sed '/^$/d')
entrypoint=$(podman image inspect --format '{{index .Config.Entrypoint 0}}' "$tag")
[ -n "$user" ] || fail "the image sets no USER"
uid=$(chroot "$rootfs" id -u "$user") || fail "user $user does not exist in the image"
gid=$(chroot "$rootfs" id -g "$user")
[ "$uid" != 0 ] || fail "the image runs as root"
echo "   user $user ($uid:$gid), entrypoint $entrypoint, env: ${image_env[*]}"
done_step

step "shared libraries resolve inside the image"
for bin in "$entrypoint" /usr/local/bin/speakermem; do
  out=$(chroot "$rootfs" /usr/bin/ldd "$bin") || fail "ldd $bin"
  if grep -q "not found" <<<"$out"; then
    echo "$out" >&2
    fail "$bin: a shared library is missing from the image"
  fi
  echo "   $bin: $(grep -c '=>' <<<"$out") libraries, all found"
done
done_step

# 4. Serve from it.
step "start speakermemd from the image (chroot, uid $uid, the image's environment)"
mount -t proc proc "$rootfs/proc"
mount --bind /dev "$rootfs/dev"
in_image() {
  chroot --userspec="$uid:$gid" "$rootfs" /usr/bin/env -i HOME=/var/lib/speakermem \
    "${image_env[@]}" "$@"
}
run_dir=/var/lib/speakermem/check
in_image /bin/mkdir -p "$run_dir"
# The image's environment, with loopback ports chosen by the kernel (port 0).
# (chroot and env exec: the background pid is speakermemd's own.)
chroot --userspec="$uid:$gid" "$rootfs" /usr/bin/env -i HOME=/var/lib/speakermem "${image_env[@]}" \
  "$entrypoint" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
  --port-file "$run_dir/ports" >"$work/speakermemd.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do
  [ -s "$rootfs$run_dir/ports" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/speakermemd.log" >&2; fail "speakermemd exited"; }
  sleep 0.1
done
[ -s "$rootfs$run_dir/ports" ] || fail "speakermemd wrote no port file in 60 s"
read -r grpc_port metrics_port <"$rootfs$run_dir/ports"
addr="127.0.0.1:$grpc_port"
echo "   gRPC on $addr, metrics on 127.0.0.1:$metrics_port"
done_step

step "health, ingest, flush, query, /metrics"
in_image /usr/local/bin/grpc_health_probe.sh "$addr" >/dev/null ||
  fail "the image's health probe does not report SERVING"
echo "   health: SERVING (the image's HEALTHCHECK probe)"
cp "$repo/examples/team_chat.jsonl" "$rootfs$run_dir/team_chat.jsonl"
in_image /usr/local/bin/speakermem --addr "$addr" ingest "$run_dir/team_chat.jsonl" >"$work/ingest.log" 2>&1 ||
  { cat "$work/ingest.log" >&2; fail "ingest"; }
grep -q "25 stored" "$work/ingest.log" || { cat "$work/ingest.log" >&2; fail "ingest stored no 25 messages"; }
echo "   ingest: $(tail -1 "$work/ingest.log")"
in_image /usr/local/bin/speakermem --addr "$addr" flush --channel team-offsite --wait >/dev/null ||
  fail "flush"
answer=$(in_image /usr/local/bin/speakermem --addr "$addr" query --channel team-offsite \
  "Where is the offsite now?") || fail "query"
grep -q "Porto" <<<"$answer" || { echo "$answer" >&2; fail "the query's answer does not name Porto"; }
echo "   query: $(grep -m1 '^A:' <<<"$answer")"
metrics=$(curl -sf "http://127.0.0.1:$metrics_port/metrics") || fail "/metrics does not answer"
count=$(grep -E '^speakermem_ingested_messages_total' <<<"$metrics" | awk '{s += $NF} END {print s + 0}')
[ "$count" = 25 ] || fail "/metrics counts $count ingested messages, not 25"
echo "   /metrics: speakermem_ingested_messages_total $count"
kill -TERM "$server_pid"
wait "$server_pid" || fail "speakermemd did not exit cleanly on SIGTERM"
server_pid=""
echo "   SIGTERM: clean exit"
done_step
echo "image-check: PASS in $(($(date +%s) - total_start)) s"

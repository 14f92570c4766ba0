#!/bin/sh
# Regenerates speakermem/speakermem_pb2.py from the API contract.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/speakermem}"
tmp="$(mktemp -d)"
protoc -I "$here/../../proto" --python_out="$tmp" "$here/../../proto/speakermem/v1/speakermem.proto"
cp "$tmp/speakermem/v1/speakermem_pb2.py" "$out/speakermem_pb2.py"
rm -rf "$tmp"

#!/bin/sh
# Exit 0 when speakermemd at $1 (default 127.0.0.1:50151) reports SERVING on
# the gRPC health service; used by the Docker HEALTHCHECK and Kubernetes.
exec speakermem --addr "${1:-127.0.0.1:50151}" --timeout-ms 3000 health

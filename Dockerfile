# syntax=docker/dockerfile:1
# SpeakerMem: the build stage installs the build dependencies (their own
# layer: a code change does not reinstall them) and builds only the shipped
# binaries; the runtime stage carries those binaries and the Debian packages
# owning their shared libraries (FAISS and RocksDB are linked statically;
# RocksDB's compression libraries stay shared).
# Checked end to end by deploy/image-check.sh (podman, no Docker engine).

FROM debian:12 AS build
ARG JOBS=2
COPY deploy/install-deps.sh /src/deploy/install-deps.sh
RUN /src/deploy/install-deps.sh --build-only
WORKDIR /src
COPY . .
# The README's build script, limited to speakermemd and the CLI.
RUN SHIPPED_ONLY=1 BUILD_TYPE=Release JOBS="$JOBS" BUILD_DIR=/src/build-image ./scripts/build.sh \
    && strip build-image/server/speakermemd build-image/client/speakermem

FROM debian:12-slim AS runtime
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      libgrpc++1.51 libprotobuf32 libsnappy1v5 liblz4-1 libzstd1 libbz2-1.0 \
      libopenblas0-pthread libgomp1 \
      libcurl4 libutf8proc2 libprometheus-cpp-core1.0 libabsl20220623 libssl3 libtcmalloc-minimal4 \
      ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/speakermem --create-home speakermem
COPY --from=build /src/build-image/server/speakermemd /src/build-image/client/speakermem /usr/local/bin/
COPY deploy/grpc_health_probe.sh /usr/local/bin/grpc_health_probe.sh
USER speakermem
VOLUME ["/var/lib/speakermem"]
ENV SPEAKERMEM_STORE_DATA_DIR=/var/lib/speakermem/data \
    SPEAKERMEM_SERVER_LISTEN=0.0.0.0:50151 \
    SPEAKERMEM_SERVER_METRICS_LISTEN=0.0.0.0:9464
EXPOSE 50151 9464
# The gRPC health service (grpc.health.v1), through the CLI's health check.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/usr/local/bin/grpc_health_probe.sh", "127.0.0.1:50151"]
ENTRYPOINT ["/usr/local/bin/speakermemd"]

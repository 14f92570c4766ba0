# syntax=docker/dockerfile:1
# Runtime packages: the Debian packages owning speakermemd's shared libraries
# (FAISS is linked statically).
# SpeakerMem: build stage runs the README's install and build scripts; the
# runtime stage carries only the binaries and their runtime libraries.

FROM debian:12 AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The same scripts as the README's commands (dependencies, then build).
RUN ./deploy/install-deps.sh && BUILD_TYPE=Release ./scripts/build.sh \
    && strip build/server/speakermemd build/client/speakermem

FROM debian:12-slim AS runtime
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      libgrpc++1.51 libprotobuf32 librocksdb7.8 libopenblas0-pthread libgomp1 \
      libcurl4 libutf8proc2 libprometheus-cpp-core1.0 libabsl20220623 libssl3 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/speakermem --create-home speakermem
COPY --from=build /src/build/server/speakermemd /src/build/client/speakermem /usr/local/bin/
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

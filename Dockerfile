# The gangs server in a small image: `docker build -t gangs .`, then
# `docker run -p 50051:50051 -v gangs-data:/data gangs` (or `docker compose up`).
# Stage 1 builds the release binaries; stage 2 is a slim Debian with only them, run as a
# non-root user, the game log on the /data volume, healthy when the gRPC health service says
# SERVING (`gangs health`). .ci/docker-check builds it where a container engine runs and
# otherwise runs the runtime stage's commands against the binaries.

FROM rust:1-slim-bookworm AS build
# make: jemalloc (gangs-server's allocator) is built from its C sources; the slim image has the
# C compiler but not make.
RUN apt-get update && apt-get install -y --no-install-recommends make \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Cache mounts keep the registry and target between builds; the binaries are copied out in the
# same step because the target cache is not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin gangs-server --bin gangs \
    && mkdir -p /out \
    && cp target/release/gangs-server target/release/gangs /out/

FROM debian:bookworm-slim AS runtime
RUN useradd --system --uid 10001 --user-group --home-dir /data --no-create-home gangs \
    && mkdir -p /data && chown gangs:gangs /data
COPY --from=build /out/gangs-server /out/gangs /usr/local/bin/
USER gangs
VOLUME /data
ENV GANGS_LISTEN=0.0.0.0:50051 GANGS_DATA_DIR=/data GANGS_SERVER=http://127.0.0.1:50051 GANGS_LOG_FORMAT=json
EXPOSE 50051
# Each connection is an open file: the server raises its soft open-files limit to the hard one
# at start and says in its log when that is below what --max-connections needs. An image cannot
# set the limit; run it with `--ulimit nofile=65536:65536` (compose.yaml sets `ulimits`).
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 CMD ["gangs", "health"]
ENTRYPOINT ["gangs-server"]

# gangs-server image for deploy/cluster.compose.yaml: built from this repository.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p gangs-service --bin gangs-server

FROM debian:bookworm-slim
COPY --from=build /src/target/release/gangs-server /usr/local/bin/gangs-server
EXPOSE 50051
ENTRYPOINT ["gangs-server"]

# Builds the single `engage` binary. Used by docker-compose.yml.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --bin engage

FROM debian:bookworm-slim
# curl: the compose healthcheck asks /readyz
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/engage /usr/local/bin/engage
ENV ENGAGE_HTTP_ADDR=0.0.0.0:8080 ENGAGE_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["engage"]
CMD ["serve"]

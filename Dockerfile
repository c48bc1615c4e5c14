# syntax=docker/dockerfile:1
# fleetform's images, built from this repository in one multi-stage build:
#   docker build --target coordinator -t fleetform-coordinator .
#   docker build --target worker      -t fleetform-worker .
#   docker build --target cli         -t fleetform .
# The build stage compiles the workspace once (release profile, the lock
# file as committed); each image then holds only its binaries on a small
# base: distroless (glibc, CA certificates, no shell) for the coordinator
# and the CLI, Debian slim for workers, which run provider plugins and,
# where a pool allows it, local-exec provisioners that need a shell.

FROM rust:1.95-bookworm AS build
WORKDIR /src
# (The protobuf stubs are compiled by protox, in Rust: no protoc needed.)
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --workspace --bins \
    && mkdir -p /out \
    && cp target/release/fleetform target/release/fleetform-coordinator \
          target/release/fleetform-worker target/release/terraform-provider-* /out/ \
    && strip /out/*

# The coordinator: API, live view and metrics; its redb cache and journal
# on a volume at /var/lib/fleetform.
FROM gcr.io/distroless/cc-debian12:nonroot AS coordinator
COPY --from=build /out/fleetform-coordinator /usr/local/bin/
VOLUME /var/lib/fleetform
EXPOSE 7400 7480 9400
ENTRYPOINT ["/usr/local/bin/fleetform-coordinator", "--data-dir", "/var/lib/fleetform/coordinator", "--log-format", "json"]

# A worker, with the providers fleetform ships (sim, null, random, local,
# time, terraform) beside it, where it looks for them first; others are
# installed from their registry or a mirror as Terraform does.
FROM debian:bookworm-slim AS worker
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/fleetform --create-home fleetform
COPY --from=build /out/fleetform-worker /out/terraform-provider-* /usr/local/bin/
USER 10001
EXPOSE 9400
ENTRYPOINT ["/usr/local/bin/fleetform-worker", "--log-format", "json"]

# The CLI (embedded mode works too: it carries the bundled providers).
FROM gcr.io/distroless/cc-debian12:nonroot AS cli
COPY --from=build /out/fleetform /out/terraform-provider-* /usr/local/bin/
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/fleetform"]

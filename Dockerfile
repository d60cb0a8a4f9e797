# syntax=docker/dockerfile:1
#
# agentmem with the Faiss backend built in (go build -tags faiss).
#
#   docker build -t agentmem .            # runtime image (stage "runtime", the default)
#   docker build --target test .          # full test suite with -tags faiss, inside the image
#   docker run --rm -v agentmem:/data agentmem add "the deploy key is in vault"
#   docker run --rm -i -v agentmem:/data agentmem import - < notes.jsonl
#   docker run --rm -v agentmem:/data agentmem search "where is the deploy key"
#   docker run --rm -v agentmem:/data -e OLLAMA_HOST=http://host.docker.internal:11434 \
#       agentmem --embedder ollama:nomic-embed-text search "..."
#
# Stages:
#   build    Go + Debian's libfaiss-dev/libopenblas-dev (installed by the same
#            scripts/install-faiss.sh that CI runs), compiles bin/agentmem.
#   test     the build stage plus `go vet` and `go test -race -tags faiss ./...`
#            (and the pure-Go CGO_ENABLED=0 build), run as a non-root user.
#   runtime  debian:bookworm-slim with only the shared libraries the binary
#            links: libfaiss.a is static, but OpenBLAS (with its gfortran
#            runtime), libgomp and libstdc++ are shared. Runs as agentmem
#            (uid/gid 10001); the store is the volume /data.
#
# make test-container builds the runtime stage (docker, or podman where there
# is no Docker engine) and runs test/container against it: import and search
# through a named volume, the Faiss backend, a restart, kill -9 during an
# import, the non-root user.

ARG GO_VERSION=1.26

# ---------------------------------------------------------------- build ----
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src

# Faiss and BLAS first: this layer only changes with the script.
COPY scripts/install-faiss.sh scripts/install-faiss.sh
RUN sh scripts/install-faiss.sh && rm -rf /var/lib/apt/lists/*

# Modules next, so that source edits do not download them again. (Not a
# cache mount: the test stage needs them in the layer.)
COPY go.mod go.sum ./
RUN go mod download

COPY . .
ENV CGO_ENABLED=1
# VERSION is what agentmem --version and its MCP server report (the build
# context has no .git): make docker and scripts/test-container.sh pass
# `git describe --tags --always --dirty`.
ARG VERSION=devel
RUN --mount=type=cache,target=/root/.cache/go-build \
    go build -tags faiss -trimpath -ldflags="-s -w -X main.buildVersion=${VERSION}" -o /out/agentmem ./cmd/agentmem

# ----------------------------------------------------------------- test ----
# `docker build --target test .` fails if any test fails. Tests run as an
# unprivileged user so that permission checks behave as they do for users.
FROM build AS test
# The tester's build cache is a cache mount owned by the tester, so that a
# re-run after a source edit recompiles only what changed (-race builds share
# nothing with the build stage's cache).
RUN useradd --uid 10002 --create-home tester && chown -R tester /src
USER tester
ENV GOFLAGS=-buildvcs=false
RUN --mount=type=cache,id=agentmem-tester-go-build,target=/home/tester/.cache/go-build,uid=10002,gid=10002 \
    go vet -tags faiss ./... \
 && go test -race -tags faiss ./... \
 && CGO_ENABLED=0 go build ./... \
 && /out/agentmem --help >/dev/null

# -------------------------------------------------------------- runtime ----
FROM debian:bookworm-slim AS runtime
# libopenblas0-pthread: BLAS/LAPACK (pulls libgfortran5, libquadmath0)
# libgomp1:            OpenMP runtime
# (libstdc++6 and libgcc-s1 are already in bookworm-slim)
# ca-certificates:     for an Ollama server behind HTTPS
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libopenblas0-pthread libgomp1 ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# uid and gid 10001: a fixed, unprivileged id outside the ranges of system
# (<1000) and first login users, for chown on bind mounts. (useradd
# --system --user-group gave the group the system gid 999.)
RUN groupadd --gid 10001 agentmem \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /data --shell /usr/sbin/nologin agentmem \
 && mkdir -p /data && chown agentmem:agentmem /data

COPY --from=build /out/agentmem /usr/local/bin/agentmem
# Fails the build if a shared library is missing from this stage.
RUN agentmem --help >/dev/null

USER agentmem
WORKDIR /data
# The store lives in the volume: the CLI's default --store is .agentmem,
# relative to the working directory.
VOLUME ["/data"]
# Faiss threads: OMP_NUM_THREADS / OPENBLAS_NUM_THREADS cap them (default: all cores).
ENTRYPOINT ["agentmem"]
# The default command serves the store in the volume on port 7437. Listening
# on all interfaces requires a bearer token, so run it with
# -e AGENTMEM_TOKEN=… (or AGENTMEM_TOKENS="tok=namespace,…"); without one it
# refuses to start and says so. Any other command replaces it:
# docker run --rm -v agentmem:/data agentmem search "…".
EXPOSE 7437
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["agentmem", "health", "--url", "http://127.0.0.1:7437/healthz"]
CMD ["serve", "--addr", ":7437"]

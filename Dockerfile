# syntax=docker/dockerfile:1
#
# gosr serve in a container: docker build -t gosr/gosr:latest .
# Run with a Triton-layout model repository mounted at /mnt/models (where
# KServe's storage initializer puts it):
#   docker run --rm -p 8080:8080 -p 8081:8081 -p 8002:8002 \
#     -v "$PWD/models:/mnt/models:ro" gosr/gosr:latest
# docs/serving.md ("Deployment") has the rest.

# Build without cgo. The binary is still dynamically linked (purego asks
# for libc's loader so that it can dlopen the libtorch shim or libpython
# at run time), so the run stage needs glibc: a static image (scratch,
# distroless/static) would not start it. GO_VERSION must be at least
# go.mod's go line (the image sets GOTOOLCHAIN=local).
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gosr ./cmd/gosr

# Run: Debian slim, the same glibc as the build stage; a derived image may
# add the libtorch shim (/usr/local/lib/gosr) or libpython for the Python
# fallback.
FROM debian:bookworm-slim
# A numeric user, so that Kubernetes' runAsNonRoot can check it without
# reading /etc/passwd; 65532 is distroless's "nonroot".
RUN groupadd --gid 65532 gosr \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin gosr
COPY --from=build /out/gosr /gosr
USER 65532:65532
# HTTP/REST (Open Inference Protocol), gRPC, Prometheus metrics.
EXPOSE 8080 8081 8002
ENTRYPOINT ["/gosr", "serve"]
CMD ["-model-repository", "/mnt/models", "-http-port", "8080", "-grpc-port", "8081", "-metrics-port", "8002"]

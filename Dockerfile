# A static app-status binary on a distroless base built from scratch: no shell, no package manager, no libc,
# only the CA certificates it needs to reach API servers. It runs as root because GitHub
# requires container actions to run as the image's default user, with the workspace mounted.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG VERSION=dev
RUN CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath \
      -ldflags "-s -w -X github.com/org/app-status-action/internal/cli.Version=${VERSION}" \
      -o /out/app-status ./cmd/app-status
# The root file system of the final image: CA certificates and the binary, nothing else.
RUN mkdir -p /rootfs/etc/ssl/certs /rootfs/tmp && \
    cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ && \
    cp /out/app-status /rootfs/app-status && \
    chmod 1777 /rootfs/tmp

FROM scratch
COPY --from=build /rootfs/ /
LABEL org.opencontainers.image.licenses=Apache-2.0
USER 0:0
ENTRYPOINT ["/app-status"]

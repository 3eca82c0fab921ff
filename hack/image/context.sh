#!/usr/bin/env bash
# Stages the build context of the action's image (hack/image/Containerfile): the host's CA
# bundle and one static app-status binary per architecture, compiled here (CGO_ENABLED=0,
# -trimpath, version stamped as the Makefile's `build` stamps it). `make image` and the
# container end-to-end test stage their context with it (through hack/image/build.sh); a release
# stages the same layout with goreleaser (.goreleaser.yaml: its dockers_v2 context holds
# linux/<arch>/app-status, built with the same flags, and ca-certificates.crt), so the image
# tested here and the image users pull come from one recipe, hack/image/Containerfile.
#
# Usage: hack/image/context.sh [--version VERSION] DIR ARCH...
#   DIR       created if needed; receives ca-certificates.crt and linux/<ARCH>/app-status
#   ARCH      amd64, arm64 (any GOARCH Go cross-compiles to)
#   --version what `app-status version` prints (default: git describe, as the Makefile's VERSION)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage="usage: hack/image/context.sh [--version VERSION] DIR ARCH..."
version=""
if [ "${1:-}" = --version ]; then
  version=${2:?$usage}
  shift 2
fi
if [ $# -lt 2 ]; then
  echo "$usage" >&2
  exit 2
fi
dir=$1
shift
if [ -z "$version" ]; then
  version=$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo dev)
fi
ca_bundle=/etc/ssl/certs/ca-certificates.crt
if [ ! -s "$ca_bundle" ]; then
  echo "hack/image/context.sh: no CA bundle at $ca_bundle (Debian/Ubuntu: apt-get install ca-certificates)" >&2
  exit 1
fi

mkdir -p "$dir"
cp "$ca_bundle" "$dir/ca-certificates.crt"
for arch in "$@"; do
  echo "hack/image/context.sh: building app-status $version for linux/$arch" >&2
  mkdir -p "$dir/linux/$arch"
  (cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath \
    -ldflags "-s -w -X github.com/org/app-status-action/internal/cli.Version=$version" \
    -o "$dir/linux/$arch/app-status" ./cmd/app-status)
done

#!/usr/bin/env bash
# Builds the action's image with podman from the release's recipe: hack/image/context.sh stages
# a static app-status binary compiled here and the host's CA bundle, hack/image/Containerfile
# puts them on scratch. `make image` and the container end-to-end test run this.
#
# Usage: hack/image/build.sh [--arch ARCH] [--version VERSION] IMAGE
#   --arch     the image's architecture (default: the Go toolchain's GOARCH); others cross-compile
#   --version  what `app-status version` prints (default: git describe, as the Makefile's VERSION)
# Progress goes to stderr, the image ID to stdout. Installs podman when it is missing
# (hack/podman.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage="usage: hack/image/build.sh [--arch ARCH] [--version VERSION] IMAGE"
arch=$(go env GOARCH)
version=()
while [ $# -gt 1 ]; do
  case "$1" in
  --arch) arch=$2; shift 2 ;;
  --version) version=(--version "$2"); shift 2 ;;
  *) break ;;
  esac
done
if [ $# -ne 1 ] || [[ $1 == -* ]]; then
  echo "$usage" >&2
  exit 2
fi
image=$1

context=$(mktemp -d "${TMPDIR:-/tmp}/app-status-image-XXXXXX")
trap 'rm -rf "$context"' EXIT
"$here/context.sh" "${version[@]}" "$context" "$arch"
"$here/../podman.sh" build --quiet --platform "linux/$arch" \
  --file "$here/Containerfile" --tag "$image" "$context"

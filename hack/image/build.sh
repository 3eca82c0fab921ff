#!/usr/bin/env bash
# Builds the action's image with podman from the release's recipe: hack/image/context.sh stages
# a static app-status binary compiled here and the host's CA bundle, hack/image/Containerfile
# puts them on scratch. `make image` and the container end-to-end test run this.
#
# Usage: hack/image/build.sh [--arch ARCH] [--version VERSION] [--shell] IMAGE
#   --arch     the image's architecture (default: the Go toolchain's GOARCH); others cross-compile
#   --version  what `app-status version` prints (default: git describe, as the Makefile's VERSION)
#   --shell    the image with a shell (hack/image/Containerfile.shell), its busybox Debian's
#              busybox-static (hack/install-packages.sh), for the host's architecture only
# Progress goes to stderr, the image ID to stdout. Installs podman when it is missing
# (hack/podman.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage="usage: hack/image/build.sh [--arch ARCH] [--version VERSION] [--shell] IMAGE"
arch=$(go env GOARCH)
version=()
shell=false
while [ $# -gt 1 ]; do
  case "$1" in
  --arch) arch=$2; shift 2 ;;
  --version) version=(--version "$2"); shift 2 ;;
  --shell) shell=true; shift ;;
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
if [ "$shell" = false ]; then
  "$here/../podman.sh" build --quiet --platform "linux/$arch" \
    --file "$here/Containerfile" --tag "$image" "$context"
  exit 0
fi
busybox=/bin/busybox
# The applet list is read whole before it is searched: `busybox --list | grep -q` under pipefail
# fails whenever grep quits before busybox has written its last name (SIGPIPE, on a busy machine).
applets=$("$busybox" --list 2>/dev/null || true)
if [ "$arch" != "$(go env GOHOSTARCH)" ] || ! grep -qx sh <<<"$applets" || [ -n "$(ldd "$busybox" 2>/dev/null | grep '=>')" ]; then
  echo "hack/image/build.sh: --shell needs Debian's static busybox at $busybox for the host's architecture (hack/install-packages.sh installs busybox-static)" >&2
  exit 1
fi
mkdir -p "$context/busybox-root"
cp "$busybox" "$context/busybox-root/busybox"
"$here/../podman.sh" build --quiet --file "$here/Containerfile.busybox" --tag localhost/app-status-busybox:local "$context/busybox-root" >/dev/null
"$here/../podman.sh" build --quiet --platform "linux/$arch" --build-arg BUSYBOX=localhost/app-status-busybox:local \
  --file "$here/Containerfile.shell" --tag "$image" "$context"

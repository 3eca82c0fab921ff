#!/usr/bin/env bash
# Prints an image's size: uncompressed (the layers as unpacked on a runner) and compressed (the
# gzip-compressed layers a registry stores and a `docker pull` downloads).
# Usage: hack/image/size.sh IMAGE
set -euo pipefail

image=${1:?usage: hack/image/size.sh IMAGE}
podman=$(dirname "${BASH_SOURCE[0]}")/../podman.sh

uncompressed=$("$podman" image inspect --format '{{.Size}}' "$image")
layout=$(mktemp -d "${TMPDIR:-/tmp}/app-status-image-size-XXXXXX")
trap 'rm -rf "$layout"' EXIT
# An OCI layout holds the layers as a registry does: gzip-compressed blobs named by the manifest.
"$podman" push --quiet --compression-format gzip "$image" "oci:$layout:image" >/dev/null
manifest=$(sed -e 's/.*"digest":"sha256:\([0-9a-f]*\)".*/\1/' "$layout/index.json")
compressed=$(sed -e 's/.*"layers":\[//' -e 's/\].*//' "$layout/blobs/sha256/$manifest" |
  grep -o '"size":[0-9]*' | cut -d: -f2 | awk '{ s += $1 } END { print s }')

mb() { awk -v n="$1" 'BEGIN { printf "%.1f MB", n / 1e6 }'; }
echo "$image: $(mb "$uncompressed") uncompressed ($uncompressed bytes), $(mb "$compressed") compressed ($compressed bytes of gzip layers)"

#!/usr/bin/env bash
# Pins the Tekton Task (deploy/tekton/task.yaml) to a release, as the Tekton catalog expects a
# Task: the image param's default becomes the release's image by digest, and the
# app.kubernetes.io/version label the release's version (1.4.2 for v1.4.2), each in place of
# the marker line the Task holds for it on a branch. SRC is read whole before DEST is written,
# so they may be one file. hack/release/pin-action.sh pins the released commit's Task with it,
# hack/release/tekton-catalog.sh the Task a release attaches.
# Usage: hack/release/pin-tekton.sh TAG IMAGE@sha256:DIGEST SRC DEST
set -euo pipefail

fail() {
  echo "hack/release/pin-tekton.sh: $*" >&2
  exit 1
}

[ $# -eq 4 ] || fail "usage: hack/release/pin-tekton.sh TAG IMAGE@sha256:DIGEST SRC DEST"
tag=$1 ref=$2 src=$3 dest=$4
[[ $tag =~ ^v([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$ ]] ||
  fail "tag $tag is not vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-PRERELEASE"
version=${BASH_REMATCH[1]}
[[ $ref =~ ^ghcr\.io/[a-z0-9._-]+/app-status-action@sha256:[0-9a-f]{64}$ ]] ||
  fail "$ref is not ghcr.io/<owner, lower case>/app-status-action@sha256:<64 hex digits>"

image_marker='      # default: set by a release (hack/release/pin-tekton.sh) to its image, by digest'
label_marker='    # app.kubernetes.io/version: set by a release (hack/release/pin-tekton.sh) to its version'
task=$(cat "$src") || fail "cannot read $src"
for marker in "$image_marker" "$label_marker"; do
  n=$(grep -cxF -- "$marker" <<<"$task" || true)
  [ "$n" = 1 ] || fail "$src has $n lines '$marker', want 1: was it pinned already?"
done
# Both values were checked above: no character awk or YAML would read as more than itself.
awk -v image_marker="$image_marker" -v label_marker="$label_marker" -v ref="$ref" -v version="$version" '
  $0 == image_marker { print "      default: " ref; next }
  $0 == label_marker { print "    app.kubernetes.io/version: \"" version "\""; next }
  { print }
' <<<"$task" >"$dest"

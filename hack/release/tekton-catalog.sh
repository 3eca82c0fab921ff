#!/usr/bin/env bash
# The Tekton Task a release attaches (.github/workflows/release.yml runs this on the tagged
# commit, once the image is pushed): deploy/tekton/task.yaml pinned to the release's image by
# digest and labelled with its version (hack/release/pin-tekton.sh), alone and in the Tekton
# catalog's layout, task/app-status/<version>/app-status.yaml with deploy/tekton/README.md
# beside it (its `<tag>` placeholders filled with TAG, and `<owner>/app-status-action` with
# GITHUB_REPOSITORY when it is set, as in the release workflow), as a tarball to unpack at a
# catalog repository's top.
# Writes into DIR: app-status-tekton-task.yaml, task/app-status/<version>/{app-status.yaml,
# README.md} and app-status-tekton-catalog.tar.gz (of task/, its dates the commit's).
# Usage: hack/release/tekton-catalog.sh TAG IMAGE@sha256:DIGEST DIR
set -euo pipefail

fail() {
  echo "hack/release/tekton-catalog.sh: $*" >&2
  exit 1
}

[ $# -eq 3 ] || fail "usage: hack/release/tekton-catalog.sh TAG IMAGE@sha256:DIGEST DIR"
tag=$1 ref=$2 dir=$3
[[ $tag =~ ^v([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$ ]] ||
  fail "tag $tag is not vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-PRERELEASE"
version=${BASH_REMATCH[1]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

folder=$dir/task/app-status/$version
mkdir -p "$folder"
"$root/hack/release/pin-tekton.sh" "$tag" "$ref" "$root/deploy/tekton/task.yaml" "$folder/app-status.yaml"
repository=${GITHUB_REPOSITORY:-}
if [ -n "$repository" ] && ! [[ $repository =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]]; then
  fail "GITHUB_REPOSITORY $repository is not OWNER/NAME"
fi
readme=$(<"$root/deploy/tekton/README.md")
readme=${readme//"<tag>"/$tag}
if [ -n "$repository" ]; then
  readme=${readme//"<owner>/app-status-action"/$repository}
fi
printf '%s\n' "$readme" >"$folder/README.md"
cp "$folder/app-status.yaml" "$dir/app-status-tekton-task.yaml"
mtime=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
tar --create --gzip --file "$dir/app-status-tekton-catalog.tar.gz" --directory "$dir" \
  --sort=name --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX --mtime="@$mtime" task
echo "$dir: app-status-tekton-task.yaml, task/app-status/$version, app-status-tekton-catalog.tar.gz"

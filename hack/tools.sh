#!/usr/bin/env bash
# Installs a pinned Go tool into a cache outside the clone (keyed by the tool's version and the
# Go version that builds it) and prints the binary's path on stdout; progress goes to stderr.
# The tools never enter a go.mod of this repository.
#
# Usage: hack/tools.sh NAME      NAME: actionlint | golangci-lint | goreleaser | govulncheck
set -euo pipefail

name=${1:?usage: hack/tools.sh actionlint|golangci-lint|goreleaser|govulncheck}
case "$name" in
  actionlint)    pkg=github.com/rhysd/actionlint/cmd/actionlint; version=v1.7.12 ;;
  golangci-lint) pkg=github.com/golangci/golangci-lint/v2/cmd/golangci-lint; version=v2.15.0 ;;
  goreleaser)    pkg=github.com/goreleaser/goreleaser/v2; version=v2.16.0 ;; # as release.yml runs it
  govulncheck)   pkg=golang.org/x/vuln/cmd/govulncheck; version=v1.10.0 ;;
  *) echo "hack/tools.sh: unknown tool $name (known: actionlint, golangci-lint, goreleaser, govulncheck)" >&2; exit 2 ;;
esac

cache=${APP_STATUS_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/app-status-action/tools}
dir="$cache/$name-$version-$(go env GOVERSION)"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # one build at a time: concurrent test packages may ask for the same tool
if [ ! -x "$dir/$name" ]; then
  echo "hack/tools.sh: building $name $version (once; cached in $dir)" >&2
  start=$(date +%s)
  tmp=$(mktemp -d "$cache/.build-$name.XXXXXX")
  # Outside any module, with the module proxy: go install NAME@VERSION pins the whole build.
  (cd "$tmp" && GOFLAGS=-mod=mod GOBIN="$tmp/bin" CGO_ENABLED=0 go install "$pkg@$version")
  rm -rf "$dir"
  mv "$tmp/bin" "$dir"
  rm -rf "$tmp"
  echo "hack/tools.sh: built $name in $(( $(date +%s) - start ))s" >&2
fi
echo "$dir/$name"

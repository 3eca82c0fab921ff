#!/usr/bin/env bash
# Builds the test bed's binaries (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, kwok, kwokctl, kustomize-controller, helm-controller, source-controller, flagger, and an
# older minor of kustomize-controller and helm-controller as kustomize-controller-prev and
# helm-controller-prev) from the pinned modules under hack/bins/, and caches them outside the
# clone. The cache key is the content of each module's go.mod and go.sum plus the Go version,
# so a warm run only checks that the files are there.
#
# Prints the bin directory (one folder holding every binary) on stdout; progress on stderr.
# Usage: hack/build-bins.sh [component...]   (default: all)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${APP_STATUS_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/app-status-action/bins}
export GOFLAGS=-mod=mod
export CGO_ENABLED=0

kube_version=v1.36.3
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${kube_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36 -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=${kube_version} -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=36"
kwok_ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${kube_version#v}"

# component: module dir | ldflags | package=binary ...
declare -A pkgs=(
  [kubernetes]="k8s.io/kubernetes/cmd/kube-apiserver=kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager=kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler=kube-scheduler k8s.io/kubernetes/cmd/kubectl=kubectl"
  [etcd]="go.etcd.io/etcd/server/v3=etcd"
  [kwok]="sigs.k8s.io/kwok/cmd/kwok=kwok sigs.k8s.io/kwok/cmd/kwokctl=kwokctl"
  [kustomize-controller]="github.com/fluxcd/kustomize-controller=kustomize-controller"
  [helm-controller]="github.com/fluxcd/helm-controller=helm-controller"
  [kustomize-controller-prev]="github.com/fluxcd/kustomize-controller=kustomize-controller-prev"
  [helm-controller-prev]="github.com/fluxcd/helm-controller=helm-controller-prev"
  [source-controller]="github.com/fluxcd/source-controller=source-controller"
  [flagger]="github.com/fluxcd/flagger/cmd/flagger=flagger"
)
declare -A ldflags=(
  [kubernetes]="$kube_ldflags"
  [etcd]="-s -w"
  [kwok]="$kwok_ldflags"
  [kustomize-controller]="-s -w"
  [helm-controller]="-s -w"
  [kustomize-controller-prev]="-s -w"
  [helm-controller-prev]="-s -w"
  [source-controller]="-s -w"
  [flagger]="-s -w"
)

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(etcd kubernetes kwok kustomize-controller helm-controller source-controller kustomize-controller-prev helm-controller-prev flagger)

bindir="$cache/current"
mkdir -p "$cache" "$bindir"
gover=$(go env GOVERSION)

for c in "${components[@]}"; do
  mod="$root/hack/bins/$c"
  [ -f "$mod/go.mod" ] || { echo "build-bins: unknown component $c (no $mod/go.mod)" >&2; exit 2; }
  key=$(cat "$mod/go.mod" "$mod/go.sum" <(echo "$gover ${ldflags[$c]}") | sha256sum | cut -c1-16)
  dir="$cache/$c-$key"
  missing=0
  for pb in ${pkgs[$c]}; do [ -x "$dir/${pb#*=}" ] || missing=1; done
  if [ $missing = 1 ]; then
    echo "build-bins: building $c (cache key $key), this takes minutes on a cold cache" >&2
    start=$(date +%s)
    tmp=$(mktemp -d "$cache/.build-$c.XXXXXX")
    for pb in ${pkgs[$c]}; do
      (cd "$mod" && go build -trimpath -ldflags "${ldflags[$c]}" -o "$tmp/${pb#*=}" "${pb%=*}")
    done
    rm -rf "$dir"
    mv "$tmp" "$dir"
    echo "build-bins: built $c in $(( $(date +%s) - start ))s" >&2
  fi
  for pb in ${pkgs[$c]}; do ln -sfn "$dir/${pb#*=}" "$bindir/${pb#*=}"; done
done
# The Flux CRDs, from the pinned controller modules' config/crd/bases: the current minors' only.
# A cluster holds one CRD per kind, and the previous minors run against these newer CRDs, as
# they do mid-upgrade when Flux's CRDs are applied before its controllers.
crd_mods="github.com/fluxcd/kustomize-controller@v1.9.5 github.com/fluxcd/helm-controller@v1.6.4 github.com/fluxcd/source-controller@v1.9.5"
crd_key=$(echo "$crd_mods" | sha256sum | cut -c1-16)
crd_dir="$cache/crds-$crd_key"
if [ ! -f "$crd_dir/.done" ]; then
  echo "build-bins: fetching Flux CRDs ($crd_mods)" >&2
  rm -rf "$crd_dir" && mkdir -p "$crd_dir"
  for m in $crd_mods; do
    dir=$(cd "$root/hack/bins/kwok" && GOFLAGS=-mod=mod go mod download -json "$m" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [ -d "$dir/config/crd/bases" ] || { echo "build-bins: no config/crd/bases in $m" >&2; exit 1; }
    cp "$dir"/config/crd/bases/*.yaml "$crd_dir/"
  done
  chmod -R u+w "$crd_dir"
  touch "$crd_dir/.done"
fi
ln -sfn "$crd_dir" "$bindir/crds"
# The Flux Operator's ResourceSet and FluxReport CRDs, from config/crd/bases of its pinned module
# (the operator itself is not run: the tests write those objects as it does). Its go.mod needs a
# newer Go than the one that builds the rest, so the CRDs are read from the module's zip, which
# go mod download fetches and verifies before it refuses the Go version; the zip's hash is pinned
# here too.
op_mod=github.com/controlplaneio-fluxcd/flux-operator@v0.59.0
op_sum=h1:jByuiWYtjSJxucGHuz68tV0DeVFz5CYrKQYfxAwE7lE=
op_crds="fluxcd.controlplane.io_resourcesets.yaml fluxcd.controlplane.io_fluxreports.yaml"
op_crd_dir="$cache/flux-operator-crds-$(echo "$op_mod $op_crds" | sha256sum | cut -c1-16)"
if [ ! -f "$op_crd_dir/.done" ]; then
  echo "build-bins: fetching the Flux Operator's CRDs ($op_mod)" >&2
  rm -rf "$op_crd_dir" && mkdir -p "$op_crd_dir"
  info=$(cd "$root/hack/bins/kwok" && GOFLAGS=-mod=mod go mod download -json "$op_mod" || true)
  zip=$(echo "$info" | sed -n 's/^[[:space:]]*"Zip": "\(.*\)",$/\1/p')
  sum=$(echo "$info" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')
  [ -f "$zip" ] && [ "$sum" = "$op_sum" ] || { echo "build-bins: $op_mod: no zip, or its sum $sum is not $op_sum" >&2; exit 1; }
  for f in $op_crds; do
    go -C "$root/hack" run ./zipcat "$zip" "$op_mod/config/crd/bases/$f" > "$op_crd_dir/$f"
    [ -s "$op_crd_dir/$f" ] || { echo "build-bins: no config/crd/bases/$f in $op_mod" >&2; exit 1; }
  done
  touch "$op_crd_dir/.done"
fi
ln -sfn "$op_crd_dir" "$bindir/flux-operator-crds"
# Flagger's CRDs (Canary, MetricTemplate, AlertProvider), from its pinned module, apart from the
# Flux ones: only the clusters that run Flagger get them.
flagger_mod=$(sed -n 's/^[[:space:]]*github.com\/fluxcd\/flagger \(v[^ ]*\).*$/github.com\/fluxcd\/flagger@\1/p' "$root/hack/bins/flagger/go.mod")
flagger_crd_dir="$cache/flagger-crds-$(echo "$flagger_mod" | sha256sum | cut -c1-16)"
if [ ! -f "$flagger_crd_dir/.done" ]; then
  echo "build-bins: fetching Flagger's CRDs ($flagger_mod)" >&2
  rm -rf "$flagger_crd_dir" && mkdir -p "$flagger_crd_dir"
  dir=$(cd "$root/hack/bins/flagger" && GOFLAGS=-mod=mod go mod download -json "$flagger_mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -f "$dir/artifacts/flagger/crd.yaml" ] || { echo "build-bins: no artifacts/flagger/crd.yaml in $flagger_mod" >&2; exit 1; }
  cp "$dir/artifacts/flagger/crd.yaml" "$flagger_crd_dir/"
  chmod -R u+w "$flagger_crd_dir"
  touch "$flagger_crd_dir/.done"
fi
ln -sfn "$flagger_crd_dir" "$bindir/flagger-crds"
echo "$bindir"

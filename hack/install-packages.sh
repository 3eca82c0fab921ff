#!/usr/bin/env bash
# Installs the distribution packages of the tools the test suite needs that are missing:
#   podman, runc     what `make image` and the container end-to-end test run the action's image with
#   the shellcheck   that actionlint runs on the workflows' run: scripts (make lint)
#   gcc              the race detector of make test and make test-short (cgo), with libc6-dev
#   git              its http-backend is the test bed's Git server (source-controller clones from it)
#   cmark-gfm        GitHub's markdown renderer, that the summary's reading test renders with
#   xmllint          (libxml2-utils) validates the JUnit report against its schema
#   rsync            gitlab-ci-local (hack/gitlab-ci-local/install.sh) copies the project with it
#   busybox          (busybox-static, at /bin/busybox) the shell of the image the GitLab component
#                    runs in (hack/image/build.sh --shell)
#
# Usage: hack/install-packages.sh [TOOL...]   (default: every tool above)
#
# A tool already on PATH is left alone: a GitHub runner's runc, for one, belongs to its Docker
# packages, which Debian's runc package would conflict with. On Debian 12 the packages are pinned
# to the builds the suite is tested with (the distribution's own builds when another point release
# has replaced them); elsewhere (an Ubuntu runner, say) the distribution's builds are installed.
# Does nothing when every tool asked for is there. hack/podman.sh holds the flags podman needs on
# a machine without systemd or CAP_SYS_RESOURCE (a CI container).
#
# INSTALL_PACKAGES_ROOT (tests only) is the folder /etc/os-release and /bin/busybox are read under.
set -euo pipefail

root=${INSTALL_PACKAGES_ROOT:-}

# The Debian 12 builds the suite is tested with, by tool.
declare -A pinned=(
  [podman]="podman=4.3.1+ds1-8+deb12u1+b3"
  [runc]="runc=1.1.5+ds1-1+deb12u1"
  [shellcheck]="shellcheck=0.9.0-1"
  [gcc]="gcc=4:12.2.0-3 libc6-dev"
  [git]="git=1:2.39.5-0+deb12u3"
  [cmark-gfm]="cmark-gfm=0.29.0.gfm.6-6"
  [xmllint]="libxml2-utils=2.9.14+dfsg-1.3~deb12u6"
  [rsync]="rsync=3.5.0+ds1-0+deb12u1"
  [busybox]="busybox-static=1:1.35.0-4+deb12u1+b1"
)
all=(podman runc shellcheck gcc git cmark-gfm xmllint rsync busybox)

tools=("$@")
if [ ${#tools[@]} -eq 0 ]; then
  tools=("${all[@]}")
fi

present() { # present TOOL: whether TOOL is installed
  if [ "$1" = busybox ]; then
    # hack/image/build.sh copies Debian's static busybox from this path.
    [ -x "$root/bin/busybox" ]
  else
    command -v "$1" >/dev/null
  fi
}

debian12() { # whether this machine runs Debian 12, which the pins are builds of
  local id="" version="" line
  [ -r "$root/etc/os-release" ] || return 1
  while IFS= read -r line; do
    case $line in
      ID=*) id=${line#ID=} ;;
      VERSION_ID=*) version=${line#VERSION_ID=} ;;
    esac
  done <"$root/etc/os-release"
  id=${id//\"/}
  version=${version//\"/}
  [ "$id" = debian ] && [ "$version" = 12 ]
}

missing=()
for tool in "${tools[@]}"; do
  if [ -z "${pinned[$tool]+set}" ]; then
    echo "hack/install-packages.sh: unknown tool $tool (known: ${all[*]})" >&2
    exit 2
  fi
  if ! present "$tool"; then
    missing+=("$tool")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

with_pins=()
without_pins=()
for tool in "${missing[@]}"; do
  for package in ${pinned[$tool]}; do
    with_pins+=("$package")
    without_pins+=("${package%%=*}")
  done
done

if [ "$(id -u)" != 0 ]; then
  echo "hack/install-packages.sh: ${missing[*]} missing and installing them needs root: run" >&2
  echo "  sudo hack/install-packages.sh ${missing[*]}   (or install ${without_pins[*]} with your package manager)" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "hack/install-packages.sh: no apt-get here: install ${without_pins[*]} with your package manager" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
if debian12; then
  echo "hack/install-packages.sh: installing ${with_pins[*]} (apt-get, Debian 12's pinned builds)" >&2
  if ! apt-get install -y -qq "${with_pins[@]}" >&2; then
    # Another Debian 12 point release may carry other builds of the same versions.
    echo "hack/install-packages.sh: the pinned builds are not available; installing the distribution's ${without_pins[*]}" >&2
    apt-get install -y -qq "${without_pins[@]}" >&2
  fi
else
  echo "hack/install-packages.sh: not Debian 12, whose builds the pins are: installing the distribution's ${without_pins[*]} (apt-get)" >&2
  apt-get install -y -qq "${without_pins[@]}" >&2
fi

#!/usr/bin/env bash
# Installs the distribution packages the test suite needs, pinned to the versions it is tested
# with (Debian 12): podman and runc, what `make image` and the container end-to-end test run the
# action's image with, and shellcheck, which actionlint runs on the workflows' run: scripts
# (make lint), gcc, which the race detector of make test needs (cgo), and git, whose
# http-backend is the test bed's Git server (the real source-controller clones from it), and
# cmark-gfm, GitHub's markdown renderer, that the summary's reading test renders with, and
# xmllint (libxml2-utils), that validates the JUnit report against its schema, and rsync, that
# gitlab-ci-local (hack/gitlab-ci-local/install.sh) copies the project with, and busybox-static,
# the shell of the image the GitLab component runs in (hack/image/build.sh --shell). Does nothing when
# they are all installed. hack/podman.sh holds the flags podman
# needs on a machine without systemd or CAP_SYS_RESOURCE (a CI container).
set -euo pipefail

packages=(podman=4.3.1+ds1-8+deb12u1+b3 runc=1.1.5+ds1-1+deb12u1 shellcheck=0.9.0-1 gcc=4:12.2.0-3 libc6-dev git=1:2.39.5-0+deb12u3 cmark-gfm=0.29.0.gfm.6-6 libxml2-utils=2.9.14+dfsg-1.3~deb12u6 rsync=3.5.0+ds1-0+deb12u1 busybox-static=1:1.35.0-4+deb12u1+b1)

if command -v podman >/dev/null && command -v runc >/dev/null && command -v shellcheck >/dev/null && command -v gcc >/dev/null && command -v git >/dev/null && command -v cmark-gfm >/dev/null && command -v xmllint >/dev/null && command -v rsync >/dev/null && [ -x /bin/busybox ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "hack/install-packages.sh: podman, runc, shellcheck, gcc, git, cmark-gfm, xmllint, rsync or busybox-static is missing and installing them needs root: run" >&2
  echo "  sudo hack/install-packages.sh   (or install ${packages[*]} with your package manager)" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "hack/install-packages.sh: no apt-get here: install ${packages[*]} with your package manager" >&2
  exit 1
fi
echo "hack/install-packages.sh: installing ${packages[*]} (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
if ! apt-get install -y -qq "${packages[@]}" >&2; then
  # Another Debian point release may carry other builds of the same versions.
  echo "hack/install-packages.sh: the pinned builds are not available; installing the distribution's podman, runc, shellcheck, gcc, git, cmark-gfm, libxml2-utils, rsync and busybox-static" >&2
  apt-get install -y -qq podman runc shellcheck gcc libc6-dev git cmark-gfm libxml2-utils rsync busybox-static >&2
fi
podman --version >&2
shellcheck --version | sed -n 2p >&2

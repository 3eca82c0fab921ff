#!/usr/bin/env bash
# Installs podman and runc, what `make image` and the container end-to-end test run the action's
# image with, from the distribution's packages (apt-get, as root). Does nothing when both are
# already installed. Tested with Debian 12's podman 4.3.1 and runc 1.1.5; hack/podman.sh holds
# the flags they need on a machine without systemd or CAP_SYS_RESOURCE (a CI container).
set -euo pipefail

if command -v podman >/dev/null && command -v runc >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "hack/install-podman.sh: podman or runc is missing and installing them needs root: run" >&2
  echo "  sudo hack/install-podman.sh   (or install podman and runc with your package manager)" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "hack/install-podman.sh: no apt-get here: install podman and runc with your package manager" >&2
  exit 1
fi
echo "hack/install-podman.sh: installing podman and runc (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq podman runc >&2
podman --version >&2

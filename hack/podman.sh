#!/usr/bin/env bash
# podman as this repository runs it: `make image`, the container end-to-end test, the start-up
# measurement and the documented commands all go through here, so the flags live in one place.
# Usage: hack/podman.sh PODMAN-ARGS...   e.g. hack/podman.sh run --rm app-status-action:dev version
#
# The flags make podman work as root on a machine without systemd, overlay mounts or
# CAP_SYS_RESOURCE (a CI container, this repository's CI machine):
#   --storage-driver=vfs          plain copies instead of overlay mounts;
#   --runtime runc                the OCI runtime hack/install-packages.sh installs;
#   --cgroup-manager=cgroupfs     no systemd to ask for cgroups;
#   run/create: --ulimit nofile and nproc at the limits this process already has, because
#     podman's defaults (1048576) would need CAP_SYS_RESOURCE to raise them and runc refuses to
#     start the container. podman lowers its own nproc limit to kernel.pid_max when that is
#     lower, so nproc is the smaller of the two;
#   run/create: --network=host    the container reaches the test bed's API servers on 127.0.0.1
#     (the GitHub runner uses a network of its own; the action only needs to reach the clusters).
# Images built through this script live in the vfs store: list them with hack/podman.sh images.
# Installs podman and runc first when they are missing (hack/install-packages.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
  "$here/install-packages.sh" podman runc
fi

global=(--storage-driver=vfs --runtime runc --cgroup-manager=cgroupfs)

hard_limit() { # hard_limit FLAG FALLBACK-FILE: ulimit -H FLAG, or the file's number when unlimited
  local v
  v=$(ulimit -H "$1")
  if [ "$v" = unlimited ]; then v=$(cat "$2"); fi
  echo "$v"
}

case "${1:-}" in
run | create)
  verb=$1
  shift
  nofile=$(hard_limit -n /proc/sys/fs/nr_open)
  nproc=$(hard_limit -u /proc/sys/kernel/pid_max)
  pid_max=$(cat /proc/sys/kernel/pid_max)
  if [ "$nproc" -gt "$pid_max" ]; then nproc=$pid_max; fi
  exec podman "${global[@]}" "$verb" --network=host \
    --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" "$@"
  ;;
*)
  exec podman "${global[@]}" "$@"
  ;;
esac

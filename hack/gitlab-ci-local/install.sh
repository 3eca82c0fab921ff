#!/usr/bin/env bash
# Installs gitlab-ci-local, the GitLab CI/CD emulator that the component's end-to-end test
# (cmd/app-status, TestGitLabComponent) runs templates/app-status.yml with, from the npm
# registry at the versions package-lock.json pins (npm ci checks every package's integrity),
# with the machine's Node.js. Cached outside the clone, keyed by the lock file; a warm run only
# checks that it is there. gitlab-ci-local copies the project with rsync
# (hack/install-packages.sh installs it).
#
# Prints the path of the gitlab-ci-local command on stdout; progress on stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v npm >/dev/null || { echo "hack/gitlab-ci-local/install.sh: npm (Node.js 18 or later) is missing" >&2; exit 1; }
key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/app-status-action/gitlab-ci-local-$key
bin=$dir/node_modules/.bin/gitlab-ci-local
if [ ! -x "$bin" ]; then
  echo "hack/gitlab-ci-local/install.sh: installing gitlab-ci-local in $dir (npm ci)" >&2
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  cp "$here/package.json" "$here/package-lock.json" "$dir.tmp/"
  (cd "$dir.tmp" && npm ci --no-audit --no-fund --ignore-scripts >&2)
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
fi
echo "$bin"

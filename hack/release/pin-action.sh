#!/usr/bin/env bash
# Makes the released commit (.github/workflows/release.yml runs this once the image is pushed):
# action.yml runs the released image by digest instead of building the Dockerfile, committed on
# top of the tagged commit; the version tag and, for a release that is not a pre-release, the
# major tag (v1 for v1.4.2) are moved to that commit, here and on origin.
# The Tekton Task (deploy/tekton/task.yaml) runs the same image by digest in that commit, with
# the release's version as its app.kubernetes.io/version label (hack/release/pin-tekton.sh), and
# the setup action (setup/action.yml) installs the release's CLI by default.
# With a third argument, the release's image with a shell becomes the default image of the GitLab
# CI/CD component (templates/app-status.yml) in the same commit.
# Usage: hack/release/pin-action.sh TAG IMAGE@sha256:DIGEST [SHELL_IMAGE@sha256:DIGEST]
#   e.g. hack/release/pin-action.sh v1.4.2 ghcr.io/org/app-status-action@sha256:0123… ghcr.io/org/app-status-action@sha256:4567…
set -euo pipefail

fail() {
  echo "hack/release/pin-action.sh: $*" >&2
  exit 1
}

[ $# -eq 2 ] || [ $# -eq 3 ] || fail "usage: hack/release/pin-action.sh TAG IMAGE@sha256:DIGEST [SHELL_IMAGE@sha256:DIGEST]"
tag=$1
ref=$2
shell_ref=${3:-}
[[ $tag =~ ^v([0-9]+)\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  fail "tag $tag is not vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-PRERELEASE"
major=v${BASH_REMATCH[1]}
prerelease=${BASH_REMATCH[2]}
[[ $ref =~ ^ghcr\.io/[a-z0-9._-]+/app-status-action@sha256:[0-9a-f]{64}$ ]] ||
  fail "$ref is not ghcr.io/<owner, lower case>/app-status-action@sha256:<64 hex digits>"
if [ -n "$shell_ref" ]; then
  [[ $shell_ref =~ ^ghcr\.io/[a-z0-9._-]+/app-status-action@sha256:[0-9a-f]{64}$ ]] ||
    fail "$shell_ref is not ghcr.io/<owner, lower case>/app-status-action@sha256:<64 hex digits>"
fi

cd "$(git rev-parse --show-toplevel)"
source_commit=$(git rev-parse --verify "refs/tags/$tag^{commit}")
[ "$(git rev-parse HEAD)" = "$source_commit" ] || fail "HEAD is not the commit $tag names ($source_commit)"
[ -z "$(git status --porcelain --untracked-files=no)" ] || fail "the work tree has changes: $(git status --short --untracked-files=no)"
if ! grep -qx '  image: Dockerfile' action.yml; then
  fail "action.yml has no '  image: Dockerfile' line under runs: was $tag released already? ($(grep -m1 '^  image:' action.yml || echo 'no image line'))"
fi

# The Task first: it refuses a Task without its markers before anything changes.
hack/release/pin-tekton.sh "$tag" "$ref" deploy/tekton/task.yaml deploy/tekton/task.yaml
sed -i "s|^  image: Dockerfile\$|  image: docker://$ref|" action.yml
files=(action.yml deploy/tekton/task.yaml)
# The setup action installs this release's CLI: `uses: .../setup@v1` then names the release.
setup_marker='    default: "" # set by a release (hack/release/pin-action.sh) to its version'
grep -qxF "$setup_marker" setup/action.yml || fail "setup/action.yml has no line '$setup_marker'"
sed -i "s|^$setup_marker\$|    default: $tag|" setup/action.yml
files+=(setup/action.yml)
if [ -n "$shell_ref" ]; then
  marker='      # default: set by a release (hack/release/pin-action.sh) to its image with a shell, by digest'
  grep -qxF "$marker" templates/app-status.yml || fail "templates/app-status.yml has no line '$marker'"
  sed -i "s|^$marker\$|      default: $shell_ref|" templates/app-status.yml
  files+=(templates/app-status.yml)
fi
# The release commit and its annotated tags are the release workflow's bot's, whatever the
# machine's git identity (a runner has none).
export GIT_AUTHOR_NAME='github-actions[bot]' GIT_COMMITTER_NAME='github-actions[bot]'
export GIT_AUTHOR_EMAIL='41898282+github-actions[bot]@users.noreply.github.com' GIT_COMMITTER_EMAIL='41898282+github-actions[bot]@users.noreply.github.com'
git commit --quiet --message "Release $tag: the action runs $ref" \
  --message "The commit $source_commit with action.yml and the Tekton Task pointing at the image the release built from it, so that \`uses: ...@$tag\` pulls that image instead of building the Dockerfile." \
  "${files[@]}"
release_commit=$(git rev-parse HEAD)

tags=("$tag")
git tag --force --annotate --message "$tag: $source_commit, running $ref" "$tag" "$release_commit" >/dev/null
if [ -z "$prerelease" ]; then
  git tag --force --annotate --message "$major: the latest $major release, $tag" "$major" "$release_commit" >/dev/null
  tags+=("$major")
fi
refspecs=()
for t in "${tags[@]}"; do refspecs+=("refs/tags/$t:refs/tags/$t"); done
git push --force --atomic origin "${refspecs[@]}"
echo "released commit $release_commit: action.yml runs $ref; moved ${tags[*]}"

#!/usr/bin/env bash
# Installs the app-status CLI of a release on a GitHub runner (setup/action.yml runs it): the
# archive of the runner's platform, checked against the release's checksums.txt, and that file
# against its keyless cosign signature by the release workflow at the version's tag (when cosign
# is on the PATH, or always with APP_STATUS_VERIFY_SIGNATURE=true; else, with gh on the PATH and
# a token, the archive against its provenance attestation by that workflow: gh attestation
# verify, a warning when it fails); the binary's folder is added to GITHUB_PATH, and the version
# and folder are written to GITHUB_OUTPUT.
#
# Environment (set by setup/action.yml from its inputs and the runner):
#   APP_STATUS_VERSION           vX.Y.Z[-PRE], or empty: the tag in APP_STATUS_ACTION_REF
#   APP_STATUS_ACTION_REF        the ref the action was used at (github.action_ref)
#   APP_STATUS_REPOSITORY        OWNER/REPO of the releases (github.action_repository)
#   APP_STATUS_VERIFY_SIGNATURE  auto | true | false
#   GH_TOKEN                     a token gh reads the attestations with (github.token), or empty
#   GITHUB_SERVER_URL            the runner's GitHub: gh runs on https://github.com alone
#   APP_STATUS_DOWNLOAD_URL      the releases' base (default https://github.com/OWNER/REPO/releases/download);
#                                tests serve a release snapshot from 127.0.0.1
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_PATH, GITHUB_OUTPUT  the runner's
set -euo pipefail

fail() {
  echo "::error title=app-status setup::$*"
  exit 1
}

version=${APP_STATUS_VERSION:-}
if [ -z "$version" ]; then
  ref=${APP_STATUS_ACTION_REF:-}
  [[ $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
    fail "no version to install: the action was used at '${ref//[^0-9A-Za-z._\/-]/?}', which is not a release tag; use setup@vX.Y.Z (or setup@vMAJOR of a release), or set the version input"
  version=$ref
fi
[[ $version =~ ^v?([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$ ]] ||
  fail "version '${version//[^0-9A-Za-z._-]/?}' is not vMAJOR.MINOR.PATCH"
plain=${BASH_REMATCH[1]}
version=v$plain

repo=${APP_STATUS_REPOSITORY:-}
[[ $repo =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] ||
  fail "the releases' repository '${repo//[^0-9A-Za-z._\/-]/?}' is not OWNER/REPO"
base=https://github.com/$repo/releases/download
if [ -n "${APP_STATUS_DOWNLOAD_URL:-}" ]; then
  # Only a test's release served on this machine may stand in for GitHub: an environment
  # variable set by an earlier step must not send the download anywhere else.
  [[ $APP_STATUS_DOWNLOAD_URL =~ ^http://127\.0\.0\.1:[0-9]+$ ]] ||
    fail "APP_STATUS_DOWNLOAD_URL may only name a test server on http://127.0.0.1:PORT; unset it"
  base=$APP_STATUS_DOWNLOAD_URL
fi

case "${RUNNER_OS:-}" in
  Linux) os=linux ;;
  macOS) os=darwin ;;
  Windows) os=windows ;;
  *) fail "runner OS '${RUNNER_OS:-}' has no release archive (Linux, macOS, Windows)" ;;
esac
case "${RUNNER_ARCH:-}" in
  X64) arch=amd64 ;;
  ARM64) arch=arm64 ;;
  *) fail "runner architecture '${RUNNER_ARCH:-}' has no release archive (X64, ARM64)" ;;
esac
ext=tar.gz binary=app-status
if [ "$os" = windows ]; then
  ext=zip binary=app-status.exe
fi
archive=app-status_${plain}_${os}_${arch}.$ext

verify=${APP_STATUS_VERIFY_SIGNATURE:-auto}
case "$verify" in
  auto | true | false) ;;
  *) fail "verify-signature is '${verify//[^0-9A-Za-z._-]/?}': auto, true or false" ;;
esac
attest=false unchecked=
if [ "$verify" = auto ]; then
  verify=false
  if command -v cosign >/dev/null; then
    verify=true
  elif command -v gh >/dev/null && [ -n "${GH_TOKEN:-}" ]; then
    # The attestations are read from github.com, where the releases are, with GH_TOKEN: the
    # token of the runner's own GitHub, which on GitHub Enterprise Server is a token of that
    # server, not to be sent to github.com.
    if [ "${GITHUB_SERVER_URL:-}" = https://github.com ]; then
      attest=true
    else
      server=${GITHUB_SERVER_URL:-}
      unchecked="; the attestation was not checked with gh either, as this job runs on ${server//[^0-9A-Za-z._:\/-]/?}, not https://github.com, and gh would send that server's token to github.com"
    fi
  fi
fi
if [ "$verify" = true ] && ! command -v cosign >/dev/null; then
  fail "verify-signature is true and cosign is not on the PATH: add a step that installs it (sigstore/cosign-installer) before this one"
fi

dir=${RUNNER_TEMP:?RUNNER_TEMP is not set}/app-status/$version
download=$(mktemp -d "${RUNNER_TEMP}/app-status-download.XXXXXX")
trap 'rm -rf "$download"' EXIT
files=("$archive" checksums.txt)
if [ "$verify" = true ]; then files+=(checksums.txt.sigstore.json); fi
proto='=https'
case $base in
  http://127.0.0.1:*) proto='=http' ;; # a test's release snapshot
esac
for f in "${files[@]}"; do
  curl --fail --silent --show-error --location --retry 3 --connect-timeout 20 --max-time 300 --proto "$proto" --proto-redir '=https' -o "$download/$f" "$base/$version/$f" ||
    fail "could not download $base/$version/$f: is $version a release of $repo with an archive for $os/$arch?"
done

cd "$download"
identity="https://github.com/$repo/.github/workflows/release.yml@refs/tags/$version"
if [ "$verify" = true ]; then
  cosign verify-blob checksums.txt --bundle checksums.txt.sigstore.json \
    --certificate-identity "$identity" \
    --certificate-oidc-issuer https://token.actions.githubusercontent.com >/dev/null ||
    fail "checksums.txt of $version is not signed by $repo's release workflow at $version"
elif [ "$attest" = false ]; then
  echo "::notice title=app-status setup::the signature of checksums.txt was not checked (no cosign on the PATH)$unchecked; the archive is checked against the release's checksums.txt"
fi
want=$(awk -v f="$archive" '$2 == f { print $1 }' checksums.txt)
[[ $want =~ ^[0-9a-f]{64}$ ]] || fail "checksums.txt of $version has no SHA-256 for $archive"
if command -v sha256sum >/dev/null; then
  got=$(sha256sum "$archive" | awk '{ print $1 }')
else
  got=$(shasum -a 256 "$archive" | awk '{ print $1 }')
fi
[ "$got" = "$want" ] || fail "$archive does not match checksums.txt of $version (sha256 $got, want $want)"
if [ "$attest" = true ]; then
  # No cosign: the release workflow's provenance attestation of the archive, read from GitHub
  # with the job's token, stands in for the signature of checksums.txt.
  bounded=() # gh has no time limit of its own; macOS has no timeout
  if command -v timeout >/dev/null; then bounded=(timeout 120); fi
  # A check that fails (an attestation API outage, the time limit) warns: the
  # archive matched checksums.txt, as it does where gh is not; verify-signature: true (cosign)
  # is the strict check.
  if said=$(${bounded[@]+"${bounded[@]}"} gh attestation verify "$archive" --repo "$repo" --cert-identity "$identity" \
    --cert-oidc-issuer https://token.actions.githubusercontent.com 2>&1); then
    echo "app-status setup: $archive is attested by $repo's release workflow at $version (gh attestation verify)"
  else
    rc=$?
    echo "::warning title=app-status setup::gh attestation verify did not accept $archive as attested by $repo's release workflow at $version (exit $rc, its output below); it is installed checked against checksums.txt only. To require a signature, install cosign before this step and set verify-signature: true"
    # gh's words as plain lines: each prefixed, carriage returns turned to spaces (the runner
    # starts a line at one), and "##[" broken up (the runner reads it anywhere in a line), so
    # none is a runner command.
    if [ -n "$said" ]; then
      while IFS= read -r line || [ -n "$line" ]; do
        line=${line//$'\r'/ }
        printf 'gh: %s\n' "${line//'##['/'## ['}"
      done <<<"$said"
    fi
  fi
fi

rm -rf "$dir"
mkdir -p "$dir"
if [ "$ext" = zip ]; then
  unzip -q -o "$archive" "$binary" -d "$dir"
else
  tar -xzf "$archive" -C "$dir" "$binary"
fi
chmod +x "$dir/$binary"
echo "$dir" >>"${GITHUB_PATH:?GITHUB_PATH is not set}"
{
  echo "version=$version"
  echo "path=$dir"
} >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
echo "app-status $version ($os/$arch) installed in $dir"

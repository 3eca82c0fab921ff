#!/usr/bin/env bash
# Prints a release's notes: the section of CHANGELOG.md for a version tag, from under its
# heading (`## [1.4.2] - 2026-12-01` for the tag v1.4.2) to the next `## [` heading outside a
# fenced code block, without the blank lines around it. The section's own link definitions
# (`[kstatus]: https://...`) stay; those of the versions' headings (`[1.4.2]: ...`,
# `[Unreleased]: ...`, the file's footer) are left out. The release workflow passes
# them to goreleaser (--release-notes). It fails when the changelog has no such section, or an
# empty one, so that a release is never published without its notes.
#
# Usage: hack/release/notes.sh TAG [CHANGELOG]   (CHANGELOG defaults to ./CHANGELOG.md)
set -euo pipefail

tag=${1:?usage: hack/release/notes.sh TAG [CHANGELOG]}
file=${2:-CHANGELOG.md}
version=${tag#v}
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "notes.sh: $tag is not a version tag (vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-PRE)" >&2
  exit 2
fi
if [[ ! -f $file ]]; then
  echo "notes.sh: $file: no such file" >&2
  exit 2
fi

# awk exits 3 when no heading names the version.
status=0
notes=$(awk -v heading="## [$version]" '
  /^[[:space:]]*(```|~~~)/ { fence = !fence }
  !fence && /^## \[/ {
    if (found) exit
    if (index($0, heading) == 1) { found = 1; next }
  }
  found && /^\[(Unreleased|[0-9]+\.[0-9]+\.[0-9]+[^]]*)\]: / { next }
  found && !started && /^[[:space:]]*$/ { next }
  found { started = 1; print }
  END { if (!found) exit 3 }
' "$file") || status=$?
if ((status == 3)); then
  echo "notes.sh: $file has no section \"## [$version]\": move the Unreleased entries under it before tagging" >&2
  exit 1
elif ((status != 0)); then
  echo "notes.sh: reading $file failed (awk exit $status)" >&2
  exit 1
fi
if [[ -z ${notes//[[:space:]]/} ]]; then
  echo "notes.sh: the section \"## [$version]\" of $file is empty" >&2
  exit 1
fi
printf '%s\n' "$notes"

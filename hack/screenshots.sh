#!/usr/bin/env bash
# Renders the job summaries of 3 and 1000 clusters (the golden files of internal/report) as
# GitHub shows them, with cmark-gfm and GitHub's extensions in a page styled like a job
# summary, and takes a screenshot of what a person sees first with headless Chromium:
# docs/summary-3.png and docs/summary-1000.png. Needs Debian's cmark-gfm, chromium and
# fonts-noto-color-emoji (apt-get install cmark-gfm chromium fonts-noto-color-emoji).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in cmark-gfm chromium; do
  command -v "$tool" >/dev/null || { echo "hack/screenshots.sh: $tool is not installed (apt-get install cmark-gfm chromium fonts-noto-color-emoji)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in 3 1000; do
  {
    cat <<'HTML'
<!doctype html><html><head><meta charset="utf-8"><style>
body { font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif, "Noto Color Emoji"; font-size: 14px;
       line-height: 1.5; color: #1f2328; margin: 0; padding: 24px 32px; background: #fff; width: 1216px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin-top: 0; }
table { border-collapse: collapse; margin: 0 0 16px; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
tr:nth-child(2n) { background: #f6f8fa; }
code { background: #eff1f3; padding: .2em .4em; border-radius: 6px; font-size: 85%; }
pre { background: #f6f8fa; padding: 16px; border-radius: 6px; }
details { margin: 0 0 16px; } summary { cursor: pointer; }
</style></head><body>
HTML
    cmark-gfm --unsafe -e table -e strikethrough -e autolink -e tagfilter "internal/report/testdata/fleet-$n.golden.md"
    echo '</body></html>'
  } > "$work/summary-$n.html"
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
    --window-size=1280,900 --screenshot="$PWD/docs/summary-$n.png" "file://$work/summary-$n.html" >/dev/null 2>&1
  echo "docs/summary-$n.png"
done

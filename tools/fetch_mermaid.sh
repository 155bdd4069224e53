#!/usr/bin/env bash
# Refreshes the Mermaid bundle the docs site ships, so pages never load it from a CDN.
# Usage: tools/fetch_mermaid.sh [VERSION]   (default: the version pinned below)
# Needs npm and the npm registry; the result is committed, so building the site does not.
set -euo pipefail

version="${1:-11.17.2}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/docs/assets/javascripts"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "mermaid@$version" >/dev/null)
tar -xzf "$work/mermaid-$version.tgz" -C "$work" package/dist/mermaid.min.js package/LICENSE
mkdir -p "$dest"
cp "$work/package/dist/mermaid.min.js" "$dest/mermaid.min.js"
cp "$work/package/LICENSE" "$dest/mermaid.LICENSE"
echo "mermaid $version -> $dest/mermaid.min.js"

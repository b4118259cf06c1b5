#!/usr/bin/env bash
# Installs gracegate from its npm tarball into an image root: the launcher and the two bundles
# (dist/hc.cjs, the sidecar; dist/gracegate.cjs, every other command) under
# /usr/local/lib/gracegate, and the `gracegate` launcher (files/common/) on PATH. The bundles hold
# everything they run (scripts/bundle.js), so nothing from node_modules goes into the image.
#   scripts/image/install-gracegate.sh gracegate-X.Y.Z.tgz ROOT
# Used by scripts/image/build.sh and by the Dockerfile.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: install-gracegate.sh PACKAGE.tgz ROOT" >&2; exit 2; }
tgz=$(readlink -f "$1") root=$2
here=$(dirname "$(readlink -f "$0")")
lib="$root/usr/local/lib/gracegate"
mkdir -p "$lib"
tar -xzf "$tgz" -C "$lib" --strip-components=1 \
  package/package.json package/bin/gracegate.js package/dist/gracegate.cjs package/dist/hc.cjs
cp -R "$here/files/common/." "$root/"

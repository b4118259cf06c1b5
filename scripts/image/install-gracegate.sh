#!/usr/bin/env bash
# Installs gracegate from its npm tarball into an image root, as `npm install -g` lays it out:
# /usr/local/lib/node_modules/gracegate with its production dependencies, and the `gracegate`
# launcher (files/common/) on PATH in place of npm's link.
#   scripts/image/install-gracegate.sh gracegate-X.Y.Z.tgz ROOT
# Used by scripts/image/build.sh and by the Dockerfile.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: install-gracegate.sh PACKAGE.tgz ROOT" >&2; exit 2; }
tgz=$(readlink -f "$1") root=$2
here=$(dirname "$(readlink -f "$0")")
mkdir -p "$root/usr/local"
# --prefer-offline: the dependencies are exact versions that `npm ci` already put in npm's cache.
npm install --global --prefix "$root/usr/local" --omit=dev --ignore-scripts --prefer-offline \
  --no-audit --no-fund --no-update-notifier --loglevel=error "$tgz" >/dev/null
rm -f "$root/usr/local/bin/gracegate"
cp -R "$here/files/common/." "$root/"

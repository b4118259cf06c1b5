#!/usr/bin/env bash
# `npm pack` of gracegate, compiled from the sources in a scratch copy (src/ only, as the package
# ships it): the tarball never depends on whatever dist/ holds, and a build running next to the
# tests never rewrites the dist/ files they are loading.
#   scripts/image/pack.sh DESTDIR      (prints the tarball's path)
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: pack.sh DESTDIR" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(mkdir -p "$1" && cd "$1" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# What package.json `files` names (dist/ is compiled here, not copied), plus what the compile needs.
(cd "$repo" && cp -R package.json README.md tsconfig.json src "$stage/" \
  && node -p 'require("./package.json").files.filter((f) => !/^(!|dist\/)/.test(f)).join("\n")' \
  | while read -r entry; do cp -R "$entry" "$stage/"; done)
ln -s "$repo/node_modules" "$stage/node_modules"
printf '{"extends": "./tsconfig.json", "include": ["src/**/*.ts"]}\n' > "$stage/tsconfig.pack.json"
(cd "$stage" && node node_modules/typescript/bin/tsc -p tsconfig.pack.json)
# The bundles bin/gracegate.js runs (scripts/bundle.js); their code cache is made where they run.
mkdir -p "$stage/scripts" && cp "$repo/scripts/bundle.js" "$stage/scripts/"
(cd "$stage" && node scripts/bundle.js --no-cache)
rm -rf "$stage/scripts"
rm "$stage/node_modules"
name=$(cd "$stage" && npm pack --silent --pack-destination "$dest")
echo "$dest/$name"

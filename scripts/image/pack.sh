#!/usr/bin/env bash
# `npm pack` of gracegate, compiled from the sources in a scratch copy (src/ only, as the package
# ships it): the tarball never depends on whatever dist/ holds, and a build running next to the
# tests never rewrites the dist/ files they are loading. GRACEGATE_PACK_FROM_DIST=1 packs the
# build's dist/ as it is instead (the cluster mutants of scripts/mutants.js).
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
if [ "${GRACEGATE_PACK_FROM_DIST:-}" = 1 ]; then
  # The build's own output as it is (scripts/mutants.js: a mutant edits the compiled files, and the
  # cluster's pods must run the mutant): dist/src without source maps, and the two bundles.
  [ -f "$repo/dist/gracegate.cjs" ] && [ -f "$repo/dist/hc.cjs" ] || { echo "pack.sh: GRACEGATE_PACK_FROM_DIST=1 needs a build (npm run build)" >&2; exit 1; }
  mkdir -p "$stage/dist"
  tar -C "$repo/dist" --exclude='*.map' --exclude='*.tsbuildinfo' -cf - src | tar -C "$stage/dist" -xf -
  cp "$repo/dist/gracegate.cjs" "$repo/dist/hc.cjs" "$stage/dist/"
else
  ln -s "$repo/node_modules" "$stage/node_modules"
  printf '{"extends": "./tsconfig.json", "include": ["src/**/*.ts"]}\n' > "$stage/tsconfig.pack.json"
  (cd "$stage" && node node_modules/typescript/bin/tsc -p tsconfig.pack.json)
  # The bundles bin/gracegate.js runs (scripts/bundle.js); their code cache is made where they run.
  mkdir -p "$stage/scripts" && cp "$repo/scripts/bundle.js" "$stage/scripts/"
  (cd "$stage" && node scripts/bundle.js --no-cache)
  rm -rf "$stage/scripts"
  rm "$stage/node_modules"
fi
name=$(cd "$stage" && npm pack --silent --pack-destination "$dest")
echo "$dest/$name"

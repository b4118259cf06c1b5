#!/usr/bin/env bash
# Prints the machine's cache folder for gracegate (created if missing): GRACEGATE_CACHE if set,
# else $XDG_CACHE_HOME/gracegate, else ~/.cache/gracegate. Outside every clone, so that builds and
# downloads keyed by version serve every clone on this machine and a clean clone rebuilds nothing.
set -euo pipefail
dir=${GRACEGATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gracegate}
mkdir -p "$dir"
cd "$dir" && pwd

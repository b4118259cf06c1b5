#!/bin/sh
# Helm post-renderer: rendered manifests on stdin, the same with gracegate's pod changes on stdout.
#   Helm 3: helm template|upgrade ... --post-renderer PATH/TO/post-render.sh --post-renderer-args --spec=gateway.yaml
#   Helm 4: the plugin in this directory runs this script (helm plugin install DIR).
# Which gracegate runs: $GRACEGATE if set (a command, e.g. "npx --no-install gracegate"), else
# the package this script ships in, else `gracegate` on PATH.
set -eu
if [ -n "${GRACEGATE:-}" ]; then
  # shellcheck disable=SC2086 # GRACEGATE may be a command with arguments
  exec $GRACEGATE post-render "$@"
fi
here=$(dirname "$(readlink -f "$0")")
launcher="$here/../../bin/gracegate.js"
if [ -f "$launcher" ]; then
  exec node "$launcher" post-render "$@"
fi
exec gracegate post-render "$@"

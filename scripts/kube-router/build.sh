#!/usr/bin/env bash
# Builds kube-router v2.1.0 from the Go module proxy: the enforcing NetworkPolicy controller of the
# test cluster (test/proof/cluster starts it beside kube-proxy in each node's network namespace, with
# only its firewall on: --run-firewall --run-router=false --run-service-proxy=false). v2.1.0 is
# the only version the proxy lists and the one k3s embeds. It is a test-only dependency: the
# Go vulnerability database lists advisories against this version (and some of its
# dependencies' pinned versions); nothing of it ships, and it runs only inside the network
# namespaces the tests create.
# Its module has no `replace` lines, so `go install module@version` builds it as pinned by its
# own go.mod and checked by the checksum database.
# Output: <machine cache>/kube-router/bin-<key>/kube-router, key = a hash of this script and the
# Go compiler's version: its own key, apart from the cluster's (scripts/cluster/build.sh), so a
# change here rebuilds only kube-router. A warm machine builds nothing.
# Prints the output folder on stdout. Module and build caches: scripts/go-env.sh.
# Usage: build.sh [--background]
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/kube-router

KUBE_ROUTER_MODULE=github.com/cloudnativelabs/kube-router/v2
KUBE_ROUTER_VERSION=v2.1.0

command -v go >/dev/null || { echo "kube-router build: needs Go (https://go.dev/dl/ or apt-get install golang)" >&2; exit 1; }
. scripts/go-env.sh

key=$( { cat "$0"; go version; } | sha256sum | cut -c1-16)
out="$(scripts/cache-dir.sh)/kube-router/bin-$key"
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi
log="$(dirname "$out")/build-$key.log"
if [ "${1:-}" = --background ]; then
  echo "kube-router build: building in the background, niced (progress: $log)" >&2
  mkdir -p "$(dirname "$out")"
  setsid nohup nice -n 10 bash "$PWD/$here/build.sh" >/dev/null 2>"$log" </dev/null &
  exit 0
fi
# One build of a key at a time: whoever comes second waits for the first (as scripts/cluster/build.sh).
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
if ! flock -n 9; then
  echo "kube-router build: waiting for the build under way (progress: $log)" >&2
  flock 9
  if [ -f "$out/.complete" ]; then
    echo "$out"
    exit 0
  fi
  echo "kube-router build: the build under way did not finish; building here" >&2
fi

start=$SECONDS
rm -rf "$out.partial" && mkdir -p "$out.partial"
echo "kube-router build: $KUBE_ROUTER_MODULE $KUBE_ROUTER_VERSION (go install, static)" >&2
ldflags="-s -w -X $KUBE_ROUTER_MODULE/pkg/version.Version=$KUBE_ROUTER_VERSION"
GOBIN="$out.partial" CGO_ENABLED=0 go install -trimpath -ldflags "$ldflags" \
  "$KUBE_ROUTER_MODULE/cmd/kube-router@$KUBE_ROUTER_VERSION"
touch "$out.partial/.complete"
rm -rf "$out" && mv "$out.partial" "$out"
echo "kube-router build: done in $((SECONDS - start)) s: $out" >&2
echo "$out"

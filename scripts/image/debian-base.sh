#!/usr/bin/env bash
# The images' Debian layer, as an uncompressed tar: Debian 13 (trixie)'s nodejs, Node 20 maintained
# by Debian's security team, and the libraries it needs, extracted from Debian's signed archive
# (apt checks every package against the host's debian-archive-keyring). The extract variant
# unpacks those packages only: no shell, no apt, no dpkg, nothing that could run a script.
# var/lib/dpkg/status still lists every package, so image scanners see their versions.
#   scripts/image/debian-base.sh OUT.tar
# Used by scripts/image/build.sh and by the Dockerfile, so both images have the same base.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: debian-base.sh OUT.tar" >&2; exit 2; }
SUITE=trixie
PACKAGES=nodejs

# After extraction: the status file lists the extracted packages (replacing the merged-usr hook's
# placeholder package), and the host's resolv.conf and hostname leave.
# shellcheck disable=SC2016 # expanded by mmdebstrap's hook shell, with $1 = the target
register='for deb in $MMDEBSTRAP_ESSENTIAL; do
    dpkg-deb --field "$1$deb" Package Version Architecture Multi-Arch Source Depends Pre-Depends Provides Breaks Conflicts Replaces Installed-Size Maintainer Description
    printf "Status: install ok installed\n\n"
  done > "$1/var/lib/dpkg/status"
  rm -f "$1/etc/resolv.conf" "$1/etc/hostname"'

# merged-usr: trixie's packages put the dynamic loader under /usr/lib64, and /lib64 -> usr/lib64
# is what every ELF binary names. No device nodes: the runtime mounts /dev.
mmdebstrap --quiet --variant=extract --include="$PACKAGES" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --extract-hook="$register" \
  --skip=output/dev --skip=output/mknod \
  "$SUITE" "$1" 2> >(grep -v -e '^dpkg-deb: building package' -e 'usr-is-merged' -e '^(Reading database' >&2)

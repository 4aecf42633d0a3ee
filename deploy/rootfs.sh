#!/bin/sh
# rootfs.sh ROOT SQLIOSIM BUSYBOX: lay out the root filesystem of the sqliosim image in ROOT:
# the binary at /sqliosim, busybox at /bin/busybox with each of its applets (sh, sleep, tar, sed…)
# a relative link to it beside it, an empty /tmp. deploy/Containerfile's build stage runs it,
# and tests/deploy/rootfs.rs runs it to build the same tree in a temporary directory and run the
# pods' commands in it (chroot, PID namespace), so that the test tests what the image holds.
#
# Not `busybox --install -s ROOT/bin`: it links each applet to the absolute path of the busybox
# that ran it (/usr/bin/busybox on a merged-/usr Debian), a path the image does not have, so
# /bin/sh, sleep and the tar of `kubectl cp` were links to nothing.
set -eu
[ $# -eq 3 ] || { echo "usage: rootfs.sh ROOT SQLIOSIM BUSYBOX" >&2; exit 2; }
root=$1 sqliosim=$2 busybox=$3
mkdir -p "$root/bin" "$root/tmp" "$root/etc"
cp "$sqliosim" "$root/sqliosim"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
chmod 1777 "$root/tmp"
# Every link of /bin resolves inside the tree (a relative link to /bin/busybox).
for f in "$root"/bin/*; do
  [ -e "$f" ] || { echo "rootfs.sh: $f links to nothing" >&2; exit 1; }
done

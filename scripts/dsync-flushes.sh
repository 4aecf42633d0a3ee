#!/bin/sh
# Which stacks honour O_DSYNC on which engine (issue #21 §5): 16 O_DIRECT|O_DSYNC 4 KiB
# overwrites with fio per engine, counting the flushes the stack passed down. On a loop device
# (ext4 on 512-byte sectors, XFS and btrfs on 4096-byte ones, direct I/O on) the device's own
# flush count (/sys/block/loopN/stat field 16) is read before and after; nothing else uses the
# device. On faultfs (FUSE) the daemon's request counts are read (`requests writes=… fsyncs=…`
# in its status): whether the write carried O_DSYNC, and whether a FUSE fsync followed.
# Needs root, fio, xfsprogs, btrfs-progs, and the faultfs binary for the FUSE rows.
# Usage: scripts/dsync-flushes.sh FAULTFS_BIN [WORKDIR]
set -eu
faultfs=$(realpath "${1:?faultfs binary}"); work=${2:-/tmp/dsync-flushes}
engines="io_uring libaio psync sync"
. "$(dirname "$0")/loopfs.sh"
mkdir -p "$work"
fio_16() { # FILE ENGINE: 16 O_DSYNC overwrites of a file laid out beforehand
    fio --name=d --filename="$1" --size=1M --bs=4k --rw=randwrite --direct=1 --sync=dsync \
        --ioengine="$2" --iodepth=4 --number_ios=16 --overwrite=1 --output-format=terse >/dev/null
}
flushes() { awk '{print $16}' "/sys/block/${1#/dev/}/stat"; }
for cell in ext4:512 xfs:4096 btrfs:4096; do
    fs=${cell%:*} sector=${cell#*:}
    truncate -s 400M "$work/img"
    dev=$(losetup --find --show --sector-size "$sector" --direct-io=on "$work/img")
    mkfs."$fs" -q "$([ "$fs" = ext4 ] && echo -F || echo -f)" "$dev"
    mkdir -p "$work/mnt" && mount "$dev" "$work/mnt"
    dd if=/dev/zero of="$work/mnt/f" bs=1M count=1 conv=fsync status=none
    for e in $engines; do
        sync; before=$(flushes "$dev")
        fio_16 "$work/mnt/f" "$e"
        echo "$fs-$sector $e: 16 writes, $(($(flushes "$dev") - before)) device flushes"
    done
    loopfs_umount "$work/mnt" # busy a moment after io_uring (docs/devices.md)
    losetup -d "$dev"; rm -f "$work/img"
done
mkdir -p "$work/backing" "$work/fuse"
"$faultfs" "$work/backing" "$work/fuse" & pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "$work/fuse/.faultfs-control" ] && break; sleep 0.2; done
dd if=/dev/zero of="$work/fuse/f" bs=1M count=1 status=none
for e in $engines; do
    before=$(grep '^requests' "$work/fuse/.faultfs-control")
    fio_16 "$work/fuse/f" "$e"
    echo "fuse (faultfs) $e: before [$before] after [$(grep '^requests' "$work/fuse/.faultfs-control")]"
done
fusermount3 -u "$work/fuse"; wait "$pid" || true

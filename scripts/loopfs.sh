# Sourced by the measurement scripts (deep-queue-4k.sh, rss-at-depth.sh): a filesystem on a loop
# device with 4096-byte sectors and direct I/O on, over an image file, torn down on exit.
#
#   loopfs_up IMAGE SIZE FS MOUNTPOINT   truncate IMAGE to SIZE, attach it (losetup --find, so
#                                        other users' devices are never touched), mkfs FS (xfs or
#                                        btrfs), mount it; sets LOOPFS_DEV
#   loopfs_down                          unmount (retrying while busy), detach, remove the
#                                        image (safe to call twice, or when loopfs_up never ran)
#   loopfs_umount MOUNTPOINT             unmount, retrying while the kernel still holds it busy
LOOPFS_DEV="" LOOPFS_IMG="" LOOPFS_MNT=""

loopfs_up() {
    LOOPFS_IMG=$1 LOOPFS_MNT=$4
    truncate -s "$2" "$LOOPFS_IMG"
    LOOPFS_DEV=$(losetup --find --show --sector-size 4096 --direct-io=on "$LOOPFS_IMG")
    case $3 in
    xfs) mkfs.xfs -q -f "$LOOPFS_DEV" ;;
    btrfs) mkfs.btrfs -q -f "$LOOPFS_DEV" ;;
    *) echo "filesystem $3: want xfs or btrfs" >&2; return 2 ;;
    esac
    mkdir -p "$LOOPFS_MNT"
    mount "$LOOPFS_DEV" "$LOOPFS_MNT"
}

# A process that used io_uring on the mount (sqliosim's default I/O service, fio's io_uring) lets
# go of its files only when the kernel has torn its ring down, a moment after it exited: until
# then umount says "target is busy" (32 of 101 cuts of a killed run, docs/devices.md). Retry for
# 5 s, then detach lazily so nothing is left mounted.
loopfs_umount() {
    for _ in $(seq 50); do
        umount "$1" 2>/dev/null && return 0
        mountpoint -q "$1" || return 0
        sleep 0.1
    done
    echo "umount $1: still busy after 5 s; detaching it lazily" >&2
    umount -l "$1" 2>/dev/null || true
}

loopfs_down() {
    [ -n "$LOOPFS_DEV" ] || return 0
    loopfs_umount "$LOOPFS_MNT"
    losetup -d "$LOOPFS_DEV" 2>/dev/null || true
    rm -f "$LOOPFS_IMG"
    LOOPFS_DEV=""
}

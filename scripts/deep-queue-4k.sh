#!/bin/sh
# Depth the device saw on a 4 KiB-sector loop device (issue #15): configs/deep-queue.cfg.ini on
# a fresh XFS or btrfs over a 1 GiB image (losetup --sector-size 4096 --direct-io=on), ROUNDS
# rounds with seeds 1..ROUNDS; prints IOPS, MB/s and the data file's depth per phase from the
# JSON summary. Needs root, xfsprogs/btrfs-progs and python3.
# Usage: scripts/deep-queue-4k.sh SQLIOSIM xfs|btrfs [ROUNDS] [WORKDIR]
set -eu
bin=$(realpath "${1:?sqliosim binary}"); fs=${2:?xfs or btrfs}; rounds=${3:-3}
work=${4:-/tmp/deep-queue-4k}
cfg=$(realpath "$(dirname "$0")/../configs/deep-queue.cfg.ini")
. "$(dirname "$0")/loopfs.sh"
mkdir -p "$work"
trap loopfs_down EXIT
loopfs_up "$work/img" 1G "$fs" "$work/mnt"
loop=$LOOPFS_DEV
echo "$fs on $loop ($(cat "/sys/block/${loop#/dev/}/queue/logical_block_size")-byte sectors)"
for seed in $(seq 1 "$rounds"); do
    rm -f "$work/mnt"/sqliosim.*
    code=0
    "$bin" run --config "$cfg" --dir "$work/mnt" --seed "$seed" >"$work/out.txt" 2>&1 || code=$?
    python3 - "$work/mnt/sqliosim.log.json" "$seed" "$code" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t, f = d["stats"]["total"], d["stats"]["files"][0]
phases = " ".join(f"{p['phase'].replace(' ', '_')}={p['max']}/{p['mean']:.1f}" for p in f["depth"]["phases"])
print(f"seed {sys.argv[2]} exit {sys.argv[3]}: {t['iops']:.0f} IOPS {t['mb_per_s']:.1f} MB/s; "
      f"depth max/mean {f['depth']['max']}/{f['depth']['mean']:.1f}; {phases}")
EOF
done

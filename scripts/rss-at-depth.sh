#!/bin/sh
# Memory at depth 4,096 (issue #15 §4): configs/deep-queue.cfg.ini (MaxOutstandingIO=0, the uring
# service's ceiling of 4,096 in flight) for SECONDS of main phase, with VmRSS and VmHWM read from
# /proc/PID/status every 5 s into OUT/rss.tsv (elapsed seconds, VmRSS kB, VmHWM kB).
#
# Usage: scripts/rss-at-depth.sh [SQLIOSIM [SECONDS [OUT]]]
#   defaults: target/release/sqliosim, 600, /tmp/rss-at-depth
#   LOOP=1    run on a 2 GiB XFS loop device with 4096-byte sectors and direct I/O on (root);
#             the device is unmounted and detached on exit. Otherwise the files go in OUT/data.
#   SEED=N    the run's seed (default 1).
#   CONFIG=F  another configuration (configs/deep-checkpoint.cfg.ini: checkpoints of ~1,000
#             single-page writes in flight instead of deep-queue's ~100-180).
set -eu
bin=${1:-target/release/sqliosim}; secs=${2:-600}; out=${3:-/tmp/rss-at-depth}
cfg=${CONFIG:-$(dirname "$0")/../configs/deep-queue.cfg.ini}
mkdir -p "$out"
data=$out/data
. "$(dirname "$0")/loopfs.sh"
trap loopfs_down EXIT INT TERM
mkdir -p "$data"
if [ "${LOOP:-0}" = 1 ]; then
    loopfs_up "$out/xfs.img" 2G xfs "$data"
    echo "data on $LOOPFS_DEV (XFS, 4096-byte sectors) mounted at $data"
fi
"$bin" run --config "$cfg" --dir "$data" --duration "$secs" --seed "${SEED:-1}" \
    --log "$out/sqliosim.log.xml" --json "$out/summary.json" > "$out/out.txt" 2>&1 &
pid=$!
start=$(date +%s)
printf 'elapsed_s\tvmrss_kb\tvmhwm_kb\n' > "$out/rss.tsv"
while kill -0 "$pid" 2>/dev/null; do
    now=$(date +%s)
    awk -v t=$((now - start)) '/^VmRSS/ {r=$2} /^VmHWM/ {h=$2} END {if (r) printf "%d\t%d\t%d\n", t, r, h}' \
        "/proc/$pid/status" >> "$out/rss.tsv" 2>/dev/null || true
    sleep 5
done
rc=0; wait "$pid" || rc=$?
echo "sqliosim exit $rc; samples in $out/rss.tsv"
# RSS at 30 s, 1, 5 and 10 min (the first sample at or after each), and growth after warm-up.
awk -F'\t' 'NR > 1 { t[n] = $1; r[n] = $2; h[n] = $3; n++ }
    END {
        split("30 60 300 600", at, " ")
        for (i = 1; i <= 4; i++) for (j = 0; j < n; j++) if (t[j] >= at[i]) {
            printf "RSS at %4d s: %d kB\n", t[j], r[j]; if (at[i] == 30) w = r[j]; break }
        printf "last sample %d s: RSS %d kB, HWM %d kB; growth after warm-up (30 s): %d kB\n",
            t[n-1], r[n-1], h[n-1], r[n-1] - w
    }' "$out/rss.tsv"
exit "$rc"

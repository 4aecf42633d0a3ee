#!/usr/bin/env bash
# Throughput of a seqwrites-style simulation (bulk-update users writing 600..1000 contiguous
# pages per gather write, every page stamped and later verified) against plain sequential
# direct writes of the same size with fio, back to back on the same filesystem. The
# simulation's figure is its data file's MB/s over the whole run (initial update, main phase,
# checkpoints and the audit pass that reads every page back), as its summary prints it.
#
# Usage: scripts/seqwrites-vs-direct.sh [DIR] [SECONDS] [SIZE_MB]
set -euo pipefail
DIR=${1:-./seqwrites-bench}
SECS=${2:-20}
SIZE=${3:-256}
BIN=${SQLIOSIM:-target/release/sqliosim}
command -v fio >/dev/null || { echo "fio is needed (apt-get install fio)"; exit 2; }
[ -x "$BIN" ] || cargo build --release
rm -rf "$DIR" && mkdir -p "$DIR"

# 1. The simulation: Microsoft's seqwrites sample, one data and one log file in DIR.
"$BIN" -cfg configs/sqliosim.seqwrites.cfg.ini -dir "$DIR" -size "$SIZE" -d "$SECS" --seed 1 > "$DIR/sim.out"
SIM=$(grep -E "sqliosim.mdx: " "$DIR/sim.out" | sed -E 's/.* ([0-9.]+) MB\/s.*/\1/')
USERS=$(grep -Eo "BulkUpdateUser = [0-9]+" "$DIR/sim.out" | grep -Eo "[0-9]+$")

# 2. fio: the same number of writers, 8 MB sequential direct writes, same file size, and
#    O_DSYNC like the sample's WriteThrough=TRUE.
fio --name=seq --directory="$DIR" --size="${SIZE}M" --rw=write --bs=8m --direct=1 --sync=dsync \
    --ioengine=psync --numjobs="$USERS" --group_reporting --runtime="$SECS" --time_based \
    --output-format=json > "$DIR/fio.json"
FIO=$(python3 -c "import json,sys; j=json.load(open('$DIR/fio.json')); print(round(j['jobs'][0]['write']['bw_bytes']/1048576,1))")

echo "seqwrites simulation (data file, $USERS bulk users): $SIM MB/s"
echo "fio sequential direct writes (8 MB, $USERS jobs):      $FIO MB/s"
python3 -c "print('ratio simulation / fio: %.2f' % ($SIM / $FIO))"
rm -rf "$DIR"

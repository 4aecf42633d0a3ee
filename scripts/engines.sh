#!/usr/bin/env bash
# engines.sh: 8 KiB O_DIRECT random reads at QD1 and QD32 through each engine of
# `sqliosim bench` (uring, libaio, psync) and through fio's libaio and io_uring engines, on the
# same file or device and region, in alternating order; prints IOPS and median latency per run
# and, with more than one round, the medians over the rounds (issue #24 §3).
#
# Usage: scripts/engines.sh [TARGET] [SECONDS] [ROUNDS]
#   TARGET   file or block device (default ./engines.dat); a file is created by sqliosim bench
#            if missing; a device is only read
#   SECONDS  measured seconds per run (default 5); each run also warms up 1 s
#   ROUNDS   rounds (default 3); round r starts with tool r mod 5, so each tool leads once in
#            five rounds and no tool always follows the same one
# Environment: SQLIOSIM (default target/release/sqliosim), SIZE (default 2G, for a new file),
#   FIO (default fio)
#
# Both tools read the region after the first MiB (sqliosim bench keeps it for its header), one
# thread, no verification. Latency is from submission to completion for both (fio's total
# `lat`, not `clat`: with libaio on a synchronous device the read is done inside io_submit,
# so fio's clat leaves it out). psync at QD32 is 32 helper threads for sqliosim; fio's psync has no
# depth, so fio runs libaio and io_uring only.
set -euo pipefail

TARGET=${1:-./engines.dat}
SECS=${2:-5}
ROUNDS=${3:-3}
SIZE=${SIZE:-2G}
SQLIOSIM=${SQLIOSIM:-target/release/sqliosim}
FIO=${FIO:-fio}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

command -v "$FIO" >/dev/null || { echo "fio not found (apt-get install fio)" >&2; exit 2; }
[ -x "$SQLIOSIM" ] || { echo "$SQLIOSIM not found (cargo build --release)" >&2; exit 2; }

if [ -b "$TARGET" ]; then
  BYTES=$(blockdev --getsize64 "$TARGET")
else
  "$SQLIOSIM" bench --file "$TARGET" --size "$SIZE" --duration 0.1 --warmup 0 >/dev/null
  BYTES=$(stat -c %s "$TARGET")
fi
REGION=$((BYTES - 1048576))

TOOLS=("sqliosim uring" "sqliosim libaio" "sqliosim psync" "fio libaio" "fio io_uring")

run_one() { # tool engine qd -> "iops p50_us" on stdout
  local tool=$1 engine=$2 qd=$3
  if [ "$tool" = sqliosim ]; then
    "$SQLIOSIM" bench --file "$TARGET" --rw read --pattern random \
      --block-size 8K --outstanding "$qd" --duration "$SECS" --warmup 1 --engine "$engine" \
      --json "$TMP/s.json" >/dev/null
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["passes"][0]["engine"] == sys.argv[2], "ran " + r["passes"][0]["engine"]
p50 = dict((p, v) for p, v in r["latency"]["percentiles"])[50.0]
print("%.0f %.1f" % (r["iops"], p50))' "$TMP/s.json" "$engine"
  else
    "$FIO" --name=eng --filename="$TARGET" --offset=1M --size="$REGION" --rw=randread --bs=8k \
      --direct=1 --ioengine="$engine" --iodepth="$qd" --time_based --runtime="$SECS" \
      --ramp_time=1 --randrepeat=0 --norandommap --readonly --lat_percentiles=1 \
      --output-format=json >"$TMP/f.json"
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print("%.0f %.1f" % (r["iops"], r["lat_ns"]["percentile"]["50.000000"] / 1000))' "$TMP/f.json"
  fi
}

printf '%-6s %-5s %-18s %10s %9s\n' round QD tool IOPS "p50 us"
for round in $(seq "$ROUNDS"); do
  for qd in 1 32; do
    n=${#TOOLS[@]}
    for i in $(seq 0 $((n - 1))); do
      t=${TOOLS[$(((i + round - 1) % n))]}
      read -r iops p50 < <(run_one $t "$qd")
      printf '%-6s %-5s %-18s %10s %9s\n' "$round" "$qd" "$t" "$iops" "$p50"
      printf '%s\t%s\t%s\t%s\n' "$qd" "$t" "$iops" "$p50" >>"$TMP/rows.tsv"
    done
  done
done

if [ "$ROUNDS" -gt 1 ]; then
  echo
  echo "medians over $ROUNDS rounds:"
  python3 - "$TMP/rows.tsv" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    qd, tool, iops, p50 = line.rstrip("\n").split("\t")
    rows.setdefault((int(qd), tool), []).append((float(iops), float(p50)))
print(f"{'QD':<5} {'tool':<18} {'IOPS':>10} {'p50 us':>9}")
for (qd, tool), runs in sorted(rows.items()):
    print(f"{qd:<5} {tool:<18} {statistics.median(r[0] for r in runs):10.0f} "
          f"{statistics.median(r[1] for r in runs):9.1f}")
PY
fi

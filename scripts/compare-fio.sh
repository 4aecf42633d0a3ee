#!/usr/bin/env bash
# compare-fio.sh: runs `sqliosim bench` and fio back to back on the same file, region and
# pattern, and prints the IOPS ratio and the CPU-time-per-I/O ratio for each row.
#
# Usage: scripts/compare-fio.sh [FILE] [SECONDS] [ROUNDS]
#   FILE     test file (default ./compare-fio.dat); created by sqliosim bench if missing
#   SECONDS  measured seconds per run (default 10); each run also warms up 1 s
#   ROUNDS   how many times to run every row (default 1); with more than one, the medians
#            of the ratios are printed at the end (shared machines are noisy). Odd rounds run
#            sqliosim first and even rounds fio first: use an even number for a fair median.
#   FILE may be a block device (its whole size is used; SIZE is ignored).
# Environment: SQLIOSIM (default target/release/sqliosim), SIZE (default 2G), FIO (default fio),
#   ENGINE         sqliosim's --engine (default uring); "default" gives none, so the engine
#                  probe chooses per row (psync at queue depth 1 where io_uring is not faster)
#   FIO_QD1_ENGINE fio's ioengine for the queue-depth-1 row (default io_uring; psync is fio's
#                  own default engine); the deeper rows always use io_uring
#   FIRST_ROUND    the number of the first round (default 1), so that single-round runs of
#                  two binaries can alternate which tool goes first
#
# Both tools use O_DIRECT, one job/thread, and the same region of the file (io_uring unless
# ENGINE or FIO_QD1_ENGINE say otherwise):
# sqliosim bench keeps its first MiB for the SQLIOSIM-BENCH header, so fio gets --offset=1M.
# CPU time per I/O = process user+system CPU seconds in the measured window / I/Os completed
# (sqliosim: getrusage over the window; fio: usr_cpu+sys_cpu of the job × its runtime).
set -euo pipefail

FILE=${1:-./compare-fio.dat}
SECS=${2:-10}
ROUNDS=${3:-1}
SIZE=${SIZE:-2G}
SQLIOSIM=${SQLIOSIM:-target/release/sqliosim}
FIO=${FIO:-fio}
ENGINE=${ENGINE:-uring}
FIO_QD1_ENGINE=${FIO_QD1_ENGINE:-io_uring}
FIRST_ROUND=${FIRST_ROUND:-1}
ENGINE_ARGS=()
[ "$ENGINE" = default ] || ENGINE_ARGS=(--engine "$ENGINE")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

command -v "$FIO" >/dev/null || { echo "fio not found (apt-get install fio)" >&2; exit 2; }
[ -x "$SQLIOSIM" ] || { echo "$SQLIOSIM not found (cargo build --release)" >&2; exit 2; }

# Create (or reuse) the file with sqliosim's header and stamped data.
"$SQLIOSIM" bench --file "$FILE" --size "$SIZE" --duration 0.1 --warmup 0 >/dev/null
if [ -b "$FILE" ]; then BYTES=$(blockdev --getsize64 "$FILE"); else BYTES=$(stat -c %s "$FILE"); fi
REGION=$((BYTES - 1048576))

# name | sqliosim rw | pattern | block | QD | fio rw
ROWS=(
  "8k randread QD1|read|random|8K|1|randread"
  "8k randread QD32|read|random|8K|32|randread"
  "8k randwrite QD32|write|random|8K|32|randwrite"
  "64k seq read QD8|read|sequential|64K|8|read"
  "64k seq write QD8|write|sequential|64K|8|write"
)

printf '%-20s %12s %12s %7s %14s %14s %7s %8s %8s %s\n' row "sqliosim IOPS" "fio IOPS" ratio \
  "sqliosim us/IO" "fio us/IO" ratio "s p50us" "f p50us" "engines (sqliosim/fio)"
for round in $(seq "$FIRST_ROUND" $((FIRST_ROUND + ROUNDS - 1))); do
for row in "${ROWS[@]}"; do
  IFS='|' read -r name rw pattern bs qd fiorw <<<"$row"
  run_sqliosim() {
    "$SQLIOSIM" bench --file "$FILE" --rw "$rw" --pattern "$pattern" --block-size "$bs" \
      --outstanding "$qd" --duration "$SECS" --warmup 1 "${ENGINE_ARGS[@]}" --json "$TMP/s.json" >/dev/null
  }
  fio_engine=io_uring
  [ "$qd" = 1 ] && fio_engine=$FIO_QD1_ENGINE
  run_fio() {
    "$FIO" --name=cmp --filename="$FILE" --offset=1M --size="$REGION" --rw="$fiorw" --bs="$bs" \
      --direct=1 --ioengine="$fio_engine" --iodepth="$qd" --time_based --runtime="$SECS" --ramp_time=1 \
      --randrepeat=0 --norandommap --group_reporting --output-format=json >"$TMP/f.json"
  }
  # The second tool of a pair finds caches below the guest (the host's page cache) warmed by
  # the first, so the order alternates: odd rounds run sqliosim first, even rounds fio first.
  if [ $((round % 2)) -eq 1 ]; then run_sqliosim; run_fio; else run_fio; run_sqliosim; fi
  python3 - "$name" "$TMP/s.json" "$TMP/f.json" "$TMP/rows.tsv" "$fio_engine" <<'PY'
import json, sys
name, s_path, f_path, rows, f_engine = sys.argv[1:6]
s = json.load(open(s_path))["results"][0]
f = json.load(open(f_path))["jobs"][0]
s_iops, s_cpu = s["iops"], s["cpu_us_per_io"]
ios = f["read"]["total_ios"] + f["write"]["total_ios"]
f_iops = f["read"]["iops"] + f["write"]["iops"]
f_cpu = (f["usr_cpu"] + f["sys_cpu"]) / 100.0 * f["job_runtime"] / 1000.0 / max(ios, 1) * 1e6
# Medians of a request's latency: sqliosim's submission to completion, fio's clat (its only
# percentiles; for psync the whole call).
s_p50 = dict(s["latency"]["percentiles"]).get(50.0, 0.0) if s.get("latency") else 0.0
side = f["read"] if f["read"]["total_ios"] else f["write"]
f_p50 = side["clat_ns"].get("percentile", {}).get("50.000000", 0) / 1000.0
s_engine = (s.get("passes") or [{}])[0].get("engine", "?")
print(f"{name:<20} {s_iops:12.0f} {f_iops:12.0f} {s_iops / max(f_iops, 1e-9):6.2f}x {s_cpu:14.2f} {f_cpu:14.2f} {s_cpu / max(f_cpu, 1e-9):6.2f}x {s_p50:8.1f} {f_p50:8.1f} {s_engine}/{f_engine}")
with open(rows, "a") as out:
    out.write(f"{name}\t{s_iops}\t{f_iops}\t{s_cpu}\t{f_cpu}\t{s_p50}\t{f_p50}\n")
PY
done
done

if [ "$ROUNDS" -gt 1 ]; then
  echo
  echo "medians over $ROUNDS rounds:"
  python3 - "$TMP/rows.tsv" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, *v = line.rstrip("\n").split("\t")
    rows.setdefault(name, []).append([float(x) for x in v])
for name, runs in rows.items():
    med = lambda i: statistics.median(r[i] for r in runs)
    iops_ratio = statistics.median(r[0] / max(r[1], 1e-9) for r in runs)
    cpu_ratio = statistics.median(r[2] / max(r[3], 1e-9) for r in runs)
    print(f"{name:<20} {med(0):12.0f} {med(1):12.0f} {iops_ratio:6.2f}x {med(2):14.2f} {med(3):14.2f} {cpu_ratio:6.2f}x {med(4):8.1f} {med(5):8.1f}")
PY
fi

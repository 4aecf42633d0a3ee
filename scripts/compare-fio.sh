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
# Environment: SQLIOSIM (default target/release/sqliosim), SIZE (default 2G), FIO (default fio)
#
# Both tools use io_uring, O_DIRECT, one job/thread, and the same region of the file:
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
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

command -v "$FIO" >/dev/null || { echo "fio not found (apt-get install fio)" >&2; exit 2; }
[ -x "$SQLIOSIM" ] || { echo "$SQLIOSIM not found (cargo build --release)" >&2; exit 2; }

# Create (or reuse) the file with sqliosim's header and stamped data.
"$SQLIOSIM" bench --file "$FILE" --size "$SIZE" --duration 0.1 --warmup 0 >/dev/null
BYTES=$(stat -c %s "$FILE")
REGION=$((BYTES - 1048576))

# name | sqliosim rw | pattern | block | QD | fio rw
ROWS=(
  "8k randread QD1|read|random|8K|1|randread"
  "8k randread QD32|read|random|8K|32|randread"
  "8k randwrite QD32|write|random|8K|32|randwrite"
  "64k seq read QD8|read|sequential|64K|8|read"
  "64k seq write QD8|write|sequential|64K|8|write"
)

printf '%-20s %12s %12s %7s %14s %14s %7s\n' row "sqliosim IOPS" "fio IOPS" ratio "sqliosim us/IO" "fio us/IO" ratio
for round in $(seq "$ROUNDS"); do
for row in "${ROWS[@]}"; do
  IFS='|' read -r name rw pattern bs qd fiorw <<<"$row"
  run_sqliosim() {
    "$SQLIOSIM" bench --file "$FILE" --rw "$rw" --pattern "$pattern" --block-size "$bs" \
      --outstanding "$qd" --duration "$SECS" --warmup 1 --engine uring --json "$TMP/s.json" >/dev/null
  }
  run_fio() {
    "$FIO" --name=cmp --filename="$FILE" --offset=1M --size="$REGION" --rw="$fiorw" --bs="$bs" \
      --direct=1 --ioengine=io_uring --iodepth="$qd" --time_based --runtime="$SECS" --ramp_time=1 \
      --randrepeat=0 --norandommap --group_reporting --output-format=json >"$TMP/f.json"
  }
  # The second tool of a pair finds caches below the guest (the host's page cache) warmed by
  # the first, so the order alternates: odd rounds run sqliosim first, even rounds fio first.
  if [ $((round % 2)) -eq 1 ]; then run_sqliosim; run_fio; else run_fio; run_sqliosim; fi
  python3 - "$name" "$TMP/s.json" "$TMP/f.json" "$TMP/rows.tsv" <<'PY'
import json, sys
name, s_path, f_path, rows = sys.argv[1:5]
s = json.load(open(s_path))["results"][0]
f = json.load(open(f_path))["jobs"][0]
s_iops, s_cpu = s["iops"], s["cpu_us_per_io"]
ios = f["read"]["total_ios"] + f["write"]["total_ios"]
f_iops = f["read"]["iops"] + f["write"]["iops"]
f_cpu = (f["usr_cpu"] + f["sys_cpu"]) / 100.0 * f["job_runtime"] / 1000.0 / max(ios, 1) * 1e6
print(f"{name:<20} {s_iops:12.0f} {f_iops:12.0f} {s_iops / max(f_iops, 1e-9):6.2f}x {s_cpu:14.2f} {f_cpu:14.2f} {s_cpu / max(f_cpu, 1e-9):6.2f}x")
with open(rows, "a") as out:
    out.write(f"{name}\t{s_iops}\t{f_iops}\t{s_cpu}\t{f_cpu}\n")
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
    print(f"{name:<20} {med(0):12.0f} {med(1):12.0f} {iops_ratio:6.2f}x {med(2):14.2f} {med(3):14.2f} {cpu_ratio:6.2f}x")
PY
fi

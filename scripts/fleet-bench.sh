#!/usr/bin/env bash
# fleet-bench.sh: times `sqliosim report DIR` over a directory of N synthetic run summaries
# (default 1,000), made from one real summary with varied host names, rates and latency
# histograms (scripts/fleet-synth.py), and prints the median wall time of ROUNDS runs.
#
# Usage: scripts/fleet-bench.sh [N] [ROUNDS]
#   N       summaries (default 1000)
#   ROUNDS  timed runs of `sqliosim report` (default 7); the median is printed
# Environment: SQLIOSIM (default target/release/sqliosim)
#
# The real summary comes from a 2-second `sqliosim run --json` in a temporary directory.
# Every tenth synthetic host is slow (IOPS x0.3, latencies shifted up), so the outlier analysis
# flags about N/10 hosts. The report's exit code is 0 (all clean); its output goes to
# /dev/null, except the first round's, kept as $TMP/report.txt for a look.
set -euo pipefail

N=${1:-1000}
ROUNDS=${2:-7}
SQLIOSIM=${SQLIOSIM:-target/release/sqliosim}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

[ -x "$SQLIOSIM" ] || { echo "$SQLIOSIM not found (cargo build --release)" >&2; exit 2; }

mkdir -p "$TMP/run"
cat > "$TMP/run/bench.cfg.ini" <<'INI'
[CONFIG]
TestCycles=1
[File1]
FileName=sqliosim.mdx
InitialSize=16
MaxSize=16
Increment=0
LogFile=FALSE
[File2]
FileName=sqliosim.ldx
InitialSize=4
MaxSize=4
Increment=0
LogFile=TRUE
INI
"$SQLIOSIM" -cfg "$TMP/run/bench.cfg.ini" -dir "$TMP/run" -d 2 --seed 1 \
    --json "$TMP/base.json" >/dev/null
python3 "$HERE/fleet-synth.py" "$TMP/base.json" "$TMP/fleet" "$N"
echo "$(find "$TMP/fleet" -name '*.json' | wc -l) summaries, $(du -sh "$TMP/fleet" | cut -f1)"

times=()
for r in $(seq 1 "$ROUNDS"); do
    out=/dev/null
    [ "$r" = 1 ] && out="$TMP/report.txt"
    start=$(date +%s.%N)
    "$SQLIOSIM" report "$TMP/fleet" >"$out"
    end=$(date +%s.%N)
    t=$(python3 -c "print(f'{$end - $start:.3f}')")
    times+=("$t")
    echo "round $r: $t s"
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "median of $ROUNDS rounds: $median s for $N summaries ($(nproc) CPUs)"
head -3 "$TMP/report.txt"
grep -E '^Fleet (totals|latency)' "$TMP/report.txt"

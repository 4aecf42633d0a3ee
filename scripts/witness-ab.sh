#!/bin/sh
# A/B of a run with and without --witness (a witness on loopback, its records in DIR/records):
# ROUNDS rounds on configs/quick.cfg.ini, alternating which goes first, the same seed for both
# in a round. One line per run (IOPS, MB/s, the witness's largest lag), then the medians.
# Usage: scripts/witness-ab.sh BINARY DIR [ROUNDS] [SECONDS]
set -eu
bin=$1 dir=$2 rounds=${3:-5} secs=${4:-10}
cfg=$(cd "$(dirname "$0")/.." && pwd)/configs/quick.cfg.ini
mkdir -p "$dir/records"
"$bin" witness --listen 127.0.0.1:0 --dir "$dir/records" >"$dir/witness.out" 2>"$dir/witness.err" &
wpid=$!
trap 'kill $wpid 2>/dev/null' EXIT
sleep 0.5
addr=$(sed -n 's/.*listening on \([0-9.:]*\),.*/\1/p' "$dir/witness.out")
one() { # name round [args]
    name=$1 rnd=$2; shift 2
    d=$dir/$name; rm -rf "$d"; mkdir -p "$d"
    "$bin" run --config "$cfg" --dir "$d" --duration "$secs" --seed "$rnd" --json "$d/s.json" "$@" \
        >"$d/out" 2>"$d/err"
    python3 - "$name" "$rnd" "$d" >>"$dir/results" <<'PY'
import json, sys
name, rnd, d = sys.argv[1:4]
st = json.load(open(d + "/s.json"))["stats"]
w = st["journal"].get("witness") or {}
print(f"{name} {rnd} iops={st['total']['iops']:.0f} mbs={st['total']['mb_per_s']:.1f} "
      f"witness_max_lag_ms={w.get('max_lag_ms', '-')} unacked={w.get('unacked', '-')}")
PY
    tail -1 "$dir/results"
}
: >"$dir/results"
r=1
while [ "$r" -le "$rounds" ]; do
    if [ $((r % 2)) -eq 1 ]; then
        one plain "$r"; one witness "$r" --witness "$addr"
    else
        one witness "$r" --witness "$addr"; one plain "$r"
    fi
    r=$((r + 1))
done
python3 - "$dir/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for name in ("plain", "witness"):
    iops = [float(r[2].split("=")[1]) for r in rows if r[0] == name]
    print(f"median {name}: {statistics.median(iops):.0f} IOPS over {len(iops)} runs")
PY

#!/bin/sh
# A/B of two sqliosim binaries on configs/quick.cfg.ini: ROUNDS rounds, alternating which binary
# goes first, the same seed for both in a round. One line per run: binary, round, IOPS, MB/s
# (from the JSON summary's totals), CPU µs per I/O ((user + system) / (IOPS × elapsed)) and per
# 8 KiB page moved (each one stamped or verified), and
# the run-wide depth max/mean.
# Usage: scripts/ab-quick.sh OLD NEW DIR [ROUNDS] [SECONDS]
set -eu
old=$1 new=$2 dir=$3 rounds=${4:-5} secs=${5:-15}
cfg=$(cd "$(dirname "$0")/.." && pwd)/configs/quick.cfg.ini
one() { # name binary round
    d=$dir/$1; rm -rf "$d"; mkdir -p "$d"
    /usr/bin/time -o "$d/time" -f "%U %S %e" "$2" run --config "$cfg" --dir "$d" \
        --duration "$secs" --seed "$3" --json "$d/s.json" >"$d/out" 2>"$d/err"
    python3 - "$1" "$3" "$d" <<'PY'
import json, sys
name, rnd, d = sys.argv[1:4]
u, s, e = map(float, open(d + "/time").read().split()[-3:])
st = json.load(open(d + "/s.json"))["stats"]
# Binaries before the depth reporting (schema /2's depth) have none: shown as "-".
t, dep = st["total"], st.get("depth") or {"max": "-", "mean": float("nan")}
ios = t["iops"] * st["elapsed_s"]
# Pages (8 KiB) moved, each stamped or verified: the cost per verified page of issue #15.
pages = (t["bytes_read"] + t["bytes_written"]) / 8192
print(f"{name} {rnd} iops={t['iops']:.0f} mbs={t['mb_per_s']:.0f} "
      f"cpu_us_per_io={(u + s) * 1e6 / ios:.1f} cpu_us_per_page={(u + s) * 1e6 / pages:.2f} depth_max={dep['max']} depth_mean={dep['mean']:.2f}")
PY
}
r=1
while [ "$r" -le "$rounds" ]; do
    if [ $((r % 2)) -eq 1 ]; then one old "$old" "$r"; one new "$new" "$r"
    else one new "$new" "$r"; one old "$old" "$r"; fi
    r=$((r + 1))
done

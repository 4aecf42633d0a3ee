#!/usr/bin/env bash
# One 8 s run of configs/quick.cfg.ini with BIN in a fresh directory made under DIR (and
# removed after; nothing else in DIR is touched), and the read latency each synchronous actor
# saw (the JSON summary's per-actor figures): what docs/performance.md, "The I/O service
# kinds", compares between binaries and engines. Alternate the binaries compared.
#   scripts/actor-latency.sh BIN DIR LABEL [run options…]
#   e.g. scripts/actor-latency.sh target/release/sqliosim /mnt/zr new --engine psync
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 BIN DIR LABEL [run options…]" >&2; exit 2; }
bin=$1 dir=$2 label=$3
shift 3
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
run=$(mktemp -d -p "$dir" actor-latency.XXXXXX)
trap 'rm -rf "$out" "$run"' EXIT
"$bin" run --config "$here/configs/quick.cfg.ini" --dir "$run" --duration 8 --seed 1 \
    --json "$out/s.json" "$@" >"$out/stdout" 2>&1
python3 - "$label" "$out/s.json" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
e = d["io_engine"]
io = {a["actor"]: a["io"] for a in d["stats"]["actors"]}
ru, au = io["RandomUser"]["latency"], io["AuditUser"]["latency"]
print(f"{label:10} used={e['used']:6} own_sync={e.get('own_sync', False)} "
      f"RandomUser n={ru['count']} p50={ru['p50_us']:.1f} p90={ru['p90_us']:.1f} µs | "
      f"AuditUser p50={au['p50_us']:.1f} µs | IOPS={d['stats']['total'].get('iops', 0):.0f} "
      f"| {d['outcome']}")
PY

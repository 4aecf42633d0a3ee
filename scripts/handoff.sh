#!/bin/sh
# The request hand-off (issue #15 §3), measured two ways; figures in docs/performance.md.
#
#   scripts/handoff.sh bench DIR [SECONDS ROUNDS]   benches/handoff.rs: one thread, 8 KiB random
#       O_DIRECT reads and writes at QD1 and QD64, through the shared I/O service against a
#       ring the thread owns, rounds alternating; a 256 MB file in DIR (ext4 here).
#   scripts/handoff.sh sim DIR [SECONDS ROUNDS]     configs/quick.cfg.ini with the asynchronous
#       actors on rings of their own (SQLIOSIM_OWN_RINGS=1) and on the shared service (the
#       default), alternating; IOPS and MB/s from the JSON summary, CPU (user + system) per I/O.
set -eu
what=$1 dir=$2 secs=${3:-} rounds=${4:-}
cd "$(dirname "$0")/.."
mkdir -p "$dir"
case $what in
bench)
    cargo build --release --bench handoff --message-format=json \
        | sed -n 's/.*"executable":"\([^"]*handoff[^"]*\)".*/\1/p' > "$dir/bin"
    "$(cat "$dir/bin")" "$dir/handoff.dat" "${secs:-3}" "${rounds:-5}"
    ;;
sim)
    cargo build --release
    for r in $(seq 1 "${rounds:-3}"); do
        for mode in own shared; do
            [ $((r % 2)) = 0 ] && mode=$([ $mode = own ] && echo shared || echo own)
            rings=$([ $mode = own ] && echo 1 || echo 0)
            out="$dir/$mode-$r"
            SQLIOSIM_OWN_RINGS=$rings /usr/bin/time -f "%U %S %e" -o "$out.time" \
                target/release/sqliosim run --config configs/quick.cfg.ini --dir "$dir/data" \
                --duration "${secs:-15}" --seed "$r" --force --json "$out.json" \
                --log "$out.xml" > "$out.out" 2>&1 || echo "$mode round $r: exit $?"
            python3 - "$out" "$mode" "$r" <<'PY'
import json, sys
out, mode, r = sys.argv[1:]
s = json.load(open(out + ".json"))
u, k, e = map(float, open(out + ".time").read().split()[-3:])
t = s["stats"]["total"]
ios = t["reads"] + t["scatter_reads"] + t["writes"] + t["gather_writes"]
mb = (t["bytes_read"] + t["bytes_written"]) / 1e6
el = s["stats"]["elapsed_s"]
print(f"{mode} round {r}: {ios/el:.0f} IOPS, {mb/el:.0f} MB/s, {(u+k)*1e6/ios:.0f} CPU us/IO, findings {s['findings_total']}")
PY
        done
    done
    ;;
*) echo "usage: $0 bench|sim DIR [SECONDS ROUNDS]" >&2; exit 2 ;;
esac

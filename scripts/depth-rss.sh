#!/bin/sh
# RSS over a run at depth 4,096 (issue #15 §4): configs/quick.cfg.ini with MaxOutstandingIO=4096,
# VmRSS read from /proc every 2 s. Usage: [MEM_MB=N] scripts/depth-rss.sh SQLIOSIM DIR SECONDS
set -eu
bin=${1:-target/release/sqliosim}; dir=${2:-/tmp/depth-rss}; secs=${3:-30}
mkdir -p "$dir"
sed -e "s/^MaxOutstandingIO=.*/MaxOutstandingIO=4096/" -e "s/^MaxMemoryMB=.*/MaxMemoryMB=${MEM_MB:-8}/" configs/quick.cfg.ini > "$dir/d.cfg.ini"
"$bin" run --config "$dir/d.cfg.ini" --dir "$dir" --duration "$secs" --seed 11 \
    --json "$dir/d.json" > "$dir/out.txt" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
    awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true
    sleep 2
done | tr '\n' ' '
echo
wait "$pid"; echo "exit $?"

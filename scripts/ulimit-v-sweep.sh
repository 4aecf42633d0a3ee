#!/usr/bin/env bash
# Runs a tiny simulation under `ulimit -v` from 16 to 120 MB (refusals below about 70 MB, finished runs above), 20 limits per round, and tallies
# the exit codes: 0 (clean) and 2 (a clear error) are right; anything else (134: an abort) is
# the defect issue #36 §12 describes. Usage: scripts/ulimit-v-sweep.sh [BINARY] [ROUNDS]
set -u
bin=${1:-target/release/sqliosim}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/tiny.cfg.ini" <<'INI'
[CONFIG]
MaxMemoryMB=4
TestCycles=1
TestCycleDuration=1
NoBuffering=FALSE
UseScatterGather=FALSE
[AuditUser]
UserCount=0
[ReadAheadUser]
UserCount=0
[BulkUpdateUser]
UserCount=0
[File1]
FileName=sqliosim.mdx
InitialSize=2
MaxSize=2
Increment=0
Shrinkable=FALSE
LogFile=FALSE
[File2]
FileName=sqliosim.ldx
InitialSize=1
MaxSize=1
Increment=0
Shrinkable=FALSE
LogFile=TRUE
INI
declare -A tally
for _ in $(seq 1 "$rounds"); do
  for i in $(seq 0 19); do
    mb=$((16 + i * 104 / 19))
    rm -rf "$work/d"
    prlimit --as=$((mb * 1000000)) -- "$bin" run --config "$work/tiny.cfg.ini" --dir "$work/d" \
      --duration 1s >"$work/out" 2>"$work/err" </dev/null
    code=$?
    tally[$code]=$((${tally[$code]:-0} + 1))
    if [ "$code" -ne 0 ] && [ "$code" -ne 2 ]; then
      echo "ulimit -v ${mb} MB: exit $code: $(tail -1 "$work/err")"
    fi
  done
done
for code in "${!tally[@]}"; do echo "exit $code: ${tally[$code]}"; done

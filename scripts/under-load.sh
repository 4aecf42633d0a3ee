#!/usr/bin/env bash
# Runs a command with a busy machine beside it: four CPU spinners and a disk writer (1 MiB
# direct writes over a 256 MiB file, rewritten in a loop, each pass ended by fdatasync), so a
# test that needs an idle machine fails here rather than on a burn-in host or in CI.
# Prints the command's wall time and exits with its exit code; the load stops with it.
#
# Usage: scripts/under-load.sh [--spinners N] [--disk DIR] -- COMMAND [ARGS...]
#   scripts/under-load.sh -- cargo test --release --workspace --no-fail-fast
#   scripts/under-load.sh -- target/release/sqliosim selftest
set -u
spinners=4
disk=${TMPDIR:-/tmp}
while [ $# -gt 0 ]; do
  case $1 in
    --spinners) spinners=$2; shift 2 ;;
    --disk) disk=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "under-load.sh: unknown option $1 (expected --spinners N, --disk DIR, then -- COMMAND)" >&2; exit 2 ;;
  esac
done
if [ $# -eq 0 ]; then
  echo "under-load.sh: no command given (usage: scripts/under-load.sh [--spinners N] [--disk DIR] -- COMMAND)" >&2
  exit 2
fi
work=$(mktemp -d "$disk/under-load.XXXXXX") || exit 2
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait "${pids[@]}" 2>/dev/null
  rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq "$spinners"); do
  (while :; do :; done) &
  pids+=($!)
done
(
  while :; do
    dd if=/dev/zero of="$work/load" bs=1M count=256 oflag=direct conv=fdatasync status=none 2>/dev/null ||
      dd if=/dev/zero of="$work/load" bs=1M count=256 conv=fdatasync status=none
  done
) &
pids+=($!)
echo "under-load.sh: $spinners spinners and a disk writer in $work; running: $*" >&2
start=$(date +%s)
"$@"
rc=$?
echo "under-load.sh: exit $rc after $(($(date +%s) - start)) s under load" >&2
exit $rc

#!/bin/sh
# Peak RSS of a run per size of its data file (issue #39, "a terabyte in a gigabyte"):
# configs/quick.cfg.ini with the data file fixed at each size (InitialSize = MaxSize, no growth,
# no shrink), run for SECONDS under /usr/bin/time; prints size, pages, peak RSS, and the bytes
# of RAM per 8 KB page between consecutive sizes.
#
# Usage: scripts/memory-per-page.sh [SQLIOSIM [DIR [SECONDS [SIZES_MB...]]]]
#   defaults: target/release/sqliosim, /var/tmp, 3, 256 4096 8192
#   MEMORY_CFG=FILE runs FILE instead of configs/quick.cfg.ini (its [File1] fixed the same way),
#   e.g. configs/quick-checkdb.cfg.ini, whose DBCC check keeps its snapshot open all the run.
# Each run works in a fresh directory made under DIR and removes only that.
set -eu
bin=${1:-target/release/sqliosim}; base=${2:-/var/tmp}; secs=${3:-3}
[ $# -gt 3 ] && shift 3 || set -- 256 4096 8192
cfg_src=${MEMORY_CFG:-$(dirname "$0")/../configs/quick.cfg.ini}
work=$(mktemp -d "$base/memory-per-page.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
prev_pages=; prev_kb=
printf 'data_mb\tpages\tpeak_rss_kb\tbytes_per_page_since_previous\n'
for mb in "$@"; do
    cfg=$work/cfg.ini
    # The data file ([File1]) fixed at MB: every page tracked from the start.
    awk -v mb="$mb" '
        /^\[/ { sect = $0 }
        sect == "[File1]" && /^InitialSize=/ { print "InitialSize=" mb; next }
        sect == "[File1]" && /^MaxSize=/ { print "MaxSize=" mb; next }
        sect == "[File1]" && /^Increment=/ { print "Increment=0"; next }
        sect == "[File1]" && /^Shrinkable=/ { print "Shrinkable=FALSE"; next }
        { print }' "$cfg_src" > "$cfg"
    rm -rf "$work/data"; mkdir -p "$work/data"
    /usr/bin/time -f %M -o "$work/rss" "$bin" run --config "$cfg" --dir "$work/data" \
        --duration "$secs" --seed 1 > "$work/out.txt" 2>&1 || {
        echo "run of $mb MB failed:" >&2; tail -5 "$work/out.txt" >&2; exit 1; }
    kb=$(tail -1 "$work/rss"); pages=$((mb * 128))
    per=-
    if [ -n "$prev_kb" ]; then
        per=$(awk -v a="$prev_kb" -v b="$kb" -v p="$prev_pages" -v q="$pages" \
            'BEGIN { printf "%.1f", (b - a) * 1024 / (q - p) }')
    fi
    printf '%s\t%s\t%s\t%s\n' "$mb" "$pages" "$kb" "$per"
    prev_kb=$kb; prev_pages=$pages
done

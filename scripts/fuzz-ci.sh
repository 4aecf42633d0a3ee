#!/usr/bin/env bash
# scripts/fuzz-ci.sh [SECONDS]: the coverage-guided fuzzer of fuzz/ (cargo-fuzz, libFuzzer) for
# SECONDS (60) over a copy of its seeds and regressions, as CI runs it (.ci/run, in the
# background of the test suite at the lowest CPU priority). Installs cargo-fuzz 0.13.2 when
# missing. The instrumented build is the dev profile (about 2 minutes on 2 cores, a third of the
# release build's, at about a third of its executions per second) and without a sanitizer (`-s
# none`: stable Rust, no ASan; the readers are safe code, so a panic, an abort, an
# out-of-memory or a hang past 10 s is what it can find). Exit non-zero on any finding: the
# input is in fuzz/artifacts/readers/; once fixed, copy it to fuzz/regressions/ (replayed by
# tests/cli/fuzz_readers.rs in every test run).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
if ! cargo fuzz --version 2>/dev/null | grep -q '0\.13\.2'; then
  cargo install cargo-fuzz --version 0.13.2 --locked --quiet
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp fuzz/corpus/readers/* fuzz/regressions/* "$work"/
cd fuzz
cargo fuzz build --dev -s none readers
# -timeout: one input for more than 10 s is a hang; -rss_limit_mb: a reader that takes more is
# a finding (the readers bound their allocations by their input).
cargo fuzz run --dev -s none readers "$work" -- \
  -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 2>&1 \
  | sed -E '/^#[0-9]+[[:space:]]+(NEW|REDUCE)/d; /# Uses: /d'

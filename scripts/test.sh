#!/usr/bin/env bash
# The test suite in two tiers (docs/testing.md, "Tiers").
#
#   scripts/test.sh --fast   the fast tier: the unit tests, faultfs's tests, the doc test and the
#                            binaries that run in process or briefly (FAST below); a few minutes
#   scripts/test.sh          both tiers: the slow tier's binaries (SLOW: real runs, the kernel's
#                            mounts and loop devices, the fleet deployment), which spend most of
#                            their time waiting on runs and timers, start side by side in the
#                            background, each writing target/test-logs/NAME.log; the fast tier
#                            runs meanwhile; each slow log is printed whole when it ends
#
# Every failing test binary is named at the end and the exit status is 1 (2 when the tests do
# not build). Every test binary of the workspace is in exactly
# one tier: tests/layers.rs reads the two lists below and fails on one missing or listed twice.
# Extra arguments go to every test binary (e.g. `scripts/test.sh -- --test-threads 1`).
set -uo pipefail
cd "$(dirname "$0")/.."

FAST=(bench cli crash_model_compact layers model report tests)
SLOW=(kernel runs deploy)

tier=full
if [ "${1:-}" = --fast ]; then tier=fast; shift; fi
if [ "${1:-}" = -- ]; then shift; fi
extra=("$@")

fast_args=(--lib --bins)
for t in "${FAST[@]}"; do fast_args+=(--test "$t"); done
slow_args=()
for t in "${SLOW[@]}"; do slow_args+=(--test "$t"); done

# Build first, so that a build error stops here and the slow binaries run side by side.
cargo test --release --workspace --no-run "${fast_args[@]}" || exit 2
# The tests that mount faultfs take the daemon this build made (--bins), rather than building it
# again from a test binary with another feature set (tests/common/faultfs_bin.rs).
faultfs=${CARGO_TARGET_DIR:-target}/release/faultfs
if [ -z "${FAULTFS_BIN:-}" ] && [ -x "$faultfs" ]; then
  FAULTFS_BIN=$(realpath "$faultfs")
  export FAULTFS_BIN
fi
failed=()
pids=()
logs=()
if [ "$tier" = full ]; then
  built=$(cargo test --release --workspace --no-run "${slow_args[@]}" 2>&1) || {
    printf '%s\n' "$built"
    exit 2
  }
  mkdir -p target/test-logs
  for t in "${SLOW[@]}"; do
    exe=$(printf '%s\n' "$built" | sed -n "s|^ *Executable tests/$t/main.rs (\(.*\))\$|\1|p")
    if [ -z "$exe" ] || [ ! -x "$exe" ]; then
      echo "test.sh: no executable for the test binary '$t' in cargo's output" >&2
      exit 2
    fi
    log=target/test-logs/$t.log
    echo "test.sh: $t started in the background ($exe), its output in $log"
    # Cargo runs an integration test with the package's root as the working directory.
    ("$exe" "${extra[@]}" > "$log" 2>&1) &
    pids+=($!)
    logs+=("$log")
  done
fi

start=$SECONDS
cargo test --release --workspace --no-fail-fast "${fast_args[@]}" -- "${extra[@]}" ||
  failed+=("fast tier (see above)")
cargo test --release --workspace --doc -- "${extra[@]}" || failed+=("doc tests")
echo "test.sh: the fast tier took $((SECONDS - start)) s"

for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then rc=0; else rc=$?; fi
  echo
  echo "=== ${SLOW[$i]} (exit $rc, $((SECONDS - start)) s since the start) ==="
  cat "${logs[$i]}"
  [ "$rc" = 0 ] || failed+=("${SLOW[$i]} (exit $rc)")
done

if [ ${#failed[@]} -gt 0 ]; then
  echo
  echo "test.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "test.sh: every test binary of the $tier tier passed in $((SECONDS - start)) s"

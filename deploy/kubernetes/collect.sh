#!/usr/bin/env bash
# Collect the results of sqliosim's pods (deploy/kubernetes) and run the fleet report over them.
#
#   collect.sh [--from-logs | --from-volume] [-n NAMESPACE] [-l SELECTOR] [--job NAME]
#              [--out DIR] [--sqliosim PATH] [-- REPORT-OPTIONS...]
#
# --from-logs (default): each pod printed its JSON summary between marker lines; read them with
#   `kubectl logs` into DIR/<name>/sqliosim.log.json. Needs no shared volume, but brings back only
#   the summaries (the logs, dumps and bundles stay on the results volume). A pod restarted
#   after a cut printed up to three: <name>.cut (the cut run: UNFINISHED), <name>.verify (what
#   verify found in the cut set) and <name> (the resumed run, SQLIOSIM_ON_RESTART=resume).
# --from-volume: copy the whole shared results volume (logs, summaries, dumps, bundles) with
#   `kubectl cp` through the results-reader pod (results-reader.yaml), then delete that pod.
# Then `sqliosim report DIR REPORT-OPTIONS...` (e.g. --html fleet.html --junit junit.xml).
# Exit code: the report's (0 clean, 1 corruption on some host, 2 a run did not finish or a
# result is unreadable: a node whose burn-in was cut and not resumed is UNFINISHED); 2 as well
# when a pod printed no summary (still running, or failed before sqliosim ran) or said that a
# summary was not written, which is named on stderr.
set -euo pipefail

mode=logs ns=sqliosim selector=app.kubernetes.io/name=sqliosim out=./sqliosim-k8s-results
sqliosim=${SQLIOSIM:-sqliosim}
while [ $# -gt 0 ]; do
  case "$1" in
    --from-logs) mode=logs ;;
    --from-volume) mode=volume ;;
    -n|--namespace) ns=$2; shift ;;
    -l|--selector) selector=$2; shift ;;
    --job) selector=job-name=$2; shift ;;
    --out) out=$2; shift ;;
    --sqliosim) sqliosim=$2; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "collect.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

missing=0
from_logs() {
  local pods pod name
  # Oldest first: a retried index's later pod overwrites the summary of its failed attempt.
  pods=$(kubectl get pods -n "$ns" -l "$selector" --sort-by=.metadata.creationTimestamp -o name)
  [ -n "$pods" ] || { echo "collect.sh: no pod in namespace $ns matches $selector" >&2; exit 2; }
  for pod in $pods; do
    local log
    if ! log=$(kubectl logs -n "$ns" "$pod" -c sqliosim); then
      echo "collect.sh: no log from $pod" >&2
      missing=1
      continue
    fi
    # A pod restarted after a cut prints up to three summaries (run.sh in
    # results/configmap.yaml): NAME.cut, NAME.verify and NAME; each gets its own directory.
    names=$(printf '%s\n' "$log" | sed -n 's/^----- BEGIN sqliosim summary \(.*\) -----$/\1/p' | sort -u)
    # run.sh names each summary it could not print, and why.
    printf '%s\n' "$log" | sed -n "s#^sqliosim: no summary #collect.sh: $pod: no summary #p" >&2
    if printf '%s\n' "$log" | grep -q '^sqliosim: no summary '; then
      missing=1
    fi
    if [ -z "$names" ]; then
      echo "collect.sh: no summary in the log of $pod (still running, or it failed before sqliosim ran)" >&2
      missing=1
      continue
    fi
    for name in $names; do
      mkdir -p "$out/$name"
      printf '%s\n' "$log" \
        | sed -n "/^----- BEGIN sqliosim summary $name -----\$/,/^----- END sqliosim summary $name -----\$/p" \
        | sed '1d;$d' > "$out/$name/sqliosim.log.json"
    done
  done
}

from_volume() {
  local here
  here=$(cd "$(dirname "$0")" && pwd)
  # The reader names the placeholder image `sqliosim` (kustomization.yaml sets the real one
  # for the workloads): run it with the image of the pods being collected.
  local image
  image=$(kubectl get pods -n "$ns" -l "$selector" -o jsonpath='{.items[0].spec.containers[0].image}')
  [ -n "$image" ] || { echo "collect.sh: no pod matches $selector to take the image from" >&2; exit 2; }
  sed "s#^\( *image:\) sqliosim\$#\1 $image#" "$here/results-reader.yaml" | kubectl apply -n "$ns" -f - >/dev/null
  kubectl wait -n "$ns" --for=condition=Ready pod/sqliosim-results-reader --timeout=300s >/dev/null
  mkdir -p "$out"
  kubectl cp -n "$ns" sqliosim-results-reader:/results "$out"
  kubectl delete -n "$ns" pod/sqliosim-results-reader --wait=false >/dev/null
}

# Only this collection's results: never mix them with an earlier one's (nor delete anything).
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "collect.sh: $out is not empty; give a new directory with --out" >&2
  exit 2
fi
mkdir -p "$out"
case "$mode" in
  logs) from_logs ;;
  volume) from_volume ;;
esac
rc=0
"$sqliosim" report "$out" "$@" || rc=$?
if [ "$missing" -ne 0 ] && [ "$rc" -eq 0 ]; then
  rc=2
fi
exit "$rc"

#!/usr/bin/env bash
# The landing gate under load (issue: "the same commit, the same result, every time"): RUNS runs of
# .ci/run, each in a fresh clone of this checkout's HEAD (with ../shared beside it, as CI has it), beside
# BUSY busy loops that take the cores from it, as other work on the machine would.
#
#   bench/under-load.sh [RUNS] [BUSY]      default 3 runs beside 2 busy loops
#
# Each run's output goes to bench/out/under-load/run-N.log; a line per run gives its exit code, wall
# time and the closing counts (`tests: ...` and the fuzzing table's runs), so two runs can be compared.
# The busy loops stop with the script (and after 4 hours at the latest). The caches are the usual ones
# (~/.cache/wheelcheck/build): this measures flakiness, not a cold build.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3} busy=${2:-2}
out=$PWD/bench/out/under-load
mkdir -p "$out"
loops=()
stop() { ((${#loops[@]})) && kill "${loops[@]}" 2>/dev/null; wait 2>/dev/null || true; }
trap stop EXIT
for ((i = 0; i < busy; i++)); do
  timeout 4h sh -c 'while :; do :; done' &
  loops+=($!)
done
echo "under-load: $runs run(s) of .ci/run beside $busy busy loop(s); logs in $out"
failed=0
for ((n = 1; n <= runs; n++)); do
  dir=$(mktemp -d /tmp/wheelcheck-under-load.XXXXXX)
  git clone -q "$PWD" "$dir/main"
  ln -s "$(realpath ../shared)" "$dir/shared"
  start=$SECONDS rc=0
  (cd "$dir/main" && CI=true bash .ci/run) >"$out/run-$n.log" 2>&1 </dev/null || rc=$?
  ((rc == 0)) || failed=1
  fuzz=$(awk '/^target +runs/{f=1; next} f && NF>=7 {printf "%s=%s ", $1, $2} /^run.sh: logs/{f=0}' "$out/run-$n.log")
  printf 'run %d: exit %d in %d:%02d; %s; fuzz runs: %s\n' "$n" "$rc" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) \
    "$(grep '^tests: ' "$out/run-$n.log" | tail -1)" "${fuzz:-none}" | tee -a "$out/summary"
  rm -rf "$dir"
done
exit "$failed"

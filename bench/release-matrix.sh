#!/usr/bin/env bash
# The release-matrix benchmark: FlagOS's catalog (68 wheels, tests/flagos/catalog.py) on a loopback replica of
# its indexes, scanned against the 40 FlagOS images (2,720 cells) by samples/flagos-release/release-matrix.sh:
# one cold scan (empty profile cache: every wheel read) and RUNS-1 warm ones (the profile cache kept, a fresh
# state: every wheel checked again, no wheel read), each with its wall time and the requests and bytes the
# index served; then one more warm scan under /usr/bin/time -v (CPU and peak memory). Target: a warm scan
# under 2 minutes. Uses build/wheelcheck as it is; results in bench/out/release-matrix/ and on stdout.
#
#   bench/release-matrix.sh        # RUNS=4
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out/release-matrix
runs=${RUNS:-4}
samples/flagos-release/release-matrix.sh --out "$out" --runs "$runs" >/dev/null
python3 - "$out/runs.json" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1]))
warm = [r["seconds"] for r in runs if r["cache"] == "warm"]
print("| run | cache | wall s | requests | bytes |\n| --- | --- | --- | --- | --- |")
for r in runs:
    print(f"| {r['run']} | {r['cache']} | {r['seconds']} | {r['requests']} | {r['bytes']} |")
print(f"\nwarm median: {statistics.median(warm):.2f} s over {len(warm)} runs (target: under 120 s)")
PY
# One warm scan under /usr/bin/time -v, against the same replica and cache.
python3 tests/net/server.py --root "$out/index" >"$out/bench-server.out" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '^PORT ' "$out/bench-server.out" 2>/dev/null && break; sleep 0.1; done
base=http://127.0.0.1:$(awk '/^PORT /{print $2}' "$out/bench-server.out")
args=()
for index in "$out"/index/*/; do args+=(--index "$base/$(basename "$index")/simple"); done
for project in $(ls "$out"/index/*/ | grep -v ':$' | grep . | sort -u); do args+=(--project "$project"); done
rm -rf "$out/bench-state"
WHEELCHECK_OFFLINE=1 /usr/bin/time -v build/wheelcheck scan "${args[@]}" --image 'flagos-*' --state "$out/bench-state" \
  --cache-dir "$out/cache" --quiet >/dev/null 2>"$out/time.txt" || true
grep -E "Elapsed|User time|System time|Maximum resident" "$out/time.txt" | sed 's/^\t*/  /'

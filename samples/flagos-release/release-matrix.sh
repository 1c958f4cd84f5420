#!/usr/bin/env bash
# FlagOS's release matrix: every wheel of FlagOS's catalog (55 release versions, built here with compiled code by
# tests/flagos/catalog.py from db/flagos/release-facts.json) on a loopback replica of FlagOS's indexes
# (flagos-pypi-hosted, flagos-pypi-daily, flagos-pypi-{vendor}), scanned against every FlagOS image (40), with
# the pins a setup script sources, per image.
#
#   samples/flagos-release/release-matrix.sh [--wheelcheck BIN] [--out DIR] [--runs N]
#
# Writes OUT/report/report.{json,md,html} and OUT/version-pins.env (OUT: build/flagos-release). Runs the scan N
# times (default 2): the first from an empty profile cache (cold: every wheel downloaded), the others from the
# warm cache, each with a fresh state so that every wheel is new and checked against every image; says each
# run's time and the requests and bytes the index served (OUT/runs.json). Exit 0 when the scans ran (their own
# exit 1, a wheel incompatible with an image it is for, is the matrix's content), 2 on a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
wc=$here/build/wheelcheck
out=$here/build/flagos-release
runs=2
while (($#)); do
  case $1 in
    --wheelcheck) wc=$2; shift ;;
    --out) out=$2; shift ;;
    --runs) runs=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "release-matrix.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -x $wc ]] || { echo "release-matrix.sh: $wc is not built (scripts/quickstart.sh builds it)" >&2; exit 2; }
mkdir -p "$out"
python3 "$here/tests/flagos/catalog.py" --db "$here/db" --out "$out"

python3 "$here/tests/net/server.py" --root "$out/index" >"$out/server.out" 2>"$out/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '^PORT ' "$out/server.out" 2>/dev/null && break; sleep 0.1; done
base=http://127.0.0.1:$(awk '/^PORT /{print $2}' "$out/server.out")
args=()
for index in "$out"/index/*/; do args+=(--index "$base/$(basename "$index")/simple"); done
for project in $(ls "$out"/index/*/ | grep -v ':$' | grep . | sort -u); do args+=(--project "$project"); done
stats() {  # requests and bytes the server sent since the last call
  python3 - "$base" <<'PY'
import json, sys, urllib.request
base = sys.argv[1]
stats = json.load(urllib.request.urlopen(base + "/_stats"))
urllib.request.urlopen(urllib.request.Request(base + "/_stats", method="DELETE")).read()
print(len(stats), sum(s.get("bytes_sent", 0) for s in stats))
PY
}
# The images' torch is declared with PyTorch's index for its export tables; the matrix reads none (offline).
export WHEELCHECK_OFFLINE=1
rm -rf "$out/cache"
stats >/dev/null
echo "[" >"$out/runs.json"
for run in $(seq "$runs"); do
  rm -rf "$out/state" "$out/report"
  start=$(date +%s.%N)
  rc=0
  "$wc" scan "${args[@]}" --image 'flagos-*' --state "$out/state" --cache-dir "$out/cache" --report "$out/report" \
    --pins "$out/version-pins.env" --quiet >"$out/scan.txt" 2>"$out/scan.err" || rc=$?
  end=$(date +%s.%N)
  read -r requests bytes < <(stats)
  secs=$(python3 -c "print(f'{$end - $start:.2f}')")
  what=$([[ $run == 1 ]] && echo "cold (empty profile cache)" || echo "warm (profile cache kept, fresh state)")
  echo "run $run, $what: ${secs}s, $requests requests, $bytes bytes served; scan exit $rc" >&2
  sep=$([[ $run == "$runs" ]] && echo "" || echo ",")
  echo "  {\"run\": $run, \"cache\": \"$([[ $run == 1 ]] && echo cold || echo warm)\", \"seconds\": $secs, \"requests\": $requests, \"bytes\": $bytes, \"exit\": $rc}$sep" >>"$out/runs.json"
  if ((rc > 1)); then cat "$out/scan.err" >&2; exit 2; fi
done
echo "]" >>"$out/runs.json"
tail -1 "$out/scan.err" >&2
echo "release matrix: $out/report/report.html (report.md, report.json); pins: $out/version-pins.env" >&2

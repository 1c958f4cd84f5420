#!/usr/bin/env bash
# The check benchmark: a cached wheel against every image of the db, side by side with one image, the
# manylinux x86_64 packaging targets and the bare process, medians from hyperfine; peak memory from /usr/bin/time -v.
#   bench/check.sh      # needs the corpus wheels (../shared/corpus/make-real-wheels.sh --large)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j"$(nproc)" >/dev/null
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
../shared/corpus/fetch-real-binaries.sh --large >/dev/null
../shared/corpus/make-real-wheels.sh --large >/dev/null
out=bench/out; mkdir -p "$out"
cache=$(mktemp -d); trap 'rm -rf "$cache"' EXIT
wc=build/wheelcheck
for w in "$corpus"/wheels/torch_cuda_debian-*.whl "$corpus"/wheels/torch_python_ext-*.whl; do
  name=$(basename "$w" .whl)
  WHEELCHECK_CACHE_DIR=$cache $wc inspect -q --json "$w" >/dev/null   # the cached profile a check reuses
  hyperfine -N --warmup 2 --runs "${RUNS:-20}" -i --export-json "$out/check-$name.json" \
    -n process "$wc --version" \
    -n one "env WHEELCHECK_CACHE_DIR=$cache $wc $w --image cuda13.0" \
    -n all "env WHEELCHECK_CACHE_DIR=$cache $wc $w --image all" \
    -n targets "env WHEELCHECK_CACHE_DIR=$cache $wc $w --image manylinux_2_*_x86_64" >&2
  WHEELCHECK_CACHE_DIR=$cache /usr/bin/time -v $wc "$w" --image all 2>"$out/check-$name.time" >/dev/null || true
  python3 - "$out/check-$name.json" "$out/check-$name.time" "$name" "$(build/wheelcheck images --json | python3 -c 'import json,sys; print(sum(1 for i in json.load(sys.stdin) if i["kind"] == "image" and i["group"] != "target"))')" <<'PY'
import json, re, sys
runs = {r["command"]: r["median"] for r in json.load(open(sys.argv[1]))["results"]}
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(sys.argv[2]).read()).group(1)) / 1024
print(f"{sys.argv[3]}: against all {sys.argv[4]} images {1000 * runs['all']:.0f} ms (peak {rss:.0f} MB), "
      f"one image {1000 * runs['one']:.0f} ms, the 16 manylinux x86_64 targets {1000 * runs['targets']:.0f} ms, "
      f"process alone {1000 * runs['process']:.1f} ms")
PY
done | tee "$out/check-summary.txt"

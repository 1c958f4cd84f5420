#!/usr/bin/env bash
# The inspect benchmark. Builds the large corpus wheels, then measures side by side, in one run:
#   floor   python3 decompressing every member once, single thread (bench/floor.py)
#   cold    wheelcheck inspect --json --no-cache   (RECORD verification on: the default)
#   warm    wheelcheck inspect --json with a filled cache
# with hyperfine (medians) and /usr/bin/time -v (peak memory). Results: bench/out/.
#
#   bench/run.sh            # needs ../shared/corpus (downloads ~650 MB once) and the CUDA 13.0 libraries
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j"$(nproc)" >/dev/null
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
../shared/corpus/fetch-real-binaries.sh --large
../shared/corpus/make-real-wheels.sh --large
out=bench/out; mkdir -p "$out"
cache=$(mktemp -d); trap 'rm -rf "$cache"' EXIT
wc=build/wheelcheck
for w in "$corpus"/wheels/nvidia_cublas-*.whl "$corpus"/wheels/torch_cuda_debian-*.whl; do
  name=$(basename "$w" .whl)
  WHEELCHECK_CACHE_DIR=$cache $wc inspect -q --json "$w" >/dev/null   # fill the cache for the warm runs
  hyperfine --warmup 1 --runs "${RUNS:-5}" --export-json "$out/$name.json" \
    -n floor "python3 bench/floor.py '$w'" \
    -n cold "$wc inspect -q --json --no-cache '$w' >/dev/null" \
    -n warm "WHEELCHECK_CACHE_DIR=$cache $wc inspect -q --json '$w' >/dev/null" >&2
  for mode in cold warm; do
    flag=--no-cache; [[ $mode == warm ]] && flag=
    WHEELCHECK_CACHE_DIR=$cache /usr/bin/time -v $wc inspect -q --json $flag "$w" 2>"$out/$name.$mode.time" >/dev/null
  done
  python3 - "$out/$name.json" "$out/$name.cold.time" "$out/$name.warm.time" <<'PY'
import json, re, sys
runs = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
def rss(path):
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(path).read()).group(1)) / 1024
f, c, w = (runs[k]["median"] for k in ("floor", "cold", "warm"))
print(f"{sys.argv[1].split('/')[-1][:-5]}: floor {f:.3f} s, cold {c:.3f} s ({c / f:.2f}x floor, peak {rss(sys.argv[2]):.0f} MB), "
      f"warm {w * 1000:.1f} ms (peak {rss(sys.argv[3]):.0f} MB)")
PY
done | tee "$out/summary.txt"

#!/usr/bin/env bash
# The shipped static binary against the build tree's dynamic one, side by side in one run (bench/ab.py
# interleaves them, so a shared machine's load falls on both alike), then peak memory (/usr/bin/time -v):
#   startup   `images` and a check of a sample wheel (short commands: dynamic linking shows)
#   reading   `inspect --no-cache` of the 423 MB cuBLAS corpus wheel (libzip, ISA-L and the ELF scan)
#
#   bench/static.sh     # needs build/ (cmake), build-package/ (scripts/package.sh x86_64) and the corpus
set -euo pipefail
cd "$(dirname "$0")/.."
dynamic=build/wheelcheck
static=build-package/x86_64/stage/bin/wheelcheck
[[ -x $dynamic && -x $static ]] || { echo "bench/static.sh: build both first (cmake; scripts/package.sh x86_64)" >&2; exit 2; }
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
sample=build/samples/flagos/flagtree-0.6.1-cp312-cp312-linux_x86_64.whl
python3 bench/ab.py "$dynamic" "$static" "${RUNS:-20}" -- images
python3 bench/ab.py "$dynamic" "$static" "${RUNS:-20}" -- --no-cache --json "$sample" --image cuda13.0
for w in "$corpus"/wheels/nvidia_cublas-*.whl; do
  [[ -f $w ]] || { echo "no corpus wheel (../shared/corpus/make-real-wheels.sh): reading skipped" >&2; break; }
  python3 bench/ab.py "$dynamic" "$static" "${RUNS_LARGE:-5}" -- inspect --no-cache "$w"
  for b in "$dynamic" "$static"; do
    printf '%s: ' "$b"
    /usr/bin/time -v "$b" inspect --no-cache "$w" 2>&1 >/dev/null | sed -n 's/^\tMaximum resident set size (kbytes): //p'
  done
done

#!/usr/bin/env bash
# ZIP64 wheels and the strict archive reading (inspector/wheel/zip_check.cpp): time and peak memory
# (/usr/bin/time -v) of `inspect` on a 4.2 GiB wheel (a stored member of zeros written sparsely, then a
# library past 4 GiB; tests/tools/big_wheel.py), headers-only and in full, and on a 70,000-member wheel;
# then, with BEFORE_BINARY (a build without the strict reading), the full read of the corpus wheels and the
# 70,000-member wheel for both builds interleaved (bench/ab.py), to see what the strict reading costs.
#
#   bench/zip64.sh [WHEELCHECK [BEFORE_BINARY]]      (default: b/wheelcheck; results in bench/out/zip64-summary.txt)
#
# Needs about 100 MB of disk where the temp folder stores holes (else 4.3 GB), gcc, GNU time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
bin=$(realpath "${1:-$repo/b/wheelcheck}")
before=${2:+$(realpath "$2")}
runs=${RUNS:-5}
out="$here/out"
mkdir -p "$out"
summary="$out/zip64-summary.txt"
tmp=$(mktemp -d /tmp/wheelcheck-zip64.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export WHEELCHECK_OFFLINE=1

printf '#include <math.h>\ndouble z64_pow(double a, double b) { return pow(a, b); }\n' > "$tmp/z64.c"
gcc -shared -fPIC -o "$tmp/libz64.so" "$tmp/z64.c" -lm
python3 "$repo/tests/tools/big_wheel.py" "$tmp/big-1.0-cp312-cp312-linux_x86_64.whl" \
  --zeros big/zeros.bin=4.2G --file "big/libz64.so=$tmp/libz64.so" > /dev/null
python3 "$repo/tests/tools/big_wheel.py" "$tmp/many-1.0-cp312-cp312-linux_x86_64.whl" \
  --many 70000 --file "many/libz64.so=$tmp/libz64.so" > /dev/null

measure() {  # LABEL BINARY ARGS...: wall seconds and peak RSS of one run
  local label=$1 b=$2
  shift 2
  /usr/bin/time -v -o "$tmp/time" "$b" "$@" > /dev/null 2>&1 || true
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tmp/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time")
  printf '%-58s wall %8s  peak %6d MB\n' "$label" "$wall" $((rss / 1024)) | tee -a "$summary"
}

{
  echo "# bench/zip64.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(basename "$bin")"
  ls -ls "$tmp"/*.whl | awk '{printf "# %s: %s bytes, %s KB on disk\n", $10, $6, $1}'
} > "$summary"
measure "4.2 GiB wheel, inspect --verify headers" "$bin" inspect --no-cache --verify headers "$tmp/big-1.0-cp312-cp312-linux_x86_64.whl"
measure "4.2 GiB wheel, inspect --verify full" "$bin" inspect --no-cache --verify full "$tmp/big-1.0-cp312-cp312-linux_x86_64.whl"
measure "70,000 members, inspect (read whole)" "$bin" inspect --no-cache "$tmp/many-1.0-cp312-cp312-linux_x86_64.whl"
measure "70,000 members, inspect --threads 1" "$bin" inspect --no-cache --threads 1 "$tmp/many-1.0-cp312-cp312-linux_x86_64.whl"
if [[ -n "$before" ]]; then
  measure "70,000 members, inspect (BEFORE)" "$before" inspect --no-cache "$tmp/many-1.0-cp312-cp312-linux_x86_64.whl"
  wheels=("$tmp/many-1.0-cp312-cp312-linux_x86_64.whl")
  corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}/wheels
  [[ -d "$corpus" ]] && wheels+=("$corpus"/*.whl)
  for w in "${wheels[@]}"; do
    python3 "$here/ab.py" "$before" "$bin" "$runs" -- inspect --no-cache --verify full "$w" | tee -a "$summary"
  done
fi
echo "summary: $summary"

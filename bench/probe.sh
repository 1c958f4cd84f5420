#!/usr/bin/env bash
# The probe benchmark, side by side in one run, medians from hyperfine:
#   nm          nm -D --defined-only over every real library file of the root (the floor to compare with)
#   probe       wheelcheck probe --root R --json  (reads headers, dynamic sections and dynamic symbols;
#               builds every export table in memory)
#   probe -o    the same, writing the description and the compressed export tables
# The root: the CUDA 13.0 libraries of /usr/local/cuda-13.0 and PyTorch 2.6's libtorch_cpu.so and
# libc10.so laid out as pip installs them (hard links, nothing copied). Peak memory from /usr/bin/time -v.
# Then loading PyTorch's largest export table: `wheelcheck exports --count` against `wheelcheck --version`
# (the process alone); the difference is the load.
#
#   bench/probe.sh     # needs /usr/local/cuda-13.0 and the corpus (../shared/corpus/fetch-real-binaries.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j"$(nproc)" >/dev/null
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
../shared/corpus/fetch-real-binaries.sh >/dev/null
out=bench/out; mkdir -p "$out"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
root=$work/root
torch=$corpus/debs/libtorch2.6/usr/lib/x86_64-linux-gnu
mkdir -p "$root/usr/local/cuda-13.0/lib" "$root/etc" "$root/usr/lib/python3.12/site-packages/torch/lib" \
  "$root/usr/lib/python3.12/site-packages/torch-2.6.0.dist-info"
for f in /usr/local/cuda-13.0/lib/*.so*; do ln "$f" "$root/usr/local/cuda-13.0/lib/" 2>/dev/null || cp -a "$f" "$root/usr/local/cuda-13.0/lib/"; done
site=$root/usr/lib/python3.12/site-packages
ln "$(readlink -f "$torch/libtorch_cpu.so.2.6")" "$site/torch/lib/libtorch_cpu.so"
ln "$(readlink -f "$torch/libc10.so.2.6")" "$site/torch/lib/libc10.so"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0\n' >"$site/torch-2.6.0.dist-info/METADATA"
printf 'torch/lib/libtorch_cpu.so,,\ntorch/lib/libc10.so,,\n' >"$site/torch-2.6.0.dist-info/RECORD"
echo /usr/local/cuda-13.0/lib >"$root/etc/ld.so.conf"
ldconfig -X -r "$root"
mapfile -t files < <(find "$root" -type f -name 'lib*.so*' | sort)
bytes=$(du -cb "${files[@]}" | tail -1 | cut -f1)
wc=build/wheelcheck
hyperfine --warmup 1 --runs "${RUNS:-5}" --export-json "$out/probe.json" \
  -n nm "nm -D --defined-only ${files[*]} >/dev/null" \
  -n probe "$wc probe -q --root $root --json >/dev/null" \
  -n probe-write "$wc probe -q --root $root -o $work/out/d.json" >&2
/usr/bin/time -v $wc probe -q --root "$root" --json 2>"$out/probe.time" >/dev/null
table=db/exports/torch2.6-debian/usr/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so.exports.gz
hyperfine --warmup 3 --runs "${RUNS_LOAD:-30}" -N --export-json "$out/load.json" \
  -n process "$wc --version" -n load "$wc exports --count $table" >&2
python3 - "$out/probe.json" "$out/probe.time" "$out/load.json" "${#files[@]}" "$bytes" "$table" <<'PY' | tee "$out/probe-summary.txt"
import json, re, sys
runs = {r["command"]: r["median"] for r in json.load(open(sys.argv[1]))["results"]}
load = {r["command"]: r["median"] for r in json.load(open(sys.argv[3]))["results"]}
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(sys.argv[2]).read()).group(1)) / 1024
n, size = int(sys.argv[4]), int(sys.argv[5]) / 2**20
print(f"probe root: {n} library files, {size:.0f} MiB")
print(f"  nm -D --defined-only {runs['nm']:.3f} s | probe --json {runs['probe']:.3f} s ({runs['probe'] / runs['nm']:.2f}x nm, "
      f"peak {rss:.0f} MB) | probe -o {runs['probe-write']:.3f} s ({runs['probe-write'] / runs['nm']:.2f}x nm)")
print(f"export table load ({sys.argv[6].split('/')[-1]}): {1000 * (load['load'] - load['process']):.1f} ms "
      f"(process {1000 * load['process']:.1f} ms, process + load {1000 * load['load']:.1f} ms)")
PY

#!/usr/bin/env bash
# The environment benchmark (issue 28), side by side in one run, on the loopback range-capable server
# (tests/net/server.py, hard links to the corpus):
#   1. bytes: a pylock.toml of the FlagOS samples plus the corpus's 870 MB torch CUDA wheel (served as pip's
#      torch would be named for a CPython 3.12 image: torch-2.6.0+cu124-cp312-cp312-linux_x86_64.whl), checked
#      against cuda13.0 cold (--no-cache): the bytes the server sent for the torch file (its /_stats), as a % of
#      the file (target: under 5%); then the same check warm (the profile cache): the bytes moved (target: 0).
#   2. time: a lock of ten wheels (the three samples, torch, cuBLAS 423 MB, the CUDA 12 runtime, the torch
#      extension and three re-named copies of the samples) against the slowest of them alone (each checked
#      alone once first, the longest wins), each cold
#      (hyperfine medians; target: the lock at most a few seconds more), with peak RSS (/usr/bin/time -v).
# Results: bench/out/env-*; a Markdown summary on stdout (and bench/out/env-summary.md). Uses build/wheelcheck
# as it is (copied first); never builds. Needs the corpus (../shared/corpus/make-real-wheels.sh --large) and
# the samples (cmake --build build --target samples).
#
#   bench/env.sh            # RUNS=3
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
torch=$corpus/wheels/torch_cuda_debian-2.6.0-cp313-cp313-linux_x86_64.whl
samples=build/samples/flagos
for f in "$torch" "$samples/flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl"; do
  [[ -f $f ]] || { echo "env.sh: $f is absent (make-real-wheels.sh --large; the samples target)" >&2; exit 0; }
done
bench_name=env.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh
export WHEELCHECK_OFFLINE=1   # the db's torch index is not the point here: the locked torch replaces it

root=$work/root
link() {  # link SRC INDEX PROJECT NAME
  mkdir -p "$root/$2/$3"
  ln "$1" "$root/$2/$3/$4" 2>/dev/null || ln -s "$(realpath "$1")" "$root/$2/$3/$4"
}
TORCH=torch-2.6.0+cu124-cp312-cp312-linux_x86_64.whl
link "$torch" whl torch "$TORCH"
for w in "$samples"/*x86_64.whl; do
  f=$(basename "$w"); link "$w" flagos "$(echo "$f" | cut -d- -f1 | tr _ -)" "$f"
done
for w in "$corpus"/wheels/nvidia_cublas-*.whl "$corpus"/wheels/nvidia_cuda_runtime_cu12-*.whl \
         "$corpus"/wheels/torch_python_ext-*.whl; do
  [[ -f $w ]] && { f=$(basename "$w"); link "$w" corpus "$(echo "$f" | cut -d- -f1 | tr _ -)" "$f"; }
done
# three more distinct wheels: the samples re-packed under other names (tests/tools/sample_index.py's repack)
python3 - "$samples" "$root/flagos" <<'PY'
import os, sys
sys.path.insert(0, "tests/tools")
from sample_index import repack
samples, out = sys.argv[1:]
for i, f in enumerate(sorted(x for x in os.listdir(samples) if x.endswith("x86_64.whl"))):
    name = f"extra_{i}"
    os.makedirs(f"{out}/extra-{i}", exist_ok=True)
    open(f"{out}/extra-{i}/{name}-1.0-" + "-".join(f[:-4].split("-")[-3:]) + ".whl", "wb").write(repack(f"{samples}/{f}", name, "1.0"))
PY
start_server "$root"

python3 - "$root" "$base" "$work" <<'PY'
import hashlib, os, sys
root, base, work = sys.argv[1:]
def entry(index, project, f):
    sha = hashlib.sha256(open(os.path.join(root, index, project, f), "rb").read()).hexdigest()
    return (project, f.split("-")[1], f"{base}/{index}/files/{project}/{f.replace('+', '%2B')}", sha)
def lock(path, entries):
    with open(path, "w") as out:
        out.write('lock-version = "1.0"\ncreated-by = "bench/env.sh"\n')
        for project, version, url, sha in entries:
            out.write(f'\n[[packages]]\nname = "{project}"\nversion = "{version}"\n'
                      f'wheels = [{{ url = "{url}", hashes = {{ sha256 = "{sha}" }} }}]\n')
samples = [entry("flagos", p, f) for p in ("flag-gems-cpp-cuda", "flagtree", "flagcx")
           for f in sorted(os.listdir(f"{root}/flagos/{p}"))]
torch = [entry("whl", "torch", sorted(os.listdir(f"{root}/whl/torch"))[0])]
lock(f"{work}/pylock.toml", samples + torch)
extra = [entry(i, p, f) for i in ("corpus", "flagos") for p in sorted(os.listdir(f"{root}/{i}"))
         if i == "corpus" or p.startswith("extra") for f in sorted(os.listdir(f"{root}/{i}/{p}"))]
lock(f"{work}/pylock.ten.toml", (samples + torch + extra)[:10])
print(len((samples + torch + extra)[:10]), "wheels in the ten-wheel lock", file=sys.stderr)
PY

stats() {  # stats OUT.json: requests for the torch file since the last clear, then clear
  curl -sf "$base/_stats" | python3 -c '
import json, sys
reqs = [r for r in json.load(sys.stdin) if r["path"].startswith("/whl/files/torch/")]
json.dump({"requests": len(reqs), "bytes": sum(r["bytes_sent"] for r in reqs)}, open(sys.argv[1], "w"))' "$1"
  curl -sf -X DELETE "$base/_stats" >/dev/null
}
rc_ok() { case $1 in 0|1|3|4) ;; *) echo "env.sh: $2 exited $1 (see $3)" >&2; exit 2 ;; esac; }

# 1. bytes, cold then warm.
rm -rf "$work/cache"; curl -sf -X DELETE "$base/_stats" >/dev/null
rc=0; /usr/bin/time -v "$wc" "$work/pylock.toml" --image cuda13.0 --cache-dir "$work/cache" -q --format json \
  >"$out/env-lock.cold.json" 2>"$out/env-lock.cold.time" || rc=$?
rc_ok "$rc" "the lock, cold" "$out/env-lock.cold.time"
stats "$out/env-lock.cold.stats.json"
rc=0; "$wc" "$work/pylock.toml" --image cuda13.0 --cache-dir "$work/cache" -q >"$out/env-lock.txt" 2>&1 || rc=$?
curl -sf -X DELETE "$base/_stats" >/dev/null
rc=0; /usr/bin/time -v "$wc" "$work/pylock.toml" --image cuda13.0 --cache-dir "$work/cache" -q --format json \
  >"$out/env-lock.warm.json" 2>"$out/env-lock.warm.time" || rc=$?
rc_ok "$rc" "the lock, warm" "$out/env-lock.warm.time"
curl -sf "$base/_stats" | python3 -c 'import json,sys; r=json.load(sys.stdin); json.dump({"requests": len([x for x in r if "/files/" in x["path"]]), "bytes": sum(x["bytes_sent"] for x in r if "/files/" in x["path"])}, open(sys.argv[1],"w"))' "$out/env-lock.warm.stats.json"

# 2. time: the ten-wheel lock against its slowest wheel alone, both cold. The slowest: each of the ten
# checked alone once (cold), the longest wall time.
slowest= slowest_s=0
for url in $(python3 -c 'import sys,re; print("\n".join(re.findall(r"url = \"([^\"]*)\"", open(sys.argv[1]).read())))' "$work/pylock.ten.toml"); do
  /usr/bin/time -f %e -o "$work/one.time" "$wc" "$url" --image cuda13.0 --no-cache -q >/dev/null 2>&1 || true
  s=$(cat "$work/one.time" | tail -1)
  if python3 -c "import sys; sys.exit(0 if float('$s') > float('$slowest_s') else 1)"; then slowest=$url slowest_s=$s; fi
done
echo "env.sh: the slowest wheel alone: ${slowest##*/} (${slowest_s} s)" >&2
echo "${slowest##*/}" >"$out/env-slowest.txt"
/usr/bin/time -v "$wc" "$work/pylock.ten.toml" --image cuda13.0 --no-cache -q >/dev/null 2>"$out/env-ten.time" || true
/usr/bin/time -v "$wc" "$slowest" --image cuda13.0 --no-cache -q >/dev/null 2>"$out/env-torch.time" || true
hyperfine -N -i --warmup 1 --runs "${RUNS:-3}" --export-json "$out/env-time.json" \
  -n "ten-wheel lock" "$wc $work/pylock.ten.toml --image cuda13.0 --no-cache -q" \
  -n "slowest alone" "$wc $slowest --image cuda13.0 --no-cache -q" >&2

python3 - "$out" "$torch" <<'PY' | tee "$out/env-summary.md"
import json, os, re, sys
out, torch = sys.argv[1:]
size = os.stat(torch).st_size
def rss(path):
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(path).read()).group(1)) / 1024
cold = json.load(open(f"{out}/env-lock.cold.stats.json"))
warm = json.load(open(f"{out}/env-lock.warm.stats.json"))
doc = json.load(open(f"{out}/env-lock.cold.json"))
torch_pkg = [p for p in doc["packages"] if p["name"] == "torch"][0]
pct = 100 * cold["bytes"] / size
print("### A lock of the FlagOS samples and the 870 MB torch CUDA wheel, against cuda13.0\n")
print("| run | requests for torch | bytes sent for torch | % of the wheel | peak RSS |")
print("|---|---|---|---|---|")
print(f"| cold (`--cache-dir` empty) | {cold['requests']} | {cold['bytes'] / 1e6:.2f} MB | {pct:.3f}% "
      f"({'meets' if pct < 5 else 'MISSES'} 5%) | {rss(f'{out}/env-lock.cold.time'):.0f} MB |")
print(f"| warm (the profile cache) | {warm['requests']} (all wheels) | {warm['bytes']} B (all wheels) | 0% | "
      f"{rss(f'{out}/env-lock.warm.time'):.0f} MB |")
print(f"\nThe lock's torch entry: state {torch_pkg['state']}, {torch_pkg.get('bytes_fetched')} bytes fetched by wheelcheck's "
      f"own count, integrity {torch_pkg.get('integrity')}.\n")
t = {r["command"]: r for r in json.load(open(f"{out}/env-time.json"))["results"]}
a, b = t["ten-wheel lock"]["median"], t["slowest alone"]["median"]
slowest = open(f"{out}/env-slowest.txt").read().strip()
print("### Ten wheels read in parallel against the slowest alone (cold, `--no-cache`)\n")
print("| command | median wall | min | max | peak RSS |")
print("|---|---|---|---|---|")
for name, time_file in (("ten-wheel lock", "env-ten.time"), ("slowest alone", "env-torch.time")):
    r = t[name]
    print(f"| {name} | {r['median']:.2f} s | {r['min']:.2f} s | {r['max']:.2f} s | {rss(f'{out}/{time_file}'):.0f} MB |")
print(f"\n- the slowest wheel alone: {slowest}")
print(f"- the lock costs {a - b:+.2f} s over its slowest wheel ({a / b:.2f}x)")
PY

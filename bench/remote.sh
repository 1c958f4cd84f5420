#!/usr/bin/env bash
# The remote and headers-only benchmark, side by side in one run, for every wheel of the corpus (the 870 MB
# torch wheel, the 423 MB cuBLAS wheel, the 6.5 MB torch_python_ext, the 207 kB CUDA runtime):
#   1. a remote check on the loopback range-capable server (tests/net/server.py, hard links to the corpus):
#        headers   wheelcheck URL#sha256=... --image cuda13.0 --no-cache   (headers-only over byte ranges)
#        full      the same with --verify full (downloads the whole wheel, verifies its sha256, full check)
#      bytes sent for the wheel's file (sum of bytes_sent in the server's /_stats, one run per mode) as a % of
#      its size and the requests (targets: headers under 5% of a large wheel, one request under a MiB),
#      wall time (hyperfine medians), peak RSS (/usr/bin/time -v).
#   2. a local inspect: wheelcheck inspect --no-cache --json --verify headers against --verify full
#      (hyperfine medians; target: headers under 0.1x full).
# The machine is noisy: compare medians and ratios, not single runs. Uses build/wheelcheck as it is (copied
# to a temp dir first, so that a rebuild during the run cannot mix binaries); never builds.
# Results: bench/out/remote-*; a Markdown table on stdout (and bench/out/remote-summary.md).
#
#   bench/remote.sh        # needs the corpus wheels (../shared/corpus/make-real-wheels.sh --large); RUNS=3
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
wheels=()
for w in "$corpus"/wheels/*.whl; do
  if [[ -f $w ]]; then wheels+=("$w"); else echo "remote.sh: skipping $w: absent (make it with ../shared/corpus/make-real-wheels.sh --large)" >&2; fi
done
if ((${#wheels[@]} == 0)); then echo "remote.sh: no corpus wheel under $corpus/wheels: nothing to measure" >&2; exit 0; fi
bench_name=remote.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh

# The server root: <index>/<project>/<file>, hard links (a symbolic link where the file system refuses).
for w in "${wheels[@]}"; do
  project=$(basename "$w" | cut -d- -f1 | tr _ -)
  mkdir -p "$work/root/bench/$project"
  ln "$w" "$work/root/bench/$project/" 2>/dev/null || ln -s "$w" "$work/root/bench/$project/"
done
start_server "$work/root"

stats() {  # stats FILE_PATH OUT.json: the requests for that path since the last clear, then clear
  curl -sf "$base/_stats" | python3 -c '
import json, sys
reqs = [r for r in json.load(sys.stdin) if r["path"] == sys.argv[1]]
json.dump({"requests": len(reqs), "bytes": sum(r["bytes_sent"] for r in reqs),
           "ranges": [r["range"] for r in reqs]}, open(sys.argv[2], "w"))' "$1" "$2"
  curl -sf -X DELETE "$base/_stats" >/dev/null
}
verdict_ok() {  # a verdict (0 compatible, 1 incompatible, 3 degraded, 4 unknown) or a done inspect, not 2 or 70
  local rc=$1 what=$2
  case $rc in 0|1|3|4) ;; *) echo "remote.sh: $what exited $rc (see $3)" >&2; exit 2 ;; esac
}

names=()
for w in "${wheels[@]}"; do
  file=$(basename "$w"); name=${file%.whl}; names+=("$name")
  project=$(echo "$file" | cut -d- -f1 | tr _ -)
  sha=$(sha256sum "$w" | cut -d' ' -f1)
  path=/bench/files/$project/$file
  url="$base$path#sha256=$sha"
  echo "== $file ($(stat -Lc %s "$w") bytes)" >&2
  # 1. remote: one measured run per mode (bytes from /_stats, peak RSS), then hyperfine for the times.
  curl -sf -X DELETE "$base/_stats" >/dev/null
  for mode in headers full; do
    flags=(); [[ $mode == full ]] && flags=(--verify full)
    rc=0; /usr/bin/time -v "$wc" "$url" --image cuda13.0 --no-cache -q "${flags[@]}" \
      >"$out/remote-$name.$mode.txt" 2>"$out/remote-$name.$mode.time" || rc=$?
    verdict_ok "$rc" "remote check ($mode)" "$out/remote-$name.$mode.time"
    stats "$path" "$out/remote-$name.$mode.stats.json"
  done
  hyperfine -N -i --warmup 1 --runs "${RUNS:-3}" --export-json "$out/remote-$name.json" \
    -n headers "$wc $url --image cuda13.0 --no-cache -q" \
    -n full "$wc $url --image cuda13.0 --no-cache -q --verify full" >&2
  curl -sf -X DELETE "$base/_stats" >/dev/null
  # 2. local inspect, headers-only against full.
  for mode in headers full; do
    rc=0; "$wc" inspect "$w" --verify $mode --no-cache --json -q >/dev/null 2>"$work/inspect.err" || rc=$?
    verdict_ok "$rc" "inspect --verify $mode" "$work/inspect.err"
  done
  hyperfine -N --warmup 1 --runs "${RUNS:-3}" --export-json "$out/remote-local-$name.json" \
    -n headers "$wc inspect $w --verify headers --no-cache --json -q" \
    -n full "$wc inspect $w --verify full --no-cache --json -q" >&2
done

python3 - "$out" "${wheels[@]}" <<'PY' | tee "$out/remote-summary.md"
import json, os, re, sys
out, wheels = sys.argv[1], sys.argv[2:]
def rss(path):
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(path).read()).group(1)) / 1024
def medians(path):
    return {r["command"]: r["median"] for r in json.load(open(path))["results"]}
def mb(n):
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"
print("### Remote check on the loopback server (`wheelcheck URL --image cuda13.0 --no-cache`)\n")
print("| wheel | size | mode | requests | bytes sent for the wheel | % of the file | median wall | peak RSS |")
print("|---|---|---|---|---|---|---|---|")
local_rows, notes = [], []
for w in wheels:
    name = os.path.basename(w)[:-4]
    size = os.stat(w).st_size
    t = medians(f"{out}/remote-{name}.json")
    short = name.split("-")[0]
    for mode in ("headers", "full"):
        s = json.load(open(f"{out}/remote-{name}.{mode}.stats.json"))
        pct = 100 * s["bytes"] / size
        label = "headers-only (default)" if mode == "headers" else "`--verify full`"
        print(f"| {short} | {mb(size)} | {label} | {s['requests']} | {mb(s['bytes'])} | {pct:.2f}% | "
              f"{t[mode]:.2f} s | {rss(f'{out}/remote-{name}.{mode}.time'):.0f} MB |")
        if mode == "headers":
            target = ("one request under a MiB: " + ("meets" if s["requests"] == 1 else "MISSES")) if size < 1e6 else \
                     f"{'meets' if pct < 5 else 'MISSES'} the 5% target"
            notes.append(f"{short}: headers-only moves {pct:.2f}% of the file in {s['requests']} requests "
                         f"({target}), {t['full'] / t['headers']:.1f}x faster than --verify full")
    l = medians(f"{out}/remote-local-{name}.json")
    local_rows.append((short, size, l["headers"], l["full"]))
print("\n### Local `wheelcheck inspect --no-cache --json`: `--verify headers` against `--verify full`\n")
print("| wheel | size | headers median | full median | ratio (target < 0.1x) |")
print("|---|---|---|---|---|")
for short, size, h, f in local_rows:
    print(f"| {short} | {mb(size)} | {h * 1000:.0f} ms | {f:.2f} s | {h / f:.3f}x "
          f"({'meets' if h / f < 0.1 else 'MISSES'}) |")
print()
for n in notes:
    print(f"- {n}")
PY

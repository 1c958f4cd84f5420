#!/usr/bin/env bash
# The remote and headers-only benchmark, side by side in one run, for every wheel of the corpus (the 870 MB
# torch wheel, the 423 MB cuBLAS wheel, the 6.5 MB torch_python_ext, the 207 kB CUDA runtime) and a
# torch-shaped wheel (bench/torch_shaped.py: three libraries and 1,900 small Python files), and six copies of
# torch_python_ext's library in a 39 MB wheel (bench/midlibs.py):
#   1. a remote check on the loopback range-capable server (tests/net/server.py, hard links to the corpus):
#        headers   wheelcheck URL#sha256=... --image cuda13.0 --no-cache   (headers-only over byte ranges)
#        full      the same with --verify full (downloads the whole wheel, verifies its sha256, full check)
#      bytes sent for the wheel's file (sum of bytes_sent in the server's /_stats, one run per mode) as a % of
#      its size and the requests (targets: headers under 5% of a large wheel, under 2 MiB for the
#      torch-shaped one, one request under 512 KiB), wall time (medians), peak RSS (/usr/bin/time -v).
#   2. a local inspect: wheelcheck inspect --no-cache --json --verify headers against --verify full
#      (medians; target: headers never slower than full, under 0.1x full on a large wheel; under 32 MiB both
#      are the same read, the whole wheel, and the ratio is noise around 1x).
#   3. on every wheel of 400 MB or more, side by side with `auditwheel show` (../shared/peers/auditwheel-show):
#      targets headers-only at most 0.1x of its time, the full read at most 0.5x.
# BEFORE=/path/to/an/older/wheelcheck adds its headers-only bytes and local times, measured in the same run.
# Medians come from hyperfine where it is installed, else from a runner here that alternates the commands.
# The machine is noisy: compare medians and ratios, not single runs. Uses build/wheelcheck as it is (copied
# to a temp dir first, so that a rebuild during the run cannot mix binaries); never builds.
# Results: bench/out/remote-*; a Markdown table on stdout (and bench/out/remote-summary.md).
#
#   bench/remote.sh        # needs the corpus wheels (../shared/corpus/make-real-wheels.sh --large) and
#                          # scripts/install-deps.sh --bench (hyperfine, the peer's modules); RUNS=3
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
bench_name=remote.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh
wheels=()
for w in "$corpus"/wheels/*.whl; do
  if [[ -f $w ]]; then wheels+=("$w"); else echo "remote.sh: skipping $w: absent (make it with ../shared/corpus/make-real-wheels.sh --large)" >&2; fi
done
shaped=$(python3 bench/torch_shaped.py "$work/shaped")
wheels+=("$shaped")
# Six copies of torch_python_ext's 19 MB library in one 39 MB wheel (bench/midlibs.py): over 32 MiB, where a
# local --verify headers reads ranges, of the shape where that costs most against the full read.
if [[ -f $corpus/wheels/torch_python_ext-2.6.0-cp313-cp313-linux_x86_64.whl ]]; then
  wheels+=("$(python3 bench/midlibs.py "$corpus/wheels/torch_python_ext-2.6.0-cp313-cp313-linux_x86_64.whl" "$work/midlibs")")
fi
before=
if [[ -n ${BEFORE:-} ]]; then cp "$BEFORE" "$work/bin/before"; before=$work/bin/before; fi
auditwheel=../shared/peers/auditwheel-show
# The peer must run before it is timed: the medians ignore exit codes, and a peer that fails at once
# (python3-pyelftools or python3-packaging missing: scripts/install-deps.sh --bench) would time its error.
if [[ -x $auditwheel ]] && ! "$auditwheel" "$shaped" >/dev/null 2>"$work/auditwheel.err"; then
  echo "remote.sh: $auditwheel fails ($(tail -n1 "$work/auditwheel.err")): install its modules with scripts/install-deps.sh --bench" >&2
  exit 2
fi


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

for w in "${wheels[@]}"; do
  file=$(basename "$w"); name=${file%.whl}
  project=$(echo "$file" | cut -d- -f1 | tr _ -)
  sha=$(sha256sum "$w" | cut -d' ' -f1)
  path=/bench/files/$project/$file
  url="$base$path#sha256=$sha"
  size=$(stat -Lc %s "$w")
  echo "== $file ($size bytes)" >&2
  # 1. remote: one measured run per mode (bytes from /_stats, peak RSS), then the times.
  curl -sf -X DELETE "$base/_stats" >/dev/null
  for mode in headers full before; do
    flags=(); bin=$wc
    [[ $mode == full ]] && flags=(--verify full)
    if [[ $mode == before ]]; then [[ -n $before ]] || continue; bin=$before; fi
    rc=0; /usr/bin/time -v "$bin" "$url" --image cuda13.0 --no-cache -q "${flags[@]}" \
      >"$out/remote-$name.$mode.txt" 2>"$out/remote-$name.$mode.time" || rc=$?
    verdict_ok "$rc" "remote check ($mode)" "$out/remote-$name.$mode.time"
    stats "$path" "$out/remote-$name.$mode.stats.json"
  done
  medians "$out/remote-$name.json" headers "$wc $url --image cuda13.0 --no-cache -q" \
    full "$wc $url --image cuda13.0 --no-cache -q --verify full"
  curl -sf -X DELETE "$base/_stats" >/dev/null
  # 2. local inspect, headers-only against full (and the older build's, alternating with them).
  for mode in headers full; do
    rc=0; "$wc" inspect "$w" --verify $mode --no-cache --json -q >/dev/null 2>"$work/inspect.err" || rc=$?
    verdict_ok "$rc" "inspect --verify $mode" "$work/inspect.err"
  done
  local_cmds=(headers "$wc inspect $w --verify headers --no-cache --json -q" full "$wc inspect $w --verify full --no-cache --json -q")
  [[ -n $before ]] && local_cmds+=(before-headers "$before inspect $w --verify headers --no-cache --json -q"
                                   before-full "$before inspect $w --verify full --no-cache --json -q")
  medians "$out/remote-local-$name.json" "${local_cmds[@]}"
  # 3. side by side with auditwheel show, on the wheels of 400 MB or more.
  if ((size >= 400000000)) && [[ -x $auditwheel ]]; then
    medians "$out/remote-peer-$name.json" headers "$wc inspect $w --verify headers --no-cache --json -q" \
      full "$wc inspect $w --verify full --no-cache --json -q" auditwheel "$auditwheel $w"
  fi
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
local_rows, peer_rows, notes = [], [], []
for w in wheels:
    name = os.path.basename(w)[:-4]
    size = os.stat(w).st_size
    t = medians(f"{out}/remote-{name}.json")
    short = name.split("-")[0]
    for mode in ("headers", "full", "before"):
        if not os.path.exists(f"{out}/remote-{name}.{mode}.stats.json"):
            continue
        s = json.load(open(f"{out}/remote-{name}.{mode}.stats.json"))
        pct = 100 * s["bytes"] / size
        label = {"headers": "headers-only (default)", "full": "`--verify full`", "before": "headers-only, BEFORE"}[mode]
        wall = f"{t[mode]:.2f} s" if mode in t else "-"
        print(f"| {short} | {mb(size)} | {label} | {s['requests']} | {mb(s['bytes'])} | {pct:.2f}% | "
              f"{wall} | {rss(f'{out}/remote-{name}.{mode}.time'):.0f} MB |")
        if mode == "headers":
            target = ("one request under 512 KiB: " + ("meets" if s["requests"] == 1 else "MISSES")) if size < 524288 else \
                     f"{'meets' if pct < 5 or s['bytes'] < 2 << 20 else 'MISSES'} the target (5%, or 2 MiB)"
            notes.append(f"{short}: headers-only moves {pct:.2f}% of the file in {s['requests']} requests "
                         f"({target}), {t['full'] / t['headers']:.1f}x faster than --verify full")
    local_rows.append((short, size, medians(f"{out}/remote-local-{name}.json")))
    if os.path.exists(f"{out}/remote-peer-{name}.json"):
        peer_rows.append((short, size, medians(f"{out}/remote-peer-{name}.json")))
print("\n### Local `wheelcheck inspect --no-cache --json`: `--verify headers` against `--verify full`\n")
print("| wheel | size | headers median | full median | ratio (target: at most 1x; under 0.1x when large) | BEFORE headers | BEFORE full |")
print("|---|---|---|---|---|---|---|")
for short, size, l in local_rows:
    h, f = l["headers"], l["full"]
    b = f"| {l['before-headers'] * 1000:.0f} ms | {l['before-full'] * 1000:.0f} ms |" if "before-full" in l else "| - | - |"
    verdict = "same read: under 32 MiB a local wheel is read whole" if size < 32 << 20 else \
              ("meets" if h <= f else "MISSES")
    print(f"| {short} | {mb(size)} | {h * 1000:.0f} ms | {f * 1000:.0f} ms | {h / f:.3f}x ({verdict}) {b}")
if peer_rows:
    print("\n### Side by side with `auditwheel show` (wheels of 400 MB or more)\n")
    print("| wheel | size | auditwheel show | headers-only | ratio (target 0.1x) | full | ratio (target 0.5x) |")
    print("|---|---|---|---|---|---|---|")
    for short, size, m in peer_rows:
        a = m["auditwheel"]
        print(f"| {short} | {mb(size)} | {a:.2f} s | {m['headers']:.3f} s | {m['headers'] / a:.3f}x "
              f"({'meets' if m['headers'] / a <= 0.1 else 'MISSES'}) | {m['full']:.2f} s | {m['full'] / a:.2f}x "
              f"({'meets' if m['full'] / a <= 0.5 else 'MISSES'}) |")
print()
for n in notes:
    print(f"- {n}")
PY

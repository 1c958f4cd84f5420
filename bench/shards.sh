#!/usr/bin/env bash
# The shards throughput benchmark (issue 44, item 4): a cold `wheelcheck scan` of a generated index of 2,016
# wheels over 202 projects (bench/shards_index.py: small re-packs of the samples, medium ones with real
# libraries, ones with hundreds of Python members, 16 torch-shaped ones) on the loopback server
# (tests/net/server.py --latency, LATENCY seconds before every answer, default 0.02), measured side by side:
#   1        one process: scan --state S --report R --pins P --no-cache (empty state, no profile cache)
#   2, 4     N shards at once (scan --shard K/N, each its own empty --state), then scan --merge; the wall time
#            runs from the start of the shards to the end of the merge
# Each: wall seconds, wheels/s (new wheels in the report / wall), requests and bytes the server answered (its
# /_stats, cleared between), peak RSS (/usr/bin/time -v; for shards the largest shard's and the merge's), and
# whether the merged report.json (minus generated_at and shard) and pins (minus the first line) equal the
# one process's. --verify is the default (auto: headers-only over HTTP ranges). Uses build/wheelcheck as it
# is (copied first; never builds). The index is cached in bench/out/shards-index (rebuilt when its stamp
# changes); results in bench/out/shards-*, the Markdown table also in bench/out/shards-summary.md.
#
#   bench/shards.sh      # LATENCY=0.02  IMAGES=cuda13.0,ascend-cann9  SHARDS="2 4"  ROUNDS=1
set -euo pipefail
cd "$(dirname "$0")/.."
bench_name=shards.sh
latency=${LATENCY:-0.02}
rounds=${ROUNDS:-1}
read -r -a shard_counts <<<"${SHARDS:-2 4}"
IFS=, read -r -a images <<<"${IMAGES:-cuda13.0,ascend-cann9}"
# shellcheck source=bench/lib.sh
source bench/lib.sh

echo "shards.sh: the index (bench/out/shards-index; generated once)" >&2
python3 bench/shards_index.py "$out/shards-index" >"$out/shards-index.txt"
cat "$out/shards-index.txt" >&2
mapfile -t projects < <(python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["projects"]))' \
                        "$out/shards-index/composition.json")

# The server, with the latency (lib.sh's start_server takes no options).
python3 tests/net/server.py --root "$out/shards-index/root" --latency "$latency" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do grep -q '^PORT ' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/^PORT /{print $2}' "$work/server.out")
[[ -n $port ]] || { echo "shards.sh: the server did not start: $(cat "$work/server.err")" >&2; exit 2; }
base=http://127.0.0.1:$port

# Warm the server: every project page once (it hashes each file on the first page that lists it).
python3 - "$base/shards/simple/" "${projects[@]}" <<'PY'
import sys, urllib.request
from concurrent.futures import ThreadPoolExecutor
base, projects = sys.argv[1], sys.argv[2:]
def get(p):
    req = urllib.request.Request(base + p + "/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    return len(urllib.request.urlopen(req).read())
with ThreadPoolExecutor(8) as pool:
    list(pool.map(get, projects))
PY
curl -sf -X DELETE "$base/_stats" >/dev/null

opts=(--index "$base/shards/simple/" --no-cache -q)
for p in "${projects[@]}"; do opts+=(--project "$p"); done
for i in "${images[@]}"; do opts+=(--image "$i"); done

stats() {  # stats OUT.json: the requests since the last clear (pages, files); then clear
  curl -sf "$base/_stats" | python3 -c '
import collections, json, sys
reqs = json.load(sys.stdin)
out = {"requests": len(reqs), "bytes": sum(r["bytes_sent"] for r in reqs)}
for kind, marker in (("pages", "/simple/"), ("files", "/files/")):
    rs = [r for r in reqs if marker in r["path"]]
    out[kind] = {"requests": len(rs), "bytes": sum(r["bytes_sent"] for r in rs),
                 "status": dict(collections.Counter(str(r["status"]) for r in rs))}
json.dump(out, open(sys.argv[1], "w"))' "$1"
  curl -sf -X DELETE "$base/_stats" >/dev/null
}
ok_rc() { [[ $1 == 0 || $1 == 1 ]]; }  # 1: a new wheel is incompatible with an image its tags target
now() { date +%s.%N; }

rm -f "$out"/shards-r*-*
for round in $(seq "$rounds"); do
  tag=r$round
  # 1: one process.
  d=$work/$tag-1; mkdir -p "$d"
  echo "shards.sh: round $round: one process" >&2
  t0=$(now); rc=0
  /usr/bin/time -v -o "$out/shards-$tag-1.time" "$wc" scan "${opts[@]}" --state "$d/state" --report "$d/report" \
    --pins "$d/pins.env" >"$out/shards-$tag-1.txt" 2>&1 || rc=$?
  t1=$(now)
  ok_rc $rc || { echo "shards.sh: the one-process scan exited $rc (see $out/shards-$tag-1.*)" >&2; exit 2; }
  echo "$t0 $t1" >"$out/shards-$tag-1.wall"
  stats "$out/shards-$tag-1.stats.json"
  cp "$d/report/report.json" "$out/shards-$tag-1.report.json"; cp "$d/pins.env" "$out/shards-$tag-1.pins.env"
  for n in "${shard_counts[@]}"; do
    d=$work/$tag-$n; mkdir -p "$d"
    echo "shards.sh: round $round: $n shards, then the merge" >&2
    pids=(); dirs=()
    t0=$(now)
    for k in $(seq "$n"); do
      mkdir -p "$d/shard-$k"; dirs+=("$d/shard-$k")
      /usr/bin/time -v -o "$out/shards-$tag-$n-shard$k.time" "$wc" scan "${opts[@]}" --shard "$k/$n" \
        --state "$d/shard-$k" >"$out/shards-$tag-$n-shard$k.txt" 2>&1 &
      pids+=($!)
    done
    for k in $(seq "$n"); do
      rc=0; wait "${pids[$((k - 1))]}" || rc=$?
      ok_rc $rc || { echo "shards.sh: shard $k/$n exited $rc (see $out/shards-$tag-$n-shard$k.*)" >&2; exit 2; }
    done
    t1=$(now); rc=0
    /usr/bin/time -v -o "$out/shards-$tag-$n-merge.time" "$wc" scan "${opts[@]}" --merge "${dirs[@]}" \
      --state "$d/state" --report "$d/report" --pins "$d/pins.env" >"$out/shards-$tag-$n-merge.txt" 2>&1 || rc=$?
    t2=$(now)
    ok_rc $rc || { echo "shards.sh: the merge of $n shards exited $rc (see $out/shards-$tag-$n-merge.*)" >&2; exit 2; }
    echo "$t0 $t2 $t1" >"$out/shards-$tag-$n.wall"
    stats "$out/shards-$tag-$n.stats.json"
    cp "$d/report/report.json" "$out/shards-$tag-$n.report.json"; cp "$d/pins.env" "$out/shards-$tag-$n.pins.env"
  done
done

python3 - "$out" "$rounds" "$latency" "${images[*]}" "${shard_counts[@]}" <<'PY' | tee "$out/shards-summary.md"
import glob, json, re, sys
out, rounds, latency, images, counts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
comp = json.load(open(f"{out}/shards-index/composition.json"))

def rss(path):
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(path).read()).group(1)) / 1024

sys.path.insert(0, "bench")
from reports import first_diff, norm  # noqa: E402

mb = lambda b: f"{b / 1e6:.1f} MB"
kinds = ", ".join(f"{v['wheels']} {k}" for k, v in comp["kinds"].items())
print(f"### `wheelcheck scan`, cold, one process vs shards: {comp['wheels']} wheels ({kinds}; {mb(comp['bytes'])}), "
      f"{len(comp['projects'])} projects, images {images}, loopback server with {float(latency) * 1000:.0f} ms latency\n")
print("| round | run | wall | wheels/s | requests (pages + files) | bytes moved | peak RSS | identical |")
print("|---|---|---|---|---|---|---|---|")
notes = []
for r in range(1, rounds + 1):
    ref = f"{out}/shards-r{r}-1"
    nwheels = len(json.load(open(ref + ".report.json"))["wheels"])
    for n in ["1"] + counts:
        p = f"{out}/shards-r{r}-{n}"
        t = [float(x) for x in open(p + ".wall").read().split()]
        wall = t[1] - t[0]
        s = json.load(open(p + ".stats.json"))
        req = f"{s['requests']} ({s['pages']['requests']} + {s['files']['requests']})"
        if n == "1":
            run, mem, same = "1 process", f"{rss(p + '.time'):.0f} MB", "(reference)"
            wall_s = f"{wall:.1f} s"
        else:
            shard_rss = max(rss(f) for f in glob.glob(p + "-shard*.time"))
            run, mem = f"{n} shards + merge", f"{shard_rss:.0f} MB (largest shard), {rss(p + '-merge.time'):.0f} MB (merge)"
            wall_s = f"{wall:.1f} s (merge {t[1] - t[2]:.1f} s)"
            d = first_diff(norm(ref + ".report.json"), norm(p + ".report.json"))
            pins_same = open(ref + ".pins.env").read().split("\n")[1:] == open(p + ".pins.env").read().split("\n")[1:]
            same = "yes" if d is None and pins_same else "no"
            if d:
                notes.append(f"- round {r}, {n} shards: report.json first differs at {d}")
            if not pins_same:
                notes.append(f"- round {r}, {n} shards: pins.env differs beyond its first line")
        print(f"| {r} | {run} | {wall_s} | {nwheels / wall:.1f} | {req} | {mb(s['bytes'])} | {mem} | {same} |")
print()
print("\n".join(notes) if notes else "- every merged report and pins equal the one process's (but for generated_at, shard, the pins' first line)")
PY

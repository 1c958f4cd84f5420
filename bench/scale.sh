#!/usr/bin/env bash
# The scale benchmark (issue 64): cold `wheelcheck scan`s of growing slices of a generated index of up to
# 64,000 small native wheels (bench/scale_index.py: 6,400 projects x 10 versions, ~8 KB each, tag
# cp312-cp312-manylinux_2_17_x86_64, compatible with IMAGE) on the loopback server (tests/net/server.py
# --latency LATENCY), to see that memory stays flat and time per wheel stays linear as the index grows:
#   SIZE     for each size S (S/10 projects, the index's first ones): one process, fresh empty --state, --no-cache,
#            -q, --report, --pins, --image IMAGE; the project list as --projects-file (when `scan --help` offers
#            it) else one --project per project. Wall seconds, wheels (report.json's summary: the new ones),
#            wheels/s, ms per wheel, peak RSS (/usr/bin/time -v), requests and bytes the server answered (its
#            /_stats, cleared between), the sizes of report.json and report.html
#   merge    the largest size again as SHARDS shards (--shard K/N, each its own empty --state), PARALLEL (2) at a
#            time, then `scan --merge`: the merge's wall and peak RSS, the largest shard's peak RSS, and whether
#            the merged report.json (less generated_at and shard), pins (less the first line) and state
#            (state.db: wheels' records less first_seen, run_wheels' entry and remembered by seq) equal the one
#            process's (the state is skipped, with a note, where a binary writes no state.db)
#   html     the largest report.html loaded in headless chromium (tests/tools/cdp_page.py): load time, and
#            whether #summary (else the header, noted) is found and visible in the first viewport
# Exit codes 0 and 1 of a scan are success (1: an incompatible wheel), any other fails the run. Uses
# build/wheelcheck as it is, or $WHEELCHECK_BIN (copied first; never builds). The index is cached in
# bench/out/scale-index (INDEX_PROJECTS projects: default the largest size's, or more when the cached one has
# more); results in bench/out/scale-*: a Markdown table on stdout and in bench/out/scale-summary.md, every
# figure in bench/out/scale-results.json.
#
#   bench/scale.sh       # SIZES="1000 4000 16000 64000"  LATENCY=0.02  SHARDS=8  IMAGE=cuda13.0  JOBS=2
#                        # PARALLEL=2 (shards at once)  SELECTOR='#summary'  INDEX_PROJECTS=(see above)
set -euo pipefail
cd "$(dirname "$0")/.."
bench_name=scale.sh
latency=${LATENCY:-0.02}
read -r -a sizes <<<"${SIZES:-1000 4000 16000 64000}"
shards=${SHARDS:-8}
image=${IMAGE:-cuda13.0}
jobs=${JOBS:-2}
parallel=${PARALLEL:-2}
selector=${SELECTOR:-#summary}
mapfile -t sizes < <(printf '%s\n' "${sizes[@]}" | sort -n -u)
for s in "${sizes[@]}"; do
  [[ $s =~ ^[1-9][0-9]*0$ ]] || { echo "scale.sh: size $s is not a positive multiple of 10" >&2; exit 2; }
done
largest=${sizes[-1]}
((shards >= 1 && parallel >= 1)) || { echo "scale.sh: SHARDS and PARALLEL must be at least 1" >&2; exit 2; }
# shellcheck source=bench/lib.sh
source bench/lib.sh

# The index: at least the largest size's projects; a cached bigger one is kept (its first projects serve).
index=$out/scale-index
need=$((largest / 10))
have=$(python3 -c 'import json, sys
try: print(json.load(open(sys.argv[1]))["projects"])
except Exception: print(0)' "$index/composition.json")
projects=${INDEX_PROJECTS:-$((have > need ? have : need))}
((projects >= need)) || { echo "scale.sh: INDEX_PROJECTS=$projects is below the largest size's $need" >&2; exit 2; }
echo "scale.sh: the index ($index, $projects projects; generated once)" >&2
t0=$(date +%s.%N)
python3 bench/scale_index.py "$index" --projects "$projects" --jobs "$jobs" >"$out/scale-index.txt"
echo "scale.sh: the index took $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" \
  "$t0" "$(date +%s.%N)") s: $(cat "$out/scale-index.txt")" >&2
list_of() {  # list_of K: a file of the first K project names
  if [[ -f $index/projects-$1.txt ]]; then echo "$index/projects-$1.txt"; return; fi
  head -n "$1" "$index/projects-$projects.txt" >"$work/projects-$1.txt"
  echo "$work/projects-$1.txt"
}

# The server, with the latency (lib.sh's start_server takes no options).
python3 tests/net/server.py --root "$index/root" --latency "$latency" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do grep -q '^PORT ' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/^PORT /{print $2}' "$work/server.out")
[[ -n $port ]] || { echo "scale.sh: the server did not start: $(cat "$work/server.err")" >&2; exit 2; }
base=http://127.0.0.1:$port

# Warm the server: every page the run asks for (the largest size's projects) once; it hashes each file on the
# first page that lists it.
echo "scale.sh: warming $need project pages" >&2
python3 - "$base/scale/simple/" "$(list_of "$need")" <<'PY'
import sys, urllib.request
from concurrent.futures import ThreadPoolExecutor
base, projects = sys.argv[1], open(sys.argv[2]).read().split()
def get(p):
    req = urllib.request.Request(base + p + "/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    return len(urllib.request.urlopen(req).read())
with ThreadPoolExecutor(8) as pool:
    list(pool.map(get, projects))
PY
curl -sf -X DELETE "$base/_stats" >/dev/null

scan_help=$("$wc" scan --help 2>/dev/null || true)  # (grep -q in a pipe would end the writer early: pipefail)
if [[ $scan_help == *--projects-file* ]]; then projects_file=1; else projects_file=0; fi
project_opts() {  # project_opts K: the options naming the first K projects, one a line
  local f
  f=$(list_of "$1")
  if ((projects_file)); then printf '%s\n' --projects-file "$f"; else sed 's/^/--project\n/' "$f"; fi
}
opts=(--index "$base/scale/simple/" --no-cache -q --image "$image")

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
ok_rc() { [[ $1 == 0 || $1 == 1 ]]; }  # 1: a new wheel is incompatible with the image
now() { date +%s.%N; }
files_of() {  # files_of DIR OUT.json: the sizes of DIR/report/report.{json,html}
  python3 -c 'import json, os, sys
d = sys.argv[1] + "/report/"
json.dump({f: os.path.getsize(d + f) if os.path.isfile(d + f) else None for f in ("report.json", "report.html")},
          open(sys.argv[2], "w"))' "$1" "$2"
}

rm -f "$out"/scale-[0-9]* "$out"/scale-merge* "$out"/scale-html* "$out"/scale-summary.md "$out"/scale-results.json
for s in "${sizes[@]}"; do
  d=$work/s$s; mkdir -p "$d/state"
  mapfile -t popts < <(project_opts $((s / 10)))
  echo "scale.sh: $s wheels ($((s / 10)) projects), one process, cold" >&2
  t0=$(now); rc=0
  /usr/bin/time -v -o "$out/scale-$s.time" "$wc" scan "${opts[@]}" "${popts[@]}" --state "$d/state" \
    --report "$d/report" --pins "$d/pins.env" >"$out/scale-$s.txt" 2>"$out/scale-$s.err" || rc=$?
  t1=$(now)
  if ! ok_rc $rc; then
    echo "scale.sh: the scan of $s wheels exited $rc (see $out/scale-$s.*)" >&2; tail -5 "$out/scale-$s.err" >&2; exit 2
  fi
  echo "$t0 $t1 $rc" >"$out/scale-$s.wall"
  stats "$out/scale-$s.stats.json"
  files_of "$d" "$out/scale-$s.files.json"
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]; json.dump(s, open(sys.argv[2], "w"))' \
    "$d/report/report.json" "$out/scale-$s.summary.json"
done
cp "$work/s$largest/report/report.json" "$out/scale-$largest.report.json"
cp "$work/s$largest/pins.env" "$out/scale-$largest.pins.env"

# The merge: the largest size as SHARDS shards, PARALLEL at a time, then scan --merge.
d=$work/merge; mkdir -p "$d"
mapfile -t popts < <(project_opts $((largest / 10)))
echo "scale.sh: $largest wheels as $shards shards ($parallel at a time), then the merge" >&2
declare -A shard_of=()
dirs=()
wait_one() {
  local pid=0 rc=0 k
  wait -n -p pid "${!shard_of[@]}" || rc=$?
  k=${shard_of[$pid]}; unset "shard_of[$pid]"
  if ! ok_rc $rc; then
    echo "scale.sh: shard $k/$shards exited $rc (see $out/scale-merge-shard$k.*)" >&2
    tail -5 "$out/scale-merge-shard$k.err" >&2
    for pid in "${!shard_of[@]}"; do  # the shards still running: /usr/bin/time's child, then time
      pkill -TERM -P "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true
    done
    exit 2
  fi
}
t0=$(now)
for k in $(seq "$shards"); do
  while ((${#shard_of[@]} >= parallel)); do wait_one; done
  mkdir -p "$d/shard-$k"; dirs+=("$d/shard-$k")
  /usr/bin/time -v -o "$out/scale-merge-shard$k.time" "$wc" scan "${opts[@]}" "${popts[@]}" --shard "$k/$shards" \
    --state "$d/shard-$k" >"$out/scale-merge-shard$k.txt" 2>"$out/scale-merge-shard$k.err" &
  shard_of[$!]=$k
done
while ((${#shard_of[@]} > 0)); do wait_one; done
t1=$(now)
stats "$out/scale-merge-shards.stats.json"
rc=0
/usr/bin/time -v -o "$out/scale-merge.time" "$wc" scan "${opts[@]}" "${popts[@]}" --merge "${dirs[@]}" \
  --state "$d/state" --report "$d/report" --pins "$d/pins.env" >"$out/scale-merge.txt" 2>"$out/scale-merge.err" || rc=$?
t2=$(now)
if ! ok_rc $rc; then
  echo "scale.sh: the merge exited $rc (see $out/scale-merge.*)" >&2; tail -5 "$out/scale-merge.err" >&2; exit 2
fi
echo "$t0 $t1 $t2 $rc" >"$out/scale-merge.wall"
stats "$out/scale-merge.stats.json"
files_of "$d" "$out/scale-merge.files.json"
cp "$d/report/report.json" "$out/scale-merge.report.json"; cp "$d/pins.env" "$out/scale-merge.pins.env"

# The equality of the merged run to the one process: report, pins, state.
python3 - "$work/s$largest" "$d" "$out/scale-merge.equal.json" <<'PY'
import json, os, sqlite3, sys
one, merged, result = sys.argv[1:]

sys.path.insert(0, "bench")
from reports import first_diff, norm  # noqa: E402

def as_json(v):
    try:
        return json.loads(v) if isinstance(v, (str, bytes)) else v
    except ValueError:
        return v

def state(folder):
    con = sqlite3.connect(f"file:{folder}/state.db?mode=ro", uri=True)
    wheels = {}
    for key, record in con.execute("SELECT key, record FROM wheels"):
        rec = as_json(record)
        if isinstance(rec, dict):
            rec.pop("first_seen", None)
        wheels[key] = rec
    runs = {}
    for seq, entry, remembered in con.execute("SELECT seq, entry, remembered FROM run_wheels"):
        rec = as_json(remembered)
        if isinstance(rec, dict):
            rec.pop("first_seen", None)  # when each run checked it
        runs[seq] = {"entry": as_json(entry), "remembered": rec}
    con.close()
    return {"wheels": wheels, "run_wheels": runs}

out = {"report": first_diff(norm(f"{one}/report/report.json"), norm(f"{merged}/report/report.json"))}
out["report_same"] = out["report"] is None
out["pins_same"] = open(f"{one}/pins.env").read().split("\n")[1:] == open(f"{merged}/pins.env").read().split("\n")[1:]
dbs = [f"{one}/state/state.db", f"{merged}/state/state.db"]
if all(os.path.isfile(p) for p in dbs):
    a, b = state(f"{one}/state"), state(f"{merged}/state")
    out["state"] = first_diff(a, b)
    out["state_same"] = out["state"] is None
    out["state_rows"] = {"wheels": len(a["wheels"]), "run_wheels": len(a["run_wheels"])}
else:
    absent = [p for p in dbs if not os.path.isfile(p)]
    present = sorted(set(os.listdir(f"{one}/state")) | set(os.listdir(f"{merged}/state")))
    out["state"] = None
    out["state_same"] = None
    out["state_note"] = (f"not compared: no state.db in {', '.join(os.path.dirname(p) for p in absent)} "
                         f"(the state folders hold {', '.join(present) or 'nothing'}: an older binary's state.json)")
json.dump(out, open(result, "w"), indent=1)
PY

# The HTML: the largest one-process report.html in headless chromium.
html=$work/s$largest/report/report.html
echo "scale.sh: loading $html ($(stat -c %s "$html" 2>/dev/null || echo '?') bytes) in chromium" >&2
rc=0
python3 tests/tools/cdp_page.py "$html" --selector "$selector" --screenshot "$out/scale-html.png" --timeout 300 \
  >"$out/scale-html.json" 2>"$out/scale-html.err" || rc=$?
if ((rc == 0)) && python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["found"] else 1)' \
    "$out/scale-html.json"; then
  :
elif ((rc == 0)); then  # an HTML without the selector (an older binary's): measure its header instead
  echo "scale.sh: $selector is not in the page; measuring its header" >&2
  python3 tests/tools/cdp_page.py "$html" --selector header --screenshot "$out/scale-html.png" --timeout 300 \
    >"$out/scale-html.json" 2>"$out/scale-html.err" || rc=$?
  echo "$selector" >"$out/scale-html.fallback"
fi
if ((rc != 0)); then
  echo "scale.sh: cdp_page.py failed: $(cat "$out/scale-html.err")" >&2; echo '{}' >"$out/scale-html.json"
fi

python3 - "$out" "$largest" "$shards" "$parallel" "$latency" "$image" "$projects_file" "$wc" "${sizes[@]}" <<'PY' \
  | tee "$out/scale-summary.md"
import json, os, re, subprocess, sys
out, largest, shards, parallel, latency, image, projects_file, wc = sys.argv[1:9]
sizes = [int(s) for s in sys.argv[9:]]
largest, shards = int(largest), int(shards)
comp = json.load(open(f"{out}/scale-index/composition.json"))
version = subprocess.run([wc, "--version"], capture_output=True, text=True).stdout.strip()

def rss(path):
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(path).read()).group(1)) / 1024

def load(path, default=None):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return default

mb = lambda b: "-" if b is None else f"{b / 1e6:.1f} MB"
results = {"binary": version, "image": image, "latency_s": float(latency), "projects_file": projects_file == "1",
           "index": {k: comp[k] for k in ("wheels", "bytes", "projects", "tag", "library", "seconds") if k in comp},
           "sizes": [], "merge": None, "html": None, "checks": {}}
print(f"### `wheelcheck scan`, cold, at scale: {', '.join(f'{s:,}' for s in sizes)} wheels of a generated index "
      f"({comp['tag']}, ~{comp['bytes'] / comp['wheels'] / 1e3:.1f} KB each), image {image}, loopback server with "
      f"{float(latency) * 1000:.0f} ms latency\n")
print(f"{version}; projects given as {'--projects-file' if projects_file == '1' else 'one --project each'}\n")
print("| size | wheels | wall | wheels/s | ms/wheel | peak RSS | requests | bytes | report.json | report.html |")
print("|---|---|---|---|---|---|---|---|---|---|")
for s in sizes:
    p = f"{out}/scale-{s}"
    t = open(p + ".wall").read().split()
    wall = float(t[1]) - float(t[0])
    summary = load(p + ".summary.json", {})
    wheels = summary.get("fresh", summary.get("new", 0))
    st, files = load(p + ".stats.json"), load(p + ".files.json")
    row = {"size": s, "wheels": wheels, "wall_s": round(wall, 2), "exit": int(t[2]),
           "wheels_per_s": round(wheels / wall, 1) if wall else None,
           "ms_per_wheel": round(wall * 1000 / wheels, 3) if wheels else None,
           "peak_rss_mb": round(rss(p + ".time"), 1),
           "requests": st["requests"], "bytes": st["bytes"], "pages": st["pages"], "files": st["files"],
           "report_json_bytes": files["report.json"], "report_html_bytes": files["report.html"], "summary": summary}
    results["sizes"].append(row)
    print(f"| {s:,} | {wheels:,} | {wall:.1f} s | {row['wheels_per_s']} | {row['ms_per_wheel']} | "
          f"{row['peak_rss_mb']:.0f} MB | {st['requests']:,} | {mb(st['bytes'])} | {mb(files['report.json'])} | "
          f"{mb(files['report.html'])} |")

p = f"{out}/scale-merge"
t = [float(x) for x in open(p + ".wall").read().split()[:3]]
shard_rss = [round(rss(f"{p}-shard{k}.time"), 1) for k in range(1, shards + 1)]
eq, st, sst = load(p + ".equal.json"), load(p + ".stats.json"), load(p + "-shards.stats.json")
files = load(p + ".files.json")
merged_summary = load(p + ".report.json", {}).get("summary", {})
m = {"size": largest, "shards": shards, "parallel": int(parallel), "shards_wall_s": round(t[1] - t[0], 2),
     "merge_wall_s": round(t[2] - t[1], 2), "merge_peak_rss_mb": round(rss(p + ".time"), 1),
     "shard_peak_rss_mb": shard_rss, "largest_shard_peak_rss_mb": max(shard_rss),
     "shards_requests": sst["requests"], "shards_bytes": sst["bytes"], "merge_requests": st["requests"],
     "report_json_bytes": files["report.json"], "report_html_bytes": files["report.html"],
     "wheels": merged_summary.get("fresh", merged_summary.get("new")), **eq}
results["merge"] = m
print(f"| merge: {largest:,} as {shards} shards ({parallel} at a time) | {m['wheels']:,} | "
      f"shards {m['shards_wall_s']:.1f} s, merge {m['merge_wall_s']:.1f} s | - | - | "
      f"merge {m['merge_peak_rss_mb']:.0f} MB, largest shard {m['largest_shard_peak_rss_mb']:.0f} MB | "
      f"{sst['requests']:,} (merge {st['requests']}) | {mb(sst['bytes'])} | "
      f"{mb(files['report.json'])} | {mb(files['report.html'])} |")

html = load(f"{out}/scale-html.json", {}) or {}
fallback = os.path.isfile(f"{out}/scale-html.fallback")
results["html"] = dict(html, fallback_from=open(f"{out}/scale-html.fallback").read().strip() if fallback else None)

first, last = results["sizes"][0], results["sizes"][-1]
c = results["checks"]
c["rss_largest_le_150mb"] = last["peak_rss_mb"] <= 150
c["rss_ratio_largest_to_smallest"] = round(last["peak_rss_mb"] / first["peak_rss_mb"], 2)
c["rss_ratio_le_1_5"] = c["rss_ratio_largest_to_smallest"] <= 1.5
c["ms_per_wheel_ratio"] = (round(last["ms_per_wheel"] / first["ms_per_wheel"], 2)
                           if first["ms_per_wheel"] and last["ms_per_wheel"] else None)
c["merge_le_150mb"] = m["merge_peak_rss_mb"] <= 150
c["merged_equal"] = bool(m["report_same"] and m["pins_same"] and m["state_same"] is not False)
c["html_load_ms"] = html.get("load_ms")
c["html_ok"] = bool(html.get("load_ms") is not None and html["load_ms"] < 3000 and html.get("visible")
                    and not fallback)
yn = lambda b: "yes" if b else "no"
print()
print(f"- peak RSS at {last['size']:,} <= 150 MB: {yn(c['rss_largest_le_150mb'])} ({last['peak_rss_mb']:.0f} MB)")
print(f"- <= 1.5x the {first['size']:,}-wheel figure: {yn(c['rss_ratio_le_1_5'])} "
      f"({c['rss_ratio_largest_to_smallest']}x: "
      f"{last['peak_rss_mb']:.0f} MB / {first['peak_rss_mb']:.0f} MB)")
print(f"- ms per wheel at {last['size']:,} vs {first['size']:,}: ratio {c['ms_per_wheel_ratio']} "
      f"({last['ms_per_wheel']} / {first['ms_per_wheel']})")
print(f"- merge <= 150 MB: {yn(c['merge_le_150mb'])} ({m['merge_peak_rss_mb']:.0f} MB; the largest shard "
      f"{m['largest_shard_peak_rss_mb']:.0f} MB)")
state_words = ("state equal" if m["state_same"] else f"state differs at {m['state']}" if m["state_same"] is False
               else m.get("state_note", "state not compared"))
report_words = "equal" if m["report_same"] else f"differs at {m['report']}"
print(f"- merged = one process: {yn(c['merged_equal'])} (report {report_words}; "
      f"pins {'equal' if m['pins_same'] else 'differ beyond their first line'}; {state_words})")
if html.get("load_ms") is None:
    why = open(out + "/scale-html.err").read().strip()[:300]
    print(f"- report.html load < 3 s with summary visible: not measured ({why})")
else:
    what = (f"{results['html']['fallback_from']} absent from the page: its header instead" if fallback
            else html["selector"])
    print(f"- report.html load < 3 s with summary visible: {yn(c['html_ok'])} (load {html['load_ms'] / 1000:.2f} s, "
          f"DOMContentLoaded {html['dom_content_loaded_ms'] / 1000:.2f} s, {what} "
          f"{'visible' if html.get('visible') else 'found but not visible' if html.get('found') else 'not found'}; "
          f"{mb(html.get('bytes'))}; screenshot {out}/scale-html.png)")
json.dump(results, open(f"{out}/scale-results.json", "w"), indent=1)
PY

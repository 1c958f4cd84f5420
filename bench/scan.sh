#!/usr/bin/env bash
# The scan benchmark: a second `wheelcheck scan` of an unchanged index of 10 projects (1-3 small wheels each,
# 19 in all) on the loopback server (tests/net/server.py). The first scan (cold: empty --state and
# --cache-dir) fetches the pages and checks every wheel; the second, with the same state and cache, should
# only revalidate the pages (If-None-Match -> 304) and move no wheel bytes. Measured side by side in one run:
#   cold     the first scan: wall time (/usr/bin/time), requests and bytes by kind from the server's /_stats
#   second   the same command again: requests by kind (pages vs files), bytes moved (target: no wheel bytes),
#            wall time (hyperfine median, server up; every run is again a second scan)
# The wheels are copies of build/samples/flagos/*.whl and build/samples/hello_native-*.whl renamed per
# project (proj_N-1.J-<tags>.whl), each given its own zip comment so that no two share a sha256 (else the
# profile cache would spare the cold scan most fetches). Uses build/wheelcheck as it is (copied to a temp
# dir first); never builds. Results: bench/out/scan-*; a Markdown table on stdout (bench/out/scan-summary.md).
#
#   bench/scan.sh        # needs build/samples (built with the project); RUNS=10 (hyperfine runs)
set -euo pipefail
cd "$(dirname "$0")/.."
samples=(build/samples/flagos/*.whl build/samples/hello_native-1.0-cp311-cp311-linux_x86_64.whl)
for s in "${samples[@]}"; do [[ -f $s ]] || { echo "scan.sh: $s absent: build the project first" >&2; exit 2; }; done
bench_name=scan.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh

# The index: root/bench/proj-N/proj_N-1.J-<python>-<abi>-<platform>.whl, N = 0..9, J = 1..(N % 3 + 1).
python3 - "$work/root/bench" "${samples[@]}" <<'PY'
import os, shutil, sys, zipfile
root, samples = sys.argv[1], sys.argv[2:]
for n in range(10):
    folder = os.path.join(root, f"proj-{n}")
    os.makedirs(folder)
    for j in range(1, n % 3 + 2):
        src = samples[(n + j) % len(samples)]
        tags = os.path.basename(src)[:-4].split("-")[-3:]
        dst = os.path.join(folder, f"proj_{n}-1.{j}-{'-'.join(tags)}.whl")
        shutil.copyfile(src, dst)
        with zipfile.ZipFile(dst, "a") as z:  # a distinct sha256; RECORD does not cover the comment
            z.comment = f"wheelcheck bench/scan.sh proj-{n} 1.{j}".encode()
PY
nwheels=$(find "$work/root/bench" -name '*.whl' | wc -l)

start_server "$work/root"

stats() {  # stats OUT.json: the requests since the last clear, by kind and status; then clear
  curl -sf "$base/_stats" | python3 -c '
import collections, json, sys
reqs = json.load(sys.stdin)
out = {}
for kind, marker in (("pages", "/simple/"), ("files", "/files/")):
    rs = [r for r in reqs if marker in r["path"]]
    out[kind] = {"requests": len(rs), "bytes": sum(r["bytes_sent"] for r in rs),
                 "status": dict(collections.Counter(str(r["status"]) for r in rs))}
out["other"] = len(reqs) - out["pages"]["requests"] - out["files"]["requests"]
json.dump(out, open(sys.argv[1], "w"))' "$1"
  curl -sf -X DELETE "$base/_stats" >/dev/null
}

projects=(); for n in $(seq 0 9); do projects+=(--project "proj-$n"); done
scan=("$wc" scan --index "$base/bench/simple/" "${projects[@]}" --state "$work/state" --cache-dir "$work/cache"
      --report "$work/report" -q)
curl -sf -X DELETE "$base/_stats" >/dev/null
# Cold: 1 when a new wheel is incompatible with an image its tags target (these samples are), 0 when none.
rc=0; /usr/bin/time -v "${scan[@]}" >"$out/scan-cold.txt" 2>"$out/scan-cold.time" || rc=$?
[[ $rc == 0 || $rc == 1 ]] || { echo "scan.sh: the cold scan exited $rc (see $out/scan-cold.time)" >&2; exit 2; }
stats "$out/scan-cold.stats.json"
rc=0; /usr/bin/time -v "${scan[@]}" >"$out/scan-second.txt" 2>"$out/scan-second.time" || rc=$?
[[ $rc == 0 ]] || { echo "scan.sh: the second scan exited $rc (nothing is new: expected 0)" >&2; exit 2; }
stats "$out/scan-second.stats.json"
hyperfine -N --warmup 1 --runs "${RUNS:-10}" --export-json "$out/scan.json" -n second "${scan[*]}" >&2
curl -sf -X DELETE "$base/_stats" >/dev/null

python3 - "$out" "$nwheels" <<'PY' | tee "$out/scan-summary.md"
import json, re, sys
out, nwheels = sys.argv[1], int(sys.argv[2])
def timefile(path):
    text = open(path).read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1).split(":")
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
    return secs, rss
median = json.load(open(f"{out}/scan.json"))["results"][0]["median"]
print(f"### `wheelcheck scan` of an unchanged index: 10 projects, {nwheels} wheels, loopback server\n")
print("| scan | page requests (status) | page bytes | wheel requests (status) | wheel bytes | wall | peak RSS |")
print("|---|---|---|---|---|---|---|")
for run in ("cold", "second"):
    s = json.load(open(f"{out}/scan-{run}.stats.json"))
    secs, rss = timefile(f"{out}/scan-{run}.time")
    wall = f"{median * 1000:.0f} ms (median; one run {secs * 1000:.0f} ms)" if run == "second" else f"{secs * 1000:.0f} ms (one run)"
    st = lambda k: ", ".join(f"{n}x {c}" for c, n in sorted(s[k]["status"].items())) or "-"
    print(f"| {run} | {s['pages']['requests']} ({st('pages')}) | {s['pages']['bytes']} B | "
          f"{s['files']['requests']} ({st('files')}) | {s['files']['bytes']} B | {wall} | {rss:.0f} MB |")
s = json.load(open(f"{out}/scan-second.stats.json"))
ok = s["files"]["requests"] == 0 and s["files"]["bytes"] == 0
print(f"\n- second scan: {'no wheel request, no wheel bytes (meets the target)' if ok else 'MISSES the target: wheel bytes moved'}; "
      f"{s['pages']['bytes']} bytes of pages")
PY

#!/usr/bin/env bash
# What reading the wheel's Python sources for the native files they load costs (issue 62), side by side in one
# run, on the torch-shaped wheel (bench/torch_shaped.py: three real libraries and 1,900 Python files):
#   1. a local check, `wheelcheck WHEEL --image debian12 --no-cache -q`, with the sources read (the default)
#      against `--no-python-sources` (the same binary), and against BEFORE=/path/to/an/older/wheelcheck when
#      given: medians of runs interleaved round by round (RUNS=15; bench/lib.sh interleaved), the median of
#      each round's ratio to the skipped read, and peak RSS (/usr/bin/time -v).
#      Target: the sources add under 10% to the check's time.
#      TORCH_SOURCES=DIR packs real Python files (the first 1,900 under DIR) instead of generated ones.
#   2. a remote headers-only check on the loopback range-capable server (tests/net/server.py): the bytes it sent
#      for the wheel's file and the requests, with and without the sources, and what the answer says when they
#      are skipped (a python-load condition, never a silent "loads").
# Uses build/wheelcheck (or WHEELCHECK_BIN) as it is, copied first; never builds. Results: bench/out/pysrc-*,
# a Markdown table on stdout (and bench/out/pysrc-summary.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bench_name=python-sources.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh
before=
if [[ -n ${BEFORE:-} ]]; then cp "$BEFORE" "$work/bin/before"; before=$work/bin/before; fi
# TORCH_SOURCES=DIR: real Python files instead of the generated ones (PyTorch's own: the corpus's
# debs/python3-torch-cuda/usr/lib/python3/dist-packages; bench/torch_shaped.py --sources).
shaped=$(python3 bench/torch_shaped.py "$work/shaped" 1900 ${TORCH_SOURCES:+--sources "$TORCH_SOURCES"})
file=$(basename "$shaped")

# 1. local
for flags in "" "--no-python-sources"; do
  rc=0
  # shellcheck disable=SC2086
  /usr/bin/time -v "$wc" "$shaped" --image debian12 --no-cache -q $flags >"$work/out.txt" 2>"$out/pysrc-local${flags:+-skip}.time" || rc=$?
  case $rc in 0 | 1 | 3 | 4) ;; *) echo "$bench_name: the check exited $rc: $(tail -3 "$out/pysrc-local${flags:+-skip}.time")" >&2; exit 2 ;; esac
done
cmds=(skipped "$wc $shaped --image debian12 --no-cache -q --no-python-sources" sources "$wc $shaped --image debian12 --no-cache -q")
[[ -n $before ]] && cmds+=(before "$before $shaped --image debian12 --no-cache -q")
RUNS=${RUNS:-15} interleaved "$out/pysrc-local.json" "${cmds[@]}"

# 2. remote, headers-only
mkdir -p "$work/root/bench/torch-shaped"
ln "$shaped" "$work/root/bench/torch-shaped/" 2>/dev/null || ln -s "$shaped" "$work/root/bench/torch-shaped/"
start_server "$work/root"
path=/bench/files/torch-shaped/$file
url="$base$path#sha256=$(sha256sum "$shaped" | cut -d' ' -f1)"
for mode in sources skipped; do
  flags=(); [[ $mode == skipped ]] && flags=(--no-python-sources)
  curl -sf -X DELETE "$base/_stats" >/dev/null
  rc=0; "$wc" "$url" --image debian12 --no-cache --json "${flags[@]}" >"$out/pysrc-remote-$mode.json" 2>"$work/remote.err" || rc=$?
  case $rc in 0 | 1 | 3 | 4) ;; *) echo "$bench_name: the remote check exited $rc: $(cat "$work/remote.err")" >&2; exit 2 ;; esac
  curl -sf "$base/_stats" | python3 -c '
import json, sys
reqs = [r for r in json.load(sys.stdin) if r["path"] == sys.argv[1]]
json.dump({"requests": len(reqs), "bytes": sum(r["bytes_sent"] for r in reqs)}, open(sys.argv[2], "w"))' \
    "$path" "$out/pysrc-remote-$mode.stats.json"
done

python3 - "$out" "$shaped" <<'PY' | tee "$out/pysrc-summary.md"
import json, os, re, sys
out, shaped = sys.argv[1:3]
def rss(path):
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(path).read())
    return f"{int(m.group(1)) / 1024:.0f} MB" if m else "?"
local = json.load(open(f"{out}/pysrc-local.json"))["results"]
med = {r["command"]: r["median"] for r in local}
ratio = {r["command"]: r["ratio"] for r in local}
size = os.path.getsize(shaped)
print(f"Python sources on the torch-shaped wheel ({size / 1e6:.1f} MB, 1,900 .py members"
      f"{', PyTorch 2.6' + chr(39) + 's own' if os.environ.get('TORCH_SOURCES') else ', generated'})\n")
print(f"| local check (debian12, --no-cache; {len(local[0]['times'])} interleaved rounds) | median "
      "| vs skipped (median of per-round ratios) | peak RSS |")
print("| --- | --- | --- | --- |")
print(f"| sources read (default) | {med['sources'] * 1000:.1f} ms | {ratio['sources']:.2f} | {rss(out + '/pysrc-local.time')} |")
print(f"| --no-python-sources | {med['skipped'] * 1000:.1f} ms | 1.00 | {rss(out + '/pysrc-local-skip.time')} |")
if "before" in med:
    print(f"| before (BEFORE=) | {med['before'] * 1000:.1f} ms | {ratio['before']:.2f} | |")
print("\n| remote headers-only check | bytes sent | requests | what the answer says of the sources |")
print("| --- | --- | --- | --- |")
for mode in ("sources", "skipped"):
    st = json.load(open(f"{out}/pysrc-remote-{mode}.stats.json"))
    rep = json.load(open(f"{out}/pysrc-remote-{mode}.json"))
    said = [f for f in rep.get("findings", []) if f.get("kind") == "python-load" and not f.get("member")]
    words = f"{said[0]['severity']}: {said[0]['explanation'][:90]}..." if said else "read (no condition)"
    print(f"| {mode} | {st['bytes']:,} ({st['bytes'] / size:.1%}) | {st['requests']} | {words} |")
PY

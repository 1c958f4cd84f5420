# shellcheck shell=bash disable=SC2034
# Shared by the network benchmarks (remote.sh, scan.sh); sourced, not run. Sets `work` (a temp folder
# removed on exit), `wc` (a private copy of build/wheelcheck, or of $WHEELCHECK_BIN, so a rebuild during the run cannot mix
# binaries), WHEELCHECK_DB and TMPDIR; start_server ROOT starts tests/net/server.py on ROOT and sets
# `base` (http://127.0.0.1:PORT); the server is stopped on exit.
bench_name=${bench_name:-bench}
out=bench/out; mkdir -p "$out"
work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin" "$work/cache" "$work/tmp"
for try in 1 2; do
  if cp "${WHEELCHECK_BIN:-build/wheelcheck}" "$work/bin/wheelcheck" 2>/dev/null && "$work/bin/wheelcheck" --version >/dev/null 2>&1; then break; fi
  ((try == 2)) && { echo "$bench_name: build/wheelcheck is missing or broken" >&2; exit 2; }
  echo "$bench_name: build/wheelcheck unusable (being rebuilt?); retrying in 30 s" >&2; sleep 30
done
wc=$work/bin/wheelcheck
export WHEELCHECK_DB=$PWD/db TMPDIR=$work/tmp   # the db beside the sources; downloads land in $work

start_server() {
  python3 tests/net/server.py --root "$1" >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  for _ in $(seq 100); do grep -q '^PORT ' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
  local port
  port=$(awk '/^PORT /{print $2}' "$work/server.out")
  [[ -n $port ]] || { echo "$bench_name: the server did not start: $(cat "$work/server.err")" >&2; exit 2; }
  base=http://127.0.0.1:$port
}

# medians OUT.json NAME COMMAND [NAME COMMAND ...]: hyperfine's JSON (results[].command, .median), from
# hyperfine when installed, else RUNS alternating runs of each command after one warm-up (exit codes ignored).
# interleaved JSON NAME CMD [NAME CMD ...]: the commands in turn, round by round (the order reversed every other
# round), RUNS rounds after one not counted, so that a shared machine's load falls on all of them alike
# (hyperfine runs one command's series after the other's). Writes each command's times and median, and the
# median of its per-round ratio to the first command ("ratio"); prints the same to stderr.
interleaved() {
  local json=$1; shift
  python3 - "$json" "${RUNS:-7}" "$@" <<'PY'
import json, shlex, statistics, subprocess, sys, time
out, runs, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
cmds = [(pairs[i], shlex.split(pairs[i + 1])) for i in range(0, len(pairs), 2)]
times = {n: [] for n, _ in cmds}
for r in range(runs + 1):
    for n, c in (cmds if r % 2 == 0 else cmds[::-1]):
        t = time.perf_counter()
        subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r > 0: times[n].append(time.perf_counter() - t)
first = cmds[0][0]
res = [{"command": n, "median": statistics.median(times[n]), "times": times[n],
        "ratio": statistics.median(a / b for a, b in zip(times[n], times[first]))} for n, _ in cmds]
json.dump({"results": res}, open(out, "w"))
for r in res:
    print(f"  {r['command']}: median {r['median'] * 1000:.1f} ms of {runs}, per-round ratio to {first} {r['ratio']:.3f}",
          file=sys.stderr)
PY
}

medians() {
  local json=$1; shift
  if command -v hyperfine >/dev/null; then
    local args=()
    while (($#)); do args+=(-n "$1" "$2"); shift 2; done
    hyperfine -N -i --warmup 1 --runs "${RUNS:-3}" --export-json "$json" "${args[@]}" >&2
    return
  fi
  python3 - "$json" "${RUNS:-3}" "$@" <<'PY'
import json, shlex, statistics, subprocess, sys, time
out, runs, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
cmds = [(pairs[i], shlex.split(pairs[i + 1])) for i in range(0, len(pairs), 2)]
times = {n: [] for n, _ in cmds}
for r in range(runs + 1):
    for n, c in cmds:
        t = time.monotonic()
        subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r > 0: times[n].append(time.monotonic() - t)
json.dump({"results": [{"command": n, "median": statistics.median(times[n]), "times": times[n]} for n, _ in cmds]},
          open(out, "w"))
for n, _ in cmds: print(f"  {n}: median {statistics.median(times[n]):.3f} s of {runs}", file=sys.stderr)
PY
}

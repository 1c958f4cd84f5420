#!/usr/bin/env bash
# Same output, byte for byte (issue 61): every command of two wheelcheck binaries on the same inputs, and
# what each prints and writes compared. A restructuring that must not change what users see runs this with
# the binary of the commit it starts from and the one it makes:
#
#   bench/same-output.sh OLD_BINARY NEW_BINARY      # e.g. /tmp/base/build/wheelcheck build/wheelcheck
#
# The inputs: the samples (build/samples, or SAMPLES=DIR), the db beside this script (or WHEELCHECK_DB),
# the corpus wheels when present (CORPUS=DIR, default ~/.cache/wheelcheck-corpus/wheels; skipped, said on
# one line, when absent), and a scan of the sample wheels on a loopback index (tests/net/server.py): one
# process, two shards and their --merge. Each case runs once per binary, in a folder of its own with the
# same relative paths; its stdout, stderr, exit code and every file it writes are compared after the scan's
# clock (generated_at, first_seen: ISO times) is blanked. Offline (WHEELCHECK_OFFLINE=1), no settings file,
# no profile cache, a private HOME (KEEP=1 keeps the folder of outputs and says where). Exits 0 when everything is the same, 1 with the differences (diff -r,
# the first 200 lines), 2 when it cannot run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
old=$(realpath "${1:?usage: bench/same-output.sh OLD_BINARY NEW_BINARY}")
new=$(realpath "${2:?usage: bench/same-output.sh OLD_BINARY NEW_BINARY}")
for b in "$old" "$new"; do
  "$b" --version >/dev/null 2>&1 || { echo "same-output.sh: $b does not run" >&2; exit 2; }
done
samples=${SAMPLES:-$repo/build/samples}
[[ -d $samples ]] || samples=$repo/b/samples
[[ -d $samples ]] || { echo "same-output.sh: no samples (build them: cmake --build build --target samples)" >&2; exit 2; }
db=$(realpath "${WHEELCHECK_DB:-$repo/db}")
corpus=${CORPUS:-$HOME/.cache/wheelcheck-corpus/wheels}

work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; fi
  if [[ -n ${KEEP:-} ]]; then echo "same-output.sh: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
export WHEELCHECK_OFFLINE=1 WHEELCHECK_DB=$db HOME=$work/home NO_COLOR=1
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL WHEELCHECK_CACHE_DIR XDG_CACHE_HOME GITHUB_OUTPUT GITHUB_ENV GITHUB_STEP_SUMMARY
mkdir -p "$HOME"

mapfile -t wheels < <(find "$samples" -maxdepth 2 -name '*.whl' | sort)
flagtree=$(printf '%s\n' "${wheels[@]}" | grep /flagtree- | head -1)
flagcx=$(printf '%s\n' "${wheels[@]}" | grep 'flagcx-.*cu130' | head -1)

cases=()  # NAME<TAB>ARGS (ARGS: words separated by tabs... kept simple: one string, split on spaces)
add() { cases+=("$1"$'\t'"$2"); }
i=0
for w in "${wheels[@]}"; do
  i=$((i + 1))
  add "w$i-check-text" "check $w --image cuda13.0 --no-cache"
  add "w$i-check-files" "check $w --image cuda13.0 --no-cache --format json -o json=o.json -o sarif=o.sarif -o junit=o.xml -o markdown=o.md"
  for f in sh github sarif junit; do add "w$i-check-$f" "check $w --image cuda13.0 --no-cache --format $f"; done
  add "w$i-check-github-files" "check $w --image cuda13.0 --no-cache --format github --github-output gh.out --env-file gh.env --summary gh.md"
  add "w$i-check-all" "check $w --image all --no-cache"
  add "w$i-check-all-json" "check $w --image all --no-cache --json"
  add "w$i-check-side" "check $w --image cuda13.0,ascend-cann9,manylinux_2_28_x86_64 --no-cache"
  add "w$i-check-assume" "check $w --image cuda13.0 --assume driver=580.95.05 --assume isa=x86-64-v3 --no-cache"
  for f in sh json github sarif junit; do add "w$i-gates-$f" "gates $w --image cuda13.0 --no-cache --format $f"; done
  add "w$i-gates-files" "gates $w --image cuda13.0 --no-cache -o sarif=g.sarif -o json=g.json -o markdown=g.md"
  for f in text json github sarif junit markdown; do add "w$i-lint-$f" "lint $w --no-cache --format $f"; done
  add "w$i-inspect" "inspect $w --no-cache"
  add "w$i-inspect-json" "inspect $w --no-cache --json"
done
if [[ -n $flagtree && -n $flagcx ]]; then
  for f in text json sh github sarif junit; do
    add "env-$f" "check $flagtree --with $flagcx --image cuda13.0 --no-cache --format $f"
  done
  add "env-files" "check $flagtree --with $flagcx --image cuda13.0,ascend-cann9 --no-cache -o json=e.json -o sarif=e.sarif -o junit=e.xml -o markdown=e.md"
  add "env-gates" "gates $flagtree --with $flagcx --image cuda13.0 --no-cache"
  add "several" "check ${wheels[*]} --image cuda13.0 --no-cache"
  add "several-json" "check ${wheels[*]} --image cuda13.0 --no-cache --json"
fi
add "image-show" "image show cuda13.0"
add "image-show-json" "image show cuda13.0 ascend-cann9 --json"
add "exports" "exports $(find "$db/exports" -name "*.exports*" | sort | head -1) --count"
add "images" "images"
add "images-json" "images --json"
add "config" "config"
add "missing-sarif" "check /nonexistent.whl --image cuda13.0 --format sarif -o junit=m.xml"
add "missing-text" "check /nonexistent.whl --image cuda13.0"
add "bad-image" "check ${wheels[0]} --image no-such-image --format junit"
add "bad-format" "check ${wheels[0]} --image cuda13.0 --format yaml"
if [[ -d $corpus ]] && compgen -G "$corpus/*.whl" >/dev/null; then
  for w in "$corpus"/*.whl; do
    n=$(basename "$w" .whl)
    add "corpus-$n-check" "check $w --image cuda13.0 --no-cache"
    add "corpus-$n-check-json" "check $w --image cuda13.0,manylinux_2_28_x86_64 --no-cache --json -o sarif=c.sarif -o junit=c.xml"
    add "corpus-$n-lint" "lint $w --no-cache --format json"
  done
else
  echo "same-output.sh: no corpus at $corpus (scripts that fetch it: ../shared/README.md); corpus cases skipped" >&2
fi

run_case() {  # run_case BINARY DIR ARGS [STEP]: stdout, stderr and rc (named STEP.* when given)
  local step=${4:+$4.}
  mkdir -p "$2" && (
    cd "$2"
    # shellcheck disable=SC2086  # the arguments are words separated by spaces on purpose
    set +e; "$1" $3 >"${step}stdout" 2>"${step}stderr"; echo $? >"${step}rc"
  )
}

echo "same-output.sh: ${#cases[@]} cases of check, gates, lint, inspect, images, image show, exports, config" >&2
for c in "${cases[@]}"; do
  name=${c%%$'\t'*}; args=${c#*$'\t'}
  run_case "$old" "$work/old/$name" "$args"
  run_case "$new" "$work/new/$name" "$args"
done

# The scan: the sample wheels as one index on loopback; one process, then two shards and their merge.
root=$work/index
for w in "${wheels[@]}"; do
  p=$(basename "$w" | cut -d- -f1 | tr '_' '-' | tr 'A-Z' 'a-z')
  mkdir -p "$root/s/$p" && cp "$w" "$root/s/$p/"
done
python3 "$repo/tests/net/server.py" --root "$root" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do grep -q '^PORT ' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/^PORT /{print $2}' "$work/server.out")
[[ -n $port ]] || { echo "same-output.sh: the index server did not start: $(cat "$work/server.err")" >&2; exit 2; }
scan="scan --index http://127.0.0.1:$port/s/simple/ --no-cache -q --image cuda13.0,ascend-cann9"
for p in $(ls "$root/s"); do scan+=" --project $p"; done
for side in old new; do
  bin=$old; [[ $side == new ]] && bin=$new
  run_case "$bin" "$work/$side/scan-one" "$scan --state st --report rep --pins pins.env -o sarif=s.sarif -o junit=s.xml -o markdown=s.md"
  for f in json sarif junit; do run_case "$bin" "$work/$side/scan-$f" "$scan --state st --format $f"; done
  run_case "$bin" "$work/$side/scan-shards" "$scan --state s1 --shard 1/2" shard1
  run_case "$bin" "$work/$side/scan-shards" "$scan --state s2 --shard 2/2" shard2
  run_case "$bin" "$work/$side/scan-shards" "$scan --merge s1 s2 --state st --report rep --pins pins.env" merge
  run_case "$bin" "$work/$side/scan-again" "$scan --state st --report rep --pins pins.env" first
  run_case "$bin" "$work/$side/scan-again" "$scan --state st --report rep2 --pins pins2.env" again  # nothing new
done

# The clock: generated_at / first_seen times, and the scan state's own files (not a user's output).
find "$work/old" "$work/new" -type f -print0 | xargs -0 sed -i -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/TIME/g'
if diff -r "$work/old" "$work/new" >"$work/diff" 2>&1; then
  n=$(find "$work/old" -type f | wc -l)
  echo "same-output.sh: the same: ${#cases[@]} cases and the scan, $n files compared" >&2
  exit 0
fi
echo "same-output.sh: DIFFERENT ($(grep -c '^diff\|^Only in' "$work/diff") files):" >&2
head -200 "$work/diff"
exit 1

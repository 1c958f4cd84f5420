#!/usr/bin/env bash
# `wheelcheck lint` on a warm cache, two builds side by side, interleaved by hyperfine in one run (this machine is
# shared and noisy: compare medians of one run, not figures of two), with `check --image debian12` of the after
# build as the yardstick (issue 60: lint as fast as check; target: under 0.3 s warm on the 870 MB torch corpus
# wheel). Peak memory from /usr/bin/time -v. Each build has its own cache folder, warmed by one lint first (the
# profile; the after build's lint report too), so every timed run is a warm one.
#   bench/lint-ab.sh BEFORE_BINARY AFTER_BINARY [WHEEL...]   (default: the corpus's torch and torch_python_ext wheels)
# e.g. git worktree add --detach /tmp/base main && cmake -S /tmp/base -B /tmp/base/b && cmake --build /tmp/base/b
#      --target wheelcheck && bench/lint-ab.sh /tmp/base/b/wheelcheck b/wheelcheck
# The torch wheel is made by ../shared/corpus/fetch-real-binaries.sh --large && ../shared/corpus/make-real-wheels.sh --large.
set -euo pipefail
cd "$(dirname "$0")/.."
(($# >= 2)) || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
before=$(realpath "$1") after=$(realpath "$2")
shift 2
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
wheels=("$@")
((${#wheels[@]})) || wheels=("$corpus"/wheels/torch_cuda_debian-*.whl "$corpus"/wheels/torch_python_ext-*.whl)
for w in "${wheels[@]}"; do
  [[ -f $w ]] || { echo "lint-ab: $w is missing (make it with ../shared/corpus/make-real-wheels.sh --large)" >&2; exit 2; }
done
command -v hyperfine >/dev/null || { echo "lint-ab: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
out=bench/out; mkdir -p "$out"
cb=$(mktemp -d) ca=$(mktemp -d); trap 'rm -rf "$cb" "$ca"' EXIT
export WHEELCHECK_OFFLINE=1 WHEELCHECK_DB=$PWD/db
for w in "${wheels[@]}"; do
  name=$(basename "$w" .whl)
  WHEELCHECK_CACHE_DIR=$cb "$before" lint -q "$w" >/dev/null || true   # warm: the profile (and the report)
  WHEELCHECK_CACHE_DIR=$ca "$after" lint -q "$w" >/dev/null || true
  hyperfine -N --warmup 1 --runs "${RUNS:-5}" -i --export-json "$out/lint-ab-$name.json" \
    -n "before lint" "env WHEELCHECK_CACHE_DIR=$cb $before lint -q $w" \
    -n "after lint" "env WHEELCHECK_CACHE_DIR=$ca $after lint -q $w" \
    -n "after check" "env WHEELCHECK_CACHE_DIR=$ca $after check -q $w --image debian12" >&2
  for side in before after; do
    bin=$before cache=$cb; [[ $side == after ]] && bin=$after cache=$ca
    WHEELCHECK_CACHE_DIR=$cache /usr/bin/time -v "$bin" lint -q "$w" 2>"$out/lint-ab-$name-$side.time" >/dev/null || true
  done
  # The cached report prints what a fresh lint prints.
  for fmt in text json sarif; do
    cmp -s <(WHEELCHECK_CACHE_DIR=$ca "$after" lint -q --format "$fmt" "$w" || true) \
      <("$after" lint -q --no-cache --format "$fmt" "$w" || true) ||
      { echo "lint-ab: $name: the cached --format $fmt differs from a fresh lint" >&2; exit 1; }
  done
  python3 - "$out/lint-ab-$name.json" "$out/lint-ab-$name-before.time" "$out/lint-ab-$name-after.time" "$name" <<'PY'
import json, re, sys
med = {r["command"]: r["median"] for r in json.load(open(sys.argv[1]))["results"]}
rss = [int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(p).read()).group(1)) / 1024 for p in sys.argv[2:4]]
b, a, c = med["before lint"], med["after lint"], med["after check"]
print(f"{sys.argv[4]} (warm, median of {len(json.load(open(sys.argv[1]))['results'][0]['times'])}):")
print(f"  lint   before {1000 * b:7.1f} ms  after {1000 * a:7.1f} ms  after/before {a / b:.3f}")
print(f"  check --image debian12 (after) {1000 * c:7.1f} ms")
print(f"  peak RSS of lint: before {rss[0]:.0f} MB, after {rss[1]:.0f} MB")
PY
done

#!/usr/bin/env bash
# bench/check.sh's commands for two builds side by side, interleaved by hyperfine in one run (this machine is
# shared and noisy: compare medians and ratios of one run, not figures of two): a cached wheel against
# cuda13.0, against every db image, and against the manylinux x86_64 targets; peak memory from /usr/bin/time -v.
#   bench/check-ab.sh BEFORE_BINARY AFTER_BINARY [WHEEL...]   (default: the corpus wheels bench/check.sh uses)
# e.g. git worktree add /tmp/base main~5 && cmake -S /tmp/base -B /tmp/base/build && cmake --build /tmp/base/build
#      --target wheelcheck && bench/check-ab.sh /tmp/base/build/wheelcheck build/wheelcheck
set -euo pipefail
cd "$(dirname "$0")/.."
(($# >= 2)) || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
before=$(realpath "$1") after=$(realpath "$2")
shift 2
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
wheels=("$@")
((${#wheels[@]})) || wheels=("$corpus"/wheels/torch_cuda_debian-*.whl "$corpus"/wheels/torch_python_ext-*.whl)
out=bench/out; mkdir -p "$out"
cb=$(mktemp -d) ca=$(mktemp -d); trap 'rm -rf "$cb" "$ca"' EXIT
export WHEELCHECK_OFFLINE=1
for w in "${wheels[@]}"; do
  name=$(basename "$w" .whl)
  WHEELCHECK_CACHE_DIR=$cb "$before" inspect -q --json "$w" >/dev/null   # the cached profiles a check reuses
  WHEELCHECK_CACHE_DIR=$ca "$after" inspect -q --json "$w" >/dev/null
  args=()
  for what in "cuda13.0" "all" "manylinux_2_*_x86_64"; do
    args+=(-n "before $what" "env WHEELCHECK_CACHE_DIR=$cb $before $w --image $what"
           -n "after $what" "env WHEELCHECK_CACHE_DIR=$ca $after $w --image $what")
  done
  hyperfine -N --warmup 2 --runs "${RUNS:-15}" -i --export-json "$out/check-ab-$name.json" "${args[@]}" >&2
  for side in before after; do
    bin=$before cache=$cb; [[ $side == after ]] && bin=$after cache=$ca
    WHEELCHECK_CACHE_DIR=$cache /usr/bin/time -v "$bin" "$w" --image all 2>"$out/check-ab-$name-$side.time" >/dev/null || true
  done
  python3 - "$out/check-ab-$name.json" "$out/check-ab-$name-before.time" "$out/check-ab-$name-after.time" "$name" <<'PY'
import json, re, sys
med = {r["command"]: r["median"] for r in json.load(open(sys.argv[1]))["results"]}
rss = [int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(p).read()).group(1)) / 1024 for p in sys.argv[2:4]]
print(f"{sys.argv[4]}:")
for what in ("cuda13.0", "all", "manylinux_2_*_x86_64"):
    b, a = med[f"before {what}"], med[f"after {what}"]
    print(f"  --image {what:<22} before {1000 * b:7.1f} ms  after {1000 * a:7.1f} ms  after/before {a / b:.2f}")
print(f"  peak memory, --image all: before {rss[0]:.0f} MB, after {rss[1]:.0f} MB")
PY
done | tee "$out/check-ab-summary.txt"

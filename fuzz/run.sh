#!/usr/bin/env bash
# Builds and runs wheelcheck's libFuzzer targets (fuzz/README.md).
#
#   fuzz/run.sh [SECONDS]     fuzz every target SECONDS (default 60), JOBS at a time (default nproc)
#   fuzz/run.sh --ci          CI's fuzzing, a fixed start: each target a fixed number of runs (fuzz/ci-runs)
#                             from a fixed seed over the seeds and fuzz/regressions alone, so the same
#                             commit starts from the same inputs and runs as many every time
#   fuzz/run.sh --replay      no fuzzing: every target runs once over its corpus and fuzz/regressions
#   TARGETS="zip elf" fuzz/run.sh 600     only those targets
#
# BUILD_DIR (default build-sanitize) is configured with clang-14 and WHEELCHECK_FUZZ=ON when it is not
# yet, only the fuzz targets are built, and the seeds (fuzz/seeds.py) are written into
# BUILD_DIR/fuzz-corpus/<target>, the corpus that grows and is kept between runs. Crashes, leaks, hangs
# (-timeout=10) and out-of-memory (-rss_limit_mb=2048) land in BUILD_DIR/fuzz-artifacts/<target>/, each
# target's log in BUILD_DIR/fuzz-logs/<target>.log. Prints a table and exits 1 when any target found
# something, with the files and the command that reproduces each.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
mode=fuzz
seconds=60
case ${1:-} in
  --replay) mode=replay ;;
  --ci) mode=ci ;;
  -h | --help) sed -n '2,16p' "${BASH_SOURCE[0]}"; exit 0 ;;
  '') ;;
  *[!0-9]*) echo "run.sh: SECONDS must be a number, or --replay" >&2; exit 2 ;;
  *) seconds=$1 ;;
esac
build=$(realpath -m "${BUILD_DIR:-$repo/build-sanitize}")
jobs=${JOBS:-$(nproc)}
read -r -a targets <<<"${TARGETS:-elf zip inflate_tail inflate_middle dist_info names demangle ldconfig index image fatbin lock python layer}"

# --- tools -------------------------------------------------------------------------------------------
missing=()
for p in clang-14 libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "run.sh: installing ${missing[*]}"
  SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- build -------------------------------------------------------------------------------------------
root=$repo
# shellcheck source=scripts/lib/cache.sh
source "$repo/scripts/lib/cache.sh"
# shellcheck source=scripts/lib/sanitize.sh
source "$repo/scripts/lib/sanitize.sh"
if ! grep -qs '^WHEELCHECK_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  if [[ -f $build/CMakeCache.txt ]] && ! grep -qs '^CMAKE_CXX_COMPILER:.*clang' "$build/CMakeCache.txt"; then
    echo "run.sh: $build is configured without clang; WHEELCHECK_FUZZ needs clang (remove it or set BUILD_DIR)" >&2
    exit 2
  fi
  echo "run.sh: configuring $build (clang-14, WHEELCHECK_FUZZ=ON)"
  configure_sanitized "$build"
fi
echo "run.sh: building the fuzz targets in $build"
cmake --build "$build" --target fuzz_targets -j"$(nproc)" >"$build/fuzz-build.log" 2>&1 ||
  { tail -30 "$build/fuzz-build.log"; echo "run.sh: build failed (log: $build/fuzz-build.log)" >&2; exit 2; }

python3 "$here/seeds.py" "$build"
mkdir -p "$build/fuzz-logs"

# --- run ---------------------------------------------------------------------------------------------
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# CI's run counts: "TARGET RUNS" a line. Each is about what a minute of fuzzing that target ran on this
# kind of machine, two targets at a time, when they were set (the figures are in fuzz/README.md).
declare -A ci_runs=()
if [[ $mode == ci ]]; then
  while read -r t n _; do [[ -z $t || $t == \#* ]] || ci_runs[$t]=$n; done <"$here/ci-runs"
  for t in "${targets[@]}"; do
    [[ -n ${ci_runs[$t]:-} ]] || { echo "run.sh: fuzz/ci-runs has no count for $t" >&2; exit 2; }
  done
fi

run_target() {
  local t=$1 corpus=$build/fuzz-corpus/$t artifacts=$build/fuzz-artifacts/$t log=$build/fuzz-logs/$t.log
  local args=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/")
  if [[ $mode == ci ]]; then
    # A fresh corpus of the seeds alone (what libFuzzer adds goes there and is dropped next time), a fixed
    # seed and count: the same start every run. The hang limit has a margin for a loaded machine.
    corpus=$build/fuzz-ci/$t
    rm -rf "$corpus" && mkdir -p "$corpus"
    cp "$build/fuzz-corpus/$t"/seed-* "$corpus/" 2>/dev/null || true
    args=(-timeout=30 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" -seed=1
          -runs="${ci_runs[$t]}")
  fi
  local dirs=("$corpus")
  [[ -d $here/regressions/$t ]] && dirs+=("$here/regressions/$t")
  mkdir -p "$corpus" "$artifacts"
  if [[ $mode == replay ]]; then
    args+=(-runs=0)
  elif [[ $mode == fuzz ]]; then
    args+=(-max_total_time="$seconds")
  fi
  local rc=0 key='' kept=''
  rm -f "$log.kept"
  if [[ $mode == ci && ${FUZZ_KEEP:-1} != 0 ]]; then
    # CI's fuzzing has a fixed start and count: the same code, options and starting inputs run the same
    # campaign (under load what libFuzzer derives can differ a little). A passed run is kept under the
    # sha256 of all of them (in the build caches, beside ccache), and a later run of the same campaign
    # reports it instead of repeating it;
    # any change to the code it fuzzes, the build's options, the count or an input runs it again. FUZZ_KEEP=0
    # always runs.
    key=$({
      # What the binary is made from, not its bytes: the checkout's path is in them (inspector/image/db.cpp's
      # default db, which every target links now that the library is compiled in batches), so the same code
      # in another clone was another binary. The sources (their paths in the clone and their contents), the
      # compiler and the build's options.
      (cd "$repo" && find inspector include probes fuzz cmake CMakeLists.txt -type f \
        \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' -o -name '*.cmake' -o -name CMakeLists.txt \) \
        -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
      grep -E '^(CMAKE_(C|CXX|EXE_LINKER)_FLAGS[A-Z_]*|CMAKE_BUILD_TYPE|WHEELCHECK_[A-Z_]*(UNITY|FUZZ)[A-Z_]*):' "$build/CMakeCache.txt"
      "$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")" --version | head -1
      ldd "$build/fuzz/fuzz_$t" | awk '$3 ~ /^\// {print $3}' | LC_ALL=C sort | xargs -r sha256sum | cut -d' ' -f1
      # The headers compiled in that no shared library stands for (nlohmann-json, CLI11, toml++, fmt's
      # templates): the versions of the -dev packages installed.
      dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' '*-dev' 2>/dev/null | grep '^ii' | LC_ALL=C sort
      # The options but where a find would land (it names the build folder: the key is the same in any clone).
      printf '%s\n' "${args[@]}" | grep -v '^-artifact_prefix='
      echo "ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS"
      find "${dirs[@]}" -type f -printf '%P\n' | LC_ALL=C sort
      find "${dirs[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r cat | sha256sum
    } | sha256sum | cut -c1-32)
    kept=$wheelcheck_cache/fuzz-ci/$t-$key
  fi
  if [[ -n $kept && -f $kept/log && -f $kept/corpus ]]; then
    cp "$kept/log" "$log"
    cp "$kept/corpus" "$log.kept"
    touch "$kept/log"
  else
    "$build/fuzz/fuzz_$t" "${args[@]}" "${dirs[@]}" >"$log" 2>&1 || rc=$?
    if [[ -n $kept && $rc == 0 ]]; then
      mkdir -p "$kept.tmp.$$" && cp "$log" "$kept.tmp.$$/log"
      find "$corpus" -type f | wc -l >"$kept.tmp.$$/corpus"
      rm -rf "$kept" && mv "$kept.tmp.$$" "$kept"
    fi
  fi
  echo "$rc" >"$log.rc"
}

start=$(date +%s)
touch "$build/fuzz-logs/.start"
echo "run.sh: $mode: ${targets[*]} ($([[ $mode == fuzz ]] && echo "${seconds}s each, ")$([[ $mode == ci ]] && echo "fixed runs from seed 1, ")$jobs at a time)"
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  run_target "$t" &
done
wait

# --- report ------------------------------------------------------------------------------------------
result_of() {
  local log=$1 rc=$2
  if grep -q 'ERROR: libFuzzer: timeout' "$log"; then echo timeout
  elif grep -q 'ERROR: libFuzzer: out-of-memory\|allocation-size-too-big\|out of memory' "$log"; then echo oom
  elif grep -q 'ERROR: LeakSanitizer' "$log"; then echo leak
  elif ((rc == 0)); then echo ok
  else echo crash
  fi
}

failed=0
printf '%-13s %12s %9s %8s %8s %8s  %s\n' target runs exec/s cov ft corpus result
for t in "${targets[@]}"; do
  log=$build/fuzz-logs/$t.log
  rc=$(cat "$log.rc" 2>/dev/null || echo 1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  if [[ -f $log.kept ]]; then corpus=$(cat "$log.kept")
  elif [[ $mode == ci ]]; then corpus=$(find "$build/fuzz-ci/$t" -type f | wc -l)
  else corpus=$(find "$build/fuzz-corpus/$t" -type f | wc -l); fi
  result=$(result_of "$log" "$rc")
  [[ $result == ok ]] || failed=1
  [[ -f $log.kept ]] && result="ok (kept: this binary ran these inputs before)"
  printf '%-13s %12s %9s %8s %8s %8s  %s\n' "$t" "${runs:--}" "${eps:--}" "${cov:--}" "${ft:--}" "$corpus" "$result"
done
# Kept campaigns not reported for a month go.
find "$wheelcheck_cache/fuzz-ci" -mindepth 2 -maxdepth 2 -name log -mtime +30 -printf '%h\0' 2>/dev/null | xargs -0 -r rm -rf
echo "run.sh: logs in $build/fuzz-logs/ ($(($(date +%s) - start))s)"
if ((failed)); then
  echo "run.sh: FOUND SOMETHING. Artifacts of this run, each reproduced with the command after it:"
  for t in "${targets[@]}"; do
    find "$build/fuzz-artifacts/$t" -type f -newer "$build/fuzz-logs/.start" 2>/dev/null | while read -r f; do
      echo "  $f"
      echo "    $build/fuzz/fuzz_$t $f"
    done
    rc=$(cat "$build/fuzz-logs/$t.log.rc" 2>/dev/null || echo 1)
    [[ $rc == 0 ]] || echo "  $t: see $build/fuzz-logs/$t.log"
  done
  echo "run.sh: keep a fixed one as fuzz/regressions/<target>/<short-name> (fuzz/README.md)."
  exit 1
fi

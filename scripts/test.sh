#!/usr/bin/env bash
# Quick start, part 2: installs what the build and the tests need, builds with warnings as errors, packs
# the static binaries, and runs every test: the suite (CTest), the sanitized suite and the fuzzers.
#
#   scripts/test.sh [CTEST ARGS...]     e.g. scripts/test.sh -R Scan (both suites)
#
# Two lanes run side by side so that neither core idles (the stage table at the end shows where the time
# went, each stage with its lane):
#   gcc:    build/ (g++, warnings as errors, each file compiled alone as the default build compiles it; the
#           command line, not the unit tests), the
#           static packages for x86_64 and aarch64 (scripts/package.sh all), then the tiers that run
#           that binary (labels loader, jobs, package, docs, corpus);
#   clang:  build-sanitize/ (clang-14, ASan + UBSan + libFuzzer instrumentation; compiled in batches, a
#           unity build of the library, the command line and the tests), the sanitized suite (label unit:
#           the unit tests run here only, with SANITIZE=0 in the gcc lane's suite; in 8 processes,
#           googletest's shards, unless ctest arguments pick tests by name),
#           then CI's fuzzing (fuzz/run.sh --ci: a fixed number of runs per target from a fixed seed,
#           the same every time).
# The lane that is done first then runs realworld and fault against build/. Tests over the downloaded
# corpus (label "corpus") skip with a message when it is absent (../shared/corpus/fetch-real-binaries.sh
# and ../shared/corpus/make-real-wheels.sh fetch it). The clang lane's output is in build-logs/clang.log (its end is
# shown when it fails). Caches outside the clone (scripts/lib/cache.sh: ccache, the static packages'
# libraries, the downloads) make a second run, even in a fresh clone, mostly tests.
#
#   PACKAGE=0         no static packages (the package tests skip, saying why)
#   REALWORLD_PREFETCH=0  the real-world tier downloads when it runs, not beside the compiles (the
#                     default when ctest arguments pick tests)
#   SANITIZE=0        no sanitized suite and no fuzzing
#   FUZZ=0            no fuzzing; FUZZ_SECONDS=N fuzzes N seconds a target instead of CI's fixed runs
#   WHEELCHECK_BUILD_CACHE, CCACHE_DIR, CCACHE_MAXSIZE, WHEELCHECK_CCACHE=0: see scripts/lib/cache.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# The db's images name PyTorch's indexes for their torch (published wheels): no test reads the internet.
export WHEELCHECK_OFFLINE=${WHEELCHECK_OFFLINE:-1}
root=$PWD
logs=$root/build-logs
# Warm: an earlier run's caches are there (the compiler cache and the static packages' libraries); the
# budget is then 15 minutes, else 45 (WHEELCHECK_TEST_BUDGET=SECONDS sets another).
build_cache=${WHEELCHECK_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wheelcheck/build}
if compgen -G "$build_cache/static-deps/*/.done" >/dev/null && [[ -d $build_cache/ccache ]]; then
  warm=1 machine="warm: the caches of an earlier run"
else
  warm=0 machine="fresh: no build caches"
fi
# The tests start python3 thousands of times; a version manager's shim (pyenv's is a bash script that
# starts several more) costs a second each on a loaded machine. The interpreter the shim would pick is put
# first on PATH under its own name: the same Python, without the dispatch.
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [[ $(command -v python3) != "$py" ]]; then
  mkdir -p "$root/build-logs.bin" && ln -sf "$py" "$root/build-logs.bin/python3" && export PATH=$root/build-logs.bin:$PATH
fi
rm -rf "$logs" && mkdir -p "$logs"
started=$SECONDS
ctest_args=("$@")
# The unit tests run in 8 processes (googletest's shards: tests/CMakeLists.txt says why); with ctest
# arguments (-R NAME ...) each is its own ctest entry again, so that they pick tests by name.
unit_shards=$([[ $# -gt 0 ]] && echo 0 || echo 8)

# --- stages: each timed, its result kept for the table ----------------------------------------------
# stage LANE NAME CMD...: runs CMD in a subshell of its own and records "lane name start seconds result cpu"
# in build-logs/stages. The CPU time is that subshell's `times` (user + system, of itself and of every
# process it ran): the other lane's processes, which the main shell reaps whenever they end, never count.
stage() {
  local lane=$1 name=$2 t0=$SECONDS rc=0 cpu f
  shift 2
  f=$logs/.times.$BASHPID.$RANDOM
  echo "== $name ($lane lane, at $(clock $((t0 - started))))"
  (
    code=0
    "$@" || code=$?
    times >"$f"
    exit "$code"
  ) || rc=$?
  cpu=$(awk '{ for (i = 1; i <= NF; i++) { m = $i; sub(/s$/, "", m); split(m, p, "m"); s += p[1] * 60 + p[2] } }
    END { printf "%d", s }' "$f" 2>/dev/null) || cpu=0
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$lane" "$name" "$((t0 - started))" "$((SECONDS - t0))" \
    "$([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)")" "${cpu:-0}" >>"$logs/stages"
  return "$rc"
}
skipped() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$((SECONDS - started))" 0 "skipped ($3)" 0 >>"$logs/stages"; }
clock() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# The ctest cost data (how long each test took last time) is kept in the cache, so that a fresh clone
# starts the long tests first; it orders the tests and changes nothing else.
suite() {  # suite BUILD_DIR NAME CTEST_ARGS...: one ctest run, its JUnit report in build-logs/NAME.xml
  local dir=$1 name=$2 rc=0
  shift 2
  # The tests' profile cache (tests/CMakeLists.txt): every run starts without one (the run beside another
  # in the same build folder keeps it).
  [[ ${KEEP_TEST_CACHE:-0} == 1 ]] || rm -rf "$dir/test-cache"
  [[ $name == serial ]] || rm -rf "$dir/Testing/unit-shards"
  mkdir -p "$dir/Testing/Temporary" "$costs"
  [[ -f $costs/$name.txt ]] && cp "$costs/$name.txt" "$dir/Testing/Temporary/CTestCostData.txt"
  ctest --test-dir "$dir" --show-only=json-v1 "$@" >"$logs/$name.tests.json" 2>/dev/null || true
  ctest --test-dir "$dir" -j"$(nproc)" --output-on-failure --output-junit "$logs/$name.xml" "$@" || rc=$?
  # The unit tests' shards' own reports (each test of each shard), for the counts at the end.
  [[ $name == serial || ! -d $dir/Testing/unit-shards ]] || cp -r "$dir/Testing/unit-shards" "$logs/$name.shards"
  [[ -f $dir/Testing/Temporary/CTestCostData.txt ]] && cp "$dir/Testing/Temporary/CTestCostData.txt" "$costs/$name.txt"
  return "$rc"
}

# The g++ build is the default build's: each file compiled on its own (WHEELCHECK_UNITY off, as
# `cmake -S . -B b && cmake --build b` compiles it), so that a file that misses an include or a qualification
# a neighbour in a batch would supply fails here, every run (issue 59: load_findings.cpp named `Object`
# unqualified, and only unity builds were tested). The compiler cache makes it cheap on a warm machine.
# The sanitized build compiles in batches (a unity build). Under ASan and UBSan each file instantiates the same
# templates (nlohmann-json, fmt, the standard library's) again: the library and the command line took 735
# CPU-seconds file by file against 277 in batches, the tests 461 against 301 (measured 2026-12-04, no compiler
# cache). g++'s build/ takes 668 CPU-seconds file by file on a fresh machine (about 370 more than in batches), the
# price of proving the default build; compiling each file alone with -fsyntax-only as well would cost 330 more.
# Both keep only line tables of debug information (-g1, -gline-tables-only: backtraces and sanitizer reports
# still name file and line), which costs almost nothing; full -g made the compiles 40-50% longer.
build_gcc() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHEELCHECK_WERROR=ON -DWHEELCHECK_UNITY=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DWHEELCHECK_BUILD_TESTS=ON -DWHEELCHECK_UNIT_TESTS="$([[ ${SANITIZE:-1} == 0 ]] && echo ON || echo OFF)" \
    -DWHEELCHECK_UNIT_SHARDS="$unit_shards" \
    "${cache_launcher[@]}" >/dev/null
  cmake --build build -j"$(nproc)"
}
build_clang() {  # the set-up scripts/sanitize.sh and fuzz/run.sh share (scripts/lib/sanitize.sh)
  configure_sanitized build-sanitize "$unit_shards"
  cmake --build build-sanitize -j"$(nproc)"
}
sanitized_suite() {
  (
    sanitizer_options
    suite build-sanitize sanitized -L unit --timeout 1500 "${ctest_args[@]}"
  )
}
fuzz() {
  if [[ -n ${FUZZ_SECONDS:-} ]]; then
    BUILD_DIR=build-sanitize fuzz/run.sh "$FUZZ_SECONDS"
  else
    BUILD_DIR=build-sanitize fuzz/run.sh --ci
  fi
}

# --- the lanes ----------------------------------------------------------------------------------------
# The two long tests that take the machine to themselves within a ctest run (realworld, fault) run once,
# against build/, in whichever lane is first done with its own work, so that the lanes end together: on a
# fresh machine the clang lane's compile is the longer, on a warm one its sanitized suite and fuzzing. A
# lane claims them by making a folder (atomic); with SANITIZE=0 the gcc lane's suite runs them. (Two ctest
# runs share build/Testing/, whose log and cost record are then the last run's.)
serial_labels='^(realworld|fault)$'
# The unit tests run once, in the sanitized build (ASan, UBSan: the stricter of the two); the gcc lane's
# build leaves them out (WHEELCHECK_UNIT_TESTS=OFF) and its suite runs the tiers that take its binary.
gcc_excluded='^(realworld|fault|unit)$'
claim_serial() { mkdir "$logs/.serial-claimed" 2>/dev/null; }
serial_suite() {
  while [[ ! -f $logs/.gcc-build ]]; do sleep 5; done
  [[ $(cat "$logs/.gcc-build") == ok ]] || { echo "the gcc build failed: build/ cannot be tested"; return 1; }
  KEEP_TEST_CACHE=1 suite build serial --timeout 2400 -L "$serial_labels" "${ctest_args[@]}"
}
lane_gcc() {
  local ok=0
  stage gcc "build (g++)" build_gcc || { echo failed >"$logs/.gcc-build"; return 1; }
  echo ok >"$logs/.gcc-build"
  if [[ ${PACKAGE:-1} != 0 ]]; then
    # Both architectures in one run: dist/SOURCES.used then lists what each was built from.
    stage gcc "package (x86_64, aarch64)" scripts/package.sh all || ok=1
  else
    skipped gcc "package (x86_64, aarch64)" PACKAGE=0
  fi
  if [[ ${SANITIZE:-1} == 0 ]]; then
    stage gcc "suite (every label)" suite build suite --timeout 2400 "${ctest_args[@]}" || ok=1
  else
    stage gcc "suite (loader, jobs, package, docs)" suite build suite --timeout 2400 -LE "$gcc_excluded" "${ctest_args[@]}" || ok=1
    if claim_serial; then stage gcc "suite: realworld, fault (build/)" serial_suite || ok=1; fi
  fi
  return "$ok"
}
lane_clang() {
  local ok=0
  if [[ ${SANITIZE:-1} == 0 ]]; then
    skipped clang "sanitized build, suite, fuzz" SANITIZE=0
    return 0
  fi
  stage clang "build (clang, sanitized)" build_clang || return 1
  stage clang "sanitized suite (unit)" sanitized_suite || ok=1
  if [[ ${FUZZ:-1} == 0 ]]; then
    skipped clang "fuzz" FUZZ=0
  else
    stage clang "fuzz ($([[ -n ${FUZZ_SECONDS:-} ]] && echo "${FUZZ_SECONDS} s a target" || echo "fixed runs"))" fuzz || ok=1
  fi
  if claim_serial; then stage clang "suite: realworld, fault (build/)" serial_suite || ok=1; fi
  return "$ok"
}

# --- the table, printed however the run ends --------------------------------------------------------
report() {
  local rc=$?
  [[ -n ${clang_pid:-} ]] && kill "$clang_pid" 2>/dev/null
  [[ -n ${prefetch_pid:-} ]] && kill "$prefetch_pid" 2>/dev/null
  echo
  echo "scripts/test.sh: where the time went (wall clock and CPU time; the two lanes run side by side)"
  printf '  %-6s %-34s %7s %7s %7s  %s\n' lane stage start wall cpu result
  local cpu_total=0
  if [[ -f $logs/stages ]]; then
    while IFS=$'\t' read -r lane name start secs result cpu; do
      printf '  %-6s %-34s %7s %7s %7s  %s\n' "$lane" "$name" "$(clock "$start")" "$(clock "$secs")" "$(clock "${cpu:-0}")" "$result"
      cpu_total=$((cpu_total + ${cpu:-0}))
    done < <(sort -t$'\t' -k3,3n "$logs/stages")
  fi
  local total=$((SECONDS - started)) budget=${WHEELCHECK_TEST_BUDGET:-}
  printf '  %-6s %-34s %7s %7s %7s\n' "" "total" "" "$(clock "$total")" "$(clock "$cpu_total")"
  # The budget (docs/development.md): 45 minutes on a fresh machine, 15 with an earlier run's caches.
  if [[ -z $budget ]]; then budget=$([[ $warm == 1 ]] && echo 900 || echo 2700); fi
  if ((total > budget)); then
    echo "  budget: OVER: $(clock "$total") against $(clock "$budget") ($machine); the cpu column shows which stage grew"
  else
    echo "  budget: within: $(clock "$total") of $(clock "$budget") ($machine)"
  fi
  python3 - "$logs" <<'PY' || true
import glob, json, os, sys, xml.etree.ElementTree as ET
rows, total = [], [0, 0, 0]
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.xml"))):
    try:
        cases = ET.parse(path).getroot().iter("testcase")
    except ET.ParseError:
        continue
    labels = {}
    try:  # each test's label, from ctest --show-only=json-v1
        for t in json.load(open(path[:-4] + ".tests.json"))["tests"]:
            for p in t.get("properties", []):
                if p["name"] == "LABELS":
                    labels[t["name"]] = p["value"][0]
    except (OSError, ValueError, KeyError, IndexError):
        pass
    counts, secs = {}, {}
    def expand(cases):  # a shard of the unit tests (unit.shard.KofN): its tests, from its own report
        for c in cases:
            name = c.get("name") or ""
            report = os.path.join(path[:-4] + ".shards", name.split(".")[-1].split("of")[0] + ".xml")
            if name.startswith("unit.shard.") and os.path.exists(report):
                for t in ET.parse(report).getroot().iter("testcase"):
                    labels[t.get("classname", "") + "." + t.get("name", "")] = labels.get(name, "unit")
                    t.set("name", t.get("classname", "") + "." + t.get("name", ""))
                    yield t
            else:
                yield c
    for c in expand(cases):
        status = "failed" if c.find("failure") is not None or c.get("status") == "fail" else \
                 "skipped" if c.find("skipped") is not None or c.get("status") in ("notrun", "disabled") else "passed"
        key = (os.path.basename(path)[:-4], labels.get(c.get("name"), "-"))
        counts.setdefault(key, [0, 0, 0])["passed failed skipped".split().index(status)] += 1
        secs[key] = secs.get(key, 0.0) + float(c.get("time") or 0)
    rows += [(key, value, secs[key]) for key, value in sorted(counts.items())]
print("  tests, per suite and label (seconds: the tests' own times added up; they run two at a time)")
for (suite, label), (p, f, s), t in rows:
    print(f"  {suite + ' (' + label + ')':<32} {p:5} passed {f:3} failed {s:3} skipped {t:8.0f} s")
    total = [total[0] + p, total[1] + f, total[2] + s]
print(f"tests: {total[0]} passed, {total[1]} failed, {total[2]} skipped")
PY
  exit "$rc"
}
trap report EXIT

stage - install scripts/install-deps.sh
# After the install: on a fresh machine ccache has just been installed, and every build must use it.
# shellcheck source=scripts/lib/cache.sh
source scripts/lib/cache.sh
# shellcheck source=scripts/lib/sanitize.sh
source scripts/lib/sanitize.sh
costs=$wheelcheck_cache/ctest-costs
status=0
# The real-world tier's downloads (about 7 minutes of network and little CPU on a fresh machine) start
# now, beside the compiles; the tier's own fetch waits for this one (a lock) and then finds them in place.
# Not when ctest arguments pick tests: the tier, if picked, downloads when it runs.
if [[ ${REALWORLD_PREFETCH:-$((${#ctest_args[@]} == 0))} == 1 ]]; then
  stage net "realworld downloads (prefetch)" bash tests/realworld/fetch.sh >"$logs/realworld-fetch.log" 2>&1 &
  prefetch_pid=$!
fi
( lane_clang ) >"$logs/clang.log" 2>&1 &
clang_pid=$!
lane_gcc || status=1
wait "$clang_pid" || { status=1; echo "== the clang lane failed; the end of build-logs/clang.log:"; tail -80 "$logs/clang.log"; }
clang_pid=
[[ -n ${prefetch_pid:-} ]] && { wait "$prefetch_pid" || true; prefetch_pid=; }
grep -A14 '^target ' "$logs/clang.log" | tail -15 || true   # the fuzzing table
exit "$status"

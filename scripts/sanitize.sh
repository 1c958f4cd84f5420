#!/usr/bin/env bash
# The hardening half of the test command (scripts/test.sh runs it after the normal suite): builds
# everything with clang 14, AddressSanitizer and UndefinedBehaviorSanitizer (any report is fatal) and
# libFuzzer's coverage instrumentation, in build-sanitize/; runs the unit and command-line suite there
# (the wheelcheck the tests run is the sanitized one); then CI's fuzzing through fuzz/run.sh, in the same
# folder: every target a fixed number of runs from a fixed seed (fuzz/run.sh --ci), or FUZZ_SECONDS a
# target when that is set. scripts/test.sh runs the same steps in its clang lane.
#
#   scripts/sanitize.sh [CTEST ARGS...]     FUZZ=0 (or FUZZ_SECONDS=0) skips the fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/install-deps.sh
# After the install (ccache may have just been installed):
# shellcheck source=scripts/lib/cache.sh
source scripts/lib/cache.sh
build=${SANITIZE_BUILD_DIR:-build-sanitize}
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHEELCHECK_WERROR=ON \
  -DWHEELCHECK_FUZZ=ON "${cache_launcher[@]}" >/dev/null
start=$(date +%s)
cmake --build "$build" -j"$(nproc)"
echo "sanitize: built in $(($(date +%s) - start)) s"
# Leaks are reported (LSan is part of ASan); a report of any kind fails the test that met it.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
start=$(date +%s)
ctest --test-dir "$build" -j"$(nproc)" -L unit --output-on-failure --timeout 1200 "$@"
echo "sanitize: the sanitized suite passed in $(($(date +%s) - start)) s"
if [[ ${FUZZ:-1} != 0 && ${FUZZ_SECONDS:-} != 0 ]]; then
  if [[ -n ${FUZZ_SECONDS:-} ]]; then BUILD_DIR=$build fuzz/run.sh "$FUZZ_SECONDS"; else BUILD_DIR=$build fuzz/run.sh --ci; fi
fi

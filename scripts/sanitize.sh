#!/usr/bin/env bash
# The hardening half of the test command (scripts/test.sh runs it after the normal suite): builds
# everything with clang 14, AddressSanitizer and UndefinedBehaviorSanitizer (any report is fatal) and
# libFuzzer's coverage instrumentation, in build-sanitize/; runs the unit and command-line suite there
# (the wheelcheck the tests run is the sanitized one); then CI's fuzzing through fuzz/run.sh, in the same
# folder: every target a fixed number of runs from a fixed seed (fuzz/run.sh --ci), or FUZZ_SECONDS a
# target when that is set. scripts/test.sh runs the same steps in its clang lane.
#
#   scripts/sanitize.sh [CTEST ARGS...]     FUZZ=0 (or FUZZ_SECONDS=0) skips the fuzzing;
#                                          SANITIZE_BUILD_ONLY=1 stops after the build
# The build's set-up is scripts/test.sh's clang lane's (scripts/lib/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/install-deps.sh
# After the install (ccache may have just been installed):
# shellcheck source=scripts/lib/cache.sh
source scripts/lib/cache.sh
# shellcheck source=scripts/lib/sanitize.sh
source scripts/lib/sanitize.sh
build=${SANITIZE_BUILD_DIR:-build-sanitize}
# As scripts/test.sh: the unit tests in 8 ctest entries (googletest's shards), each its own with ctest arguments.
configure_sanitized "$build" "$([[ $# -gt 0 ]] && echo 0 || echo 8)"
start=$(date +%s)
cmake --build "$build" -j"$(nproc)"
echo "sanitize: built in $(($(date +%s) - start)) s"
[[ ${SANITIZE_BUILD_ONLY:-0} == 1 ]] && exit 0
sanitizer_options
start=$(date +%s)
ctest --test-dir "$build" -j"$(nproc)" -L unit --output-on-failure --timeout 1500 "$@"
echo "sanitize: the sanitized suite passed in $(($(date +%s) - start)) s"
if [[ ${FUZZ:-1} != 0 && ${FUZZ_SECONDS:-} != 0 ]]; then
  if [[ -n ${FUZZ_SECONDS:-} ]]; then BUILD_DIR=$build fuzz/run.sh "$FUZZ_SECONDS"; else BUILD_DIR=$build fuzz/run.sh --ci; fi
fi

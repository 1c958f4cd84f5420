# shellcheck shell=bash
# Sourced by the scripts that build or run the sanitized build (scripts/test.sh's clang lane,
# scripts/sanitize.sh, fuzz/run.sh), after scripts/lib/cache.sh: its set-up, written once.
#
#   configure_sanitized DIR [UNIT_SHARDS]   configures DIR: clang 14, AddressSanitizer and
#                                          UndefinedBehaviorSanitizer (WHEELCHECK_FUZZ=ON adds libFuzzer's
#                                          coverage instrumentation and the fuzz targets), warnings as errors,
#                                          compiled in batches (a unity build of the library, the command line
#                                          and the tests), line tables only; the unit tests in UNIT_SHARDS
#                                          ctest entries (0, the default: one each)
#   sanitizer_options                       exports ASAN_OPTIONS and UBSAN_OPTIONS (unless set): leaks are
#                                          reported (LSan is part of ASan); a report of any kind fails the
#                                          test that met it
# shellcheck disable=SC2154  # cache_launcher is scripts/lib/cache.sh's
configure_sanitized() {
  local dir=$1 shards=${2:-0}
  local src
  src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  CC=clang-14 CXX=clang++-14 cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHEELCHECK_WERROR=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
    -DWHEELCHECK_FUZZ=ON -DCMAKE_EXE_LINKER_FLAGS=-no-pie -DWHEELCHECK_UNIT_SHARDS="$shards" \
    -DWHEELCHECK_UNITY=ON -DWHEELCHECK_TEST_UNITY=ON "${cache_launcher[@]}" >/dev/null
}

sanitizer_options() {
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
}

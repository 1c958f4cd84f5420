#!/usr/bin/env bash
# Quick start, part 2: installs what the build and the tests need, builds with warnings as errors, and
# runs every test. Tests over the downloaded corpus (label "corpus") skip with a message when it is
# absent; fetch it with ../shared/corpus/fetch-real-binaries.sh and make-real-wheels.sh. Then the
# hardening half (scripts/sanitize.sh): the suite again under ASan and UBSan, and every fuzz target for a
# minute; SANITIZE=0 skips it (a quick local run), FUZZ_SECONDS sets the minute.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHEELCHECK_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build -j"$(nproc)" --output-on-failure --timeout 900 "$@"
[[ ${SANITIZE:-1} == 0 ]] || scripts/sanitize.sh "$@"

#!/usr/bin/env bash
# Quick start, part 2: installs what the build and the tests need, builds with warnings as errors, and
# runs every test. Tests over the downloaded corpus (label "corpus") skip with a message when it is
# absent; fetch it with ../shared/corpus/fetch-real-binaries.sh and make-real-wheels.sh. Then the
# hardening half (scripts/sanitize.sh): the suite again under ASan and UBSan, and every fuzz target for a
# minute; SANITIZE=0 skips it (a quick local run), FUZZ_SECONDS sets the minute. Before the tests,
# scripts/package.sh builds the packages the "package" tests install (PACKAGE=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHEELCHECK_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
# The static binary for x86_64 and aarch64, its wheels and tarballs in dist/ (the "package" tests install
# and run them); PACKAGE=0 skips it for a quick local run, and those tests then skip, saying why.
[[ ${PACKAGE:-1} == 0 ]] || scripts/package.sh all
ctest --test-dir build -j"$(nproc)" --output-on-failure --timeout 900 "$@"
[[ ${SANITIZE:-1} == 0 ]] || scripts/sanitize.sh "$@"

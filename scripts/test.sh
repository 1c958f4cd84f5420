#!/usr/bin/env bash
# Quick start, part 2: installs what the build and the tests need, builds with warnings as errors, and
# runs every test. Tests over the downloaded corpus (label "corpus") skip with a message when it is
# absent; fetch it with ../shared/corpus/fetch-real-binaries.sh and make-real-wheels.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHEELCHECK_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build -j"$(nproc)" --output-on-failure --timeout 900 "$@"

#!/usr/bin/env bash
# Quick start, part 1: installs what the build needs, builds wheelcheck and the sample wheels, and runs
# `wheelcheck inspect` on the bundled sample. Safe to run again (each step skips what is done).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
sample=build/samples/hello_native-1.0-cp311-cp311-linux_x86_64.whl
echo "+ build/wheelcheck inspect $sample"
build/wheelcheck inspect --no-cache "$sample"
echo "+ build/wheelcheck images"
build/wheelcheck images

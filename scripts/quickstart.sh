#!/usr/bin/env bash
# Quick start, part 1 (the main job on the bundled samples): installs what the build needs, builds
# wheelcheck and the sample wheels (samples/), lists the db's images, then checks the samples of the
# three FlagOS incidents against the embedded images: the Ascend FlagCX build against ascend-cann9, and
# the CUDA setup (samples/set_env_cuda.sh: FlagTree, the FlagGems C++ companion, FlagCX on cuda13.0)
# with its verdicts and the gates it applies.
# Safe to run again (each step skips what is done).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
wc=build/wheelcheck
s=build/samples/flagos
show() { echo; echo "+ $*"; "$@" || echo "(exit $?)"; }
show $wc images
if [[ -f "$s/flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl" ]]; then
  show $wc "$s/flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl" --image ascend-cann9
  show $wc gates "$s/flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl" --image ascend-cann9
fi
# The CUDA CI's setup: FlagTree, the FlagGems C++ companion and FlagCX checked against cuda13.0, gates applied.
show samples/set_env_cuda.sh

#!/usr/bin/env bash
# Quick start, part 1 (the main job on the bundled samples): installs what the build needs, builds
# wheelcheck and the sample wheels (samples/), lists the db's images, then checks the samples of the
# three FlagOS incidents against the embedded images: the Ascend FlagCX build against ascend-cann9, and
# the CUDA setup (samples/set_env_cuda.sh: FlagTree, the FlagGems C++ companion, FlagCX on cuda13.0)
# with its verdicts and the gates it applies. Last, the nightly scan: the sample wheels laid out as
# FlagOS's vendor indexes (tests/tools/sample_index.py) and served on loopback (tests/net/server.py,
# started and stopped here), scanned into a report with pin advice.
# Safe to run again (each step skips what is done). It installs only what building and running wheelcheck
# needs (scripts/install-deps.sh --build), and the aarch64 cross compilers of the Ascend sample while
# wheelcheck compiles (--cross); it builds only wheelcheck, its man page and the samples, as a unity build
# (WHEELCHECK_UNITY) without debug information; the test command (scripts/test.sh) installs and builds
# the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/install-deps.sh --build
# After the install (ccache may have just been installed):
# shellcheck source=scripts/lib/cache.sh
source scripts/lib/cache.sh
configure() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DWHEELCHECK_BUILD_TESTS=OFF -DWHEELCHECK_UNITY=ON \
    "${cache_launcher[@]}" >/dev/null
}
configure
# wheelcheck compiles while apt installs the cross compilers (disk and network beside the two cores);
# the samples' folder is configured again afterwards, so that it finds them.
cmake --build build -j"$(nproc)" --target wheelcheck manpage &
compiling=$!
scripts/install-deps.sh --cross || echo "quickstart: the aarch64 cross compilers did not install: the Ascend sample is left out"
wait "$compiling"
configure
cmake --build build -j"$(nproc)" --target wheelcheck manpage samples
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

# The nightly scan against a loopback copy of the FlagOS indexes (the server stops when this script ends).
work=build/quickstart-scan
rm -rf "$work" && mkdir -p "$work"
python3 tests/tools/sample_index.py --samples build/samples --out "$work/indexes" >/dev/null
python3 tests/net/server.py --root "$work/indexes" >"$work/server.out" 2>"$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q '^PORT ' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/^PORT /{print $2}' "$work/server.out")
base=http://127.0.0.1:$port
show $wc scan --index $base/flagos-pypi-hosted/simple --index $base/flagos-pypi-nvidia/simple \
  --index $base/flagos-pypi-ascend/simple --project flagtree --project flag-gems-cpp-cuda --project flagcx \
  --image cuda13.0 --image ascend-cann9 --state "$work/state" --cache-dir "$work/cache" \
  --report "$work/report" --pins "$work/version-pins.env"
show cat "$work/version-pins.env"
echo; echo "The report: $work/report/report.html (and report.md, report.json)"
show $wc scan --index $base/flagos-pypi-hosted/simple --project flagtree --image cuda13.0 \
  --state "$work/state" --cache-dir "$work/cache"

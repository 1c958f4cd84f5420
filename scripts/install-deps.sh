#!/usr/bin/env bash
# Installs the Debian 12 packages wheelcheck builds and tests with. Idempotent: installs only what is
# missing, so a second run costs a dpkg query. Run as root (CI and these machines are) or with sudo.
#
#   scripts/install-deps.sh           # build + test dependencies
#   scripts/install-deps.sh --bench   # also hyperfine for bench/
set -euo pipefail
build=(cmake g++ pkg-config make
       liblief-dev libzip-dev libcurl4-openssl-dev nlohmann-json3-dev libfmt-dev libcli11-dev libgtest-dev
       libisal-dev libssl-dev zlib1g-dev libgumbo-dev)
# Test-time fixture builders: cross compilers for 32-bit and big-endian ELF, binutils for readelf/nm,
# python3 to write hostile zips byte by byte, zip for ordinary ones; libsnappy1v5 is the very library
# auditwheel resolved for python_snappy in ../shared/fixtures (its version needs count in auditwheel's answer);
# python3-jsonschema checks the db and the JSON output against docs/image.schema.json; libtree is the
# peer the resolver is compared with; time (GNU time) measures a command's own peak memory. The loader
# harness (tests/loader) lays out roots from python3.11 and libpython3.11 (the trace's stand-in for the
# interpreter's exports) and runs aarch64 roots under qemu-user-static. The index client's tests serve
# HTTP/2 with nghttpd (nghttp2-server) over a certificate made with openssl, and render the scan's HTML
# report in headless chromium. clang-14 and libclang-rt-14-dev build the sanitized suite and the libFuzzer
# targets (scripts/sanitize.sh, fuzz/run.sh).
test=(binutils python3 python3-jsonschema zip libtree time libsnappy1v5 gcc-i686-linux-gnu g++-i686-linux-gnu gcc-powerpc64-linux-gnu g++-powerpc64-linux-gnu
      gcc-aarch64-linux-gnu g++-aarch64-linux-gnu python3.11 libpython3.11 qemu-user-static
      nghttp2-server openssl chromium clang-14 libclang-rt-14-dev)
extra=()
[[ ${1:-} == --bench ]] && extra=(hyperfine)
wanted=("${build[@]}" "${test[@]}" "${extra[@]}")
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]})) || { echo "install-deps: all ${#wanted[@]} packages present"; exit 0; }
echo "install-deps: installing ${missing[*]}"
SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

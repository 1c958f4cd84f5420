#!/usr/bin/env bash
# Installs the Debian 12 packages wheelcheck builds and tests with. Idempotent: installs only what is
# missing, so a second run costs a dpkg query. Run as root (CI and these machines are) or with sudo.
#
#   scripts/install-deps.sh --build   # what building and running wheelcheck needs
#   scripts/install-deps.sh --cross   # the aarch64 cross compilers of the Ascend sample (quickstart.sh)
#   scripts/install-deps.sh           # that, and what the tests need (test.sh)
#   scripts/install-deps.sh --bench   # that, and hyperfine for bench/
set -euo pipefail
# The build: the compilers and libraries, ccache (scripts/lib/cache.sh) and python3 to pack the sample
# wheels; cross: the aarch64 cross compilers that build the Ascend sample (an aarch64 wheel), which
# quickstart.sh installs while wheelcheck compiles.
build=(cmake g++ pkg-config make ccache python3
       liblief-dev libzip-dev libcurl4-openssl-dev nlohmann-json3-dev libfmt-dev libcli11-dev
       libisal-dev libssl-dev zlib1g-dev libgumbo-dev libtomlplusplus-dev libzstd-dev libsqlite3-dev)
cross=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu)
# Test-time fixture builders: GoogleTest; cross compilers for 32-bit and big-endian ELF, binutils for
# readelf/nm, zip for ordinary zips; libsnappy1v5 is the very library auditwheel resolved for
# python_snappy in ../shared/fixtures (its version needs count in auditwheel's answer);
# python3-jsonschema checks the db and the JSON output against docs/image.schema.json; libtree is the
# peer the resolver is compared with; time (GNU time) measures a command's own peak memory. The loader
# harness (tests/loader) lays out roots from python3.11 and libpython3.11 (the trace's stand-in for the
# interpreter's exports) and runs aarch64 roots under qemu-user-static. The index client's tests serve
# HTTP/2 with nghttpd (nghttp2-server) over a certificate made with openssl, and render the scan's HTML
# report in headless chromium. clang-14 and libclang-rt-14-dev build the sanitized suite and the libFuzzer
# targets (scripts/sanitize.sh, fuzz/run.sh); nasm, xz-utils and patch the static packages (package.sh); patchelf
# gives the corpus tier's torch wheels the sonames pip's torch has (tests/jobs/env_job.py); python3-yaml reads the
# workflows and Kubernetes manifests the jobs run (tests/jobs/ci_action.py, shards_ci.py); python3-pyelftools and
# python3-packaging run ../shared/peers/auditwheel-show beside wheelcheck (bench/remote.sh, the side-by-side tests).
# The image tier (tests/images, issue 63): docker-registry is Debian's distribution registry, started on loopback
# by the tests (with htpasswd basic auth, whose bcrypt hash python3-bcrypt writes: 89 kB beside apache2-utils'
# htpasswd and its two libraries); skopeo packs the test images as docker-archive and oci-archive and pushes
# them; umoci unpacks the layered image as the referee of whiteouts and opaque folders; zstd compresses a layer.
test=(libgtest-dev binutils python3-jsonschema zip libtree time libsnappy1v5 gcc-i686-linux-gnu g++-i686-linux-gnu
      gcc-powerpc64-linux-gnu g++-powerpc64-linux-gnu python3.11 libpython3.11 qemu-user-static
      nghttp2-server openssl chromium clang-14 libclang-rt-14-dev nasm xz-utils patch patchelf man-db
      python3-yaml python3-pyelftools python3-packaging docker-registry skopeo umoci python3-bcrypt zstd)
case ${1:-} in
  --build) wanted=("${build[@]}") ;;
  --cross) wanted=("${cross[@]}") ;;
  '') wanted=("${build[@]}" "${cross[@]}" "${test[@]}") ;;
  --bench) wanted=("${build[@]}" "${cross[@]}" "${test[@]}" hyperfine) ;;
  -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-deps: unknown option '$1' (--build, --cross, --bench or none; --help)" >&2; exit 2 ;;
esac
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]})) || { echo "install-deps: all ${#wanted[@]} packages present"; exit 0; }
echo "install-deps: installing ${missing[*]}"
SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# The package lists: fetched unless this script fetched them in the last half hour (quickstart.sh calls it
# twice; an older copy could name files the mirror no longer has).
if ! find /var/lib/apt/lists -maxdepth 1 -name '*_InRelease' -mmin -30 2>/dev/null | grep -q .; then
  $SUDO apt-get update -qq
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

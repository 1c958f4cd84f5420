#!/usr/bin/env bash
# Builds wheelcheck as one fully static binary per architecture and packs it the two ways users install
# it (README: Install):
#
#   scripts/package.sh [x86_64|aarch64|all]   # default: all
#   scripts/package.sh --relock               # re-pin packaging/sources.lock to the archive's current files
#
# writes, for each architecture, into dist/ (DIST=... to change):
#   wheelcheck-<version>-py3-none-manylinux_2_17_<arch>.manylinux2014_<arch>.whl
#   wheelcheck-<version>-linux-<arch>.tar.gz     (bin/wheelcheck, share/wheelcheck/db, licenses/)
#
# Everything the binary links comes from Debian 12 and is pinned in packaging/sources.lock (fetched from
# Debian's archive, each sha256 checked, never committed): libzip, ISA-L, libcurl and nghttp2 are built
# from Debian's source tarballs with Debian's patches (Debian ships no static archive of them, or, for
# libcurl, only one that needs Kerberos); OpenSSL, zlib, LIEF, mbed TLS, gumbo and the header-only
# libraries are Debian's own -dev packages for that architecture, unpacked into a private folder (nothing
# is installed from them). glibc and libstdc++ are the toolchain's: the host's gcc for x86_64,
# gcc-aarch64-linux-gnu for aarch64. Each binary then checks its own wheel (the self-check): wheelcheck
# WHEEL --image manylinux2014_<arch> must pass and `inspect` must find it consistent with
# manylinux_2_17_<arch>; the aarch64 one runs under qemu-aarch64-static.
#
# Work folder: build-package/ (WHEELCHECK_PACKAGE_DIR=...); a second run rebuilds only wheelcheck itself.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${WHEELCHECK_PACKAGE_DIR:-$root/build-package}
dist=${DIST:-$root/dist}
lock=$root/packaging/sources.lock
jobs=$(nproc)
started=$SECONDS

say() { printf '\033[1mpackage:\033[0m %s\n' "$*" >&2; }
die() { printf 'package: %s\n' "$*" >&2; exit 1; }
# quiet LOG CMD...: runs CMD with its output appended to LOG; on failure shows the end of LOG and stops.
quiet() {
  local log=$1; shift
  "$@" >>"$log" 2>&1 || { tail -40 "$log" >&2; die "failed: $* (the whole output: $log)"; }
}

# --- What the package step itself needs -----------------------------------------------------------
need=(cmake make g++ python3 xz-utils patch)
case ${1:-all} in
  x86_64) arches=(x86_64); need+=(nasm) ;;
  aarch64) arches=(aarch64); need+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static) ;;
  all) arches=(x86_64 aarch64); need+=(nasm gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static) ;;
  --relock) arches=() ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown architecture '$1': x86_64, aarch64 or all (--help)" ;;
esac
for a in "${arches[@]}"; do
  [[ $a == "$(uname -m)" || -f packaging/toolchain-$a.cmake ]] ||
    die "building for $a on a $(uname -m) machine is not supported (this script runs on x86_64 Debian 12)"
done
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi

# --- Re-pinning: a private apt state (bookworm + security, sources and both architectures) ----------
if [[ ${1:-} == --relock ]]; then
  apt_dir=$work/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  read -r main security < <(python3 -c 'import sys; sys.path.insert(0, "packaging"); import lock; print(*lock.mirrors())')
  for s in bookworm bookworm-updates; do
    printf 'deb [arch=amd64,arm64] %s %s main\ndeb-src %s %s main\n' "$main" $s "$main" $s
  done >"$apt_dir/sources.list"
  printf 'deb [arch=amd64,arm64] %s bookworm-security main\ndeb-src %s bookworm-security main\n' \
    "$security" "$security" >>"$apt_dir/sources.list"
  printf '%s ' -oDir::State::Lists="$apt_dir/lists" -oDir::Etc::SourceList="$apt_dir/sources.list" \
    -oDir::Etc::SourceParts=/dev/null -oDir::Cache="$apt_dir/cache" -oAPT::Architectures=amd64,arm64 \
    -oDebug::NoLocking=1 -oAPT::Sandbox::User=root >"$apt_dir/options"
  # shellcheck disable=SC2046
  apt-get $(cat "$apt_dir/options") -qq update
  python3 packaging/lock.py relock "$lock" "$apt_dir/options"
  git --no-pager diff --stat -- "$lock" || true
  exit 0
fi

# What the unpacked and source-built dependencies were made from: the lock, and the revision of the
# build recipes below (bump it when a dependency's options change); a folder whose stamp differs is redone.
deps_revision=2
stamp="$(sha256sum <"$lock" | cut -c1-16)-$deps_revision"
version=$(sed -n 's/^project(wheelcheck VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[[ -n $version ]] || die "no version in CMakeLists.txt"
debarch() { [[ $1 == x86_64 ]] && echo amd64 || echo arm64; }
triplet() { echo "$1-linux-gnu"; }

say "fetching the pinned sources (packaging/sources.lock)"
fetch_args=()
for a in "${arches[@]}"; do fetch_args+=(--arch "$(debarch "$a")"); done
python3 packaging/lock.py fetch "$lock" "$work/downloads" "${fetch_args[@]}"
lock_files() { sed -e 's/#.*//' "$lock" | awk -v k="$1" -v n="$2" '$1==k && $2==n {print $3}' | xargs -rn1 basename; }

# Unpacks a source package (orig tarball, then Debian's patches in their series order) into $2.
unpack_source() {
  local name=$1 dest=$2 orig debian
  orig=$(lock_files src "$name" | grep '\.orig\.')
  debian=$(lock_files src "$name" | grep '\.debian\.')
  rm -rf "$dest" "$dest.tmp" && mkdir -p "$dest.tmp"
  tar -xf "$work/downloads/$orig" -C "$dest.tmp" --strip-components=1
  tar -xf "$work/downloads/$debian" -C "$dest.tmp"
  if [[ -f $dest.tmp/debian/patches/series ]]; then
    while read -r p _; do
      [[ -z $p || $p == \#* ]] && continue
      patch -d "$dest.tmp" -p1 -s --no-backup-if-mismatch <"$dest.tmp/debian/patches/$p" ||
        die "$name: Debian's patch $p does not apply"
    done <"$dest.tmp/debian/patches/series"
  fi
  mv "$dest.tmp" "$dest"
}

build_arch() {
  local arch=$1 da tri dir sysroot prefix cc cxx toolchain=() emu=()
  da=$(debarch "$arch")
  tri=$(triplet "$arch")
  dir=$work/$arch
  sysroot=$dir/sysroot
  prefix=$dir/prefix
  if [[ $arch == "$(uname -m)" ]]; then
    cc=gcc cxx=g++
  else
    cc=$tri-gcc cxx=$tri-g++
    toolchain=(-DCMAKE_TOOLCHAIN_FILE="$root/packaging/toolchain-$arch.cmake")
    emu=(qemu-"$arch"-static)
  fi
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  local cmake_common=("${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx"
    "${toolchain[@]}" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix;$sysroot/usr"
    -DCMAKE_POSITION_INDEPENDENT_CODE=OFF -DBUILD_SHARED_LIBS=OFF
    -DCMAKE_C_FLAGS="-isystem $sysroot/usr/include/$tri -isystem $sysroot/usr/include")

  # Debian's -dev packages for this architecture, unpacked (static archives, headers, copyright files).
  if [[ $(cat "$sysroot/.done" 2>/dev/null) != "$stamp" ]]; then
    say "$arch: unpacking Debian's -dev packages"
    rm -rf "$sysroot" && mkdir -p "$sysroot"
    for deb in $(sed -e 's/#.*//' "$lock" | awk '$1=="deb" {print $3}' | xargs -n1 basename | grep -E "_($da|all)\.deb$"); do
      dpkg-deb -x "$work/downloads/$deb" "$sysroot"
    done
    echo "$stamp" >"$sysroot/.done"
  fi

  # The libraries Debian has no usable static archive of, built from source with Debian's patches.
  if [[ $(cat "$prefix/.done" 2>/dev/null) != "$stamp" ]]; then
    rm -rf "$prefix" "$dir/src" && mkdir -p "$prefix/include/isa-l" "$prefix/lib" "$dir/src"
    say "$arch: building nghttp2, libcurl, libzip and ISA-L from Debian's sources"
    local dlog=$dir/deps.log
    : >"$dlog"
    unpack_source nghttp2 "$dir/src/nghttp2"
    quiet "$dlog" cmake -S "$dir/src/nghttp2" -B "$dir/src/nghttp2/b" "${cmake_common[@]}" -DENABLE_LIB_ONLY=ON \
      -DENABLE_STATIC_LIB=ON -DENABLE_SHARED_LIB=OFF -DENABLE_DOC=OFF -DWITH_LIBXML2=OFF -DWITH_JEMALLOC=OFF
    quiet "$dlog" cmake --build "$dir/src/nghttp2/b" -j"$jobs" --target install

    unpack_source curl "$dir/src/curl"
    # HTTP(S) only, OpenSSL and nghttp2, no CA bundle compiled in (the client finds the host's at run time)
    # and OpenSSL never told to load the host's configuration.
    quiet "$dlog" cmake -S "$dir/src/curl" -B "$dir/src/curl/b" "${cmake_common[@]}" -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF \
      -DHTTP_ONLY=ON -DCURL_USE_OPENSSL=ON -DOPENSSL_ROOT_DIR="$sysroot/usr" -DOPENSSL_USE_STATIC_LIBS=ON \
      -DUSE_NGHTTP2=ON -DNGHTTP2_INCLUDE_DIR="$prefix/include" -DNGHTTP2_LIBRARY="$prefix/lib/libnghttp2.a" \
      -DZLIB_INCLUDE_DIR="$sysroot/usr/include" -DZLIB_LIBRARY="$sysroot/usr/lib/$tri/libz.a" \
      -DCURL_USE_LIBSSH2=OFF -DUSE_LIBIDN2=OFF -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DENABLE_MANUAL=OFF \
      -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none -DCURL_DISABLE_OPENSSL_AUTO_LOAD_CONFIG=ON \
      -DENABLE_THREADED_RESOLVER=ON -DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON -DCURL_USE_GSSAPI=OFF
    quiet "$dlog" cmake --build "$dir/src/curl/b" -j"$jobs" --target install

    unpack_source libzip "$dir/src/libzip"
    quiet "$dlog" cmake -S "$dir/src/libzip" -B "$dir/src/libzip/b" "${cmake_common[@]}" -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF \
      -DENABLE_ZSTD=OFF -DENABLE_COMMONCRYPTO=OFF -DENABLE_GNUTLS=OFF -DENABLE_MBEDTLS=OFF -DENABLE_OPENSSL=OFF \
      -DENABLE_WINDOWS_CRYPTO=OFF -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF \
      -DZLIB_INCLUDE_DIR="$sysroot/usr/include" -DZLIB_LIBRARY="$sysroot/usr/lib/$tri/libz.a"
    quiet "$dlog" cmake --build "$dir/src/libzip/b" -j"$jobs" --target install

    unpack_source libisal "$dir/src/isal"
    local isal_args=(CC="$cc")
    [[ $arch == aarch64 ]] && isal_args+=(host_cpu=aarch64 arch=aarch64 AR="$tri-ar")
    quiet "$dlog" make -C "$dir/src/isal" -f Makefile.unx -j"$jobs" "${isal_args[@]}" lib
    cp "$dir/src/isal/bin/isa-l.a" "$prefix/lib/libisal.a"
    cp "$dir/src/isal/include/"*.h "$prefix/include/isa-l/"
    echo "$stamp" >"$prefix/.done"
  fi

  say "$arch: building wheelcheck (static)"
  # -O2 as the tested build (GCC 12's -O3 warns falsely inside libstdc++'s string code). The cross build
  # leaves out -Wnull-dereference: what it reports depends on the target's inlining, and for aarch64 it
  # reports nlohmann-json's iterators (false positives); the x86_64 builds and the sanitizers keep it.
  local cross_flags=(-DCMAKE_CXX_FLAGS=)
  [[ $arch == "$(uname -m)" ]] || cross_flags=(-DWHEELCHECK_WARNINGS_OFF=-Wno-null-dereference)
  # Compiled in batches (a unity build): the same code in about half the time on two cores.
  cmake -S "$root" -B "$dir/build" "${cmake_common[@]}" "${cross_flags[@]}" -DWHEELCHECK_STATIC=ON -DWHEELCHECK_WERROR=ON \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=12 \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DWHEELCHECK_STATIC_SYSROOT="$sysroot" -DWHEELCHECK_STATIC_PREFIX="$prefix" -DWHEELCHECK_TRIPLET="$tri" >/dev/null
  local log=$dir/build.log
  cmake --build "$dir/build" -j"$jobs" --target wheelcheck >"$log" 2>&1 || { tail -40 "$log" >&2; die "$arch: the static build failed"; }
  # The warnings a static glibc link always gives, one per function that can load NSS modules or shared
  # objects (getaddrinfo, getpwuid_r, gethostbyname, dlopen: inspector/util/process.cpp confines the
  # lookups to glibc's built-in modules, and OpenSSL, never configured, loads no provider). Any other
  # warning fails the package step.
  if grep -v 'statically linked applications requires at runtime the shared libraries' "$log" | grep -q 'warning:'; then
    grep 'warning:' "$log" >&2; die "$arch: the static build warned"
  fi

  # The staged install: what the tarball holds, and what the wheel spreads over scripts/ and data/.
  local stage=$dir/stage
  rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/share/wheelcheck" "$stage/licenses"
  "$tri-strip" -o "$stage/bin/wheelcheck" "$dir/build/wheelcheck" 2>/dev/null || strip -o "$stage/bin/wheelcheck" "$dir/build/wheelcheck"
  cp -r "$root/db" "$stage/share/wheelcheck/db"
  packaging/licenses.sh "$arch" "$sysroot" "$dir/src" "$stage/licenses"

  mkdir -p "$dist"
  python3 packaging/make_wheel.py --version "$version" --arch "$arch" --stage "$stage" --dist "$dist" \
    --python-package packaging/python/wheelcheck
  local wheel=$dist/wheelcheck-$version-py3-none-manylinux_2_17_$arch.manylinux2014_$arch.whl
  local tarball=$dist/wheelcheck-$version-linux-$arch.tar.gz

  # The self-check: its own wheel must pass manylinux2014 and be consistent with manylinux_2_17_<arch>.
  say "$arch: self-check"
  local bin=("${emu[@]}" "$stage/bin/wheelcheck")
  "${bin[@]}" --version
  WHEELCHECK_DB=$stage/share/wheelcheck/db "${bin[@]}" "$wheel" --image "manylinux2014_$arch" ||
    die "$arch: wheelcheck's own wheel fails manylinux2014_$arch"
  local consistent
  consistent=$(WHEELCHECK_DB=$stage/share/wheelcheck/db "${bin[@]}" inspect --no-cache --json "$wheel" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["consistent_with"])')
  [[ $consistent == "manylinux_2_17_$arch" ]] ||
    die "$arch: inspect finds its own wheel consistent with $consistent, not manylinux_2_17_$arch"
  say "$arch: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB), $(basename "$tarball"): consistent with $consistent"
}

for a in "${arches[@]}"; do build_arch "$a"; done
say "done in $((SECONDS - started)) s: $(ls "$dist" | tr '\n' ' ')"

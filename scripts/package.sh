#!/usr/bin/env bash
# Builds wheelcheck as one fully static binary per architecture and packs it the two ways users install
# it (README: Install):
#
#   scripts/package.sh [x86_64|aarch64|all]   # default: all
#   scripts/package.sh --locked [ARCH]        # a release: only what the lock pins, or stop
#   scripts/package.sh --relock               # re-pin packaging/sources.lock to the archive's current files
#   --lock FILE                               # another lock than packaging/sources.lock (a test's, or a
#                                             # dist/SOURCES.used, to rebuild exactly what a release used)
#
# writes, for each architecture, into dist/ (DIST=... to change):
#   wheelcheck-<version>-py3-none-manylinux_2_17_<arch>.manylinux2014_<arch>.whl
#   wheelcheck-<version>-linux-<arch>.tar.gz     (bin/wheelcheck, share/wheelcheck/db, share/man/man1, licenses/)
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
# Pins that moved: Debian removes superseded security updates, so a pinned file can vanish from the archive.
# By default such an input is taken as the archive's signed indexes name it now (apt's own chain of trust:
# InRelease's signature, the Packages/Sources hashes, the file's), with one warning line per moved input,
# and the build goes on; --locked (what a release uses) refuses instead, naming each stale pin. Either
# way dist/SOURCES.used records what was really used (a lock in the same format, each line with its
# version and "as pinned" or "moved"), and `wheelcheck --version` says whether the sources were as pinned.
#
# Work folder: build-package/ (WHEELCHECK_PACKAGE_DIR=...). Kept outside the clone, in
# $WHEELCHECK_BUILD_CACHE (default ~/.cache/wheelcheck/build; scripts/lib/cache.sh): the verified downloads, the
# private apt state, ccache, and the libraries built from source, in static-deps/<arch>-<key>, where the
# key is the sha256 of what they are built from (the sources used, the -dev packages, the compilers, this
# script's recipe); so a second run, in this clone or a fresh one, builds only wheelcheck itself.
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
need=(cmake make g++ python3 xz-utils patch ccache)
mode=default target=all
while (($#)); do
  case $1 in
    --locked) mode=locked ;;
    --relock) mode=relock ;;
    --lock) (($# > 1)) || die "--lock needs a file"; lock=$(realpath "$2"); shift ;;
    --lock=*) lock=$(realpath "${1#--lock=}") ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    x86_64 | aarch64 | all) target=$1 ;;
    -*) die "unknown option '$1' (--help)" ;;
    *) die "unknown architecture '$1': x86_64, aarch64 or all (--help)" ;;
  esac
  shift
done
[[ -f $lock ]] || die "no lock file $lock"
case $target in
  x86_64) arches=(x86_64); need+=(nasm) ;;
  aarch64) arches=(aarch64); need+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static) ;;
  all) arches=(x86_64 aarch64); need+=(nasm gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static) ;;
esac
[[ $mode == relock ]] && arches=()
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

# After the install (ccache may just have been installed): the caches outside the clone.
# shellcheck source=scripts/lib/cache.sh
source "$root/scripts/lib/cache.sh"

# --- Re-pinning: a private apt state (bookworm + updates + security, sources and both architectures) --
if [[ $mode == relock ]]; then
  python3 packaging/lock.py relock "$lock" "$wheelcheck_cache/apt"
  git --no-pager diff --stat -- "$lock" || true
  exit 0
fi

# The revision of the recipes below: bump it when a dependency's options change (the recipe's text is in
# the cache key too, so this is for changes outside it).
deps_revision=3
version=$(sed -n 's/^project(wheelcheck VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[[ -n $version ]] || die "no version in CMakeLists.txt"
debarch() { [[ $1 == x86_64 ]] && echo amd64 || echo arm64; }
triplet() { echo "$1-linux-gnu"; }

say "fetching the pinned sources (${lock#"$root"/}$([[ $mode == locked ]] && echo ', --locked'))"
fetch_args=()
for a in "${arches[@]}"; do fetch_args+=(--arch "$(debarch "$a")"); done
[[ $mode == locked ]] && fetch_args+=(--locked)
downloads=$wheelcheck_cache/downloads
mkdir -p "$work"
used=$work/SOURCES-$target.used   # one per target: two runs with other targets do not share it
python3 packaging/lock.py fetch "$lock" "$downloads" "$used" "$wheelcheck_cache/apt" "${fetch_args[@]}"
# From here on, what was really used (as pinned, or what the archive names now) is the lock.
lock_files() { sed -e 's/#.*//' "$used" | awk -v k="$1" -v n="$2" '$1==k && $2==n {print $3}' | xargs -rn1 basename; }
# What --version says of the sources: as pinned, or which inputs moved.
moved=$(sed -n 's/^\(src\|deb\) *\([^ ]*\) .*# \([^,]*\), moved: the lock pins \(.*\)$/\2 \3 (pinned \4)/p' "$used" | sort -u | paste -sd, - | sed 's/,/, /g')
if [[ -n $moved ]]; then
  sources_note="sources moved from the lock: $moved"
else
  sources_note="sources as pinned in the lock"
fi

# Unpacks a source package (orig tarball, then Debian's patches in their series order) into $2.
unpack_source() {
  local name=$1 dest=$2 orig debian
  orig=$(lock_files src "$name" | grep '\.orig\.')
  debian=$(lock_files src "$name" | grep '\.debian\.')
  rm -rf "$dest" "$dest.tmp" && mkdir -p "$dest.tmp"
  tar -xf "$downloads/$orig" -C "$dest.tmp" --strip-components=1
  tar -xf "$downloads/$debian" -C "$dest.tmp"
  if [[ -f $dest.tmp/debian/patches/series ]]; then
    while read -r p _; do
      [[ -z $p || $p == \#* ]] && continue
      patch -d "$dest.tmp" -p1 -s --no-backup-if-mismatch <"$dest.tmp/debian/patches/$p" ||
        die "$name: Debian's patch $p does not apply"
    done <"$dest.tmp/debian/patches/series"
  fi
  mv "$dest.tmp" "$dest"
}

# build_deps ARCH SRC PREFIX: nghttp2, libcurl, libzip and ISA-L from Debian's sources (unpacked into SRC,
# Debian's patches applied) built and installed into PREFIX, with the variables build_arch sets.
build_deps() {
  local arch=$1 src=$2 prefix=$3 dlog=$dir/deps.log
  : >"$dlog"
  mkdir -p "$prefix/include/isa-l" "$prefix/lib" "$src"
  unpack_source nghttp2 "$src/nghttp2"
  quiet "$dlog" cmake -S "$src/nghttp2" -B "$src/nghttp2/b" "${cmake_common[@]}" -DENABLE_LIB_ONLY=ON \
    -DENABLE_STATIC_LIB=ON -DENABLE_SHARED_LIB=OFF -DENABLE_DOC=OFF -DWITH_LIBXML2=OFF -DWITH_JEMALLOC=OFF
  quiet "$dlog" cmake --build "$src/nghttp2/b" -j"$jobs" --target install

  unpack_source curl "$src/curl"
  # HTTP(S) only, OpenSSL and nghttp2, no CA bundle compiled in (the client finds the host's at run time)
  # and OpenSSL never told to load the host's configuration.
  quiet "$dlog" cmake -S "$src/curl" -B "$src/curl/b" "${cmake_common[@]}" -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF \
    -DHTTP_ONLY=ON -DCURL_USE_OPENSSL=ON -DOPENSSL_ROOT_DIR="$sysroot/usr" -DOPENSSL_USE_STATIC_LIBS=ON \
    -DUSE_NGHTTP2=ON -DNGHTTP2_INCLUDE_DIR="$prefix/include" -DNGHTTP2_LIBRARY="$prefix/lib/libnghttp2.a" \
    -DZLIB_INCLUDE_DIR="$sysroot/usr/include" -DZLIB_LIBRARY="$sysroot/usr/lib/$tri/libz.a" \
    -DCURL_USE_LIBSSH2=OFF -DUSE_LIBIDN2=OFF -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DENABLE_MANUAL=OFF \
    -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none -DCURL_DISABLE_OPENSSL_AUTO_LOAD_CONFIG=ON \
    -DENABLE_THREADED_RESOLVER=ON -DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON -DCURL_USE_GSSAPI=OFF
  quiet "$dlog" cmake --build "$src/curl/b" -j"$jobs" --target install

  unpack_source libzip "$src/libzip"
  quiet "$dlog" cmake -S "$src/libzip" -B "$src/libzip/b" "${cmake_common[@]}" -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF \
    -DENABLE_ZSTD=OFF -DENABLE_COMMONCRYPTO=OFF -DENABLE_GNUTLS=OFF -DENABLE_MBEDTLS=OFF -DENABLE_OPENSSL=OFF \
    -DENABLE_WINDOWS_CRYPTO=OFF -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF \
    -DZLIB_INCLUDE_DIR="$sysroot/usr/include" -DZLIB_LIBRARY="$sysroot/usr/lib/$tri/libz.a"
  quiet "$dlog" cmake --build "$src/libzip/b" -j"$jobs" --target install

  unpack_source libisal "$src/isal"
  local isal_args=(CC="$cc")
  [[ $arch == aarch64 ]] && isal_args+=(host_cpu=aarch64 arch=aarch64 AR="$tri-ar")
  quiet "$dlog" make -C "$src/isal" -f Makefile.unx -j"$jobs" "${isal_args[@]}" lib
  cp "$src/isal/bin/isa-l.a" "$prefix/lib/libisal.a"
  cp "$src/isal/include/"*.h "$prefix/include/isa-l/"
}

build_arch() {
  local arch=$1 da tri dir sysroot prefix stamp cc cxx toolchain=() emu=()
  da=$(debarch "$arch")
  tri=$(triplet "$arch")
  dir=$work/$arch
  sysroot=$dir/sysroot
  if [[ $arch == "$(uname -m)" ]]; then
    cc=gcc cxx=g++
  else
    cc=$tri-gcc cxx=$tri-g++
    toolchain=(-DCMAKE_TOOLCHAIN_FILE="$root/packaging/toolchain-$arch.cmake")
    emu=(qemu-"$arch"-static)
  fi
  # What the libraries built from source are made of; their folder in the cache is named by its sha256.
  local key deps
  key=$({
    echo "revision $deps_revision"
    sed -e 's/#.*//' "$used" | awk -v a="$da" '$1=="src" || $3 ~ ("_(" a "|all)[.]deb$")'
    "$cc" --version | head -1
    "$cxx" --version | head -1
    cmake --version | head -1
    declare -f build_deps unpack_source
  } | sha256sum | cut -c1-24)
  deps=$wheelcheck_cache/static-deps/$arch-$key
  local cmake_common=()
  # with_prefix PREFIX: the CMake options every build of this architecture shares, installing into PREFIX.
  with_prefix() {
    prefix=$1
    cmake_common=("${cache_launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx"
      "${toolchain[@]}" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix;$sysroot/usr"
      -DCMAKE_POSITION_INDEPENDENT_CODE=OFF -DBUILD_SHARED_LIBS=OFF
      -DCMAKE_C_FLAGS="-isystem $sysroot/usr/include/$tri -isystem $sysroot/usr/include")
  }

  # Debian's -dev packages for this architecture, unpacked (static archives, headers, copyright files).
  stamp=$(sed -e 's/#.*//' "$used" | awk -v a="$da" '$1=="deb" && $3 ~ ("_(" a "|all)[.]deb$")' | sha256sum | cut -c1-24)
  if [[ $(cat "$sysroot/.done" 2>/dev/null) != "$stamp" ]]; then
    say "$arch: unpacking Debian's -dev packages"
    rm -rf "$sysroot" && mkdir -p "$sysroot"
    for deb in $(sed -e 's/#.*//' "$used" | awk '$1=="deb" {print $3}' | xargs -n1 basename | grep -E "_($da|all)\.deb$"); do
      dpkg-deb -x "$downloads/$deb" "$sysroot"
    done
    echo "$stamp" >"$sysroot/.done"
  fi

  # The libraries Debian has no usable static archive of, built from source with Debian's patches, once
  # per key: built beside their cache folder and renamed into it when complete.
  if [[ -f $deps/.done ]]; then
    say "$arch: nghttp2, libcurl, libzip and ISA-L from the cache (${deps/#"$HOME"/\~})"
    touch "$deps/.done"
  else
    say "$arch: building nghttp2, libcurl, libzip and ISA-L from Debian's sources"
    local tmp=$deps.tmp.$$
    rm -rf "$tmp" "$dir/src" && mkdir -p "$tmp"
    # Only static archives and headers are used from the prefix, so it can be renamed once complete.
    with_prefix "$tmp/prefix"
    build_deps "$arch" "$dir/src" "$prefix"
    # What packaging/licenses.sh takes from the sources: their debian/copyright and upstream licence.
    for lib in libzip isal curl nghttp2; do
      mkdir -p "$tmp/src/$lib/debian"
      cp "$dir/src/$lib/debian/copyright" "$tmp/src/$lib/debian/"
      for f in LICENSE COPYING; do [[ -f $dir/src/$lib/$f ]] && cp "$dir/src/$lib/$f" "$tmp/src/$lib/"; done
    done
    date -u +%FT%TZ >"$tmp/.done"
    rm -rf "$deps" && mv "$tmp" "$deps" && rm -rf "$dir/src"
  fi
  with_prefix "$deps/prefix"
  # Older builds of this architecture's libraries: the three used last are kept.
  ls -1dt "$wheelcheck_cache/static-deps/$arch-"* 2>/dev/null | grep -v '\.tmp\.' | tail -n +4 | xargs -r rm -rf

  say "$arch: building wheelcheck (static)"
  # -O2 as the tested build (GCC 12's -O3 warns falsely inside libstdc++'s string code). The cross build
  # leaves out -Wnull-dereference: what it reports depends on the target's inlining, and for aarch64 it
  # reports nlohmann-json's iterators (false positives); the x86_64 builds and the sanitizers keep it.
  local cross_flags=(-DCMAKE_CXX_FLAGS=)
  [[ $arch == "$(uname -m)" ]] || cross_flags=(-DWHEELCHECK_WARNINGS_OFF=-Wno-null-dereference)
  # Compiled in batches (a unity build, WHEELCHECK_UNITY: CMakeLists.txt has the figures).
  cmake -S "$root" -B "$dir/build" "${cmake_common[@]}" "${cross_flags[@]}" -DWHEELCHECK_STATIC=ON -DWHEELCHECK_WERROR=ON \
    -DWHEELCHECK_UNITY=ON \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DWHEELCHECK_STATIC_SYSROOT="$sysroot" -DWHEELCHECK_STATIC_PREFIX="$prefix" -DWHEELCHECK_TRIPLET="$tri" \
    -DWHEELCHECK_BUILD_SOURCES="$sources_note" >/dev/null
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
  # The man page, made by the binary itself (`help --man`, under qemu for aarch64): the wheel installs it as
  # <prefix>/share/man/man1/wheelcheck.1, where man finds it from <prefix>/bin on PATH.
  mkdir -p "$stage/share/man/man1"
  "${emu[@]}" "$stage/bin/wheelcheck" help --man >"$stage/share/man/man1/wheelcheck.1" || die "$arch: help --man failed"
  packaging/licenses.sh "$arch" "$sysroot" "$deps/src" "$stage/licenses"

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

mkdir -p "$dist"
cp "$used" "$dist/SOURCES.used"
for a in "${arches[@]}"; do build_arch "$a"; done
say "done in $((SECONDS - started)) s: $(ls "$dist" | tr '\n' ' ')"

#!/usr/bin/env bash
# Gathers the licence of everything the static wheelcheck links into one folder (scripts/package.sh):
#
#   licenses.sh ARCH SYSROOT SRC_DIR DEST
#
# glibc (LGPL-2.1+: static linking is allowed, provided the object files can be relinked; README: Install
# says where) and GCC's libstdc++/libgcc (GPL-3 with the GCC Runtime Library Exception) from the
# toolchain's own Debian copyright files; the Debian -dev packages' copyright files from SYSROOT; the
# source-built libraries' debian/copyright and upstream licence from SRC_DIR. A missing one is an error.
set -euo pipefail
arch=$1 sysroot=$2 src=$3 dest=$4
mkdir -p "$dest"
copy() {  # copy NAME FILE
  [[ -f $2 ]] || { echo "licenses.sh: no licence for $1 at $2" >&2; exit 1; }
  cp -L "$2" "$dest/$1"
}
if [[ $arch == "$(uname -m)" ]]; then
  copy glibc.copyright /usr/share/doc/libc6-dev/copyright
  copy gcc-runtime-libstdc++.copyright /usr/share/doc/libstdc++-12-dev/copyright
else
  copy glibc.copyright "/usr/share/doc/libc6-dev-${arch/aarch64/arm64}-cross/copyright"
  copy gcc-runtime-libstdc++.copyright "/usr/share/doc/libstdc++-12-dev-${arch/aarch64/arm64}-cross/copyright"
fi
for pkg in libssl-dev:openssl zlib1g-dev:zlib liblief-dev:lief libmbedtls-dev:mbedtls libgumbo-dev:gumbo \
  libfmt-dev:fmt nlohmann-json3-dev:nlohmann-json libcli11-dev:cli11 libtomlplusplus-dev:tomlplusplus; do
  copy "${pkg#*:}.copyright" "$sysroot/usr/share/doc/${pkg%%:*}/copyright"
done
for lib in libzip isal curl nghttp2; do
  copy "$lib.copyright" "$src/$lib/debian/copyright"
  for upstream in LICENSE COPYING; do
    [[ -f $src/$lib/$upstream ]] && cp "$src/$lib/$upstream" "$dest/$lib.$upstream"
  done
done
cat >"$dest/README" <<'TEXT'
wheelcheck is one statically linked executable. It contains, besides its own code, the libraries whose
licences are in this folder (Debian 12's builds and sources, pinned in wheelcheck's
packaging/sources.lock): glibc (LGPL-2.1-or-later), GCC's libstdc++ and libgcc (GPL-3.0 with the GCC
Runtime Library Exception), OpenSSL (Apache-2.0), zlib, libcurl (curl licence), nghttp2 (MIT),
libzip (BSD-3-Clause), ISA-L (BSD-3-Clause), LIEF (Apache-2.0), mbed TLS (Apache-2.0), gumbo
(Apache-2.0), fmt (MIT), nlohmann-json (MIT), toml++ (MIT) and CLI11 (BSD-3-Clause).

glibc's LGPL lets a statically linked program be relinked with a modified glibc: wheelcheck's source and
scripts/package.sh rebuild this very binary from the same pinned sources.
TEXT

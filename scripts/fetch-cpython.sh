#!/usr/bin/env bash
# Downloads Debian 13's CPython 3.13 interpreter (package python3.13-minimal, trixie main) and unpacks it
# (dpkg -x, nothing is installed) under $WHEELCHECK_CORPUS/debs/python3.13-minimal, beside the corpus of
# ../shared/corpus/fetch-real-binaries.sh. `scripts/gen-db.sh python3.13-debian` makes its export table
# from it. Uses a private apt state folder, so the machine's own apt configuration is untouched.
# Idempotent: an unpacked package is not fetched again.
set -euo pipefail
root=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
dest=$root/debs/python3.13-minimal
[[ -d $dest ]] && { echo "fetch-cpython: $dest present"; exit 0; }
apt_dir=$root/apt-cpython
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$root/debs" "$root/downloads"
mirror=$(sed -n 's/^URIs: *\([^ ]*debian\/*\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[[ -n $mirror ]] || mirror=$(awk '$1=="deb" && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[[ -n $mirror ]] || { echo "fetch-cpython: no Debian mirror in this machine's apt configuration" >&2; exit 2; }
printf 'deb %s trixie main\n' "$mirror" >"$apt_dir/sources.list"
APT=(-oDir::State::Lists="$apt_dir/lists" -oDir::Etc::SourceList="$apt_dir/sources.list"
     -oDir::Etc::SourceParts=/dev/null -oDir::Cache="$apt_dir/cache" -oAPT::Architectures=amd64
     -oDebug::NoLocking=1 -oAPT::Sandbox::User=root)
apt-get "${APT[@]}" -qq update
cd "$root/downloads"
apt-get "${APT[@]}" -qq download python3.13-minimal/trixie
deb=$(ls -t python3.13-minimal_*_amd64.deb | head -1)
mkdir -p "$dest.tmp" && dpkg -x "$deb" "$dest.tmp" && mv "$dest.tmp" "$dest" && rm -f "$deb"
echo "fetch-cpython: unpacked python3.13-minimal -> $dest"

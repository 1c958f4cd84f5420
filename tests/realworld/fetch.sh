#!/usr/bin/env bash
# Fetches the real-binaries tier's Debian packages (tests/realworld/README.md) into
# $WHEELCHECK_REALWORLD (default ~/.cache/wheelcheck-realworld), outside the clone, and unpacks each
# (dpkg-deb -x and -e: nothing is installed, no maintainer script runs).
#
#   fetch.sh [--suite bookworm|trixie]... [--refresh] [--list FILE]
#
# One private apt state per suite ($R/apt/SUITE: sources.list, lists, cache, an empty dpkg status), so
# the machine's apt is untouched and no resolution mixes suites. For every `pkg` line of packages.txt the
# closure is what apt itself would install on an empty system (Depends and Pre-Depends, recursively, no
# Recommends, apt's choice among alternatives and virtual packages): `apt-get -s install`. The `python`
# line's packages (the interpreter, libpython, libc-bin for ldconfig) get the same. From the `older` suite
# come libstdc++6 and the same-named versions of each package's direct library dependencies (the
# "partly upgraded image" variants).
#
# Written under $R: apt/SUITE/ (apt state), debs/SUITE/*.deb (downloads), x/NAME_VERSION_ARCH/ (each deb
# unpacked, its control files in DEBIAN/), state/SUITE/ (closure/PKG.txt, old/PKG.txt, debs.txt,
# skipped.txt, stamp). Idempotent: when the stamp matches the list and every file is there, nothing is
# fetched and the archive is not contacted (`--refresh` re-reads the archive's indexes). Two runs at once
# take turns ($R/.fetch.lock).
# Exit: 0 done, 77 the archive is unreachable and the cache is incomplete (a skip), 2 another failure.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
R=${WHEELCHECK_REALWORLD:-$HOME/.cache/wheelcheck-realworld}
list=$here/packages.txt
refresh=0
want=()
while (($#)); do
  case $1 in
    --suite) want+=("$2"); shift 2 ;;
    --refresh) refresh=1; shift ;;
    --list) list=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "fetch.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -f $list ]] || { echo "fetch.sh: no package list $list" >&2; exit 2; }
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  echo "skipped: apt-get and dpkg-deb are needed (a Debian machine)"; exit 77
fi
# One fetch at a time on this cache: scripts/test.sh starts one beside its compiles, and the tier's own
# then waits for it and finds everything in place.
mkdir -p "$R"
exec 9>"$R/.fetch.lock"
flock 9

suites_in_list=$(awk '$1=="pkg"{print $2}' "$list" | awk '!s[$0]++')
((${#want[@]})) || mapfile -t want <<<"$suites_in_list"
older_of() { awk -v s="$1" '$1=="older" && $2==s {print $3}' "$list"; }

mirror=${WHEELCHECK_DEBIAN_MIRROR:-}
if [[ -z $mirror ]]; then
  mirror=$(sed -n 's/^URIs: *\([^ ]*debian\/*\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 || true)
  [[ -n $mirror ]] || mirror=$(awk '$1=="deb" && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [[ -n $mirror ]] || mirror=http://deb.debian.org/debian
fi

APT=()
apt_for() {  # apt_for SUITE: the private state of SUITE in APT
  local d=$R/apt/$1
  mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
  [[ -f $d/status ]] || : >"$d/status"
  printf 'deb %s %s main\n' "$mirror" "$1" >"$d/sources.list"
  APT=(-oDir::State="$d" -oDir::State::Lists="$d/lists" -oDir::State::status="$d/status"
       -oDir::Etc::SourceList="$d/sources.list" -oDir::Etc::SourceParts=/dev/null
       -oDir::Etc::Preferences=/dev/null -oDir::Etc::PreferencesParts=/dev/null
       -oDir::Cache="$d/cache" -oDir::Cache::pkgcache="$d/cache/pkgcache.bin"
       -oDir::Cache::srcpkgcache="$d/cache/srcpkgcache.bin" -oAPT::Architecture=amd64 -oAPT::Architectures=amd64
       -oAPT::Install-Recommends=0 -oAPT::Install-Suggests=0
       -oDebug::NoLocking=1 -oAPT::Sandbox::User=root -oAcquire::Retries=3)
}

unreachable() {
  echo "skipped: the Debian archive ($mirror, suite $1) is not reachable and $R lacks what the tier needs;" \
       "run tests/realworld/fetch.sh where the archive is reachable"
  exit 77
}

updated=" "
ensure_lists() {  # ensure_lists SUITE [force]
  apt_for "$1"
  local d=$R/apt/$1
  if [[ ${2:-} == force || ! -f $d/lists/.fresh ]] && [[ $updated != *" $1 "* ]]; then
    echo "fetch: reading the $1 indexes from $mirror"
    apt-get "${APT[@]}" -q update >"$d/update.log" 2>&1 || true
    # apt says a failed fetch as a warning; what counts is whether the suite's index is here now
    if grep -qE '^(Err:|W: Failed to fetch|E: )' "$d/update.log" || ! compgen -G "$d/lists/*_dists_$1_main_binary-amd64_Packages*" >/dev/null; then
      grep -E '^(Err:|W:|E:)' "$d/update.log" | head -3 >&2
      unreachable "$1"
    fi
    touch "$d/lists/.fresh"
    updated+="$1 "
  fi
}

closure() {  # closure SUITE PKG... -> "name version" lines of what apt would install on an empty system
  apt_for "$1"; shift
  apt-get "${APT[@]}" -s -qq install --no-install-recommends "$@" 2>/dev/null |
    sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1 \2/p' | sed 's/:amd64 / /' | sort -u
}

# download SUITE DIR "name=version"...: fetches into DIR what is missing there; prints "name version file"
download() {
  local suite=$1 dir=$2; shift 2
  apt_for "$suite"
  mkdir -p "$dir"
  local uris
  local empty; empty=$(mktemp -d)  # apt prints no URI for a file already in the current folder
  uris=$(cd "$empty" && apt-get "${APT[@]}" -qq --print-uris download "$@" 2>&1) || {
    rmdir "$empty"; echo "$uris" >&2; return 1; }
  rmdir "$empty"
  local need=() spec file ver
  for spec in "$@"; do
    ver=${spec#*=}
    file=$(awk -v n="${spec%%=*}_" -v v="_${ver//:/%3a}_" \
           'index($2, n)==1 && index($2, v) {print $2; exit}' <<<"$uris")
    [[ -n $file ]] || { echo "fetch: apt names no file for $spec" >&2; return 1; }
    [[ -s $dir/$file ]] || need+=("$spec")
    echo "${spec%%=*} ${spec#*=} $file"
  done
  if ((${#need[@]})); then
    echo "fetch: downloading ${#need[@]} packages from $suite" >&2
    (cd "$dir" && apt-get "${APT[@]}" -qq download "${need[@]}" >&2) || return 1
  fi
}

unpack() {  # unpack DEB: $R/x/NAME_VERSION_ARCH with DEBIAN/ (control, postinst...)
  local deb=$1 x
  x=$R/x/$(basename "$deb" .deb)
  [[ -d $x ]] && return 0
  rm -rf "$x.tmp"
  mkdir -p "$x.tmp"
  dpkg-deb -x "$deb" "$x.tmp"
  dpkg-deb -e "$deb" "$x.tmp/DEBIAN"
  mv "$x.tmp" "$x"
}

# direct_libs CONTROL CLOSUREFILE: the library packages a package itself depends on (its unpacked control
# file; apt's choice of each alternative: the first one in the closure), less the C and C++ runtimes and
# libpython
direct_libs() {
  awk '/^[^ \t]/ {f = ($0 ~ /^(Depends|Pre-Depends):/)} f {sub(/^[^ \t][^:]*: */, ""); printf "%s ", $0} END {print ""}' "$1" |
    tr ',' '\n' |
    while IFS= read -r group; do
      for alt in ${group//|/ }; do
        [[ $alt == \(* || $alt == *\) || $alt == [\<\>=]* ]] && continue
        alt=${alt%%:*}
        if grep -q "^$alt " "$2"; then echo "$alt"; break; fi
      done
    done | grep -E '^lib' | grep -vE '^(libc6|libgcc-s1|libstdc\+\+6|libpython3.*|libc-bin)$' | sort -u || true
}

mkdir -p "$R/x"
status=0
for suite in "${want[@]}"; do
  older=$(older_of "$suite")
  st=$R/state/$suite
  key=$( { grep -E "^(python|older|pkg) +$suite( |$)" "$list"; echo "mirror $mirror"; sha256sum "$0" | cut -c1-16; } | sha256sum | cut -c1-32)
  if ((!refresh)) && [[ -f $st/stamp && $(cat "$st/stamp") == "$key" ]]; then
    ok=1
    while read -r name ver file; do [[ -s $R/debs/$suite/$file || -s $R/debs/$older/$file ]] || { ok=0; break; }
                                      [[ -d $R/x/${file%.deb} ]] || { ok=0; break; }; done <"$st/debs.txt"
    if ((ok)); then echo "fetch: $suite: cached ($(wc -l <"$st/debs.txt") packages in $R)"; continue; fi
  fi
  force=; ((refresh)) && force=force
  ensure_lists "$suite" "$force"
  [[ -z $older ]] || ensure_lists "$older" "$force"
  rm -rf "$st.tmp"; mkdir -p "$st.tmp/closure" "$st.tmp/old"
  : >"$st.tmp/skipped.txt"
  read -r -a pyline <<<"$(awk -v s="$suite" '$1=="python" && $2==s {$1=""; $2=""; print}' "$list")"
  closure "$suite" "${pyline[@]}" >"$st.tmp/closure/_python.txt"
  [[ -s $st.tmp/closure/_python.txt ]] || { echo "fetch: $suite: apt cannot install ${pyline[*]}" >&2; exit 2; }
  pkgs=$(awk -v s="$suite" '$1=="pkg" && $2==s {print $3}' "$list")
  apt_for "$suite"
  apt-cache "${APT[@]}" -qq gencaches >/dev/null 2>&1 || true  # built once, read by the parallel runs
  jobs=$(nproc 2>/dev/null || echo 2)
  for p in $pkgs; do  # one resolution per package, $jobs at a time
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
    closure "$suite" "$p" >"$st.tmp/closure/$p.txt" &
  done
  wait
  for p in $pkgs; do
    grep -q "^$p " "$st.tmp/closure/$p.txt" || closure "$suite" "$p" >"$st.tmp/closure/$p.txt"  # once more, alone
    if ! grep -q "^$p " "$st.tmp/closure/$p.txt"; then
      echo "$p not installable from $suite (absent or unsatisfiable)" >>"$st.tmp/skipped.txt"
      rm -f "$st.tmp/closure/$p.txt"
    fi
  done
  # every closure's packages, one version each (one apt state, one resolution per package: they agree)
  mapfile -t specs < <(cat "$st.tmp/closure/"*.txt | sort -u | awk '{print $1 "=" $2}')
  download "$suite" "$R/debs/$suite" "${specs[@]}" >"$st.tmp/debs.txt" ||
    { ensure_lists "$suite" force; download "$suite" "$R/debs/$suite" "${specs[@]}" >"$st.tmp/debs.txt"; } ||
    { echo "fetch: $suite: download failed" >&2; exit 2; }
  while read -r name ver file; do unpack "$R/debs/$suite/$file"; done <"$st.tmp/debs.txt"
  # the older release's libraries: libstdc++6, and the same-named direct library dependencies
  if [[ -n $older ]]; then
    declare -A wants=()
    for f in "$st.tmp/closure/"python3-*.txt; do
      p=$(basename "$f" .txt)
      file=$(awk -v p="$p" '$1==p {print $3}' "$st.tmp/debs.txt")
      wants[$p]="libstdc++6 $(direct_libs "$R/x/${file%.deb}/DEBIAN/control" "$f" | tr '\n' ' ')"
    done
    # the older suite's version of each of them, where it has the name (one look-up for all)
    apt_for "$older"
    declare -A ov=()
    # shellcheck disable=SC2068  # the lists are space-separated names
    mapfile -t cands < <(printf '%s\n' ${wants[@]} | sort -u)
    while read -r name ver; do ov[$name]=$ver; done < <(
      apt-cache "${APT[@]}" show --no-all-versions "${cands[@]}" 2>/dev/null |
        awk '/^Package:/ {p=$2} /^Version:/ {print p, $2}' || true)
    olds=()
    for p in "${!wants[@]}"; do
      for lib in ${wants[$p]}; do
        [[ -n ${ov[$lib]:-} ]] || continue
        echo "$lib ${ov[$lib]}" >>"$st.tmp/old/$p.txt"
        olds+=("$lib=${ov[$lib]}")
      done
    done
    mapfile -t olds < <(printf '%s\n' "${olds[@]}" | sort -u)
    download "$older" "$R/debs/$older" "${olds[@]}" >"$st.tmp/old-debs.txt" ||
      { ensure_lists "$older" force; download "$older" "$R/debs/$older" "${olds[@]}" >"$st.tmp/old-debs.txt"; } ||
      { echo "fetch: $older: download failed" >&2; exit 2; }
    cat "$st.tmp/old-debs.txt" >>"$st.tmp/debs.txt"
    echo "$older" >"$st.tmp/older"
  fi
  n=0
  while read -r name ver file; do
    deb=$R/debs/$suite/$file; [[ -s $deb ]] || deb=$R/debs/$older/$file
    unpack "$deb"; n=$((n + 1))
  done <"$st.tmp/debs.txt"
  echo "$key" >"$st.tmp/stamp"
  rm -rf "$st"; mv "$st.tmp" "$st"
  ext=("$st"/closure/python3-*.txt)
  echo "fetch: $suite: $n packages (${#ext[@]} extension packages," \
       "$(wc -l <"$st/skipped.txt") skipped) in $R"
done
exit $status

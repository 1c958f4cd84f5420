#!/usr/bin/env bash
# Makes this machine fresh again for the test budget's measurements (docs/development.md): every Debian
# package the project's scripts installed is purged (the packages of scripts/install-deps.sh's apt-get
# runs, as /var/log/apt/history.log records them, with what they pulled in; what the machine had before
# stays), apt's download cache is emptied, and so are the build caches (ccache, the static packages'
# libraries and downloads, ctest's costs), the real-world tier's downloads and the profile cache.
#
#   bench/fresh-machine.sh --yes     then: time scripts/quickstart.sh, or time .ci/run in a clean clone
#
# Run as root, on a machine of this project's kind that you may reset: it removes packages.
set -euo pipefail
[[ ${1:-} == --yes ]] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; echo "(pass --yes to do it)"; exit 2; }
cd "$(dirname "$0")/.."
# The project's apt-get runs: their command line is install-deps.sh's (-y -qq --no-install-recommends).
mapfile -t installed < <(zcat -f /var/log/apt/history.log* | awk '
  /^Commandline: apt-get install -y -qq --no-install-recommends/ { ours = 1; next }
  /^Commandline:/ { ours = 0 }
  ours && /^Install:/ { sub(/^Install: /, ""); n = split($0, p, /\), /)
    for (i = 1; i <= n; i++) { split(p[i], w, " "); sub(/:.*/, "", w[1]); print w[1] } }' | sort -u)
present=()
for p in "${installed[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && present+=("$p")
done
echo "fresh-machine: purging ${#present[@]} packages the project's scripts installed"
if ((${#present[@]})); then
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${present[@]}" >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -qq >/dev/null
fi
apt-get clean
rm -rf /var/lib/apt/lists/*
cache=${XDG_CACHE_HOME:-$HOME/.cache}
rm -rf "${WHEELCHECK_BUILD_CACHE:-$cache/wheelcheck/build}" "${WHEELCHECK_REALWORLD:-$cache/wheelcheck-realworld}" \
  "$cache/wheelcheck" "$cache/ccache"
echo "fresh-machine: done: no project package, no apt cache or lists, no build cache"

# Sourced by the scripts that build (quickstart.sh, test.sh, sanitize.sh, package.sh, fuzz/run.sh): the
# caches that live outside the clone, so that a clean clone on the same machine (CI's) reuses them.
#
#   WHEELCHECK_BUILD_CACHE the folder of every build cache (default ${XDG_CACHE_HOME:-~/.cache}/wheelcheck/build,
#                          beside the profile cache wheelcheck itself keeps in ~/.cache/wheelcheck)
#   CCACHE_DIR             the compiler cache (default $WHEELCHECK_BUILD_CACHE/ccache)
#   CCACHE_MAXSIZE         its size limit (default 6G; ccache evicts the oldest past it)
#   WHEELCHECK_CCACHE=0    build without the compiler cache
#
# Sets cache_launcher: the CMake options that put ccache in front of the compilers (empty without it).
# ccache never changes what is compiled: an object is reused only when the compiler, its options and the
# preprocessed source are the same. CCACHE_BASEDIR makes the paths of this checkout relative, and the
# build's objects carry no path of the checkout (the folders reach only db.cpp and tests/support.cpp), so
# a clone in another folder hits the same entries; debug information then names the folder the object
# was first compiled in (CCACHE_NOHASHDIR), which changes no behaviour.
: "${root:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
wheelcheck_cache=${WHEELCHECK_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wheelcheck/build}
cache_launcher=()
if [[ ${WHEELCHECK_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$wheelcheck_cache/ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-6G}
  mkdir -p "$CCACHE_DIR"
  cache_launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
else
  # A folder configured with the launcher before keeps it unless told otherwise.
  cache_launcher=(-UCMAKE_C_COMPILER_LAUNCHER -UCMAKE_CXX_COMPILER_LAUNCHER)
fi

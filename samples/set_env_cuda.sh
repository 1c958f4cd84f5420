#!/usr/bin/env bash
# What a FlagOS CUDA setup script does with wheelcheck, played on the sample wheels of samples/flagos/:
#   1. pin the wheels (exact files, as the real script pins `flag-gems===5.4.0`),
#   2. print wheelcheck's verdict on each against the image,
#   3. eval `wheelcheck gates ... --format sh`: environment variables that turn off the optional routes
#      the image cannot run (FlagTree's TLE distributed loader, the FlagGems C++ route, FlagCX),
#   4. report the decisions and print the pip commands it would run (it never runs pip).
#
#   samples/set_env_cuda.sh [--pip] [WHEEL_DIR [IMAGE]]
#     --pip       get wheelcheck the way a CI image without apt does: `pip install wheelcheck` into a venv
#                 (offline here: --no-index --find-links dist/, the wheels scripts/package.sh writes; a
#                 real setup script names its index instead), then run that venv's wheelcheck
#     WHEEL_DIR   default build/samples/flagos under the repository root (cmake --build build --target samples)
#     IMAGE       default cuda13.0 (a db image name, a description file or a root folder)
#     $WHEELCHECK the binary, default build/wheelcheck under the repository root
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ${1:-} == --pip ]]; then
  shift
  venv="$root/build/setup-venv"
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$root/dist" wheelcheck ||
    { echo "error: no wheelcheck wheel in $root/dist (make it: scripts/package.sh x86_64)" >&2; exit 2; }
  WHEELCHECK="$venv/bin/wheelcheck"
  echo "+ pip install wheelcheck  ->  $("$WHEELCHECK" --version)"
fi
wheel_dir="${1:-$root/build/samples/flagos}"
IMAGE="${2:-cuda13.0}"
WHEELCHECK="${WHEELCHECK:-$root/build/wheelcheck}"

# 1. The pins. FlagTree's wheel carries its own triton/_C/libflagcx.so, a CUDA 12 build (libcudart.so.12):
#    that copy is what the TLE distributed loader finds when $FLAGCX_LIB_PATH is unset. The FlagCX wheel
#    proper is the CUDA 13 build, installed beside FlagTree and the FlagGems C++ companion.
flagtree="$wheel_dir/flagtree-0.6.1-cp312-cp312-linux_x86_64.whl"
flaggems_cpp="$wheel_dir/flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl"
flagcx="$wheel_dir/flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl"

[[ -x "$WHEELCHECK" ]] || { echo "error: no wheelcheck binary at $WHEELCHECK (set \$WHEELCHECK)" >&2; exit 2; }
for w in "$flagtree" "$flaggems_cpp" "$flagcx"; do
  [[ -f "$w" ]] || { echo "error: missing $w (build it: cmake --build build --target samples)" >&2; exit 2; }
done

# 2. The verdict on each wheel, for the log. A non-zero exit is an answer here, not a failure:
#    1 incompatible, 3 degraded (only optional routes fail), 4 unknown (depends on a fact the image lacks).
for w in "$flagtree" "$flaggems_cpp" "$flagcx"; do
  echo "+ wheelcheck $(basename "$w") --image $IMAGE"
  rc=0
  "$WHEELCHECK" --quiet "$w" --image "$IMAGE" || rc=$?
  echo "  (exit $rc)"
  echo
done

# 3. The gates. `gates` exits 0 whenever it could evaluate and prints `export VAR='value'` lines,
#    `export WHEELCHECK_VERDICT='...'` and `#` comments (the reasons): safe to eval. A non-zero exit means
#    it could not evaluate (bad input, unknown image), so the setup stops rather than guess.
echo "+ wheelcheck gates $(basename "$flagtree") $(basename "$flaggems_cpp") --with $(basename "$flagcx")" \
     "--image $IMAGE --format sh"
gates_sh="$("$WHEELCHECK" gates "$flagtree" "$flaggems_cpp" --with "$flagcx" --image "$IMAGE" --format sh)" || {
  echo "error: wheelcheck gates could not evaluate the wheels against $IMAGE" >&2
  exit 2
}
echo "$gates_sh"
eval "$gates_sh"
echo

# 4. The decisions. An unset variable means wheelcheck left the route on.
echo "Decisions for $IMAGE:"
if [[ "${USE_TLE_DIST:-1}" == 0 ]]; then
  echo "  FlagTree TLE distributed loader: off (USE_TLE_DIST=0)"
else
  echo "  FlagTree TLE distributed loader: on"
fi
install_gems_cpp=1
if [[ "${FLAGOS_USE_FLAGGEMS_CPP:-1}" == 0 || "${FLAGOS_BUILD_FLAGGEMS_CPP:-1}" == 0 ]]; then
  # The build-time gate also means: do not install the prebuilt C++ companion.
  [[ "${FLAGOS_BUILD_FLAGGEMS_CPP:-1}" == 0 ]] && install_gems_cpp=0
  echo "  FlagGems C++ route: off (FLAGOS_USE_FLAGGEMS_CPP=${FLAGOS_USE_FLAGGEMS_CPP:-unset}," \
       "FLAGOS_BUILD_FLAGGEMS_CPP=${FLAGOS_BUILD_FLAGGEMS_CPP:-unset}): FlagGems stays on its Python/Triton path"
else
  echo "  FlagGems C++ route: on"
fi
install_flagcx=1
if [[ "${WHEELCHECK_SKIP_FLAGCX:-0}" == 1 ]]; then
  install_flagcx=0
  echo "  FlagCX: skip install (WHEELCHECK_SKIP_FLAGCX=1," \
       "TORCH_DEVICE_BACKEND_AUTOLOAD=${TORCH_DEVICE_BACKEND_AUTOLOAD:-unset})"
else
  echo "  FlagCX: install $(basename "$flagcx")"
fi
echo "  overall verdict: ${WHEELCHECK_VERDICT:-unknown}"
echo

# The installs, printed only: exact files, no dependency resolution, binaries only.
echo "Would run:"
pins=("$flagtree")
(( install_gems_cpp )) && pins+=("$flaggems_cpp")
(( install_flagcx )) && pins+=("$flagcx")
for w in "${pins[@]}"; do
  printf '  pip install --no-deps --only-binary=:all: %q\n' "$w"
done

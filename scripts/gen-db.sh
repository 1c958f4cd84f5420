#!/usr/bin/env bash
# Regenerates the db/ descriptions and export tables that are made from real binaries, and the
# packaging policies (auditwheel's policy files, from which wheelcheck makes every packaging target). Each generated file records the command
# that remakes it ("generated_by"); running it again on the same inputs changes nothing.
#
#   scripts/gen-db.sh [--check] [--build DIR] [NAME...]
#
# NAME (default: all that this machine has the inputs for):
#   debian12            glibc 2.36 + libstdc++ (GCC 12) of this machine (Debian 12 packages)
#   gcc12-runtime-debian  GCC 12's runtime libraries (libgomp1, libatomic1, libquadmath0, libitm1, libgfortran5)
#                       and zlib1g of this machine (Debian 12 packages; layer): the tables the ubuntu22.04 layer uses
#   debian13            glibc 2.41 + libstdc++ (GCC 14) from the corpus (Debian 13 packages)
#   cuda13.0-runtime    the CUDA 13.0 runtime and libraries under /usr/local/cuda-13.0 (layer)
#   cuda12.4-runtime    the CUDA 12.4 runtime (Debian's libcudart12) laid out as pip installs it (layer)
#   torch1.13-debian torch2.6-debian torch2.14-debian torch2.6-debian-aarch64
#                       PyTorch's libraries from Debian's builds, laid out as pip installs them (layers)
#   python3.11-debian   Debian 12's CPython 3.11 interpreter and its exports (layer), and the stable ABI
#                       table (limited API at 3.10, from Debian's python3.11-dev headers) that the
#                       declared python3.10/python3.12 layers use where their exports are unknown
#   python3.13-debian   Debian 13's CPython 3.13 and its exports (layer; scripts/fetch-cpython.sh fetches it)
#   targets             db/policies: auditwheel's manylinux, musllinux and android policy files and licence
#
# --check  generate into a scratch copy and compare with db/: exit 1 and show the difference if any.
# The corpus comes from ../shared/corpus/fetch-real-binaries.sh ($WHEELCHECK_CORPUS, default
# ~/.cache/wheelcheck-corpus); names whose inputs are absent are skipped with a message.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${WHEELCHECK_CORPUS:-$HOME/.cache/wheelcheck-corpus}
shared=${WHEELCHECK_SHARED:-$here/../shared}
build=$here/build
check=0
names=()
while (($#)); do
  case $1 in
    --check) check=1 ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    -*) echo "gen-db.sh: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1") ;;
  esac
  shift
done
all=(debian12 gcc12-runtime-debian debian13 cuda13.0-runtime cuda12.4-runtime torch1.13-debian torch2.6-debian torch2.14-debian torch2.6-debian-aarch64 python3.11-debian python3.13-debian targets)
((${#names[@]})) || names=("${all[@]}")

wheelcheck=$build/wheelcheck
[[ -x $wheelcheck ]] || { echo "gen-db.sh: $wheelcheck not built (cmake --build $build)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
out=$here/db
if ((check)); then
  mkdir -p "$scratch/db"
  cp -a "$here/db/." "$scratch/db/"
  out=$scratch/db
fi

# Hard links where the file system allows (the CUDA folder is 2.4 GB), copies elsewhere.
link_tree() { cp -al "$1" "$2" 2>/dev/null || cp -a "$1" "$2"; }
link_file() { ln -f "$1" "$2" 2>/dev/null || cp -f "$1" "$2"; }
deb_version() {  # the first line of a Debian changelog: "pytorch (2.6.0+dfsg-7) unstable; ..."
  local f
  f=$(ls "$1"/usr/share/doc/*/changelog.Debian.gz 2>/dev/null | head -1 || true)
  if [[ -n $f ]]; then
    zcat "$f" | sed -n '1s/^\([^ ]*\) (\([^)]*\)).*/\1 \2/p'
  else
    echo "version unknown"
  fi
}
# A Debian-style root: merged /usr, multiarch folders, ld.so.conf with its include, a real ld.so.cache.
debian_root() {
  local root=$1 triple=$2
  mkdir -p "$root/usr/lib/$triple" "$root/etc/ld.so.conf.d" "$root/usr/lib64"
  ln -sfn usr/lib "$root/lib"
  ln -sfn usr/lib64 "$root/lib64"
  echo 'include /etc/ld.so.conf.d/*.conf' >"$root/etc/ld.so.conf"
  printf '# Multiarch support\n/usr/local/lib/%s\n/lib/%s\n/usr/lib/%s\n' "$triple" "$triple" "$triple" \
    >"$root/etc/ld.so.conf.d/$triple.conf"
  printf '# libc default configuration\n/usr/local/lib\n' >"$root/etc/ld.so.conf.d/libc.conf"
}
ldcache() { ldconfig -X -r "$1"; }
probe() {  # probe NAME ROOT KIND(image|layer) SUMMARY SOURCE [extra args]
  local name=$1 root=$2 kind=$3 summary=$4 source=$5
  shift 5
  local dir=images
  [[ $kind == layer ]] && dir=layers
  rm -rf "$out/exports/$name"
  local args=(probe --root "$root" --name "$name" --summary "$summary" --group generated --source "$source"
    --generated-by "scripts/gen-db.sh $name" -o "$out/$dir/$name.json" --exports-dir "$out/exports/$name" -q)
  [[ $kind == layer ]] && args+=(--layer)
  "$wheelcheck" "${args[@]}" "$@"
  echo "gen-db: $dir/$name.json"
}
skip() { echo "gen-db: skipped $1: $2" >&2; }

gen_debian12() {
  local root=$scratch/debian12 triple=x86_64-linux-gnu pkg f
  [[ -f /usr/lib/$triple/libc.so.6 ]] && dpkg-query -W libc6 >/dev/null 2>&1 || { skip debian12 "not a Debian x86_64 machine"; return; }
  debian_root "$root" $triple
  for pkg in libc6 libstdc++6 libgcc-s1; do
    while read -r f; do
      [[ $f == /usr/lib/$triple/*.so* || $f == /lib/$triple/*.so* ]] || continue
      [[ $(dirname "$f") == */$triple ]] || continue
      [[ -e $f ]] || continue
      cp -a "$f" "$root/usr/lib/$triple/"
    done < <(dpkg -L $pkg)
  done
  ln -sfn ../lib/$triple/ld-linux-x86-64.so.2 "$root/usr/lib64/ld-linux-x86-64.so.2"
  ldcache "$root"
  probe debian12 "$root" image "Debian 12 (bookworm): glibc 2.36, libstdc++ of GCC 12 (this kind of machine)" \
    "Debian 12 packages libc6 $(dpkg-query -W -f='${Version}' libc6), libstdc++6 $(dpkg-query -W -f='${Version}' libstdc++6), libgcc-s1 $(dpkg-query -W -f='${Version}' libgcc-s1)"
}

gen_gcc12() {
  local root=$scratch/gcc12-runtime-debian triple=x86_64-linux-gnu pkg f versions=()
  local pkgs=(libgomp1 libatomic1 libquadmath0 libitm1 libgfortran5 zlib1g)
  for pkg in "${pkgs[@]}"; do
    dpkg-query -W "$pkg:amd64" >/dev/null 2>&1 || { skip gcc12-runtime-debian "Debian package $pkg absent"; return; }
    versions+=("$pkg $(dpkg-query -W -f='${Version}' "$pkg:amd64")")
  done
  debian_root "$root" $triple
  for pkg in "${pkgs[@]}"; do
    while read -r f; do
      [[ $f == /usr/lib/$triple/*.so* || $f == /lib/$triple/*.so* ]] || continue
      [[ -e $f ]] && cp -a "$f" "$root/usr/lib/$triple/"
    done < <(dpkg -L "$pkg:amd64")
  done
  ldcache "$root"
  probe gcc12-runtime-debian "$root" layer "GCC 12's runtime libraries (OpenMP, atomics, quadmath, TM, Fortran) and zlib (Debian 12)" \
    "Debian 12 packages $(IFS=,; echo "${versions[*]}" | sed 's/,/, /g')"
}

gen_debian13() {
  local root=$scratch/debian13 triple=x86_64-linux-gnu d
  [[ -d $corpus/debs/libc6 && -d $corpus/debs/libstdc++6 && -d $corpus/debs/libgcc-s1 ]] ||
    { skip debian13 "corpus absent ($corpus/debs/libc6): run ../shared/corpus/fetch-real-binaries.sh"; return; }
  debian_root "$root" $triple
  for d in libc6 libstdc++6 libgcc-s1; do
    find "$corpus/debs/$d/usr/lib/$triple" -maxdepth 1 \( -type f -o -type l \) -name '*.so*' -exec cp -a {} "$root/usr/lib/$triple/" \;
  done
  ln -sfn ../lib/$triple/ld-linux-x86-64.so.2 "$root/usr/lib64/ld-linux-x86-64.so.2"
  ldcache "$root"
  probe debian13 "$root" image "Debian 13 (trixie): glibc 2.41, libstdc++ of GCC 14 (from the corpus)" \
    "Debian 13 packages: $(deb_version "$corpus/debs/libc6"), libstdc++6 and libgcc-s1 of GCC 14"
}

gen_cuda13() {
  local root=$scratch/cuda13.0-runtime src=/usr/local/cuda-13.0
  [[ -d $src/lib ]] || { skip cuda13.0-runtime "$src absent"; return; }
  mkdir -p "$root/usr/local/cuda-13.0" "$root/etc/ld.so.conf.d"
  link_tree "$src/lib" "$root/usr/local/cuda-13.0/lib"
  rm -rf "$root/usr/local/cuda-13.0/lib/stubs" "$root/usr/local/cuda-13.0/lib/cmake"
  [[ -d $src/dist-info ]] && cp -a "$src/dist-info" "$root/usr/local/cuda-13.0/dist-info"
  [[ -f $src/version.json ]] && cp -a "$src/version.json" "$root/usr/local/cuda-13.0/"
  ln -sfn cuda-13.0 "$root/usr/local/cuda"
  echo 'include /etc/ld.so.conf.d/*.conf' >"$root/etc/ld.so.conf"
  echo /usr/local/cuda-13.0/lib >"$root/etc/ld.so.conf.d/zz-cuda-13-0.conf"
  ldcache "$root"
  probe cuda13.0-runtime "$root" layer "CUDA 13.0 runtime and libraries (cuBLAS, cuDNN, NCCL, ...) at /usr/local/cuda-13.0" \
    "/usr/local/cuda-13.0 of this kind of machine (laid out from NVIDIA's wheels: $(ls "$src/dist-info" 2>/dev/null | grep -c dist-info) dist-info folders)"
}

# A layer holding one Python distribution at {site-packages}: files given as "relative-path=host-file".
dist_layer() {  # dist_layer ROOT NAME VERSION file...
  local root=$1 name=$2 version=$3
  shift 3
  local site=$root/usr/lib/python3.12/site-packages info spec rel host
  info=$site/$name-$version.dist-info
  mkdir -p "$info"
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$name" "$version" >"$info/METADATA"
  : >"$info/RECORD"
  for spec in "$@"; do
    rel=${spec%%=*}; host=${spec#*=}
    mkdir -p "$(dirname "$site/$rel")"
    link_file "$host" "$site/$rel"
    echo "$rel,sha256=$(sha256sum "$host" | cut -d' ' -f1 | xxd -r -p | base64 -w0 | tr '+/' '-_' | tr -d =),$(stat -c %s "$host")" >>"$info/RECORD"
  done
  echo "$name-$version.dist-info/METADATA,," >>"$info/RECORD"
  echo "$name-$version.dist-info/RECORD,," >>"$info/RECORD"
}

gen_cuda12() {
  local root=$scratch/cuda12.4-runtime src=$corpus/debs/libcudart12/usr/lib/x86_64-linux-gnu
  [[ -f $src/libcudart.so.12 ]] || { skip cuda12.4-runtime "corpus absent ($src)"; return; }
  dist_layer "$root" nvidia_cuda_runtime_cu12 12.4.127 "nvidia/cuda_runtime/lib/libcudart.so.12=$(readlink -f "$src/libcudart.so.12")"
  probe cuda12.4-runtime "$root" layer "CUDA 12.4 runtime (libcudart.so.12) as pip installs nvidia-cuda-runtime-cu12" \
    "Debian package $(deb_version "$corpus/debs/libcudart12") (libcudart12), laid out as the nvidia-cuda-runtime-cu12 wheel" \
    --relocatable-site
}

gen_torch() {  # gen_torch NAME DEB TRIPLE
  local name=$1 deb=$2 triple=$3 root=$scratch/$1 src files=() f base version
  src=$corpus/debs/$deb/usr/lib/$triple
  [[ -d $src ]] || { skip "$name" "corpus absent ($src)"; return; }
  version=$(deb_version "$corpus/debs/$deb" | sed -n 's/^pytorch \([0-9.]*\).*/\1/p')
  for f in "$src"/lib*.so.*; do
    [[ -L $f ]] && continue  # the real files only: libc10.so.2.6.0 becomes torch/lib/libc10.so
    base=$(basename "$f"); base=${base%%.so.*}.so
    files+=("torch/lib/$base=$f")
  done
  dist_layer "$root" torch "$version" "${files[@]}"
  probe "$name" "$root" layer "PyTorch $version ($(deb_version "$corpus/debs/$deb"), $triple) laid out as pip installs torch" \
    "Debian package $deb: $(deb_version "$corpus/debs/$deb"); files renamed as the torch wheel names them (torch/lib/libc10.so); sonames stay Debian's" \
    --relocatable-site
}

# A layer with one Debian CPython and its export table: python_layer NAME VERSION EXE PACKAGE-TEXT SITES...
python_layer() {
  local name=$1 version=$2 exe=$3 package=$4 needed digits sites
  shift 4
  digits=${version/./}
  sites=$(printf '"%s", ' "$@"); sites=${sites%, }
  mkdir -p "$out/exports/python"
  # Read from a root-like folder, so the table names its image path (/usr/bin/pythonX.Y), not this machine's.
  mkdir -p "$scratch/$name/usr/bin"
  link_file "$exe" "$scratch/$name/usr/bin/python$version"
  (cd "$scratch/$name" && "$wheelcheck" exports "usr/bin/python$version" \
    -o "$out/exports/python/cpython-$version-debian.exports.gz" >/dev/null 2>&1)
  needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/"\1"/p' | paste -sd, | sed 's/,/, /g')
  cat >"$out/layers/$name.json" <<EOF
{
  "schema": "wheelcheck-image/1",
  "name": "$name",
  "summary": "Debian's CPython $version (/usr/bin/python$version) with its exports: what extension modules bind against",
  "kind": "layer",
  "origin": "probed",
  "group": "generated",
  "sources": ["$package"],
  "generated_by": "scripts/gen-db.sh $name",
  "exports_dir": "../exports",
  "pythons": [
    {
      "version": "$version",
      "abi_tags": ["cp$digits", "abi3"],
      "executable": "/usr/bin/python$version",
      "site_packages": [$sites],
      "exports": "python/cpython-$version-debian.exports.gz",
      "needed": [$needed]
    }
  ]
}
EOF
  echo "gen-db: layers/$name.json, exports/python/cpython-$version-debian.exports.gz"
}

gen_python311() {
  local exe=/usr/bin/python3.11 headers=/usr/include/python3.11
  [[ -x $exe && -f $headers/Python.h ]] && dpkg-query -W python3.11-minimal >/dev/null 2>&1 ||
    { skip python3.11-debian "Debian's python3.11 and python3.11-dev absent"; return; }
  python_layer python3.11-debian 3.11 "$exe" \
    "Debian 12 package python3.11-minimal $(dpkg-query -W -f='${Version}' python3.11-minimal)" \
    /usr/local/lib/python3.11/dist-packages /usr/lib/python3/dist-packages
  python3 "$here/db/tools/stable_abi.py" --headers "$headers" --limited 0x030A0000 --name stable-abi-3.10 \
    --table "$out/exports/python/cpython-3.11-debian.exports.gz" \
    --out "$out/exports/python/stable-abi-3.10.exports.gz" >/dev/null
}

gen_python313() {
  local deb=$corpus/debs/python3.13-minimal
  [[ -x $deb/usr/bin/python3.13 ]] || { skip python3.13-debian "absent ($deb): run scripts/fetch-cpython.sh"; return; }
  python_layer python3.13-debian 3.13 "$deb/usr/bin/python3.13" \
    "Debian 13 package python3.13-minimal $(zcat "$deb"/usr/share/doc/python3.13-minimal/changelog.Debian.gz | sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p')" \
    /usr/local/lib/python3.13/dist-packages /usr/lib/python3/dist-packages
}

gen_targets() {
  [[ -f $shared/reference/manylinux-policy.json ]] ||
    { skip targets "$shared/reference absent (../shared beside the repository, or \$WHEELCHECK_SHARED)"; return; }
  mkdir -p "$out/policies"
  local f
  for f in manylinux-policy.json musllinux-policy.json android-policy.json; do
    cp "$shared/reference/$f" "$out/policies/$f"
    echo "gen-db: policies/$f"
  done
  cp "$shared/fixtures/AUDITWHEEL-LICENSE" "$out/policies/AUDITWHEEL-LICENSE"
}

for n in "${names[@]}"; do
  case $n in
    debian12) gen_debian12 ;;
    gcc12-runtime-debian) gen_gcc12 ;;
    debian13) gen_debian13 ;;
    cuda13.0-runtime) gen_cuda13 ;;
    cuda12.4-runtime) gen_cuda12 ;;
    torch1.13-debian) gen_torch torch1.13-debian libtorch1.13 x86_64-linux-gnu ;;
    torch2.6-debian) gen_torch torch2.6-debian libtorch2.6 x86_64-linux-gnu ;;
    torch2.14-debian) gen_torch torch2.14-debian libtorch2.14 x86_64-linux-gnu ;;
    torch2.6-debian-aarch64) gen_torch torch2.6-debian-aarch64 libtorch2.6-arm64 aarch64-linux-gnu ;;
    python3.11-debian) gen_python311 ;;
    python3.13-debian) gen_python313 ;;
    targets) gen_targets ;;
    *) echo "gen-db.sh: unknown name $n (known: ${all[*]})" >&2; exit 2 ;;
  esac
done

if ((check)); then
  if diff -r "$here/db" "$out" >"$scratch/diff"; then
    echo "gen-db: db/ is up to date"
  else
    cat "$scratch/diff" | head -50
    echo "gen-db: regenerating changed db/ (above)" >&2
    exit 1
  fi
fi

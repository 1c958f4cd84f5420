#!/usr/bin/env python3
"""What wheelcheck's torch preloads (db/preloads.json, inspector/resolve/preloads.cpp) say, against Debian 12's
real CPython 3.11 and glibc 2.36, in a chroot of the realworld tier's root (an overlay over it, else a hard-link
copy: the root itself is never written).

A stand-in site-packages holds what pip installs: nvidia/cuda_runtime/lib/libcudart.so.12 (an nvidia-* wheel's
library), torch/lib/libtorch_global_deps.so (needs libcudart.so.12 through RUNPATH $ORIGIN/../../nvidia/cuda_runtime
/lib) and a stand-in torch/__init__.py that does what the data says torch does (ctypes.CDLL of the global deps with
RTLD_GLOBAL, then ctypes.CDLL of the nvidia library with ctypes' default mode); and two extension modules built there
with the root's gcc and Python headers:
  cw._needs: DT_NEEDED libcudart.so.12, no RPATH;
  cw._sym:   no DT_NEEDED for it, an undefined symbol only libcudart.so.12 defines.
Checked:
  1. `import cw._needs` alone fails (libcudart.so.12 is not found): nothing else loads it.
  2. after `import torch` (preload, RTLD_LOCAL) it loads: the preloaded library is "already loaded" by its soname.
  3. `import cw._sym` alone fails (undefined symbol); after `import torch` it loads: libcudart.so.12 came in with
     libtorch_global_deps.so, RTLD_GLOBAL, so it defines symbols for every later load.
  4. with the global deps loaded RTLD_LOCAL instead (TORCH_STANDIN_LOCAL=1), cw._sym fails again: it is the mode.
  5. with no global deps (TORCH_STANDIN_NO_DEPS=1), the nvidia library's own ctypes.CDLL (RTLD_LOCAL, as torch's
     _preload_cuda_deps does) still makes cw._needs load, and still leaves cw._sym's symbol undefined.
Exit 0: all hold; 1: one does not; 77: no root, not root, or no chroot here.

Usage: python3 tests/realworld/torch_preload.py [--root ROOT] [--keep]
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

LIBCUDART = "int cudaFake(void) { return 1; }\nint cudaGlobalOnly(void) { return 7; }\n"
GLOBAL_DEPS = "int torch_global_marker(void) { return 0; }\n"
EXT = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
int %(sym)s(void);
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "%(name)s", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_%(name)s(void) {
  if (%(sym)s() < 0) return NULL;
  return PyModule_Create(&def);
}
"""
TORCH_INIT = r"""
import ctypes, os, sys
_here = os.path.dirname(os.path.abspath(__file__))
_mode = ctypes.RTLD_LOCAL if os.environ.get("TORCH_STANDIN_LOCAL") else ctypes.RTLD_GLOBAL
if not os.environ.get("TORCH_STANDIN_NO_DEPS"):
    ctypes.CDLL(os.path.join(_here, "lib", "libtorch_global_deps.so"), mode=_mode)
for _p in sys.path:
    _lib = os.path.join(_p, "nvidia", "cuda_runtime", "lib", "libcudart.so.12")
    if os.path.exists(_lib):
        ctypes.CDLL(_lib)
        break
"""


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def find_root(explicit):
    if explicit:
        return explicit
    roots = sorted(d for d in glob.glob(os.path.expanduser("~/.cache/wheelcheck-realworld/roots/bookworm-*"))
                   if os.path.isdir(d))
    return roots[0] if roots else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default="")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    base = find_root(a.root)
    if not base or not os.path.exists(os.path.join(base, "usr/bin/python3.11")):
        print("skipped: no Debian 12 root (tests/realworld/README.md: fetch.sh builds it)")
        return SKIP
    if os.geteuid() != 0 or shutil.which("chroot") is None:
        print("skipped: chroot needs root")
        return SKIP
    if not os.path.exists(os.path.join(base, "usr/include/python3.11/Python.h")) or not os.path.exists(
            os.path.join(base, "usr/bin/gcc")):
        print("skipped: the root has no gcc or Python 3.11 headers")
        return SKIP
    work = tempfile.mkdtemp(prefix="wheelcheck-torch-preload-")
    root = os.path.join(work, "root")
    mounted = False
    for d in ("upper", "ovlwork", "root"):
        os.makedirs(os.path.join(work, d))
    if run(["mount", "-t", "overlay", "overlay", "-o",
            f"lowerdir={base},upperdir={work}/upper,workdir={work}/ovlwork", root]).returncode == 0:
        mounted = True
    else:
        os.rmdir(root)
        if run(["cp", "-al", base, root]).returncode != 0:
            print("skipped: neither an overlay nor a hard-link copy of the root could be made")
            shutil.rmtree(work, ignore_errors=True)
            return SKIP
    failures = []
    try:
        sp = "/opt/sp"  # the stand-in site-packages, on PYTHONPATH
        src = os.path.join(root, "opt/src")
        os.makedirs(src)
        for d in ("nvidia/cuda_runtime/lib", "torch/lib", "cw"):
            os.makedirs(os.path.join(root, "opt/sp", d))

        def write(rel, text):
            with open(os.path.join(root, rel.lstrip("/")), "w") as f:
                f.write(text)

        write("/opt/src/cudart.c", LIBCUDART)
        write("/opt/src/deps.c", GLOBAL_DEPS)
        write("/opt/src/needs.c", EXT % {"name": "_needs", "sym": "cudaFake"})
        write("/opt/src/sym.c", EXT % {"name": "_sym", "sym": "cudaGlobalOnly"})
        write(sp + "/torch/__init__.py", TORCH_INIT)
        write(sp + "/cw/__init__.py", "")
        cudart = sp + "/nvidia/cuda_runtime/lib/libcudart.so.12"
        builds = [
            ["gcc", "-shared", "-fPIC", "-o", cudart, "/opt/src/cudart.c", "-Wl,-soname,libcudart.so.12"],
            ["gcc", "-shared", "-fPIC", "-o", sp + "/torch/lib/libtorch_global_deps.so", "/opt/src/deps.c",
             "-Wl,--no-as-needed", cudart, "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../nvidia/cuda_runtime/lib"],
            ["gcc", "-shared", "-fPIC", "-I/usr/include/python3.11", "-o",
             sp + "/cw/_needs.cpython-311-x86_64-linux-gnu.so", "/opt/src/needs.c", "-Wl,--no-as-needed", cudart],
            # No DT_NEEDED: its symbol is left undefined for whatever the process has loaded globally.
            ["gcc", "-shared", "-fPIC", "-I/usr/include/python3.11", "-o",
             sp + "/cw/_sym.cpython-311-x86_64-linux-gnu.so", "/opt/src/sym.c"],
        ]
        for b in builds:
            p = run(["chroot", root] + b)
            if p.returncode != 0:
                print("build failed:", " ".join(b), p.stdout)
                return 1
        readelf = run(["chroot", root, "sh", "-c",
                       f"LC_ALL=C readelf -d {sp}/cw/_needs.cpython-311-x86_64-linux-gnu.so 2>/dev/null || true"]).stdout
        if "RPATH" in readelf or "RUNPATH" in readelf:
            failures.append("cw._needs has an RPATH/RUNPATH: the case is not the one meant")

        def python(code, how=""):
            env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": sp, "LC_ALL": "C.UTF-8"}
            if how == "local":
                env["TORCH_STANDIN_LOCAL"] = "1"
            if how == "no-deps":
                env["TORCH_STANDIN_NO_DEPS"] = "1"

            def enter():
                os.chroot(root)
                os.chdir("/")

            return run(["/usr/bin/python3.11", "-c", code], env=env, preexec_fn=enter)

        cases = [
            ("import cw._needs", "", False, "libcudart.so.12: cannot open shared object file"),
            ("import torch; import cw._needs", "", True, ""),
            # Only the nvidia library's own ctypes.CDLL (RTLD_LOCAL), no global deps: still already loaded.
            ("import torch; import cw._needs", "no-deps", True, ""),
            ("import cw._sym", "", False, "undefined symbol: cudaGlobalOnly"),
            ("import torch; import cw._sym", "", True, ""),
            ("import torch; import cw._sym", "local", False, "undefined symbol: cudaGlobalOnly"),
            # An RTLD_LOCAL preload defines nothing for later loads.
            ("import torch; import cw._sym", "no-deps", False, "undefined symbol: cudaGlobalOnly"),
        ]
        words_of = {"local": " (global deps RTLD_LOCAL)", "no-deps": " (no global deps: the RTLD_LOCAL preload only)"}
        for code, how, loads, words in cases:
            p = python(code, how)
            ok = (p.returncode == 0) == loads and (loads or words in p.stdout)
            label = code + words_of.get(how, "")
            print(f"{'ok  ' if ok else 'FAIL'} {label}: {'loads' if p.returncode == 0 else p.stdout.strip().splitlines()[-1]}")
            if not ok:
                failures.append(label)
    finally:
        if mounted:
            run(["umount", root])
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("failed:", "; ".join(failures))
        return 1
    print("all hold: a preloaded library is already loaded by its soname, and one loaded RTLD_GLOBAL defines "
          "symbols for later loads (Debian 12's CPython 3.11, glibc 2.36)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

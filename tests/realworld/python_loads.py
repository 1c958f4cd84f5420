#!/usr/bin/env python3
"""The loads no DT_NEEDED shows (issue 62), against Debian's real CPython: wheels whose Python code loads native
files (ctypes.CDLL at import, lazily, behind `try`, through an import chain, by name, through a stand-in
torch.ops.load_library, under an `if`, with RTLD_GLOBAL for a library that needs its symbols, and without), checked by
`wheelcheck WHEEL --image ROOT --json` against the real-binaries tier's Debian 12 root, then installed there and
imported by the root's python3.11 under chroot.

What wheelcheck says of each package's import is held to CPython's:
  - a python-load error on the package's __init__.py (or naming it among the imports it breaks): `import P` must
    raise;
  - no python-load error or condition there: `import P` must work;
  - a condition (the load runs under an `if`): CPython's outcome is printed, and the condition must name the `if`.
Each case also says what its author expects, so a case that stops testing what it was written for fails too.

  python_loads.py --wheelcheck BIN [--no-fetch] [--keep DIR] [--only CASE]...

Exit: 0 all agree, 1 a disagreement, 2 a harness error, 77 skipped (not root; no gcc; the archive unreachable with
an incomplete cache).
"""
import argparse, os, shutil, sys, tempfile, time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import realworld as rw  # noqa: E402  (the tier's fetch, roots and installer)
from make_wheel import write_wheel  # noqa: E402  (realworld.py put tests/tools on the path)

SUITE = "bookworm"
TAG = "cp311-cp311-linux_x86_64"

# The C libraries the cases load: name -> (source, the libraries it links with, links libgone.so.7).
LIBS = {
    "libneedsgone.so": ("extern void gone_fn(void);\nvoid needs_gone(void) { gone_fn(); }\n", True),
    "libok.so": ("#include <zlib.h>\nconst char *ok_version(void) { return zlibVersion(); }\n", False),
    "libundef.so": ("extern void nowhere_fn(void);\nvoid undef_user(void) { nowhere_fn(); }\n", False),
    "libprov.so": ("int prov_value(void) { return 42; }\n", False),
    "libuser.so": ("extern int prov_value(void);\nint user_value(void) { return prov_value() + 1; }\n", False),
}

HEAD = "import ctypes, os, sys\n_here = os.path.dirname(os.path.abspath(__file__))\n"
FAILING = "ctypes.CDLL(os.path.join(_here, 'libneedsgone.so'))"

# name -> (files {archive path: text or ("lib", LIBNAME) or ("ext", SOURCE)}, what its author expects of `import P`:
# "fails", "loads" or "condition")
CASES = {
    "pl_at_import": ({"__init__.py": HEAD + FAILING + "\n", "libneedsgone.so": ("lib", "libneedsgone.so")}, "fails"),
    "pl_lazy": ({"__init__.py": HEAD + "def load():\n    return " + FAILING + "\n",
                 "libneedsgone.so": ("lib", "libneedsgone.so")}, "loads"),
    "pl_ok": ({"__init__.py": HEAD + "lib = ctypes.CDLL(os.path.join(_here, 'libok.so'))\n",
               "libok.so": ("lib", "libok.so")}, "loads"),
    "pl_chain_importerror": ({"__init__.py": "try:\n    from . import wrapper\nexcept ImportError:\n    wrapper = None\n",
                              "wrapper.py": HEAD + FAILING + "\n",
                              "libneedsgone.so": ("lib", "libneedsgone.so")}, "fails"),
    "pl_chain_oserror": ({"__init__.py": "try:\n    from . import wrapper\nexcept OSError:\n    wrapper = None\n",
                          "wrapper.py": HEAD + FAILING + "\n",
                          "libneedsgone.so": ("lib", "libneedsgone.so")}, "loads"),
    "pl_missing_file": ({"__init__.py": HEAD + "ctypes.CDLL(os.path.join(_here, 'lib', 'libnotshipped.so'))\n"},
                        "fails"),
    "pl_name_ok": ({"__init__.py": "import ctypes\nz = ctypes.CDLL('libz.so.1')\n"}, "loads"),
    "pl_name_gone": ({"__init__.py": "import ctypes\nctypes.cdll.LoadLibrary('libwheelcheck-nowhere.so.3')\n"},
                     "fails"),
    "pl_undefined": ({"__init__.py": HEAD + "ctypes.CDLL(os.path.join(_here, 'libundef.so'))\n",
                      "libundef.so": ("lib", "libundef.so")}, "fails"),
    "pl_torch_ops": ({"__init__.py": "import os, torch\n"
                                     "torch.ops.load_library(os.path.join(os.path.dirname(__file__), "
                                     "'libneedsgone.so'))\n",
                      "libneedsgone.so": ("lib", "libneedsgone.so")}, "fails"),
    "pl_conditional": ({"__init__.py": HEAD + "if sys.platform.startswith('linux'):\n    " + FAILING + "\n",
                        "libneedsgone.so": ("lib", "libneedsgone.so")}, "condition"),
    # libuser.so uses prov_value without a DT_NEEDED entry: it binds only because libprov.so was loaded
    # RTLD_GLOBAL first (and fails without it: pl_local).
    "pl_global": ({"__init__.py": HEAD + "ctypes.CDLL(os.path.join(_here, 'libprov.so'), mode=ctypes.RTLD_GLOBAL)\n"
                                         "user = ctypes.CDLL(os.path.join(_here, 'libuser.so'))\n",
                   "libprov.so": ("lib", "libprov.so"), "libuser.so": ("lib", "libuser.so")}, "loads"),
    "pl_local": ({"__init__.py": HEAD + "ctypes.CDLL(os.path.join(_here, 'libprov.so'))\n"
                                        "user = ctypes.CDLL(os.path.join(_here, 'libuser.so'))\n",
                  "libprov.so": ("lib", "libprov.so"), "libuser.so": ("lib", "libuser.so")}, "fails"),
}

# A stand-in torch: torch.ops.load_library is ctypes.CDLL of the path (torch/_ops.py), which is all the case needs.
TORCH_STANDIN = "import ctypes\nclass _Ops:\n    def load_library(self, path):\n        ctypes.CDLL(path)\nops = _Ops()\n"


def build(work, name, source, gone, ext=False):
    out = os.path.join(work, "obj", name)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = out + ".c"
    with open(src, "w") as f:
        f.write(source)
    cmd = ["gcc", "-shared", "-fPIC", "-o", out, src]
    if not ext:
        cmd += ["-Wl,-soname," + name]
    if gone:
        stub = os.path.join(work, "obj", "gone", "libgone.so.7")
        if not os.path.exists(stub):
            os.makedirs(os.path.dirname(stub), exist_ok=True)
            with open(stub + ".c", "w") as f:
                f.write("void gone_fn(void) {}\n")
            rw.must(["gcc", "-shared", "-fPIC", "-o", stub, stub + ".c", "-Wl,-soname,libgone.so.7"])
        cmd += ["-L" + os.path.dirname(stub), "-l:libgone.so.7"]
    if "zlib.h" in source:
        cmd += ["-lz"]
    rw.must(cmd)
    return out


def make_case_wheel(work, case, files):
    entries = []
    for arc, what in files.items():
        path = f"{case}/{arc}"
        if isinstance(what, str):
            p = os.path.join(work, "src", path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(what)
            entries.append((path, p))
        elif what[0] == "lib":
            source, gone = LIBS[what[1]]
            entries.append((path, build(work, what[1], source, gone)))
        else:
            entries.append((path, build(work, f"{case}/{arc}", what[1], False, ext=True)))
    if case == "pl_torch_ops":
        p = os.path.join(work, "src", "torch", "__init__.py")
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(TORCH_STANDIN)
        entries.append(("torch/__init__.py", p))
    whl = os.path.join(work, "wheels", f"{case}-1.0-{TAG}.whl")
    os.makedirs(os.path.dirname(whl), exist_ok=True)
    write_wheel(whl, entries)
    return whl


def claim(report, case):
    """What wheelcheck says of `import CASE`: ("fails" | "condition" | "loads", the finding's words)."""
    init = f"{case}/__init__.py"
    worst = ("loads", "")
    for f in report.get("findings", []):
        if f.get("kind") != "python-load" or f.get("severity") not in ("error", "condition"):
            continue
        if f.get("member") != init and init not in f.get("loaded_by", []):
            continue
        if f["severity"] == "error":
            return "fails", f.get("explanation", "")
        worst = ("condition", f.get("explanation", ""))
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--no-fetch", action="store_true")
    ap.add_argument("--keep", metavar="DIR")
    ap.add_argument("--only", action="append", metavar="CASE")
    args = ap.parse_args()
    t0 = time.time()
    stop = rw.preflight(args, "python_loads", "Python-side loads against CPython need root (chroot into the tier's root)")
    if stop is not None:
        return stop
    if shutil.which("gcc") is None:
        print("skipped: gcc is not installed")
        return 77
    if not args.no_fetch:
        stop = rw.fetch_suites("python_loads", [SUITE])
        if stop is not None:
            return stop
    work = args.keep or tempfile.mkdtemp(prefix="wheelcheck-python-loads-")
    os.makedirs(work, exist_ok=True)
    rw.Workspace.use_overlay = rw.overlay_works(work)
    disagreements, errors, rows = [], [], []
    try:
        suite = rw.open_suite(SUITE)
        if suite is None:
            return 77
        base, meta = rw.base_root(suite)
        ws = rw.Workspace(base, os.path.join(work, "root"))
        cache = os.path.join(work, "cache")
        py = meta["python"]
        for case, (files, expected) in CASES.items():
            if args.only and case not in args.only:
                continue
            try:
                whl = make_case_wheel(work, case, files)
                report = rw.wheelcheck_json(args.wheelcheck, whl, base, cache)
                site = (report.get("python") or {}).get("site") or f"/usr/local/lib/python{suite.pyver}/dist-packages"
                rw.install_wheel(whl, ws.root, site)
                said, words = claim(report, case)
                p = rw.in_root(ws.root, [py, "-c", f"import {case}"],
                               {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"})
                real = "loads" if p.returncode == 0 else "fails"
                err = (p.stderr.strip().splitlines() or [""])[-1]
            except rw.HarnessError as e:
                errors.append(f"{case}: {e}")
                continue
            ok = (said == real) if said != "condition" else (" if " in words or "line " in words)
            if said != expected:
                ok = False
            rows.append((case, expected, said, real, err))
            print(f"  {case:22} expected {expected:9} wheelcheck {said:9} CPython {real:6} "
                  f"{'agree' if ok else 'DISAGREE'}{'  (' + err[:110] + ')' if real == 'fails' else ''}", flush=True)
            if not ok:
                disagreements.append(f"{case}: expected {expected}, wheelcheck says {said} ({words[:300]}), CPython "
                                     f"{real} ({err[:300]})")
        ws.close(bool(args.keep))
    finally:
        rw._unmount_all()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    for d in disagreements:
        print("DISAGREE " + d)
    for e in errors:
        print("ERROR " + e)
    print(f"\npython_loads: {len(rows)} cases; {sum(1 for r in rows if r[3] == 'fails')} imports CPython refuses; "
          f"{len(disagreements)} disagreements; {len(errors)} harness errors; {time.time() - t0:.0f} s")
    if errors:
        return 2
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())

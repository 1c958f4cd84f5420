#!/usr/bin/env python3
"""Generates the package index of bench/scale.sh (issue 64): N projects x 10 versions of small native wheels
(default 6,400 x 10 = 64,000), every one with its own sha256, in tests/net/server.py's layout
(OUT/root/scale/<project>/<file>). Cached: a tree whose OUT/STAMP matches this version and these parameters is
kept as it is (reruns take a second); any other is removed and rewritten.

    bench/scale_index.py OUT [--projects N] [--jobs J]   (OUT: e.g. bench/out/scale-index; J default 2)

Every wheel (~8 KB) holds:
  scale_NNNNN/_native.cpython-312-x86_64-linux-gnu.so   a small extension: one C file compiled ONCE with gcc
        (-shared -fPIC -Os -lm, stripped; 36 exported functions calling libc and libm, PyInit__native, and a
        const blob of random bytes that pads the library to ~13 KB); libc.so.6 and libm.so.6 NEEDED, every
        symbol version GLIBC_2.17 or older (checked). Deflated like the other members, as wheel builders do: the
        wheel is ~8 KB (the library's code compresses to half)
  the package's __init__.py                            "from . import _native"
  scale_NNNNN-1.J.0.dist-info/{METADATA,WHEEL,RECORD}   METADATA's Name and Version rewritten per wheel
                                                         (sample_index.py's rewrite_metadata), a fresh RECORD
Names: project scale-NNNNN (NNNNN = 00001..N), distribution scale_NNNNN, versions 1.J.0 (J = 1..10). Tag
cp312-cp312-manylinux_2_17_x86_64: the db image cuda13.0 (Ubuntu 24.04, glibc 2.39, x86_64, CPython 3.12)
targets them and finds them compatible. No two wheels share a sha256 (checked; the generator fails otherwise).
Also writes OUT/projects-K.txt (the first K project names, one a line) for K in 100, 400, 1600, 6400 (and N),
up to N, and OUT/composition.json; prints the composition.
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
from sample_index import rewrite_metadata, zip_with_record  # noqa: E402

VERSIONS = 10
TAG = "cp312-cp312-manylinux_2_17_x86_64"
IMAGE = "cuda13.0"
INDEX = "scale"
MODULE = "_native.cpython-312-x86_64-linux-gnu.so"
LIST_SIZES = (100, 400, 1600, 6400)
FUNCTIONS = 36
BLOB_BYTES = 2500  # with the code, ~13 KB of library (checked: 12-14 KB)
CFLAGS = ["-shared", "-fPIC", "-Os", "-fno-builtin", "-fno-stack-protector", "-U_FORTIFY_SOURCE",
          "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-Wl,--no-as-needed", "-Wl,-z,noseparate-code",
          "-Wl,-z,norelro", "-Wl,--build-id=none", "-Wl,--hash-style=gnu"]
STAMP_BASE = f"scale-index v1: 10 versions, {TAG}, {FUNCTIONS} functions, blob {BLOB_BYTES}"

# Functions of libm and libc whose symbol versions are GLIBC_2.2.5 (x86_64's first) or GLIBC_2.14 (memcpy): not
# exp/log/pow (GLIBC_2.29), hypot (GLIBC_2.35) nor the float ones that glibc 2.27 re-versioned, so that
# manylinux_2_17 holds.
MATH = ["sin", "cos", "tan", "atan", "sinh", "cosh", "tanh", "asin", "acos", "cbrt", "expm1", "log1p", "sqrt",
        "erf", "erfc", "lgamma_r"]
MATH2 = ["atan2", "fdim", "fmod", "copysign", "nextafter", "remainder", "fmax", "fmin"]


def c_source():
    """The extension's C text: FUNCTIONS exported functions over libm and libc, PyInit__native, the blob."""
    rng = random.Random(64)
    blob = bytes(rng.getrandbits(8) for _ in range(BLOB_BYTES))
    out = ["/* bench/scale_index.py: the extension of every scale wheel (generated). */",
           "#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>", "",
           f"const unsigned char wc_scale_blob[{BLOB_BYTES}] = {{"]
    for i in range(0, len(blob), 24):
        out.append("  " + ",".join(str(b) for b in blob[i:i + 24]) + ",")
    out += ["};", "",
            "static int cmp_double(const void *a, const void *b) {",
            "  double x = *(const double *)a, y = *(const double *)b;",
            "  return (x > y) - (x < y);",
            "}", ""]
    for i in range(FUNCTIONS):
        kind = i % 5
        if kind == 0:
            f = MATH[i % len(MATH)]
            call = f"{f}(x, &sign)" if f == "lgamma_r" else f"{f}(x)"
            decl = "  int sign = 0;\n" if f == "lgamma_r" else ""
            byte = f"wc_scale_blob[{i * 97 % BLOB_BYTES}]"
            out.append(f"double wc_scale_f{i:02d}(double x) {{\n{decl}  return {call} + {byte};\n}}")
        elif kind == 1:
            f = MATH2[i % len(MATH2)]
            out.append(f"double wc_scale_f{i:02d}(double x, double y) {{\n  return {f}(x, y) * {i + 1}.0;\n}}")
        elif kind == 2:
            out.append(f"int wc_scale_f{i:02d}(char *buf, size_t n, double x) {{\n"
                       f"  int k = snprintf(buf, n, \"f{i:02d} %g %s\", x, getenv(\"WC_SCALE\") ? \"y\" : \"n\");\n"
                       f"  return k + (int)strlen(buf) + (strchr(buf, ' ') != NULL);\n}}")
        elif kind == 3:
            out.append(f"double wc_scale_f{i:02d}(double *v, size_t n) {{\n"
                       f"  double *c = malloc(n * sizeof *c);\n  if (!c) return 0;\n"
                       f"  memcpy(c, v, n * sizeof *c);\n  qsort(c, n, sizeof *c, cmp_double);\n"
                       f"  double m = n ? c[n / 2] : 0;\n  free(c);\n  return m + {i};\n}}")
        else:
            out.append(f"long wc_scale_f{i:02d}(const char *s) {{\n"
                       f"  char tmp[64];\n  memset(tmp, 0, sizeof tmp);\n  strncpy(tmp, s, sizeof tmp - 1);\n"
                       f"  return strtol(tmp, NULL, 10) + strcmp(tmp, \"f{i:02d}\") + memcmp(tmp, \"x\", 1);\n}}")
    out += ["", "/* CPython's entry point by name only (a real module would return PyModule_Create's module). */",
            "void *PyInit__native(void) {", "  return NULL;", "}", ""]
    return "\n".join(out)


def build_library(tmp):
    """Compiles the extension once; returns its bytes. Fails when gcc is absent or a symbol needs glibc > 2.17."""
    src = os.path.join(tmp, "native.c")
    lib = os.path.join(tmp, "native.so")
    with open(src, "w") as f:
        f.write(c_source())
    r = subprocess.run(["gcc", *CFLAGS, "-o", lib, src, "-lm", "-lc"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"scale_index.py: gcc failed: {r.stderr.strip()}")
    subprocess.run(["strip", "--strip-unneeded", lib], check=True)
    dyn = subprocess.run(["readelf", "-dW", lib], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dyn)
    if not {"libc.so.6", "libm.so.6"} <= set(needed):
        sys.exit(f"scale_index.py: the library needs {needed}, not libc.so.6 and libm.so.6")
    syms = subprocess.run(["readelf", "--dyn-syms", "-W", lib], capture_output=True, text=True, check=True).stdout
    versions = {tuple(int(x) for x in v.split(".")) for v in re.findall(r"@GLIBC_([0-9.]+)", syms)}
    if max(versions) > (2, 17):
        sys.exit(f"scale_index.py: the library needs GLIBC_{'.'.join(map(str, max(versions)))} (> 2.17)")
    exported = len(re.findall(r"FUNC +GLOBAL +DEFAULT +\d+ wc_scale_f", syms))
    with open(lib, "rb") as f:
        data = f.read()
    if not 12000 <= len(data) <= 14500:
        sys.exit(f"scale_index.py: the library is {len(data)} bytes, not 12-14 KB: adjust BLOB_BYTES")
    return data, sorted(set(needed)), exported, ".".join(map(str, max(versions)))


def project_name(n):
    return f"scale-{n:05d}"


def make(job):
    """The 10 wheels of project n: (n, [(size, sha256)])."""
    n, root, lib = job
    dist = f"scale_{n:05d}"
    folder = os.path.join(root, project_name(n))
    os.makedirs(folder, exist_ok=True)
    init = (f'"""{project_name(n)}: a generated package of bench/scale_index.py."""\n'
            f"from . import _native  # noqa: F401\n").encode()
    metadata = (f"Metadata-Version: 2.1\nName: placeholder\nVersion: 0\n"
                f"Summary: A generated native package of wheelcheck's scale benchmark\n"
                f"Requires-Python: >=3.12\n").encode()
    wheel = (f"Wheel-Version: 1.0\nGenerator: bench/scale_index.py\nRoot-Is-Purelib: false\nTag: {TAG}\n").encode()
    made = []
    for j in range(1, VERSIONS + 1):
        version = f"1.{j}.0"
        info = f"{dist}-{version}.dist-info/"
        members = [(f"{dist}/{MODULE}", lib, 0o755 << 16, zipfile.ZIP_DEFLATED),
                   (f"{dist}/__init__.py", init, 0o644 << 16, zipfile.ZIP_DEFLATED),
                   (info + "METADATA", rewrite_metadata(metadata, project_name(n), version), 0o644 << 16,
                    zipfile.ZIP_DEFLATED),
                   (info + "WHEEL", wheel, 0o644 << 16, zipfile.ZIP_DEFLATED)]
        data = zip_with_record(members, info)
        path = os.path.join(folder, f"{dist}-{version}-{TAG}.whl")
        with open(path + ".part", "wb") as f:
            f.write(data)
        os.replace(path + ".part", path)
        made.append((len(data), hashlib.sha256(data).hexdigest()))
    return n, made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--projects", type=int, default=6400, help="projects (x 10 versions); default 6400")
    ap.add_argument("--jobs", type=int, default=2, help="processes; default 2")
    a = ap.parse_args()
    if a.projects < 1 or a.projects > 99999:
        sys.exit("scale_index.py: --projects must be 1..99999")
    out = os.path.abspath(a.out)
    stamp = f"{STAMP_BASE}, {a.projects} projects"
    stamp_path, summary_path = os.path.join(out, "STAMP"), os.path.join(out, "composition.json")
    if os.path.isfile(stamp_path) and open(stamp_path).read().strip() == stamp and os.path.isfile(summary_path):
        show(json.load(open(summary_path)))
        return 0
    for tool in ("gcc", "strip", "readelf"):
        if shutil.which(tool) is None:
            sys.exit(f"scale_index.py: {tool} absent")
    t0 = time.monotonic()
    shutil.rmtree(out, ignore_errors=True)
    root = os.path.join(out, "root", INDEX)
    os.makedirs(root)
    with tempfile.TemporaryDirectory() as tmp:
        lib, needed, exported, glibc = build_library(tmp)
    jobs = [(n, root, lib) for n in range(1, a.projects + 1)]
    with ProcessPoolExecutor(max(1, a.jobs)) as pool:
        made = dict(pool.map(make, jobs, chunksize=32))
    rows = [w for n in sorted(made) for w in made[n]]
    digests = [w[1] for w in rows]
    if len(set(digests)) != len(digests):
        sys.exit("scale_index.py: two wheels share a sha256")
    names = [project_name(n) for n in range(1, a.projects + 1)]
    lists = {}
    for k in sorted({k for k in LIST_SIZES if k <= a.projects} | {a.projects}):
        path = os.path.join(out, f"projects-{k}.txt")
        with open(path, "w") as f:
            f.write("\n".join(names[:k]) + "\n")
        lists[str(k)] = {"file": os.path.basename(path), "wheels": k * VERSIONS,
                         "bytes": sum(w[0] for n in range(1, k + 1) for w in made[n])}
    summary = {"stamp": stamp, "index": INDEX, "image": IMAGE, "tag": TAG, "projects": a.projects,
               "versions": VERSIONS, "wheels": len(rows), "bytes": sum(w[0] for w in rows),
               "min_bytes": min(w[0] for w in rows), "max_bytes": max(w[0] for w in rows),
               "members": 5, "library": {"name": MODULE, "bytes": len(lib), "needed": needed,
                                         "exported_functions": exported, "max_glibc": glibc},
               "lists": lists, "seconds": round(time.monotonic() - t0, 1), "jobs": a.jobs}
    with open(summary_path, "w") as f:
        json.dump(summary, f, indent=1)
    with open(stamp_path, "w") as f:
        f.write(stamp + "\n")
    show(summary)
    return 0


def show(summary):
    print(json.dumps(summary))


if __name__ == "__main__":
    sys.exit(main())

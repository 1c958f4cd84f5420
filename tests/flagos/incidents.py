#!/usr/bin/env python3
"""FlagOS's documented load failures, each rebuilt here with compiled code and checked against the FlagOS
image it happened on (../shared/reference/flagos-release.md section 5, I1..I15), and FlagTree#1234 (FT1234, the
load issue 62 describes: a Python-side ctypes.CDLL at import).

  incidents.py --wheelcheck BIN --db DIR --work DIR [--only I1,I5]

Each incident is a wheel built at test time (C and C++ compiled by gcc, the aarch64 ones by
aarch64-linux-gnu-gcc; vendor, glibc and libstdc++ stand-ins are link-time stubs whose version nodes are the
real ones), checked with `wheelcheck WHEEL --image IMAGE --json` as a user runs it, and asserted on: the
verdict, the route and gates, and the explanation naming what FlagOS's issue names (the symbol, the library,
the version) and the fix FlagOS took (the rule sets' "known" entries, db/rules). Where the incident happened on
an image that is not one of FlagOS's own (the Iluvatar vendor image on Ubuntu 22.04, openEuler 22.03, a CI
host), the image is composed here from the FlagOS image and a base layer of the db, and says so.

Exit 0 when every assertion holds, 1 otherwise (each failure named), 77 when a compiler it needs is absent.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
import make_wheel  # noqa: E402

sys.path.insert(0, HERE)
import native  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from wheelcheck_test import Checks  # noqa: E402


A = None
CHECKS = Checks(context=lambda: CURRENT)
check, FAILURES = CHECKS.check, CHECKS.failures
CURRENT = ""


# --- building -----------------------------------------------------------------------------------------

def build(out, source, arch="x86_64", args=(), cxx=False, shared=True, soname=None):
    """Compiles `source` into `out` (a shared library, or a program with shared=False), cached by content."""
    return native.build(out, source, arch, A.work, args, cxx, shared, soname)


def stub(arch, soname, nodes, plain=(), group=""):
    """A link-time stand-in for a system or vendor library: `nodes` is [(VERSION, [symbols])] in order (each
    node inherits the one before, as glibc's and libstdc++'s do); `plain` are unversioned symbols. Stand-ins
    of one soname with different symbols go to different `group` folders."""
    d = os.path.join(A.work, "stubs", arch, group)
    syms = [s for _, ss in nodes for s in ss] + list(plain)
    source = "".join(f"void {s}(void) {{}}\n" for s in syms)
    args = ["-nostdlib"]
    if nodes:
        script = ""
        prev = None
        for i, (ver, ss) in enumerate(nodes):
            body = "global: " + " ".join(s + ";" for s in ss) if ss else ""
            if i == 0:
                body += " local: *;"
            script += f"{ver} {{ {body} }}" + (f" {prev};\n" if prev else ";\n")
            prev = ver
        vs = os.path.join(d, soname + ".map")
        os.makedirs(d, exist_ok=True)
        with open(vs, "w") as f:
            f.write(script)
        args.append("-Wl,--version-script=" + vs)
    return build(os.path.join(d, soname), source, arch, args, soname=soname)


def glibc(arch, upto):
    """A libc.so.6 stand-in whose version nodes reach `upto` (2.38, 2.39): malloc at the arch's base version,
    dlopen at GLIBC_2.34 (glibc 2.34 moved it into libc), __isoc23_strtol at 2.38 (the C2x redirection of
    strtol), pidfd_getpid at 2.39."""
    base = "GLIBC_2.2.5" if arch == "x86_64" else "GLIBC_2.17"
    nodes = [(base, ["malloc", "free", "strtol"]), ("GLIBC_2.34", ["dlopen"])]
    if upto >= (2, 38):
        nodes.append(("GLIBC_2.38", ["__isoc23_strtol"]))
    if upto >= (2, 39):
        nodes.append(("GLIBC_2.39", ["pidfd_getpid"]))
    return stub(arch, "libc.so.6", nodes)


CV_WAIT = "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE"  # GLIBCXX_3.4.30 (GCC 12)
IOS_INIT = "_ZSt21ios_base_library_initv"  # GLIBCXX_3.4.32 (GCC 13)


def libstdcxx(arch):
    return stub(arch, "libstdc++.so.6", [("GLIBCXX_3.4", ["_ZdlPv"]), ("GLIBCXX_3.4.30", [CV_WAIT]),
                                         ("GLIBCXX_3.4.32", [IOS_INIT])])


def member(name, arch, calls, needs, defines=("triton_init",), extra=()):
    """A shared library calling `calls` (mangled names) from the stand-ins `needs` (paths)."""
    source = "".join(f"extern void {c}(void);\n" for c in calls)
    source += "".join(f"void {d}(void) {{ " + " ".join(f"{c}();" for c in calls) + " }\n" for d in defines[:1])
    source += "".join(f"void {d}(void) {{}}\n" for d in defines[1:])
    # A stand-in named as a CPython extension module exports the PyInit_ its name asks for, as a real one does:
    # CPython refuses one without it (module-init).
    base = os.path.basename(name)
    if (".cpython-" in base or base.endswith(".abi3.so")) and "PyInit_" + base.split(".")[0] not in defines:
        source += f"void PyInit_{base.split('.')[0]}(void) {{}}\n"
    args = ["-nostdlib", "-Wl,--no-as-needed"] + [f"-L{os.path.dirname(n)}" for n in needs]
    args += [f"-l:{os.path.basename(n)}" for n in needs] + list(extra)
    return build(os.path.join(A.work, "obj", name), source, arch, args, soname=os.path.basename(name))


def wheel(filename, files, requires_dist=()):
    out = os.path.join(A.work, "wheels", filename)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    pkg = {}
    for arc, src in files:
        pkg[arc] = src
    make_wheel.write_wheel(out, list(pkg.items()), requires_dist=requires_dist)
    return out


def py(text="", name="init.py"):
    p = os.path.join(A.work, "obj", "py", hashlib.sha256(text.encode()).hexdigest()[:12] + "-" + name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)
    return p


def image(name, layers, summary):
    """A description composed from db names: a FlagOS image on the base the incident happened on."""
    p = os.path.join(A.work, "images", name + ".json")
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        json.dump({"schema": "wheelcheck-image/1", "name": name, "summary": summary, "kind": "image",
                   "origin": "declared", "sources": ["tests/flagos/incidents.py: " + summary],
                   "layers": layers}, f, indent=2)
    return p


def variant_db(name, edit):
    """A db beside the real one where the images `edit` returns differ (an image as it was before FlagOS's
    fix): every other file is a link to the real db's."""
    root = os.path.join(A.work, "db-" + name)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "images"))
    for entry in os.listdir(A.db):
        if entry != "images":
            os.symlink(os.path.join(os.path.abspath(A.db), entry), os.path.join(root, entry))
    for f in os.listdir(os.path.join(A.db, "images")):
        os.symlink(os.path.join(os.path.abspath(A.db), "images", f), os.path.join(root, "images", f))
    for f, content in edit().items():
        os.unlink(os.path.join(root, "images", f))
        with open(os.path.join(root, "images", f), "w") as out:
            json.dump(content, out, indent=2)
    return root


def db_image(name):
    with open(os.path.join(A.db, "images", name + ".json")) as f:
        return json.load(f)


def run_check(whl, img, with_=(), db=None, fmt="json", extra=()):
    cmd = [A.wheelcheck, whl, "--image", img, "--db", db or A.db]
    for w in with_:
        cmd += ["--with", w]
    if fmt == "json":
        cmd.append("--json")
    elif fmt:
        cmd += ["--format", fmt]
    cmd += list(extra)
    env = dict(os.environ, WHEELCHECK_OFFLINE="1", NO_COLOR="1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if fmt != "json":
        return p.returncode, p.stdout, p.stderr
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except json.JSONDecodeError:
        return p.returncode, None, p.stdout + p.stderr


def findings(report, kind=None, severity=None):
    out = []
    for f in (report or {}).get("findings", []):
        if kind and f["kind"] != kind:
            continue
        if severity and f["severity"] != severity:
            continue
        out.append(f)
    return out


def text_of(f):
    return " ".join(str(f.get(k, "")) for k in ("explanation", "fix", "required_version", "library", "symbol",
                                                    "demangled")) + " " + " ".join(f.get("symbols", []))


def expect(report, verdict, where):
    got = (report or {}).get("verdict")
    return check(got == verdict, f"{where}: verdict {verdict}", f"    got {got}: {json.dumps(report)[:3000]}")


def expect_finding(report, kind, needles, where, severity=None):
    fs = findings(report, kind, severity)
    hit = [f for f in fs if all(n in text_of(f) for n in needles)]
    return check(bool(hit), f"{where}: a {kind} finding naming {', '.join(needles)}",
                 "    findings: " + json.dumps([{k: f.get(k) for k in ("kind", "severity", "explanation", "fix",
                                                                        "symbols", "required_version")}
                                                for f in findings(report)], indent=1)[:4000])


def route(report, name):
    for r in (report or {}).get("routes", []):
        if r["name"] == name:
            return r
    return None


# --- the stand-ins every incident shares ----------------------------------------------------------------

def torch_wheel(version, arch="x86_64", py_tag="cp312", c10=(), torch_cpu=()):
    """A pip-shaped torch wheel whose libraries define the given (mangled) symbols: the torch an image's
    stack holds, given with --with so its export tables are known."""
    libdir = f"torch-{version}-{arch}"
    c10_so = member(f"{libdir}/libc10.so", arch, [], [], defines=("c10_init",) + tuple(c10))
    cpu = member(f"{libdir}/libtorch_cpu.so", arch, [], [c10_so], defines=("torch_cpu_init",) + tuple(torch_cpu))
    tor = member(f"{libdir}/libtorch.so", arch, [], [cpu], defines=("torch_init",))
    pyl = member(f"{libdir}/libtorch_python.so", arch, [], [tor, cpu, c10_so], defines=("torch_python_init",))
    plat = "linux_x86_64" if arch == "x86_64" else "linux_aarch64"
    return wheel(f"torch-{version}-{py_tag}-{py_tag}-{plat}.whl",
                 [("torch/__init__.py", py()), ("torch/lib/libc10.so", c10_so), ("torch/lib/libtorch_cpu.so", cpu),
                  ("torch/lib/libtorch.so", tor), ("torch/lib/libtorch_python.so", pyl)])


def torch_needs(arch, version):
    """The torch libraries an extension links against (sonames), built as stand-ins to link with."""
    libdir = f"torch-{version}-{arch}"
    return [os.path.join(A.work, "obj", libdir, n) for n in ("libc10.so", "libtorch.so", "libtorch_cpu.so",
                                                               "libtorch_python.so")]


# --- the incidents --------------------------------------------------------------------------------------

def flagtree(version, tag, arch, calls, libs):
    so = member(f"flagtree-{version}-{arch}/libtriton.so", arch, calls, libs)
    return wheel(f"flagtree-{version}-{tag}.whl", [("triton/__init__.py", py()), ("triton/_C/libtriton.so", so)])


def i1():
    """FlagTree #1225: libtriton.so needs GLIBC_2.38 for __isoc23_strtol alone, on Iluvatar's 22.04 image."""
    w = flagtree("0.7.0rc2+iluvatar3.6", "cp312-cp312-linux_x86_64", "x86_64", ["malloc", "__isoc23_strtol"],
                 [glibc("x86_64", (2, 38))])
    vendor = image("iluvatar-vendor-ubuntu22.04", ["flagos-runtime-iluvatar-corex4.5.0", "ubuntu22.04"],
                   "the Iluvatar vendor image FlagTree #1225 met: Ubuntu 22.04.5 (glibc 2.35), Python 3.12, "
                   "CoreX 4.5.0 (FlagOS's CoreX 4.5.0 runtime on Ubuntu 22.04)")
    rc, r, err = run_check(w, vendor)
    expect(r, "incompatible", "22.04 vendor image")
    check(rc == 1, "exit code 1 (incompatible)", err)
    expect_finding(r, "missing-version", ["GLIBC_2.38", "__isoc23_strtol", "2.35", "FlagTree #1225", "Ubuntu 22.04"],
                   "22.04 vendor image")
    f = findings(r, "missing-version")
    check(bool(f) and f[0].get("symbols") == ["__isoc23_strtol"], "the floor is set by __isoc23_strtol alone",
          json.dumps(f)[:2000])
    core = route(r, "flagtree-core")
    check(core is not None and not core["available"], "route flagtree-core is off", json.dumps(r and r["routes"]))
    rc, r, err = run_check(w, "flagos-runtime-iluvatar-corex4.5.0")
    check(r is not None and not findings(r, "missing-version"),
          "FlagOS's own CoreX 4.5.0 runtime (Ubuntu 24.04, glibc 2.39) has GLIBC_2.38", err)


def i2():
    """packaging/flagtree README: a MetaX FlagTree built on 24.04 on a 22.04 image: GLIBC_2.38, GLIBCXX_3.4.32."""
    w = flagtree("0.6.1+metax3.6", "cp312-cp312-linux_x86_64", "x86_64", ["malloc", "__isoc23_strtol", IOS_INIT],
                 [glibc("x86_64", (2, 38)), libstdcxx("x86_64")])
    img = image("metax-ubuntu22.04", ["flagos-runtime-metax-maca3.7.2.1", "ubuntu22.04"],
                "FlagOS's MACA 3.7.2.1 runtime on an Ubuntu 22.04 base (glibc 2.35, GLIBCXX_3.4.30)")
    rc, r, err = run_check(w, img)
    expect(r, "incompatible", "MetaX on 22.04")
    expect_finding(r, "missing-version", ["GLIBC_2.38", "__isoc23_strtol"], "MetaX on 22.04")
    expect_finding(r, "missing-version", ["GLIBCXX_3.4.32", "FlagTree #798"], "MetaX on 22.04")


def i3():
    """FlagGems #4495: flagtree 0.4.0+sunrise3.4 needs GLIBC_2.39, absent on the CI host; the fix: Triton."""
    w = flagtree("0.4.0+sunrise3.4", "cp310-cp310-linux_x86_64", "x86_64", ["malloc", "pidfd_getpid"],
                 [glibc("x86_64", (2, 39))])
    # FlagGems' CI installs FlagTree itself: Sunrise's SDK and Python 3.10, without the runtime image's FlagTree.
    sdk = image("sunrise-sdk-python3.10", ["flagos-base-sunrise-tangrt1.2.0", "flagos-venv-python3.10"],
                "FlagOS's Sunrise base (Ubuntu 24.04, glibc 2.39) with the Python 3.10 venv and no FlagTree installed")
    rc, r, err = run_check(w, sdk)
    check(r is not None and r["verdict"] != "not-targeted" and not findings(r, "missing-version"),
          "on FlagOS's Sunrise base (Ubuntu 24.04, glibc 2.39) GLIBC_2.39 is there", err + json.dumps(r)[:1500])
    host = image("flaggems-ci-host-ubuntu22.04", ["flagos-base-sunrise-tangrt1.2.0", "flagos-venv-python3.10",
                                                  "ubuntu22.04"],
                 "FlagGems' CI host of #4495, glibc older than 2.39 (its release is not published: Ubuntu 22.04 taken)")
    rc, r, err = run_check(w, host)
    expect(r, "incompatible", "the CI host")
    expect_finding(r, "missing-version", ["GLIBC_2.39", "pidfd_getpid", "FlagGems #4495", "compiler triton"],
                   "the CI host")


def i4():
    """FlagTree #376: flagtree 0.4.1+ascend3.2 on openEuler 22.03 (aarch64): GLIBCXX_3.4.30 not found."""
    w = flagtree("0.4.1+ascend3.2", "cp311-cp311-linux_aarch64", "aarch64", ["malloc", CV_WAIT],
                 [glibc("aarch64", (2, 34)), libstdcxx("aarch64")])
    img = image("ascend-openeuler22.03", ["flagos-runtime-ascend-cann8.5.0", "openeuler22.03-aarch64"],
                "FlagOS's CANN 8.5.0 runtime on openEuler 22.03 LTS (glibc 2.34, GCC 10.3's GLIBCXX_3.4.28)")
    rc, r, err = run_check(w, img)
    expect(r, "incompatible", "openEuler 22.03")
    expect_finding(r, "missing-version", ["GLIBCXX_3.4.30", "3.4.28", "FlagTree #376"], "openEuler 22.03")


def i5():
    """FlagTree #798 / #1066: a FlagTree built on 24.04 needs libc6 >= 2.38 and libstdc++6 >= 13.1: on a 22.04
    FlagOS image (Moore Threads MUSA 5.2.0)."""
    w = flagtree("0.7.0+mthreads3.6", "cp310-cp310-linux_x86_64", "x86_64", ["malloc", "__isoc23_strtol", IOS_INIT],
                 [glibc("x86_64", (2, 38)), libstdcxx("x86_64")])
    rc, r, err = run_check(w, "flagos-runtime-mthreads-musa5.2.0")
    expect(r, "incompatible", "MUSA 5.2.0 runtime (22.04)")
    expect_finding(r, "missing-version", ["GLIBC_2.38"], "MUSA 5.2.0 runtime")
    expect_finding(r, "missing-version", ["GLIBCXX_3.4.32", "Ubuntu 22.04", "FlagTree #798"], "MUSA 5.2.0 runtime")


def i6():
    """FlagGems #3666: FlagTree on FlagGems' Iluvatar CI (Ubuntu 20.04): libstdc++ too old; CI uses Triton."""
    w = flagtree("0.6.1+iluvatar3.6", "cp312-cp312-linux_x86_64", "x86_64", ["malloc", "dlopen", CV_WAIT],
                 [glibc("x86_64", (2, 34)), libstdcxx("x86_64")])
    img = image("iluvatar-ci-ubuntu20.04", ["flagos-runtime-iluvatar-corex4.4.0", "ubuntu20.04"],
                "FlagGems' Iluvatar CI of #3666: CoreX 4.4.0 on Ubuntu 20.04 (glibc 2.31, GLIBCXX_3.4.28)")
    rc, r, err = run_check(w, img)
    expect(r, "incompatible", "Ubuntu 20.04")
    expect_finding(r, "missing-version", ["GLIBCXX_3.4.30", "3.4.28", "FlagGems #3666"], "Ubuntu 20.04")
    expect_finding(r, "missing-version", ["GLIBC_2.34", "2.31"], "Ubuntu 20.04")


def i7():
    """build-infra, Jul 2026: Cambricon 4.4.3's cnperf needs libncurses5/libtinfo5, gone in Ubuntu 24.04."""
    ncurses = stub("x86_64", "libncurses.so.5", [], plain=["initscr"])
    tinfo = stub("x86_64", "libtinfo.so.5", [], plain=["setupterm"])
    prog = os.path.join(A.work, "obj", "cnperf", "cnperf")
    build(prog, "extern void initscr(void); extern void setupterm(void);\n"
                "int main(void) { initscr(); setupterm(); return 0; }\n", "x86_64",
          [f"-L{os.path.dirname(ncurses)}", "-l:libncurses.so.5", "-l:libtinfo.so.5", "-Wl,--no-as-needed"],
          shared=False)
    w = wheel("cnperf-4.4.3-py3-none-linux_x86_64.whl", [("cnperf/__init__.py", py()), ("cnperf/bin/cnperf", prog)])
    noble = variant_db("cambricon-noble", lambda: {
        "flagos-base-cambricon-neuware4.4.3.json": dict(db_image("flagos-base-cambricon-neuware4.4.3"),
                                                        layers=["ubuntu24.04"])})
    rc, r, err = run_check(w, "flagos-base-cambricon-neuware4.4.3", db=noble)
    expect(r, "incompatible", "the Neuware 4.4.3 base on 24.04 (July 2026)")
    expect_finding(r, "missing-library", ["libtinfo.so.5", "Ubuntu 22.04"], "24.04 base")
    expect_finding(r, "missing-library", ["libncurses.so.5"], "24.04 base")


def i8():
    """build-infra #184: torch_txda needs libfmt.so.8; Ubuntu 24.04 has .so.9; FlagOS adds 22.04's libfmt8."""
    fmt8 = stub("x86_64", "libfmt.so.8", [("FMT_8", [])], plain=["_ZN3fmt2v86detail12vformat_toEv"])
    ext = member("torch_txda/_C.cpython-310-x86_64-linux-gnu.so", "x86_64", ["_ZN3fmt2v86detail12vformat_toEv"],
                 [fmt8], defines=("PyInit__C",))
    w = wheel("torch_txda-0.1.0+20260728.f6fbdb71-cp310-cp310-linux_x86_64.whl",
              [("torch_txda/__init__.py", py()), ("torch_txda/_C.cpython-310-x86_64-linux-gnu.so", ext)])
    rc, r, err = run_check(w, "flagos-runtime-tsingmicro-tsm260610")
    check(r is not None and not findings(r, "missing-library"),
          "FlagOS's TsingMicro runtime has libfmt.so.8 (the 22.04 libfmt8 .deb)", err + json.dumps(r)[:2000])

    def before():
        base = db_image("flagos-base-tsingmicro-tsm260610")
        base["libraries"] = [l for l in base.get("libraries", []) if l.get("soname") != "libfmt.so.8"]
        return {"flagos-base-tsingmicro-tsm260610.json": base}
    rc, r, err = run_check(w, "flagos-runtime-tsingmicro-tsm260610", db=variant_db("tsm-before-184", before))
    expect(r, "incompatible", "TsingMicro before build-infra #184")
    expect_finding(r, "missing-library", ["libfmt.so.8", "libfmt.so.9", "build-infra #184"], "before #184")


def i9():
    """E2E-REPORT 2.4: torch 2.9.0+das.opt1.dtk2604 was built against NumPy 1.x's C API; with numpy 2.2.6
    "Numpy is not available". FlagOS pins numpy==1.26.4."""
    def torch_built_against(numpy_module, tag):
        lib = os.path.join(A.work, "obj", f"torch-das-{tag}", "libtorch_python.so")
        build(lib, f'const char* torch_numpy_module = "{numpy_module}";\n'
                   "const char* torch_numpy(void) { return torch_numpy_module; }\n", "x86_64", ["-nostdlib"],
              soname="libtorch_python.so")
        return wheel(f"torch-2.9.0+das.opt1.dtk2604.{tag}-cp310-cp310-linux_x86_64.whl",
                     [("torch/__init__.py", py()), ("torch/lib/libtorch_python.so", lib)])
    w = torch_built_against("numpy.core._multiarray_umath", "np1")
    rc, r, err = run_check(w, "flagos-runtime-hygon-dtk26.04")
    check(r is not None and not findings(r, "numpy-abi"), "the DTK 26.04 runtime's numpy 1.26.4 serves it",
          err + json.dumps(r)[:1500])

    def before():
        img = db_image("flagos-runtime-hygon-dtk26.04")
        for d in img.get("distributions", []):
            if d["name"] == "numpy":
                d["version"] = "2.2.6"
        return {"flagos-runtime-hygon-dtk26.04.json": img}
    numpy2 = variant_db("hygon-numpy2", before)
    rc, r, err = run_check(w, "flagos-runtime-hygon-dtk26.04", db=numpy2)
    expect(r, "incompatible", "the DTK 26.04 runtime with numpy 2.2.6")
    expect_finding(r, "numpy-abi", ["torch/lib/libtorch_python.so", "2.2.6", "Numpy is not available",
                                    "numpy==1.26.4"], "numpy 2.2.6")
    w2 = torch_built_against("numpy._core._multiarray_umath", "np2")
    rc, r, err = run_check(w2, "flagos-runtime-hygon-dtk26.04", db=numpy2)
    check(r is not None and not findings(r, "numpy-abi"), "a build against NumPy 2's headers runs on numpy 2.2.6",
          err + json.dumps(r)[:1500])


def i10():
    """E2E-REPORT 2.6: flash-attn built for torch 2.9.1 (MessageLogger(const char*, int, int)) in the
    Enflame 1.9.10 runtime's torch 2.10 (MessageLogger(c10::SourceLocation, int, bool))."""
    new = "_ZN3c1013MessageLoggerC1ENS_14SourceLocationEib"
    old = "_ZN3c1013MessageLoggerC1EPKcii"
    t = torch_wheel("2.10.0+cpu", c10=[new])
    so = member("flash_attn/flash_attn_gcu.cpython-312-x86_64-linux-gnu.so", "x86_64", [old],
                [stub("x86_64", "libc10.so", [], plain=[old], group="torch-2.9.1")], defines=("PyInit_flash_attn_gcu",))
    w = wheel("flash_attn-2.7.2+torch.2.9.1.gcu-cp312-cp312-linux_x86_64.whl",
              [("flash_attn/__init__.py", py()), ("flash_attn/flash_attn_gcu.cpython-312-x86_64-linux-gnu.so", so)],
              requires_dist=["torch"])
    rc, r, err = run_check(w, "flagos-runtime-enflame-tops1.9.10", with_=[t])
    expect(r, "incompatible", "Enflame 1.9.10 runtime, torch 2.10")
    expect_finding(r, "missing-symbol", ["MessageLogger", "SourceLocation", "PR #310"], "torch 2.10")


def flagcx_wheel(label, tag, arch, vendor_libs, c_calls=(), flagcx_calls=(), flagcx_defines=("devApiBackend",),
                 torch_version=None, bitcode=False):
    libs = [stub(arch, s, [], plain=[s.split(".")[0] + "_init"]) for s in vendor_libs]
    defs = ("flagcxGetVersion",) + tuple(flagcx_defines)
    lib = member(f"flagcx-{label}/libflagcx.so", arch, list(flagcx_calls), libs, defines=defs)
    needs = [lib] + (torch_needs(arch, torch_version) if torch_version else [])
    pyver = tag.split("-")[0][2:]
    ext_name = f"_C.cpython-{pyver}-{arch}-linux-gnu.so"
    ext = member(f"flagcx-{label}/{ext_name}", arch, list(c_calls) + ["flagcxGetVersion"], needs,
                 defines=("PyInit__C",), extra=["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib"])
    files = [("flagcx/__init__.py", py()), (f"flagcx/{ext_name}", ext), ("flagcx/lib/libflagcx.so", lib)]
    if bitcode:
        bc = os.path.join(A.work, "obj", f"flagcx-{label}", "libflagcx_device.bc")
        with open(bc, "wb") as f:
            f.write(b"BC\xc0\xde" + hashlib.sha256(label.encode()).digest() * 8)
        files.append(("flagcx/lib/libflagcx_device.bc", bc))
    return wheel(f"flagcx-0.14.0+{label}-{tag}.whl", files)


def i11():
    """WHEEL-DESIGN.md: a torch 2.10 FlagCX wheel in an image with torch <= 2.8 (MetaX MACA 3.7.2.1's 2.8.0):
    undefined c10d::Work::blockCurrentStream()."""
    block = "_ZN4c10d4Work18blockCurrentStreamEv"
    torch_wheel("2.10.0+cpu", torch_cpu=[block])  # the torch it was built against (link time)
    w = flagcx_wheel("maca3.7.2.1", "cp312-cp312-linux_x86_64", "x86_64",
                     ["libmcruntime.so", "libmccompiler.so", "libmccl.so"], c_calls=[block], torch_version="2.10.0+cpu")
    old = torch_wheel("2.8.0+metax3.7.2.0")
    rc, r, err = run_check(w, "flagos-runtime-metax-maca3.7.2.1", with_=[old])
    expect(r, "incompatible", "MACA 3.7.2.1 runtime, torch 2.8")
    expect_finding(r, "missing-symbol", ["c10d::Work::blockCurrentStream", "WHEEL-DESIGN.md"], "torch 2.8")
    cx = route(r, "flagcx")
    check(cx is not None and not cx["available"] and "TORCH_DEVICE_BACKEND_AUTOLOAD" in json.dumps(cx.get("gates")),
          "route flagcx is off, with its gates", json.dumps(cx))
    # Without the torch wheel: the image's torch 2.8.0+metax is declared without export tables.
    rc, r, err = run_check(w, "flagos-runtime-metax-maca3.7.2.1")
    check(r is not None and r["verdict"] in ("unknown", "incompatible") and
          "blockCurrentStream" in json.dumps(r["findings"]), "the image's own torch 2.8: the symbol is named",
          json.dumps(r)[:2000] if r else err)
    check(r is not None and any("only bash processes" in n for n in r.get("notes", [])),
          "the MACA libraries are found through LD_LIBRARY_PATH that only bash has, and the answer says so",
          json.dumps(r and r.get("notes")))


def i12():
    """megatron 0.18.2 report: FlagTree's inductor fails to parse the FlagCX wheel's libflagcx_device.bc; FlagOS
    sets FLAGCX_BITCODE_PATH to FlagTree's own .bc in the CUDA 13.3 runtime 2.2.0."""
    w = flagcx_wheel("cuda13.3", "cp312-cp312-linux_x86_64", "x86_64", ["libcuda.so.1", "libcudart.so.13", "libnccl.so.2"],
                     bitcode=True)
    rc, r, err = run_check(w, "flagos-runtime-nvidia-cuda13.3")
    bc = route(r, "flagcx-device-bitcode")
    check(bc is not None and bc["available"], "2.2.0 runtime: the bitcode route is on (FLAGCX_BITCODE_PATH is set)",
          json.dumps(r and r.get("routes")) + err)
    check(r is not None and any("FLAGCX_BITCODE_PATH" in n and "only for bash" in n for n in r.get("notes", [])),
          "and the answer says the variable reaches bash processes only", json.dumps(r and r.get("notes")))

    def before():
        img = db_image("flagos-runtime-nvidia-cuda13.3")
        img.setdefault("bash_env", {}).setdefault("vars", {}).pop("FLAGCX_BITCODE_PATH", None)
        return {"flagos-runtime-nvidia-cuda13.3.json": img}
    rc, r, err = run_check(w, "flagos-runtime-nvidia-cuda13.3", db=variant_db("cuda13.3-before-bitcode-path", before))
    expect(r, "degraded", "the CUDA 13.3 runtime without FLAGCX_BITCODE_PATH")
    bc = route(r, "flagcx-device-bitcode")
    check(bc is not None and not bc["available"] and "FLAGCX_BITCODE_PATH" in json.dumps(bc.get("gates")),
          "its gate sets FLAGCX_BITCODE_PATH", json.dumps(bc))
    expect_finding(r, "environment", ["FLAGCX_BITCODE_PATH", "libflagcx_device.bc", "flagtree"], "before the fix")


def i13():
    """backends.yaml: libflagcx.so for Cambricon (and Iluvatar, Sunrise, TsingMicro) links but leaves
    devApiBackend undefined: only dlopen(RTLD_NOW) fails."""
    w = flagcx_wheel("neuware4.4.3", "cp310-cp310-linux_x86_64", "x86_64", ["libcnrt.so", "libcncl.so"],
                     flagcx_calls=["devApiBackend"], flagcx_defines=())
    rc, r, err = run_check(w, "flagos-runtime-cambricon-neuware4.4.3")
    expect(r, "incompatible", "Neuware 4.4.3 runtime")
    expect_finding(r, "missing-symbol", ["devApiBackend", "RTLD_NOW", "PLATFORM_EXTRA_SRCS"], "Neuware 4.4.3",
                   severity="error")
    fixed = flagcx_wheel("neuware4.4.3.fixed", "cp310-cp310-linux_x86_64", "x86_64", ["libcnrt.so", "libcncl.so"],
                         flagcx_calls=["devApiBackend"], flagcx_defines=("devApiBackend",))
    rc, r, err = run_check(fixed, "flagos-runtime-cambricon-neuware4.4.3")
    check(r is not None and not findings(r, "missing-symbol", "error"),
          "the fixed build (PLATFORM_EXTRA_SRCS) defines it", json.dumps(r)[:2000] if r else err)


def i14():
    """E2E-REPORT 2.1: vLLM 0.20.2's standard wheel: _C.abi3.so has an undefined c10 symbol: tolerated."""
    gone = "_ZN3c1019UndefinedTensorImpl10_singletonE"
    t = torch_wheel("2.11.0+cu130")
    so = member("vllm/_C.abi3.so", "x86_64", [gone], [stub("x86_64", "libc10.so", [], plain=[gone], group="vllm-build")],
                defines=("PyInit__C",))
    w = wheel("vllm-0.20.2-cp38-abi3-linux_x86_64.whl", [("vllm/__init__.py", py()), ("vllm/_C.abi3.so", so)],
              requires_dist=["torch"])
    rc, r, err = run_check(w, "flagos-runtime-nvidia-cuda13.3", with_=[t])
    expect(r, "degraded", "CUDA 13.3 runtime")
    vc = route(r, "vllm-c")
    check(vc is not None and not vc["available"] and not vc.get("gates"), "route vllm-c is off, nothing to set",
          json.dumps(vc))
    expect_finding(r, "missing-symbol", ["c10::UndefinedTensorImpl"], "CUDA 13.3 runtime")


def i15():
    """E2E-REPORT 1.3: FlagOS's repack relabelled binary wheels py3-none-any (opencv, xgrammar)."""
    so = member("cv2/cv2.abi3.so", "x86_64", ["malloc"], [glibc("x86_64", (2, 34))], defines=("PyInit_cv2",))
    w = wheel("opencv_python_headless-4.12.0.88-py3-none-any.whl", [("cv2/__init__.py", py()), ("cv2/cv2.abi3.so", so)])
    rc, r, err = run_check(w, "flagos-runtime-nvidia-cuda13.3")
    expect_finding(r, "tag-pure-binary", ["py3-none-any", "x86_64", "E2E-REPORT"], "CUDA 13.3 runtime (x86_64)")
    rc, r, err = run_check(w, "flagos-runtime-ascend-cann9.0.0")
    expect(r, "incompatible", "Ascend CANN 9.0.0 runtime (aarch64): pip installs it there on its tag's word")
    expect_finding(r, "wrong-arch", ["x86_64"], "Ascend (aarch64)")


def gates(whl, img, with_=()):
    """`wheelcheck gates` as a setup script runs it: (exit code, stdout)."""
    cmd = [A.wheelcheck, "gates", whl, "--image", img, "--db", A.db] + [a for w in with_ for a in ("--with", w)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, WHEELCHECK_OFFLINE="1"))
    return p.returncode, p.stdout + p.stderr


# The wrapper's load sits on line 514, as in FlagTree#1234's flagcx_wrapper.py.
FT1234_PAD = "".join(f"# flagcx_wrapper.py line {n}\n" for n in range(1, 511))
FT1234_AT_IMPORT = FT1234_PAD + """import ctypes
import os
_lib_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "_C")
_flagcx = ctypes.CDLL(os.path.join(_lib_dir, "libflagcx.so"))
"""
FT1234_LAZY = FT1234_PAD + """import ctypes
import os
def _load():
    return ctypes.CDLL(os.path.join(os.path.dirname(__file__), "..", "..", "..", "_C", "libflagcx.so"))
"""


def ft1234_wheels(wrapper, label):
    """FlagTree with TLE's wrapper (at import or lazy), and a FlagGems that probes TLE under `except ImportError`."""
    cudart12 = stub("x86_64", "libcudart.so.12", [("libcudart.so.12", ["cudaMalloc", "cudaFree"])])
    flagcx = member("ft1234/libflagcx.so", "x86_64", ["cudaMalloc"], [cudart12], defines=("flagcxCommInitRank",))
    triton = member("ft1234/libtriton.so", "x86_64", [], [], defines=("triton_init",))
    gems_cpp = member("ft1234/c_operators.cpython-312-x86_64-linux-gnu.so", "x86_64", [], [],
                      defines=("PyInit_c_operators",))
    tree = wheel(f"{label}/flagtree-0.6.1-cp312-cp312-linux_x86_64.whl", [
        ("triton/__init__.py", py("from . import _C\n", "triton.py")),
        ("triton/_C/__init__.py", py()),
        ("triton/_C/libtriton.so", triton),
        ("triton/_C/libflagcx.so", flagcx),
        ("triton/experimental/__init__.py", py()),
        ("triton/experimental/tle/__init__.py", py("from .language import flagcx_wrapper\n", "tle.py")),
        ("triton/experimental/tle/language/__init__.py", py("from . import flagcx_wrapper\n", "lang.py")),
        ("triton/experimental/tle/language/flagcx_wrapper.py", py(wrapper, "flagcx_wrapper.py"))])
    gems = wheel(f"{label}/flag_gems-4.2.0-cp312-cp312-linux_x86_64.whl", [
        ("flag_gems/__init__.py", py("import triton\n"
                                     "try:\n"
                                     "    import triton.experimental.tle as tle\n"
                                     "    HAS_TLE = True\n"
                                     "except ImportError:\n"
                                     "    HAS_TLE = False\n", "gems.py")),
        ("flag_gems/c_operators.cpython-312-x86_64-linux-gnu.so", gems_cpp)])
    return tree, gems


def ft1234():
    """FlagTree#1234 (FlagOS 2.2 rc2, issue 62): flagcx_wrapper.py loads libflagcx.so (CUDA 12) at import."""
    tree, gems = ft1234_wheels(FT1234_AT_IMPORT, "at-import")
    where = "flagcx_wrapper.py:514"
    # FlagGems beside FlagTree on the CUDA 13.3 image: `import flag_gems` fails (OSError escapes its probe).
    rc, r, err = run_check(gems, "flagos-runtime-nvidia-cuda13.3", with_=[tree])
    expect(r, "incompatible", "FlagGems with FlagTree (load at import), CUDA 13.3")
    expect_finding(r, "python-load", ["import flag_gems", where, "triton/_C/libflagcx.so", "libcudart.so.12",
                                      "except ImportError"], "CUDA 13.3: import flag_gems", severity="error")
    core = route(r, "flaggems-core")
    check(core is not None and not core["available"], "CUDA 13.3: the core route flaggems-core is off",
          f"    routes: {json.dumps((r or {}).get('routes'))}")
    code, out = gates(gems, "flagos-runtime-nvidia-cuda13.3", with_=[tree])
    # gates exit 0 whenever they could evaluate (docs/gates.md): the core path fails as the verdict and the route.
    check(code == 0 and "WHEELCHECK_VERDICT='incompatible'" in out and "route flaggems-core (core) is off" in out
          and "export USE_TLE_DIST='0'" in out,
          "CUDA 13.3: gates fail the core path (incompatible, the core route off and named)", "    " + out)
    # FlagTree itself there: `import triton` works; TLE's import fails, and its route goes off.
    rc, r, err = run_check(tree, "flagos-runtime-nvidia-cuda13.3")
    expect(r, "degraded", "FlagTree (load at import) alone, CUDA 13.3")
    expect_finding(r, "python-load", ["import triton.experimental.tle.language.flagcx_wrapper", where],
                   "CUDA 13.3: TLE's import", severity="error")
    tle = route(r, "flagtree-tle-dist")
    check(tle is not None and not tle["available"] and any(where.split(":")[0] in x for x in tle["reasons"]),
          "CUDA 13.3: flagtree-tle-dist is off, the wrapper named", f"    route: {json.dumps(tle)}")
    # CUDA 12.8 has libcudart.so.12: the load works, and FlagGems imports.
    rc, r, err = run_check(gems, "flagos-runtime-nvidia-cuda12.8", with_=[tree])
    check(not findings(r, "python-load", "error"), "CUDA 12.8: no import fails",
          f"    {json.dumps(findings(r, 'python-load'))[:2000]}")
    # The same wheels with the load made lazy: nothing fails at import; FlagTree is degraded only.
    tree, gems = ft1234_wheels(FT1234_LAZY, "lazy")
    rc, r, err = run_check(tree, "flagos-runtime-nvidia-cuda13.3")
    expect(r, "degraded", "FlagTree (lazy load) alone, CUDA 13.3")
    check(not findings(r, "python-load", "error"), "lazy: no import fails",
          f"    {json.dumps(findings(r, 'python-load'))[:2000]}")
    expect_finding(r, "python-load", [where, "when the function around it is called"], "lazy: the load listed",
                   severity="info")
    rc, r, err = run_check(gems, "flagos-runtime-nvidia-cuda13.3", with_=[tree])
    check((r or {}).get("verdict") in ("compatible", "degraded") and not findings(r, "python-load", "error"),
          "lazy: FlagGems imports on CUDA 13.3", f"    {json.dumps(r)[:2000]}")


INCIDENTS = {"I1": i1, "I2": i2, "I3": i3, "I4": i4, "I5": i5, "I6": i6, "I7": i7, "I8": i8, "I9": i9, "I10": i10,
             "I11": i11, "I12": i12, "I13": i13, "I14": i14, "I15": i15, "FT1234": ft1234}


def main():
    global A, CURRENT
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default="")
    A = ap.parse_args()
    A.work = os.path.abspath(A.work)
    os.makedirs(A.work, exist_ok=True)
    wanted = [x for x in A.only.split(",") if x] or list(INCIDENTS)
    for name in wanted:
        if name not in INCIDENTS:
            print(f"incidents.py: no incident {name} (there are {', '.join(INCIDENTS)})", file=sys.stderr)
            return 2
    if shutil.which("gcc") is None:
        print("incidents.py: SKIP: gcc is not installed", file=sys.stderr)
        return 77
    for name in wanted:
        CURRENT = name
        if name == "I4" and shutil.which("aarch64-linux-gnu-gcc") is None:
            print("incidents.py: SKIP: I4 needs aarch64-linux-gnu-gcc (scripts/install-deps.sh installs it)")
            if len(wanted) == 1:
                return 77
            continue
        print(f"{name}: {INCIDENTS[name].__doc__.splitlines()[0]}")
        INCIDENTS[name]()
    if FAILURES:
        print(f"\n{len(FAILURES)} failed:\n  " + "\n  ".join(FAILURES))
        return 1
    print("\nall incidents hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Issue 60's trial (tests/jobs/sentences_job.py): every sentence true. Each case builds its wheel here (gcc, the
machine's nvcc), runs the command its user types, and holds the sentence to what pip, CPython and the loader do;
where a sentence says what pip or CPython does, the real one (Debian's, offline) is asked too.

  a. tag-claim: titled in words (never the bare kind, never "tag-claim tag-claim"), and under an INCOMPATIBLE
     verdict no "it loads here"; an extension linked to libpython: the fix is not to link it
  b. integrity: a truncated ELF member with a sound RECORD is one unreadable-member finding (no damaged archive,
     no "not what its RECORD says"); no RECORD: "pip refuses" (pip does: the referee); a tampered RECORD:
     "pip installs it all the same" (pip does)
  c. no false cause: an x86_64 .so in a py3-none-any wheel on aarch64 is wrong-arch alone (no missing libc.so.6);
     a musl member on a glibc image is "built against musl", never "install the package that ships" its libc
  d. counts: a condition inside an optional route that is off is counted apart in the headline, and listed in
     that route's conditions; the report's `conditions` hold exactly the deciding ones
  e. libpython: not stated where the image does not say what its interpreter loads; an error where it loads
     none (a static interpreter, as Debian's python3 is: CPython refuses the import, the referee)
  f. CPython's import as the referee of extension-suffix and module-init (a member named for another Python, one
     without PyInit_): wheelcheck's finding exactly where `import` fails, with CPython's own error
  g. CUDA 13 on sm_61: the fix advises no -gencode CUDA 13 cannot build (skips without nvcc)
  Every report of the job: no finding's explanation says it loads here under an INCOMPATIBLE verdict.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import make_wheel  # noqa: E402
from truth_job import loads  # noqa: E402

# The referees are Debian's own python3 and its pip where the machine has them (a pyenv's first on PATH is not).
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def cc(out, source, *args):
    src = out + ".c"
    with open(src, "w") as f:
        f.write(source)
    r = subprocess.run(["gcc", "-O1", "-fPIC", "-shared", "-o", out, src, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"gcc {out}: {r.stderr}")
    return out


def findings(doc, kind=None):
    return [f for f in doc.get("findings", []) if kind is None or f.get("kind") == kind]


def pip(*args, cwd=None):
    # Offline and alone: no index, and none of this machine's pip configuration (PIP_FIND_LINKS, pip.conf).
    cmd, rest = args[0], list(args[1:])
    return subprocess.run([PY, "-m", "pip", "--isolated", "--disable-pip-version-check", "--no-input", cmd,
                           "--no-index", *rest], capture_output=True, text=True, cwd=cwd)


def have_pip():
    return subprocess.run([PY, "-m", "pip", "--version"], capture_output=True).returncode == 0


def image(tmp, name, **fields):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump({"schema": "wheelcheck-image/1", "name": name, "kind": "image", **fields}, f)
    return path


REPORTS = []


def job_sentences(tmp, J):
    check = J.check
    env = {"WHEELCHECK_OFFLINE": "1", "WHEELCHECK_CACHE_DIR": os.path.join(tmp, "cache")}

    def wc(*args):
        r = J.wc(*args, env=env)
        if "--json" in args:
            REPORTS.append((" ".join(os.path.basename(a) for a in args), loads(r)))
        return r

    if shutil.which("gcc") is None:
        print("skip: gcc is needed to build the trial's wheels")
        sys.exit(77)
    build, out = os.path.join(tmp, "build"), os.path.join(tmp, "wheels")
    os.makedirs(build)
    os.makedirs(out)

    def pack(name, files, **kw):
        return make_wheel.write_wheel(os.path.join(out, name), files, **kw)

    # --- a. tag-claim -------------------------------------------------------------------------------------------
    # An extension module linked to a libpython (a stand-in, built here): no manylinux policy allows it.
    lp_dir = os.path.join(build, "lp")
    os.makedirs(lp_dir)
    cc(os.path.join(lp_dir, "libpython3.12.so.1.0"), "void Py_Stub(void){}\n", "-Wl,-soname,libpython3.12.so.1.0")
    lp_ext = cc(os.path.join(lp_dir, "_e.so"), "extern void Py_Stub(void);\nvoid* PyInit__e(void){Py_Stub();return 0;}\n",
                "-L" + lp_dir, "-l:libpython3.12.so.1.0")
    lp = pack("lp-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", [("lp/_e.cpython-312-x86_64-linux-gnu.so", lp_ext),
                                                               ("lp/__init__.py", lp_ext)])
    t = wc(lp, "--image", "cuda13.0").stdout
    bare = [l for l in t.splitlines() if l.rstrip().endswith(": tag-claim") or l.strip() == "tag-claim"]
    check(not bare and "! the wheel: tagged manylinux_2_17_x86_64" in t,
          "a. check titles the tag claim in words, never the bare kind", t[-1500:])
    lint = wc("lint", lp).stdout
    check("tag-claim  tag-claim" not in lint and "tagged manylinux_2_17_x86_64" in lint,
          "a. lint's heading is the kind and its words, not the kind twice", lint[-1200:])
    doc = loads(wc("lint", lp, "--json"))
    fixes = [f.get("fix", "") for w in doc.get("wheels", []) for f in findings(w, "tag-claim")]
    check(fixes and all("without -lpython" in x and "linux_x86_64" not in x for x in fixes),
          "a. linked to libpython, the tag claim's fix is to build without -lpython, not a linux_x86_64 tag", str(fixes))

    # A manylinux_2_17 wheel whose library needs pthread_create@GLIBC_2.34 (gcc on glibc >= 2.34 links it so), on a
    # glibc 2.31 image: INCOMPATIBLE by the loader; the claim beside it says nothing of loading here.
    th = cc(os.path.join(build, "th.so"), "#include <pthread.h>\nstatic void*f(void*a){return a;}\n"
            "int start(void){pthread_t t;return pthread_create(&t,0,f,0);}\n", "-pthread")
    needs_234 = "GLIBC_2.34" in subprocess.run(["readelf", "-V", th], capture_output=True, text=True).stdout
    focal = image(tmp, "focal-plain", layers=["ubuntu20.04", "python3.12"])
    if not needs_234:
        print("  skip  a. this gcc's glibc links pthread_create below GLIBC_2.34 (the case needs glibc >= 2.34)")
    else:
        claim = pack("claim-1.0-py3-none-manylinux_2_17_x86_64.whl", [("claim/th.so", th)])
        doc = loads(wc(claim, "--image", focal, "--json"))
        tc = findings(doc, "tag-claim")
        check(doc.get("verdict") == "incompatible" and findings(doc, "missing-version") and tc,
              "a. a 2.34 build tagged 2_17 on glibc 2.31: INCOMPATIBLE by the loader, the tag claim beside it",
              json.dumps(doc)[:1500])
        check(tc and all(f["severity"] == "warning" and "loads here" not in f.get("explanation", "").lower()
                         for f in tc),
              "a. the claim under an INCOMPATIBLE verdict is a warning and never says it loads here", json.dumps(tc))
        # The same claim where glibc is new enough, the verdict INCOMPATIBLE for another reason (a library the image,
        # stated complete, does not have): the claim's words are the same, and still say nothing of loading here.
        absent_dir = os.path.join(build, "absent")
        os.makedirs(absent_dir)
        cc(os.path.join(absent_dir, "libabsent.so.1"), "int absent(void){return 0;}\n", "-Wl,-soname,libabsent.so.1")
        th2 = cc(os.path.join(build, "th2.so"), "#include <pthread.h>\nint absent(void);\nstatic void*f(void*a){return a;}\n"
                 "int start(void){pthread_t t;return pthread_create(&t,0,f,0)+absent();}\n", "-pthread",
                 "-L" + absent_dir, "-l:libabsent.so.1")
        claim2 = pack("claimb-1.0-py3-none-manylinux_2_17_x86_64.whl", [("claimb/th.so", th2)])
        noble = image(tmp, "noble-complete", layers=["ubuntu24.04"], inventory={"complete": True})
        doc = loads(wc(claim2, "--image", noble, "--json"))
        tc = findings(doc, "tag-claim")
        check(doc.get("verdict") == "incompatible" and tc and all("loads here" not in f.get("explanation", "").lower()
                                                                 for f in tc),
              "a. glibc new enough, INCOMPATIBLE for a missing library: the claim never says it loads here",
              json.dumps(doc)[:1500])
        sarif = wc(claim2, "--image", noble, "--format", "sarif").stdout
        check("loads here" not in sarif.lower(), "a. nor does its SARIF message", sarif[:800])

    # --- b. integrity -------------------------------------------------------------------------------------------
    good = cc(os.path.join(build, "good.so"), "int f(void){return 1;}\n")
    trunc = os.path.join(build, "trunc.so")
    with open(good, "rb") as src, open(trunc, "wb") as dst:
        dst.write(src.read()[:200])
    tw = pack("trunc-1.0-py3-none-manylinux_2_17_x86_64.whl", [("trunc/lib.so", trunc)])
    r = wc(tw, "--image", "cuda13.0", "--json")
    doc = loads(r)
    integrity = [f["kind"] for f in doc.get("findings", []) if f["kind"] in ("archive", "record", "unreadable-member")]
    check(r.returncode == 2 and integrity == ["unreadable-member"],
          f"b. a truncated member under a sound RECORD: one unreadable-member finding (got {integrity}), exit 2",
          json.dumps(doc)[:1200])
    t = wc(tw, "--image", "cuda13.0").stdout
    check("RECORD says" not in t and "archive is damaged" not in t,
          "b. ... never said to be a damaged archive or not what its RECORD says", t[-800:])
    cases = {"norecord": lambda arc: {"no_record": True}, "tamper": lambda arc: {"tamper": [arc]}}
    mod = os.path.join(build, "mod.py")
    with open(mod, "w") as f:
        f.write("x = 1\n")
    for name, kw in cases.items():
        arc = f"pr{name}/mod.py"
        w = pack(f"pr{name}-1.0-py3-none-any.whl", [(arc, mod)], **kw(arc))
        doc = loads(wc(w, "--image", "cuda13.0", "--json"))
        said = " ".join(f.get("explanation", "") for f in findings(doc, "record"))
        says_refuses = "pip refuses" in said
        says_installs = "installs it all the same" in said
        check(says_refuses != says_installs, f"b. {name}: the record finding says what pip does", said)
        if not have_pip():
            print(f"  skip  b. {name}: pip is not on this machine to referee")
            continue
        p = pip("install", "--no-deps", "--target", os.path.join(tmp, "pip-" + name), w)
        check((p.returncode != 0) == says_refuses,
              f"b. {name}: pip {'refuses' if p.returncode else 'installs'} it, as the finding says", p.stderr[-600:])

    # METADATA's Name other than the file name's: lint says what pip does, and pip does it.
    nm_dir = os.path.join(build, "namemix")
    os.makedirs(nm_dir)
    nm = os.path.join(out, "namemix-1.0-py3-none-any.whl")
    with zipfile.ZipFile(nm, "w") as z:
        z.writestr("namemix/__init__.py", "")
        z.writestr("namemix-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: othername\nVersion: 1.0\n")
        z.writestr("namemix-1.0.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("namemix-1.0.dist-info/RECORD", "")
    doc = loads(wc("lint", nm, "--json"))
    said = " ".join(f.get("explanation", "") for w in doc.get("wheels", []) for f in findings(w, "metadata")
                    if f.get("library") == "Name")
    check("pip installs it all the same" in said, "b. METADATA Name other than the file's: lint says pip installs it",
          said)
    if have_pip():
        for args in ([nm], ["--find-links", out, "namemix"]):
            p = pip("install", "--no-deps", "--target", os.path.join(tmp, "pip-nm-" + str(len(args))),
                    *args)
            check(p.returncode == 0, f"b. referee: pip installs it ({' '.join(a[-20:] for a in args)})", p.stderr[-400:])

    # --- c. no false cause ------------------------------------------------------------------------------------
    uses_libc = cc(os.path.join(build, "libc_user.so"), "#include <string.h>\nint f(const char*s){return (int)strlen(s);}\n")
    anyx = pack("anyx-1.0-py3-none-any.whl", [("anyx/lib.so", uses_libc)])
    doc = loads(wc(anyx, "--image", "ascend-cann9", "--json"))
    kinds = sorted({f["kind"] for f in findings(doc)})
    check(doc.get("verdict") == "incompatible" and "wrong-arch" in kinds and "missing-library" not in kinds,
          f"c. x86_64 code on aarch64: wrong-arch, and no missing libc.so.6 after it (kinds {kinds})",
          json.dumps(doc)[:1200])
    musl_dir = os.path.join(build, "musl")
    os.makedirs(musl_dir)
    cc(os.path.join(musl_dir, "libc.musl-x86_64.so.1"), "int printf(const char*f,...){return 0;}\n", "-nostdlib",
       "-Wl,-soname,libc.musl-x86_64.so.1")
    m = cc(os.path.join(musl_dir, "m.so"), "int printf(const char*f,...);\nint g(void){return printf(\"x\");}\n",
           "-nostdlib", "-L" + musl_dir, "-l:libc.musl-x86_64.so.1")
    mw = pack("muslx-1.0-py3-none-manylinux_2_17_x86_64.whl", [("muslx/m.so", m)])
    doc = loads(wc(mw, "--image", "cuda13.0", "--json"))
    ml = [f for f in findings(doc, "missing-library") if f.get("library") == "libc.musl-x86_64.so.1"]
    check(ml and all("install the package" not in f.get("fix", "") and "musl" in f.get("explanation", "")
                     and "glibc" in f.get("fix", "") for f in ml),
          "c. a musl member on glibc: built against musl, the fix a glibc wheel, never a package to install",
          json.dumps(ml)[:1200])

    # --- d. counts --------------------------------------------------------------------------------------------
    gems = J.sample(J.GEMS)
    t = wc(gems, "--image", "cuda13.0").stdout
    doc = loads(wc(gems, "--image", "cuda13.0", "--json"))
    off = [r for r in doc.get("routes", []) if not r.get("available")]
    in_off = [c for r in off for c in r.get("conditions", [])]
    deciding = [f for f in findings(doc) if f["severity"] == "condition"]
    last = t.strip().splitlines()[-1] if t.strip() else ""
    if in_off:
        check(re.search(r"\d+ conditions? \(and \d+ conditions? in optional routes that are off\)", last),
              "d. a condition in an off route is counted apart in the headline", last)
    else:
        print("  note  d. no condition in an off route for the sample here")
    said = set(doc.get("conditions", []))
    open_ones = [f for f in deciding if not any(f.get("member", "") and c.startswith(f["member"] + ":") for c in in_off)]
    check(all(f["explanation"] in said for f in open_ones) and len(said) == len({f["explanation"] for f in open_ones}),
          "d. `conditions` lists exactly the conditions that decide", json.dumps(doc.get("conditions")) + "\n" +
          json.dumps([f["explanation"][:80] for f in deciding]))

    # --- e. libpython -----------------------------------------------------------------------------------------
    doc = loads(wc(lp, "--image", "cuda13.0", "--json"))
    lib = [f for f in findings(doc, "missing-library") if f.get("library", "").startswith("libpython")]
    check(lib and all(f["severity"] == "condition" and "not stated" in f["explanation"]
                      and "without -lpython" in f.get("fix", "") for f in lib),
          "e. linked to libpython, the image silent on its interpreter's needs: a condition, the fix not to link it",
          json.dumps(lib)[:1200])
    static = image(tmp, "static-python", layers=["ubuntu24.04"], inventory={"complete": True},
                   pythons=[{"version": "3.12", "abi_tags": ["cp312", "abi3"], "executable": "/usr/bin/python3.12",
                             "site_packages": ["/usr/lib/python3/dist-packages"],
                             "needed": ["libm.so.6", "libz.so.1", "libexpat.so.1", "libc.so.6"]}])
    r = wc(lp, "--image", static, "--json")
    doc = loads(r)
    lib = [f for f in findings(doc, "missing-library") if f.get("library", "").startswith("libpython")]
    check(r.returncode == 1 and lib and all(f["severity"] == "error" and "does not load it" in f["explanation"]
                                            for f in lib),
          "e. a static interpreter that loads no libpython, and none in the image: an error saying so",
          json.dumps(doc)[:1500])
    # The referee: Debian's python3 is such an interpreter (no libpython in its DT_NEEDED); an extension linked to
    # a libpython the loader cannot find is refused at import.
    py_needed = subprocess.run(["readelf", "-d", os.path.realpath(PY)], capture_output=True, text=True).stdout
    if "libpython" in py_needed:
        print("  skip  e. this python3 loads a libpython itself: not the static case to referee")
    else:
        ver = subprocess.run([PY, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                             text=True).stdout.strip()
        # Its release build's soname, or where that is installed here (libpython3.X), the debug build's: either is the
        # interpreter's own library, which a static interpreter has not loaded.
        soname = f"libpython{ver}.so.1.0"
        if subprocess.run(["sh", "-c", f"ldconfig -p | grep -qF {soname}"]).returncode == 0:
            soname = f"libpython{ver}d.so.1.0"
        ref = os.path.join(build, "ref")
        os.makedirs(os.path.join(ref, "stub"))
        cc(os.path.join(ref, "stub", soname), "void Py_Stub(void){}\n", "-Wl,-soname," + soname)
        cc(os.path.join(ref, "_e.so"), "extern void Py_Stub(void);\nvoid* PyInit__e(void){Py_Stub();return 0;}\n",
           "-L" + os.path.join(ref, "stub"), "-l:" + soname)
        shutil.rmtree(os.path.join(ref, "stub"))
        found = subprocess.run(["sh", "-c", f"ldconfig -p | grep -F {soname}"], capture_output=True).returncode == 0
        if found:
            print(f"  skip  e. {soname} is installed here: the referee would load it")
        else:
            p = subprocess.run([PY, "-c", "import _e"], cwd=ref, capture_output=True, text=True)
            check(p.returncode != 0 and soname in p.stderr,
                  f"e. referee: python{ver} (static) refuses the import, naming {soname}", p.stderr[-400:])

    # --- f. CPython's import as the referee ---------------------------------------------------------------------
    ver = subprocess.run([PY, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
                         capture_output=True, text=True).stdout.split()
    tag = f"cp{ver[0]}{ver[1]}"
    other = "cp310" if tag != "cp310" else "cp39"
    suffix = subprocess.run([PY, "-c", "import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])"],
                            capture_output=True, text=True).stdout.strip()
    wrong_suffix = suffix.replace(tag[2:], other[2:], 1)
    a = cc(os.path.join(build, "a.so"), "void* PyInit__a(void){return 0;}\n")
    b = cc(os.path.join(build, "b.so"), "void* PyInit_other(void){return 0;}\n")
    init = os.path.join(build, "__init__.py")
    open(init, "w").close()
    fw = pack(f"refx-1.0-{tag}-{tag}-manylinux_2_17_x86_64.whl",
              [("refx/__init__.py", init), ("refx/_a" + wrong_suffix, a), ("refx/_b" + suffix, b)])
    debian_image = {"3.11": "debian12", "3.13": "debian13"}.get(f"{ver[0]}.{ver[1]}")
    if debian_image is None:
        print(f"  skip  f. no db image has this machine's Python {ver[0]}.{ver[1]}")
    else:
        doc = loads(wc(fw, "--image", debian_image, "--json"))
        suffix_members = {f.get("member") for f in findings(doc, "extension-suffix")}
        init_members = {f.get("member") for f in findings(doc, "module-init")}
        site = os.path.join(tmp, "site")
        with zipfile.ZipFile(fw) as z:
            z.extractall(site)
        for mod, member, kind_set, cpython_says in (
                ("_a", "refx/_a" + wrong_suffix, suffix_members, "No module named"),
                ("_b", "refx/_b" + suffix, init_members, "does not define module export function")):
            p = subprocess.run([PY, "-c", f"import refx.{mod}"], cwd=site, capture_output=True, text=True)
            refused = p.returncode != 0 and cpython_says in p.stderr
            check(refused and member in kind_set,
                  f"f. referee: CPython refuses `import refx.{mod}` ({cpython_says!r}) and wheelcheck says so of "
                  f"{member}", p.stderr[-300:] + "\n" + json.dumps(findings(doc))[:800])

    # --- g. CUDA 13 on sm_61 ------------------------------------------------------------------------------------
    nvcc = shutil.which("nvcc") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"))), None)
    if nvcc is None:
        print("  skip  g. no nvcc on this machine")
    else:
        cu = os.path.join(build, "k.cu")
        with open(cu, "w") as f:
            f.write("__global__ void k(int*p){*p=1;}\nextern \"C\" void launch(int*p){k<<<1,1>>>(p);}\n")
        ko = os.path.join(build, "k.so")
        r = subprocess.run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_75,code=sm_75",
                            "-cudart", "shared", "-o", ko, cu], capture_output=True, text=True)
        if r.returncode != 0:
            print("  skip  g. nvcc could not build the kernel: " + r.stderr[-200:])
        else:
            kw = pack("kern-1.0-py3-none-manylinux_2_28_x86_64.whl", [("kern/k.so", ko)])
            pascal = image(tmp, "cuda13-pascal", layers=["ubuntu24.04", "cuda13.0-runtime"],
                           toolkit={"kind": "cuda", "version": "13.0"}, gpu_archs="sm_61", driver="580.65.06")
            doc = loads(wc(kw, "--image", pascal, "--json"))
            cov = findings(doc, "gpu-coverage")
            check(cov and all("-gencode arch=compute_61,code=sm_61" not in f.get("fix", "")
                              or "older CUDA major" in f.get("fix", "") for f in cov)
                  and any("no longer compiles for sm_61" in f.get("fix", "") for f in cov),
                  "g. CUDA 13 on sm_61: the fix says CUDA 13 cannot build for it, and which build can",
                  json.dumps(cov)[:1200])

    # --- every report: no "loads here" under INCOMPATIBLE -------------------------------------------------------
    bad = [(what, f["kind"]) for what, doc in REPORTS if doc.get("verdict") == "incompatible"
           for f in findings(doc) if "loads here" in f.get("explanation", "").lower()]
    check(not bad, f"no finding says it loads here under an INCOMPATIBLE verdict ({len(REPORTS)} reports)", str(bad))

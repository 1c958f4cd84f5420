"""Issue 59's trial (tests/jobs/truth_job.py): the everyday command's answers held to the loader's truth, on
wheels packed here from compiled code (the samples' members, and libraries built with gcc and the aarch64
cross compiler), never committed binaries.

  a. one FlagCX Ascend build (its _C needs libtorch_npu.so) named +cann9, +cann9.0.0 and +cann9.0.0.910c on
     ascend-cann9: the loader's INCOMPATIBLE naming libtorch_npu.so under every name, never NOT TARGETED
  b. the FlagCX CUDA 13 sample (libflagcx.so needs libcudart.so.13) named +cu130, +cu128, +nv and with no
     label, on cuda13.0 and flagos-runtime-nvidia-cuda12.8: one verdict per image whatever the name; the
     label that contradicts the image is a label-claim warning beside it
  c. FlagTree +iluvatar3.6 needing __isoc23_strtol@GLIBC_2.38 on an Ubuntu 22.04 description with no
     toolkit: INCOMPATIBLE naming the symbol, labelled or not
  d. a manylinux_2_17_x86_64 wheel whose members are aarch64 code: INCOMPATIBLE (wrong-arch) on x86_64
     images, not targeted only where pip would not install it (aarch64 images); the scan of it exits 1
  e. FlagCX +cu130 on gcu-tops: check, gates (sh and json) and --json give one verdict
  f. integrity first: a RECORD that does not match, a ../ member, no .dist-info: check exits 2 naming the
     problem and gates fail closed, on an image the wheel is for and on one pip would not install it on
  h. g++'s runtime, libgfortran5 and (22.04) libtinfo5, which FlagOS's images install: never a missing library
     there, at most "not stated" (libtinfo.so.5 on 24.04, whose archive has none, stays INCOMPATIBLE)
  g. "pip would not install" is said only where pip would not: each trial wheel on three images against
     pip's own answer (`pip download --no-index --platform ... --python-version ...`, offline), where pip is
     on the machine
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import make_wheel  # noqa: E402

# The stub libc.so.6 that defines __isoc23_strtol at GLIBC_2.38, and FlagTree's libtriton.so that needs it: the
# judged job's (issue 39's trial) sources, one definition.
from judged_job import LIBC_C, LIBC_MAP, TRITON_C  # noqa: E402
from judged_job import compile_ as run  # noqa: E402
from judged_job import source as write  # noqa: E402


def members_of(wheel, into):
    """The members of a wheel other than its .dist-info, extracted under INTO: [(archive name, path)]."""
    out = []
    with zipfile.ZipFile(wheel) as z:
        for n in z.namelist():
            if ".dist-info/" in n or n.endswith("/"):
                continue
            path = os.path.join(into, n)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(z.read(n))
            out.append((n, path))
    return out


def loads(r):
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def kinds(doc):
    return [f["kind"] for f in doc.get("findings", [])]


def names_in(doc, field):
    return " ".join(str(f.get(field, "")) + " " + f.get("explanation", "") for f in doc.get("findings", []))


def gate_values(out):
    """The variables a gates script sets: {NAME: value} from its `export NAME='value'` lines."""
    values = {}
    for line in out.splitlines():
        if line.startswith("export ") and "=" in line:
            k, v = line[len("export "):].split("=", 1)
            values[k] = v.strip("'\"")
    return values


class Index:
    """One project's wheel on a loopback index (tests/net/server.py); `with` gives its simple URL."""

    def __init__(self, root, project, wheel):
        os.makedirs(os.path.join(root, "trial", project))
        shutil.copy(wheel, os.path.join(root, "trial", project))
        self.root = root

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "net", "server.py"), "--root",
                                      self.root], stdout=subprocess.PIPE, text=True)
        return f"http://127.0.0.1:{int(self.proc.stdout.readline().split()[1])}/trial/simple/"

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def raw_zip(out, entries):
    """A zip written as it is given (names unchecked): [(name, bytes)]."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in entries:
            z.writestr(zipfile.ZipInfo(n, (2024, 1, 1, 0, 0, 0)), data)
    return out


def job_truth(tmp, J):
    check = J.check
    hermetic = {"WHEELCHECK_OFFLINE": "1", "WHEELCHECK_CACHE_DIR": os.path.join(tmp, "cache")}

    def wc(*args):
        return J.wc(*args, env=hermetic)

    if shutil.which("gcc") is None:
        print("skip: gcc is needed to build the trial's wheels")
        sys.exit(77)
    build, out = os.path.join(tmp, "build"), os.path.join(tmp, "wheels")
    os.makedirs(build)
    os.makedirs(out)
    wheels = {}

    def pack(name, files, **kw):
        wheels[name] = make_wheel.write_wheel(os.path.join(out, name), files, **kw)
        return wheels[name]

    # --- a. one Ascend build under three labels ---------------------------------------------------------------
    ascend = members_of(J.sample(J.CX_ASCEND), os.path.join(build, "ascend"))
    labels_a = ["cann9", "cann9.0.0", "cann9.0.0.910c"]
    verdicts = {}
    for label in labels_a:
        w = pack(f"flagcx-0.13.0+{label}-cp312-cp312-linux_aarch64.whl", ascend)
        r = wc(w, "--image", "ascend-cann9")
        doc = loads(wc(w, "--image", "ascend-cann9", "--json"))
        verdicts[label] = doc.get("verdict")
        check(r.returncode == 1 and "INCOMPATIBLE" in r.stdout and "libtorch_npu.so" in r.stdout
              and "NOT TARGETED" not in r.stdout and "pip would not install" not in r.stdout,
              f"a. flagcx +{label} (its _C needs libtorch_npu.so) on ascend-cann9: INCOMPATIBLE naming "
              f"libtorch_npu.so, never NOT TARGETED (exit {r.returncode})", r.stdout[-1500:] + r.stderr[-500:])
        check(doc.get("targeted") is True and "missing-library" in kinds(doc),
              f"a. --json of +{label}: targeted, a missing-library finding", json.dumps(doc)[:1500])
    check(len(set(verdicts.values())) == 1, f"a. the three labels give one verdict ({verdicts})")

    # --- b. the CUDA 13 FlagCX sample under four names, on two CUDA images ------------------------------------
    cu13 = members_of(J.sample(J.CX), os.path.join(build, "cu13"))
    names_b = {"+cu130": "flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl",
               "+cu128": "flagcx-0.9.0+cu128-cp312-cp312-linux_x86_64.whl",
               "+nv": "flagcx-0.9.0+nv-cp312-cp312-linux_x86_64.whl",
               "no label": "flagcx-0.9.0-cp312-cp312-linux_x86_64.whl"}
    for label, name in names_b.items():
        pack(name, cu13)
    for image in ("cuda13.0", "flagos-runtime-nvidia-cuda12.8"):
        got = {}
        for label, name in names_b.items():
            doc = loads(wc(wheels[name], "--image", image, "--json"))
            got[label] = (doc.get("verdict"), doc.get("targeted"))
        check(len(set(got.values())) == 1 and got["no label"][1] is True and got["no label"][0] != "not-targeted",
              f"b. one file under four names on {image}: one verdict, the loader's ({got})")
    doc = loads(wc(wheels[names_b["+cu128"]], "--image", "cuda13.0", "--json"))
    claim = [f for f in doc.get("findings", []) if f["kind"] == "label-claim"]
    check(claim and claim[0]["severity"] == "warning" and "12.8" in claim[0]["explanation"]
          and "pip ignores local version labels" in claim[0]["explanation"],
          "b. +cu128 on cuda13.0: the label's claim is a warning beside the verdict", json.dumps(doc)[:1500])
    doc = loads(wc(wheels[names_b["no label"]], "--image", "flagos-runtime-nvidia-cuda12.8", "--json"))
    check(doc.get("verdict") == "incompatible" and "libcudart.so.13" in names_in(doc, "library"),
          "b. no label on flagos-runtime-nvidia-cuda12.8: INCOMPATIBLE naming libcudart.so.13 (from the binary, "
          "not the name)", json.dumps(doc)[:1500])

    # --- c. FlagTree needing glibc 2.38 on an Ubuntu 22.04 description with no toolkit -------------------------
    run(build, "gcc", "-shared", "-fPIC", "-nostdlib", "-o", "libc.so.6", "-Wl,-soname,libc.so.6",
        "-Wl,--version-script=" + write(build, "libc.map", LIBC_MAP), write(build, "libc.c", LIBC_C))
    run(build, "gcc", "-shared", "-fPIC", "-nostdlib", "-o", "libtriton.so", "-Wl,-soname,libtriton.so",
        write(build, "tri.c", TRITON_C), "libc.so.6")
    tri = [("triton/_C/libtriton.so", os.path.join(build, "libtriton.so"))]
    desc = os.path.join(tmp, "ubuntu22-plain.json")
    with open(desc, "w") as f:
        json.dump({"schema": "wheelcheck-image/1", "name": "ubuntu22-plain", "kind": "image",
                   "summary": "an Ubuntu 22.04 image with Python 3.12 and no accelerator toolkit",
                   "layers": ["ubuntu22.04", "python3.12"]}, f)
    for name in ("flagtree-0.7.0rc2+iluvatar3.6-cp312-cp312-linux_x86_64.whl",
                 "flagtree-0.7.0rc2-cp312-cp312-linux_x86_64.whl"):
        r = wc(pack(name, tri), "--image", desc)
        check(r.returncode == 1 and "INCOMPATIBLE" in r.stdout and "__isoc23_strtol" in r.stdout
              and "NOT TARGETED" not in r.stdout,
              f"c. {name} on an Ubuntu 22.04 description: INCOMPATIBLE naming __isoc23_strtol (exit {r.returncode})",
              r.stdout[-1500:] + r.stderr[-500:])

    # --- d. x86_64 tags, aarch64 members -----------------------------------------------------------------------
    cross = shutil.which("aarch64-linux-gnu-gcc")
    if cross is None:
        print("  skip  d. aarch64-linux-gnu-gcc is not installed (scripts/install-deps.sh --cross)")
    else:
        run(build, cross, "-shared", "-fPIC", "-o", "arm.so", write(build, "arm.c", "int PyInit_arm(void){return 0;}\n"))
        w = pack("armed-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", [("armed/arm.cpython-312-x86_64-linux-gnu.so",
                                                                      os.path.join(build, "arm.so"))])
        for image in ("cuda13.0", "gcu-tops"):
            doc = loads(wc(w, "--image", image, "--json"))
            check(doc.get("verdict") == "incompatible" and doc.get("targeted") is True and "wrong-arch" in kinds(doc),
                  f"d. aarch64 members under an x86_64 tag on {image}: INCOMPATIBLE (wrong-arch), targeted",
                  json.dumps(doc)[:1200])
        doc = loads(wc(w, "--image", "ascend-cann9", "--json"))
        check(doc.get("verdict") == "not-targeted",
              "d. on ascend-cann9 (aarch64) pip would not install it (its tag is x86_64): not targeted",
              json.dumps(doc)[:800])
        with Index(os.path.join(tmp, "index-d"), "armed", w) as url:
            r = J.wc("scan", "--index", url, "--project", "armed", "--state", os.path.join(tmp, "state"), "-q",
                     "--no-cache", env={"WHEELCHECK_OFFLINE": ""})
        check(r.returncode == 1, f"d. the nightly scan of it exits 1 (incompatible where pip installs it), "
              f"not 0 (exit {r.returncode})", r.stdout[-1500:] + r.stderr[-800:])

    # --- e. check and gates agree ------------------------------------------------------------------------------
    cx = wheels[names_b["+cu130"]]
    doc = loads(wc(cx, "--image", "gcu-tops", "--json"))
    rc = wc(cx, "--image", "gcu-tops").returncode
    g = wc("gates", cx, "--image", "gcu-tops")
    gj = loads(wc("gates", cx, "--image", "gcu-tops", "--json"))
    sh_verdict = gate_values(g.stdout).get("WHEELCHECK_VERDICT", "").strip("'\"")
    check(doc.get("verdict") == gj.get("verdict") == sh_verdict and doc.get("verdict") != "not-targeted"
          and rc == {"incompatible": 1, "unknown": 4, "degraded": 3, "compatible": 0}.get(doc.get("verdict")),
          f"e. flagcx +cu130 on gcu-tops: check ({doc.get('verdict')}, exit {rc}), gates json ({gj.get('verdict')}) "
          f"and gates sh ({sh_verdict}) agree", g.stdout[-800:])

    # The nightly scan over both images: gcu-tops's cell is check's verdict, but the +cu130 label chooses the CUDA
    # image for this build, so it does not count (exit code, the "verdict" step output, pins).
    outputs = os.path.join(tmp, "github-output-e")
    with Index(os.path.join(tmp, "index-e"), "flagcx", cx) as url:
        r = J.wc("scan", "--index", url, "--project", "flagcx", "--image", "gcu-tops", "--image", "cuda13.0", "--state",
                 os.path.join(tmp, "state-e"), "-q", "--no-cache", "--report", os.path.join(tmp, "report-e"),
                 "--github-output", outputs, env={"WHEELCHECK_OFFLINE": ""})
    report = json.load(open(os.path.join(tmp, "report-e", "report.json")))
    cells = {res["image"]: res for w in report["wheels"] for res in w["results"]}
    tops, cuda = cells.get("gcu-tops", {}), cells.get("cuda13.0", {})
    said = open(outputs).read() if os.path.exists(outputs) else ""
    check(tops.get("verdict") == doc.get("verdict") and tops.get("counted") is False and cuda.get("counted") is True
          and r.returncode == 0 and "verdict=unknown" in said,
          f"e. the scan shows check's verdict on gcu-tops ({tops.get('verdict')}) without counting it (the label "
          f"chooses cuda13.0): exit {r.returncode}, step output {said.split()}", json.dumps(tops)[:600] + r.stderr[-500:])

    # --- f. integrity first --------------------------------------------------------------------------------------
    gems = members_of(J.sample(J.GEMS), os.path.join(build, "gems"))
    lib = next(a for a, _ in gems if a.endswith(".so"))
    bad = {"a RECORD that does not match": pack("flag_gems_cpp_cuda-5.4.9-cp312-cp312-linux_x86_64.whl", gems,
                                                 tamper=[lib])}
    with open(gems[0][1], "rb") as f:
        data = f.read()
    info = "flag_gems_cpp_cuda-5.4.8.dist-info"
    bad["a ../ member"] = raw_zip(os.path.join(out, "flag_gems_cpp_cuda-5.4.8-cp312-cp312-linux_x86_64.whl"), [
        (gems[0][0], data), ("../../etc/evil.so", data),
        (f"{info}/METADATA", b"Metadata-Version: 2.1\nName: flag_gems_cpp_cuda\nVersion: 5.4.8\n"),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n"),
        (f"{info}/RECORD", b"")])
    bad["no .dist-info"] = raw_zip(os.path.join(out, "flag_gems_cpp_cuda-5.4.7-cp312-cp312-linux_x86_64.whl"),
                                   [(a, open(p, "rb").read()) for a, p in gems])
    for what, w in bad.items():
        for image in ("cuda13.0", "ascend-cann9"):
            r = wc(w, "--image", image)
            doc = loads(wc(w, "--image", image, "--json"))
            integrity = [k for k in kinds(doc) if k in ("record", "archive", "unreadable-member")]
            check(r.returncode == 2 and (integrity or doc.get("error")),
                  f"f. a wheel with {what} on {image}: exit 2 and an integrity finding (exit {r.returncode}, "
                  f"{integrity or doc.get('error')})", r.stdout[-1000:] + r.stderr[-500:])
            g = J.sh(f'set -e; eval "$(wheelcheck gates {w} --image {image})"; echo "REACHED"', env=hermetic)
            check(g.returncode != 0 and "REACHED" not in g.stdout,
                  f"f. gates of a wheel with {what} on {image} stop a set -e setup script (exit {g.returncode})",
                  g.stdout[-600:] + g.stderr[-600:])
            gs = wc("gates", w, "--image", image)
            env = gate_values(gs.stdout)
            check(gs.returncode == 2 and env.get("FLAGOS_USE_FLAGGEMS_CPP", "").strip("'\"") == "0",
                  f"f. gates of a wheel with {what} on {image}: exit 2, every gate off (fail closed)",
                  gs.stdout[-800:] + gs.stderr[-400:])

    # --- h. what FlagOS's images install on Ubuntu is not absent ------------------------------------------------
    # g++'s runtime (libgomp from gcc -fopenmp, libatomic from -latomic), libgfortran5 and, on 22.04, libtinfo5
    # (stand-ins named as their sonames: the need is what counts). Never a missing library on the FlagOS images
    # that install them, so no route is gated off for them; Ubuntu 24.04 has no libtinfo5 (I7), stated absent.
    run(build, "gcc", "-shared", "-fPIC", "-fopenmp", "-o", "libomp_sum.so",
        write(build, "omp.c", "int omp_sum(const int*v,int n){int s=0;\n#pragma omp parallel for reduction(+:s)\n"
                              "for(int i=0;i<n;++i)s+=v[i];return s;}\n"))
    run(build, "gcc", "-shared", "-fPIC", "-o", "libatom.so", write(build, "atom.c",
        "#include <stdatomic.h>\ntypedef struct{long a,b,c;}big;_Atomic big g;big get(void){return atomic_load(&g);}\n"),
        "-Wl,--no-as-needed", "-latomic")
    for soname, sym in (("libgfortran.so.5", "_gfortran_st_write"), ("libtinfo.so.5", "tigetstr")):
        stub = "stub-" + soname
        run(build, "gcc", "-shared", "-fPIC", "-o", stub, f"-Wl,-soname,{soname}",
            write(build, stub + ".c", f"int {sym}(void){{return 0;}}\n"))
        os.symlink(stub, os.path.join(build, f"lib{sym}stub.so"))
        run(build, "gcc", "-shared", "-fPIC", "-o", f"use-{sym}.so", write(build, f"use-{sym}.c",
            f"int {sym}(void);\nint use(void){{return {sym}();}}\n"), "-L.", f"-l{sym}stub")
    needs = {"libgomp.so.1": "libomp_sum.so", "libatomic.so.1": "libatom.so",
             "libgfortran.so.5": "use-_gfortran_st_write.so", "libtinfo.so.5": "use-tigetstr.so"}
    for soname, lib in needs.items():
        w = pack(f"needs_{soname.split('.')[0][3:]}-1.0-py3-none-linux_x86_64.whl", [(f"pkg/{lib}",
                                                                                     os.path.join(build, lib))])
        images = ["flagos-runtime-cambricon-neuware4.4.3"] + ([] if soname == "libtinfo.so.5" else
                                                               ["flagos-runtime-cambricon-neuware4.7.2", "cuda13.0"])
        for image in images:
            doc = loads(wc(w, "--image", image, "--json"))
            # Found, or (libgfortran5 on 22.04, which the reference does not list) "not stated": a condition.
            missing = [f for f in doc.get("findings", []) if f["kind"] == "missing-library" and f["library"] == soname
                       and f["severity"] == "error"]
            check(doc.get("verdict") not in ("incompatible", None) and not missing,
                  f"h. a member needing {soname} on {image}: never a missing library there ({doc.get('verdict')})",
                  json.dumps(doc.get("findings", []))[:1200])
        if soname == "libtinfo.so.5":
            doc = loads(wc(w, "--image", "cuda13.0", "--json"))
            check(doc.get("verdict") == "incompatible" and "libtinfo.so.5" in names_in(doc, "library"),
                  "h. libtinfo.so.5 on cuda13.0 (Ubuntu 24.04, whose archive has no libtinfo5): stated absent, "
                  "INCOMPATIBLE naming it", json.dumps(doc.get("findings", []))[:1200])

    # --- g. pip as the referee of "not targeted" ----------------------------------------------------------------
    pip_referee(J, wc, wheels, tmp)


# The images the referee asks pip about, as pip's options say them: (arch, glibc, Python).
REFEREE_IMAGES = {"cuda13.0": ("x86_64", "2.39", "3.12"), "gcu-tops": ("x86_64", "2.39", "3.12"),
                  "ascend-cann9": ("aarch64", None, "3.12")}


def pip_would_install(wheel, arch, glibc, python, tmp):
    """pip's own answer, offline: `pip download` of exactly this file for that platform and Python."""
    plats = [f"linux_{arch}"]
    if glibc:
        major, minor = glibc.split(".")
        plats += [f"manylinux_{major}_{m}_{arch}" for m in range(17, int(minor) + 1)]
        plats += [f"manylinux2014_{arch}"]
    else:
        plats += [f"manylinux_2_17_{arch}", f"manylinux2014_{arch}"]
    d = tempfile.mkdtemp(dir=tmp)
    shutil.copy(wheel, d)
    name = os.path.basename(wheel).split("-")[0]
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-index", "--find-links", d, "--only-binary=:all:",
            "--python-version", python, "--implementation", "cp", "-d", os.path.join(d, "out"), "--quiet",
            "--disable-pip-version-check"]
    for p in plats:
        argv += ["--platform", p]
    r = subprocess.run(argv + [name], capture_output=True, text=True)
    return r.returncode == 0


def pip_referee(J, wc, wheels, tmp):
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        print("  skip  g. pip is not installed for this Python: no referee for \"pip would not install\" "
              "(to run it, install python3-pip)")
        return
    compared, diff = 0, []
    for name, w in sorted(wheels.items()):
        for image, (arch, glibc, python) in REFEREE_IMAGES.items():
            doc = loads(wc(w, "--image", image, "--json"))
            if "targeted" not in doc:
                continue  # a wheel that could not be read (f.): no cell
            pip = pip_would_install(w, arch, glibc, python, tmp)
            compared += 1
            if doc["targeted"] != pip:
                diff.append(f"{name} on {image}: wheelcheck targeted={doc['targeted']}, pip installs={pip}")
    check = J.check
    check(compared > 0 and not diff, f"g. \"not targeted\" exactly where pip would not install it ({compared} "
          "wheel x image cells, pip download offline as the referee)", "\n".join(diff[:8]))

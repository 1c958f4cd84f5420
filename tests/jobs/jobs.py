#!/usr/bin/env python3
"""The job suite: the three everyday jobs run as their users run them, end to end, on roots, wheels and
indexes built at test time (tests/jobs/build.py), each case of issue 25's "Why" pinned.

  jobs.py --wheelcheck BIN --samples DIR --db DIR JOB

JOB is one of:
  setup        a setup script under `set -euo pipefail` that evals the gates, and its error paths (a missing
               wheel, an unknown image, a mistyped option: the script stops, every gate off); github format
  routes       a core route off is incompatible, whatever optional route also holds the member
  renamed      a wheel saved under a short name (flaggems.whl) is read by its .dist-info
  pythons      probe a root with four Pythons, then check cp310/cp311/cp312/cp313/abi3 wheels against it
  torch        a torch in the image that cannot load (libc10.so needs GLIBC_2.38 on glibc 2.36)
  scan         the nightly scan of seven loopback FlagOS vendor indexes with the default images, its pins
  consistency  check, gates, the matrix and the scan give one verdict and reason per sample wheel x db image
  output       the answer first: routes and what to set, one line for another machine, --image all's exit,
               --assume, the JSON contract (option errors, a missing file in a batch)
  env          environments (tests/jobs/env_job.py): pylock.toml, a pip report and requirements.txt checked as
               installed, --with replacing the image's torch, export tables from a published wheel, image fill
  env-corpus   the same with Debian's real libc10 of PyTorch 2.14 and 2.6 as pip-shaped torch wheels (label corpus;
               skips without the corpus)
  action       the GitHub Action (tests/jobs/ci_action.py): action.yml's steps run as the runner runs them (outputs,
               $GITHUB_ENV, the summary, SARIF, JUnit, the exit status, inputs that try injection, the install
               into a venv from dist/ or a stand-in wheel), and the pre-commit hook on lock files of the samples
               (the worst exit)
  ci           CI's formats and the config file (tests/jobs/ci_job.py)
  shards       the sharded scan (tests/jobs/shards_job.py): N = 1, 2, 3, 7 shards merged against the unsharded scan
               byte for byte, two nights, a shard killed mid-run and rerun, a missing shard, refusals
  shards-ci    samples/nightly-scan.yml run as GitHub's runner runs it (matrix, artifacts, cache; two nights) and
               samples/k8s/*.yaml validated against the Job schema and run per index (tests/jobs/shards_ci.py)
  truth        issue 59's trial (tests/jobs/truth_job.py): labels are claims (one verdict under every name), a
               member's machine is the loader's, integrity first on every path, pip as the referee of "not targeted"
  sentences    issue 60's trial (tests/jobs/sentences_job.py): every sentence true, pip and CPython as referees
               (no RECORD, a tampered RECORD, extension suffix, PyInit_, a static interpreter and libpython)
  judged       issue 39's trial (tests/jobs/judged_job.py): a package judged on its own members (gates --with,
               a pylock.toml's JSON, SARIF and JUnit), declared glibc over a layer's tables, a tampered wheel's
               gates fail closed, Requires-Dist pins, [[accept]] rules refused, a bare wheelcheck's usage line
Exit 0 when every assertion holds, 1 otherwise (each failure named), 77 when a tool it needs is absent.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build  # noqa: E402
import ci_action  # noqa: E402
import ci_job  # noqa: E402
import env_job  # noqa: E402
import judged_job  # noqa: E402
import shards_ci  # noqa: E402
import shards_job  # noqa: E402
import sentences_job  # noqa: E402
import truth_job  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from wheelcheck_test import Checks  # noqa: E402

CHECKS = Checks()
check, FAILURES = CHECKS.check, CHECKS.failures
A = None


def wc(*args, env=None, cwd=None):
    # Hermetic by default (as the unit tests are: tests/support.cpp): the db's images name PyTorch's index for
    # their torch tables, and what an unreachable host answers (a refused connection, a failed DNS lookup) is the
    # machine's. A job that fetches from its loopback index passes WHEELCHECK_OFFLINE="".
    e = dict(os.environ, WHEELCHECK_DB=A.db, NO_COLOR="1")
    e.setdefault("WHEELCHECK_OFFLINE", "1")
    e.pop("GITHUB_ENV", None)
    if env:
        e.update(env)
    return subprocess.run([A.wheelcheck, *args], capture_output=True, text=True, env=e, cwd=cwd)


def sh(script, env=None):
    """Runs a setup script with bash, wheelcheck on its PATH."""
    e = dict(os.environ, WHEELCHECK_DB=A.db, NO_COLOR="1",
             PATH=os.path.dirname(os.path.abspath(A.wheelcheck)) + ":" + os.environ["PATH"])
    e.setdefault("WHEELCHECK_OFFLINE", "1")
    e.pop("GITHUB_ENV", None)
    if env:
        e.update(env)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=e)


def sample(name):
    path = os.path.join(A.samples, "flagos", name)
    if not os.path.exists(path):
        print(f"skip: {path} is not built (cmake --build build --target samples)")
        sys.exit(77)
    return path


GEMS = "flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl"
TREE = "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl"
CX = "flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl"
CX_ASCEND = "flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl"
ALL_GATES = ["USE_TLE_DIST", "FLAGOS_USE_FLAGGEMS_CPP", "FLAGOS_BUILD_FLAGGEMS_CPP", "USE_C_EXTENSION",
             "TORCH_DEVICE_BACKEND_AUTOLOAD", "WHEELCHECK_SKIP_FLAGCX"]
PRINT_ENV = "; ".join(f'echo "{g}=${{{g}-unset}}"' for g in ALL_GATES + ["WHEELCHECK_VERDICT"])


def env_of(out):
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line and not line.startswith("#"))


# --- setup: eval "$(wheelcheck gates ...)" under set -euo pipefail -----------------------------------------

def job_setup(tmp):
    tree, gems, cx = sample(TREE), sample(GEMS), sample(CX)
    ok = sh(f'set -euo pipefail\neval "$(wheelcheck gates {tree} {gems} --with {cx} --image cuda13.0)"\n'
            f'{PRINT_ENV}\necho continued')
    env = env_of(ok.stdout)
    check(ok.returncode == 0 and "continued" in ok.stdout, "the setup script runs through", ok.stdout + ok.stderr)
    check(env.get("USE_TLE_DIST") == "0", "FlagTree's TLE loader is turned off (libflagcx.so needs CUDA 12)", ok.stdout)
    check(env.get("FLAGOS_USE_FLAGGEMS_CPP") == "0" and env.get("USE_C_EXTENSION") == "0",
          "FlagGems' C++ route is turned off (c10 ABI)", ok.stdout)
    check(env.get("WHEELCHECK_VERDICT") in ("degraded", "unknown"), "the verdict is set", ok.stdout)

    cases = {
        "a missing wheel": f"wheelcheck gates {tmp}/nonexist.whl --image cuda13.0",
        "an unknown image": f"wheelcheck gates {gems} --image cuda99.9",
        "a mistyped option": f"wheelcheck gates {gems} --imag cuda13.0",
        "a batch with one missing wheel": f"wheelcheck gates {gems} {tmp}/typo.whl --image cuda13.0",
        "no wheel at all": "wheelcheck gates --image cuda13.0",
    }
    for what, cmd in cases.items():
        r = sh(f'set -euo pipefail\neval "$({cmd})"\necho continued')
        check(r.returncode != 0 and "continued" not in r.stdout, f"{what}: `set -e` stops the script",
              r.stdout + r.stderr)
        # Without set -e the script goes on, but with every route off and the verdict "error".
        r = sh(f'eval "$({cmd} 2>/dev/null)"; echo "eval=$?"; {PRINT_ENV}')
        env = env_of(r.stdout)
        check(env.get("eval") == "2", f"{what}: the eval itself returns 2", r.stdout)
        check(all(env.get(g) in ("0", "1") for g in ALL_GATES) and env.get("WHEELCHECK_VERDICT") == "error",
              f"{what}: every gate is off and WHEELCHECK_VERDICT=error (fail closed)", r.stdout)

    gh = os.path.join(tmp, "github_env")
    r = wc("gates", os.path.join(tmp, "nonexist.whl"), "--image", "cuda13.0", "--format", "github",
           env={"GITHUB_ENV": gh})
    text = open(gh).read() if os.path.exists(gh) else ""
    check(r.returncode == 2, "github: a missing wheel fails the step (exit 2)", r.stdout + r.stderr)
    check("WHEELCHECK_VERDICT=error" in text and "USE_TLE_DIST=0" in text,
          "github: $GITHUB_ENV gets every gate off and the verdict error", text)
    check("::error" in r.stdout, "github: an ::error:: annotation says why", r.stdout)
    r = wc("gates", os.path.join(tmp, "nonexist.whl"), "--image", "cuda13.0", "--json")
    doc = json.loads(r.stdout or "{}")
    check(doc.get("verdict") == "error" and doc.get("gates", {}).get("USE_TLE_DIST") == "0",
          "json: the gates document says error, every gate off", r.stdout)


# --- routes --------------------------------------------------------------------------------------------

def job_routes(tmp):
    cx = sample(CX)
    r = sh(f'set -euo pipefail\neval "$(wheelcheck gates {cx} --image gcu-tops)"\n{PRINT_ENV}')
    env = env_of(r.stdout)
    check(env.get("WHEELCHECK_VERDICT") == "incompatible",
          "FlagCX on a TOPS image: its core route is off, so it is incompatible, not degraded", r.stdout)
    j = json.loads(wc(cx, "--image", "gcu-tops", "--json").stdout)
    core = [rt for rt in j["routes"] if rt["name"] == "flagcx"]
    check(core and not core[0]["optional"] and not core[0]["available"], "the flagcx route is core and off", j["routes"])
    bad = os.path.join(tmp, "rules.json")
    rules = json.load(open(os.path.join(A.db, "rules", "flagos.json")))
    rules["routes"][0]["members"].append("flagcx/libflagcx.so")  # flagtree-core (core) and tle-dist (optional)
    json.dump(rules, open(bad, "w"))
    r = wc(cx, "--image", "cuda13.0", "--rules", bad)
    check(r.returncode == 2 and "also a member of the core route" in r.stderr,
          "a rules file listing a member in a core and an optional route is refused", r.stderr)


# --- renamed ---------------------------------------------------------------------------------------------

def job_renamed(tmp):
    gems = sample(GEMS)
    short = os.path.join(tmp, "flaggems.whl")
    shutil.copy(gems, short)
    a = wc(gems, "--image", "cuda13.0", "--json", "--no-cache")
    b = wc(short, "--image", "cuda13.0", "--json", "--no-cache")
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    check(b.returncode == a.returncode and jb["verdict"] == ja["verdict"],
          f"flaggems.whl gets the same verdict as its real name ({ja['verdict']})", b.stderr)
    check(b.stderr.count("warning") == 1 and GEMS in b.stderr, "one warning names the file name it should have",
          b.stderr)
    t = wc(short, "--image", "cuda13.0", "--no-cache")
    check("flaggems-cpp (optional) is off" in t.stdout, "the text of the renamed wheel is the check's", t.stdout[:400])
    junk = os.path.join(tmp, "notes.whl")
    open(junk, "w").write("not a zip\n")
    r = wc(junk, "--image", "cuda13.0")
    check(r.returncode == 2 and "not a zip" in r.stderr, "a file that is no wheel at all is a clear error", r.stderr)


# --- pythons: probe, then check ---------------------------------------------------------------------------

def job_pythons(tmp):
    root = build.many_pythons_root(os.path.join(tmp, "root"))
    desc = os.path.join(tmp, "ci.json")
    p = wc("probe", "--root", root, "--name", "ci", "-o", desc, "-q")
    check(p.returncode == 0, "probe --root of a root with four Pythons (pyenv's and Debian's)", p.stderr)
    listed = [py["version"] for py in json.load(open(desc)).get("pythons", [])]
    check(sorted(listed) == ["3.10", "3.11", "3.12", "3.13"], f"every Python is recorded ({listed})", listed)
    check(listed and listed[0] == "3.11", "the default python3 (Debian's 3.11) is listed first", listed)
    wheels = tmp + "/wheels"
    os.makedirs(wheels)
    cases = [("cp310-cp310-linux_x86_64", "3.10", ["PyModule_Create2"]),
             ("cp311-cp311-linux_x86_64", "3.11", ["PyModule_Create2", "Py_Version"]),
             ("cp312-cp312-linux_x86_64", "3.12", ["PyModule_Create2", "PyUnstable_Long_IsCompact"]),
             ("cp313-cp313-linux_x86_64", "3.13", ["PyUnstable_Module_SetGIL"]),
             ("cp310-abi3-linux_x86_64", "3.13", ["PyModule_Create2"])]
    for tag, want, symbols in cases:
        whl = build.extension_wheel(wheels, "ext", tag, symbols)
        for image in (desc, root):
            r = wc(whl, "--image", image, "--json", "--no-cache")
            j = json.loads(r.stdout)
            got = (j.get("python") or {}).get("version")
            where = "the probed description" if image == desc else "the root probed on the fly"
            check(r.returncode == 0 and got == want,
                  f"{tag} against {where}: installed for Python {want} and compatible (got {got}, {j['verdict']})",
                  json.dumps(j["findings"][:2], indent=1))
        text = wc(whl, "--image", desc, "--no-cache").stdout
        check(f"Python {want}" in text and "Pythons" in text, f"{tag}: the text says which Python it went to", text)
    old = build.extension_wheel(wheels, "old", "cp39-cp39-linux_x86_64", ["PyModule_Create2"])
    r = wc(old, "--image", desc, "--no-cache")
    check(r.returncode == 1 and len(r.stdout.strip().splitlines()) == 1 and "3.9" in r.stdout.replace("cp39", "3.9"),
          "a cp39 wheel (no Python 3.9 there) is one line and exit 1", r.stdout)
    j = json.loads(wc(old, "--image", desc, "--json", "--no-cache").stdout)
    check([f["kind"] for f in j["findings"] if f["severity"] == "error"] == ["tag-python"],
          "its one error is tag-python", j["findings"])


# --- torch that cannot load -------------------------------------------------------------------------------

def job_torch(tmp):
    results = {}
    for bad in (False, True):
        root = os.path.join(tmp, "bad" if bad else "good")
        lib = build.torch_root(root, needs_glibc_238=bad)
        whl = build.extension_wheel(os.path.join(tmp, "w" + str(bad)), "usestorch", "cp311-cp311-linux_x86_64",
                                    ["c10_version", "PyModule_Create2"], requires_dist=["torch==2.10.0"],
                                    needed=[(lib, "libc10.so")])
        r = wc(whl, "--image", root, "--json", "--no-cache")
        results[bad] = (r, json.loads(r.stdout))
        # The same library reached through the member's RUNPATH, without Requires-Dist: the member's error.
        reach = build.extension_wheel(os.path.join(tmp, "r" + str(bad)), "reachestorch", "cp311-cp311-linux_x86_64",
                                      ["c10_version", "PyModule_Create2"], needed=[(lib, "libc10.so")],
                                      runpath="$ORIGIN/../torch/lib")
        r = wc(reach, "--image", root, "--json", "--no-cache")
        results[("reach", bad)] = (r, json.loads(r.stdout))
    r, j = results[False]
    check(j["verdict"] == "compatible", "torch that loads: the wheel that needs it is compatible",
          json.dumps(j["findings"][:3], indent=1))
    r, j = results[True]
    said = [f for f in j["findings"] if "cannot be imported" in f["explanation"]]
    check(r.returncode == 1 and j["verdict"] == "incompatible", "torch that cannot load: the wheel is incompatible",
          json.dumps(j["findings"][:3], indent=1))
    check(said and "GLIBC_2.38" in said[0]["explanation"] and "2.36" in said[0]["explanation"],
          "said as the image's: torch cannot be imported, libc10.so needs GLIBC_2.38, the image has glibc 2.36",
          json.dumps(said, indent=1))
    _, j = results[("reach", False)]
    check(j["verdict"] == "compatible", "a member reaching a torch that loads is compatible", json.dumps(j["findings"][:2]))
    r, j = results[("reach", True)]
    said = [f for f in j["findings"] if "cannot be imported" in f["explanation"] and f["severity"] == "error"]
    check(r.returncode == 1 and said and said[0]["loaded_by"] == ["reachestorch/_ext.cpython-311-x86_64-linux-gnu.so"],
          "reached through RUNPATH, without Requires-Dist: the error of the member whose load reaches it",
          json.dumps(j["findings"][:2], indent=1))


# --- the nightly scan ------------------------------------------------------------------------------------

VENDORS = ["nvidia", "metax", "ascend", "dcu", "musa", "ppu", "gcu"]


class Index:
    """Seven FlagOS vendor indexes on loopback (tests/net/server.py)."""

    def __init__(self, tmp):
        self.tree = os.path.join(tmp, "indexes")
        layout = {"nvidia": [GEMS, CX, TREE], "ascend": [CX_ASCEND]}
        for vendor in VENDORS:
            os.makedirs(os.path.join(self.tree, f"flagos-pypi-{vendor}"), exist_ok=True)
            for w in layout.get(vendor, []):
                project = w.split("-")[0].replace("_", "-")
                d = os.path.join(self.tree, f"flagos-pypi-{vendor}", project)
                os.makedirs(d, exist_ok=True)
                shutil.copy(sample(w), d)
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "net", "server.py"), "--root",
                                      self.tree], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        self.port = int(line.split()[1])

    def urls(self):
        args = []
        for vendor in VENDORS:
            args += ["--index", f"http://127.0.0.1:{self.port}/flagos-pypi-{vendor}/simple/"]
        return args

    def close(self):
        self.proc.kill()
        self.proc.wait()


PROJECTS = ["--project", "flag-gems-cpp-cuda", "--project", "flagcx", "--project", "flagtree"]


def is_cuda(image):
    """The db's CUDA images: the CI's (cuda13.0, cuda13.3) and FlagOS's published NVIDIA ones."""
    return image.startswith("cuda") or image.startswith("flagos-base-nvidia-") or image.startswith("flagos-runtime-nvidia-")


def job_scan(tmp):
    idx = Index(tmp)
    try:
        report, pins = os.path.join(tmp, "report"), os.path.join(tmp, "pins.env")
        r = wc("scan", *idx.urls(), *PROJECTS, "--state", tmp + "/state", "--report", report, "--pins", pins, "-q",
               "--no-cache")
        check(r.returncode in (0, 1), f"the nightly scan runs (exit {r.returncode})", r.stderr[-2000:])
        doc = json.load(open(os.path.join(report, "report.json")))
        images = doc["images"]
        check("debian12" not in images and "debian13" not in images, f"the generic debian images are not scanned ({images})")
        for p in doc["pins"]:
            if p["project"] != "flag-gems-cpp-cuda":
                continue
            check(is_cuda(p["image"]), f"flag-gems-cpp-cuda is pinned only for CUDA images (here {p['image']})",
                  json.dumps(p, indent=1))
        pinned = [p["image"] for p in doc["pins"] if p["project"] == "flag-gems-cpp-cuda" and p["pick"]]
        check(pinned and all(is_cuda(i) for i in pinned), f"the CUDA images get its pin ({pinned})")
        cx = {p["image"]: p for p in doc["pins"] if p["project"] == "flagcx"}
        asc = cx.get("ascend-cann9") or {}
        why = {p["filename"]: p["reason"] for p in asc.get("passed_over", [])}
        check(asc and asc["pick"] is None and "libtorch_npu.so" in why.get(CX_ASCEND, ""),
              "the Ascend image pins no FlagCX: its Ascend build needs libtorch_npu.so, absent there",
              json.dumps(asc, indent=1))
        env = open(pins).read()
        for vendor_image in ("metax-maca3.8", "dcu-dtk26.04", "musa5.1", "ppu", "gcu-tops", "debian12"):
            line = [l for l in env.splitlines() if vendor_image.replace(".", "_").replace("-", "_").upper() in l.upper()
                    and "FLAG_GEMS_CPP" in l.upper() and "=" in l and not l.startswith("#")]
            check(not any("5.4.0" in l for l in line), f"pins.env pins no CUDA FlagGems for {vendor_image}", "\n".join(line))
        # --image takes what the check takes: a root folder, a description file.
        root = build.many_pythons_root(os.path.join(tmp, "rootfs"))
        r = wc("scan", *idx.urls(), "--project", "flagcx", "--image", root, "--state", tmp + "/state2", "-q",
               "--no-cache", "--report", tmp + "/report2")
        check(r.returncode in (0, 1) and "no such description" not in r.stderr,
              f"scan --image ./rootfs probes the folder, as the check does (exit {r.returncode})", r.stderr[-800:])
    finally:
        idx.close()


EXIT_OF = {"compatible": 0, "incompatible": 1, "degraded": 3, "unknown": 4, "not-targeted": 1}


def consistency_wheels(tmp):
    """The samples, and the trial's wheels that once made the paths disagree (issue 59): a wheel whose RECORD
    does not match (integrity first, whatever the image), and the FlagCX CUDA 13 build under a label that
    contradicts most images (+cu128)."""
    wheels = [sample(w) for w in (GEMS, TREE, CX, CX_ASCEND)] + [os.path.join(A.samples,
                                                                             "hello_native-1.0-cp311-cp311-linux_x86_64.whl")]
    sys.path.insert(0, os.path.join(HERE, "..", "tools"))
    import make_wheel  # noqa: E402
    out = os.path.join(tmp, "trial")
    gems = truth_job.members_of(sample(GEMS), os.path.join(out, "gems"))
    lib = next(a for a, _ in gems if a.endswith(".so"))
    wheels.append(make_wheel.write_wheel(os.path.join(out, "flag_gems_cpp_cuda-5.4.9-cp312-cp312-linux_x86_64.whl"),
                                         gems, tamper=[lib]))
    cx = truth_job.members_of(sample(CX), os.path.join(out, "cx"))
    wheels.append(make_wheel.write_wheel(os.path.join(out, "flagcx-0.9.0+cu128-cp312-cp312-linux_x86_64.whl"), cx))
    return wheels


def job_consistency(tmp):
    wheels = consistency_wheels(tmp)
    # Every image of the db (what --image all names): not its layers, nor the packaging targets.
    names = [i["name"] for i in json.loads(wc("images", "--json").stdout)
             if i["kind"] == "image" and i["group"] != "target"]
    # check, one cell at a time; the matrix (--image all --json); gates (sh comments: the verdict)
    matrix = {}
    for w in wheels:
        cells = json.loads(wc(w, "--image", "all", "--json").stdout)
        for c in cells:
            matrix[(os.path.basename(w), c["image"]["name"])] = (c["verdict"], c["headline"])
    single, gated, exits = {}, {}, {}
    for w in wheels:
        for n in names:
            r = wc(w, "--image", n, "--json")
            j = json.loads(r.stdout)
            key = (os.path.basename(w), n)
            single[key] = (j["verdict"], j["headline"])
            g = wc("gates", w, "--image", n, "--json")
            gj = json.loads(g.stdout)
            gated[key] = gj["wheels"][0]["verdict"] if gj.get("wheels") else gj.get("verdict")
            gs = wc("gates", w, "--image", n)
            sarif = wc(w, "--image", n, "--format", "sarif")
            integrity = any(f["kind"] in ("record", "archive", "unreadable-member") and f["severity"] == "error"
                            for f in j.get("findings", []))
            exits[key] = {"verdict": j["verdict"], "integrity": integrity, "check": r.returncode, "sarif": sarif.returncode, "gates --json": g.returncode,
                          "gates": gs.returncode,
                          "WHEELCHECK_VERDICT": truth_job.gate_values(gs.stdout).get("WHEELCHECK_VERDICT", "")}
    check(set(single) == set(matrix), f"the matrix has every cell ({len(matrix)} of {len(single)})")
    # One exit for one wheel and image: check's (JSON, SARIF; the text's is the same run's) is the verdict's, 2 where the wheel fails its
    # own integrity (whatever pip would do with it there); gates exits 0 once it could judge, 2 for such a wheel,
    # and its WHEELCHECK_VERDICT is check's verdict (not-targeted is incompatible there).
    diff = []
    for key, e in sorted(exits.items()):
        want_check = 2 if e["integrity"] else EXIT_OF[e["verdict"]]
        want_gates = 2 if e["integrity"] else 0
        got = (e["check"], e["sarif"], e["gates"], e["gates --json"])
        if got != (want_check, want_check, want_gates, want_gates) or (
                not e["integrity"] and e["WHEELCHECK_VERDICT"] != {"not-targeted": "incompatible"}.get(
                    e["verdict"], e["verdict"])):
            diff.append(f"{key}: {e}")
    check(not diff, f"check (--json, SARIF) and gates (sh, --json) give one verdict and exit in every cell "
          f"({len(exits)} wheel x image cells, {sum(e['integrity'] for e in exits.values())} failing integrity)",
          "\n".join(diff[:6]))
    diff = [k for k in single if matrix.get(k) != single[k]]
    check(not diff, "check and the matrix give the same verdict and reason in every cell",
          "\n".join(f"{k}: {single[k]} vs {matrix.get(k)}" for k in diff[:5]))
    # gates answers for one image: a wheel not for it is incompatible there (WHEELCHECK_VERDICT), which check's
    # JSON says as not-targeted.
    diff = [k for k in single if gated[k] != {"not-targeted": "incompatible"}.get(single[k][0], single[k][0])]
    check(not diff, "gates gives the same verdict in every cell",
          "\n".join(f"{k}: {single[k][0]} vs {gated[k]}" for k in diff[:5]))
    idx = Index(tmp)
    try:
        projects = []
        for p in ("flag-gems-cpp-cuda", "flagcx", "flagtree"):
            projects += ["--project", p]
        r = wc("scan", *idx.urls(), *projects, "--image", ",".join(names), "--state", tmp + "/state", "-q",
               "--no-cache", "--report", tmp + "/report", "--format", "sarif")
        doc = json.load(open(os.path.join(tmp, "report", "report.json")))
        scanned = {}
        for w in doc["wheels"]:
            for res in w["results"]:
                scanned[(w["filename"], res["image"])] = (res["verdict"], res["headline"])
        diff = [k for k in scanned if single.get(k) != scanned[k]]
        check(scanned and not diff, f"the scan gives the same verdict and reason as check ({len(scanned)} cells)",
              "\n".join(f"{k}: {single.get(k)} vs {scanned[k]}" for k in diff[:5]) + r.stderr[-500:])
        # The scan's SARIF files each finding under the rule check's SARIF files it under (a cxx-abi-mismatch is
        # never a plain missing-symbol), for the same wheel and image.
        scan_rules = sarif_rules(json.loads(r.stdout or '{"runs": []}'))
        paths = {os.path.basename(w): w for w in wheels}
        diff, compared = [], 0
        for (fname, image), ids in sorted(scan_rules.items()):
            if fname not in paths:
                continue
            # The publisher run (each new wheel on its own, once) files what `wheelcheck lint` files.
            own_run = (wc("lint", paths[fname], "--format", "sarif", "--no-config") if image == "publisher" else
                       wc(paths[fname], "--image", image, "--format", "sarif"))
            own = sarif_rules(json.loads(own_run.stdout)).get((fname, image), [])
            compared += 1
            if sorted(own) != sorted(ids):
                diff.append(f"{fname} on {image}: scan {sorted(ids)} vs check {sorted(own)}")
        check(compared and not diff, f"the scan's SARIF rule ids equal check's for the same wheel and image "
              f"({compared} cells)", "\n".join(diff[:5]))
    finally:
        idx.close()
    consistency_of_environments(wheels[:5], names, single, tmp)
    # The trial's wheels, each alone in a lock: the environment's verdict and exit are check's.
    diff, compared = [], 0
    for w in wheels[5:]:
        fname = os.path.basename(w)
        lock = os.path.join(tmp, f"pylock.{fname}.toml")
        name, version = fname.split("-")[:2]
        with open(lock, "w") as f:
            f.write(f'lock-version = "1.0"\ncreated-by = "jobs.py"\n[[packages]]\nname = "{name}"\n'
                    f'version = "{version}"\nwheels = [{{path = "{w}"}}]\n')
        for n in names:
            r = wc(lock, "--image", n, "--json")
            env = json.loads(r.stdout)
            e = exits[(fname, n)]
            compared += 1
            if r.returncode != e["check"] or (not e["integrity"] and env.get("verdict") != e["verdict"] and not (
                    e["verdict"] == "not-targeted" and env.get("verdict") == "incompatible")):
                diff.append(f"{fname} on {n}: the lock {env.get('verdict')} exit {r.returncode}; check {e['verdict']} "
                            f"exit {e['check']}")
    check(compared and not diff, f"a lock of one trial wheel gives check's verdict and exit ({compared} cells)",
          "\n".join(diff[:6]))


def sarif_rules(doc):
    """{(wheel file name, image): [ruleId, ...]} of a SARIF log (one run per image, a location per result)."""
    out = {}
    for run in doc.get("runs", []):
        image = run.get("automationDetails", {}).get("id", "").strip("/").split("/")[-1]
        for res in run.get("results", []):
            uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            name = urllib.parse.unquote(os.path.basename(uri.split("#")[0]))
            out.setdefault((name, image), []).append(res["ruleId"])
    return out


def own_findings(report):
    """A report's findings as comparable tuples (what a package's own members fail on)."""
    return sorted((f["kind"], f["severity"], f["member"], f.get("object", ""), f["library"], f["symbol"],
                   f["required_version"], f["classification"]) for f in report["findings"])


def consistency_of_environments(wheels, names, single, tmp):
    """Each package of a lock, checked in the lock (the others installed beside it, only providing) and checked
    alone, gives the same verdict and the same findings, on every db image, for every sample. Two locks: the
    FlagOS CUDA set with the x86_64 hello wheel, and the Ascend FlagCX build (a second flagcx)."""
    sets = [[w for w in wheels if "+ascend" not in w], [w for w in wheels if "+ascend" in w]]
    compared, diff, missing = 0, [], []
    for k, members in enumerate(sets):
        lock = os.path.join(tmp, f"pylock.set{k}.toml")
        with open(lock, "w") as f:
            f.write('lock-version = "1.0"\ncreated-by = "jobs.py"\n')
            for w in members:
                name, version = os.path.basename(w).split("-")[:2]
                f.write(f'[[packages]]\nname = "{name}"\nversion = "{version}"\nwheels = [{{path = "{w}"}}]\n')
        for n in names:
            r = wc(lock, "--image", n, "--json")
            env = json.loads(r.stdout)
            in_lock = {p["file"]: p for p in env["packages"] if p.get("report")}
            for w in members:
                fname = os.path.basename(w)
                alone = json.loads(wc(w, "--image", n, "--json").stdout)
                if not alone["targeted"]:
                    continue  # the installer picks no wheel of it for this image: nothing to compare
                p = in_lock.get(fname)
                if p is None:
                    missing.append(f"{fname} on {n}: checked alone ({alone['verdict']}), absent from the lock's report")
                    continue
                compared += 1
                got = p["report"]
                if (got["verdict"], own_findings(got)) != (alone["verdict"], own_findings(alone)):
                    diff.append(f"{fname} on {n}: in the lock {got['verdict']} {own_findings(got)[:3]}; alone "
                                f"{alone['verdict']} {own_findings(alone)[:3]}")
                other = [m for m in (got.get("members") or []) if not any(
                    m["path"].startswith(prefix) for prefix in member_prefixes(w))]
                if other:
                    diff.append(f"{fname} on {n}: its report in the lock holds members of other packages: "
                                f"{[m['path'] for m in other][:3]}")
    check(compared > 0 and not diff and not missing,
          f"each package of a lock gives the same verdict and findings as alone ({compared} package x image cells)",
          "\n".join((diff + missing)[:6]))


def member_prefixes(wheel):
    """The top-level folders of a wheel's members (what makes a member its own)."""
    import zipfile
    with zipfile.ZipFile(wheel) as z:
        return sorted({n.split("/")[0] + "/" for n in z.namelist() if "/" in n})


# --- the answer first --------------------------------------------------------------------------------------

def job_output(tmp):
    gems, cx, asc = sample(GEMS), sample(CX), sample(CX_ASCEND)
    t = wc(gems, "--image", "cuda13.0").stdout
    check("flaggems-cpp (optional) is off" in t and "FLAGOS_USE_FLAGGEMS_CPP=0" in t,
          "the check says which route is off and what to set", t[:800])
    check("fails to import: flag_gems/c_operators" in t, "it names the module Python imports as what fails", t[:800])
    r = wc(asc, "--image", "cuda13.0")
    check(r.returncode == 1 and len(r.stdout.strip().splitlines()) == 1 and "aarch64 wheel, x86_64 image" in r.stdout,
          "a wheel for another machine is one line", r.stdout)
    # An image pip would not install it on is said in words and never counts; one it would is the loader's
    # verdict, whatever its label says (a CUDA 13 build on a TOPS image: libcudart.so.13 is not there).
    r = wc(cx, "--image", "cuda13.0,ascend-cann9,musa5.1")
    why = " ".join(c.get("not_targeted", "") for c in json.loads(wc(cx, "--image", "cuda13.0,ascend-cann9,musa5.1",
                                                                     "--json").stdout))
    check(r.returncode == 4 and "x86_64 wheel, aarch64 image" in why and "the image's Python is 3.10" in why,
          f"--image counts only the images pip would install it on (exit {r.returncode}: cuda13.0's unknown), in words",
          r.stdout)
    r = wc(cx, "--image", "all")
    cells = {c["image"]["name"]: c for c in json.loads(wc(cx, "--image", "all", "--json").stdout)}
    tops = cells.get("gcu-tops", {})
    check(r.returncode == 1 and tops.get("verdict") == "incompatible" and "libcudart.so.13" in tops.get("headline", ""),
          f"--image all: on gcu-tops the CUDA build is the loader's INCOMPATIBLE naming libcudart.so.13, never "
          f"'not targeted' for its label (exit {r.returncode})", json.dumps(tops)[:800])
    r = wc(cx, "--image", "cuda13.0")
    check(r.returncode == 4, "a CUDA wheel on the CUDA image without facts is unknown", r.stdout[-300:])
    conds = [l for l in r.stdout.splitlines() if "580.65.06" in l and "needs" in l.lower()]
    r = wc(cx, "--image", "cuda13.0", "--assume", "driver=580.95.05", "--assume", "gpu_archs=sm_90")
    check(r.returncode == 0 and "assumed: driver=580.95.05" in r.stdout,
          "--assume driver=... gpu_archs=... answers it, and says what it assumed", r.stdout[:600])
    j = json.loads(wc(cx, "--image", "cuda13.0", "--assume", "driver=580.95.05", "--json").stdout)
    check(any(a.startswith("driver=580.95.05") for a in j["assumptions"]), "the JSON lists the assumption", j["assumptions"])
    desc = os.path.join(tmp, "runner.json")
    base = json.load(open(os.path.join(A.db, "images", "cuda13.0.json")))
    base["name"] = "cuda13.0-runner"
    base["assumed"] = {"driver": "580.95.05", "gpu_archs": "sm_90"}
    json.dump(base, open(desc, "w"))
    r = wc(cx, "--image", desc)
    check(r.returncode == 0 and "assumed by the description" in r.stdout,
          "a description's assumed block does the same for a runner type", r.stdout[:600] + r.stderr)
    r = wc(gems, "--image", "cuda13.0", "--imag", "x", "--json")
    check(r.returncode == 2 and json.loads(r.stdout or "null") and "error" in json.loads(r.stdout),
          "a mistyped option with --json prints the JSON error object", r.stdout + r.stderr)
    r = wc(gems, os.path.join(tmp, "missing.whl"), cx, "--image", "cuda13.0", "--json")
    doc = json.loads(r.stdout)
    check(r.returncode == 2 and len(doc) == 3 and "error" in doc[1] and doc[2].get("verdict"),
          "a missing file in a batch is that entry's error; the others are checked", r.stdout[:500])
    check(all(isinstance(e["wheel"], dict) for e in doc), "every entry's wheel is an object")
    c = wc(cx, "--image", "cuda13.0").stdout
    check(c.count("because of the CUDA 13 runtime") == 1, "each condition is said once (the driver need)", c)
    local = [l for l in t.splitlines() if "local build" in l]
    check(len(local) == 1 and local[0].startswith("! the wheel:"), "the local-build warning is one line", "\n".join(local))
    m = wc(os.path.join(A.samples, "hello_native-1.0-cp311-cp311-linux_x86_64.whl"), "--image", "all").stdout
    check("tag-python" not in m and "tag-platform" not in m and "the image's Python is 3.12" in m,
          "matrix reasons are words, not codes", m)
    if shutil.which("script"):
        # On a terminal (a pty of 100 columns) the text is wrapped to its width; in a pipe lines stay whole.
        r = subprocess.run(["script", "-qc", f"stty cols 100; {A.wheelcheck} {gems} --image cuda13.0", "/dev/null"],
                           capture_output=True, text=True,
                           env=dict(os.environ, WHEELCHECK_DB=A.db, NO_COLOR="1", WHEELCHECK_OFFLINE="1"))
        widths = [len(l.rstrip("\r")) for l in r.stdout.splitlines()]
        check(widths and max(widths) <= 100, f"on a 100-column terminal no line is wider (widest {max(widths or [0])})",
              r.stdout[:600])
        check(max(len(l) for l in t.splitlines()) > 100, "in a pipe, lines are not cut")
    _ = conds


JOBS = {"setup": job_setup, "routes": job_routes, "renamed": job_renamed, "pythons": job_pythons,
        "torch": job_torch, "scan": job_scan, "consistency": job_consistency, "output": job_output,
        "env": lambda tmp: env_job.job_env(tmp, sys.modules[__name__]),
        "env-corpus": lambda tmp: env_job.job_env_corpus(tmp, sys.modules[__name__], os.environ.get(
            "WHEELCHECK_CORPUS", os.path.expanduser("~/.cache/wheelcheck-corpus"))),
        "action": lambda tmp: ci_action.job_action(tmp, sys.modules[__name__]),
        "ci": lambda tmp: ci_job.job_ci(tmp, sys.modules[__name__]),
        "judged": lambda tmp: judged_job.job_judged(tmp, sys.modules[__name__]),
        "truth": lambda tmp: truth_job.job_truth(tmp, sys.modules[__name__]),
        "sentences": lambda tmp: sentences_job.job_sentences(tmp, sys.modules[__name__]),
        "shards": lambda tmp: shards_job.job_shards(tmp, sys.modules[__name__]),
        "shards-ci": lambda tmp: shards_ci.job_shards_ci(tmp, sys.modules[__name__])}


def main():
    global A
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("job", choices=sorted(JOBS))
    A = ap.parse_args()
    if shutil.which("gcc") is None or shutil.which("bash") is None:
        print("skip: gcc and bash are needed to build the roots and run the setup scripts")
        return 77
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="wheelcheck-jobs-") as tmp:
        print(f"job {A.job}:")
        JOBS[A.job](tmp)
    print(f"{len(FAILURES)} failed ({time.time() - start:.1f} s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

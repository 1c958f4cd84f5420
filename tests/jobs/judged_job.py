"""The judged job (issue 39's trial): "checked together, judged alone", declared facts, fail-closed gates,
Requires-Dist pins and the settings file, on wheels compiled here with gcc/g++ and packed by
tests/tools/make_wheel.py (never committed binaries):

  flag_gems_cpp_cuda-5.4.1  the good FlagGems C++ wheel: libtriton_jit.so needs only libc10.so (the image's
                            torch provides it), Requires-Dist: torch
  flag_gems_cpp_cuda-5.4.2  the same, Requires-Dist: torch==2.9.0 (cuda13.0 has torch 2.10.0+cpu)
  flag_gems_cpp_cuda-5.4.3  the same, its RECORD lying about flag_gems/lib/libtriton_jit.so (--tamper)
  flagtree-0.6.2 (cp310)    triton/_C/libtriton.so needs __isoc23_strtol@GLIBC_2.38 (linked against a stub
                            libc.so.6 that defines it there)

Asserted, each against cuda13.0 unless said: the good wheel is compatible alone; with FlagTree (--with, and
in a pylock.toml) its report holds its own members only, and nothing of FlagTree's (libcudart.so.12) or of
torch's (libc10.so) turns its gate off; the lock's SARIF has a result per finding of each package's report,
located at that package's wheel or the lock, and its JUnit never fails on libc10.so; an image description
declaring glibc 2.35 over the ubuntu24.04 layer (tables up to GLIBC_2.39) makes the GLIBC_2.38 need a missing
version (text, JSON, SARIF), `image show` names the disagreement, and declaring 2.39 does not; a tampered wheel
stops a `set -e` setup script and turns every gate off; a Requires-Dist pin the image's torch does not admit is
a requires-dist finding that says what `--no-deps` leaves; [[accept]] rules that are a typo or never a
condition are refused; the lock of FlagTree and the good wheel is DEGRADED (its TLE route off), not UNKNOWN;
`--image all --json` says not-targeted (never incompatible) for each image a wheel is not for, and the text
NOT TARGETED; a bare `wheelcheck` is one usage line.
"""
import json
import os
import shutil
import subprocess
import sys
import urllib.parse
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import make_wheel  # noqa: E402

GOOD = "flag_gems_cpp_cuda-5.4.1-cp312-cp312-linux_x86_64.whl"
PINNED = "flag_gems_cpp_cuda-5.4.2-cp312-cp312-linux_x86_64.whl"
TAMPERED = "flag_gems_cpp_cuda-5.4.3-cp312-cp312-linux_x86_64.whl"
OLD_GLIBC = "flagtree-0.6.2-cp310-cp310-linux_x86_64.whl"
JIT = "flag_gems/lib/libtriton_jit.so"
OPS = "flag_gems/c_operators.cpython-312-x86_64-linux-gnu.so"
# What each package's own members start with (a member of another package in its report is a leak).
PREFIX = {"flagtree": "triton/", "flag-gems-cpp-cuda": "flag_gems/"}
# Every gate's off value (WHEELCHECK_SKIP_FLAGCX is off when it is 1).
OFF = {"USE_TLE_DIST": "0", "FLAGOS_USE_FLAGGEMS_CPP": "0", "FLAGOS_BUILD_FLAGGEMS_CPP": "0",
       "USE_C_EXTENSION": "0", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "WHEELCHECK_SKIP_FLAGCX": "1"}

LIBC_MAP = """GLIBC_2.2.5 { global: strlen; local: *; };
GLIBC_2.38 { global: __isoc23_strtol; } GLIBC_2.2.5;
"""
LIBC_C = ("long __isoc23_strtol(const char*a,char**b,int c){return 0;}\n"
          "unsigned long strlen(const char*s){return 0;}\n")
TRITON_C = ("long __isoc23_strtol(const char*,char**,int);\n"
            "long triton_parse(const char*s){return __isoc23_strtol(s,0,10);}\n")


def image_description(libc_version):
    return {"schema": "wheelcheck-image/1", "name": "ubuntu22-like", "kind": "image",
            "layers": ["ubuntu24.04", "python3.10"], "libc": {"kind": "glibc", "version": libc_version}}


def compile_(build, *argv):
    """Runs a compiler in the build folder; a failure raises with its stderr."""
    r = subprocess.run(list(argv), cwd=build, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}:\n{r.stderr}")


def source(build, name, text):
    with open(os.path.join(build, name), "w") as f:
        f.write(text)
    return name


def build_wheels(tmp):
    """The trial's wheels (tests' port of the issue's build.sh), {file name: path}."""
    build, out = os.path.join(tmp, "build"), os.path.join(tmp, "wheels")
    os.makedirs(build)
    os.makedirs(out)
    # libc10.so <- libtriton_jit.so <- c_operators.so ($ORIGIN/lib), as FlagGems ships them.
    compile_(build, "g++", "-shared", "-fPIC", "-o", "libc10.so", "-Wl,-soname,libc10.so",
             source(build, "c10.cpp", 'extern "C" int c10_marker() { return 1; }\n'))
    compile_(build, "g++", "-shared", "-fPIC", "-o", "libtriton_jit.so", "-Wl,-soname,libtriton_jit.so",
             source(build, "jit.cpp", 'extern "C" int triton_jit_ok() { return 0; }\n'),
             "-Wl,--no-as-needed", "-L.", "-lc10")
    compile_(build, "g++", "-shared", "-fPIC", "-o", "c_operators.so",
             source(build, "ops.cpp", 'extern "C" int PyInit_c_operators() { return 0; }\n'),
             "-Wl,--no-as-needed", "-Wl,-rpath,$ORIGIN/lib", "-L.", "-ltriton_jit")
    # libtriton.so needing __isoc23_strtol@GLIBC_2.38, from a stub libc.so.6 that defines it there.
    compile_(build, "gcc", "-shared", "-fPIC", "-nostdlib", "-o", "libc.so.6", "-Wl,-soname,libc.so.6",
             "-Wl,--version-script=" + source(build, "libc.map", LIBC_MAP), source(build, "libc.c", LIBC_C))
    compile_(build, "gcc", "-shared", "-fPIC", "-nostdlib", "-o", "libtriton.so", "-Wl,-soname,libtriton.so",
             source(build, "tri.c", TRITON_C), "libc.so.6")
    gems = [(JIT, os.path.join(build, "libtriton_jit.so")), (OPS, os.path.join(build, "c_operators.so"))]
    wheels = {}
    for name, requires, tamper in ((GOOD, ["torch"], []), (PINNED, ["torch==2.9.0"], []),
                                   (TAMPERED, ["torch"], [JIT])):
        wheels[name] = make_wheel.write_wheel(os.path.join(out, name), gems, requires_dist=requires, tamper=tamper)
    wheels[OLD_GLIBC] = make_wheel.write_wheel(os.path.join(out, OLD_GLIBC),
                                               [("triton/_C/libtriton.so", os.path.join(build, "libtriton.so"))])
    return wheels


def loads(r):
    """A command's JSON stdout, or {} (the check that reads it then fails with the output as its detail)."""
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def findings_of(doc, kind):
    return [f for f in doc.get("findings", []) if f["kind"] == kind]


def job_judged(tmp, J):
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        print("skip: gcc and g++ are needed to build the trial's wheels")
        sys.exit(77)
    check = J.check
    # Hermetic: nothing fetched (the db's torch names PyTorch's index), a cache of this run's own.
    hermetic = {"WHEELCHECK_OFFLINE": "1", "WHEELCHECK_CACHE_DIR": os.path.join(tmp, "cache")}

    def wc(*args, cwd=None):
        return J.wc(*args, env=hermetic, cwd=cwd)

    def sh(script):
        return J.sh(script, env=hermetic)

    try:
        wheels = build_wheels(tmp)
    except RuntimeError as e:
        check(False, "the trial's wheels build with gcc/g++", str(e))
        return
    good, tree = wheels[GOOD], J.sample(J.TREE)

    # --- a. the good FlagGems C++ wheel alone -----------------------------------------------------------------
    r = wc(good, "--image", "cuda13.0")
    check(r.returncode == 0 and "COMPATIBLE" in r.stdout and "INCOMPATIBLE" not in r.stdout,
          f"a. {GOOD} (libtriton_jit.so needs only libc10.so) alone on cuda13.0: COMPATIBLE, exit 0 "
          f"(exit {r.returncode})", r.stdout + r.stderr)

    # --- b. gates FLAGTREE --with GOOD under set -euo pipefail ------------------------------------------------
    r = sh(f'set -euo pipefail\neval "$(wheelcheck gates {tree} --with {good} --image cuda13.0)"\n'
           f'{J.PRINT_ENV}\necho continued')
    env = J.env_of(r.stdout)
    check(r.returncode == 0 and "continued" in r.stdout, "b. the setup script with gates FLAGTREE --with GOOD runs "
          "through", r.stdout + r.stderr)
    check(env.get("FLAGOS_USE_FLAGGEMS_CPP") == "unset",
          f"b. FLAGOS_USE_FLAGGEMS_CPP stays unset: the good wheel is judged on its own members "
          f"(got {env.get('FLAGOS_USE_FLAGGEMS_CPP')})", r.stdout)
    check(env.get("USE_TLE_DIST") == "0",
          "b. USE_TLE_DIST=0: FlagTree's triton/_C/libflagcx.so needs libcudart.so.12", r.stdout)
    gates_text = sh(f"wheelcheck gates {tree} --with {good} --image cuda13.0").stdout
    check("missing library libc10.so" not in gates_text, "b. the gates' comments never say missing library libc10.so",
          gates_text)

    # --- c. a pylock.toml of the two ------------------------------------------------------------------------
    lock = os.path.join(tmp, "pylock.toml")
    with open(lock, "w") as f:
        f.write('lock-version = "1.0"\ncreated-by = "jobs.py judged"\n'
                f'[[packages]]\nname = "flagtree"\nversion = "0.6.1"\nwheels = [{{path = "{tree}"}}]\n'
                f'[[packages]]\nname = "flag-gems-cpp-cuda"\nversion = "5.4.1"\nwheels = [{{path = "{good}"}}]\n')
    r = sh(f'set -euo pipefail\neval "$(wheelcheck gates {lock} --image cuda13.0)"\n{J.PRINT_ENV}')
    env = J.env_of(r.stdout)
    check(r.returncode == 0 and env.get("FLAGOS_USE_FLAGGEMS_CPP") == "unset",
          f"c. gates LOCK keeps FLAGOS_USE_FLAGGEMS_CPP unset (got {env.get('FLAGOS_USE_FLAGGEMS_CPP')}, "
          f"exit {r.returncode})", r.stdout + r.stderr)

    r = wc(lock, "--image", "cuda13.0")
    last = (r.stdout.strip().splitlines() or [""])[-2:]
    check(r.returncode == 3 and any(line.startswith("DEGRADED: the environment") for line in last),
          f"c. LOCK: the environment whose TLE route is off is DEGRADED, exit 3 (exit {r.returncode})",
          r.stdout[-1500:] + r.stderr)

    r = wc(lock, "--image", "cuda13.0", "--json")
    doc = loads(r)
    packages = doc.get("packages", [])
    reported = [p for p in packages if p.get("report")]
    leaks = []
    for p in reported:
        prefix = PREFIX.get(p["name"], "?")
        leaks += [f"{p['name']}: member {m['path']}" for m in p["report"].get("members") or []
                  if not m["path"].startswith(prefix)]
        # A finding of the wheel itself (a tag, its metadata) has no member: still its own.
        leaks += [f"{p['name']}: finding {f['kind']} of {f['member']}" for f in p["report"]["findings"]
                  if f["member"] and not f["member"].startswith(prefix)]
    check(sorted(p["name"] for p in reported) == sorted(PREFIX) and not leaks,
          "c. LOCK --json: each package's report holds its own wheel's members and findings only "
          "(flagtree triton/, gems flag_gems/)",
          "\n".join(leaks[:10]) + f"\nreported: {[p['name'] for p in reported]}\n" + r.stderr)

    r = wc(lock, "--image", "cuda13.0", "--format", "sarif")
    sarif = loads(r)
    results = [res for run in sarif.get("runs", []) for res in run.get("results", [])]
    own = {p["file"]: p for p in reported}
    want = sum(len(p["report"]["findings"]) for p in reported)
    bad = []
    for file, p in own.items():
        mine = [res for res in results if res.get("properties", {}).get("wheel") == file]
        if len(mine) != len(p["report"]["findings"]):
            bad.append(f"{file}: {len(mine)} results, {len(p['report']['findings'])} findings")
    for res in results:
        wheel = res.get("properties", {}).get("wheel")
        uri = urllib.parse.unquote(res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        if wheel not in own:
            bad.append(f"a result of {wheel}, no package of the lock: {res['message']['text'][:120]}")
        elif not (uri.endswith(wheel) or os.path.basename(uri) == os.path.basename(lock)):
            bad.append(f"{wheel}: located at {uri}")
    check(sarif.get("runs") and len(results) == want and not bad,
          f"c. LOCK --format sarif: one result per finding of the packages' reports ({len(results)} / {want}), "
          f"each located at its own wheel or the lock", "\n".join(bad[:10]) + r.stderr)

    r = wc(lock, "--image", "cuda13.0", "--format", "junit")
    try:
        root = ET.fromstring(r.stdout)
    except ET.ParseError as e:
        root = None
        check(False, "c. LOCK --format junit parses with xml.etree", f"{e}\n{r.stdout[:800]}{r.stderr}")
    if root is not None:
        failing = [" ".join([el.get("message", ""), el.text or ""]) for tag in ("failure", "error")
                   for el in root.iter(tag)]
        said = [t for t in failing if "libc10.so" in t]
        check(root.findall("testsuite") and not said,
              f"c. LOCK --format junit parses, and no failure mentions libc10.so ({len(failing)} failures/errors)",
              "\n".join(said)[:1500])

    # --- d. declared facts govern -----------------------------------------------------------------------------
    old = old_glibc_wheel = wheels[OLD_GLIBC]
    declared, control = os.path.join(tmp, "ubuntu22.json"), os.path.join(tmp, "ubuntu22-glibc239.json")
    json.dump(image_description("2.35"), open(declared, "w"))
    json.dump(image_description("2.39"), open(control, "w"))
    r = wc(old, "--image", declared)
    check(r.returncode == 1 and "INCOMPATIBLE" in r.stdout and "__isoc23_strtol" in r.stdout
          and "GLIBC_2.38" in r.stdout,
          f"d. {OLD_GLIBC} on a description declaring glibc 2.35 over ubuntu24.04: INCOMPATIBLE, exit 1, naming "
          f"__isoc23_strtol and GLIBC_2.38 (exit {r.returncode})", r.stdout + r.stderr)
    r = wc(old, "--image", declared, "--json")
    missing = findings_of(loads(r), "missing-version")
    check(len(missing) == 1 and missing[0].get("symbols") == ["__isoc23_strtol"]
          and missing[0].get("symbols_total") == 1,
          "d. --json: a missing-version finding, symbols == [__isoc23_strtol], symbols_total == 1",
          json.dumps(missing, indent=1)[:1500] + r.stderr)
    r = wc(old, "--image", declared, "--format", "sarif")
    results = [res for run in loads(r).get("runs", []) for res in run.get("results", [])]
    said = [res for res in results if res.get("ruleId") == "missing-version"]
    check(said and all("__isoc23_strtol" in res["message"]["text"] for res in said),
          "d. --format sarif: the missing-version result's message names __isoc23_strtol",
          json.dumps([res.get("message") for res in results], indent=1)[:1500] + r.stderr)
    r = wc("image", "show", declared)
    lines = [line for line in r.stdout.splitlines() if "GLIBC_2.35" in line and "GLIBC_2.39" in line]
    check(r.returncode == 0 and lines,
          "d. image show names the disagreement: declared GLIBC_2.35, the layer's tables reach GLIBC_2.39",
          r.stdout[:2000] + r.stderr)
    r = wc(old, "--image", control, "--json")
    doc = loads(r)
    check(doc.get("verdict") and not findings_of(doc, "missing-version"),
          f"d. control: the same wheel on a description declaring glibc 2.39 has no missing-version finding "
          f"({doc.get('verdict')})", json.dumps(doc.get("findings"), indent=1)[:1500] + r.stderr)

    # --- e. gates never fail open -----------------------------------------------------------------------------
    tampered = wheels[TAMPERED]
    r = sh(f'set -euo pipefail\neval "$(wheelcheck gates {tampered} --image cuda13.0)"\necho reached')
    check(r.returncode != 0 and "reached" not in r.stdout,
          f"e. a tampered wheel (RECORD mismatch) stops a `set -e` setup script (exit {r.returncode})",
          r.stdout + r.stderr)
    r = sh(f'eval "$(wheelcheck gates {tampered} --image cuda13.0 2>/dev/null)"; echo "eval=$?"; {J.PRINT_ENV}')
    env = J.env_of(r.stdout)
    wrong = {g: env.get(g) for g, off in OFF.items() if env.get(g) != off}
    check(env.get("WHEELCHECK_VERDICT") == "error" and env.get("FLAGOS_USE_FLAGGEMS_CPP") == "0" and not wrong,
          "e. without set -e: WHEELCHECK_VERDICT=error, FLAGOS_USE_FLAGGEMS_CPP=0, every gate off",
          f"not off: {wrong}\n{r.stdout}")

    # --- f. Requires-Dist pins --------------------------------------------------------------------------------
    pinned = wheels[PINNED]
    r = wc(pinned, "--image", "cuda13.0", "--json")
    pins = findings_of(loads(r), "requires-dist")
    check(pins and "--no-deps" in pins[0]["explanation"] and "2.10.0+cpu" in pins[0]["explanation"],
          "f. Requires-Dist: torch==2.9.0 on cuda13.0 (torch 2.10.0+cpu): a requires-dist finding saying what "
          "--no-deps leaves", json.dumps(pins, indent=1)[:1500] + r.stdout[:300] + r.stderr)
    r = wc(pinned, "--image", "cuda13.0")
    check("torch==2.9.0" in r.stdout, "f. the text names torch==2.9.0", r.stdout + r.stderr)
    r = wc(good, "--image", "cuda13.0", "--json")
    doc = loads(r)
    check(doc.get("verdict") and not findings_of(doc, "requires-dist"),
          "f. control: Requires-Dist: torch (no specifier) is no requires-dist finding",
          json.dumps(doc.get("findings"), indent=1)[:1500] + r.stderr)

    # --- g. the settings file's [[accept]] rules --------------------------------------------------------------
    for folder, rule, said, what in (("typo", "driverr", "'driver'", "a typo (driverr) names the rule it meant"),
                                     ("never", "missing-library", "state it instead",
                                      "missing-library is refused: an unstated library is stated, not accepted")):
        proj = os.path.join(tmp, "settings-" + folder)
        os.makedirs(proj)
        with open(os.path.join(proj, "wheelcheck.toml"), "w") as f:
            f.write(f'[[accept]]\nrule = "{rule}"\nreason = "issue 39 trial"\nexpires = 2999-12-31\n')
        r = wc(good, "--image", "cuda13.0", cwd=proj)
        check(r.returncode == 2 and "wheelcheck.toml" in r.stderr and said in r.stderr,
              f"g. [[accept]] rule = \"{rule}\": exit 2, wheelcheck.toml's error says {said!r} ({what}; "
              f"exit {r.returncode})", r.stdout[:300] + r.stderr)

    # --- h. --image all --json: an image the wheel is not for is not-targeted, never incompatible -------------
    r = wc(old_glibc_wheel, "--image", "all", "--json")
    cells = loads(r) if r.stdout.startswith("[") else []
    wrong = [f"{c['image']['name']}: {c['verdict']} targeted={c['targeted']}" for c in cells
             if (c["verdict"] == "not-targeted") == c["targeted"] or (not c["targeted"] and not c["not_targeted"])]
    others = [c for c in cells if not c["targeted"]]
    check(cells and others and not wrong,
          f"h. {OLD_GLIBC} (cp310) --image all --json: each image it is not for says verdict not-targeted and why "
          f"({len(others)} of {len(cells)}), none says incompatible", "\n".join(wrong[:10]) + r.stderr)
    r = wc(old_glibc_wheel, "--image", "cuda13.0")
    check(r.returncode == 1 and "NOT TARGETED" in r.stdout and "INCOMPATIBLE" not in r.stdout,
          f"h. {OLD_GLIBC} (cp310) on cuda13.0 (Python 3.12): NOT TARGETED, exit 1 (exit {r.returncode})",
          r.stdout + r.stderr)

    # --- i. a bare wheelcheck ---------------------------------------------------------------------------------
    r = wc()
    lines = r.stderr.splitlines()
    check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("usage:") and not r.stdout,
          f"i. a bare wheelcheck: exit 2, one usage: line on stderr, nothing on stdout (exit {r.returncode}, "
          f"{len(lines)} lines)", r.stdout + r.stderr)

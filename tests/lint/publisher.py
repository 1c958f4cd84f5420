#!/usr/bin/env python3
"""The publisher check (`wheelcheck lint`) on the defects of issue 42, each built here with compiled code and
checked with no image, as a release engineer runs it: text, JSON and SARIF, and the exit code.

  publisher.py --wheelcheck BIN --db DIR --work DIR [--only NAME,NAME]

The wheels are built with the FlagOS incidents' tools (tests/flagos/incidents.py: gcc, link-time stand-ins for
vendor, glibc and torch libraries whose version nodes are the real ones; tests/tools/make_wheel.py). Each
defect is asserted on: the finding's kind and severity, that it names what the wheel claims and what its
binaries show, the same finding in SARIF (rule id and level), and the exit code (1 an error, 3 warnings only,
0 clean). Each defect has a fixed twin that must come out without that finding.

Exit 0 when every assertion holds, 1 otherwise (each failure named), 77 when gcc is absent.
"""
import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from wheelcheck_test import Checks  # noqa: E402


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "flagos"))
import incidents as inc  # noqa: E402

A = None
CHECKS = Checks(context=lambda: CURRENT)
check, FAILURES = CHECKS.check, CHECKS.failures
CURRENT = ""


def lint(wheel, fmt="json", extra=()):
    """Runs `wheelcheck lint WHEEL --format FMT`; (exit code, stdout parsed or text, stderr)."""
    p = subprocess.run([A.wheelcheck, "lint", wheel, "--format", fmt, "--db", A.db, "--no-cache", "-q",
                        "--no-config", *extra], capture_output=True, text=True)
    out = p.stdout
    if fmt in ("json", "sarif"):
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = None
    return p.returncode, out, p.stderr


def findings(doc, kind=None, severity=None):
    if not doc or not doc.get("wheels"):
        return []
    return [f for f in doc["wheels"][0].get("findings", []) if (kind is None or f["kind"] == kind) and
            (severity is None or f["severity"] == severity)]


def valid(doc, schema_path, what):
    """The document against its JSON schema (python3-jsonschema); a skip line when the module is absent."""
    try:
        import jsonschema
    except ImportError:
        print(f"  skip  {CURRENT} {what}: python3-jsonschema is not installed")
        return
    with open(schema_path) as f:
        schema = json.load(f)
    errors = sorted(jsonschema.validators.validator_for(schema)(schema).iter_errors(doc), key=str)
    check(not errors, what, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5]))


def expect(wheel, kind, severity, words, rc, what):
    """The finding in JSON (with every word in its explanation, evidence or fields), in text, in SARIF, and the
    exit code; returns the JSON document."""
    code, doc, err = lint(wheel)
    found = findings(doc, kind, severity)
    blob = json.dumps(found)
    check(found and all(w in blob for w in words), f"{what}: {severity} {kind} naming {words}",
          err + json.dumps(doc, indent=1)[:3000])
    check(code == rc, f"{what}: exit code {rc}", f"got {code}: {err}")
    valid(doc, os.path.join(REPO, "docs", "lint.schema.json"), f"{what}: the JSON is valid against docs/lint.schema.json")
    code_t, text, err_t = lint(wheel, "text")
    check(kind in text and all(w in text for w in words[:2]), f"{what}: the text names {kind} and {words[:2]}",
          text[:3000] + err_t)
    check(code_t == rc, f"{what}: text exits {rc} too", str(code_t))
    code_s, sarif, err_s = lint(wheel, "sarif")
    results = [r for run in (sarif or {}).get("runs", []) for r in run.get("results", [])]
    level = {"error": "error", "warning": "warning"}.get(severity, "note")
    hit = [r for r in results if r["ruleId"] == kind and r["level"] == level]
    check(hit and all(w in hit[0]["message"]["text"] for w in words[:2]),
          f"{what}: SARIF has a {level} result of rule {kind}", json.dumps(results)[:2000] + err_s)
    sarif_schema = os.path.join(REPO, "..", "shared", "reference", "sarif-schema-2.1.0.json")
    if os.path.exists(sarif_schema):
        valid(sarif, sarif_schema, f"{what}: the SARIF is valid against SARIF 2.1.0's schema")
    runs = (sarif or {}).get("runs", [])
    check(runs and runs[0]["automationDetails"]["id"] == "wheelcheck/publisher/",
          f"{what}: SARIF's run is wheelcheck/publisher/", json.dumps(runs and runs[0].get("automationDetails")))
    return doc


def absent(wheel, kind, what):
    code, doc, err = lint(wheel)
    check(doc is not None and not findings(doc, kind), f"{what}: no {kind}", err + json.dumps(doc, indent=1)[:3000])
    return code, doc


def check_fix(wheel, image, kind):
    """The fix of the first `kind` finding of `wheelcheck WHEEL --image IMAGE --json` ("" when there is none)."""
    p = subprocess.run([A.wheelcheck, wheel, "--image", image, "--json", "--db", A.db, "--no-cache", "-q",
                        "--no-config", "--rules", "none"], capture_output=True, text=True)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return p.stdout[:500] + p.stderr
    return next((f["fix"] for f in doc.get("findings", []) if f["kind"] == kind), json.dumps(doc)[:1500])


def metadata_wheel(filename, files, metadata, purelib="false"):
    """A wheel whose METADATA is `metadata` as written (a repack's), and whose WHEEL says Root-Is-Purelib:
    `purelib`, with a RECORD that matches them."""
    out = os.path.join(A.work, "wheels", filename)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    name, version = filename.split("-")[:2]
    info = f"{name}-{version}.dist-info"
    tag = "-".join(filename[:-4].split("-")[-3:])
    records = []

    def digest(data):
        return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        def add(arc, data):
            z.writestr(zipfile.ZipInfo(arc, (2024, 1, 1, 0, 0, 0)), data)
            records.append(f"{arc},{digest(data)},{len(data)}")
        for arc, src in files:
            with open(src, "rb") as f:
                add(arc, f.read())
        add(f"{info}/METADATA", metadata.encode())
        add(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: repack\nRoot-Is-Purelib: {purelib}\nTag: {tag}\n".encode())
        records.append(f"{info}/RECORD,,")
        z.writestr(zipfile.ZipInfo(f"{info}/RECORD", (2024, 1, 1, 0, 0, 0)), "\n".join(records) + "\n")
    return out


# --- the defects ------------------------------------------------------------------------------------------

def label():
    """+cu130 on a wheel whose member needs libcudart.so.12 (the seed's FlagTree defect)."""
    cudart12 = inc.stub("x86_64", "libcudart.so.12", [("libcudart.so.12", ["cudaMalloc"])], group="cuda12")
    cudart13 = inc.stub("x86_64", "libcudart.so.13", [("libcudart.so.13", ["cudaMalloc"])], group="cuda13")
    bad = inc.member("lint-label/libflagcx.so", "x86_64", ["cudaMalloc"], [cudart12])
    w = inc.wheel("flagtree-0.7.0+cu130-cp312-cp312-linux_x86_64.whl",
                  [("triton/__init__.py", inc.py()), ("triton/backends/nvidia/lib/libflagcx.so", bad)])
    expect(w, "label-claim", "error", ["+cu130", "libcudart.so.12", "CUDA 12", "CUDA 13.0"], 1,
           "+cu130 needing libcudart.so.12")
    # The check against a CUDA 13 image no longer sends the user to "a build of this wheel for CUDA 13.0".
    fix = check_fix(w, "cuda13.0", "missing-library")
    check("defect of the wheel itself" in fix and "label-claim" in fix and "nvidia-cuda-runtime-cu12" in fix,
          "check --image cuda13.0: the fix says the label is the wheel's defect, not 'a build for CUDA 13'", fix)
    good = inc.member("lint-label-fixed/libflagcx.so", "x86_64", ["cudaMalloc"], [cudart13])
    w = inc.wheel("flagtree-0.7.1+cu130-cp312-cp312-linux_x86_64.whl",
                  [("triton/__init__.py", inc.py()), ("triton/backends/nvidia/lib/libflagcx.so", good)])
    absent(w, "label-claim", "+cu130 needing libcudart.so.13")
    # A vendor label: a CANN build that needs MUSA's runtime.
    musa = inc.stub("x86_64", "libmusart.so", [], plain=["musaMalloc"])
    odd = inc.member("lint-label-cann/libflagcx.so", "x86_64", ["musaMalloc"], [musa])
    w = inc.wheel("flagcx-0.14.0+cann9.0.0-cp312-cp312-linux_x86_64.whl",
                  [("flagcx/__init__.py", inc.py()), ("flagcx/lib/libflagcx.so", odd)])
    expect(w, "label-claim", "error", ["+cann9.0.0", "libmusart.so", "MUSA"], 1, "+cann9.0.0 needing libmusart.so")
    _, text, _ = lint(w, "text")
    shows = [line for line in text.splitlines() if line.startswith("  shows ") and "needs libmusart.so" in line]
    check(shows == ["  shows  flagcx/lib/libflagcx.so needs libmusart.so (MUSA's)"],
          "the runtime is shown once, as the label's check names it", text)


def torch_label():
    """A label that names a torch (flash-attn's +torch.2.9.1.gcu) against the torch the wheel pins and binds."""
    so = inc.member("lint-fa/flash_attn_gcu.cpython-312-x86_64-linux-gnu.so", "x86_64", [], [],
                    defines=("PyInit_flash_attn_gcu",))
    files = [("flash_attn/__init__.py", inc.py()), ("flash_attn/flash_attn_gcu.cpython-312-x86_64-linux-gnu.so", so)]
    w = inc.wheel("flash_attn-2.7.2+torch.2.9.1.gcu-cp312-cp312-linux_x86_64.whl", files,
                  requires_dist=["torch==2.10.0"])
    expect(w, "label-claim", "error", ["+torch.2.9.1.gcu", "torch 2.9.1", "torch==2.10.0"], 1,
           "+torch.2.9.1 pinning torch==2.10.0")
    w = inc.wheel("flash_attn-2.7.3+torch.2.10.0.gcu-cp312-cp312-linux_x86_64.whl", files,
                  requires_dist=["torch==2.10.0"])
    absent(w, "label-claim", "+torch.2.10.0 pinning torch==2.10.0")
    # Debian's sonames say the release: a +torch2.7 build that needs libc10.so.2.6.
    c10 = inc.stub("x86_64", "libc10.so.2.6", [], plain=["_ZN3c105ErrorC1Ev"], group="debian-2.6")
    ext = inc.member("lint-tl/ext.cpython-312-x86_64-linux-gnu.so", "x86_64", ["_ZN3c105ErrorC1Ev"], [c10],
                     defines=("PyInit_ext",))
    w = inc.wheel("torch_ext-1.0+torch2.7-cp312-cp312-linux_x86_64.whl",
                  [("torch_ext/__init__.py", inc.py()), ("torch_ext/ext.cpython-312-x86_64-linux-gnu.so", ext)],
                  requires_dist=["torch==2.7.*"])
    expect(w, "label-claim", "error", ["+torch2.7", "libc10.so.2.6", "torch 2.6"], 1, "+torch2.7 needing libc10.so.2.6")


def torch_npu():
    """A member needing libtorch_npu.so in a wheel without Requires-Dist: torch_npu (the seed's Ascend FlagCX)."""
    npu = inc.stub("x86_64", "libtorch_npu.so", [], plain=["_ZN6c10_npu9NPUStream6streamEv"])
    ext = inc.member("lint-npu/_C.cpython-312-x86_64-linux-gnu.so", "x86_64", ["_ZN6c10_npu9NPUStream6streamEv"],
                     [npu], defines=("PyInit__C",))
    files = [("flagcx/__init__.py", inc.py()), ("flagcx/_C.cpython-312-x86_64-linux-gnu.so", ext)]
    w = inc.wheel("flagcx-0.14.0+cann8.5.0-cp312-cp312-linux_x86_64.whl", files)
    doc = expect(w, "undeclared-dependency", "error", ["libtorch_npu.so", "torch-npu", "Requires-Dist"], 1,
                 "libtorch_npu.so without Requires-Dist: torch_npu")
    f = findings(doc, "undeclared-dependency", "error")
    check(f and f[0]["library"] == "torch-npu" and "flagcx/_C" in f[0]["member"],
          "the finding's library is the distribution, its member the extension", json.dumps(f))
    fix = check_fix(w, "debian12", "missing-library")
    check("install torch-npu" in fix, "check --image debian12: the fix names the distribution that ships it", fix)
    w = inc.wheel("flagcx-0.14.1+cann8.5.0-cp312-cp312-linux_x86_64.whl", files, requires_dist=["torch_npu==2.6.0"])
    absent(w, "undeclared-dependency", "declared torch_npu==2.6.0")


def c10d():
    """FlagCX's _C leaves c10d:: symbols undefined and pins no torch (WHEEL-DESIGN.md, I11)."""
    block = "_ZN4c10d4Work18blockCurrentStreamEv"
    lib = inc.member("lint-c10d/libflagcx.so", "x86_64", [], [], defines=("flagcxGetVersion",))
    ext = inc.member("lint-c10d/_C.cpython-312-x86_64-linux-gnu.so", "x86_64", [block, "flagcxGetVersion"], [lib],
                     defines=("PyInit__C",), extra=["-Wl,-rpath,$ORIGIN/lib"])
    files = [("flagcx/__init__.py", inc.py()), ("flagcx/_C.cpython-312-x86_64-linux-gnu.so", ext),
             ("flagcx/lib/libflagcx.so", lib)]
    w = inc.wheel("flagcx-0.14.0+cuda13.3-cp312-cp312-linux_x86_64.whl", files)
    expect(w, "undeclared-dependency", "error", ["c10d::Work::blockCurrentStream", "torch", "c10d::"], 1,
           "c10d:: undefined, no Requires-Dist")
    w = inc.wheel("flagcx-0.14.1+cuda13.3-cp312-cp312-linux_x86_64.whl", files, requires_dist=["torch"])
    expect(w, "unpinned-dependency", "warning", ["torch", "c10d::", "any release"], 3, "Requires-Dist: torch (no pin)")
    absent(w, "undeclared-dependency", "Requires-Dist: torch")
    w = inc.wheel("flagcx-0.14.2+cuda13.3-cp312-cp312-linux_x86_64.whl", files, requires_dist=["torch==2.10.*"])
    absent(w, "unpinned-dependency", "Requires-Dist: torch==2.10.*")
    absent(w, "undeclared-dependency", "Requires-Dist: torch==2.10.*")


def blank_line():
    """FlagOS's vllm repack: a blank line inside METADATA's headers turned 80 Requires-Dist into the description."""
    deps = [f"dep{i:02d}>=1.{i}" for i in range(80)]
    meta = ("Metadata-Version: 2.1\nName: vllm\nVersion: 0.24.0+flagos\nSummary: vLLM\n\n" +
            "".join(f"Requires-Dist: {d}\n" for d in deps) + "Requires-Python: >=3.10\n\n# vLLM\n\nText.\n")
    w = metadata_wheel("vllm-0.24.0+flagos-py3-none-any.whl", [("vllm/__init__.py", inc.py())], meta)
    doc = expect(w, "metadata", "error", ["Requires-Dist", "80", "blank line 5", "without any of those dependencies"],
                 1, "80 Requires-Dist after a blank line")
    _, text, _ = lint(w, "text")
    check("metadata  vllm-0.24.0+flagos.dist-info/METADATA: Requires-Dist after the headers' end" in text,
          "the text's headline says where the Requires-Dist went", text[:2000])
    p = subprocess.run([A.wheelcheck, "inspect", w, "--no-cache", "-q", "--db", A.db], capture_output=True, text=True)
    check("METADATA" in p.stdout and "80 lines" in p.stdout and "Requires-Dist" in p.stdout,
          "inspect no longer shows silently no dependencies: it says where they went", p.stdout + p.stderr)
    fixed = meta.replace("Summary: vLLM\n\n", "Summary: vLLM\n", 1).replace("0.24.0+flagos", "0.24.1+flagos")
    w = metadata_wheel("vllm-0.24.1+flagos-py3-none-any.whl", [("vllm/__init__.py", inc.py())], fixed)
    code, doc = absent(w, "metadata", "the same METADATA without the blank line")
    check(code == 0, "and it is clean (exit 0)", json.dumps(doc, indent=1)[:2000])
    # Duplicated single fields, a Requires-Dist that does not parse, a Version other than the file name's.
    bad = ("Metadata-Version: 2.1\nName: repack\nVersion: 1.0\nVersion: 1.1\nRequires-Dist: torch (>=2.6\n"
           "Requires-Dist: numpy >> 2\n")
    w = metadata_wheel("repack-1.0+flagos-py3-none-any.whl", [("repack/__init__.py", inc.py())], bad)
    code, doc, err = lint(w)
    blob = json.dumps(findings(doc, "metadata"))
    _, text, _ = lint(w, "text")
    check("Version: 1.0, not the file name's" in text and "Requires-Dist: numpy >> 2 does not parse" in text and
          "Version written more than once" in text, "the text's headlines name each METADATA defect", text[:3000])
    check("written 2 times" in blob and "does not parse" in blob and "numpy >> 2" in blob and
          "inconsistent version" in blob, "duplicated Version, unparsable Requires-Dist, Version vs file name",
          blob[:3000] + err)
    check(code == 1, "exit 1", str(code))


def pure_tag():
    """Binary wheels relabelled py3-none-any (FlagOS's repack of opencv and xgrammar)."""
    so = inc.member("lint-cv2/cv2.abi3.so", "x86_64", ["malloc"], [inc.glibc("x86_64", (2, 34))],
                    defines=("PyInit_cv2",))
    w = inc.wheel("opencv_python_headless-4.12.0.88-py3-none-any.whl",
                  [("cv2/__init__.py", inc.py()), ("cv2/cv2.abi3.so", so)])
    expect(w, "tag-pure-binary", "warning", ["py3-none-any", "x86_64", "cv2/cv2.abi3.so"], 3,
           "py3-none-any with an extension module")
    _, text, _ = lint(w, "text")
    check("tag-pure-binary  tagged for any platform, native code for x86_64" in text, "the text's headline", text)
    w = inc.wheel("opencv_python_headless-4.12.0.88-cp37-abi3-manylinux_2_34_x86_64.whl",
                  [("cv2/__init__.py", inc.py()), ("cv2/cv2.abi3.so", so)])
    code, doc = absent(w, "tag-pure-binary", "its real tag")
    check(code == 0 and not findings(doc), "the real tag (manylinux_2_34: glibc 2.34's dlopen) is clean",
          json.dumps(doc, indent=1)[:2000])


def floor():
    """A linux_x86_64 wheel that needs glibc 2.38 for one symbol (FlagOS I1: __isoc23_strtol)."""
    so = inc.member("lint-floor/libtriton.so", "x86_64", ["__isoc23_strtol", "malloc"], [inc.glibc("x86_64", (2, 38))])
    w = inc.wheel("flagtree-0.7.0+iluvatar3.6-cp312-cp312-linux_x86_64.whl",
                  [("triton/__init__.py", inc.py()), ("triton/_C/libtriton.so", so)])
    doc = expect(w, "tag-floor", "warning", ["linux_x86_64", "manylinux_2_38_x86_64", "__isoc23_strtol", "C2x"], 3,
                 "linux_x86_64 needing glibc 2.38")
    f = findings(doc, "tag-floor")
    check(f and f[0]["symbols"] == ["__isoc23_strtol"] and f[0]["required_version"] == "manylinux_2_38_x86_64",
          "the symbols behind the floor, and the policy, as fields", json.dumps(f))
    # Accepted in wheelcheck.toml: information, exit 0.
    cfg = os.path.join(A.work, "accept", "wheelcheck.toml")
    os.makedirs(os.path.dirname(cfg), exist_ok=True)
    with open(cfg, "w") as fh:
        fh.write('[[accept]]\nrule = "tag-floor"\nwheel = "flagtree-*"\n'
                 'reason = "FlagOS builds on Ubuntu 24.04 on purpose"\nexpires = "2099-12-31"\n')
    p = subprocess.run([A.wheelcheck, "lint", w, "--format", "json", "--db", A.db, "--no-cache", "-q", "--config", cfg],
                       capture_output=True, text=True)
    doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else None
    f = findings(doc, "tag-floor")
    check(p.returncode == 0 and f and f[0]["severity"] == "info" and "Ubuntu 24.04 on purpose" in f[0]["explanation"],
          "[[accept]] makes it information (exit 0), saying why", p.stdout[:2000] + p.stderr)


def dev_api_backend():
    """libflagcx.so links but leaves devApiBackend undefined, which none of its needs defines (backends.yaml, I13)."""
    cnrt = inc.stub("x86_64", "libcnrt.so", [], plain=["cnrtMalloc"])
    bad = inc.member("lint-devapi/libflagcx.so", "x86_64", ["devApiBackend", "cnrtMalloc"], [cnrt],
                     defines=("flagcxGetVersion",))
    w = inc.wheel("flagcx-0.14.0+neuware4.4.3-cp310-cp310-linux_x86_64.whl",
                  [("flagcx/__init__.py", inc.py()), ("flagcx/lib/libflagcx.so", bad)])
    expect(w, "unloadable-symbol", "error", ["devApiBackend", "flagcx/lib/libflagcx.so", "RTLD_NOW",
                                             "PLATFORM_EXTRA_SRCS"], 1, "devApiBackend undefined (a FlagCX own symbol)")
    good = inc.member("lint-devapi-fixed/libflagcx.so", "x86_64", ["devApiBackend", "cnrtMalloc"], [cnrt],
                      defines=("flagcxGetVersion", "devApiBackend"))
    w = inc.wheel("flagcx-0.14.1+neuware4.4.3-cp310-cp310-linux_x86_64.whl",
                  [("flagcx/__init__.py", inc.py()), ("flagcx/lib/libflagcx.so", good)])
    absent(w, "unloadable-symbol", "the build with PLATFORM_EXTRA_SRCS")
    # Any wheel: a symbol none of its needs (the wheel's own library and glibc, whose table the db has) defines.
    helper = inc.member("lint-undef/libhelper.so", "x86_64", ["malloc"], [inc.glibc("x86_64", (2, 34))],
                        defines=("helper_init",))
    lib = inc.member("lint-undef/libcore.so", "x86_64", ["helper_init", "helper_missing"],
                     [helper, inc.glibc("x86_64", (2, 34))], extra=["-Wl,-rpath,$ORIGIN"])
    w = inc.wheel("corelib-1.0-py3-none-manylinux_2_34_x86_64.whl",
                  [("corelib/__init__.py", inc.py()), ("corelib/libcore.so", lib), ("corelib/libhelper.so", helper)])
    expect(w, "unloadable-symbol", "error", ["helper_missing", "libhelper.so", "libc.so.6"], 1,
           "helper_missing: defined neither by libhelper.so nor by glibc")


def wheel_file():
    """WHEEL's Root-Is-Purelib and METADATA's Metadata-Version against the wheel, and a declared runtime nothing
    links (overdepending)."""
    so = inc.member("lint-purelib/_ext.cpython-312-x86_64-linux-gnu.so", "x86_64", ["malloc"],
                    [inc.glibc("x86_64", (2, 34))], defines=("PyInit__ext",))
    files = [("purext/__init__.py", inc.py()), ("purext/_ext.cpython-312-x86_64-linux-gnu.so", so)]
    meta = "Metadata-Version: 2.1\nName: purext\nVersion: {v}\n"
    tag = "cp312-cp312-manylinux_2_34_x86_64"
    w = metadata_wheel(f"purext-1.0-{tag}.whl", files, meta.format(v="1.0"), purelib="true")
    expect(w, "root-is-purelib", "warning", ["Root-Is-Purelib: true", "purext/_ext.cpython-312-x86_64-linux-gnu.so"],
           3, "Root-Is-Purelib: true with an extension module")
    w = metadata_wheel(f"purext-1.1-{tag}.whl", files, meta.format(v="1.1"))
    code, doc = absent(w, "root-is-purelib", "Root-Is-Purelib: false")
    check(code == 0 and not findings(doc), "and the fixed twin is clean (exit 0)", json.dumps(doc, indent=1)[:2000])
    w = metadata_wheel(f"purext-1.2-{tag}.whl", files, meta.format(v="1.2").replace("2.1", "3.0", 1))
    expect(w, "metadata", "warning", ["Metadata-Version 3.0", "1.0 to 2.5"], 3, "Metadata-Version 3.0")
    w = metadata_wheel(f"purext-1.3-{tag}.whl", files, meta.format(v="1.3").replace("Metadata-Version: 2.1\n", ""))
    expect(w, "metadata", "warning", ["no Metadata-Version"], 3, "no Metadata-Version")
    # Overdepending: a CUDA runtime wheel declared, and no member links libcudart (information, exit 0).
    w = inc.wheel("purext-1.4-cp312-cp312-manylinux_2_34_x86_64.whl", files,
                  requires_dist=["nvidia-cuda-runtime-cu12==12.8.90"])
    expect(w, "unused-dependency", "info", ["nvidia-cuda-runtime-cu12", "no member needs"], 0,
           "Requires-Dist: nvidia-cuda-runtime-cu12 that nothing links")
    cudart = inc.stub("x86_64", "libcudart.so.12", [("libcudart.so.12", ["cudaMalloc"])], group="cuda12")
    linked = inc.member("lint-purelib-cuda/_ext.cpython-312-x86_64-linux-gnu.so", "x86_64", ["cudaMalloc"], [cudart],
                        defines=("PyInit__ext",))
    w = inc.wheel("purext-1.5-cp312-cp312-manylinux_2_34_x86_64.whl",
                  [("purext/__init__.py", inc.py()), ("purext/_ext.cpython-312-x86_64-linux-gnu.so", linked)],
                  requires_dist=["nvidia-cuda-runtime-cu12==12.8.90"])
    absent(w, "unused-dependency", "the same Requires-Dist with a member that links libcudart.so.12")


def bad_input():
    """A wheel that is not a zip beside a good one: an error entry in its place, the other still judged, exit 2."""
    bad = os.path.join(A.work, "wheels", "broken-1.0-py3-none-any.whl")
    os.makedirs(os.path.dirname(bad), exist_ok=True)
    with open(bad, "wb") as f:
        f.write(b"PK\x03\x04 truncated")
    good = inc.wheel("good-1.0-py3-none-any.whl", [("good/__init__.py", inc.py())])
    p = subprocess.run([A.wheelcheck, "lint", bad, good, "--json", "--db", A.db, "--no-cache", "-q", "--no-config"],
                       capture_output=True, text=True)
    doc = json.loads(p.stdout) if p.stdout.strip() else None
    check(p.returncode == 2 and doc and len(doc["wheels"]) == 2 and "error" in doc["wheels"][0] and
          doc["wheels"][1].get("status") == "clean" and "broken-1.0" in p.stderr,
          "exit 2, the broken wheel an error entry with its reason, the good one judged", p.stdout[:2000] + p.stderr)
    valid(doc, os.path.join(REPO, "docs", "lint.schema.json"), "the document is valid against docs/lint.schema.json")


CASES = {"label": label, "torch-label": torch_label, "torch-npu": torch_npu, "c10d": c10d, "blank-line": blank_line, "pure-tag": pure_tag,
         "floor": floor, "dev-api-backend": dev_api_backend, "wheel-file": wheel_file, "bad-input": bad_input}


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
    inc.A = argparse.Namespace(work=A.work, wheelcheck=A.wheelcheck, db=A.db)
    if shutil.which("gcc") is None:
        print("publisher.py: SKIP: gcc is not installed", file=sys.stderr)
        return 77
    wanted = [x for x in A.only.split(",") if x] or list(CASES)
    for name in wanted:
        if name not in CASES:
            print(f"publisher.py: no case {name} (there are {', '.join(CASES)})", file=sys.stderr)
            return 2
    for name in wanted:
        CURRENT = name
        print(f"{name}: {CASES[name].__doc__.splitlines()[0]}")
        CASES[name]()
    if FAILURES:
        print(f"\n{len(FAILURES)} failed:\n  " + "\n  ".join(FAILURES))
        return 1
    print("\nevery publisher defect is found, and no fixed twin has it")
    return 0


if __name__ == "__main__":
    sys.exit(main())

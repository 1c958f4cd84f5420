#!/usr/bin/env python3
"""Wheel variants as PyTorch publishes them (issue 43), tried as a user would, on a loopback index laid out as
`download.pytorch.org/whl/variant/`: PyTorch 2.10's real variants file (tests/variants/data, pinned from
wheelnext/variant-repack) beside variant wheels built here, each with real GPU code from the machine's nvcc
(CUDA 13.0: sm_75 and newer) and a real libcudart need (CUDA 13's own libcudart.so.13; a link-time stand-in
for libcudart.so.12 with its version node), so that what each variant claims can be checked against it.

  index.py --wheelcheck BIN --db DIR --work DIR [--only picks,claims,scan]

  picks   `wheelcheck check reqs.txt --image ...` against the index, for images with stated drivers and GPUs:
          CUDA 13 driver + sm_90 -> cuda13.0, CUDA 12.4 driver + sm_86 -> cuda12.8 (it ties cuda12.6 on NVIDIA's
          features and wins on PyTorch's static priority), no GPU -> null; the db's cuda13.0 image (driver and
          GPUs unknown) -> null, saying what the pick depends on; each picked file checked; `inspect` shows a
          variant; an installer without variant support takes nothing from this index.
  claims  `wheelcheck lint` on variants whose binaries contradict their properties: an sm_arch without code for
          it, a CUDA lower bound below the runtime the member needs, a label whose toolkit the properties
          contradict, PyTorch's config's rocm7.1 (rocm_version 7.0), in text, JSON and SARIF.
  scan    `wheelcheck scan` of the index against the images: one pin per image, naming its label.

Exit 0 when every assertion holds, 1 otherwise (each failure named), 77 when nvcc or gcc is absent.
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
sys.path.insert(0, os.path.join(REPO, "tests", "flagos"))
sys.path.insert(0, os.path.join(REPO, "tests", "jobs"))
import make_wheel  # noqa: E402
import native  # noqa: E402
from env_job import Server  # noqa: E402  (tests/net/server.py on loopback: index(), stats(), close())

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from wheelcheck_test import Checks  # noqa: E402


A = None
CHECKS = Checks(context=lambda: CURRENT)
check, FAILURES = CHECKS.check, CHECKS.failures
CURRENT = ""
NVCC_PATHS = ("/usr/local/cuda-13.0/bin/nvcc", "/usr/local/cuda/bin/nvcc")
CUDA13_LIB = "/usr/local/cuda-13.0/targets/x86_64-linux/lib"
TAG = "cp312-cp312-manylinux_2_28_x86_64"
RELEASE = os.path.join(HERE, "data", "torch-2.10.0-variants.json")
CONFIG = os.path.join(HERE, "data", "torch_variant_config.toml")
# What nvcc's host code calls in the CUDA runtime (the stand-in for CUDA 12's defines them in its version node).
CUDART_CALLS = ["__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary",
                "__cudaRegisterFunction", "__cudaPushCallConfiguration", "__cudaPopCallConfiguration",
                "cudaLaunchKernel"]
KERNEL = """
__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }
extern "C" void torch_scale(float* x, float a) { scale<<<1, 32>>>(x, a); }
"""


def nvcc():
    env = os.environ.get("WHEELCHECK_NVCC")
    for p in ([env] if env else []) + list(NVCC_PATHS):
        if p and os.access(p, os.X_OK):
            return p
    return shutil.which("nvcc")


# --- building -----------------------------------------------------------------------------------------

def stub(soname, symbols, node=None):
    """A link-time stand-in for a vendor runtime (its symbols in one version node named `node`)."""
    d = os.path.join(A.work, "stubs", soname)
    os.makedirs(d, exist_ok=True)
    args = ["-nostdlib"]
    if node:
        with open(os.path.join(d, "map"), "w") as f:
            f.write(f"{node} {{ global: {' '.join(s + ';' for s in symbols)} local: *; }};\n")
        args.append("-Wl,--version-script=" + os.path.join(d, "map"))
    return native.build(os.path.join(d, soname), "".join(f"void {s}(void) {{}}\n" for s in symbols), "x86_64", A.work,
                        args, soname=soname)


def gpu_library(name, archs, ptx=(), cudart=13):
    """libtorch_cuda.so for one variant: the kernel compiled by nvcc for `archs` (SASS, sm_XY) and `ptx`
    (compute_XY), linked against CUDA 13's real libcudart.so.13 or the CUDA 12 stand-in. Cached by content."""
    out = os.path.join(A.work, "gpu", name, "libtorch_cuda.so")
    key = json.dumps([KERNEL, archs, list(ptx), cudart, 2])
    if os.path.exists(out) and open(out + ".key").read() == key:
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cu = os.path.join(os.path.dirname(out), "k.cu")
    with open(cu, "w") as f:
        f.write(KERNEL)
    gencode = []
    for a in archs:
        gencode += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
    for a in ptx:
        gencode += ["-gencode", f"arch=compute_{a},code=compute_{a}"]
    obj = out + ".o"
    subprocess.run([A.nvcc, "-c", "-Xcompiler", "-fPIC", "-cudart", "none", *gencode, "-o", obj, cu], check=True)
    if cudart == 13:
        libs = [f"-L{CUDA13_LIB}", "-l:libcudart.so.13"]
    else:
        # The runtime comes from the nvidia-cuda-runtime-cu12 wheel, which the variant's Requires-Dist installs
        # and torch's import loads first.
        rt = stub(f"libcudart.so.{cudart}", CUDART_CALLS, node=f"libcudart.so.{cudart}")
        libs = [f"-L{os.path.dirname(rt)}", f"-l:libcudart.so.{cudart}"]
    subprocess.run(["g++", "-shared", "-fPIC", "-Wl,-soname,libtorch_cuda.so", "-Wl,--no-as-needed", "-o", out, obj,
                    *libs], check=True)
    with open(out + ".key", "w") as f:
        f.write(key)
    return out


def plain_library(name, needs=()):
    """A library of the wheel that needs `needs` (stand-ins: paths)."""
    args = ["-Wl,--no-as-needed"] + [f"-L{os.path.dirname(n)}" for n in needs] + [f"-l:{os.path.basename(n)}" for n in needs]
    src = "int torch_" + name.replace(".", "_").replace("-", "_") + "(void) { return 1; }\n"
    return native.build(os.path.join(A.work, "obj", name), src, "x86_64", A.work, args, soname=name.split("/")[-1])


def variant_json(release, label, properties=None):
    """A wheel's variant.json as variant-repack writes it: the release's priorities, providers and static
    properties, and the wheel's own variant alone (`properties` overrides what the release says for it)."""
    doc = {k: copy.deepcopy(release[k]) for k in ("$schema", "default-priorities", "providers") if k in release}
    if "static-properties" in release:
        doc["static-properties"] = copy.deepcopy(release["static-properties"])
    doc["variants"] = {label: properties if properties is not None else release["variants"][label]}
    return json.dumps(doc, indent=2)


def torch_wheel(out_dir, label, members, release, properties=None, version="2.10.0", requires=None):
    name = f"torch-{version}-{TAG}-{label}.whl" if label else f"torch-{version}-{TAG}.whl"
    out = os.path.join(out_dir, name)
    os.makedirs(out_dir, exist_ok=True)
    init = os.path.join(A.work, "obj", "__init__.py")
    os.makedirs(os.path.dirname(init), exist_ok=True)
    with open(init, "w") as f:
        f.write("")
    files = [("torch/__init__.py", init)] + members
    make_wheel.write_wheel(out, files, requires_dist=REQUIRES if requires is None else requires,
                           variant_json=variant_json(release, label, properties) if label else None)
    return out


# Every variant's METADATA holds the same Requires-Dist, told apart by variant markers as PyTorch's config
# writes them (torch_variant_config.toml's deps_add_list, a few of its lines; the CUDA 12 runtime under the
# name the images' layers install it as): only the picked variant's lines are installed with it.
REQUIRES = [
    "triton==3.6.0; platform_system == 'Linux' and 'nvidia' in variant_namespaces",
    "nvidia-cuda-runtime-cu12; platform_system == 'Linux' and (variant_label == 'cuda12.6' or variant_label == 'cuda12.8')",
    "nvidia-cuda-runtime==13.0.96; platform_system == 'Linux' and variant_label == 'cuda13.0'",
    "intel-sycl-rt==2025.3.1; 'intel' in variant_namespaces",
    'triton-rocm==3.6.0; platform_system == "Linux" and platform_machine == "x86_64" and "amd" in variant_namespaces',
]

# The GPU code each CUDA variant of the release carries: what it declares that CUDA 13's nvcc can build
# (sm_75 and newer; sm_50 to sm_70 were dropped in CUDA 13, so the cuda12.x stand-ins lack those).
CUDA_BUILDS = {
    "cuda12.6": dict(archs=["75", "80", "86", "90"], ptx=[], cudart=12),
    "cuda12.8": dict(archs=["75", "80", "86", "90", "100", "120"], ptx=[], cudart=12),
    "cuda13.0": dict(archs=["75", "80", "86", "90", "100", "120"], ptx=["120"], cudart=13),
}


def build_release():
    """Every variant of torch 2.10.0 as the index serves it, and the release's real variants file."""
    release = json.load(open(RELEASE))
    folder = os.path.join(A.work, "index", "variant", "torch")
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    shutil.copy(RELEASE, os.path.join(folder, "torch-2.10.0-variants.json"))
    c10 = plain_library("libc10.so")
    wheels = {}
    for label in release["variants"]:
        members = [("torch/lib/libc10.so", c10)]
        if label in CUDA_BUILDS:
            members.append(("torch/lib/libtorch_cuda.so", gpu_library(label, **CUDA_BUILDS[label])))
        elif label.startswith("rocm"):
            hip = stub("libamdhip64.so.7", ["hipLaunchKernel"], node="hip_7.0")
            members.append(("torch/lib/libtorch_hip.so", plain_library("libtorch_hip.so", [hip])))
        elif label == "xpu":
            sycl = stub("libsycl.so.8", ["sycl_queue"])
            members.append(("torch/lib/libtorch_xpu.so", plain_library("libtorch_xpu.so", [sycl])))
        wheels[label] = torch_wheel(folder, label, members, release)
    return release, wheels


# --- running ------------------------------------------------------------------------------------------

def wc(*args, fmt=None):
    cmd = [A.wheelcheck, *args, "--db", A.db, "--no-cache", "-q"] + (["--no-config"] if args[0] != "inspect" else [])
    if fmt:
        cmd += ["--format", fmt]
    # Its lookups go to the loopback index: never offline (WHEELCHECK_OFFLINE=1 would leave them unknown).
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, WHEELCHECK_OFFLINE=""))
    out = p.stdout
    if fmt in ("json", "sarif"):
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = None
    return p.returncode, out, p.stderr


def image_file(name, layers, driver=None, gpus=None, summary=""):
    doc = {"schema": "wheelcheck-image/1", "name": name, "summary": summary, "layers": layers}
    if driver is not None:
        doc["driver"] = {"value": driver, "note": "stated for the test"}
    if gpus is not None:
        doc["gpu_archs"] = {"value": gpus, "note": "stated for the test"}
    path = os.path.join(A.work, "images", name + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    return path


def images():
    return {
        "h100-cuda13": image_file("h100-cuda13", ["ubuntu24.04", "cuda13.0-runtime", "python3.12"], "580.65.06", "sm_90",
                                  "a CUDA 13.0 driver and one sm_90 GPU"),
        "a10-cuda12": image_file("a10-cuda12", ["ubuntu24.04", "cuda12.4-runtime", "python3.12"], "550.54.14", "sm_86",
                                 "a CUDA 12.4 driver and one sm_86 GPU"),
        "cpu": image_file("cpu", ["ubuntu24.04", "python3.12"], summary="no GPU"),
    }


def main():
    global A, CURRENT
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default="picks,claims,scan")
    A = ap.parse_args()
    A.work = os.path.abspath(A.work)
    A.nvcc = nvcc()
    if not A.nvcc or not native.have_compiler("x86_64") or not os.path.exists(os.path.join(CUDA13_LIB, "libcudart.so.13")):
        print("skipped: no nvcc and CUDA 13.0's libcudart under /usr/local/cuda-13.0 (or no gcc): the variants' GPU code "
              "cannot be built here; to run it, install NVIDIA's CUDA 13.0 toolkit there (or set WHEELCHECK_NVCC) and gcc")
        return 77
    os.makedirs(A.work, exist_ok=True)
    CURRENT = "build"
    release, wheels = build_release()
    only = A.only.split(",")
    server = Server(os.path.join(A.work, "index"))
    try:
        for part, fn in (("picks", picks), ("claims", claims), ("scan", scan)):
            if part in only:
                CURRENT = part
                fn(server, release, wheels)
    finally:
        server.close()
    if FAILURES:
        print(f"\n{len(FAILURES)} failure(s):\n  " + "\n  ".join(FAILURES))
        return 1
    print("\nall variant checks hold")
    return 0


def requirements(server, name="reqs.txt"):
    path = os.path.join(A.work, name)
    with open(path, "w") as f:
        f.write(f"--index-url {server.index('variant')}\ntorch==2.10.0\n")
    return path


def package_of(doc):
    return doc["packages"][0] if doc and doc.get("packages") else {}


def picks(server, release, wheels):
    reqs = requirements(server)
    ims = images()
    # (image, --assume, the label the drafts' algorithm gives, why)
    cases = [
        (ims["h100-cuda13"], [], "cuda13.0", "all three CUDA labels fit; 13.0 is the lower bound's best value"),
        (ims["a10-cuda12"], [], "cuda12.8", "cuda13.0 is out (13.0 > 12.4); cuda12.8 ties cuda12.6 and wins on priority"),
        (ims["cpu"], [], "null", "no GPU: only null fits"),
    ]
    # The CUDA 12 variants' GPU code is built here by CUDA 13's nvcc (cubin format 1.8): whatever runtime they
    # link, their cubins need CUDA 13's driver (>= 580), so on the A10's 550 driver the picked cuda12.8 file is
    # incompatible for exactly that (driver-too-old naming CUDA 13), and nothing else.
    driver_only = {ims["a10-cuda12"]}
    for image, assume, label, why in cases:
        rc, doc, err = wc("check", reqs, "--image", image, "--verify", "full", *assume, fmt="json")
        p = package_of(doc)
        name = os.path.basename(image)
        if image in driver_only:
            report = p.get("report") or {}
            errors = [f for f in report.get("findings", []) if f["severity"] == "error"]
            check(rc == 1 and errors and all(f["kind"] == "driver-too-old" and "CUDA 13" in f["explanation"]
                                             for f in errors),
                  f"{name}: the picked wheel's only errors are its CUDA 13-built GPU code on a 550 driver (exit {rc})",
                  json.dumps(errors)[:1500] + err[-1000:])
        else:
            check(rc == 0 and doc is not None, f"{name}: the check runs and the picked wheel is compatible (exit {rc})",
                  err[-2000:])
        check(p.get("file", "").endswith(f"-{label}.whl"), f"{name}: picks {label} ({why})", json.dumps(p.get("file")))
        v = p.get("variant") or {}
        check(v.get("label") == label and v.get("without_variants") == "none",
              f"{name}: says the label, and that an installer without variant support takes nothing", json.dumps(v))
        report = p.get("report") or {}
        want = "incompatible" if image in driver_only else "compatible"
        check(report.get("verdict") == want, f"{name}: the picked file is checked: {report.get('verdict')}",
              json.dumps(report.get("findings", [])[:3])[:1500])
        if label.startswith("cuda"):
            # Its GPU code was read and judged against the image's GPU (the check, not the pick, says so).
            kinds = {f["kind"] for f in report.get("findings", [])}
            check("fatbin-unread" not in kinds and "gpu-uncovered" not in kinds,
                  f"{name}: the picked variant's GPU code serves the image's GPU", json.dumps(sorted(kinds)))
    # The variant markers of Requires-Dist: the CUDA 12 runtime line holds for cuda12.8 alone.
    rc, doc, err = wc("check", reqs, "--image", ims["a10-cuda12"], "--verify", "full", fmt="json")
    text = json.dumps(package_of(doc).get("report", {}))
    check("libcudart.so.12" not in text or "missing-library" not in text,
          "a10-cuda12: libcudart.so.12 comes from nvidia-cuda-runtime-cu12, installed by the line whose variant marker "
          "holds for cuda12.8", text[:1500])
    # Driver and GPUs unknown (the db's cuda13.0 image): what is known to fit, and what the pick depends on.
    rc, out, err = wc("check", reqs, "--image", "cuda13.0")
    check("-null.whl" in out, "cuda13.0 (driver, GPUs unknown): takes null, the variant known to fit", out[-2000:])
    check("--assume driver=" in out and "--assume gpu_archs=" in out and "cuda13.0" in out,
          "cuda13.0: says the pick depends on the driver and the GPUs, and which labels may be taken instead", out[-2000:])
    rc, doc, err = wc("check", reqs, "--image", "cuda13.0", "--assume", "driver=580.65.06", "--assume", "gpu_archs=sm_90",
                      fmt="json")
    check(package_of(doc).get("file", "").endswith("-cuda13.0.whl"), "cuda13.0 with --assume driver and gpu_archs: cuda13.0",
          json.dumps(package_of(doc))[:800])
    # A user's own statement of a property (PEP 850's static list): sm_86 stated, driver 12.8.
    rc, doc, err = wc("check", reqs, "--image", "cuda13.0", "--assume", "driver=570.26", "--assume",
                      "nvidia::sm_arch=86_real,80_real", fmt="json")
    check(package_of(doc).get("file", "").endswith("-cuda12.8.whl"),
          "cuda13.0 with a CUDA 12.8 driver and nvidia::sm_arch stated: cuda12.8", json.dumps(package_of(doc))[:800])
    # inspect shows a variant wheel's label and properties; the JSON has them.
    rc, out, err = wc("inspect", wheels["cuda13.0"])
    check("variant cuda13.0" in out and "nvidia :: sm_arch :: 75_real" in out and "v0.0.3" in out,
          "inspect shows the variant, its properties and its schema version", out[:1500])
    rc, out, err = wc("inspect", wheels["rocm7.1"], "--json")
    try:
        v = json.loads(out)["wheel"]["variant"]
    except (ValueError, KeyError):
        v = None
    check(v is not None and v["label"] == "rocm7.1" and v["properties"]["amd"]["rocm_version"] == ["7.1"],
          "inspect --json: the variant's label and properties", json.dumps(v))


def config_properties(key):
    """A variant's properties as PyTorch's TOML config declares them (what variant-repack writes into the wheel)."""
    import tomllib
    with open(CONFIG, "rb") as f:
        cfg = tomllib.load(f)["variant_configs"][key]
    props = {}
    for p in cfg["properties"]:
        props.setdefault(p["namespace"], {}).setdefault(p["feature"], []).append(p["value"])
    for ns in props.values():
        for feature in ns:
            ns[feature] = sorted(ns[feature])
    return cfg["variant_label"], props


def lint(wheel, fmt="json", extra=()):
    return wc("lint", wheel, *extra, fmt=fmt)


def lint_findings(doc, kind=None, severity=None):
    if not doc or not doc.get("wheels"):
        return []
    return [f for f in doc["wheels"][0].get("findings", [])
            if (kind is None or f["kind"] == kind) and (severity is None or f["severity"] == severity)]


def words_of(f):
    return " ".join(str(f.get(k, "")) for k in ("explanation", "fix", "member", "library", "required_version")) + \
        " " + " ".join(f.get("evidence", []))


def valid(doc, schema, what):
    try:
        import jsonschema
    except ImportError:
        print(f"  skip  {CURRENT} {what}: python3-jsonschema is not installed")
        return
    errors = sorted(jsonschema.validators.validator_for(schema)(schema).iter_errors(doc), key=str)
    check(not errors, what, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5]))


def expect_claim(wheel, property_words, words, what, kind="variant-claim", severity="error", extra=()):
    """The finding in JSON (its words), in text and in SARIF (rule and level), and exit code 1."""
    rc, doc, err = lint(wheel, extra=extra)
    hits = [f for f in lint_findings(doc, kind, severity) if all(w in f.get("required_version", "") + " " + words_of(f)
                                                                  for w in property_words)]
    check(rc == 1, f"{what}: exit 1 (an error)", err[-1500:])
    ok = check(bool(hits), f"{what}: {kind} {severity} for {' '.join(property_words)}",
               json.dumps(lint_findings(doc), indent=1)[:3000])
    if ok:
        text = words_of(hits[0])
        missing = [w for w in words if w not in text]
        check(not missing, f"{what}: says {', '.join(words)}", f"missing {missing} in: {text}")
    valid(doc, json.load(open(os.path.join(REPO, "docs", "lint.schema.json"))), f"{what}: the JSON is docs/lint.schema.json")
    rc, out, err = lint(wheel, fmt="text", extra=extra)
    check(kind in out and property_words[0] in out, f"{what}: the text names it", out[:2000])
    rc, sarif, err = lint(wheel, fmt="sarif", extra=extra)
    results = [r for run in (sarif or {}).get("runs", []) for r in run.get("results", []) if r.get("ruleId") == kind]
    check(any(r.get("level") == "error" for r in results) if severity == "error" else bool(results),
          f"{what}: SARIF has the {kind} result", json.dumps(sarif)[:1500])
    return hits


def no_claims(wheel, what, extra=()):
    rc, doc, err = lint(wheel, extra=extra)
    bad = lint_findings(doc, "variant-claim") + [f for f in lint_findings(doc, "variant-metadata")
                                                 if "schema" not in f.get("required_version", "")]
    check(doc is not None and not bad, f"{what}: no variant finding but the schema version's", json.dumps(bad, indent=1)[:2000])


def claims(server, release, wheels):
    out = os.path.join(A.work, "defects")
    c10 = ("torch/lib/libc10.so", plain_library("libc10.so"))
    variants_file = ["--variants", RELEASE]
    # The release's own wheels: what nvcc 13 builds of each CUDA variant. cuda13.0 is whole; cuda12.6 and
    # cuda12.8 declare sm_50 to sm_70, which CUDA 13 no longer compiles for, so their stand-ins lack them.
    no_claims(wheels["cuda13.0"], "cuda13.0 as published, built whole", variants_file)
    no_claims(wheels["null"], "null", variants_file)
    hits = expect_claim(wheels["cuda12.6"], ["nvidia :: sm_arch :: 50_real"], ["sm_50", "torch/lib/libtorch_cuda.so",
                                                                                "sm_75"],
                        "cuda12.6 built by CUDA 13's nvcc (no sm_50)")
    # 1. sm_arch its fatbins contradict: cuda13.0 declaring 90_real, built for sm_80 and sm_120 (sm_80 SASS does
    #    not run on sm_90: another major; no PTX).
    lib = gpu_library("no-sm90", archs=["75", "80", "86", "100", "120"], ptx=[], cudart=13)
    w = torch_wheel(os.path.join(out, "sm"), "cuda13.0", [c10, ("torch/lib/libtorch_cuda.so", lib)], release)
    expect_claim(w, ["nvidia :: sm_arch :: 90_real"], ["sm_90", "-gencode arch=compute_90,code=sm_90"], "no sm_90 code")
    expect_claim(w, ["nvidia :: sm_arch :: 120_virtual"], ["PTX", "compute_120"], "no PTX for 120_virtual")
    # 2. A CUDA lower bound below the runtime its member needs: cuda12.8 (bound 12.0) linking libcudart.so.13.
    lib = gpu_library("cu128-rt13", **dict(CUDA_BUILDS["cuda12.8"], cudart=13))
    w = torch_wheel(os.path.join(out, "bound"), "cuda12.8", [c10, ("torch/lib/libtorch_cuda.so", lib)], release)
    expect_claim(w, ["nvidia :: cuda_version_lower_bound :: 12.0"],
                 ["libcudart.so.13", "CUDA 13.0", "cudaErrorInsufficientDriver"], "cuda12.8 needing CUDA 13's runtime")
    # 3. The seed's FlagTree defect as a variant: cuda13.0 (bound 13.0) whose member needs libcudart.so.12.
    lib = gpu_library("cu130-rt12", **dict(CUDA_BUILDS["cuda13.0"], cudart=12))
    w = torch_wheel(os.path.join(out, "flagtree"), "cuda13.0", [c10, ("torch/lib/libtorch_cuda.so", lib)], release)
    expect_claim(w, ["nvidia :: cuda_version_lower_bound :: 13.0"], ["libcudart.so.12", "CUDA 12"],
                 "cuda13.0 needing CUDA 12's runtime (the seed's FlagTree)")
    # 4. A label the properties contradict: cuda13.0 declaring a CUDA 12 floor.
    props = copy.deepcopy(release["variants"]["cuda13.0"])
    props["nvidia"]["cuda_version_lower_bound"] = ["12.0"]
    lib = gpu_library("cuda12.8", **CUDA_BUILDS["cuda12.8"])
    w = torch_wheel(os.path.join(out, "label"), "cuda13.0", [c10, ("torch/lib/libtorch_cuda.so", lib)], release, props)
    expect_claim(w, ["nvidia :: cuda_version_lower_bound :: 12.0"], ["cuda13.0", "CUDA 13"], "the label cuda13.0, a 12.0 floor")
    # 5. PyTorch's published config: rocm7.1 declares rocm_version 7.0. Built as variant-repack builds it from
    #    the TOML: the label and the index's file (7.1) both contradict it.
    label, props = config_properties("rocm71")
    hip = stub("libamdhip64.so.7", ["hipLaunchKernel"], node="hip_7.0")
    w = torch_wheel(os.path.join(out, "rocm"), label, [c10, ("torch/lib/libtorch_hip.so",
                                                             plain_library("libtorch_hip.so", [hip]))], release, props)
    expect_claim(w, ["amd :: rocm_version :: 7.0"], ["rocm7.1", "ROCm 7.1"], "PyTorch's config: rocm7.1 declaring ROCm 7.0")
    expect_claim(w, ["the index's"], ["amd :: rocm_version :: 7.0", "amd :: rocm_version :: 7.1"],
                 "PyTorch's config's rocm7.1 against the index's -variants.json", kind="variant-metadata", extra=variants_file)
    # The same wheel made from the JSON (7.1) is clean.
    no_claims(wheels["rocm7.1"], "rocm7.1 as the index's file declares it", variants_file)
    # 6. PyTorch's config's cuda13.0: the ordering namespace is `property` there (`priority` in the JSON), and it
    #    lists 110_real, which the index's file does not: an installer refuses to merge the two.
    label, props = config_properties("cu130")
    lib = gpu_library("cuda13.0", **CUDA_BUILDS["cuda13.0"])
    w = torch_wheel(os.path.join(out, "config"), label, [c10, ("torch/lib/libtorch_cuda.so", lib)], release, props)
    expect_claim(w, ["variant.json"], ["property", "default-priorities.namespace"], "PyTorch's config's cu130: namespace property",
                 kind="variant-metadata")
    expect_claim(w, ["the index's"], ["110_real"], "PyTorch's config's cu130 against the index's file",
                 kind="variant-metadata", extra=variants_file)
    # 7. abi_dependency :: torch against the torch pin.
    rel = copy.deepcopy(release)
    rel["default-priorities"]["namespace"].append("abi_dependency")
    rel["providers"]["abi_dependency"] = {"install-time": False, "requires": []}
    props = {"abi_dependency": {"torch": ["2.10"]}}
    ext = plain_library("vision_ext.so")
    w = os.path.join(out, "abi", f"torchvision-0.25.0-{TAG}-torch2.10.whl")
    os.makedirs(os.path.dirname(w), exist_ok=True)
    make_wheel.write_wheel(w, [("torchvision/_C.so", ext)], requires_dist=["torch==2.9.1"],
                           variant_json=variant_json(rel, "torch2.10", props))
    expect_claim(w, ["abi_dependency :: torch :: 2.10"], ["torch==2.9.1"], "abi_dependency torch 2.10, pinning torch 2.9.1")
    w2 = os.path.join(out, "abi-ok", f"torchvision-0.25.0-{TAG}-torch2.10.whl")
    os.makedirs(os.path.dirname(w2), exist_ok=True)
    make_wheel.write_wheel(w2, [("torchvision/_C.so", ext)], requires_dist=["torch==2.10.0"],
                           variant_json=variant_json(rel, "torch2.10", props))
    no_claims(w2, "abi_dependency torch 2.10, pinning torch 2.10.0")
    # 8. A label with no variant.json: no installer knows its properties.
    w = os.path.join(out, "bare", f"torch-2.10.0-{TAG}-cuda13.0.whl")
    os.makedirs(os.path.dirname(w), exist_ok=True)
    make_wheel.write_wheel(w, [c10])
    expect_claim(w, ["variant.json"], ["no", "variant.json"], "a label without variant.json", kind="variant-metadata")


def run_scan(server, state, ims, tag):
    out = os.path.join(A.work, "scan-" + tag)
    os.makedirs(out, exist_ok=True)
    args = ["scan", "--index", server.index("variant"), "--project", "torch", "--state", state,
            "--report", out, "--pins", os.path.join(out, "pins.env")]
    for im in ims:
        args += ["--image", im]
    rc, text, err = wc(*args)
    try:
        report = json.load(open(os.path.join(out, "report.json")))
    except (OSError, ValueError):
        report = None
    pins_env = open(os.path.join(out, "pins.env")).read() if os.path.exists(os.path.join(out, "pins.env")) else ""
    return rc, report, text, pins_env, err


def scan(server, release, wheels):
    ims = images()
    order = [ims["h100-cuda13"], ims["a10-cuda12"], ims["cpu"], "cuda13.0"]
    state = os.path.join(A.work, "scan-state")
    shutil.rmtree(state, ignore_errors=True)
    server.stats()
    rc, report, text, pins_env, err = run_scan(server, state, order, "first")
    check(report is not None, "the scan writes its report", err[-2000:])
    if report is None:
        return
    valid(report, json.load(open(os.path.join(REPO, "docs", "scan.schema.json"))), "the report is docs/scan.schema.json")
    expected = {"h100-cuda13": "cuda13.0", "a10-cuda12": "cuda12.8", "cpu": "null", "cuda13.0": "null"}
    pins = {p["image"]: p for p in report["pins"]}
    for image, label in expected.items():
        pick = (pins.get(image) or {}).get("pick") or {}
        check(pick.get("variant") == label and pick.get("filename", "").endswith(f"-{label}.whl"),
              f"pins one file on {image}: {label}", json.dumps(pins.get(image))[:1500])
        check(f"torch on {image}: torch-2.10.0-{TAG}-{label}.whl" in pins_env and f"_VARIANT" in pins_env,
              f"pins.env names the file and the label on {image}", pins_env[:2000])
        check(f"pin torch on {image}: 2.10.0, variant {label}" in text, f"stdout says the pin's label on {image}", text[-2500:])
    undecided = " ".join(pins["cuda13.0"]["pick"].get("undecided", []))
    check("cuda13.0" in undecided and "--assume driver=" in undecided,
          "cuda13.0 (driver and GPUs unknown): the pin says which variants wait on which facts", undecided)
    # The publisher check of each new wheel, once: read headers-only, the stand-in's fatbins are not read, and
    # its notes say sm_arch was not checked (`wheelcheck lint --verify full` checks it: the claims part).
    entry = next(w for w in report["wheels"] if w["filename"].endswith("-cuda12.6.whl"))
    pub = entry.get("publisher", {})
    check(any(f["kind"] == "variant-metadata" for f in pub.get("findings", [])) and
          any("nvidia :: sm_arch is not checked" in n for n in pub.get("notes", [])),
          "the scan's publisher check reads each variant once, saying what headers-only could not check", json.dumps(pub)[:2000])
    reqs = [r for r in server.stats() if r["path"].endswith("torch-2.10.0-variants.json")]
    check(len(reqs) == 1 and reqs[0]["status"] == 200, "the release's variants file read once", json.dumps(reqs))
    # Unchanged: asked again conditionally (304). Changed (the index drops cuda13.0): read afresh, and the pin moves.
    rc, report, text, pins_env, err = run_scan(server, state, order, "again")
    reqs = [r for r in server.stats() if r["path"].endswith("torch-2.10.0-variants.json")]
    check(len(reqs) == 1 and reqs[0]["status"] == 304 and reqs[0]["if_none_match"],
          "a second scan asks for the variants file by its ETag (304)", json.dumps(reqs))
    path = os.path.join(A.work, "index", "variant", "torch", "torch-2.10.0-variants.json")
    changed = copy.deepcopy(release)
    del changed["variants"]["cuda13.0"]
    with open(path, "w") as f:
        json.dump(changed, f, indent=4)
    try:
        rc, report, text, pins_env, err = run_scan(server, state, order, "changed")
        reqs = [r for r in server.stats() if r["path"].endswith("torch-2.10.0-variants.json")]
        check(len(reqs) == 1 and reqs[0]["status"] == 200, "the changed variants file is read afresh", json.dumps(reqs))
        pins = {p["image"]: p for p in (report or {}).get("pins", [])}
        # cuda13.0 is no longer a variant of the release; cuda12.8 and cuda12.6 fit the driver and the GPU but
        # need CUDA 12's runtime, which this CUDA 13 image lacks: the check passes them over, and null is pinned.
        pin = pins.get("h100-cuda13") or {}
        over = {o["filename"].rsplit("-", 1)[1]: o["reason"] for o in pin.get("passed_over", [])}
        check((pin.get("pick") or {}).get("variant") == "null" and "libcudart.so.12" in over.get("cuda12.8.whl", "")
              and "-cuda13.0.whl" not in json.dumps(pin.get("pick")),
              "h100-cuda13: cuda13.0 no longer listed; cuda12.8 passed over (libcudart.so.12 missing), null pinned",
              json.dumps(pin)[:1500])
    finally:
        shutil.copy(RELEASE, path)


if __name__ == "__main__":
    sys.exit(main())

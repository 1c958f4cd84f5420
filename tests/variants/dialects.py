#!/usr/bin/env python3
"""Wheel variants in each dialect of the format in use (../shared/reference/variants.md, its update of
2026-12-06), tried as a user would: variant wheels built here (a shared object compiled by gcc, a variant.json
written in wheelnext's v0.0.3, in PEP 825's v0.1.1, or declaring no dialect), checked by `wheelcheck lint` and
`wheelcheck check FILE --image NAME`.

  dialects.py --wheelcheck BIN --work DIR

  lint   each file judged by the dialect its $schema declares, the sentence naming who reads it: v0.0.3 a warning
         (wheelnext/variantlib reads it, uv's preview refuses it), its feature override no issue; v0.1.1 clean
         without providers, its feature override an error (v0.1.1 removed it), providers a warning (outside
         PEP 825); no $schema an error (no installer listed reads it); a v0.1.1 marker on one of several values
         of a feature is a note (variant_properties holds the supported ones alone).
  check  a variant wheel checked by file against an image: a property the image contradicts is a variant-claim
         warning naming the installers of its dialect, the property and the image's fact, and the loader's
         verdict and exit code stay those of the same wheel without a variant; a property the image supports
         gives none; one whose fact the image does not state is "not stated", with the --assume that states it.

Exit 0 when every assertion holds, 1 otherwise (each failure named), 77 when gcc is absent.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
import make_wheel  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from wheelcheck_test import Checks  # noqa: E402


A = None
CHECKS = Checks(detail_limit=1500)
check, FAILURES = CHECKS.check, CHECKS.failures
V003 = "https://variants-schema.wheelnext.dev/v0.0.3.json"
V011 = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
NVIDIA_PROVIDER = {"plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin",
                   "requires": ["nvidia-variant-provider>=0.0.2,<1.0.0"]}


def run(*args):
    env = dict(os.environ, WHEELCHECK_OFFLINE="1", NO_COLOR="1")
    p = subprocess.run([A.wheelcheck, *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def variant_json(schema, properties, label="cuda13.0", feature_override=False, providers=False):
    doc = {}
    if schema is not None:
        doc["$schema"] = schema
    doc["default-priorities"] = {"namespace": sorted(properties)}
    if feature_override:
        doc["default-priorities"]["feature"] = {"nvidia": ["sm_arch", "cuda_version_lower_bound"]}
    if providers:
        doc["providers"] = {ns: NVIDIA_PROVIDER for ns in properties}
    doc["variants"] = {label: properties}
    return json.dumps(doc, indent=2)


def wheel(name, so, label=None, doc=None, requires_dist=()):
    tail = f"-{label}" if label else ""
    out = os.path.join(A.work, f"{name}-1.0-py3-none-any{tail}.whl")
    make_wheel.write_wheel(out, [(f"{name}/libf.so", so)], requires_dist=list(requires_dist), variant_json=doc)
    return out


def lint_findings(path):
    rc, out, err = run("lint", path, "--json")
    doc = json.loads(out)
    w = doc["wheels"][0]
    return rc, [f for f in w["findings"] if f["kind"].startswith("variant")], w.get("notes", [])


def lint_job(so):
    print("lint: each dialect by its own rules")
    cuda = {"nvidia": {"cuda_version_lower_bound": ["13.0"]}}
    # v0.0.3 with providers and a feature override: its own dialect's file; a warning naming who reads it.
    _, fs, _ = lint_findings(wheel("a003", so, "cuda13.0",
                                   variant_json(V003, cuda, feature_override=True, providers=True)))
    meta = [f for f in fs if f["kind"] == "variant-metadata"]
    check(len(meta) == 1 and meta[0]["severity"] == "warning"
          and meta[0]["required_version"] == "schema v0.0.3: read by wheelnext/variantlib"
          and "uv's preview (0.13.x) reads PEP 825 v0.1.1 alone and refuses it" in meta[0]["explanation"]
          and "pip reads no variants" in meta[0]["explanation"],
          "v0.0.3: one warning, its schema, naming wheelnext/variantlib as its reader and uv's preview as refusing it",
          json.dumps(meta))
    # v0.0.3 without providers: variantlib's rule.
    _, fs, _ = lint_findings(wheel("b003", so, "cuda13.0", variant_json(V003, cuda)))
    check(any(f["severity"] == "error" and f["required_version"] == "providers (wheelnext's v0.0.3)"
              and "in v0.0.3 every namespace has one" in f["explanation"] for f in fs),
          "v0.0.3 without a provider: an error, v0.0.3's rule", json.dumps(fs))
    # v0.1.1 as uv writes it: nothing to say.
    _, fs, _ = lint_findings(wheel("a011", so, "cuda13.0", variant_json(V011, cuda)))
    check(fs == [], "v0.1.1 without providers or overrides: no variant finding (no provider is asked of it)",
          json.dumps(fs))
    # v0.1.1 with the v0.0.3 feature override: invalid in v0.1.1.
    _, fs, _ = lint_findings(wheel("b011", so, "cuda13.0", variant_json(V011, cuda, feature_override=True)))
    check(any(f["severity"] == "error" and f["required_version"] == "default-priorities (PEP 825 v0.1.1)"
              and "v0.1.1 removed the feature and property overrides" in f["explanation"] for f in fs)
          and not any("schema v0" in f["required_version"] for f in fs),
          "v0.1.1 with a feature override: an error, v0.1.1 removed it; its schema is no issue", json.dumps(fs))
    # v0.1.1 with providers: outside PEP 825 v0.1.1, read by uv's preview as its extension.
    _, fs, _ = lint_findings(wheel("c011", so, "cuda13.0", variant_json(V011, cuda, providers=True)))
    check(len(fs) == 1 and fs[0]["severity"] == "warning" and "providers is no part of PEP 825 v0.1.1"
          in fs[0]["explanation"] and "uv's preview reads it as its own extension" in fs[0]["explanation"],
          "v0.1.1 with providers: a warning, outside the schema, uv's extension", json.dumps(fs))
    # No $schema: a sentence naming who reads what.
    _, fs, _ = lint_findings(wheel("none", so, "cuda13.0", variant_json(None, cuda)))
    check(any(f["severity"] == "error" and f["required_version"] == "schema not declared: no installer listed reads it"
              and "uv's preview (0.13.x) reads PEP 825 v0.1.1" in f["explanation"]
              and "wheelnext/variantlib is frozen at v0.0.3" in f["explanation"] for f in fs),
          "no $schema: an error naming the dialects and their readers", json.dumps(fs))
    # Markers in v0.1.1: variant_properties holds the supported values alone.
    sm = {"nvidia": {"sm_arch": ["80_real", "90_real"]}}
    marker = "extra-kernels; 'nvidia :: sm_arch :: 90_real' in variant_properties"
    _, fs, notes = lint_findings(wheel("m011", so, "cuda12.8", variant_json(V011, sm, label="cuda12.8"),
                                       requires_dist=[marker]))
    check(any("variant_properties holds only the properties of cuda12.8 the installing machine supports" in n
              and "nvidia :: sm_arch :: 90_real" in n for n in notes),
          "v0.1.1: a marker on one of several sm_arch values is a note (it holds on some machines only)",
          json.dumps(notes))
    _, fs, notes = lint_findings(wheel("m003", so, "cuda12.8",
                                       variant_json(V003, sm, label="cuda12.8", providers=True),
                                       requires_dist=[marker]))
    check(not any("variant_properties" in n for n in notes), "v0.0.3: the same marker is no note (it sees them all)",
          json.dumps(notes))


def check_json(path, *extra):
    rc, out, err = run("check", path, "--image", "cuda13.0", "--json", *extra)
    try:
        return rc, json.loads(out)
    except json.JSONDecodeError:
        return rc, {"error": err, "findings": []}


def claims(doc):
    return [f for f in doc.get("findings", []) if f["kind"] == "variant-claim"]


def check_job(so):
    print("check: a variant wheel by file against the image")
    cuda13 = {"nvidia": {"cuda_version_lower_bound": ["13.0"]}}
    plain = wheel("plainx", so)
    v011 = wheel("plainx", so, "cuda13.0", variant_json(V011, cuda13))
    v003 = wheel("otherx", so, "cuda13.0", variant_json(V003, cuda13, providers=True))
    # The image's driver is CUDA 12.8's: the lower bound 13.0 is contradicted.
    old = ("--assume", "driver=570.26")
    rc_plain, d_plain = check_json(plain, *old)
    rc, d = check_json(v011, *old)
    cs = claims(d)
    check(len(cs) == 1 and cs[0]["severity"] == "warning"
          and cs[0]["required_version"] == "nvidia :: cuda_version_lower_bound :: 13.0"
          and cs[0]["candidates"] == ["driver 570.26 (CUDA 12.8)"]
          and "a variant-aware installer (uv 0.13.x's preview, which reads its PEP 825 v0.1.1 variant.json) would "
              "not select this wheel for this image" in cs[0]["explanation"]
          and "the image has driver 570.26 (CUDA 12.8)" in cs[0]["explanation"]
          and "pip ignores variants and installs it all the same" in cs[0]["explanation"],
          "v0.1.1, CUDA 12.8 driver: a variant-claim warning naming uv's preview, the property and the driver",
          json.dumps(cs))
    check(rc == rc_plain and d.get("verdict") == d_plain.get("verdict"),
          f"the loader's verdict and exit code stay the plain wheel's ({d_plain.get('verdict')}, exit {rc_plain})",
          f"variant: {d.get('verdict')} exit {rc}")
    rc, d = check_json(v003, *old)
    cs = claims(d)
    check(len(cs) == 1 and "(wheelnext/variantlib, which reads its wheelnext's v0.0.3 variant.json; uv's preview "
          "refuses the file) would not select this wheel for this image" in cs[0]["explanation"],
          "v0.0.3: the same finding names wheelnext/variantlib, and that uv's preview refuses the file", json.dumps(cs))
    check(rc == rc_plain and d.get("verdict") == d_plain.get("verdict"), "v0.0.3: verdict and exit code unchanged",
          f"variant: {d.get('verdict')} exit {rc}")
    # The driver is CUDA 13.0's: the property holds; nothing to say.
    rc, d = check_json(v011, "--assume", "driver=580.65.06")
    check(claims(d) == [], "v0.1.1, CUDA 13.0 driver: the property matches, no variant-claim", json.dumps(claims(d)))
    # The image does not state its driver: not stated, and how to state it.
    rc, d = check_json(v011)
    cs = claims(d)
    check(len(cs) == 1 and cs[0]["severity"] == "info" and "is not stated" in cs[0]["explanation"]
          and "--assume driver=VERSION" in cs[0]["fix"],
          "driver not stated: a note saying so and how to state it (--assume driver=)", json.dumps(cs))
    rc_plain, d_plain = check_json(plain)
    check(rc == rc_plain and d.get("verdict") == d_plain.get("verdict"), "not stated: verdict and exit code unchanged",
          f"variant: {d.get('verdict')} exit {rc}")
    # An image built for another vendor: nothing in nvidia is supported there.
    rc, out, err = run("check", v011, "--image", "flagos-base-metax-maca3.7.2.1", "--json")
    cs = claims(json.loads(out)) if out.strip().startswith("{") else []
    check(len(cs) == 1 and "no NVIDIA driver" in cs[0]["explanation"],
          "a MetaX image: the nvidia property is contradicted (no NVIDIA driver there)", out[-1500:] + err[-500:])


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--work", required=True)
    A = ap.parse_args()
    gcc = shutil.which("gcc")
    if gcc is None:
        print("skipped: no gcc to build the variants' shared object")
        return 77
    shutil.rmtree(A.work, ignore_errors=True)
    os.makedirs(A.work)
    src = os.path.join(A.work, "f.c")
    with open(src, "w") as f:
        f.write("int variant_f(void) { return 1; }\n")
    so = os.path.join(A.work, "libf.so")
    subprocess.run([gcc, "-shared", "-fPIC", "-o", so, src], check=True)
    lint_job(so)
    check_job(so)
    if FAILURES:
        print(f"\n{len(FAILURES)} failed:\n  " + "\n  ".join(FAILURES))
        return 1
    print("\nall dialect checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""FlagOS's release matrix, run as its user runs it: samples/flagos-release/release-matrix.sh builds the catalog's
wheels (tests/flagos/catalog.py), serves them as FlagOS's indexes on loopback and scans every wheel against every
FlagOS image, twice (cold, then from the warm profile cache). Asserted here:

- every catalog wheel is checked, against the 40 images, with no error;
- the pins name, per image, only wheels built for that image's toolkit: a FlagCX or torch-fl build only on the
  backend its label names (+cann9.0.0.910c only on the CANN 9.0.0 910C images), a FlagTree build only on its
  vendor's images and, where the image has its own FlagTree, on the same Triton line (+ascend3.2 on CANN 8.5);
- what FlagOS's own facts say cannot work is said: FlagCX +tangrt1.2.0 needs libpccl.so, whose folder is not on
  the Sunrise image's LD_LIBRARY_PATH, and +xre5.37.1 needs libxccl.so, which the Kunlunxin image lacks
  (backends.yaml: "cannot be delivered"); neither is pinned, and the pins say why;
- the second run reads no wheel again (its bytes are the index pages only).

  release_matrix.py --wheelcheck BIN --out DIR
Exit 0 when every assertion holds, 1 otherwise (each failure named).
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from wheelcheck_test import Checks  # noqa: E402


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CHECKS = Checks()
check, FAILURES = CHECKS.check, CHECKS.failures


def label_line(version):
    """The Triton line of a FlagTree vendor label (0.7.0+ascend3.5 -> 3.5); None without one."""
    m = re.search(r"\+[a-z]+(\d+)\.(\d+)", version)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    p = subprocess.run([os.path.join(REPO, "samples", "flagos-release", "release-matrix.sh"), "--wheelcheck",
                        a.wheelcheck, "--out", a.out, "--runs", "2"], capture_output=True, text=True)
    print(p.stderr[-3000:])
    check(p.returncode == 0, "release-matrix.sh ran", p.stdout[-2000:] + p.stderr[-2000:])
    if p.returncode != 0:
        return 1
    doc = json.load(open(os.path.join(a.out, "manifest.json")))
    if doc["skipped"]:
        print("release_matrix.py: SKIP: builds left out (scripts/install-deps.sh installs the aarch64 cross compilers): "
              + ", ".join(doc["skipped"]))
        return 77
    manifest = {m["file"]: m for m in doc["files"]}
    report = json.load(open(os.path.join(a.out, "report", "report.json")))
    runs = json.load(open(os.path.join(a.out, "runs.json")))
    images = report["images"]
    check(len([i for i in images if i.startswith("flagos-")]) == 40 and len(images) == 40, "the 40 FlagOS images",
          json.dumps(images))
    versions = {(m["project"], m["file"].split("-")[1]) for m in manifest.values()}
    check(len(versions) == 56, "55 catalog versions and flag_gems' daily build", str(sorted(versions)))
    seen = {w["filename"]: w for w in report["wheels"]}
    check(set(seen) == set(manifest), "every catalog wheel is in the report", str(set(manifest) ^ set(seen)))
    check(all(w["error"] is None and len(w["results"]) == 40 for w in seen.values()),
          "each checked against every image, none unreadable")
    check(report["summary"]["errors"] == 0, "no errors", json.dumps(report["summary"]))

    def image_backend(image):
        return image.split("-", 2)[2]

    def own_flagtree(image):
        with open(os.path.join(REPO, "db", "images", image + ".json")) as f:
            for d in json.load(f).get("distributions", []):
                if d["name"] == "flagtree":
                    return d["version"]
        return None

    wrong = []
    counted = 0
    for pin in report["pins"]:
        pick = pin.get("pick")
        if not pick:
            continue
        m = manifest[pick["filename"]]
        backend = image_backend(pin["image"])
        if m["kind"] in ("flagcx", "torch-fl"):
            counted += 1
            if m["backend"] != backend:
                wrong.append(f"{pin['image']}: {pick['filename']} (built for {m['backend']})")
        elif m["kind"] == "flagtree":
            counted += 1
            if m["backend"] is None or m["backend"].split("-")[0] != backend.split("-")[0]:
                wrong.append(f"{pin['image']}: {pick['filename']} (a {m['backend']} build)")
            mine = own_flagtree(pin["image"]) if pin["image"].startswith("flagos-runtime-") else None
            if mine and label_line(mine) and label_line(pick["version"]) != label_line(mine):
                wrong.append(f"{pin['image']}: {pick['filename']} (the image's FlagTree is {mine})")
    check(counted > 60 and not wrong, f"the {counted} FlagCX, torch-fl and FlagTree pins name only builds for the "
          "image's toolkit", "\n".join(wrong))
    pins = {(p["image"], p["project"]): p for p in report["pins"]}
    for image in images:
        if not image.startswith("flagos-runtime-"):
            continue
        backend = image_backend(image)
        cx = pins.get((image, "flagcx"))
        if backend in ("sunrise-tangrt1.2.0", "kunlunxin-xre5.37.1"):
            continue
        check(cx is not None and cx.get("pick") and manifest[cx["pick"]["filename"]]["backend"] == backend,
              f"{image}: its own FlagCX build is pinned", json.dumps(cx)[:800])

    def cell(filename, image):
        return next(r for r in seen[filename]["results"] if r["image"] == image)
    for label, image, lib in (("tangrt1.2.0", "flagos-runtime-sunrise-tangrt1.2.0", "libpccl.so"),
                              ("xre5.37.1", "flagos-runtime-kunlunxin-xre5.37.1", "libxccl.so")):
        f = next(n for n in manifest if n.startswith(f"flagcx-0.14.0+{label}-"))
        c = cell(f, image)
        check(c["verdict"] == "incompatible" and lib in c["headline"], f"FlagCX +{label} on {image}: {lib} missing",
              json.dumps(c)[:1500])
        pin = pins.get((image, "flagcx"))
        check(pin is not None and not pin.get("pick") and any(f == o["filename"] for o in pin["passed_over"]),
              f"no FlagCX pin on {image}, and the pins say why", json.dumps(pin)[:1500])
    with open(os.path.join(a.out, "version-pins.env")) as f:
        env = f.read()
    check("FLAGCX_WHEEL_FLAGOS_RUNTIME_NVIDIA_CUDA13_3='flagcx-0.14.0+cuda13.3-cp312-cp312-linux_x86_64.whl'" in env
          and "FLAGTREE_WHEEL_FLAGOS_RUNTIME_ASCEND_CANN8_5_0='flagtree-0.6.0+ascend3.2-cp311-cp311-linux_aarch64.whl'"
          in env, "version-pins.env: CUDA 13.3's FlagCX, CANN 8.5's FlagTree on the 3.2 line")
    cold, warm = runs[0], runs[1]
    wheel_bytes = sum(os.path.getsize(os.path.join(a.out, "index", m["index"], m["project"].replace("_", "-").lower(),
                                                   m["file"])) for m in manifest.values())
    check(cold["bytes"] >= wheel_bytes, f"the cold run read the wheels ({cold['bytes']} bytes served)")
    check(warm["bytes"] < wheel_bytes // 4, f"the warm run read pages only ({warm['bytes']} bytes served)",
          json.dumps(runs))
    print(f"timings: cold {cold['seconds']}s ({cold['requests']} requests, {cold['bytes']} bytes), warm "
          f"{warm['seconds']}s ({warm['requests']} requests, {warm['bytes']} bytes); "
          f"{len(manifest)} wheels x {len(images)} images")
    if FAILURES:
        print(f"\n{len(FAILURES)} failed:\n  " + "\n  ".join(FAILURES))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

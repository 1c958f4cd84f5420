#!/usr/bin/env python3
"""The publisher check (`wheelcheck lint`) finds nothing false on wheels it did not make: auditwheel's own test
wheels (../shared/fixtures/auditwheel-wheels), the downloaded corpus's wheels ($WHEELCHECK_CORPUS/wheels, when
../shared/corpus/make-real-wheels.sh has made them) and the samples' wheels (build/samples).

  clean.py --wheelcheck BIN --db DIR --samples DIR

Every wheel is listed below with the findings it must have, each justified; a finding not listed (of severity
info and above) fails the test, and so does a listed one that is missing. For a linux_* tag the tag-floor
finding must name the policy auditwheel itself names (fixtures/auditwheel-show: overall_tag), and for a tag
that claims a policy the tag-claim finding must name what auditwheel says the wheel is consistent with.

Exit 0 when every wheel comes out as listed, 1 otherwise; corpus wheels that are absent are skipped with a line.
"""
import argparse
import fnmatch
import glob
import json
import os
import subprocess
import sys

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "..", "shared")
FIXTURES = os.path.join(SHARED, "fixtures", "auditwheel-wheels")
PEER = os.path.join(SHARED, "fixtures", "auditwheel-show")
CORPUS = os.path.join(os.environ.get("WHEELCHECK_CORPUS", os.path.expanduser("~/.cache/wheelcheck-corpus")), "wheels")

# wheel (a glob on the path under its folder) -> [(kind, severity, why it is true)]
FLOOR = "a linux_* tag promises nothing (pip installs it on any Linux of its machine); its binaries need what auditwheel names"
EXPECTED = {
    # auditwheel's test wheels
    "plumbum-1.6.8-py2.py3-none-any.whl": [],
    "glibc/testsimple-0.0.1-cp313-cp313-linux_mips64.whl": [
        ("extension-suffix", "error", "its only module is testsimple.cpython-311-mips64el-linux-gnuabi64.so, CPython "
                                      "3.11's name, in a wheel tagged cp313: CPython 3.13 never imports it"),
        ("tag-floor", "warning", FLOOR)],
    "glibc/*testsimple-*-linux_*.whl": [("tag-floor", "warning", FLOOR)],
    "musllinux_1_2/testsimple-*-linux_*.whl": [("tag-floor", "warning", FLOOR)],
    "cffi-1.5.0-cp27-none-linux_x86_64.whl": [("tag-floor", "warning", FLOOR + ": libffi.so.5 and a UCS2 build")],
    "fpewheel-0.0.0-cp35-cp35m-linux_x86_64.whl": [("tag-floor", "warning", FLOOR + ": PyFPE_jbuf")],
    "python_snappy-0.5.2-pp260-pypy_41-linux_x86_64.whl": [("tag-floor", "warning", FLOOR + ": libsnappy.so.1")],
    "testzlib-0.0.1-cp310-cp310-linux_x86_64.whl": [("tag-floor", "warning", FLOOR + ": zlib's internal zcalloc")],
    "android/spam-0.1.0-cp313-cp313-android_24_arm64_v8a.whl": [
        ("tag-claim", "error", "tagged android_24, it needs libc++_shared.so, which it does not bundle: auditwheel "
                               "says linux_aarch64")],
    "python_mscl-67.0.1.0-cp313-cp313-manylinux2014_aarch64.whl": [
        ("tag-claim", "error", "tagged manylinux2014, it links libpython3.13 and needs GLIBC_2.29: auditwheel says "
                               "linux_aarch64 (sym_tag manylinux_2_31)")],
    # the corpus (../shared/corpus/make-real-wheels.sh)
    "nvidia_cuda_runtime_cu12-*.whl": [],
    "torch_python_ext-2.6.0-cp313-cp313-linux_x86_64.whl": [
        ("undeclared-dependency", "error", "Debian's libtorch_python.so.2.6 packed alone, declaring nothing: it needs "
                                           "torch's libtorch.so.2.6 and libc10.so.2.6"),
        ("tag-floor", "warning", "linux_x86_64, and Debian's build needs GLIBC_2.38 and torch's libraries")],
    # the --large corpus wheels (../shared/corpus/make-real-wheels.sh --large): NVIDIA's cuBLAS as published is
    # clean; Debian's CUDA build of PyTorch 2.6 packed as a wheel ships libc10.so.2.6 and libtorch_cpu.so.2.6, which define the c10:: and
    # at:: symbols its other libraries leave undefined (no distribution is needed for them: issue 60), while
    # libtorch_python.so.2.6 needs libtorch.so.2.6 and libshm.so.2.6, which Debian ships in other packages and no
    # wheel ships (shown, not a finding: no distribution to declare); its CUDA libraries (libcudart.so.12, cuDNN,
    # cuBLAS, NCCL...) come from nvidia-* or the image (info); Debian's build needs GLIBC_2.38 and system libraries no
    # policy allows (the tag-floor warning)
    "nvidia_cublas-*.whl": [],
    "torch_cuda_debian-2.6.0-cp313-cp313-linux_x86_64.whl": [
        ("undeclared-dependency", "info", "the CUDA runtimes: nvidia-* or the image's toolkit"),
        ("tag-floor", "warning", "linux_x86_64: GLIBC_2.38 and libraries no manylinux policy allows")],
    # the samples (samples/CMakeLists.txt)
    "hello_native-1.0-cp311-cp311-linux_x86_64.whl": [("tag-floor", "warning", FLOOR + ": manylinux_2_5 (sqrt)")],
    "flagos/flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl": [
        ("tag-floor", "warning", "linux_x86_64 (every compiled FlagOS wheel): it needs CUDA 13's libcudart.so.13 "
                                 "from the image"),
        ("undeclared-dependency", "info", "libcudart.so.13: nvidia-cuda-runtime or the image's CUDA 13 toolkit")],
    "flagos/flagtree-0.6.1-cp312-cp312-linux_x86_64.whl": [
        ("tag-floor", "warning", "linux_x86_64: its libflagcx.so needs CUDA 12's libcudart.so.12"),
        ("undeclared-dependency", "info", "libcudart.so.12: nvidia-cuda-runtime-cu12 or the image's CUDA 12 toolkit")],
    "flagos/flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl": [
        ("tag-floor", "warning", "linux_x86_64: libtriton_jit.so needs torch's libc10.so and GLIBC_2.32")],
    "flagos/flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl": [
        ("undeclared-dependency", "error", "the seed's defect: _C needs libtorch_npu.so and the wheel does not "
                                           "declare torch-npu"),
        ("tag-floor", "warning", "linux_aarch64: it needs CANN's libraries from the image")],
}


def expected_for(rel):
    for pattern, want in EXPECTED.items():
        if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(rel), pattern):
            return want
    return None


def peer_answer(wheel):
    """auditwheel show's overall_tag for a fixture wheel, when it answered."""
    for path in glob.glob(os.path.join(PEER, "*.json")):
        with open(path) as f:
            j = json.load(f)
        if j.get("wheel") == os.path.basename(wheel) and "overall_tag" in j:
            prefix = os.path.basename(path)[: -len(os.path.basename(wheel)[:-4]) - 5]
            folder = os.path.basename(os.path.dirname(wheel))
            if prefix.rstrip("_") in ("", folder):
                return j["overall_tag"]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--samples", required=True)
    a = ap.parse_args()
    wheels = []
    for root, label in ((FIXTURES, "fixture"), (CORPUS, "corpus"), (a.samples, "sample")):
        if not os.path.isdir(root):
            print(f"skipped: {label} wheels absent ({root})")
            continue
        for w in sorted(glob.glob(os.path.join(root, "**", "*.whl"), recursive=True)):
            wheels.append((label, os.path.relpath(w, root), w))
    if not any(label == "corpus" for label, _, _ in wheels):
        print("skipped: the corpus wheels (../shared/corpus/fetch-real-binaries.sh and make-real-wheels.sh make them)")
    failures = []
    for label, rel, w in wheels:
        want = expected_for(rel)
        if want is None:
            failures.append(f"{rel}: a {label} wheel this test does not list (add it, with its findings justified)")
            continue
        p = subprocess.run([a.wheelcheck, "lint", w, "--json", "--db", a.db, "--no-cache", "-q", "--no-config"],
                           capture_output=True, text=True)
        try:
            doc = json.loads(p.stdout)
            got = doc["wheels"][0]["findings"]
        except (ValueError, KeyError, IndexError):
            failures.append(f"{rel}: no JSON document (exit {p.returncode}): {p.stderr.strip()}")
            continue
        have = sorted({(f["kind"], f["severity"]) for f in got})
        listed = sorted({(k, s) for k, s, _ in want})
        ok = have == listed
        peer = peer_answer(w) if label == "fixture" else None
        for f in got:
            if peer and f["kind"] in ("tag-floor", "tag-claim") and f["required_version"] != peer:
                ok = False
                failures.append(f"{rel}: {f['kind']} names {f['required_version']}, auditwheel says {peer}")
        code = {"error": 1, "warning": 3}
        rc = max((code.get(s, 0) for _, s in listed), key=lambda c: (c == 1, c == 3), default=0)
        if p.returncode != rc:
            ok = False
            failures.append(f"{rel}: exit {p.returncode}, expected {rc}")
        print(f"  {'ok  ' if ok else 'FAIL'}  {label:8} {rel}: " +
              (", ".join(f"{k} ({s})" for k, s in have) or "no findings") + (f" [auditwheel: {peer}]" if peer else ""))
        if have != listed:
            failures.append(f"{rel}: findings {have}, listed {listed}:\n" +
                            "\n".join(f"      {f['severity']} {f['kind']}: {f['explanation'][:300]}" for f in got))
        for k, s, why in want:
            print(f"          {k} ({s}): {why}")
    if failures:
        print(f"\n{len(failures)} failed:\n  " + "\n  ".join(failures))
        return 1
    print(f"\n{len(wheels)} wheels: no finding beyond the listed, justified ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())

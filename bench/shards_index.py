#!/usr/bin/env python3
"""Generates the package index of bench/shards.sh: 2,016 well-formed wheels, every one with its own sha256, in
tests/net/server.py's layout (OUT/root/shards/<project>/<file>). Cached: a tree whose OUT/STAMP matches this
version and these parameters is kept as it is (reruns take a second); any other is removed and rewritten.

    bench/shards_index.py OUT [--jobs N]       (OUT: e.g. bench/out/shards-index; prints the composition)

The mix (200 projects x 10 versions, plus 2 torch-shaped projects x 8 versions):
  small   160 projects: re-packs of the sample wheels (build/samples/flagos/*.whl, hello_native), 5-12 KB,
          10-20 members; their tags as the samples have them (cp311/cp312, x86_64 and one aarch64)
  medium   20 projects: a sample plus 1-2 real libraries of this machine (libzstd, libssl, libcurl, libcrypto,
          libstdc++, libarchive) under <pkg>/lib/: 0.3-3 MB
  many     20 projects: a sample plus 200-800 small Python sources (1-4 KiB): hundreds of members
  torch     2 projects x 8: bench/torch_shaped.py's wheel (1,900 Python sources, libstdc++, libcrypto,
          libpython) made once and re-packed under each name and version, re-tagged cp312 (~7 MB each)
Names: project bench-<kind>-NNN, distribution bench_<kind>_NNN, versions 1.J.0 (J = 1..10). A re-pack rewrites
METADATA (Name, Version) and RECORD, so no two wheels share a sha256 (checked; the generator fails otherwise).
"""
import argparse
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
from sample_index import rewrite_metadata, split_wheel_name, zip_with_record  # noqa: E402

STAMP = "shards-index v2: small 160x10, medium 20x10, many 20x10, torch 2x8 (1900 members, cp312)"
INDEX = "shards"
SAMPLES = ["build/samples/hello_native-1.0-cp311-cp311-linux_x86_64.whl",
           "build/samples/flagos/flagtree-0.6.1-cp312-cp312-linux_x86_64.whl",
           "build/samples/flagos/flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl",
           "build/samples/flagos/flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl",
           "build/samples/flagos/flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl"]
LIBDIR = "/usr/lib/x86_64-linux-gnu"
LIB_SETS = [["libzstd.so.1"], ["libssl.so.3", "libcurl.so.4"], ["libcrypto.so.3"], ["libstdc++.so.6"],
            ["libarchive.so.13", "libzstd.so.1"]]
TORCH_TAG = "cp312-cp312-linux_x86_64"
KINDS = (("small", 160, 10), ("medium", 20, 10), ("many", 20, 10), ("torch", 2, 8))


def compose(src, name, version, extras, tag=None):
    """Bytes of a wheel: src's members (dist-info renamed to NAME-VERSION, METADATA rewritten, WHEEL's Tag set
    to TAG when given) plus extras [(arcname, bytes)] placed before the dist-info, with a fresh RECORD."""
    old_name, old_version, _ = split_wheel_name(os.path.basename(src))
    old_info, new_info = f"{old_name}-{old_version}.dist-info/", f"{name}-{version}.dist-info/"
    body, info = [], []
    with zipfile.ZipFile(src) as z:
        for zi in z.infolist():
            if zi.is_dir():
                continue
            arc, data = zi.filename, z.read(zi)
            if arc.startswith(old_info):
                base = arc[len(old_info):]
                if base == "RECORD":
                    continue
                if base == "METADATA":
                    data = rewrite_metadata(data, name, version)
                if base == "WHEEL" and tag:
                    lines = [ln for ln in data.decode().split("\n") if not ln.startswith("Tag:")]
                    data = "\n".join(lines).rstrip("\n").encode() + f"\nTag: {tag}\n".encode()
                info.append((new_info + base, data, zi.external_attr, zi.compress_type))
            else:
                body.append((arc, data, zi.external_attr, zi.compress_type))
    for arc, data in extras:
        mode = 0o755 if ".so" in arc else 0o644
        body.append((arc, data, mode << 16, zipfile.ZIP_DEFLATED))
    return zip_with_record(body + info, new_info, level=lambda data: 1 if len(data) > 1 << 20 else None)


def py_sources(rng, pkg, count):
    words = ["def", "return", "import", "self", "value", "None", "if", "else", "for", "in", "tensor", "shape"]
    out = []
    for i in range(count):
        size, length, text = rng.randint(1024, 4096), 0, []
        while length < size:
            text.append(rng.choice(words))
            length += len(text[-1]) + 1
        out.append((f"{pkg}/mod{i // 50}/m{i}.py", (" ".join(text) + "\n").encode()))
    return out


def make(job):
    """One wheel: (kind, project, dist, version, src, extras-spec, out folder) -> (path, size, members)."""
    kind, n, j, src, folder = job
    dist, version = f"bench_{kind}_{n:03d}", f"1.{j}.0"
    tag = TORCH_TAG if kind == "torch" else split_wheel_name(os.path.basename(src))[2]
    path = os.path.join(folder, f"{dist}-{version}-{tag}.whl")
    if kind == "torch":  # made once by torch_shaped.py (cp311), re-tagged for the images' Python 3.12
        data = compose(src, dist, version, [], tag=TORCH_TAG)
    else:
        extras = []
        if kind == "medium":
            for lib in LIB_SETS[n % len(LIB_SETS)]:
                with open(os.path.realpath(os.path.join(LIBDIR, lib)), "rb") as f:
                    extras.append((f"{dist}/lib/{lib}", f.read()))
        elif kind == "many":
            extras = py_sources(random.Random(n * 100 + j), dist, 200 + 600 * (n % 4) // 3)
        data = compose(src, dist, version, extras)
    os.makedirs(folder, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = len(z.infolist())
    return kind, path, len(data), members, hashlib.sha256(data).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    stamp_path, summary_path = os.path.join(out, "STAMP"), os.path.join(out, "composition.json")
    if os.path.isfile(stamp_path) and open(stamp_path).read().strip() == STAMP and os.path.isfile(summary_path):
        show(json.load(open(summary_path)))
        return 0
    for s in SAMPLES:
        if not os.path.isfile(os.path.join(REPO, s)):
            sys.exit(f"shards_index.py: {s} absent: build the project first")
    for libs in LIB_SETS:
        for lib in libs:
            if not os.path.exists(os.path.join(LIBDIR, lib)):
                sys.exit(f"shards_index.py: {LIBDIR}/{lib} absent")
    shutil.rmtree(out, ignore_errors=True)
    root = os.path.join(out, "root", INDEX)
    os.makedirs(root)
    with tempfile.TemporaryDirectory() as tmp:
        torch_src = subprocess.run([sys.executable, os.path.join(HERE, "torch_shaped.py"), tmp, "1900"],
                                   check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        jobs = []
        for kind, projects, versions in KINDS:
            for n in range(projects):
                folder = os.path.join(root, f"bench-{kind}-{n:03d}")
                for j in range(1, versions + 1):
                    src = torch_src if kind == "torch" else os.path.join(REPO, SAMPLES[(n + j) % len(SAMPLES)])
                    jobs.append((kind, n, j, src, folder))
        jobs.sort(key=lambda job: job[0] not in ("torch", "medium"))  # the slow ones first
        with ProcessPoolExecutor(max(1, a.jobs)) as pool:
            made = list(pool.map(make, jobs, chunksize=8))
    digests = [m[4] for m in made]
    if len(set(digests)) != len(digests):
        sys.exit("shards_index.py: two wheels share a sha256")
    summary = {"stamp": STAMP, "index": INDEX, "projects": sorted(os.listdir(root)), "kinds": {}}
    for kind, _, _ in KINDS:
        rows = [m for m in made if m[0] == kind]
        summary["kinds"][kind] = {"wheels": len(rows), "bytes": sum(r[2] for r in rows),
                                  "min_bytes": min(r[2] for r in rows), "max_bytes": max(r[2] for r in rows),
                                  "min_members": min(r[3] for r in rows), "max_members": max(r[3] for r in rows)}
    summary["wheels"] = len(made)
    summary["bytes"] = sum(m[2] for m in made)
    with open(summary_path, "w") as f:
        json.dump(summary, f, indent=1)
    with open(stamp_path, "w") as f:
        f.write(STAMP + "\n")
    show(summary)
    return 0


def show(summary):
    print(json.dumps({k: v for k, v in summary.items() if k != "projects"}))


if __name__ == "__main__":
    sys.exit(main())

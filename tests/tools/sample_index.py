#!/usr/bin/env python3
"""Lays out a FlagOS-shaped package index tree from the built sample wheels, for tests/net/server.py.

  sample_index.py --samples build/samples --out DIR [--extra-projects N]

Writes DIR/<index>/<project>/<files> (server.py's layout; "<file>.yanked" holds a yank reason):

  flagos-pypi-hosted/flagtree/           flagtree-0.6.1 (the sample) and flagtree-0.7.0, a re-pack of 0.6.1,
                                         yanked with the reason "broken build"
  flagos-pypi-nvidia/flag-gems-cpp-cuda/ flag_gems_cpp_cuda-5.4.0 (the sample)
  flagos-pypi-nvidia/flagcx/             flagcx-0.9.0+cu130 (the sample) and flagcx-0.9.1+cu124, a re-pack of it:
                                         newer, but the wrong CUDA toolkit variant for a CUDA 13.0 image
  flagos-pypi-ascend/flagcx/             flagcx-0.9.0+ascend (the sample)
  flagos-pypi-hosted/demo-proj-<k>/      with --extra-projects N: N re-packs of hello_native named demo_proj_<k>
                                         (k = 1..N), for a many-project benchmark

A re-pack keeps every member's bytes, order and compression, renames the .dist-info folder, rewrites
METADATA's Name and Version (WHEEL, and so the tags, stay) and regenerates RECORD (the sha256 and size of every
member), so that `wheelcheck inspect` reads it as a well-formed wheel. repack() is importable for tests that
add a wheel to an index between two scans. Idempotent: a file whose bytes would not change is left alone (its mtime,
hence the server's ETags, stay), and a line per file says what was done. The standard library only.
"""
import argparse
import base64
import hashlib
import io
import os
import shutil
import sys
import zipfile

FIXED_DATE = (2024, 1, 1, 0, 0, 0)


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def split_wheel_name(filename):
    """(distribution, version, tag) of NAME-VERSION[-BUILD]-PY-ABI-PLAT.whl."""
    parts = filename[:-4].split("-")
    if len(parts) not in (5, 6):
        raise SystemExit(f"sample_index.py: not a wheel file name: {filename}")
    return parts[0], parts[1], "-".join(parts[-3:])


def repack(src, name=None, version=None):
    """Bytes of a wheel holding src's members under NAME-VERSION.dist-info with a fresh RECORD."""
    old_name, old_version, _ = split_wheel_name(os.path.basename(src))
    name = name or old_name
    version = version or old_version
    old_info = f"{old_name}-{old_version}.dist-info/"
    new_info = f"{name}-{version}.dist-info/"
    members = []
    with zipfile.ZipFile(src) as z:
        for info in z.infolist():
            if info.is_dir():
                continue
            arc = info.filename
            data = z.read(info)
            if arc.startswith(old_info):
                base = arc[len(old_info):]
                if base == "RECORD":
                    continue
                arc = new_info + base
                if base == "METADATA":
                    data = rewrite_metadata(data, name, version)
            members.append((arc, data, info.external_attr, info.compress_type))
    return zip_with_record(members, new_info)


def zip_with_record(members, dist_info, level=None):
    """Bytes of a wheel of members [(arcname, data, external_attr, compress_type)] and a RECORD of them under
    dist_info ("NAME-VERSION.dist-info/"); level(data) picks a member's compression level (None: zlib's)."""
    buf = io.BytesIO()
    records = []
    with zipfile.ZipFile(buf, "w") as z:
        for arc, data, attr, method in members:
            zi = zipfile.ZipInfo(arc, FIXED_DATE)
            zi.external_attr = attr or (0o644 << 16)
            zi.compress_type = method
            z.writestr(zi, data, compresslevel=level(data) if level else None)
            records.append(f"{arc},{record_hash(data)},{len(data)}")
        records.append(f"{dist_info}RECORD,,")
        zi = zipfile.ZipInfo(dist_info + "RECORD", FIXED_DATE)
        zi.external_attr = 0o644 << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, ("\n".join(records) + "\n").encode())
    return buf.getvalue()


def rewrite_metadata(data, name, version):
    """METADATA with Name and Version replaced in the header block (the body, if any, is kept)."""
    text = data.decode("utf-8")
    head, sep, body = text.partition("\n\n")
    lines = []
    for line in head.split("\n"):
        key = line.split(":", 1)[0].strip().lower()
        if key == "name":
            line = f"Name: {name}"
        elif key == "version":
            line = f"Version: {version}"
        lines.append(line)
    return ("\n".join(lines) + sep + body).encode("utf-8")


def put(path, data, made):
    """Writes data to path unless it already holds exactly that; records what happened."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.isfile(path):
        with open(path, "rb") as f:
            if f.read() == data:
                made.append(("kept", path))
                return
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    made.append(("wrote", path))


def copy(src, dest_dir, made):
    with open(src, "rb") as f:
        put(os.path.join(dest_dir, os.path.basename(src)), f.read(), made)


def sample(samples, *names):
    for folder in (os.path.join(samples, "flagos"), samples):
        for n in names:
            p = os.path.join(folder, n)
            if os.path.isfile(p):
                return p
    raise SystemExit(f"sample_index.py: {names[0]} not found under {samples} (build the samples first)")


def build(samples, out, extra_projects):
    made = []
    flagtree = sample(samples, "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl")
    gems = sample(samples, "flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl")
    cx_cuda = sample(samples, "flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl")
    cx_ascend = sample(samples, "flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl")

    hosted = os.path.join(out, "flagos-pypi-hosted")
    nvidia = os.path.join(out, "flagos-pypi-nvidia")
    ascend = os.path.join(out, "flagos-pypi-ascend")

    d = os.path.join(hosted, "flagtree")
    copy(flagtree, d, made)
    newer = os.path.join(d, "flagtree-0.7.0-cp312-cp312-linux_x86_64.whl")
    put(newer, repack(flagtree, version="0.7.0"), made)
    put(newer + ".yanked", b"broken build\n", made)

    copy(gems, os.path.join(nvidia, "flag-gems-cpp-cuda"), made)

    d = os.path.join(nvidia, "flagcx")
    copy(cx_cuda, d, made)
    variant = os.path.join(d, "flagcx-0.9.1+cu124-cp312-cp312-linux_x86_64.whl")
    put(variant, repack(cx_cuda, version="0.9.1+cu124"), made)

    copy(cx_ascend, os.path.join(ascend, "flagcx"), made)

    if extra_projects > 0:
        hello = sample(samples, "hello_native-1.0-cp311-cp311-linux_x86_64.whl")
        for k in range(1, extra_projects + 1):
            name = f"demo_proj_{k}"
            target = os.path.join(hosted, f"demo-proj-{k}", f"{name}-1.0-cp311-cp311-linux_x86_64.whl")
            put(target, repack(hello, name=name), made)
    # Projects beyond --extra-projects from an earlier run with a larger N go, so the tree is what was asked.
    if os.path.isdir(hosted):
        for entry in sorted(os.listdir(hosted)):
            if entry.startswith("demo-proj-"):
                try:
                    k = int(entry[len("demo-proj-"):])
                except ValueError:
                    continue
                if k > extra_projects:
                    shutil.rmtree(os.path.join(hosted, entry))
                    made.append(("removed", os.path.join(hosted, entry)))
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", required=True, help="the built samples folder (build/samples)")
    ap.add_argument("--out", required=True, help="the index tree to write (server.py --root)")
    ap.add_argument("--extra-projects", type=int, default=0, metavar="N",
                    help="add N demo-proj-<k> projects (re-packs of hello_native) to flagos-pypi-hosted")
    a = ap.parse_args()
    if a.extra_projects < 0:
        ap.error("--extra-projects must be >= 0")
    made = build(os.path.abspath(a.samples), os.path.abspath(a.out), a.extra_projects)
    for what, path in made:
        print(f"{what:7} {os.path.relpath(path, os.path.abspath(a.out))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Packs a staged static wheelcheck (bin/, share/wheelcheck/db/, licenses/) into the wheel pip installs
and the tarball, both written reproducibly (sorted entries, fixed times, no owner names).

    make_wheel.py --version V --arch ARCH --stage DIR --dist DIR --python-package DIR

The wheel (PEP 427): the binary in wheelcheck-V.data/scripts/ (pip puts it on PATH as `wheelcheck`), the
db in wheelcheck-V.data/data/share/wheelcheck/db/ (pip puts it in <prefix>/share/wheelcheck/db, which the
binary finds from its own location), the licences in the .dist-info's licenses/ folder (PEP 639), and
the small `wheelcheck` package behind `python -m wheelcheck`. Standard library only.
"""
import argparse
import base64
import gzip
import hashlib
import io
import os
import stat
import sys
import tarfile
import zipfile

# 1980-01-01, zip's earliest time, unless the caller pins another (reproducible builds' convention).
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))


def files_under(folder):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            yield path, os.path.relpath(path, folder)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(args):
    v, arch = args.version, args.arch
    tags = [f"manylinux_2_17_{arch}", f"manylinux2014_{arch}"]
    name = f"wheelcheck-{v}-py3-none-{'.'.join(tags)}.whl"
    data, info = f"wheelcheck-{v}.data", f"wheelcheck-{v}.dist-info"
    entries = []  # (archive name, bytes, executable)
    for path, rel in files_under(args.python_package):
        if rel.endswith(".py"):
            entries.append((f"wheelcheck/{rel}", read(path), False))
    entries.append((f"{data}/scripts/wheelcheck", read(os.path.join(args.stage, "bin/wheelcheck")), True))
    for path, rel in files_under(os.path.join(args.stage, "share")):
        entries.append((f"{data}/data/share/{rel}", read(path), False))
    licenses = []
    for path, rel in files_under(os.path.join(args.stage, "licenses")):
        entries.append((f"{info}/licenses/{rel}", read(path), False))
        licenses.append(rel)
    metadata = "\n".join([
        "Metadata-Version: 2.1",
        "Name: wheelcheck",
        f"Version: {v}",
        "Summary: Will this wheel's native code load and work in that image? A static binary, checked against "
        "glibc's loader, with the gates a setup script consumes.",
        "Requires-Python: >=3.7",
        "Classifier: Environment :: Console",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Topic :: Software Development :: Build Tools",
        *[f"License-File: {rel}" for rel in licenses],
        "",
        "wheelcheck is one static executable (no shared library of the host is loaded): after `pip install`,",
        "`wheelcheck --help` or `python -m wheelcheck --help`. The db of images is installed beside it.",
        "",
    ])
    wheel = "\n".join(["Wheel-Version: 1.0", "Generator: wheelcheck packaging/make_wheel.py",
                       "Root-Is-Purelib: false", *[f"Tag: py3-none-{t}" for t in tags], ""])
    entries.append((f"{info}/METADATA", metadata.encode(), False))
    entries.append((f"{info}/WHEEL", wheel.encode(), False))
    record = io.StringIO()
    for arcname, content, _ in entries:
        record.write(f"{arcname},{record_hash(content)},{len(content)}\n")
    record.write(f"{info}/RECORD,,\n")
    entries.append((f"{info}/RECORD", record.getvalue().encode(), False))

    out = os.path.join(args.dist, name)
    with zipfile.ZipFile(out + ".part", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for arcname, content, executable in entries:
            zi = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = ((stat.S_IFREG | (0o755 if executable else 0o644)) << 16)
            zi.create_system = 3  # Unix: the mode above is read
            z.writestr(zi, content)
    os.replace(out + ".part", out)
    return out


def write_tarball(args):
    top = f"wheelcheck-{args.version}-linux-{args.arch}"
    out = os.path.join(args.dist, f"{top}.tar.gz")

    def normalise(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        ti.mtime = EPOCH
        ti.mode = 0o755 if ti.isdir() or ti.name.endswith("/bin/wheelcheck") else 0o644
        return ti

    with open(out + ".part", "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=EPOCH, compresslevel=9) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for sub in ("bin", "share", "licenses"):
                    tar.add(os.path.join(args.stage, sub), arcname=f"{top}/{sub}", filter=normalise)
    os.replace(out + ".part", out)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--version", required=True)
    p.add_argument("--arch", required=True, choices=["x86_64", "aarch64"])
    p.add_argument("--stage", required=True)
    p.add_argument("--dist", required=True)
    p.add_argument("--python-package", required=True)
    args = p.parse_args()
    if not os.path.isfile(os.path.join(args.stage, "bin/wheelcheck")):
        sys.exit(f"make_wheel.py: no bin/wheelcheck under {args.stage}")
    os.makedirs(args.dist, exist_ok=True)
    for path in (write_wheel(args), write_tarball(args)):
        print(f"wrote {path} ({os.path.getsize(path) // 1024} KiB)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes ZIP64 wheels for wheelcheck's archive tests, byte by byte (the tests' own tool; never a download).

  big_wheel.py OUT.whl [--zeros ARCNAME=SIZE]... [--file ARCNAME=PATH]... [--many N] [--force-zip64]
                       [--break KIND]

OUT is named like a wheel (NAME-VERSION-PY-ABI-PLATFORM.whl); its .dist-info (METADATA, WHEEL, and a RECORD
with every member's real sha256) is written last. Members, in this order:

  --zeros ARCNAME=SIZE   a stored member of SIZE zero bytes (K/M/G suffixes, powers of 1024; 4.2G allowed),
                         written sparsely: the file seeks over its data, so a 4.2 GiB wheel takes a few KB
                         of disk where the file system has holes. Its CRC-32 and sha256 are computed in
                         chunks (about 7 s a GiB here), except for sizes whose values are known below.
  --file ARCNAME=PATH    the file's bytes, deflated
  --many N               N small stored members NAME/m/<i>.py (more than 65,535: the count needs zip64)

ZIP64 (APPNOTE 4.5.3) is written where it is needed, as Python's zipfile writes it: a member whose size or
local header offset does not fit 32 bits gets 0xFFFFFFFF in the header and the value in a zip64 extra field
(a local header's holds both sizes), and an archive whose count, central directory size or offset does not
fit gets the zip64 end record and its locator. --force-zip64 writes both for every member and the archive.

--break KIND damages one ZIP64 record (for the integrity tests; each must be refused, naming both values):
  locator      the zip64 end record locator points 16 bytes before the zip64 end record
  count        the zip64 end record says one member more than the central directory holds (the end of
               central directory record's count 0xFFFF: "see the zip64 record")
  count16      the end of central directory record gives a count (not 0xFFFF) other than the zip64 record's
  local-zip64  the first member's local zip64 extra field says 1000 bytes more than the central directory
  offset       the last payload member's central zip64 offset points at the member before it

Exits 77 (the test is skipped) when the folder lacks the space for OUT: a sparse file needs little, a file
system without holes the whole size.
"""
import base64
import hashlib
import os
import re
import struct
import sys
import zlib

WHEEL_NAME = re.compile(r"^([A-Za-z0-9_.]+)-([^-]+)(-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl$")
DOS_TIME, DOS_DATE = 0, ((2024 - 1980) << 9) | (1 << 5) | 1
STORED, DEFLATED = 0, 8
MAX32, MAX16 = 0xFFFFFFFF, 0xFFFF
# CRC-32 and sha256 of SIZE zero bytes, computed once with zlib.crc32 and hashlib (64 MiB chunks): the tests'
# 4.2 GiB member; its full read checks both, so a wrong value here fails the test, never passes it.
KNOWN_ZEROS = {4509715660: (0xA4665E6E, "518263d54f81c02ea8a85cae499de7f9d3194e3f3e4851d45d426e1c693bba8c")}  # 4.2G


def parse_size(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KkMmGg]?)", text)
    if not m:
        raise SystemExit(f"big_wheel.py: bad size {text!r}")
    return int(float(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()])


def digest_text(h):
    return "sha256=" + base64.urlsafe_b64encode(h).rstrip(b"=").decode()


def zeros_digests(size):
    if size in KNOWN_ZEROS:
        crc, sha = KNOWN_ZEROS[size]
        return crc, digest_text(bytes.fromhex(sha))
    block = bytes(min(size, 1 << 26))
    h, crc, left = hashlib.sha256(), 0, size
    while left:
        view = memoryview(block)[: min(left, len(block))]
        h.update(view)
        crc = zlib.crc32(view, crc)
        left -= len(view)
    return crc & MAX32, digest_text(h.digest())


class Member:
    def __init__(self, name, data=None, zeros=None, method=DEFLATED):
        self.name = name.encode()
        self.zeros = zeros
        if zeros is not None:
            self.method, self.payload = STORED, None
            self.size = self.csize = zeros
            self.crc, self.digest = zeros_digests(zeros)
        else:
            self.method = method
            self.size = len(data)
            self.crc = zlib.crc32(data) & MAX32
            self.digest = digest_text(hashlib.sha256(data).digest())
            if method == DEFLATED:
                c = zlib.compressobj(6, zlib.DEFLATED, -15)
                self.payload = c.compress(data) + c.flush()
            else:
                self.payload = data
            self.csize = len(self.payload)
        self.offset = 0
        self.local_sizes = None  # (uncompressed, compressed) the local zip64 field states instead


def local_header(m, force):
    zip64 = force or m.size >= MAX32 or m.csize >= MAX32
    extra = b""
    csize, size = m.csize, m.size
    if zip64:
        u, c = m.local_sizes or (m.size, m.csize)
        extra = struct.pack("<HHQQ", 1, 16, u, c)
        csize = size = MAX32
    version = 45 if zip64 else 20
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, version, 0, m.method, DOS_TIME, DOS_DATE, m.crc, csize, size,
                       len(m.name), len(extra)) + m.name + extra


def central_header(m, force):
    values, size, csize, offset = [], m.size, m.csize, m.offset
    if force or m.size >= MAX32:
        values.append(m.size)
        size = MAX32
    if force or m.csize >= MAX32:
        values.append(m.csize)
        csize = MAX32
    if force or m.offset >= MAX32:
        values.append(m.offset)
        offset = MAX32
    extra = struct.pack("<HH", 1, 8 * len(values)) + b"".join(struct.pack("<Q", v) for v in values) if values else b""
    version = 45 if values else 20
    return (struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, (3 << 8) | version, version, 0, m.method, DOS_TIME, DOS_DATE,
                        m.crc, csize, size, len(m.name), len(extra), 0, 0, 0, 0o100644 << 16, offset)
            + m.name + extra)


def write_wheel(out, zeros=(), files=(), many=0, force=False, breaks=None):
    """Writes the wheel to `out`; `zeros`: (arcname, size), `files`: (arcname, path). Returns the member count."""
    m = WHEEL_NAME.match(os.path.basename(out))
    if not m:
        raise SystemExit(f"big_wheel.py: {out} is not named like a wheel")
    name, version, tag = m.group(1), m.group(2), "-".join(m.group(i) for i in (4, 5, 6))
    members = [Member(arc, zeros=size) for arc, size in zeros]
    for arc, path in files:
        with open(path, "rb") as f:
            members.append(Member(arc, f.read()))
    members += [Member(f"{name}/m/{i}.py", b"VALUE = %d\n" % i, method=STORED) for i in range(many)]
    payload_count = len(members)
    info = f"{name}-{version}.dist-info"
    purelib = "true" if tag.endswith("-any") else "false"
    members.append(Member(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()))
    members.append(Member(f"{info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: wheelcheck-big-wheel\n"
                                            f"Root-Is-Purelib: {purelib}\nTag: {tag}\n").encode()))
    record = "".join(f"{x.name.decode()},{x.digest},{x.size}\n" for x in members) + f"{info}/RECORD,,\n"
    members.append(Member(f"{info}/RECORD", record.encode()))
    if breaks == "local-zip64":
        if not force and members[0].size < MAX32:
            raise SystemExit("big_wheel.py: --break local-zip64 needs a zip64 first member (--force-zip64, or 4G+)")
        members[0].local_sizes = (members[0].size + 1000, members[0].csize)

    tmp = out + ".part"
    with open(tmp, "wb") as f:
        for x in members:
            x.offset = f.tell()
            f.write(local_header(x, force))
            if x.zeros is not None:
                f.seek(x.zeros, os.SEEK_CUR)  # a hole: the file system reads it as zeros
            else:
                f.write(x.payload)
        if breaks == "offset" and payload_count >= 2:
            members[payload_count - 1].offset = members[payload_count - 2].offset
        cd_offset = f.tell()
        for x in members:
            f.write(central_header(x, force or breaks == "offset"))
        cd_size = f.tell() - cd_offset
        count = len(members)
        zip64 = force or count > MAX16 or cd_offset >= MAX32 or cd_size >= MAX32
        if zip64:
            eocd64 = f.tell()
            n64 = count + 1 if breaks == "count" else count
            f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, (3 << 8) | 45, 45, 0, 0, n64, n64, cd_size, cd_offset))
            f.write(struct.pack("<IIQI", 0x07064B50, 0, eocd64 - 16 if breaks == "locator" else eocd64, 1))
        n16 = min(count, MAX16) if zip64 else count
        if breaks == "count":
            n16 = MAX16  # "see the zip64 record": the central directory's count is what disagrees
        if breaks == "count16":
            n16 = (count + 7) % MAX16
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n16, n16, min(cd_size, MAX32), min(cd_offset, MAX32), 0))
        f.truncate()
    os.replace(tmp, out)
    return count


def holes_work(folder):
    """Whether a file in `folder` can hold a hole (a 64 MiB seek stores next to nothing)."""
    probe = os.path.join(folder, f".big_wheel_holes.{os.getpid()}")
    try:
        with open(probe, "wb") as f:
            f.seek(64 << 20)
            f.write(b"x")
        return os.stat(probe).st_blocks * 512 < (1 << 20)
    finally:
        os.unlink(probe)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    out, zeros, files, many, force, breaks = argv[1], [], [], 0, False, None
    args = iter(argv[2:])
    for a in args:
        if a == "--zeros":
            arc, size = next(args).split("=", 1)
            zeros.append((arc, parse_size(size)))
        elif a == "--file":
            arc, path = next(args).split("=", 1)
            files.append((arc, path))
        elif a == "--many":
            many = int(next(args))
        elif a == "--force-zip64":
            force = True
        elif a == "--break":
            breaks = next(args)
            if breaks not in ("locator", "count", "count16", "local-zip64", "offset"):
                raise SystemExit(f"big_wheel.py: unknown --break {breaks!r} (see --help)")
        else:
            raise SystemExit(f"big_wheel.py: unknown argument {a!r} (see --help)")
    folder = os.path.dirname(os.path.abspath(out))
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    hole_bytes = sum(size for _, size in zeros)
    need = 64 * (many + 1000) + sum(os.path.getsize(p) for _, p in files) + (256 << 20)
    if hole_bytes and not holes_work(folder):
        need += hole_bytes
    if free < need:
        print(f"big_wheel.py: {folder} has {free >> 20} MiB free, {need >> 20} MiB needed for {out}", file=sys.stderr)
        return 77
    write_wheel(out, zeros, files, many, force, breaks)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

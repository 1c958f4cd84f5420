#!/usr/bin/env python3
"""Writes wheelcheck's hostile inputs into a folder, with a manifest saying how each must be refused.

  make_hostile.py OUT_DIR [--gcc GCC]
  make_hostile.py --list OUT_DIR       print the manifest only, writing nothing (cheap: for test discovery)

Nothing here is committed as bytes: every input is made at run time (tests/cli/test_hostile_cli.cpp calls
this into a temporary folder). OUT_DIR receives:

  wheels/*.whl         hostile archives (tests/tools/hostile_zip.py writes them byte by byte) and wheels whose
                       one ELF member is a small library built here with gcc, then damaged in one field
  roots/<case>/        image roots (folders) for `wheelcheck probe --root`
  index/hostile/...    a package index tree for tests/net/server.py; its cases are the server's faults
  manifest.json        a list of cases: {"name", "kind": "wheel"|"root"|"index", "path" (wheels, roots) or
                       "fault" (index: a server.py fault rule; "index", "project" say what to scan),
                       "commands": the subset of inspect/check/probe/scan that must refuse it,
                       "options": extra command-line options, "expect": a substring of the message,
                       "timeout_s": the wall-clock bound, "why": one line saying what is hostile}

See tests/hostile/README.md for the list of cases and what wheelcheck must answer to each.
"""
import argparse
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import big_wheel  # noqa: E402  (tests/tools/big_wheel.py)
import hostile_zip  # noqa: E402  (tests/tools/hostile_zip.py)

PLATFORM_TAG = "cp312-cp312-linux_x86_64"


class Manifest:
    """The cases, each with the function that makes its input: called only when writing (not for --list)."""

    def __init__(self, out, write):
        self.out = out
        self.writing = write
        self.cases = []

    def add(self, name, kind, commands, expect, why, path=None, options=(), timeout_s=60, make=None, **extra):
        case = {"name": name, "kind": kind, "commands": list(commands), "options": list(options),
                "expect": expect, "timeout_s": timeout_s, "why": why}
        if path is not None:
            case["path"] = os.path.relpath(path, self.out)
        case.update(extra)
        self.cases.append(case)
        if self.writing and make is not None:
            make()

    def text(self):
        return json.dumps(self.cases, indent=1) + "\n"


def wheel_path(out, case, tag="py3-none-any"):
    return os.path.join(out, "wheels", f"{case.replace('-', '_')}-1.0-{tag}.whl")


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


# --- hostile archives --------------------------------------------------------------------------------------

def archive_cases(out, manifest):
    def zip_case(case, kind, args, expect, why, commands=("inspect", "check"), options=()):
        path = wheel_path(out, case)
        make = lambda: write_file(path, hostile_zip.build(kind, case.replace("-", "_"), "1.0", "py3-none-any",
                                                          list(args)))
        manifest.add(case, "wheel", commands, expect, why, path, options, make=make)

    zip_case("truncated", "truncated", [], "zip", "a wheel cut in half: no end of central directory")
    zip_case("not-a-zip", "notzip", [], "zip", "printable text named .whl")
    zip_case("zip-bomb", "bomb", ["64M"], "--max-member-size",
             "64 MiB of zeros deflated about 1000:1, sizes honest, past --max-member-size 1M",
             commands=("inspect",), options=("--max-member-size", "1M"))
    zip_case("compression-ratio", "ratio", ["1G"], "--max-ratio",
             "1 GiB of zeros in 1 MiB (about 1000:1), honest sizes, past the default --max-ratio 100")
    zip_case("lying-size", "lying-size", [], "declared size", "64 KiB of data whose headers declare 1000 bytes")
    zip_case("too-many-members", "many-members", ["200001"], "--max-members",
             "200001 empty members (zip64 end of central directory), past --max-members 100000",
             commands=("inspect",), options=("--max-members", "100000"))
    zip_case("name-dotdot", "bad-name", ["../../etc/passwd"], "..", "a member named ../../etc/passwd")
    zip_case("name-absolute", "bad-name", ["/etc/passwd"], "absolute", "a member named /etc/passwd")
    zip_case("name-backslash", "bad-name", ["name_backslash\\\\..\\\\..\\\\evil.py"], "backslash",
             "a member named name_backslash\\..\\..\\evil.py")
    zip_case("name-nul", "bad-name", ["name_nul/evil\\x00.py"], "NUL", "a member name with a NUL byte in it")
    zip_case("name-control-01", "bad-name", ["name_control_01/a\\x01b.py"], "control character",
             "a member name with the control character 0x01")
    zip_case("name-control-escape", "bad-name", ["name_control_escape/\\x1b[2Jevil.py"], "control character",
             "a member name with an ANSI escape (0x1b), which would rewrite a terminal")
    zip_case("duplicate-names", "duplicate", [], "duplicate", "one name twice, with different contents")
    zip_case("symlink-member", "symlink", ["/etc/passwd"], "symbolic link",
             "a member whose unix mode is S_IFLNK, pointing at /etc/passwd")
    zip_case("encrypted-member", "encrypted", [], "encrypt", "a ZipCrypto-encrypted member")
    zip_case("zip64-size-mismatch", "zip64-mismatch", [], "its local header says size",
             "a central header whose zip64 extra field declares 1 TiB, the local header 128 KiB")
    zip_case("local-header-mismatch", "local-mismatch", [], "its local header names it",
             "a local header naming another file than its central header")

    def zip64_case(case, breaks, expect, why):
        path = wheel_path(out, case)
        manifest.add(case, "wheel", ("inspect", "check"), expect, why, path,
                     make=lambda: big_wheel.write_wheel(path, force=True, breaks=breaks))

    zip64_case("zip64-locator-wrong", "locator", "but it lies at",
               "the zip64 end of central directory locator points 16 bytes before the zip64 end record")
    zip64_case("zip64-count-mismatch", "count", "but the central directory holds 3",
               "the zip64 end record says 4 members, the central directory holds 3")
    zip64_case("zip64-local-extra-mismatch", "local-zip64", "its local header (zip64 extra field) says size",
               "a local zip64 extra field says 1000 bytes more than the central directory")


# --- damaged ELF members -----------------------------------------------------------------------------------

ELF_SOURCE = r"""
#include <math.h>
#include <stdio.h>
double hc_pow(double a, double b) { return pow(a, b); }
void hc_hello(const char* who) { printf("hello %s\n", who); }
"""
ELF_VERSION_SCRIPT = "HOSTILE_1.0 { global: hc_pow; hc_hello; local: *; };\n"

DT_NEEDED, DT_STRTAB, DT_SYMTAB, DT_STRSZ = 1, 5, 6, 10
DT_GNU_HASH, DT_VERDEF, DT_VERDEFNUM, DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFEF5, 0x6FFFFFFC, 0x6FFFFFFD, 0x6FFFFFFE, \
    0x6FFFFFFF
PT_LOAD, PT_DYNAMIC = 1, 2
FAR_ADDRESS = 0x7FFF00000000  # inside no PT_LOAD segment


def build_library(gcc, work):
    src = os.path.join(work, "hostile.c")
    vers = os.path.join(work, "hostile.map")
    lib = os.path.join(work, "libhostile.so")
    with open(src, "w") as f:
        f.write(ELF_SOURCE)
    with open(vers, "w") as f:
        f.write(ELF_VERSION_SCRIPT)
    subprocess.run([gcc, "-shared", "-fPIC", "-O1", "-o", lib, src, "-lm", f"-Wl,--version-script={vers}",
                    "-Wl,-soname,libhostile.so.1", "-Wl,--hash-style=gnu"], check=True)
    with open(lib, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit("make_hostile.py: the ELF cases assume gcc writes ELF64 little-endian")
    return data


class Elf:
    """An ELF64 little-endian file as a bytearray, with the fields the cases damage."""

    def __init__(self, data):
        self.b = bytearray(data)
        self.phoff, = struct.unpack_from("<Q", self.b, 0x20)
        self.phnum, = struct.unpack_from("<H", self.b, 0x38)
        self.segments = [struct.unpack_from("<IIQQQQQQ", self.b, self.phoff + 56 * i) for i in range(self.phnum)]
        dyn = next(i for i, s in enumerate(self.segments) if s[0] == PT_DYNAMIC)
        self.dynamic_index = dyn
        self.dynamic_offset = self.segments[dyn][2]
        self.dynamic = []  # (file offset of the entry, tag, value)
        off = self.dynamic_offset
        while True:
            tag, val = struct.unpack_from("<qQ", self.b, off)
            if tag == 0:
                break
            self.dynamic.append((off, tag, val))
            off += 16

    def offset_of(self, addr):
        for s in self.segments:
            if s[0] == PT_LOAD and s[3] <= addr < s[3] + s[5]:
                return s[2] + addr - s[3]
        raise ValueError(hex(addr))

    def tag(self, tag):
        return next(val for _, t, val in self.dynamic if t == tag)

    def set_tag(self, tag, value, nth=0):
        entries = [off for off, t, _ in self.dynamic if t == tag]
        struct.pack_into("<Q", self.b, entries[nth] + 8, value)

    def table(self, tag):
        return self.offset_of(self.tag(tag))

    def u16(self, off):
        return struct.unpack_from("<H", self.b, off)[0]

    def u32(self, off):
        return struct.unpack_from("<I", self.b, off)[0]

    def put16(self, off, v):
        struct.pack_into("<H", self.b, off, v)

    def put32(self, off, v):
        struct.pack_into("<I", self.b, off, v)

    def drop_section_headers(self):
        struct.pack_into("<Q", self.b, 0x28, 0)  # e_shoff
        struct.pack_into("<HHH", self.b, 0x3A, 0, 0, 0)  # e_shentsize, e_shnum, e_shstrndx (as sstrip leaves them)

    def chain(self, tag, next_at):
        """File offsets of the entries of a vn_next/vd_next chain (next_at: the next field's position)."""
        base, offs, off = self.table(tag), [], 0
        while True:
            offs.append(base + off)
            nxt = self.u32(base + off + next_at)
            if nxt == 0:
                return offs
            off += nxt


def elf_cases(out, manifest, gcc, work):
    base = build_library(gcc, work) if manifest.writing else b""

    def elf_case(case, expect, why, damage):
        path = wheel_path(out, case, PLATFORM_TAG)

        def make():
            elf = Elf(base)
            damage(elf)
            name = case.replace("-", "_")
            member = hostile_zip.Member(f"{name}/libhostile.so", bytes(elf.b))
            init = hostile_zip.Member(f"{name}/__init__.py", b"VALUE = 42\n")
            write_file(path, hostile_zip.zip_bytes(hostile_zip.wheel_members(name, "1.0", PLATFORM_TAG,
                                                                             [init, member])))

        manifest.add(case, "wheel", ("inspect", "check"), expect, why, path, make=make)

    def phoff_outside(e):
        struct.pack_into("<Q", e.b, 0x20, len(e.b) + 4096)

    def phnum_huge(e):
        struct.pack_into("<H", e.b, 0x38, 0xFFFF)

    def dynamic_outside(e):
        struct.pack_into("<Q", e.b, e.phoff + 56 * e.dynamic_index + 8, 4 * len(e.b))

    def dynstr_without_nul(e):
        start, size = e.table(DT_STRTAB), e.tag(DT_STRSZ)
        for i in range(start + 1, start + size):
            if e.b[i] == 0:
                e.b[i] = ord("A")

    def gnu_hash_endless(e):
        # Without section headers the GNU hash table alone counts .dynsym; clear every chain end bit.
        e.drop_section_headers()
        h = e.table(DT_GNU_HASH)
        nbuckets, bloom = e.u32(h), e.u32(h + 8)
        chains = h + 16 + 8 * bloom + 4 * nbuckets
        end = min(t for t in (e.table(DT_SYMTAB), e.table(DT_STRTAB), len(e.b)) if t > chains)
        for off in range(chains, end - 3, 4):
            e.put32(off, e.u32(off) & 0xFFFFFFFE)

    def last_vn_next_loops(e):
        entries = e.chain(DT_VERNEED, 12)
        e.set_tag(DT_VERNEEDNUM, 1000)
        last = entries[-1]
        e.put32(last + 12, (1 << 32) - (last - entries[0]))  # + this, modulo 2^32: back to the first entry

    def last_vd_next_loops(e):
        entries = e.chain(DT_VERDEF, 16)
        e.set_tag(DT_VERDEFNUM, 1000)
        last = entries[-1]
        e.put32(last + 16, (1 << 32) - (last - entries[0]))

    def vna_next_loops(e):
        first = e.chain(DT_VERNEED, 12)[0]
        e.put16(first + 2, 1000)  # vn_cnt
        aux = first + e.u32(first + 8)
        while e.u32(aux + 12) != 0:
            aux += e.u32(aux + 12)
        e.put32(aux + 12, (1 << 32) - (aux - first))  # back to the entry's own Verneed header

    elf_case("elf-phoff-outside", "program headers", "e_phoff past the end of the member", phoff_outside)
    elf_case("elf-phnum-huge", "program headers", "e_phnum 65535: the program headers run past the member",
             phnum_huge)
    elf_case("elf-dynamic-outside", "dynamic section", "PT_DYNAMIC's p_offset four times the member's size",
             dynamic_outside)
    elf_case("elf-strtab-outside", "PT_LOAD", "DT_STRTAB at an address no PT_LOAD segment maps",
             lambda e: e.set_tag(DT_STRTAB, FAR_ADDRESS))
    elf_case("elf-symtab-outside", "PT_LOAD", "DT_SYMTAB at an address no PT_LOAD segment maps",
             lambda e: e.set_tag(DT_SYMTAB, FAR_ADDRESS))
    elf_case("elf-strsz-outside", ".dynstr", "DT_STRSZ runs .dynstr past the end of the member",
             lambda e: e.set_tag(DT_STRSZ, 1 << 28))
    elf_case("elf-dynstr-without-nul", "NUL", ".dynstr with every NUL but the first overwritten",
             dynstr_without_nul)
    elf_case("elf-gnu-hash-endless-chain", "GNU hash", "no section headers, and no GNU hash chain ever ends",
             gnu_hash_endless)
    elf_case("elf-dynsym-overlaps-dynstr", "overlaps", "DT_SYMTAB 8 bytes into .dynstr",
             lambda e: e.set_tag(DT_SYMTAB, e.tag(DT_STRTAB) + 8))
    elf_case("elf-verneed-overlaps-dynsym", "overlaps", "DT_VERNEED at .dynsym's address",
             lambda e: e.set_tag(DT_VERNEED, e.tag(DT_SYMTAB)))
    elf_case("elf-needed-outside-dynstr", ".dynstr", "a DT_NEEDED string offset past the end of .dynstr",
             lambda e: e.set_tag(DT_NEEDED, 0x7FFFFFF0))
    elf_case("elf-vn-next-loop", "vn_next", "DT_VERNEEDNUM 1000 and the last vn_next wrapping back to the first",
             last_vn_next_loops)
    elf_case("elf-vd-next-loop", "vd_next", "DT_VERDEFNUM 1000 and the last vd_next wrapping back to the first",
             last_vd_next_loops)
    elf_case("elf-vna-next-loop", "vna_next", "vn_cnt 1000 and the last vna_next wrapping back to its Verneed",
             vna_next_loops)


# --- image roots -------------------------------------------------------------------------------------------

def root_cases(out, manifest):
    libdir = "usr/lib/x86_64-linux-gnu"

    def root_case(case, expect, why, populate):
        root = os.path.join(out, "roots", case)

        def make():
            for d in ("etc", libdir, "lib"):
                os.makedirs(os.path.join(root, d), exist_ok=True)
            with open(os.path.join(root, "etc/ld.so.conf"), "w") as f:
                f.write(f"/{libdir}\n")
            populate(root)

        manifest.add(case, "root", ("probe",), expect, why, root, make=make)

    def symlink_loop(root):
        os.symlink("libloop2.so.1", os.path.join(root, libdir, "libloop.so.1"))
        os.symlink("libloop.so.1", os.path.join(root, libdir, "libloop2.so.1"))

    def include_loop(root):
        with open(os.path.join(root, "etc/ld.so.conf"), "w") as f:
            f.write(f"include /etc/ld.so.conf.d/*.conf\n/{libdir}\n")
        os.makedirs(os.path.join(root, "etc/ld.so.conf.d"))
        with open(os.path.join(root, "etc/ld.so.conf.d/a.conf"), "w") as f:
            f.write("include /etc/ld.so.conf\n")

    def garbage_cache(root):
        rng = random.Random(1313)
        write_file(os.path.join(root, "etc/ld.so.cache"),
                   b"glibc-ld.so.cache1.1" + bytes(rng.randrange(256) for _ in range(4096)))

    root_case("root-symlink-loop", "symlink loop", "libloop.so.1 -> libloop2.so.1 -> libloop.so.1 in a loader folder",
              symlink_loop)
    root_case("root-link-escapes", "outside the root",
              "libescape.so.1 -> ../../../../../../etc/passwd climbs above the root",
              lambda root: os.symlink("../../../../../../etc/passwd", os.path.join(root, libdir, "libescape.so.1")))
    root_case("root-absolute-link", "symlink loop",
              "libc.so.6 -> /usr/lib/x86_64-linux-gnu/libc.so.6: the host's libc outside, itself inside the root",
              lambda root: os.symlink(f"/{libdir}/libc.so.6", os.path.join(root, libdir, "libc.so.6")))
    root_case("root-ld-so-conf-include-loop", "include loop",
              "etc/ld.so.conf includes ld.so.conf.d/a.conf, which includes etc/ld.so.conf", include_loop)
    root_case("root-garbage-ld-so-cache", "ld.so.cache",
              "etc/ld.so.cache: the new format's magic, then 4 KiB of random bytes", garbage_cache)


# --- index faults ------------------------------------------------------------------------------------------

def index_cases(out, manifest):
    if manifest.writing:
        project = os.path.join(out, "index", "hostile", "victim")
        os.makedirs(project)
        write_file(os.path.join(project, "victim-1.0-py3-none-any.whl"),
                   hostile_zip.build("valid", "victim", "1.0", "py3-none-any", []))

    def index_case(case, fault, expect, why, timeout_s=60, options=()):
        rule = {"path": "^/hostile/simple/", "count": -1}
        rule.update(fault)
        manifest.add(case, "index", ("scan",), expect, why, None, options, timeout_s, fault=rule, index="hostile",
                     project="victim")

    index_case("index-garbage-html", {"fault": "garbage", "type": "html"}, "not an index page",
               "the project page: 4 KiB of random bytes as text/html")
    index_case("index-garbage-json", {"fault": "garbage", "type": "json"}, "not JSON",
               "the project page: a PEP 691 JSON start, then random bytes")
    index_case("index-redirect-loop", {"fault": "redirect_loop"}, "--max-redirects",
               "302 to /_loop/a, which redirects to /_loop/b, and back, forever")
    index_case("index-never-end", {"fault": "never_end"}, "--low-speed-time",
               "a 1 GiB Content-Length, then one byte every 0.5 s, forever (bounded by --low-speed-time 3, "
               "--retries 1: two attempts of 3 s)", timeout_s=30, options=("--low-speed-time", "3", "--retries", "1"))
    index_case("index-huge-page", {"fault": "huge", "type": "html"}, "--max-page-size",
               "a project page of 1 TiB, streamed as fast as it is read")
    index_case("index-deep-html", {"fault": "deep", "type": "html", "depth": 100000}, "nested deeper",
               "a project page of 100000 nested <div> and no links")
    index_case("index-deep-json", {"fault": "deep", "type": "json", "depth": 100000}, "nested deeper",
               "a PEP 691 page whose \"files\" is 100000 nested lists")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--gcc", default=os.environ.get("CC", "gcc"))
    parser.add_argument("--list", action="store_true", help="print the manifest only; write nothing")
    args = parser.parse_args()
    out = os.path.abspath(args.out)
    manifest = Manifest(out, write=not args.list)
    if manifest.writing:
        if os.path.exists(out) and os.listdir(out):
            raise SystemExit(f"make_hostile.py: {out} is not empty")
        for d in ("wheels", "roots", "index"):
            os.makedirs(os.path.join(out, d), exist_ok=True)
    archive_cases(out, manifest)
    work = tempfile.mkdtemp(prefix="make_hostile.") if manifest.writing else None
    try:
        elf_cases(out, manifest, shutil.which(args.gcc) or args.gcc, work)
    finally:
        if work:
            shutil.rmtree(work)
    root_cases(out, manifest)
    index_cases(out, manifest)
    if not manifest.writing:
        sys.stdout.write(manifest.text())
        return 0
    with open(os.path.join(out, "manifest.json"), "w") as f:
        f.write(manifest.text())
    print(f"{len(manifest.cases)} cases in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

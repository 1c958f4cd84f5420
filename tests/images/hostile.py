#!/usr/bin/env python3
"""Hostile images and registries (tests/images/README.md): each case an OCI layout, an archive or a fake registry
written by this script, and `wheelcheck probe REF` must refuse it:

  - exit 2, within the case's time bound, never a crash (70, a signal) or a hang;
  - a "wheelcheck: error:" line on stderr that says what was wrong (the case's `expect` pattern);
  - nothing written outside $WHEELCHECK_CACHE_DIR: the case's HOME, TMPDIR, working folder, the folder above the
    cache and the input itself are snapshotted before and compared after; no file named passwd, evil or
    outside appears anywhere under the case's folder, the cache included;
  - the cache holds no unverified blob: every file under $WHEELCHECK_CACHE_DIR/images/blobs/sha256/ is named by
    the sha256 of its content.

Controls (names starting with control-) are the honest twins of the cases: they must exit 0, so that a refusal
is the defect's and not the fixture's.

  hostile.py --wheelcheck BIN [--samples DIR] [--work DIR] [--list] [CASE ...]

Exit 0 when every case holds, 1 otherwise, 77 (skipped: ...) when the binary predates image references.
"""
import argparse
import base64  # noqa: F401
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import imagelib as L  # noqa: E402

CURRENT = "setup"
CHECKS = L.Checks(context=lambda: f"[{CURRENT}]")
check, FAILURES = CHECKS.check, CHECKS.failures
A = None
LIB = "usr/lib/x86_64-linux-gnu"
ZERO = "sha256:" + "0" * 64


# --- the honest pieces -----------------------------------------------------------------------------------------------

def tiny_tar():
    """A small honest layer: os-release and one real library (this machine's zlib)."""
    t = L.Tar()
    for d in ("etc", "usr", "usr/lib", LIB):
        t.dir(d)
    with open("/usr/lib/os-release", "rb") as f:
        t.file("etc/os-release", f.read())
    z = os.path.realpath(f"/{LIB}/libz.so.1")
    with open(z, "rb") as f:
        t.file(f"{LIB}/{os.path.basename(z)}", f.read(), 0o755)
    t.symlink(f"{LIB}/libz.so.1", os.path.basename(z))
    return t.bytes()


def tiny_layout(path, extra_layers=(), tag="t", layer_how="gzip", **image_kw):
    lay = L.Layout(path)
    layers = [lay.layer(tiny_tar(), layer_how)] + [lay.layer(b, how) for b, how in extra_layers]
    man, man_bytes, cfg = lay.image(layers, tag=tag, **image_kw)
    return lay, man, layers


def rewrite_manifest(lay, tag, mutate):
    """Loads TAG's manifest, lets MUTATE change it (a dict), writes it back as a new blob and retags."""
    desc = next(m for m in lay.index["manifests"] if m["annotations"][L.REF_NAME] == tag)
    man = json.loads(lay.read_blob(desc["digest"]))
    mutate(man)
    d = lay.blob(json.dumps(man, sort_keys=True).encode(), L.OCI_MANIFEST)
    lay.tag(tag, d)
    return d


def gzip_bomb(member, size):
    """A gzip'd tar holding one member of SIZE zero bytes (honest sizes): ~1000:1. Built from one deflate block of
    1 MiB of zeros repeated (each after a full flush, byte-aligned and independent), so GBs cost a second."""
    ti = tarfile.TarInfo(member)
    ti.size, ti.mode = size, 0o755
    hdr = ti.tobuf(tarfile.GNU_FORMAT)
    mib = 1 << 20
    total = len(hdr) + size + 1024  # the member, then the two zero blocks ending the archive
    total += (-total) % 10240        # a tar's record padding
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(hdr + bytes(mib - len(hdr))) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(bytes(mib)) + c.flush(zlib.Z_FULL_FLUSH)
    n_full, rest = divmod(total - mib, mib)
    last = c.compress(bytes(rest)) + c.flush(zlib.Z_FINISH)
    crc = zlib.crc32(hdr + bytes(mib - len(hdr)))
    zeros = bytes(mib)
    for _ in range(n_full):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(bytes(rest), crc)
    h = L.hashlib.sha256(hdr + bytes(mib - len(hdr)))
    for _ in range(n_full):
        h.update(zeros)
    h.update(bytes(rest))
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    gz = head + first + block * n_full + last + struct.pack("<II", crc & 0xFFFFFFFF, total & 0xFFFFFFFF)
    return gz, "sha256:" + h.hexdigest()


def oversize_tar(member, declared):
    """A tar whose one member declares DECLARED bytes (base-256 size field) and holds 4 KiB: the archive ends."""
    ti = tarfile.TarInfo(member)
    ti.size, ti.mode = declared, 0o755
    return ti.tobuf(tarfile.GNU_FORMAT) + b"\x7fELF" + bytes(4092)


def bad_checksum_tar():
    raw = bytearray(tiny_tar())
    real = int(raw[148:154].decode().strip("\0 ") or "0", 8)
    raw[148:156] = b"%06o\0 " % ((real + 1) & 0o777777)
    return bytes(raw)


def tar_bytes(entries):
    """An archive of (name, bytes or ('symlink', target)) as an outer archive (oci-archive, docker-archive)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in entries:
            ti = tarfile.TarInfo(name)
            if isinstance(data, tuple):
                ti.type, ti.linkname = tarfile.SYMTYPE, data[1]
                t.addfile(ti)
            else:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def layout_entries(path):
    out = []
    for dirpath, _, files in os.walk(path):
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out.append((os.path.relpath(p, path), fh.read()))
    return out


# --- the cases -------------------------------------------------------------------------------------------------------
# Each maker gets the case's input folder and returns (REF, extra probe arguments, context manager or None). A context
# manager (a fake registry) is entered for the run and stopped after it.

CASES = {}


def case(name, expect, why, timeout=60, after=None):
    """A case: EXPECT the pattern its error must match (None: a control, exit 0); AFTER(cache, result) a list of
    (ok, what, detail) checked after the run (a control's facts about the cache's root and the description)."""
    def deco(fn):
        CASES[name] = {"make": fn, "expect": expect, "why": why, "timeout": timeout, "after": after}
        return fn
    return deco


def cached_roots(cache):
    """The complete roots in the cache (images/roots/HEX/root; not the .build-* being made)."""
    top = os.path.join(cache, "images", "roots")
    return [os.path.join(top, n, "root") for n in sorted(os.listdir(top)) if not n.startswith(".")] \
        if os.path.isdir(top) else []


DIGEST = r"(?i)(digest|sha256 mismatch|hash(es)? to|does not hash)"
SIZE = r"(?i)size"
TRAVERSAL = r"(?i)(\.\.|travers|outside|escape|above)"
LINK_OUT = r"(?i)(link|outside|escape|above|\.\.)"


@case("control-oci", None, "the honest tiny image (must exit 0)")
def _(d):
    lay, man, _ = tiny_layout(d)
    return f"oci:{d}:t", [], None


def zlib_bytes():
    with open(os.path.realpath(f"/{LIB}/libz.so.1"), "rb") as f:
        return f.read()


def written_through(name):
    """AFTER: the library written through a link lies at the root's usr/lib/NAME, and the description lists it.
    (Layer 3 has no folder entry for the link's path: one would replace the link by a folder, as a runtime does.)"""
    def after(cache, r):
        roots = cached_roots(cache)
        where = [os.path.isfile(os.path.join(p, "usr/lib", name)) for p in roots]
        return [(where == [True], f"the file written through the link is at the root's usr/lib/{name}", roots),
                (f"/usr/lib/{name}" in r.out, "and the description lists it there", r.out[:300])]
    return after


@case("control-symlink-inside", None, "a file written through an earlier layer's link that stays inside the root "
      "(lib2 -> usr/lib, then lib2/libin.so.1; must exit 0)", after=written_through("libin.so.1"))
def _(d):
    t = L.Tar().dir("usr").dir("usr/lib").file("usr/lib/keep", b"k").symlink("lib2", "usr/lib")
    tiny_layout(d, [(t.bytes(), "gzip"), (L.Tar().file("lib2/libin.so.1", zlib_bytes(), 0o755).bytes(), "gzip")])
    return f"oci:{d}:t", [], None


def link_kept(cache, r):
    roots = cached_roots(cache)
    target = [os.readlink(os.path.join(p, "srv/up")) if os.path.islink(os.path.join(p, "srv/up")) else None
              for p in roots]
    return [(len(roots) == 1, "the cache holds the image's root", roots),
            (target == ["../../../outside"], "the dangling climbing link stays in the root as the layer made it",
             target)]


@case("control-dangling-climb", None, "a link srv/up -> ../../../outside that nothing is written through and the "
      "loader never walks (it stays; exit 0)", after=link_kept)
def _(d):
    tiny_layout(d, [(L.Tar().dir("srv").symlink("srv/up", "../../../outside").bytes(), "gzip")])
    return f"oci:{d}:t", [], None


@case("control-absolute-link", None, "layer 2 makes lib3 -> /usr/lib (absolute: re-rooted), layer 3 writes "
      "lib3/libabs.so.1 through it (exit 0)", after=written_through("libabs.so.1"))
def _(d):
    tiny_layout(d, [(L.Tar().symlink("lib3", "/usr/lib").bytes(), "gzip"),
                    (L.Tar().file("lib3/libabs.so.1", zlib_bytes(), 0o755).bytes(), "gzip")])
    return f"oci:{d}:t", [], None


@case("dangling-climb-walked", LINK_OUT, "a link in a folder the loader walks, climbing out of the root "
      "(usr/lib/libup.so.1 -> ../../../outside/libup.so.1): nothing is written through it (the layer is applied), "
      "and the probe reports it as probe --root does (exit 2, the description still printed)")
def _(d):
    tiny_layout(d, [(L.Tar().dir("usr").dir("usr/lib").symlink("usr/lib/libup.so.1", "../../../outside/libup.so.1")
                     .bytes(), "gzip")])
    return f"oci:{d}:t", [], None


@case("control-registry", None, "the honest tiny image from the fake registry (must exit 0)")
def _(d):
    lay, man, _ = tiny_layout(d)
    fake = L.FakeRegistry()
    fake.add_layout_image(lay, "tiny/img", "1", man["digest"])
    return f"docker://{fake.host}/tiny/img:1", [], fake


@case("control-platform", None, "an index whose arm64 entry's config says arm64 (must exit 0)")
def _(d):
    lay = L.Layout(d)
    layer = lay.layer(tiny_tar())
    arm, _, _ = lay.image([layer], arch="arm64", platform_in_index=True)
    amd, _, _ = lay.image([layer], arch="amd64", platform_in_index=True)
    lay.multi([amd, arm], "t")
    return f"oci:{d}:t", ["--platform", "linux/arm64"], None


def same_size_other_gzip(data):
    """The same gzip stream with another MTIME in its header: the same size, the same tar inside, another digest
    (only a digest check can tell)."""
    data = bytearray(data)
    data[4:8] = b"\x2a\x2a\x2a\x2a"
    return bytes(data)


@case("layer-digest-mismatch", DIGEST, "a layer blob whose content does not hash to the manifest's digest (the "
      "same size and a valid layer: its gzip header's MTIME changed)")
def _(d):
    lay, man, layers = tiny_layout(d)
    p = lay.blob_path(layers[0][0]["digest"])
    with open(p, "rb") as f:
        data = same_size_other_gzip(f.read())
    with open(p, "wb") as f:
        f.write(data)
    return f"oci:{d}:t", [], None


@case("layer-size-mismatch", SIZE, "a layer whose size is not the manifest's (the digest is right)")
def _(d):
    lay, man, layers = tiny_layout(d)
    rewrite_manifest(lay, "t", lambda m: m["layers"][0].update(size=m["layers"][0]["size"] + 1000))
    return f"oci:{d}:t", [], None


@case("manifest-digest-mismatch", DIGEST, "index.json names a manifest by a digest its content does not have (the "
      "same size and meaning: one space of the JSON made a tab)")
def _(d):
    lay, man, layers = tiny_layout(d)
    body = lay.read_blob(man["digest"])
    other = body.replace(b", ", b",\t", 1)
    assert len(other) == len(body) and other != body and json.loads(other) == json.loads(body)
    with open(lay.blob_path(man["digest"]), "wb") as f:
        f.write(other)
    return f"oci:{d}:t", [], None


@case("index-missing-manifest", r"(?i)(missing|not found|no such|absent|does not exist|unknown|no blob|cannot open|"
      r"not in the layout)",
      "index.json points at a manifest the layout does not hold")
def _(d):
    lay, man, layers = tiny_layout(d)
    os.remove(lay.blob_path(man["digest"]))
    return f"oci:{d}:t", [], None


@case("tar-dotdot", TRAVERSAL, "a layer member ../../etc/passwd")
def _(d):
    tiny_layout(d, [(L.Tar().file("../../etc/passwd", b"root::0:0::/:/bin/sh\n").bytes(), "gzip")])
    return f"oci:{d}:t", [], None


@case("tar-absolute-climb", TRAVERSAL, "a layer member /etc/../../../x, absolute and climbing")
def _(d):
    tiny_layout(d, [(L.Tar().file("/etc/../../../outside", b"x").bytes(), "gzip")])
    return f"oci:{d}:t", [], None


@case("symlink-escape-write", r"(?i)climbs out of the root", "layer 2 makes lib2 -> ../../outside, layer 3 writes "
      "lib2/x through it")
def _(d):
    tiny_layout(d, [(L.Tar().symlink("lib2", "../../outside").bytes(), "gzip"),
                    (L.Tar().file("lib2/x", b"x").bytes(), "gzip")])
    return f"oci:{d}:t", [], None


@case("hardlink-escape", LINK_OUT, "a hard link to ../../etc/passwd")
def _(d):
    tiny_layout(d, [(L.Tar().dir("etc").hardlink("etc/pw", "../../etc/passwd").bytes(), "gzip")])
    return f"oci:{d}:t", [], None


@case("char-device", r"(?i)(device|character)", "a character device member (dev/evil, 1:3)")
def _(d):
    tiny_layout(d, [(L.Tar().dir("dev").special("dev/evil", "chr", 1, 3).bytes(), "gzip")])
    return f"oci:{d}:t", [], None


@case("block-device", r"(?i)(device|block)", "a block device member (dev/evil, 8:0)")
def _(d):
    tiny_layout(d, [(L.Tar().dir("dev").special("dev/evil", "blk", 8, 0).bytes(), "gzip")])
    return f"oci:{d}:t", [], None


def fifo_gone(cache, r):
    roots = cached_roots(cache)
    there = [p for p in roots if os.path.lexists(os.path.join(p, LIB, "libfifo.so.1"))]
    return [(len(roots) == 1, "the cache holds the image's root", roots),
            (not there, "the fifo is not in the cache's root (ignored)", there),
            ("libfifo" not in r.out, "the fifo is not in the description", r.out[:300])]


@case("control-fifo", None, "a fifo member in a loader folder: ignored (exit 0), absent from the root and the "
      "description", after=fifo_gone)
def _(d):
    tiny_layout(d, [(L.Tar().dir("usr").dir("usr/lib").dir(LIB).special(f"{LIB}/libfifo.so.1", "fifo").bytes(),
                     "gzip")])
    return f"oci:{d}:t", [], None


@case("decompression-bomb", r"(?i)(ratio|bomb|limit|too large|exceed|--max)",
      "a 2 MiB gzip layer holding a 2 GiB library of zeros (1000:1)", timeout=60)
def _(d):
    lay = L.Layout(d)
    base = lay.layer(tiny_tar())
    bomb, diff_id = gzip_bomb(f"{LIB}/libbomb.so.1", 2 << 30)
    desc = lay.blob(bomb, L.OCI_LAYER["gzip"])
    lay.image([base, (desc, diff_id)], tag="t")
    return f"oci:{d}:t", [], None


@case("oversize-member", r"(?i)(size|limit|too large|exceed|--max)",
      "a member declaring 64 GiB (past any limit), the archive ending after 4 KiB")
def _(d):
    tiny_layout(d, [(oversize_tar(f"{LIB}/libhuge.so.1", 64 << 30), "gzip")])
    return f"oci:{d}:t", [], None


@case("truncated-layer", r"(?i)(truncat|unexpected end|incomplete|premature|corrupt|gzip|short|ended)",
      "a gzip layer cut mid-stream (the manifest's digest and size are the cut blob's)")
def _(d):
    lay = L.Layout(d)
    full = L.compress(tiny_tar(), "gzip")
    desc = lay.blob(full[: len(full) * 3 // 5], L.OCI_LAYER["gzip"])
    lay.image([(desc, "sha256:" + L.sha256_hex(tiny_tar()))], tag="t")
    return f"oci:{d}:t", [], None


@case("tar-bad-checksum", r"(?i)(checksum|header|tar)", "a tar header whose checksum is wrong")
def _(d):
    lay = L.Layout(d)
    lay.image([lay.layer(bad_checksum_tar(), "gzip")], tag="t")
    return f"oci:{d}:t", [], None


@case("manifest-not-json", r"(?i)(json|pars|manifest)", "a manifest blob that is not JSON")
def _(d):
    lay = L.Layout(d)
    desc = lay.blob(b"this is { not json", L.OCI_MANIFEST)
    lay.tag("t", desc)
    return f"oci:{d}:t", [], None


@case("whiteout-dotdot", r"(?i)(whiteout|\.\.)", "a whiteout naming .. (usr/.wh...)")
def _(d):
    tiny_layout(d, [(L.Tar().dir("usr").file("usr/.wh...", b"").bytes(), "gzip")])  # ".wh." + ".."
    return f"oci:{d}:t", [], None


@case("digest-path", DIGEST, "a layer digest sha256:../../../../etc/passwd (a path, not a digest)")
def _(d):
    lay, man, layers = tiny_layout(d)
    rewrite_manifest(lay, "t", lambda m: m["layers"][0].update(digest="sha256:../../../../etc/passwd"))
    return f"oci:{d}:t", [], None


@case("config-arch-lies", r"(?i)(arch|platform|arm64.*amd64|amd64.*arm64)", "the index says arm64, the manifest's config says amd64")
def _(d):
    lay = L.Layout(d)
    layer = lay.layer(tiny_tar())
    liar, _, _ = lay.image([layer], arch="amd64", platform_in_index=True)
    liar = dict(liar, platform={"architecture": "arm64", "os": "linux"})
    lay.multi([liar], "t")
    return f"oci:{d}:t", ["--platform", "linux/arm64"], None


@case("docker-archive-traversal", TRAVERSAL, "a docker-archive whose manifest.json names layer ../../etc/passwd")
def _(d):
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                      "rootfs": {"type": "layers", "diff_ids": ["sha256:" + L.sha256_hex(tiny_tar())]}}).encode()
    cname = L.sha256_hex(cfg) + ".json"
    man = json.dumps([{"Config": cname, "RepoTags": ["tiny/img:1"], "Layers": ["../../etc/passwd"]}]).encode()
    path = os.path.join(d, "evil.docker.tar")
    with open(path, "wb") as f:
        f.write(tar_bytes([(cname, cfg), ("manifest.json", man), ("layer.tar", tiny_tar())]))
    return f"docker-archive:{path}", [], None


@case("oci-archive-index-symlink", LINK_OUT[:-1] + "|not a regular file)", "an oci-archive whose index.json is a link to ../../etc/passwd")
def _(d):
    lay, man, _ = tiny_layout(os.path.join(d, "layout"))
    entries = [(n, b) for n, b in layout_entries(lay.path) if n != "index.json"]
    entries.append(("index.json", ("symlink", "../../../../etc/passwd")))
    path = os.path.join(d, "evil.oci.tar")
    with open(path, "wb") as f:
        f.write(tar_bytes(entries))
    shutil.rmtree(lay.path)
    return f"oci-archive:{path}", [], None


# registry cases: the tiny image on the fake registry, then broken

def fake_with_tiny(d, **kw):
    lay, man, layers = tiny_layout(d, **kw)
    fake = L.FakeRegistry()
    fake.add_layout_image(lay, "tiny/img", "1", man["digest"])
    return fake, lay, man, layers


@case("registry-layer-digest-mismatch", DIGEST, "the registry serves a layer whose content is not its digest (the "
      "same size, a valid layer)")
def _(d):
    fake, lay, man, layers = fake_with_tiny(d)
    dg = layers[0][0]["digest"]
    fake.blobs[dg] = same_size_other_gzip(fake.blobs[dg])
    return f"docker://{fake.host}/tiny/img:1", [], fake


@case("registry-blob-size-mismatch", SIZE, "the manifest states a layer size 100 bytes past the blob's (digest right)")
def _(d):
    fake, lay, man, layers = fake_with_tiny(d)
    m = json.loads(fake.manifests[("tiny/img", "1")][1])
    m["layers"][0]["size"] += 100
    fake.manifests[("tiny/img", "1")] = (L.OCI_MANIFEST, json.dumps(m).encode())
    return f"docker://{fake.host}/tiny/img:1", [], fake


@case("registry-manifest-digest-lies", DIGEST, "asked by digest, the registry answers another manifest")
def _(d):
    fake, lay, man, layers = fake_with_tiny(d)
    other = json.loads(lay.read_blob(man["digest"]))
    other["annotations"] = {"evil": "1"}
    fake.manifests[("tiny/img", man["digest"])] = (L.OCI_MANIFEST, json.dumps(other).encode())
    return f"docker://{fake.host}/tiny/img@{man['digest']}", [], fake


@case("registry-index-missing-manifest", r"(?i)(404|not found|missing|unknown|MANIFEST_UNKNOWN)",
      "an index whose amd64 manifest the registry does not have")
def _(d):
    lay = L.Layout(d)
    layer = lay.layer(tiny_tar())
    amd, _, _ = lay.image([layer], platform_in_index=True)
    idx = lay.multi([amd], "t")
    fake = L.FakeRegistry()
    fake.add_layout_image(lay, "tiny/img", "1", idx["digest"])
    del fake.manifests[("tiny/img", amd["digest"])]
    return f"docker://{fake.host}/tiny/img:1", ["--platform", "linux/amd64"], fake


@case("registry-manifest-not-json", r"(?i)(json|pars|manifest)", "the registry's manifest is not JSON")
def _(d):
    fake = L.FakeRegistry()
    fake.manifests[("tiny/img", "1")] = (L.OCI_MANIFEST, b"<html>not a manifest</html>")
    return f"docker://{fake.host}/tiny/img:1", [], fake


@case("registry-manifest-too-large", r"(?i)manifest.*4 MiB",
      "a 16 MiB manifest (valid JSON padded with spaces)")
def _(d):
    fake, lay, man, layers = fake_with_tiny(d)
    body = fake.manifests[("tiny/img", "1")][1]
    fake.manifests[("tiny/img", "1")] = (L.OCI_MANIFEST, body + b" " * (16 << 20))
    return f"docker://{fake.host}/tiny/img:1", [], fake


@case("registry-manifest-deep", r"(?i)(json|depth|nest|pars|manifest|object)",
      "a manifest of 100,000 nested arrays (valid JSON, no manifest)")
def _(d):
    fake = L.FakeRegistry()
    fake.manifests[("tiny/img", "1")] = (L.OCI_MANIFEST, b"[" * 100000 + b"]" * 100000)
    return f"docker://{fake.host}/tiny/img:1", [], fake


@case("registry-stall", r"(?i)(low.speed|stall|timed? ?out|too slow|no data|--low-speed-time)",
      "the registry sends a layer's headers, then never its body", timeout=75)
def _(d):
    fake, lay, man, layers = fake_with_tiny(d)
    fake.faults["stall"] = r"/blobs/" + layers[0][0]["digest"]
    return f"docker://{fake.host}/tiny/img:1", LOW_SPEED, fake


@case("registry-redirect-loop", r"(?i)redirect", "a layer's URL redirects to another that redirects back, forever")
def _(d):
    fake, lay, man, layers = fake_with_tiny(d)
    fake.faults["redirect_loop"] = r"/blobs/"
    return f"docker://{fake.host}/tiny/img:1", [], fake


@case("registry-token-garbage", r"(?i)(token|auth)", "a 401 with a Bearer realm that answers garbage")
def _(d):
    fake, lay, man, layers = fake_with_tiny(d)
    fake.faults["token"] = {"good": "never", "realm_body": b"\x00\xffgarbage<html>"}
    return f"docker://{fake.host}/tiny/img:1", [], fake


LOW_SPEED = []
HELP_OPTIONS = set()  # the options probe --help lists


# --- the runner ------------------------------------------------------------------------------------------------------

def run_case(name, spec, work):
    global CURRENT
    CURRENT = name
    d = os.path.join(work, name)
    inp, home, tmp, cwd, box = (os.path.join(d, x) for x in ("input", "home", "tmp", "cwd", "box"))
    for x in (inp, home, tmp, cwd, box):
        os.makedirs(x)
    cache = os.path.join(box, "cache")
    ref, extra, server = spec["make"](inp)
    env = L.base_env(d, cache)
    env.update(HOME=home, TMPDIR=tmp)
    before = L.snapshot(inp, home, tmp, cwd, box)
    t0 = time.time()
    if server is not None:
        with server:
            r = L.wheelcheck(A.wheelcheck, ["probe", ref, "--json", *extra], env, timeout=spec["timeout"], cwd=cwd)
    else:
        r = L.wheelcheck(A.wheelcheck, ["probe", ref, "--json", *extra], env, timeout=spec["timeout"], cwd=cwd)
    after = L.snapshot(inp, home, tmp, cwd, box)
    if spec["expect"] is None:
        check(r.rc == 0, "exits 0 (a control)", r.show())
        for ok, what, detail in (spec["after"](cache, r) if spec["after"] else []):
            check(bool(ok), what, detail)
    else:
        errs = r.error_lines()
        check(not r.timed_out, f"ends within {spec['timeout']} s", r.show())
        check(r.rc == 2, "exits 2", r.show())
        check(bool(errs), "prints a wheelcheck: error: line", r.err[-800:])
        if errs:
            # what the error says, less the reference, the input's path and the case's name (they do not count)
            text = " ".join(errs).replace(ref, "<REF>").replace(inp, "<INPUT>").replace(name, "<CASE>")
            ok = re.search(spec["expect"], text) and not re.search(r"(?i)(unknown option|unrecognized|extra argument|"
                                                                   r"the following argument)", text)
            check(bool(ok), f"the error says what was wrong ({spec['expect']})", text[:600])
    blank = [ln for ln in r.err.splitlines() if re.match(r"wheelcheck: (error|warning):(  | :|\s*$)", ln)]
    check(not blank, "no error or warning line names an empty subject (\"error:  has ...\")", "\n".join(blank))
    named = sorted(set(re.findall(r"--[a-z][a-z-]*", r.err)) - HELP_OPTIONS)
    check(not named, "stderr names no option probe --help lacks", f"{named}\n{r.err[-600:]}")
    outside = [x for x in L.snapshot_diff(before, after) if not x.split(" ", 1)[1].startswith(cache + os.sep)
               and x.split(" ", 1)[1] != cache]
    check(not outside, "nothing written outside the cache (input, HOME, TMPDIR, working folder, the folder above the "
          "cache)", "\n".join(outside[:10]))
    planted = [os.path.join(dp, f) for dp, dn, fs in os.walk(d) for f in fs + dn
               if f in ("passwd", "evil", "outside", "pw") and not os.path.join(dp, f).startswith(inp + os.sep)]
    check(not planted, "no passwd, evil or outside file appeared (the cache included)", planted)
    bad = L.unverified_blobs(cache)
    check(not bad, "the cache holds no unverified blob", bad)
    said = (": " + r.error_lines()[0][:400]) if r.error_lines() else ""
    print(f"  ({time.time() - t0:.1f} s, exit {r.rc}{said})", flush=True)


def main():
    global A, CURRENT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheelcheck", required=False)
    ap.add_argument("--samples", help="unused (the tier's scripts take the same arguments)")
    ap.add_argument("--work", help="work here and keep it (default: a temporary folder, removed)")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    ap.add_argument("cases", nargs="*", metavar="CASE")
    A = ap.parse_args()
    if A.list:
        for n, s in CASES.items():
            print(f"{n:34} {s['why']}")
        return 0
    if not A.wheelcheck:
        ap.error("--wheelcheck is required")
    unknown = [c for c in A.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case {unknown} (--list)")
    A.wheelcheck = os.path.abspath(A.wheelcheck)
    L.need_wheelcheck(A.wheelcheck)
    h = subprocess.run([A.wheelcheck, "probe", "--help"], capture_output=True, text=True).stdout
    HELP_OPTIONS.update(re.findall(r"--[a-z][a-z-]*", h))
    for opt in ("--low-speed-time", "--max-redirects", "--retries"):
        check(opt in HELP_OPTIONS, f"probe takes {opt} (as check and scan do), for registries")
    if "--low-speed-time" in HELP_OPTIONS and "--retries" in HELP_OPTIONS:
        LOW_SPEED[:] = ["--low-speed-time", "3", "--retries", "0"]
    keep = bool(A.work)
    work = os.path.abspath(A.work) if keep else tempfile.mkdtemp(prefix="wheelcheck-hostile-images-")
    os.makedirs(work, exist_ok=True)
    passwd = L.sha256_file("/etc/passwd")
    t0 = time.time()
    n = 0
    try:
        for name in A.cases or list(CASES):
            print(f"case {name}: {CASES[name]['why']}", flush=True)
            n += not name.startswith("control-")
            try:
                run_case(name, CASES[name], work)
            except Exception:
                check(False, "ran to its end", traceback.format_exc())
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    CURRENT = "all"
    check(L.sha256_file("/etc/passwd") == passwd, "this machine's /etc/passwd is unchanged")
    print(f"{n} hostile cases; {len(FAILURES)} failed ({time.time() - t0:.1f} s)")
    for f in FAILURES:
        print(f"  FAILED  {f}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

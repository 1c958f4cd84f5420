#!/usr/bin/env python3
"""Layers as the runtime applies them (tests/images/README.md): a three-layer image whose upper layers delete a
library (whiteouts), replace another (a different file at the same path), add libraries, make two folders opaque
and link across layers; `wheelcheck probe oci:L:layered` against `probe --root` of the same image unpacked by
umoci (the referee), and the specific facts asserted on both.

  layers.py --wheelcheck BIN [--samples DIR] [--work DIR]

Layer 1 (gzip): the Debian 12 root of images.py.
Layer 2 (plain tar): .wh.libyaml-0.so.2 and .wh.libyaml-0.so.2.0.9 (libyaml deleted); libz.so.1.2.13 replaced by
  a library built here (soname libwcreplaced.so.1, version WCREPLACED_1.0, exports wc_replaced_marker);
  /opt/vendor/lib/libwcold_a.so.1 and libwcold_b.so.1.
Layer 3 (gzip): /opt/vendor/lib and /usr/lib/python3/dist-packages opaque (.wh..wh..opq), each given one new
  entry (libwcnew.so.1; wcmarker-1.0.dist-info); a hard link /usr/local/lib/libwclinked.so.1 to layer 2's
  libz.so.1.2.13; a symbolic link /usr/local/lib/libexpat-link.so.1 -> /usr/lib/x86_64-linux-gnu/libexpat.so.1;
  lib/x86_64-linux-gnu/libwcvia.so.1, written through layer 1's merged-/usr link lib -> usr/lib.
The same image as docker-archive and oci-archive (skopeo) must give the same description.

Exit 0 when every check holds, 1 otherwise, 77 (skipped: ...) without umoci, skopeo, gcc or image references.
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import imagelib as L  # noqa: E402

CHECKS = L.Checks()
check, FAILURES = CHECKS.check, CHECKS.failures
NAME = "deb12-layered"
LIB = "usr/lib/x86_64-linux-gnu"


def build_lib(work, soname, node, symbol):
    src = os.path.join(work, f"{soname}.c")
    ver = os.path.join(work, f"{soname}.map")
    out = os.path.join(work, soname)
    with open(src, "w") as f:
        f.write(f"int {symbol}(void) {{ return 63; }}\n")
    with open(ver, "w") as f:
        f.write(f"{node} {{ global: {symbol}; local: *; }};\n")
    L.run(["gcc", "-shared", "-fPIC", "-O1", f"-Wl,-soname,{soname}", f"-Wl,--version-script,{ver}", "-o", out, src])
    with open(out, "rb") as f:
        return f.read()


def lib_by_path(desc, path):
    for lib in desc.get("libraries", []):
        if lib.get("path") == path or path in lib.get("names", []):
            return lib
    return None


def facts(desc, what, exports_dir=None):
    """The top layer's world, asserted on a description."""
    libs = desc.get("libraries", [])
    check(not any(lib.get("soname") == "libyaml-0.so.2" or "libyaml" in lib.get("path", "") for lib in libs),
          f"{what}: libyaml (whited out in layer 2) is absent")
    z = lib_by_path(desc, f"/{LIB}/libz.so.1.2.13")
    if check(z is not None, f"{what}: a library at /{LIB}/libz.so.1.2.13"):
        check(z.get("soname") == "libwcreplaced.so.1", f"{what}: libz.so.1.2.13 has layer 2's soname libwcreplaced.so.1",
              z)
        check("WCREPLACED_1.0" in z.get("versions", []) and "ZLIB_1.2.0" not in z.get("versions", []),
              f"{what}: libz.so.1.2.13 defines WCREPLACED_1.0, not zlib's ZLIB_1.2.0", z.get("versions"))
        if exports_dir and z.get("exports"):
            p = os.path.join(exports_dir, z["exports"])
            text = gzip.decompress(open(p, "rb").read()).decode() if p.endswith(".gz") else open(p).read()
            check("wc_replaced_marker" in text and "deflate" not in text,
                  f"{what}: its export table has wc_replaced_marker, not zlib's deflate", text[:400])
    vendor = sorted(lib.get("path") for lib in libs if lib.get("path", "").startswith("/opt/vendor/lib/"))
    check(vendor == ["/opt/vendor/lib/libwcnew.so.1"],
          f"{what}: /opt/vendor/lib (opaque in layer 3) holds only libwcnew.so.1", vendor)
    site = [(d.get("name"), d.get("version")) for d in desc.get("distributions", [])
            if d.get("location") == "/usr/lib/python3/dist-packages"]
    check(site == [("wcmarker", "1.0")],
          f"{what}: /usr/lib/python3/dist-packages (opaque) holds only wcmarker 1.0, PyYAML gone", site)
    via = lib_by_path(desc, f"/{LIB}/libwcvia.so.1")
    check(via is not None and via.get("soname") == "libwcvia.so.1",
          f"{what}: lib/x86_64-linux-gnu/libwcvia.so.1 (through the link lib -> usr/lib) is at /{LIB}", via)
    linked = [lib for lib in libs if "/usr/local/lib/libwclinked.so.1" in [lib.get("path")] + lib.get("names", [])]
    check(linked and linked[0].get("soname") == "libwcreplaced.so.1",
          f"{what}: the hard link /usr/local/lib/libwclinked.so.1 is layer 2's replaced library", linked)


def referee_facts(rootfs):
    """umoci's unpacking itself shows the top layer's world (else it is no referee)."""
    lib = os.path.join(rootfs, LIB)
    check(not any(f.startswith("libyaml") for f in os.listdir(lib)), "umoci: libyaml is gone")
    check(sorted(os.listdir(os.path.join(rootfs, "opt/vendor/lib"))) == ["libwcnew.so.1"],
          "umoci: /opt/vendor/lib holds only libwcnew.so.1", os.listdir(os.path.join(rootfs, "opt/vendor/lib")))
    check(os.listdir(os.path.join(rootfs, "usr/lib/python3/dist-packages")) == ["wcmarker-1.0.dist-info"],
          "umoci: dist-packages holds only wcmarker-1.0.dist-info")
    a, b = os.stat(os.path.join(lib, "libz.so.1.2.13")), os.stat(os.path.join(rootfs, "usr/local/lib/libwclinked.so.1"))
    check((a.st_ino, a.st_dev) == (b.st_ino, b.st_dev), "umoci: libwclinked.so.1 is a hard link of libz.so.1.2.13")
    check(os.path.isfile(os.path.join(lib, "libwcvia.so.1")) and os.path.islink(os.path.join(rootfs, "lib")),
          "umoci: libwcvia.so.1 went through the link lib -> usr/lib")


def export_tables(folder):
    out = {}
    for dirpath, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(dirpath, f)
            data = open(p, "rb").read()
            out[os.path.relpath(p, folder)] = L.sha256_hex(gzip.decompress(data) if f.endswith(".gz") else data)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--samples", help="unused (the tier's scripts take the same arguments)")
    ap.add_argument("--work", help="work here and keep it (default: a temporary folder, removed)")
    a = ap.parse_args()
    a.wheelcheck = os.path.abspath(a.wheelcheck)
    L.need_tools("dpkg-query", "umoci", "skopeo", "gcc")
    L.need_wheelcheck(a.wheelcheck)
    keep = bool(a.work)
    work = os.path.abspath(a.work) if keep else tempfile.mkdtemp(prefix="wheelcheck-layers-")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    try:
        run(a, work)
    except Exception:
        check(False, "ran to its end", traceback.format_exc())
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{len(FAILURES)} failed ({time.time() - t0:.1f} s)")
    for f in FAILURES:
        print(f"  FAILED  {f}")
    return 1 if FAILURES else 0


def run(a, work):
    base = L.Base(work)
    lay = base.layout
    build = os.path.join(work, "build")
    os.makedirs(build)
    replaced = build_lib(build, "libwcreplaced.so.1", "WCREPLACED_1.0", "wc_replaced_marker")
    libs = {n: build_lib(build, n, "WCTEST_1.0", "wc_" + n.split(".")[0][3:])
            for n in ("libwcold_a.so.1", "libwcold_b.so.1", "libwcnew.so.1", "libwcvia.so.1")}

    def dirs(t, *paths):
        for p in paths:
            t.dir(p)
        return t

    t2 = dirs(L.Tar(), "usr", "usr/lib", LIB, "opt", "opt/vendor", "opt/vendor/lib")
    t2.file(f"{LIB}/.wh.libyaml-0.so.2").file(f"{LIB}/.wh.libyaml-0.so.2.0.9")
    t2.file(f"{LIB}/libz.so.1.2.13", replaced, 0o644)
    t2.file("opt/vendor/lib/libwcold_a.so.1", libs["libwcold_a.so.1"]).file("opt/vendor/lib/libwcold_b.so.1",
                                                                             libs["libwcold_b.so.1"])
    layer2 = lay.layer(t2.bytes(), "plain")
    t3 = dirs(L.Tar(), "opt", "opt/vendor", "opt/vendor/lib", "usr", "usr/lib", "usr/lib/python3",
              "usr/lib/python3/dist-packages", "usr/local", "usr/local/lib")
    t3.file("opt/vendor/lib/.wh..wh..opq").file("opt/vendor/lib/libwcnew.so.1", libs["libwcnew.so.1"])
    t3.file("usr/lib/python3/dist-packages/.wh..wh..opq")
    t3.dir("usr/lib/python3/dist-packages/wcmarker-1.0.dist-info")
    t3.file("usr/lib/python3/dist-packages/wcmarker-1.0.dist-info/METADATA",
            b"Metadata-Version: 2.1\nName: wcmarker\nVersion: 1.0\n")
    t3.hardlink("usr/local/lib/libwclinked.so.1", f"{LIB}/libz.so.1.2.13")
    t3.symlink("usr/local/lib/libexpat-link.so.1", f"/{LIB}/libexpat.so.1")
    t3.file("lib/x86_64-linux-gnu/libwcvia.so.1", libs["libwcvia.so.1"])
    layer3 = lay.layer(t3.bytes(), "gzip")
    man, _, cfg = lay.image([base.layer, layer2, layer3], tag="layered")
    ref = f"oci:{lay.path}:layered"

    rootfs = L.umoci_unpack(lay.path, "layered", os.path.join(work, "bundle"))
    referee_facts(rootfs)

    env = L.base_env(work, os.path.join(work, "cache"))
    cwd = os.path.join(work, "cwd")
    os.makedirs(cwd)
    snap = L.snapshot(env["HOME"], env["TMPDIR"], cwd)
    out_ref, out_umoci = os.path.join(work, "out-ref"), os.path.join(work, "out-umoci")
    os.makedirs(out_ref)
    os.makedirs(out_umoci)
    r = L.wheelcheck(a.wheelcheck, ["probe", ref, "--name", NAME, "-o", os.path.join(out_ref, "d.json"), "-q"], env,
                     cwd=cwd)
    r0 = L.wheelcheck(a.wheelcheck, ["probe", "--root", rootfs, "--name", NAME, *base.env_args(), "-o",
                                     os.path.join(out_umoci, "d.json"), "-q"],
                      dict(env, WHEELCHECK_CACHE_DIR=os.path.join(work, "cache-root")), cwd=cwd)
    check(r0.rc == 0, "probe --root of umoci's unpacking exits 0", r0.show())
    if not check(r.rc == 0, f"probe {ref} exits 0", r.show()):
        return
    d = json.load(open(os.path.join(out_ref, "d.json")))
    d0 = json.load(open(os.path.join(out_umoci, "d.json")))
    diff = L.json_diff(L.without_from(d), d0)
    check(not diff, "probe of the layered image == probe --root of umoci's unpacking (less \"from\")", "\n".join(diff))
    check(d.get("from", {}).get("digest") == man["digest"], "from.digest is the layered manifest's", d.get("from"))
    t, t0 = export_tables(os.path.join(out_ref, "exports")), export_tables(os.path.join(out_umoci, "exports"))
    check(t and t == t0, f"the export tables ({len(t)}) == umoci's ({len(t0)})",
          "\n".join(sorted(set(t) ^ set(t0))[:10]))
    facts(d, "probe REF", os.path.join(out_ref, "exports", NAME))
    facts(d0, "probe --root (umoci)", os.path.join(out_umoci, "exports", NAME))
    diff = L.snapshot_diff(snap, L.snapshot(env["HOME"], env["TMPDIR"], cwd))
    check(not diff, "nothing written outside the cache and -o's folder", "\n".join(diff[:10]))
    bad = L.unverified_blobs(env["WHEELCHECK_CACHE_DIR"])
    check(not bad, "every blob in the cache hashes to its name", bad)

    # The same image as docker-archive and oci-archive.
    r1 = L.wheelcheck(a.wheelcheck, ["probe", ref, "--name", NAME, "--json", "-q"], env, cwd=cwd)
    if not check(r1.rc == 0, f"probe {ref} --json exits 0", r1.show()):
        return
    d = r1.json()
    sk = L.Skopeo(work)
    for kind, dest in (("docker-archive", f"docker-archive:{work}/layered.docker.tar:deb12/layered:1"),
                       ("oci-archive", f"oci-archive:{work}/layered.oci.tar:layered")):
        sk.copy(ref, dest)
        r2 = L.wheelcheck(a.wheelcheck, ["probe", dest, "--name", NAME, "--json", "-q"],
                          dict(env, WHEELCHECK_CACHE_DIR=os.path.join(work, f"cache-{kind}")), cwd=cwd)
        if check(r2.rc == 0, f"probe {kind} of the layered image exits 0", r2.show()):
            diff = L.json_diff(L.without_from(r2.json()), L.without_from(d))
            check(not diff, f"{kind}: the same description as the OCI layout's", "\n".join(diff))


if __name__ == "__main__":
    sys.exit(main())

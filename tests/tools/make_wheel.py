#!/usr/bin/env python3
"""Packs files into a wheel for wheelcheck's tests and samples (the tests' own tool; never a download).

  make_wheel.py OUT.whl [options] ARCNAME=SOURCE ...

Writes ARCNAME entries from SOURCE files, then NAME-VERSION.dist-info/{METADATA,WHEEL,RECORD}, with NAME,
VERSION and the tag taken from OUT's file name. Options bend the result for tests:
  --requires-dist SPEC      add a Requires-Dist line (repeatable)
  --requires-python SPEC    add Requires-Python
  --no-record               omit RECORD
  --tamper ARCNAME          write ARCNAME's real bytes but record the hash of other bytes
  --wrong-size ARCNAME      record a wrong size for ARCNAME
  --unlisted ARCNAME        leave ARCNAME out of RECORD
  --phantom ARCNAME         list ARCNAME in RECORD though the archive lacks it
  --stored                  store instead of deflate
"""
import argparse, base64, hashlib, os, sys, zipfile

def write_wheel(out, files, requires_dist=(), requires_python=None, no_record=False, tamper=(), wrong_size=(),
                unlisted=(), phantom=(), stored=False, variant_json=None):
    """Writes the wheel OUT (named like a wheel) from files, a list of (archive name, source path). A variant's
    file name (PEP 825 draft: a label after the platform tag) is read as one; variant_json (text) becomes
    NAME-VERSION.dist-info/variant.json."""
    base = os.path.basename(out)[:-4]
    parts = base.split("-")
    if len(parts) == 7 or (len(parts) == 6 and not parts[2][:1].isdigit()):
        parts = parts[:-1]  # the variant label
    name, version, tag = parts[0], parts[1], "-".join(parts[-3:])
    info = f"{name}-{version}.dist-info"
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    records = []
    def digest(data):
        return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    tmp = out + ".part"
    with zipfile.ZipFile(tmp, "w", method) as z:
        def add(arc, data):
            zi = zipfile.ZipInfo(arc, (2024, 1, 1, 0, 0, 0))
            zi.external_attr = 0o755 << 16
            z.writestr(zi, data, method)
            if arc in unlisted:
                return
            h = digest(data + b"tampered" if arc in tamper else data)
            size = len(data) + 1 if arc in wrong_size else len(data)
            records.append(f"{arc},{h},{size}")
        for arc, src in files:
            with open(src, "rb") as f:
                add(arc, f.read())
        meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        for r in requires_dist:
            meta += f"Requires-Dist: {r}\n"
        if requires_python:
            meta += f"Requires-Python: {requires_python}\n"
        add(f"{info}/METADATA", meta.encode())
        if variant_json is not None:
            add(f"{info}/variant.json", variant_json.encode())
        purelib = "true" if tag.endswith("-any") else "false"
        add(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: wheelcheck-tests\nRoot-Is-Purelib: {purelib}\nTag: {tag}\n".encode())
        for p in phantom:
            records.append(f"{p},sha256=AAAA,4")
        if not no_record:
            records.append(f"{info}/RECORD,,")
            z.writestr(zipfile.ZipInfo(f"{info}/RECORD", (2024, 1, 1, 0, 0, 0)), "\n".join(records) + "\n", method)
    os.replace(tmp, out)
    return out

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--requires-dist", action="append", default=[])
    ap.add_argument("--requires-python")
    ap.add_argument("--no-record", action="store_true")
    ap.add_argument("--tamper", action="append", default=[])
    ap.add_argument("--wrong-size", action="append", default=[])
    ap.add_argument("--unlisted", action="append", default=[])
    ap.add_argument("--phantom", action="append", default=[])
    ap.add_argument("--stored", action="store_true")
    a = ap.parse_intermixed_args()
    write_wheel(a.out, [tuple(pair.split("=", 1)) for pair in a.files], a.requires_dist, a.requires_python,
                a.no_record, a.tamper, a.wrong_size, a.unlisted, a.phantom, a.stored)

if __name__ == "__main__":
    sys.exit(main())

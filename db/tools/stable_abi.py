#!/usr/bin/env python3
"""Derives the export table of CPython's stable ABI at a given Py_LIMITED_API level, from Debian's headers.

  stable_abi.py --headers /usr/include/python3.11 --limited 0x030A0000 --table PYTHON.exports.gz --out OUT

The limited API is what Python.h declares when Py_LIMITED_API is defined; the headers guard each later
addition with `Py_LIMITED_API+0 >= 0x030b0000`, so preprocessing at level 3.10 yields the functions and
data of the stable ABI that exist since 3.10 or earlier. PEP 652 keeps every stable ABI symbol exported
by every later CPython, so an image's Python >= that level surely exports them, even when its own
export table is unknown. Every declaration marked PyAPI_FUNC / PyAPI_DATA (visibility "default" after
preprocessing) is taken, and kept only where the real interpreter's table (--table, Debian's
python3.11) exports it: the result is a subset of a real table, in the same format (docs/exports.md),
written deterministically (gzip with no name and no time stamp).
"""
import argparse, gzip, io, re, subprocess, sys


def limited_api_names(headers, level):
    src = "#include <Python.h>\n"
    multiarch = headers.replace("/usr/include/", "/usr/include/x86_64-linux-gnu/")
    cmd = ["gcc", "-E", "-P", f"-DPy_LIMITED_API={level}", "-I", headers, "-I", multiarch, "-x", "c", "-"]
    text = subprocess.run(cmd, input=src, capture_output=True, text=True, check=True).stdout
    names = set()
    for stmt in text.replace("\n", " ").split(";"):
        if 'visibility ("default")' not in stmt and "visibility(\"default\")" not in stmt:
            continue
        stmt = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", " ", stmt)
        # A function: the identifier before the first parameter list; data: the last identifier.
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", stmt)
        if m and not re.search(r"\(\s*\*", stmt[: m.end() + 2]):
            names.add(m.group(1))
            continue
        m = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?\s*$", stmt.strip())
        if m:
            names.add(m[-1])
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--headers", required=True)
    ap.add_argument("--limited", required=True, help="Py_LIMITED_API value, e.g. 0x030A0000")
    ap.add_argument("--table", required=True, help="the export table of a real interpreter of that series")
    ap.add_argument("--out", required=True)
    ap.add_argument("--name", required=True, help="the #library name written in the table")
    a = ap.parse_args()
    wanted = limited_api_names(a.headers, a.limited)
    lines = gzip.decompress(open(a.table, "rb").read()).decode().splitlines()
    count_at = next(i for i, l in enumerate(lines) if l.startswith("#count "))
    header, symbols = lines[:count_at], lines[count_at + 1:]
    kept = [l for l in symbols if l.split("\t")[0] in wanted]
    if len(kept) < 500:
        sys.exit(f"stable_abi.py: only {len(kept)} of {len(wanted)} limited API names are exported; headers wrong?")
    out_header = []
    for l in header:
        if l.startswith("#library "):
            l = "#library " + a.name
        elif l.startswith("#source "):
            l = f"#source {l[8:]} limited to the stable ABI at Py_LIMITED_API={a.limited} ({a.headers})"
        out_header.append(l)
    text = "\n".join(out_header + [f"#count {len(kept)}"] + kept) + "\n"
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as z:
        z.write(text.encode())
    with open(a.out, "wb") as f:
        f.write(buf.getvalue())
    print(f"stable_abi.py: {a.out}: {len(kept)} symbols ({len(wanted)} limited API names declared)")


if __name__ == "__main__":
    main()

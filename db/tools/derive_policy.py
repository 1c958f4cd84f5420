#!/usr/bin/env python3
"""Derives db/images/<target>.json for the packaging targets from auditwheel's policy data.

    python3 db/tools/derive_policy.py --shared ../shared --out db/images

A manylinux/musllinux policy names the libraries a wheel may expect from the system and the symbol
versions it may use from each family (GLIBC_, GLIBCXX_, CXXABI_, GCC_, ...). It lists no symbols, so
each library is described by its allowed version nodes and its export table is unknown. Run through
scripts/gen-db.sh targets; the output is deterministic (sorted, fixed formatting).
"""
import argparse
import json
import os
import re

TARGETS = [
    # (db name, policy file, policy name, summary)
    ("manylinux2014", "manylinux-policy.json", "manylinux_2_17",
     "manylinux2014 (manylinux_2_17, CentOS 7 base): glibc 2.17 and the libraries the policy allows"),
    ("manylinux_2_28", "manylinux-policy.json", "manylinux_2_28",
     "manylinux_2_28 (AlmaLinux 8 base): glibc 2.28 and the libraries the policy allows"),
    ("manylinux_2_34", "manylinux-policy.json", "manylinux_2_34",
     "manylinux_2_34 (AlmaLinux 9 base): glibc 2.34 and the libraries the policy allows"),
    ("manylinux_2_39", "manylinux-policy.json", "manylinux_2_39",
     "manylinux_2_39: glibc 2.39 and the libraries the policy allows"),
    ("musllinux_1_2", "musllinux-policy.json", "musllinux_1_2",
     "musllinux_1_2 (Alpine base): musl 1.2 and the libraries the policy allows"),
]
ARCH = "x86_64"
GLIBC_LIBS = {"libc.so.6", "libm.so.6", "libmvec.so.1", "libanl.so.1", "libdl.so.2", "librt.so.1", "libnsl.so.1",
              "libutil.so.1", "libpthread.so.0", "libresolv.so.2", "libcrypt.so.1", "ld-linux-x86-64.so.2"}
FAMILIES = {  # version-node prefix -> the library that defines it
    "GLIBCXX": "libstdc++.so.6", "CXXABI": "libstdc++.so.6", "GCC": "libgcc_s.so.1",
    "LIBATOMIC": "libatomic.so.1", "ZLIB": "libz.so.1", "GOMP": "libgomp.so.1", "OMP": "libgomp.so.1",
}


def vkey(v):
    return [int(x) if x.isdigit() else -1 for x in re.split(r"[.]", v)]


def numeric(v):
    return re.fullmatch(r"[0-9]+(\.[0-9]+)*", v) is not None


def derive(shared, name, policy_file, policy_name, summary):
    policies = json.load(open(os.path.join(shared, "reference", policy_file)))
    policy = next(p for p in policies if p["name"] == policy_name)
    versions = policy["symbol_versions"][ARCH]
    musl = policy_name.startswith("musllinux")
    libdir = "/lib" if musl else "/usr/lib64"
    libraries = []
    for soname in sorted(policy["lib_whitelist"]):
        nodes = []
        if soname in GLIBC_LIBS:
            nodes = ["GLIBC_" + v for v in versions.get("GLIBC", [])]
        for family, lib in FAMILIES.items():
            if lib == soname:
                nodes += [family + "_" + v for v in versions.get(family, [])]
        lib = {"path": f"{libdir}/{soname}", "soname": soname, "machine": ARCH, "class": 64}
        if nodes:
            lib["versions"] = nodes
        lib["exports_unknown"] = "the policy allows version nodes, it lists no symbols"
        libraries.append(lib)
    doc = {
        "schema": "wheelcheck-image/1",
        "name": name,
        "summary": summary,
        "kind": "image",
        "group": "target",
        "origin": "derived",
        "generated_by": "scripts/gen-db.sh targets",
        "sources": [f"../shared/reference/{policy_file} (auditwheel's policy data, MIT): policy {policy_name}"],
        "arch": ARCH,
    }
    if musl:
        major_minor = policy_name[len("musllinux_"):].replace("_", ".")
        doc["libc"] = {"kind": "musl", "version": major_minor}
        doc["loader"] = {"default_dirs": ["/lib", "/usr/local/lib", "/usr/lib"],
                         "default_dirs_note": {"value": "musl", "note": "musl's built-in library path"}}
    else:
        glibc = max((v for v in versions.get("GLIBC", []) if numeric(v)), key=vkey)
        doc["libc"] = {"kind": "glibc", "version": {"value": glibc, "note": "newest GLIBC_ version the policy allows"}}
        cxx = {}
        glibcxx = [v for v in versions.get("GLIBCXX", []) if numeric(v)]
        cxxabi = [v for v in versions.get("CXXABI", []) if numeric(v)]
        if glibcxx:
            cxx["glibcxx"] = {"value": max(glibcxx, key=vkey), "note": "newest GLIBCXX_ version the policy allows"}
        if cxxabi:
            cxx["cxxabi"] = {"value": max(cxxabi, key=vkey), "note": "newest CXXABI_ version the policy allows"}
        if cxx:
            doc["libstdcxx"] = cxx
        doc["loader"] = {"default_dirs": ["/lib64", "/usr/lib64"],
                         "default_dirs_note": {"value": "lib64", "note": "manylinux images are Red Hat family"}}
    doc["libraries"] = libraries
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, policy_file, policy_name, summary in TARGETS:
        doc = derive(args.shared, name, policy_file, policy_name, summary)
        path = os.path.join(args.out, name + ".json")
        with open(path, "w") as f:
            f.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        print(f"gen-db: images/{name}.json")


if __name__ == "__main__":
    main()

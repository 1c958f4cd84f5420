#!/usr/bin/env python3
"""Generates the FlagOS image descriptions of db/ from a pinned copy of FlagOS's release facts.

FlagOS publishes a base and a runtime image for each of its 20 backends: 40 images. Their facts are
collected in ../shared/reference/flagos-release.md (relative to the repository root; $WHEELCHECK_SHARED
replaces ../shared). This script turns them into wheelcheck image descriptions (docs/images.md, schema
wheelcheck-image/1) in two steps, so that no fact is copied by hand and every reading of a table cell is
code, visible in review:

  scripts/gen-flagos.py extract [--source PATH]
      Reads the Markdown: the tables of §2a (platform), §2b (runtime stack) and §3 (wheel catalog), §2c's
      vendor libraries (a paragraph, split per vendor), the "Facts common to all runtime images" bullets,
      the image names and the dates §1 states. Writes db/flagos/release-facts.json: every cell verbatim
      (backticks kept), with the Markdown's sha256.

  scripts/gen-flagos.py images [--release 2.2.0|2.1.2]
      Reads db/flagos/release-facts.json only (never the Markdown) and writes, for the release (default
      2.2.0, the image tag):
        db/images/flagos-base-{backend}.json     the 20 base images, on the layer ubuntu22.04,
                                                 ubuntu24.04 or ubuntu24.04-aarch64 (declared by hand
                                                 in db/layers, like every OS layer)
        db/images/flagos-runtime-{backend}.json  the 20 runtime images: layers the base and the venv
        db/layers/flagos-venv-python3.X.json     the /flagos venv of each Python the runtimes use
      A cell "a → b" reads 2.1.2 → 2.2.0: the side of the chosen release is taken; "2.2.0 adds X" holds
      from 2.2.0 on. Generated files the facts no longer produce are removed.

  scripts/gen-flagos.py --check [--release R]
      Runs both steps into a scratch folder and compares with db/: exit 1 with a unified diff when
      anything differs, 0 when nothing does, 77 when the Markdown is absent. The release defaults to
      the one the committed images were made for.

  --db DIR  (any command) writes, or compares, DIR instead of the repository's db/.

A new FlagOS release: update ../shared/reference/flagos-release.md, run `scripts/gen-flagos.py extract
&& scripts/gen-flagos.py images --release NEW` (add NEW to RELEASES when the cells gain a side), review
`git diff db/` and commit it (release-facts.json records the Markdown's sha256); `--check` then passes. Facts the Markdown
marks UNCONFIRMED stay unknown with its words; facts it calls inferred, and the few this script infers
(each commented below), say "inferred" in their note. Exit 2 when the Markdown does not read as
expected: the message names the cell, and the reading to extend is here.
"""
import argparse
import difflib
import glob
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("WHEELCHECK_SHARED") or os.path.join(REPO, "..", "shared")
SOURCE = os.path.join(SHARED, "reference", "flagos-release.md")
SOURCE_NAME = "../shared/reference/flagos-release.md"   # how db/ files cite it
FACTS = os.path.join("flagos", "release-facts.json")     # under db/
RELEASES = ("2.1.2", "2.2.0")                             # the sides of a cell "a → b", in order
MD = "flagos-release.md"


class FactsError(Exception):
    pass


def dump(obj):
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def vtuple(v):
    return tuple(int(x) for x in v.split("."))


def ticks(text):
    """The `backticked` strings of a text, in order."""
    return re.findall(r"`([^`]*)`", text)


# ---------------------------------------------------------------------------------------------------
# extract: Markdown -> release-facts.json, cells verbatim

def sections(md):
    """{heading text: [lines]} for every '## ' and '### ' heading."""
    out, cur = {}, None
    for line in md.splitlines():
        m = re.match(r"^#{2,3} (.*)$", line)
        if m:
            cur = m.group(1).strip()
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return out


def section(secs, prefix):
    hits = [h for h in secs if h.startswith(prefix)]
    if len(hits) != 1:
        raise FactsError(f"expected one heading starting {prefix!r}, found {hits}")
    return hits[0], secs[hits[0]]


def table(lines, where):
    """The first Markdown table of `lines`: [{header: cell}], cells stripped, otherwise verbatim."""
    rows = [l.strip() for l in lines if l.strip().startswith("|")]
    if len(rows) < 3:
        raise FactsError(f"{where}: no table")
    cells = [[c.strip() for c in r[1:-1].split("|")] for r in rows]
    head = cells[0]
    out = []
    for r in cells[2:]:
        if len(r) != len(head):
            raise FactsError(f"{where}: row {r[0]!r} has {len(r)} cells, the header {len(head)}")
        out.append(dict(zip(head, r)))
    return out


def bullets(lines):
    """'- ' items, their continuation lines joined with a space."""
    out = []
    for l in lines:
        if l.startswith("- "):
            out.append(l[2:].strip())
        elif out and l.startswith("  ") and l.strip():
            out[-1] += " " + l.strip()
        elif not l.strip() and out and out[-1] is not None:
            out.append(None)  # a blank line ends an item
    return [b for b in out if b]


def paragraphs(lines):
    text = "\n".join(l for l in lines if not l.strip().startswith("|"))
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


# The dates §1 states, each read by a pattern of its own; a date no pattern reads stops the extraction.
DATE_PATTERNS = [
    (r"build-infra mirror HEAD `(\w+)` \((\d{4}-\d{2}-\d{2})\)", "flagos-ai/build-infra mirror HEAD {0}"),
    (r"the index holds only `(\w+)` of (\d{4}-\d{2}-\d{2})", "flagos-ai/build-infra configs.yaml {0} (the newest in the index)"),
    (r"`(base/[^`]+)` `(\w+)` \((\d{4}-\d{2}-\d{2})\)", "flagos-ai/build-infra {0} {1}"),
    (r"`(release/[^`]+)` \(snapshot (\d{4}-\d{2}-\d{2})\)", "community {0} snapshot"),
]
UNDATED = (r"These are undated\s*\(([^)]*)\)", "flagos-ai/build-infra index files (runtime/*.md for 2.2.0, "
           "packaging/*), undated")


def source_dates(text):
    out, seen = [], set()
    for pat, what in DATE_PATTERNS:
        for m in re.finditer(pat, text):
            *parts, date = m.groups()
            out.append({"what": what.format(*parts), "date": date})
            seen.add(m.start(len(m.groups())))
    for m in re.finditer(r"\d{4}-\d{2}-\d{2}", text):
        if m.start() not in seen:
            raise FactsError(f"§1 states a date no pattern reads: ...{text[max(0, m.start() - 60):m.end()]}")
    m = re.search(UNDATED[0], text)
    if m:
        out.append({"what": UNDATED[1], "date": m.group(1)})
    return out


def extract(md_bytes, source_name):
    md = md_bytes.decode("utf-8")
    secs = sections(md)
    _, s1 = section(secs, "1.")
    s1_text = " ".join(" ".join(s1).split())
    names = [b for b in bullets(s1) if b.startswith("Images:")]
    if len(names) != 1:
        raise FactsError("§1: no 'Images:' bullet")
    _, s2 = section(secs, "2.")
    start = next((i for i, l in enumerate(s2) if l.startswith("Facts common to all runtime images")), None)
    if start is None:
        raise FactsError("§2: no 'Facts common to all runtime images' list")
    t2a, s2a = section(secs, "2a.")
    t2b, s2b = section(secs, "2b.")
    t2c, s2c = section(secs, "2c.")
    t3, s3 = section(secs, "3.")
    platform = table(s2a, "§2a")
    vendor_names = sorted({r["backend"].split("-")[0] for r in platform}, key=len, reverse=True)
    text2c = " ".join(paragraphs(s2c))
    hits = list(re.finditer(r"(?:^|(?<=\. ))(" + "|".join(vendor_names) + r"): ", text2c))
    if not hits:
        raise FactsError("§2c: no 'vendor: -l names' entries")
    vendors = {}
    for i, m in enumerate(hits):
        end = hits[i + 1].start() if i + 1 < len(hits) else len(text2c)
        vendors[m.group(1)] = text2c[m.end():end].strip()
    return {
        "schema": "wheelcheck-flagos-facts/1",
        "source": source_name,
        "source_sha256": hashlib.sha256(md_bytes).hexdigest(),
        "source_dates": source_dates(s1_text),
        "extracted_by": "scripts/gen-flagos.py extract",
        "image_naming": names[0],
        "images_intro": paragraphs(s2[:start])[0],
        "common": bullets(s2[start + 1:]),
        "platform_title": t2a,
        "platform": platform,
        "runtime_title": t2b,
        "runtime": table(s2b, "§2b"),
        "runtime_notes": [p for p in paragraphs(s2b) if p],
        "vendor_libs": {"title": t2c, "preamble": text2c[:hits[0].start()].strip(), "vendors": vendors},
        "catalog_title": t3,
        "catalog": table(s3, "§3"),
    }


# ---------------------------------------------------------------------------------------------------
# images: reading the cells

def side(text, release):
    """'0.6.0 → 0.7.0' at 2.2.0 -> '0.7.0'; a cell without an arrow holds for every release."""
    parts = [p.strip() for p in text.split("→")]
    if len(parts) == 1:
        return parts[0]
    if len(parts) != len(RELEASES):
        raise FactsError(f"{text!r}: {len(parts)} sides, RELEASES has {len(RELEASES)}")
    return parts[RELEASES.index(release)]


def split_top(text, sep):
    """Splits at `sep` outside parentheses and backticks."""
    out, cur, depth, tick, i = [], "", 0, False, 0
    while i < len(text):
        c = text[i]
        if not tick and depth == 0 and text.startswith(sep, i):
            out.append(cur)
            cur, i = "", i + len(sep)
            continue
        tick ^= c == "`"
        depth += (c == "(") - (c == ")") if not tick else 0
        cur += c
        i += 1
    return [s.strip() for s in out + [cur] if s.strip()]


def trailing_paren(text):
    """'2.11.0+cpu (the 2.1.2 doc says 2.7.0)' -> ('2.11.0+cpu', 'the 2.1.2 doc says 2.7.0')."""
    m = re.match(r"^(.*?)\s*\(([^()]*)\)$", text)
    return (m.group(1), m.group(2)) if m else (text, None)


def requirement(text):
    """'`flagcx==0.14.0rc2.post2+cuda13.3`' or 'cann-shmem 1.6.0' -> (name, version)."""
    text = text.strip("`")
    name, _, ver = text.partition("==") if "==" in text else text.partition(" ")
    return name, ver or None


class Row:
    """One §2b row read for one release: versions, packages, env."""

    def __init__(self, row, prev, by_label, release):
        self.label, self.release, self.prev = row["backend"], release, prev
        get = lambda col: prev.cells[col] if row[col] == "same" else row[col]
        self.cells = {k: get(k) if k != "backend" else v for k, v in row.items()}
        self.python = side(self.cells["py"], release)
        self.notes, self.undeclared = [], []
        self.read_stack(self.cells["torch and vendor plugin"])
        ft, triton = split_top(self.cells["FlagTree (default) / Triton"], " / ")
        ft = prev.ft_cell if ft.startswith("same") else ft
        self.ft_cell = ft
        ft = side(ft, release)
        self.flagtree = None if ft == "none" else ft
        self.tritons = []
        for item in split_top(side(triton, release), " + "):
            name, ver = ("triton", item) if item[0].isdigit() else requirement(item)
            self.tritons.append((name, ver))
        self.read_env(self.cells["env beyond PATH"], by_label)

    def applies(self, rel):
        return vtuple(self.release) >= vtuple(rel)

    def remark(self, text, on):
        """'2.2.0 adds X' and 'NAME VER at 2.1.2' change the packages; anything else is a note."""
        m = re.match(r"^(\d+\.\d+\.\d+) adds (.+)$", text)
        if m:
            if self.applies(m.group(1)):
                for req in split_top(m.group(2), " and "):
                    self.packages.append(requirement(req) + (f"§2b: {m.group(1)} adds it",))
            return
        m = re.match(r"^(\S+) (\S+) at (\d+\.\d+\.\d+)$", text)
        if m:
            if m.group(3) == self.release:
                self.overrides[m.group(1)] = m.group(2)
            return
        self.notes.append(f"{on}: {text}")

    def read_stack(self, cell):
        self.packages, self.overrides = [], {}
        items = [i for clause in split_top(cell, "; ") for i in split_top(clause, ", ")]
        torch, paren = trailing_paren(items[0])
        self.torch = side(torch, self.release)
        if paren:
            self.remark(paren, "torch")
        for item in items[1:]:
            body, paren = trailing_paren(item)
            if re.match(r"^\d+\.\d+\.\d+ adds ", body):
                self.remark(body, "")
            else:
                name, ver = requirement(body)
                self.packages.append((name, ver and side(ver, self.release), "§2b"))
            if paren:
                self.remark(paren, body)

    def read_env(self, cell, by_label):
        """env: NAME -> value (None: named, value not stated); docker: Docker ENV; vendor_sh; remarks."""
        self.env, self.docker, self.vendor_sh, self.env_remarks, self.env_refs = {}, {}, False, [], {}
        for clause in split_top(cell, "; "):
            m = re.match(r"^(\d+\.\d+\.\d+) adds (.+)$", clause)
            if m:
                if self.applies(m.group(1)):
                    self.env_vars(m.group(2), self.env)
                continue
            if clause.startswith("Docker ENV "):
                self.env_vars(clause[len("Docker ENV "):], self.docker)
                continue
            m = re.match(r"^as (\S+), plus (.+)$", clause)
            if m:
                base = [r for label, r in by_label.items() if label.endswith(" " + m.group(1))]
                if len(base) != 1:
                    raise FactsError(f"§2b {self.label}: 'as {m.group(1)}' names {len(base)} rows")
                self.inherit(base[0])
                clause = m.group(2)
            if "vendor.sh" in clause:
                self.vendor_sh = True
                clause = re.sub(r",?\s*(plus )?vendor\.sh( only)?", "", clause).strip()
            if clause == "same":   # 'same; 2.2.0 adds ...': the row above's, then the additions
                self.inherit(self.prev)
                continue
            if clause and "`" not in clause:
                self.env_remarks.append(clause)
            elif clause:
                self.env_vars(clause, self.env)

    def inherit(self, other):
        self.env.update(other.env)
        self.vendor_sh |= other.vendor_sh
        self.env_remarks += other.env_remarks

    def env_vars(self, text, into):
        m = re.match(r"^((?:`\w+`(?: and )?)+) = `([^`]*)`$", text)   # `A` and `B` = `value`
        if m:
            for name in ticks(m.group(1)):
                into[name] = m.group(2)
            return
        for m in re.finditer(r"`([^`]*)`(?:\s*\(([^()]*)\))?", text):   # `NAME=VALUE`, `NAME` (I12)
            name, eq, value = m.group(1).partition("=")
            into[name] = value if eq else None
            if m.group(2):
                self.env_refs[name] = m.group(2)
        rest = re.sub(r"`[^`]*`(\s*\([^()]*\))?|,|\band\b", "", text).strip()
        if rest:
            self.env_remarks.append(f"{', '.join(ticks(text))} {rest}")


def runtime_rows(facts, keys, release):
    """§2b's rows, keyed by backend: 'ascend 8.5.0 ×2' is the two backends ascend-*8.5.0*."""
    out, by_label, prev = {}, {}, None
    for raw in facts["runtime"]:
        row = Row(raw, prev, by_label, release)
        by_label[raw["backend"]] = prev = row
        label = raw["backend"]
        if label in keys:
            hits = [label]
        else:
            m = re.match(r"^([a-z]+)(?: (\S+))?(?: ×(\d+))?$", label)
            if not m:
                raise FactsError(f"§2b: backend {label!r} unread")
            vendor, ver, count = m.group(1), m.group(2), int(m.group(3) or 1)
            pat = rf"^{vendor}-[a-z]+" + (re.escape(ver) if ver else r"[0-9.]+") + r"(-[a-z0-9]+)?$"
            hits = [k for k in keys if re.match(pat, k)]
            if len(hits) != count:
                raise FactsError(f"§2b: {label!r} matches {hits}")
        for k in hits:
            if k in out:
                raise FactsError(f"§2b: {k} has two rows")
            out[k] = row
    missing = [k for k in keys if k not in out]
    if missing:
        raise FactsError(f"§2b: no row for {missing}")
    return out


# ---------------------------------------------------------------------------------------------------
# images: interpretation tables (each entry says where it comes from)

TOOLKIT_NAMES = {"cuda": "CUDA", "cann": "CANN", "neuware": "Neuware", "tops": "TOPS", "dtk": "DTK",
                 "corex": "CoreX", "xre": "XRE", "maca": "MACA", "musa": "MUSA", "tangrt": "TangRT",
                 "tsm": "TSM"}
# NVIDIA's "CUDA Toolkit and Corresponding Driver Versions", Linux x86_64 (as db/images/cuda13.3.json).
DRIVER_FLOOR = {
    "12.8": ("570.26", "CUDA 12.8 GA", "12.x", "525.60.13"),
    "13.3": ("610.43.02", "CUDA 13.3 GA", "13.x", "580"),
}
GPU_ARCHS = {"H20": ("sm_90", "NVIDIA H20 is a Hopper GPU, compute capability 9.0 (NVIDIA's CUDA GPUs table)")}
# §2c gives Ascend's folder as `…/ascend-toolkit/latest/lib64`; CANN installs under /usr/local/Ascend,
# where §2b's LD_LIBRARY_PATH also finds the driver: the prefix is inferred.
ELIDED_PREFIX = {"ascend": "/usr/local/Ascend"}
ASCEND_HOME = "/usr/local/Ascend/ascend-toolkit/latest"   # inferred: $ASCEND_HOME/lib64 is §2c's folder
# Host libraries the Markdown does not list by name: Ascend's HAL (db/images/ascend-cann9.json, from
# ../shared/reference/flagos-platforms.md) in the driver folder Ascend mounts.
HOST_EXTRA = {"ascend": [("libascend_hal.so", "/usr/local/Ascend/driver/lib64",
                          "the name from flagos-platforms.md (db/images/ascend-cann9.json); its folder "
                          "inferred: the driver mount and §2b's LD_LIBRARY_PATH")]}
TORCH_LIBS = ["libc10.so", "libtorch.so", "libtorch_cpu.so", "libtorch_python.so", "libshm.so",
              "libtorch_global_deps.so"]   # as db/layers/torch2.10.0-cpu.json
TORCH_CUDA_LIBS = ["libtorch_cuda.so", "libc10_cuda.so"]
PLUGIN_LIBS = {"torch-npu": [("torch_npu/lib/libtorch_npu.so", "libtorch_npu.so")]}  # torch_npu's wheel layout
CUDA_MULTIARCH = "/usr/lib/{arch}-linux-gnu"   # where the NVIDIA container runtime mounts driver libraries
BASH_ENV_NOTE = ("set in /etc/profile.d/runtime_env.sh (and vendor.sh, compiler.sh), loaded only through "
                 "BASH_ENV=/etc/bash_env.sh: bash processes see it, a direct python or sh does not "
                 f"({MD} §2, Facts common to all runtime images)")


class Context:
    def __init__(self, facts, release, db):
        self.facts, self.release, self.db = facts, release, db
        self.common = " ".join(facts["common"])
        self.platform = [r for r in facts["platform"] if r["arch"] in ("x86_64", "aarch64")]
        m = re.search(r"There were (\d+) backends", facts["images_intro"])
        if not m or int(m.group(1)) != len(self.platform):
            raise FactsError(f"§2a: {len(self.platform)} backends with an image, §2 says {m and m.group(1)}")
        self.keys = [r["backend"] for r in self.platform]
        self.rows = runtime_rows(facts, self.keys, release)
        self.catalog = {r["package"].split()[0]: r for r in facts["catalog"]}
        sha, dates = facts["source_sha256"][:12], "; ".join(f"{d['what']}: {d['date']}" for d in facts["source_dates"])
        self.cite = lambda secs, files: f"{facts['source']} {secs} ({files}; source_sha256 {sha}…; {dates})"
        self.facts_line = f"db/flagos/{os.path.basename(FACTS)}: those cells verbatim ({facts['extracted_by']})"
        title = facts["runtime_title"]
        m = re.search(r"flag_gems goes from (\S+) to (\S+) everywhere", title)
        self.flag_gems = dict(zip(RELEASES, m.groups())) if m else {}
        m = re.search(r"numpy is (\S+) everywhere in (\S+)", title)
        self.numpy = m.group(1) if m and vtuple(release) >= vtuple(m.group(2)) else None
        self.generated_by = f"scripts/gen-flagos.py images --release {release}"

    def image_ref(self, kind, key):
        pat = next(n for n in ticks(self.facts["image_naming"]) if f"/flagos-{kind}/" in n)
        if "{vendor}-{backend}" not in pat or "{version}" not in pat:
            raise FactsError(f"§1: image name {pat!r} unread")
        # The backend key already names the vendor: {vendor}-{backend} is the key.
        return pat.replace("{vendor}-{backend}", key).replace("{version}", self.release)

    def catalog_libs(self, package):
        """Native members §3 names for a package: the `dir/lib.so` paths without wildcards."""
        cell = self.catalog[package]["tags and native members"]
        return [p for p in ticks(cell) if re.match(r"^[\w/]+/[\w.]+\.so$", p)]


def backend_parts(key):
    m = re.match(r"^([a-z]+)-([a-z]+)([0-9][0-9.]*)(-[a-z0-9]+)?$", key)
    if not m:
        raise FactsError(f"§2a: backend {key!r} unread")
    return m.groups()   # vendor, toolkit kind, version, variant


def os_layer(row, ctx):
    """The first Ubuntu release the base OS cell names is the OS; later ones are additions."""
    m = re.search(r"ubuntu:?(\d\d\.\d\d)", row["base OS"], re.I)
    if not m:
        raise FactsError(f"§2a {row['backend']}: base OS {row['base OS']!r} unread")
    name = "ubuntu" + m.group(1) + ("-aarch64" if row["arch"] == "aarch64" else "")
    if not os.path.exists(os.path.join(ctx.db, "layers", name + ".json")):
        raise FactsError(f"§2a {row['backend']}: layer db/layers/{name}.json is missing")
    return name, m.group(1)


def chip_name(row, ctx):
    """'H20' after 'NVIDIA H20' in the rows above: the vendor's word is carried over."""
    vendor, cell = row["backend"].split("-")[0], row["chip"]
    first = next(r["chip"] for r in ctx.platform if r["backend"].split("-")[0] == vendor)
    brand = first.split()[0] if len(first.split()) > 1 else None
    if brand and not cell.startswith(brand):
        return f"{brand} {cell}", f"§2a states {cell!r}; {brand!r} from the row above"
    return cell, "as §2a states it"


def vendor_libraries(vendor, tk_version, ctx):
    """§2c for a vendor -> ([(-l name, soname, how known, folder, notes, absent from the image)], remarks
    about no one library). Sonames: stated ones as stated, NVIDIA's inferred ones, else lib{name}.so."""
    pre, text = ctx.facts["vendor_libs"]["preamble"], ctx.facts["vendor_libs"]["vendors"][vendor].rstrip(".")
    stated = ticks(re.search(r"stated only for ((?:`[^`]+`(?: and |, )?)+)", pre).group(1))
    inferred = []
    for t in re.search(r"((?:`[^`]+`(?:/| and |, )?)+) are inferred", pre).group(1).split(" and "):
        names = ticks(t)   # `libcudart.so.12`/`.13` -> libcudart.so.12, libcudart.so.13
        inferred += [names[0]] + [names[0].rsplit(".", 1)[0] + n for n in names[1:]]
    m = re.match(r"^([a-z0-9_]+(?:, [a-z0-9_]+)*?)(?=,? from |\s*\(|;|,? and |$)", text)
    names, rest = m.group(1).split(", "), text[m.end():].strip()
    folder, candidates = None, []
    m = re.match(r"^\(`([^`]+)`(?:\)|; (.*)\))(.*)$", rest)                    # (`folder`...)
    if m:
        folder, rest = m.group(1), " ".join(x for x in m.groups()[1:] if x).strip(" ,")
    m = re.match(r"^,? from ((?:`[^`]+`(?:, | and )?)+)(?:; (.*))?$", rest)     # from `a`, `b` and `c`
    if m:
        candidates, rest = ticks(m.group(1)), m.group(2) or ""
    rest = re.sub(r"^and ", "", rest.strip(" ;,"))
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1]
    absent = set()
    m = re.search(r"image has no ([\w ]+)", rest)
    if m:
        absent = {n for n in re.split(r" or | and |, ", m.group(1).strip()) if n in names}
    own = {}   # a folder naming a library (/usr/local/pccl/...) is that library's
    for p in ticks(rest):
        for n in names:
            if p.startswith("/") and n in p.split("/"):
                own[n] = p
    out = []
    for n in names:
        prefix = f"lib{n}.so"
        s = [x for x in stated if x.startswith(prefix + ".")]
        i = [x for x in inferred if x.startswith(prefix + ".")]
        if s:
            soname, how = s[0], f"soname stated ({MD} §2c)"
        elif i and vendor == "nvidia":   # libcudart.so.12/.13, libnccl.so.2: NVIDIA's own libraries
            major = tk_version.split(".")[0]
            pick = [x for x in i if x.endswith("." + major)] or i
            soname, how = pick[0], f"soname inferred ({MD} §2c)"
        else:
            soname, how = prefix, f"soname UNCONFIRMED: backends.yaml vendor_libs gives -l{n} ({MD} §2c)"
        where, note = own.get(n, folder), [x for x in [rest] if x and (f"lib{n}.so" in x or n in own)]
        if where and where.startswith("…"):
            where = ELIDED_PREFIX[vendor] + where[1:]
            note.append(f"folder {own.get(n, folder)} (§2c), its prefix {ELIDED_PREFIX[vendor]} inferred")
        elif where:
            note.append(f"folder {where} (§2c)")
        elif candidates:
            note.append("§2c names its folders, " + ", ".join(candidates) + ", not which holds it")
        out.append((n, soname, how, where, note, n in absent))
    general = [rest] if rest and not any(rest in o[4] for o in out) else []
    return out, general


# ---------------------------------------------------------------------------------------------------
# images: the descriptions

def toolkit(row, ctx, vendor, kind, version, libs, general):
    key, tk = row["backend"], TOOLKIT_NAMES[kind]
    note = f"§2a SDK in image: {row['SDK in image']}"
    shown = version
    if kind == "tsm":   # tsm260610: a date, YYMMDD (inferred), of the build 260610164501
        shown = f"{version[:2]}.{version[2:4]}.{version[4:]}"
        note += f"; the backend key's {version} read as YYMMDD (inferred), the full build {row['host driver']} " \
                "(§2a host driver)"
    # The SDK the image holds, where §2a's cell names it with a version ("MACA 3.7.2.0"), is the toolkit's
    # version; the backend key names the release line (metax-maca3.7.2.1 holds MACA 3.7.2.0).
    sdk = re.match(rf"{re.escape(tk)} (\d+(?:\.\d+)+)\b", row["SDK in image"])
    if sdk and sdk.group(1) != shown:
        note += f"; the backend key {key} says {version}, the SDK in the image is {tk} {sdk.group(1)}"
        shown = sdk.group(1)
    if key != f"{vendor}-{kind}{version}":
        note += f"; the variant {key.rsplit('-', 1)[1]} of {vendor}-{kind}{version}"
    if general:
        note += "; §2c: " + "; ".join(general)
    m = re.search(r"(\w+) registers nothing with ldconfig", ctx.common)
    if m and m.group(1) == tk:
        note += f"; {m.group(0)} (§2)"
    t = {"kind": kind, "version": {"value": shown, "note": note}}
    sources = []
    if kind == "cuda" and version in DRIVER_FLOOR:
        floor, ga, major, compat = DRIVER_FLOOR[version]
        t["driver_floor"] = {
            "value": floor,
            "note": f"the toolkit's published minimum driver: {ga}, Linux x86_64 (\"CUDA Toolkit and "
                    f"Corresponding Driver Versions\"); a CUDA {major} runtime alone runs on >= {compat} "
                    "through minor version compatibility, without its newer features or newer PTX"}
        sources = [f"NVIDIA \"CUDA Toolkit and Corresponding Driver Versions\" (docs.nvidia.com/cuda/"
                   f"cuda-toolkit-release-notes): {ga} >= {floor} (Linux x86_64), that table as public projects "
                   "quote it",
                   "NVIDIA CUDA Compatibility, Minor Version Compatibility (docs.nvidia.com/deploy/cuda-"
                   f"compatibility/minor-version-compatibility.html): CUDA {major} >= {compat}"]
    t["runtime_sonames"] = [l[1] for l in libs]
    return t, shown, sources


def host_mounts(vendor, ctx):
    """'Ascend mounts `X`', 'the raw Iluvatar launch mounts the host `Y` over ...' (§2 common facts)."""
    out = []
    for m in re.finditer(r"(?:(\w+) mounts|the raw (\w+) launch mounts the host) `([^`]+)`([^,.]*)", ctx.common):
        if (m.group(1) or m.group(2)).lower() == vendor:
            what = "the raw launch mounts the host's" + m.group(4) if m.group(2) else "mounted from the host"
            out.append({"path": m.group(3), "note": f"{what} at run time: what is in it is the host's "
                                                    f"({MD} §2, Facts common to all runtime images)"})
    return out


def base_libraries(row, ctx, vendor, version, libs, mounts, ubuntu):
    key, arch, tk = row["backend"], row["arch"], TOOLKIT_NAMES[backend_parts(row["backend"])[1]]
    multiarch = CUDA_MULTIARCH.format(arch=arch)
    host = []   # NVIDIA's libcuda.so.1 and libnvidia-ml.so.1 (§2 common facts)
    if vendor == "nvidia":
        host = ticks(re.search(r"NVIDIA's ((?:`[^`]+`(?: and |, )?)+) do:", ctx.common).group(1))
    compat = re.search(r"the (\d+\.\d+) image holds only `([^`]+)`, on no loader path", ctx.common)
    out = []
    for n, soname, how, where, note, absent in libs:
        if not absent and soname not in host:
            lib = {"path": where + "/" + soname} if where else {}
            out.append(dict(lib, soname=soname, exports_unknown="; ".join(
                [how] + note + [f"no {tk} binaries here to read its export table from"])))
    for soname in host:
        why = (f"mounted from the host at run time by the NVIDIA container runtime: the host driver's library "
               f"({MD} §2, Facts common to all runtime images); its folder inferred")
        if compat and compat.group(1) == version and soname.startswith("libcuda."):
            why += f"; the {compat.group(1)} image itself holds only {compat.group(2)}, on no loader path"
        out.append({"path": f"{multiarch}/{soname}", "soname": soname,
                    "exports_unknown": "the host driver's library: its version is the host's", "host": why})
    m = re.search(r"plus the (\d\d\.\d\d) (lib\w+?)(\d+)\b", row["base OS"])
    if m:   # 'plus the 22.04 libfmt8': Debian's package libfmt8 ships libfmt.so.8
        soname = f"{m.group(2)}.so.{m.group(3)}"
        out.append({"path": f"{multiarch}/{soname}", "soname": soname,
                    "exports_unknown": f"Ubuntu {m.group(1)}'s {m.group(2)}{m.group(3)} package on this {ubuntu} "
                                       f"image ({MD} §2a, build-infra #184; torch_txda needs {soname}, §2c); "
                                       "soname and folder inferred from the package; no binaries here"})
    for soname, folder, why in HOST_EXTRA.get(vendor, []):
        out.append({"path": f"{folder}/{soname}", "soname": soname,
                    "exports_unknown": f"the host driver's library ({why}): no binaries here",
                    "host": f"in {mounts[0]['path']}, mounted from the host at run time ({MD} §2)"})
    return out


def base_image(row, ctx):
    key, arch = row["backend"], row["arch"]
    vendor, kind, version, _ = backend_parts(key)
    layer, ubuntu = os_layer(row, ctx)
    chip, chip_how = chip_name(row, ctx)
    libs, general = vendor_libraries(vendor, version, ctx)
    tk, shown, nvidia_sources = toolkit(row, ctx, vendor, kind, version, libs, general)
    mounts = host_mounts(vendor, ctx)
    d = {"schema": "wheelcheck-image/1", "name": f"flagos-base-{key}",
         "summary": f"FlagOS {ctx.release} base image {key}: {TOOLKIT_NAMES[kind]} {shown} on Ubuntu {ubuntu} "
                    f"({arch}), for {chip}",
         "kind": "image", "group": "flagos-release", "release": ctx.release,
         "image_ref": ctx.image_ref("base", key), "origin": "declared", "generated_by": ctx.generated_by,
         "sources": [ctx.cite("§2a, §2c and §2 Facts common to all runtime images",
                              f"flagos-ai/build-infra base/{key}.md and its Containerfile, "
                              "packaging/flagcx/backends.yaml vendor_libs"), ctx.facts_line] + nvidia_sources,
         "layers": [layer], "arch": arch}
    m = re.search(r"\+ python(\d+\.\d+)", row["base OS"])
    if m:
        d["python"] = {"value": m.group(1), "note": f"§2a base OS: {row['base OS']} (how it is installed is not stated)"}
    d["toolkit"] = tk
    d["libraries"] = base_libraries(row, ctx, vendor, version, libs, mounts, ubuntu)
    gone = [l[1] for l in libs if l[5]]
    if gone:   # 'the image has no xccl or bkcl': stated absent, so a need for it is an error, not a question
        d["inventory"] = {"absent": gone, "note": f"{MD} §2c: the image has no {', '.join(gone)}"}
    if mounts:
        d["host_mounts"] = mounts
    note = f"the host's driver, as FlagOS states it: {MD} §2a (build-infra base/{key}.md)"
    if "driver" in row["SDK in image"]:
        note += f"; in the image: {row['SDK in image']}"
    d["driver"] = {"value": row["host driver"], "note": note}
    if vendor == "nvidia" and chip.split()[-1] in GPU_ARCHS:
        value, why = GPU_ARCHS[chip.split()[-1]]
        d["gpu_archs"] = {"value": value, "note": why}
    d["chips"] = {"value": chip, "note": f"the accelerator, {chip_how} ({MD} §2a)", "origin": "declared"}
    return d


def distribution(name, version, location="{site-packages}", why="", libs=(), note=None, **extra):
    d = {"name": name, "version": version, "location": location,
         "exports_unknown": f"declared from {MD} §2b, no binaries of this build here" + (f"; {why}" if why else ""),
         "libraries": [{"path": p, "soname": s} for p, s in libs]}
    d.update(extra)
    if note:
        d["note"] = note
    return d


def elided(name, version, row):
    """'3.2.0+corex…': the public version, the label elided by the Markdown; '…torch…' or none: not declarable."""
    if version is None:
        row.undeclared.append(f"{name} (no version in §2b)")
        return None, None
    if "…" not in version:
        return version, None
    m = re.match(r"^(\d[\w.]*)\+", version)
    if not m:
        row.undeclared.append(f"{name} (version elided in §2b: {version})")
        return None, None
    return m.group(1), f"§2b gives {version}: its local label is elided, the public version is declared"


COMPILER_SH = "/etc/profile.d/compiler.sh (later zz-compiler.sh; bash only)"


def runtime_distributions(r, ctx):
    """torch, the vendor plugins, FlagTree, the vendor Triton, flag_gems and numpy of a §2b row."""
    label = r.torch.partition("+")[2]
    own = re.fullmatch(r"cpu|cu\d+", label)   # PyTorch's own builds, published on its index
    libs = TORCH_LIBS + (TORCH_CUDA_LIBS if label.startswith("cu") else [])
    notes = [n.split(": ", 1)[1] for n in r.notes if n.startswith("torch:")]
    torch = distribution(
        "torch", r.torch, libs=[("torch/lib/" + l, l) for l in libs], cxx11_abi=True,
        why=("PyTorch's own build: a check that needs its tables reads them from the published wheel (network), "
             "`wheelcheck image fill` writes them into a db" if own else
             "a vendor build, not on PyTorch's index: its tables are unknown until the image is probed "
             "(`wheelcheck probe --root /` inside it); PyTorch's common libraries are listed, the build's "
             "backend libraries are not stated"),
        note=f"{MD} §2b, the torch column" + (f": {'; '.join(notes)}" if notes else ""))
    if own:
        torch["published"] = {"index": f"https://download.pytorch.org/whl/{label}", "requirement": f"torch=={r.torch}"}
    out, plugins = [torch], []
    for name, ver, how in r.packages:
        ver, enote = elided(name, ver, r)
        if ver is None:
            continue
        plugins.append(f"{name} {ver}")
        libs, why = PLUGIN_LIBS.get(name, []), ""
        if libs:
            why = "the library path is torch_npu's published wheel layout, not in the Markdown"
        if name in ctx.catalog:
            libs = [(p, os.path.basename(p)) for p in ctx.catalog_libs(name)]
            why = "libraries from §3's catalog; soname taken from the file name (not stated)" if libs else ""
        notes = [enote, how if how != "§2b" else None] + [x.split(": ", 1)[1] for x in r.notes
                                                         if x.startswith(name + " ")]
        out.append(distribution(name, ver, libs=libs, why=why, note="; ".join(n for n in notes if n) or None))
    if r.flagtree:
        out.append(distribution(
            "flagtree", r.flagtree, "/opt/flagtree", why="its library from §3's catalog",
            libs=[(p, os.path.basename(p)) for p in ctx.catalog_libs("flagtree")],
            note=f"FlagTree: /opt/flagtree, put on PYTHONPATH by {COMPILER_SH}; `compiler triton` switches to /opt/triton"))
    reach = ("on PYTHONPATH only after `compiler triton`" if r.flagtree else
             "put on PYTHONPATH by compiler.sh: no FlagTree here (inferred: it puts the one there is)")
    tritons = []
    for name, ver in r.tritons:
        ver, enote = elided(name, ver, r)
        if ver is None:
            continue
        tritons.append(ver if name == "triton" else f"{name} {ver}")
        out.append(distribution(name, ver, "/opt/triton", note="; ".join(
            x for x in [f"the vendor Triton: /opt/triton (pip --target), {reach}, {COMPILER_SH}", enote] if x)))
    gems = r.overrides.get("flag_gems") or ctx.flag_gems.get(ctx.release)
    if gems:
        src = (f"§2b: this row's own flag_gems {gems} at {ctx.release}" if "flag_gems" in r.overrides else
               f"§2b: flag_gems {' → '.join(ctx.flag_gems[x] for x in RELEASES)} everywhere, {gems} at {ctx.release}")
        out.append(distribution("flag_gems", gems, why=f"pure Python (py3-none-any, {MD} §3), no native libraries",
                                note=src))
    if ctx.numpy:
        out.append(distribution("numpy", ctx.numpy, why="its extension modules are not listed",
                                note=f"§2b: numpy {ctx.numpy} everywhere from 2.2.0"))
    summary = (f"torch {r.torch}" + "".join(", " + p for p in plugins)
               + (f", FlagTree {r.flagtree} (default)" if r.flagtree else ", no FlagTree")
               + ", vendor Triton " + " + ".join(tritons) + (f", flag_gems {gems}" if gems else ""))
    return out, summary


def bash_env(r, ctx):
    """§2b's env (and compiler.sh's PYTHONPATH) as bash processes see it: $LD_LIBRARY_PATH dropped,
    $ASCEND_HOME expanded."""
    pypath = "/opt/flagtree" if r.flagtree else "/opt/triton"
    env, notes = {}, []
    for name, value in r.env.items():
        if value is None and name == "FLAGCX_BITCODE_PATH":
            # I12: set to FlagTree's own .bc; §3: flagtree holds triton/backends/nvidia/lib/libflagcx_device.bc
            bc = [p for p in ticks(ctx.catalog["flagtree"]["tags and native members"]) if p.endswith(".bc")]
            env[name] = "/opt/flagtree/" + bc[0]
            notes.append(f"{name}: §2b names it ({r.env_refs.get(name)}: set to FlagTree's own .bc), its value "
                         "inferred from §3's flagtree members")
        elif value is None:
            notes.append(f"{name} is set, its value not stated (§2b)")
        else:
            v = re.sub(r":?\$LD_LIBRARY_PATH:?", "", value) if name == "LD_LIBRARY_PATH" else value
            if "$ASCEND_HOME" in v:
                v = v.replace("$ASCEND_HOME", ASCEND_HOME)
                notes.append(f"$ASCEND_HOME is {ASCEND_HOME} (inferred: §2c's …/ascend-toolkit/latest/lib64)")
            env[name] = v
    env["PYTHONPATH"] = pypath
    notes.append(f"PYTHONPATH: {COMPILER_SH} puts {pypath} there" + ("" if r.flagtree else " (no FlagTree: inferred)"))
    if r.vendor_sh:
        notes.append("vendor.sh holds the vendor's set_env output (not stated)")
    notes += [f"§2b: {x}" for x in r.env_remarks]
    if r.docker.get("PYTHONPATH"):
        notes.append("whether compiler.sh keeps the Docker ENV PYTHONPATH is not stated")
    return {"note": BASH_ENV_NOTE + ". " + "; ".join(notes), "vars": env}


def runtime_image(row, ctx):
    key, r = row["backend"], ctx.rows[row["backend"]]
    dists, stack = runtime_distributions(r, ctx)
    d = {"schema": "wheelcheck-image/1", "name": f"flagos-runtime-{key}",
         "summary": f"FlagOS {ctx.release} runtime image {key}: Python {r.python} (/flagos venv), {stack}"
                    + (f"; not declared: {'; '.join(r.undeclared)}" if r.undeclared else ""),
         "kind": "image", "group": "flagos-release", "release": ctx.release,
         "image_ref": ctx.image_ref("runtime", key), "origin": "declared", "generated_by": ctx.generated_by,
         "sources": [ctx.cite("§2b, §3 and §2 Facts common to all runtime images",
                              "flagos-ai/build-infra configs.yaml, runtime/*.md, runtime/Containerfile and "
                              "compiler.sh; packaging/wheel-info.yaml; community release-2.2.yaml"), ctx.facts_line],
         "layers": [f"flagos-base-{key}", f"flagos-venv-python{r.python}"], "distributions": dists}
    if r.docker:
        d["env"] = r.docker
    d["bash_env"] = bash_env(r, ctx)
    return d, r.python


def venv_layer(python, ctx):
    tag = "cp" + python.replace(".", "")
    return {"schema": "wheelcheck-image/1", "name": f"flagos-venv-python{python}",
            "summary": f"FlagOS runtime venv /flagos: uv-managed CPython {python}, not the distro python "
                       "(the micro version is UNCONFIRMED)",
            "kind": "layer", "origin": "declared", "generated_by": ctx.generated_by,
            "sources": [ctx.cite("§2 Facts common to all runtime images and §2b",
                                 "flagos-ai/build-infra runtime/Containerfile"), ctx.facts_line],
            "exports_dir": "../exports",
            "pythons": [{"version": python, "abi_tags": [tag, "abi3"], "executable": "/flagos/bin/python3",
                         "site_packages": [f"/flagos/lib/python{python}/site-packages"],
                         "stable_abi": "python/stable-abi-3.10.exports.gz"}]}


def generate(facts, release, db):
    """{path under db: content} for every generated description."""
    ctx = Context(facts, release, db)
    out, pythons = {}, set()
    for row in ctx.platform:
        out[f"images/flagos-base-{row['backend']}.json"] = dump(base_image(row, ctx))
        d, py = runtime_image(row, ctx)
        out[f"images/flagos-runtime-{row['backend']}.json"] = dump(d)
        pythons.add(py)
    for py in sorted(pythons, key=vtuple):
        out[f"layers/flagos-venv-python{py}.json"] = dump(venv_layer(py, ctx))
    return out


GENERATED = ["images/flagos-base-*.json", "images/flagos-runtime-*.json", "layers/flagos-venv-python*.json"]


def generated_files(db):
    return {os.path.relpath(p, db) for g in GENERATED for p in glob.glob(os.path.join(db, g))}


def write(db, files, prune=False):
    """Writes {path under db: text}; with prune, removes the generated files that are not among them."""
    for rel, text in files.items():
        path = os.path.join(db, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    for rel in sorted(generated_files(db) - set(files)) if prune else []:
        os.unlink(os.path.join(db, rel))
        print(f"gen-flagos.py: removed db/{rel} (no longer in the facts)")


# ---------------------------------------------------------------------------------------------------
# commands

def cmd_extract(source, db):
    with open(source, "rb") as f:
        facts = extract(f.read(), SOURCE_NAME if os.path.abspath(source) == os.path.abspath(SOURCE)
                        else os.path.relpath(source, REPO))
    write(db, {FACTS: dump(facts)})
    return facts


def cmd_images(release, db):
    with open(os.path.join(db, FACTS), encoding="utf-8") as f:
        facts = json.load(f)
    if facts.get("schema") != "wheelcheck-flagos-facts/1":
        raise FactsError(f"db/{FACTS}: not wheelcheck-flagos-facts/1")
    files = generate(facts, release, db)
    write(db, files, prune=True)
    return files


def committed_release(db):
    for p in sorted(glob.glob(os.path.join(db, "images", "flagos-base-*.json"))):
        with open(p, encoding="utf-8") as f:
            return json.load(f).get("release", RELEASES[-1])
    return RELEASES[-1]


def cmd_check(source, release, db):
    if not os.path.exists(source):
        print(f"gen-flagos.py --check: SKIP: {source} is absent (the FlagOS facts live in ../shared; "
              "set WHEELCHECK_SHARED)", file=sys.stderr)
        return 77
    release = release or committed_release(db)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, "db")
        shutil.copytree(os.path.join(db, "layers"), os.path.join(scratch, "layers"))  # the OS layers
        for rel in generated_files(scratch):
            os.unlink(os.path.join(scratch, rel))
        cmd_extract(source, scratch)
        cmd_images(release, scratch)
        names = sorted({FACTS} | generated_files(db) | generated_files(scratch))
        diff = []
        for rel in names:
            a, b = os.path.join(db, rel), os.path.join(scratch, rel)
            old = open(a, encoding="utf-8").read().splitlines(True) if os.path.exists(a) else []
            new = open(b, encoding="utf-8").read().splitlines(True) if os.path.exists(b) else []
            if os.path.exists(a) != os.path.exists(b):
                diff.append(f"only in {'db/' if os.path.exists(a) else 'the regenerated db/'}: db/{rel}\n")
            diff += difflib.unified_diff(old, new, f"db/{rel}", f"db/{rel} (regenerated)")
    if diff:
        sys.stdout.writelines(diff)
        print(f"gen-flagos.py --check: db/ differs from {SOURCE_NAME} (release {release}): run "
              f"`scripts/gen-flagos.py extract && scripts/gen-flagos.py images --release {release}`", file=sys.stderr)
        return 1
    print(f"gen-flagos.py --check: db/ matches {SOURCE_NAME} (release {release})")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="gen-flagos.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="regenerate into a scratch folder and compare with db/")
    ap.add_argument("--db", default=os.path.join(REPO, "db"), help="the db folder (default: the repository's db/)")
    ap.add_argument("--source", default=SOURCE, help=f"the Markdown (default {SOURCE_NAME})")
    ap.add_argument("--release", choices=RELEASES, help=f"the release to describe (default {RELEASES[-1]})")
    ap.add_argument("command", nargs="?", choices=["extract", "images"])
    a = ap.parse_args(argv)
    try:
        if a.check:
            return cmd_check(a.source, a.release, a.db)
        if a.command == "extract":
            if not os.path.exists(a.source):
                print(f"gen-flagos.py: {a.source} is absent", file=sys.stderr)
                return 77
            facts = cmd_extract(a.source, a.db)
            print(f"gen-flagos.py: wrote db/{FACTS} ({len(facts['platform'])} platform rows, "
                  f"{len(facts['runtime'])} runtime rows, sha256 {facts['source_sha256'][:12]})")
        elif a.command == "images":
            files = cmd_images(a.release or RELEASES[-1], a.db)
            print(f"gen-flagos.py: wrote {len(files)} descriptions for release {a.release or RELEASES[-1]}")
        else:
            ap.print_help()
            return 2
    except FactsError as e:
        print(f"gen-flagos.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

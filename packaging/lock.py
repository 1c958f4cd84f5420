#!/usr/bin/env python3
"""The pinned inputs of the static wheelcheck build (packaging/sources.lock): fetch them, or re-pin them.

    lock.py fetch LOCK DOWNLOADS [--arch amd64|arm64]...   fetch what the lock lists for those
                                                          architectures (sources always), check each
                                                          sha256, keep verified files in DOWNLOADS
    lock.py relock LOCK APT_OPTIONS_FILE                  rewrite LOCK from the archive's current
                                                          indexes (an apt state made by package.sh)

A file is fetched from the mirror this machine's apt uses (pool/updates/ from the matching security
archive) and used only when its sha256 matches the lock; a mismatch or a file the archive no longer has
is an error that says what to do. Standard library only: this runs before anything is built.
"""
import hashlib
import os
import re
import shlex
import subprocess
import sys
import urllib.error
import urllib.request

# What is built from source (Debian's source package names) and what comes as Debian's own -dev
# packages (static archives and headers), per architecture.
SOURCES = ["libzip", "libisal", "curl", "nghttp2"]
DEBS = ["libssl-dev", "zlib1g-dev", "liblief-dev", "libmbedtls-dev", "libgumbo-dev", "libfmt-dev",
        "nlohmann-json3-dev", "libcli11-dev"]
ARCHES = ["amd64", "arm64"]


def die(msg, code=1):
    print(f"lock.py: {msg}", file=sys.stderr)
    sys.exit(code)


def mirrors():
    """The Debian mirror and its security archive, as this machine's apt configuration names them."""
    text = ""
    for folder, names in (("/etc/apt/sources.list.d", None), ("/etc/apt", ["sources.list"])):
        try:
            for name in sorted(names or os.listdir(folder)):
                if name.endswith((".sources", ".list")):
                    with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                        text += f.read() + "\n"
        except OSError:
            pass
    urls = re.findall(r"(?:URIs:\s*|^deb(?:-src)?\s+(?:\[[^\]]*\]\s+)?)(\S+)", text, re.M)
    main = next((u for u in urls if re.search(r"/debian/?$", u)), "http://deb.debian.org/debian")
    security = next((u for u in urls if re.search(r"/debian-security/?$", u)),
                    "http://deb.debian.org/debian-security")
    return main.rstrip("/"), security.rstrip("/")


def read_lock(path):
    entries = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 4 or fields[0] not in ("src", "deb") or not re.fullmatch(r"[0-9a-f]{64}", fields[3]):
                die(f"{path}:{n}: expected 'src|deb NAME POOL_PATH SHA256', got {line!r}", 2)
            entries.append(tuple(fields))
    return entries


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def arch_of(pool_path):
    m = re.search(r"_([a-z0-9]+)\.deb$", pool_path)
    return m.group(1) if m else None


def fetch(lock, downloads, arches):
    main, security = mirrors()
    os.makedirs(downloads, exist_ok=True)
    for kind, name, pool_path, sha in read_lock(lock):
        arch = arch_of(pool_path)
        if kind == "deb" and arch not in ("all", *arches):
            continue
        dest = os.path.join(downloads, os.path.basename(pool_path))
        if os.path.exists(dest) and sha256_of(dest) == sha:
            continue
        base = security if pool_path.startswith("pool/updates/") else main
        url = f"{base}/{pool_path}"
        tmp = dest + ".part"
        try:
            with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as out:
                while block := r.read(1 << 20):
                    out.write(block)
        except (urllib.error.URLError, OSError) as e:
            die(f"{name}: cannot fetch {url}: {e}\n  The archive may have moved on (a security update removes"
                " the old file): run scripts/package.sh --relock, review the diff of packaging/sources.lock"
                " and commit it.")
        got = sha256_of(tmp)
        if got != sha:
            os.unlink(tmp)
            die(f"{name}: {url} has sha256 {got}, the lock says {sha}: refusing to build from it")
        os.replace(tmp, dest)
        print(f"fetched {os.path.basename(pool_path)} ({os.path.getsize(dest) // 1024} KiB, sha256 ok)")


def apt(opts, *args):
    return subprocess.run(["apt-cache", *opts, *args], check=True, capture_output=True, text=True).stdout


def newest(stanzas):
    """The stanza with the highest Version (dpkg's order)."""
    best = None
    for s in stanzas:
        if best is None or subprocess.run(["dpkg", "--compare-versions", s["Version"], "gt", best["Version"]]).returncode == 0:
            best = s
    return best


def stanzas(text):
    out, cur, key = [], {}, None
    for line in text.splitlines():
        if not line.strip():
            if cur:
                out.append(cur)
            cur, key = {}, None
        elif line[0] in " \t" and key:
            cur[key] += "\n" + line.strip()
        else:
            key, _, value = line.partition(":")
            cur[key] = value.strip()
    if cur:
        out.append(cur)
    return out


def relock(lock, options_file):
    with open(options_file, encoding="utf-8") as f:
        opts = shlex.split(f.read())
    lines = []
    for src in SOURCES:
        s = newest(stanzas(apt(opts, "showsrc", "--only-source", src)))
        if s is None:
            die(f"no source package {src} in the archive's indexes")
        for entry in s["Checksums-Sha256"].split("\n"):
            fields = entry.split()
            if len(fields) == 3 and (".orig.tar." in fields[2] or ".debian.tar." in fields[2]) and not fields[2].endswith(".asc"):
                lines.append(("src", src, f"{s['Directory']}/{fields[2]}", fields[0]))
    for deb in DEBS:
        for arch in ARCHES:
            s = newest([x for x in stanzas(apt(opts, "show", f"{deb}:{arch}")) if "Filename" in x])
            if s is None:  # an Architecture: all package has no :arch
                s = newest([x for x in stanzas(apt(opts, "show", deb)) if x.get("Architecture") == "all"])
            if s is None:
                die(f"no {deb}:{arch} in the archive's indexes")
            if any(line[2] == s["Filename"] for line in lines):
                continue  # an Architecture: all package, listed once
            lines.append(("deb", deb, s["Filename"], s["SHA256"]))
    with open(lock, encoding="utf-8") as f:
        header = [line for line in f.read().splitlines() if line.startswith("#")]
    width = max(len(line[2]) for line in lines)
    with open(lock, "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n")
        for kind, name, path, sha in lines:
            f.write(f"{kind:<5} {name:<19} {path:<{width}} {sha}\n")
    print(f"{lock}: {len(lines)} files pinned")


def main(argv):
    if len(argv) >= 3 and argv[0] == "fetch":
        arches = [argv[i + 1] for i, a in enumerate(argv) if a == "--arch" and i + 1 < len(argv)]
        fetch(argv[1], argv[2], arches or ARCHES)
    elif len(argv) == 3 and argv[0] == "relock":
        relock(argv[1], argv[2])
    else:
        die(__doc__.strip(), 2)


if __name__ == "__main__":
    main(sys.argv[1:])

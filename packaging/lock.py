#!/usr/bin/env python3
"""The pinned inputs of the static wheelcheck build (packaging/sources.lock): fetch them, or re-pin them.

    lock.py fetch LOCK DOWNLOADS USED APT_DIR [--arch amd64|arm64]... [--locked]
        fetch what LOCK lists for those architectures (sources always), check each sha256, keep the
        verified files in DOWNLOADS, and write USED: what was really used, in the lock's own format (a
        lock itself), each line with its version and whether it is as pinned or moved
    lock.py relock LOCK APT_DIR
        rewrite LOCK from the archive's current bookworm (+ updates, + security) indexes

A pinned file is fetched from the mirror this machine's apt uses (pool/updates/ from the matching security
archive) and used only when its sha256 matches the lock. When the archive no longer has it (Debian removes
superseded security updates) or its sha256 differs, the default is to take what the archive's signed
indexes name now, through apt's own chain of trust (InRelease's signature, then the Packages/Sources
hashes, then the file's: `apt-get download` and `apt-get source --download-only` in a private apt state
under APT_DIR; the machine's own apt configuration is never touched), with one warning line per moved
input; --locked (a release) refuses instead, naming every stale pin. Standard library only: this runs
before anything is built.
"""
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

# What is built from source (Debian's source package names) and what comes as Debian's own -dev
# packages (static archives and headers), per architecture.
SOURCES = ["libzip", "libisal", "curl", "nghttp2"]
DEBS = ["libssl-dev", "zlib1g-dev", "liblief-dev", "libmbedtls-dev", "libgumbo-dev", "libfmt-dev",
        "nlohmann-json3-dev", "libcli11-dev", "libtomlplusplus-dev", "libzstd-dev",
        "libsqlite3-dev"]
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


def version_of(pool_path):
    """The version a pool file is of: name_VERSION_arch.deb, name_VERSION.debian.tar.*, name_UPSTREAM.orig.tar.*."""
    base = urllib.parse.unquote(os.path.basename(pool_path))
    m = re.fullmatch(r"[^_]+_([^_]+)_[a-z0-9]+\.deb", base) or re.fullmatch(r"[^_]+_(.+?)\.(?:debian|orig)\.tar\.\w+", base)
    return m.group(1) if m else "?"


def input_key(entry):
    """One input: a source package (all its files), or one -dev package of one architecture."""
    kind, name, pool_path, _ = entry
    return (kind, name, None if kind == "src" else arch_of(pool_path))


def input_label(key):
    kind, name, arch = key
    return f"{name} (source)" if kind == "src" else f"{name} ({arch})"


def input_version(entries):
    """A source package's version is its .debian tarball's; a -dev package's, its file's."""
    for _, _, path, _ in entries:
        if ".debian.tar." in path or path.endswith(".deb"):
            return version_of(path)
    return version_of(entries[0][2])


def download(url, tmp):
    """Fetches url into tmp: None when done, else why not ('gone' for a 404 or 410)."""
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as out:
            while block := r.read(1 << 20):
                out.write(block)
        return None
    except urllib.error.HTTPError as e:
        return "gone" if e.code in (404, 410) else f"HTTP {e.code}"
    except (urllib.error.URLError, OSError) as e:
        return str(e)


def fetch_pinned(entries, downloads, main, security):
    """Fetches the pinned files of one input: [] when all are there and verified, else what is wrong."""
    problems = []
    for kind, name, pool_path, sha in entries:
        dest = os.path.join(downloads, os.path.basename(pool_path))
        if os.path.exists(dest) and sha256_of(dest) == sha:
            continue
        base = security if pool_path.startswith("pool/updates/") else main
        url = f"{base}/{pool_path}"
        tmp = dest + ".part"
        why = download(url, tmp)
        if why == "gone":
            problems.append(f"{os.path.basename(pool_path)} is gone from the archive")
            continue
        if why:
            die(f"{name}: cannot fetch {url}: {why} (the archive could not be reached; nothing was built)")
        got = sha256_of(tmp)
        if got != sha:
            os.unlink(tmp)
            problems.append(f"{os.path.basename(pool_path)} has sha256 {got[:16]}..., the lock says {sha[:16]}...")
            continue
        os.replace(tmp, dest)
        print(f"fetched {os.path.basename(pool_path)} ({os.path.getsize(dest) // 1024} KiB, sha256 ok)")
    return problems


def current(key, opts):
    """What the archive's (signed, apt-verified) indexes name now for one input: its lock entries."""
    kind, name, arch = key
    if kind == "src":
        s = newest(stanzas(apt(opts, "showsrc", "--only-source", name)))
        if s is None:
            die(f"no source package {name} in the archive's indexes")
        out = []
        for entry in s["Checksums-Sha256"].split("\n"):
            fields = entry.split()
            if len(fields) == 3 and (".orig.tar." in fields[2] or ".debian.tar." in fields[2]) and not fields[2].endswith(".asc"):
                out.append(("src", name, f"{s['Directory']}/{fields[2]}", fields[0]))
        return s["Version"], out
    if arch == "all":
        s = newest([x for x in stanzas(apt(opts, "show", name)) if x.get("Architecture") == "all"])
    else:
        s = newest([x for x in stanzas(apt(opts, "show", f"{name}:{arch}")) if "Filename" in x])
    if s is None:
        die(f"no {name}:{arch} in the archive's indexes")
    return s["Version"], [("deb", name, s["Filename"], s["SHA256"])]


def fetch_current(key, version, entries, downloads, opts):
    """Downloads one input as apt does (verified against the signed indexes), then checks each sha256 again."""
    kind, name, arch = key
    with tempfile.TemporaryDirectory(dir=downloads) as tmp:
        if kind == "src":
            cmd = ["apt-get", *opts, "-qq", "source", "--download-only", "--only-source", f"{name}={version}"]
        else:
            cmd = ["apt-get", *opts, "-qq", "download", f"{name}:{arch}={version}" if arch != "all" else f"{name}={version}"]
        r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if r.returncode != 0:
            die(f"{input_label(key)}: apt-get could not download {version}: {(r.stderr or r.stdout).strip()}")
        for _, _, pool_path, sha in entries:
            base = os.path.basename(pool_path)
            path = os.path.join(tmp, urllib.parse.unquote(base))
            if not os.path.exists(path):
                path = os.path.join(tmp, base)
            if not os.path.exists(path):
                die(f"{input_label(key)}: apt-get did not write {base}")
            if sha256_of(path) != sha:
                die(f"{input_label(key)}: {base} does not match the archive's signed index: refusing to build from it")
            os.replace(path, os.path.join(downloads, base))


def apt_state(apt_dir):
    """A private apt state: bookworm, bookworm-updates and bookworm-security, sources and both architectures,
    with this machine's Debian keyring; updated once per call. Returns apt's options."""
    main, security = mirrors()
    os.makedirs(os.path.join(apt_dir, "lists", "partial"), exist_ok=True)
    os.makedirs(os.path.join(apt_dir, "cache", "archives", "partial"), exist_ok=True)
    keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
    opt = f"arch=amd64,arm64 signed-by={keyring}" if os.path.exists(keyring) else "arch=amd64,arm64"
    lines = []
    for base, suites in ((main, ["bookworm", "bookworm-updates"]), (security, ["bookworm-security"])):
        for suite in suites:
            lines += [f"deb [{opt}] {base} {suite} main", f"deb-src [{opt}] {base} {suite} main"]
    with open(os.path.join(apt_dir, "sources.list"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    opts = [f"-oDir::State::Lists={apt_dir}/lists", f"-oDir::Etc::SourceList={apt_dir}/sources.list",
            "-oDir::Etc::SourceParts=/dev/null", f"-oDir::Cache={apt_dir}/cache", "-oAPT::Architectures=amd64,arm64",
            "-oDebug::NoLocking=1", "-oAPT::Sandbox::User=root"]
    r = subprocess.run(["apt-get", *opts, "-qq", "update"], capture_output=True, text=True)
    if r.returncode != 0:
        die(f"apt-get update of the private state in {apt_dir} failed: {(r.stderr or r.stdout).strip()}")
    return opts


def fetch(lock, downloads, used, apt_dir, arches, locked):
    main, security = mirrors()
    os.makedirs(downloads, exist_ok=True)
    inputs = {}
    for entry in read_lock(lock):
        if entry[0] == "deb" and arch_of(entry[2]) not in ("all", *arches):
            continue
        inputs.setdefault(input_key(entry), []).append(entry)
    stale = {key: problems for key, entries in inputs.items() if (problems := fetch_pinned(entries, downloads, main, security))}
    if stale and locked:
        lines = [f"  {input_label(key)} {input_version(inputs[key])}: {'; '.join(p)}" for key, p in stale.items()]
        die(f"{len(stale)} pinned input(s) of {lock} cannot be used (--locked builds only what the lock pins):\n"
            + "\n".join(lines) + "\n  Re-pin with scripts/package.sh --relock, review the diff of the lock and commit"
            " it; or drop --locked to build from what Debian's signed indexes name now.")
    out = []
    opts = apt_state(apt_dir) if stale else None
    for key, entries in inputs.items():
        pinned = input_version(entries)
        if key not in stale:
            out += [(*e, f"{pinned}, as pinned") for e in entries]
            continue
        version, now = current(key, opts)
        fetch_current(key, version, now, downloads, opts)
        print(f"package: warning: {input_label(key)} moved: the lock pins {pinned} ({'; '.join(stale[key])});"
              f" using {version}, as the archive's signed indexes name it now", file=sys.stderr)
        out += [(*e, f"{version}, moved: the lock pins {pinned}") for e in now]
    with open(lock, encoding="utf-8") as f:
        header = [line for line in f.read().splitlines() if line.startswith("#")]
    moved = len(stale)
    note = ("# USED: what this build was really made from" + (f" ({moved} input(s) moved from the lock; see each line's note)"
            if moved else " (every input as pinned)") + ". It is a lock itself: scripts/package.sh --locked --lock FILE")
    write_lock(used, [note, "#"] + header, out)


def write_lock(path, header, lines):
    width = max(len(line[2]) for line in lines)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n")
        for kind, name, pool_path, sha, *note in lines:
            text = f"{kind:<5} {name:<19} {pool_path:<{width}} {sha}"
            f.write(text + (f"  # {note[0]}" if note else "") + "\n")
    os.replace(tmp, path)


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


def relock(lock, apt_dir):
    opts = apt_state(apt_dir)
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
    write_lock(lock, header, lines)
    print(f"{lock}: {len(lines)} files pinned")


def main(argv):
    if len(argv) >= 5 and argv[0] == "fetch":
        arches = [argv[i + 1] for i, a in enumerate(argv) if a == "--arch" and i + 1 < len(argv)]
        fetch(argv[1], argv[2], argv[3], argv[4], arches or ARCHES, "--locked" in argv)
    elif len(argv) == 3 and argv[0] == "relock":
        relock(argv[1], argv[2])
    else:
        die(__doc__.strip(), 2)


if __name__ == "__main__":
    main(sys.argv[1:])

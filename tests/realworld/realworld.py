#!/usr/bin/env python3
"""The real-binaries tier: real Debian Python extension packages, each packed as a wheel, checked by
wheelcheck against roots made of real Debian packages, and compared member by member with what the
root's own CPython does when it imports each extension module under chroot.

  realworld.py --wheelcheck BIN [--suite bookworm|trixie]... [--only PKG]... [--variant V]...
               [--keep DIR] [--jobs N]

Packages (packages.txt) are fetched by fetch.sh into $WHEELCHECK_REALWORLD (default
~/.cache/wheelcheck-realworld). Per suite one base root holds the interpreter and the union of every
package's dependency closure, less the tested packages themselves; each check runs in a copy of it
(an overlay mount, else a hard-link copy) changed as its variant says:
  full           the base root as it is
  drop-SONAME    one real library the package's modules reach removed (chosen deterministically)
  old-libstdc++  the older release's libstdc++6 in place of the suite's (when the modules reach it)
  old-libs       the older release's versions of the package's direct library dependencies
Then: `wheelcheck WHEEL --image ROOT --json`; the wheel installed where wheelcheck says pip puts it;
each extension module imported by the root's python3.X in a child process of its own (the real dlopen,
RTLD_NOW | RTLD_LOCAL, and the module's PyInit), and traced by the root's loader
(LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=yes, the interpreter's libraries preloaded), which
lists every missing library, version and symbol. Compared per module: loads, missing libraries, missing
version names, and (where the loader finds nothing missing) the unresolved (object, symbol, version).

Exit: 0 all agree, 1 a disagreement, 2 a harness error, 77 skipped (no root, no archive, no cache).
"""
import argparse, atexit, concurrent.futures, hashlib, json, os, re, shlex, shutil, subprocess, sys
import tempfile, threading, time, zipfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
from make_wheel import write_wheel  # noqa: E402  (the tests' one wheel writer)

CACHE = os.environ.get("WHEELCHECK_REALWORLD", os.path.expanduser("~/.cache/wheelcheck-realworld"))
TRIPLE = "x86_64-linux-gnu"
INTERP = "/lib64/ld-linux-x86-64.so.2"
PYTAG = {"bookworm": "cp311", "trixie": "cp313"}
ROOT_FORMAT = "6"
WHEEL_FORMAT = "2"  # bump when what goes into a package's wheel changes  # bump when the way roots are laid out changes (the cached base roots are rebuilt)
MERGED = {"lib": "usr/lib", "lib64": "usr/lib64", "bin": "usr/bin", "sbin": "usr/sbin",
          "lib32": "usr/lib32", "libx32": "usr/libx32"}
# glibc's own libraries, and what every process of the interpreter has loaded, are never dropped
NEVER_DROP_PKGS = {"libc6", "libc-bin", "gcc-12-base", "gcc-14-base"}
RUNTIMES = {"libgcc-s1", "libstdc++6"}  # dropped only where nothing else is reached
LIB_DIRS = ["usr/lib/" + TRIPLE, "usr/lib", "usr/local/lib", "usr/lib64"]


class HarnessError(Exception):
    pass


def run(cmd, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("text", True)
    kw.setdefault("errors", "replace")
    return subprocess.run(cmd, **kw)


def must(cmd, **kw):
    p = run(cmd, **kw)
    if p.returncode != 0:
        raise HarnessError(f"{' '.join(map(str, cmd))} failed ({p.returncode}): {(p.stderr or '').strip()[:1500]}")
    return p


def in_root(root, argv, env, timeout=120):
    def enter():
        os.chroot(root)
        os.chdir("/")
    return run(argv, env=env, preexec_fn=enter, timeout=timeout)


def log(msg):
    with LOG_LOCK:
        print(msg, flush=True)


LOG_LOCK = threading.Lock()


# --- the fetched state -----------------------------------------------------------------------------------

class Suite:
    """What fetch.sh left for one suite: closures, the older release's libraries, the unpacked debs."""

    def __init__(self, name):
        self.name = name
        st = os.path.join(CACHE, "state", name)
        self.state = st
        self.debs = {}  # package name -> (version, unpacked folder) of this suite
        self.old_debs = {}  # package name -> (version, unpacked folder) of the older suite
        older_file = os.path.join(st, "older")
        self.older = open(older_file).read().strip() if os.path.exists(older_file) else None
        old_lines = []
        if os.path.exists(os.path.join(st, "old-debs.txt")):
            old_lines = open(os.path.join(st, "old-debs.txt")).read().splitlines()
            for line in old_lines:
                n, v, f = line.split()
                self.old_debs[n] = (v, os.path.join(CACHE, "x", f[:-4]))
        lines = open(os.path.join(st, "debs.txt")).read().splitlines()
        for line in lines[:len(lines) - len(old_lines)]:  # debs.txt: the suite's, then the older suite's
            n, v, f = line.split()
            self.debs[n] = (v, os.path.join(CACHE, "x", f[:-4]))
        self.closures = {}
        cdir = os.path.join(st, "closure")
        for f in sorted(os.listdir(cdir)):
            names = [line.split()[0] for line in open(os.path.join(cdir, f)) if line.strip()]
            self.closures[f[:-4]] = names
        self.python_pkgs = self.closures.pop("_python")
        self.packages = sorted(self.closures)
        self.old = {}  # package -> [older-suite package names]
        odir = os.path.join(st, "old")
        for f in sorted(os.listdir(odir)) if os.path.isdir(odir) else []:
            self.old[f[:-4]] = [line.split()[0] for line in open(os.path.join(odir, f)) if line.strip()]
        self.skipped = [line.strip() for line in open(os.path.join(st, "skipped.txt")) if line.strip()]
        self.pyver = {"cp311": "3.11", "cp313": "3.13"}[PYTAG[name]]

    def control(self, pkg, old=False):
        folder = (self.old_debs if old else self.debs)[pkg][1]
        fields, key = {}, None
        for line in open(os.path.join(folder, "DEBIAN", "control"), errors="replace"):
            if line[:1] in (" ", "\t") and key:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, val = line.split(":", 1)
                fields[key] = val.strip()
        return fields

    def direct_deps(self, pkg):
        """PKG's Depends and Pre-Depends, each alternative group as apt chose it (the first one in its
        closure)."""
        c = self.control(pkg)
        closure = set(self.closures.get(pkg, [])) | set(self.python_pkgs)
        out = []
        for field in ("Pre-Depends", "Depends"):
            for group in c.get(field, "").split(","):
                for alt in group.split("|"):
                    name = alt.strip().split(" ")[0].split(":")[0]
                    if name and name in closure:
                        out.append(name)
                        break
        return out


def tree_files(folder):
    """Every entry of an unpacked deb, as (path inside the root, full source path, kind), the top-level
    folders of merged /usr mapped as dpkg's unpacking through the root's links maps them."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        rel = os.path.relpath(dirpath, folder)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d != "DEBIAN"]  # the control files, not the package's
        for n in sorted(dirnames + filenames):
            src = os.path.join(dirpath, n)
            p = os.path.normpath(os.path.join(rel, n))
            first, _, rest = p.partition("/")
            if first in MERGED:
                p = MERGED[first] + ("/" + rest if rest else "")
            if os.path.islink(src):
                out.append((p, src, "link"))
            elif os.path.isdir(src):
                out.append((p, src, "dir"))
            else:
                out.append((p, src, "file"))
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return out


def lay_package(root, folder, owner=None, pkg=None):
    """Unpacks one deb's files into root as dpkg would on a merged-/usr system (hard links to the cache)."""
    for p, src, kind in tree_files(folder):
        dest = os.path.join(root, p)
        if kind == "dir":
            if os.path.islink(dest) or (os.path.exists(dest) and not os.path.isdir(dest)):
                continue  # a link of merged /usr, or a file: dpkg keeps what is there
            os.makedirs(dest, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if os.path.lexists(dest):
            if os.path.isdir(dest) and not os.path.islink(dest):
                continue
            os.unlink(dest)
        if kind == "link":
            os.symlink(os.readlink(src), dest)
        else:
            try:
                os.link(src, dest)
            except OSError:
                shutil.copy2(src, dest)
        if owner is not None:
            owner.setdefault(pkg, []).append(p)


def root_realpath(root, path, depth=0):
    """path (absolute inside root) with every link resolved inside root (absolute targets are the root's)."""
    parts = [x for x in path.split("/") if x]
    cur = ""
    for i, part in enumerate(parts):
        if part == "..":
            cur = os.path.dirname(cur)
            continue
        nxt = cur + "/" + part
        full = root + nxt
        if os.path.islink(full):
            if depth > 40:
                return nxt
            t = os.readlink(full)
            base = t if t.startswith("/") else os.path.normpath(cur + "/" + t)
            cur = root_realpath(root, base, depth + 1)
        else:
            cur = nxt
    return cur or "/"


def alternatives(root, folders):
    """The /etc/alternatives links the packages' postinst scripts would make (update-alternatives
    --install LINK NAME PATH PRIORITY [--slave LINK NAME PATH]...): the highest priority wins, as in
    automatic mode. dpkg -x runs no maintainer script."""
    best = {}
    for order, folder in enumerate(folders):
        post = os.path.join(folder, "DEBIAN", "postinst")
        if not os.path.exists(post):
            continue
        text = open(post, errors="replace").read().replace("\\\n", " ")
        for line in text.splitlines():
            if "update-alternatives" not in line or "--install" not in line:
                continue
            try:
                tok = shlex.split(line, comments=True)
            except ValueError:
                continue
            if any("$" in t for t in tok):
                continue
            i = tok.index("--install")
            if len(tok) < i + 5:
                continue
            link, name, path, prio = tok[i + 1:i + 5]
            slaves = []
            j = i + 5
            while j + 3 < len(tok) + 0 and tok[j] == "--slave":
                slaves.append(tuple(tok[j + 1:j + 4]))
                j += 4
            if not os.path.lexists(root + path):
                continue
            cand = (int(prio), -order, link, path, slaves)
            if name not in best or cand[:2] > best[name][:2]:
                best[name] = cand
    made = []
    os.makedirs(root + "/etc/alternatives", exist_ok=True)
    for name, (prio, _, link, path, slaves) in sorted(best.items()):
        for lk, nm, pt in [(link, name, path)] + slaves:
            if not os.path.lexists(root + pt):
                continue
            for p, target in ((f"/etc/alternatives/{nm}", pt), (lk, f"/etc/alternatives/{nm}")):
                if os.path.lexists(root + p):
                    os.unlink(root + p)
                os.makedirs(os.path.dirname(root + p), exist_ok=True)
                os.symlink(target, root + p)
            made.append(f"{lk} -> /etc/alternatives/{nm} -> {pt} ({prio})")
    return made


def ldconfig(root):
    must(["chroot", root, "/sbin/ldconfig"])


def base_root(suite):
    """The suite's base root, cached under $WHEELCHECK_REALWORLD/roots: the interpreter's closure and the
    union of every package's closure, laid out as Debian lays out /, less the tested packages themselves:
    the wheel is what is installed. A tested package another one depends on (python3-numpy for
    python3-scipy and python3-h5py-serial, python3-lxml and python3-pil for python3-pikepdf) is left out
    too: none of them ships a native library outside its Python folder, so no load changes; the inits of
    the modules that import it stop there (after the loader's work: they count as loading), which keeps
    each child process short. remove_own still takes a package under test out of a check's copy."""
    names = set(suite.python_pkgs)
    for p in suite.packages:
        names |= set(suite.closures[p])
    names = sorted(names - set(suite.packages))
    folders = [suite.debs[n][1] for n in names]
    key = hashlib.sha256(("\n".join([ROOT_FORMAT] + folders)).encode()).hexdigest()[:16]
    top = os.path.join(CACHE, "roots")
    root = os.path.join(top, f"{suite.name}-{key}")
    if os.path.exists(root + ".json"):
        meta = json.load(open(root + ".json"))
        return root, meta
    os.makedirs(top, exist_ok=True)
    for old in os.listdir(top):  # other keys of this suite: stale
        if old.startswith(suite.name + "-"):
            full = os.path.join(top, old)
            if os.path.isdir(full):
                shutil.rmtree(full, ignore_errors=True)
            else:
                os.unlink(full)
    tmp = root + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for d in ("usr/lib", "usr/lib64", "usr/bin", "usr/sbin"):
        os.makedirs(os.path.join(tmp, d))
    for link, target in (("lib", "usr/lib"), ("lib64", "usr/lib64"), ("bin", "usr/bin"), ("sbin", "usr/sbin")):
        os.symlink(target, os.path.join(tmp, link))
    owner = {}
    for n, folder in zip(names, folders):
        lay_package(tmp, folder, owner, n)
    alts = alternatives(tmp, folders)
    for d in ("tmp", "dev", "proc", "var/tmp", f"usr/local/lib/python{suite.pyver}/dist-packages"):
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
    ldconfig(tmp)
    # what the interpreter itself loads (never dropped; preloaded when the loader traces a module)
    py = f"/usr/bin/python{suite.pyver}"
    p = in_root(tmp, [INTERP, py], {"LD_TRACE_LOADED_OBJECTS": "1"})
    interp_libs = re.findall(r"^\s*\S+ => (\S+) \(0x", p.stdout, re.M)
    if p.returncode != 0 or not interp_libs:
        raise HarnessError(f"{suite.name}: cannot trace {py} in its root: {p.stdout} {p.stderr}")
    pv = in_root(tmp, [py, "-c", "import sys, ctypes; print(sys.version.split()[0])"], {"PATH": "/usr/bin"})
    if pv.returncode != 0:
        raise HarnessError(f"{suite.name}: {py} does not run in its root: {pv.stderr.strip()}")
    meta = {"packages": names, "owner": owner, "alternatives": alts, "python": py, "python_version": pv.stdout.strip(),
            "interp_libs": interp_libs, "libpython": f"/usr/lib/{TRIPLE}/libpython{suite.pyver}.so.1.0"}
    os.rename(tmp, root)
    with open(root + ".json.tmp", "w") as f:
        json.dump(meta, f)
    os.rename(root + ".json.tmp", root + ".json")
    return root, meta


# --- wheels ----------------------------------------------------------------------------------------------

def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def suffix_ok(name, suite):
    """Whether the suite's CPython would import a file of this name (importlib.machinery.EXTENSION_SUFFIXES:
    .cpython-3XY-x86_64-linux-gnu.so, .abi3.so, .so); libraries (lib*.so.N) are kept too."""
    m = re.search(r"\.(cpython-[^.]+|abi3)\.so$", name)
    if not m:
        return True
    return m.group(1) in (f"cpython-{suite.pyver.replace('.', '')}-{TRIPLE}", "abi3")


def make_pkg_wheel(suite, pkg):
    """The package's files under usr/lib/python3/dist-packages (its extension modules and pure-Python
    files; not Debian's own .dist-info/.egg-info, not __pycache__) as a wheel for the suite's CPython.
    Returns (wheel, [(archive name, import name)] of its ELF members, [modules left out]), or (None, reason,
    [])."""
    version, folder = suite.debs[pkg]
    site = os.path.join(folder, "usr/lib/python3/dist-packages")
    if not os.path.isdir(site):
        return None, "no usr/lib/python3/dist-packages in the package", []
    files, elves, dist, others = [], [], None, []
    for dirpath, dirnames, filenames in os.walk(site):
        rel = os.path.relpath(dirpath, site)
        top = rel.split("/")[0]
        if top.endswith((".dist-info", ".egg-info")):
            dist = dist or re.split(r"-\d", top)[0]
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for n in sorted(filenames):
            if n.endswith((".dist-info", ".egg-info")):  # an egg-info file
                dist = dist or re.split(r"-\d", n)[0]
                continue
            src = os.path.join(dirpath, n)
            if os.path.islink(src) and not os.path.exists(src):
                continue
            arc = os.path.normpath(os.path.join(rel, n))
            files.append((arc, os.path.realpath(src)))
            if n.endswith(".so") or ".so." in n:
                if not suffix_ok(n, suite):  # a debug build's (cpython-311d) or another Python's module
                    files.pop()
                    others.append(arc)
                    continue
                if is_elf(os.path.realpath(src)):
                    mod = arc.split(".")[0].replace("/", ".")
                    elves.append((arc, mod))
    if not elves:
        return None, "no ELF member under usr/lib/python3/dist-packages", others
    dist = re.sub(r"[^A-Za-z0-9]+", "_", dist or pkg[len("python3-"):])
    upstream = re.sub(r"^\d+:", "", version).split("-")[0]
    m = re.match(r"\d+(\.\d+)*", upstream.split("+")[0].split("~")[0])
    ver = m.group(0) if m else "0"
    tag = PYTAG[suite.name]
    out_dir = os.path.join(CACHE, "wheels", suite.name)
    os.makedirs(out_dir, exist_ok=True)
    whl = os.path.join(out_dir, f"{dist}-{ver}-{tag}-{tag}-linux_x86_64.whl")
    stamp = whl + ".src"
    src_key = folder + "\n" + WHEEL_FORMAT + "\n" + hashlib.sha256(open(os.path.join(HERE, "..", "tools", "make_wheel.py"), "rb").read()).hexdigest()
    if not (os.path.exists(whl) and os.path.exists(stamp) and open(stamp).read() == src_key):
        write_wheel(whl, files)
        with open(stamp, "w") as f:
            f.write(src_key)
    return whl, elves, others


def install_wheel(whl, root, site):
    """pip's layout of the wheel's files (purelib and platlib both into site-packages); returns
    {installed path: archive name} of its ELF members."""
    installed = {}
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            if n.endswith("/"):
                continue
            m = re.match(r"[^/]+\.data/(purelib|platlib|scripts|data)/(.*)", n)
            if m:
                prefix = os.path.normpath(site + "/../../..")
                dest = {"purelib": site, "platlib": site, "scripts": prefix + "/bin", "data": prefix}[m.group(1)] + \
                    "/" + m.group(2)
            else:
                dest = site + "/" + n
            os.makedirs(os.path.dirname(root + dest), exist_ok=True)
            data = z.read(n)
            with open(root + dest, "wb") as f:
                f.write(data)
            if data[:4] == b"\x7fELF":
                os.chmod(root + dest, 0o755)
                installed[dest] = n
    return installed


# --- the loader's side -----------------------------------------------------------------------------------

# Imports each NAME=PATH in a child process of its own, as the import system does for an extension module
# (ExtensionFileLoader: dlopen(PATH, sys.getdlopenflags()), RTLD_NOW | RTLD_LOCAL, then PyInit_NAME).
# After an exception, RTLD_NOLOAD tells whether the loader had mapped the file (it then raised from the
# module's own init: the loader was fine). A child that dies is retried with the dlopen alone.
IMPORTER = r"""
import json, os, sys, signal, importlib.util
def child(name, path, w, dlopen_only):
    out = {"path": path}
    signal.alarm(60)
    try:
        if dlopen_only:
            import ctypes
            ctypes.CDLL(path, mode=sys.getdlopenflags())
            out["result"] = "dlopened"
        else:
            spec = importlib.util.spec_from_file_location(name, path)
            importlib.util.module_from_spec(spec)
            out["result"] = "imported"
    except BaseException as e:
        out.update(result="raised", type=type(e).__name__, error=str(e), errpath=getattr(e, "path", None))
        try:
            import ctypes
            ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL | os.RTLD_NOLOAD)
            out["mapped"] = True
        except OSError:
            out["mapped"] = False
        except BaseException as e2:
            out["mapped"] = None
            out["mapped_error"] = str(e2)
    os.write(w, json.dumps(out).encode())
    os._exit(0)
def one(name, path, dlopen_only=False):
    r, w = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        child(name, path, w, dlopen_only)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if data:
        return json.loads(data)
    return {"path": path, "result": "died", "status": status}
for arg in sys.argv[1:]:
    name, path = arg.split("=", 1)
    res = one(name, path)
    if res["result"] == "died":
        res["dlopen_only"] = one(name, path, True)
    print(json.dumps(res), flush=True)
"""

NOTFOUND = re.compile(r"^\t(\S+) => not found$")
LOADED = re.compile(r"^\t(\S+) => (\S+) \(0x")
UNDEF = re.compile(r"^undefined symbol: ([^\t,]+)(?:, version (\S+))?\t\((.*)\)$")
VERSION = re.compile(r"^(?:.*: )?(\S+): version `([^']+)' not found \(required by (.*)\)$")
ERR_OPEN = re.compile(r"([^ :]+): cannot open shared object file")
ERR_VERSION = re.compile(r"(\S+): version `([^']+)' not found \(required by ([^)]+)\)")
ERR_UNDEF = re.compile(r"undefined symbol: (\S+?)(?:, version (\S+))?$")


def import_modules(root, py, mods, bind_now=False):
    """Imports each module in the root (RTLD_NOW | RTLD_LOCAL and PyInit); bind_now: LD_BIND_NOW=1 for every
    library it maps too (lint_truth.py's referee)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8", "HOME": "/tmp",
           **({"LD_BIND_NOW": "1"} if bind_now else {})}
    p = in_root(root, [py, "-c", IMPORTER] + [f"{n}={path}" for n, path in mods], env, timeout=600)
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            out[r["path"]] = r
    missing = [path for _, path in mods if path not in out]
    if missing:
        raise HarnessError(f"{py} said nothing of {missing[0]} (rc {p.returncode}): {p.stderr.strip()[-1500:]}")
    return out


def classify(r):
    """The import's outcome: (loads, error text, how). Only the loader's refusal counts as 'fails': an
    exception from the module's own init (the file was mapped, RTLD_NOLOAD finds it) is 'loads'."""
    if r["result"] == "imported":
        return True, "", "imported"
    if r["result"] == "died":
        d = r.get("dlopen_only", {})
        if d.get("result") == "dlopened":
            return True, f"init died ({r['status']}); dlopen alone loads", "init died"
        return False, d.get("error", f"died ({r['status']})"), "dlopen alone fails"
    err = r.get("error", "")
    if r.get("mapped") is True:
        return True, f"{r['type']} from the module's init: {err}", "init raised"
    loaderish = ERR_OPEN.search(err) or ERR_VERSION.search(err) or ERR_UNDEF.search(err)
    if r.get("mapped") is False or loaderish:
        return False, err, "loader refused"
    return True, f"{r['type']}: {err}", "raised (not a loader error)"


def loader_trace(root, member, preload):
    env = {"LD_TRACE_LOADED_OBJECTS": "1", "LD_WARN": "yes", "LD_BIND_NOW": "yes", "LD_PRELOAD": ":".join(preload)}
    p = in_root(root, [INTERP, member], env)
    missing, loaded, undefined, versions = set(), [], set(), set()
    for line in p.stdout.splitlines():
        m = NOTFOUND.match(line)
        if m:
            missing.add(m.group(1))
            continue
        m = LOADED.match(line)
        if m:
            loaded.append((m.group(1), m.group(2)))
    for line in p.stderr.splitlines():
        m = UNDEF.match(line)
        if m:
            undefined.add((m.group(3), m.group(1), m.group(2) or ""))
            continue
        m = VERSION.match(line)
        if m:
            versions.add((m.group(2), os.path.basename(m.group(1)), m.group(3)))
    return {"missing": missing, "loaded": loaded, "undefined": undefined, "versions": versions,
            "stderr": p.stderr, "rc": p.returncode}


# --- one check -------------------------------------------------------------------------------------------

class Workspace:
    """A variant's root: an overlay over the base root (or a hard-link copy where overlayfs is refused)."""
    mounts = set()
    mounts_lock = threading.Lock()
    use_overlay = None

    def __init__(self, base, folder):
        self.folder = folder
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        self.root = os.path.join(folder, "root")
        if Workspace.use_overlay:
            for d in ("upper", "ovlwork", "root"):
                os.makedirs(os.path.join(folder, d))
            must(["mount", "-t", "overlay", "overlay", "-o",
                  f"lowerdir={base},upperdir={folder}/upper,workdir={folder}/ovlwork", self.root])
            with Workspace.mounts_lock:
                Workspace.mounts.add(self.root)
        else:
            must(["cp", "-al", base, self.root])

    def close(self, keep):
        if self.root in Workspace.mounts:
            if keep:
                return  # left mounted for inspection; the summary says how to unmount
            run(["umount", self.root])
            with Workspace.mounts_lock:
                Workspace.mounts.discard(self.root)
        if not keep:
            shutil.rmtree(self.folder, ignore_errors=True)


def overlay_works(work):
    d = os.path.join(work, "overlay-test")
    for s in ("l", "u", "w", "m"):
        os.makedirs(os.path.join(d, s), exist_ok=True)
    p = run(["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={d}/l,upperdir={d}/u,workdir={d}/w", f"{d}/m"])
    if p.returncode == 0:
        run(["umount", f"{d}/m"])
    shutil.rmtree(d, ignore_errors=True)
    return p.returncode == 0


KEEP_MOUNTS = []


@atexit.register
def _unmount_all():
    if KEEP_MOUNTS:
        return
    for m in list(Workspace.mounts):
        run(["umount", "-l", m])


def remove_library(root, path):
    """Removes the library file path (inside root) and the links that name it in the loader's folders."""
    real = root_realpath(root, path)
    removed = [real]
    for d in LIB_DIRS + [os.path.dirname(real).lstrip("/")]:
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            continue
        for n in os.listdir(full):
            p = os.path.join(full, n)
            if os.path.islink(p) and root_realpath(root, "/" + d + "/" + n) == real:
                os.unlink(p)
                removed.append("/" + d + "/" + n)
    if os.path.lexists(root + real):
        os.unlink(root + real)
    return removed


def remove_own(root, meta, pkg):
    """The package under test out of the root: the wheel is what is installed."""
    gone = []
    for p in meta["owner"].get(pkg, []):
        full = os.path.join(root, p)
        if os.path.lexists(full) and not (os.path.isdir(full) and not os.path.islink(full)):
            os.unlink(full)
            gone.append(p)
    return [f"removed {pkg} itself ({len(gone)} files)"] if gone else []


def replace_packages(root, meta, suite, names):
    """The older release's versions of names in place of the suite's (their files removed first)."""
    done = []
    for n in names:
        for p in meta["owner"].get(n, []):
            full = os.path.join(root, p)
            if os.path.lexists(full) and not (os.path.isdir(full) and not os.path.islink(full)):
                os.unlink(full)
        lay_package(root, suite.old_debs[n][1])
        done.append(f"{n} {suite.debs.get(n, ('?',))[0]} -> {suite.old_debs[n][0]}")
    return done


def wheelcheck_json(wc, whl, root, cache):
    cmd = [wc, whl, "--image", root, "--json", "-q", "--cache-dir", cache]
    p = run(cmd)
    if p.returncode not in (0, 1, 3, 4):
        raise HarnessError(f"wheelcheck exited {p.returncode}: {p.stderr.strip()[:1500]}")
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        raise HarnessError(f"wheelcheck printed no JSON ({e}): {p.stdout[:300]} {p.stderr[:300]}")


class Canon:
    """An object as both sides name it: a wheel member by its archive name, an image library by its real
    path inside the root (the loader names it as opened, wheelcheck by its image path)."""

    def __init__(self, root, arc_of):
        self.root, self.arc_of, self.memo = root, arc_of, {}
        self.by_real = {root_realpath(root, d): a for d, a in arc_of.items()}

    def __call__(self, obj):
        if obj in self.arc_of:
            return self.arc_of[obj]
        if obj not in self.memo:
            if obj.startswith("/"):
                real = root_realpath(self.root, obj)
                self.memo[obj] = self.by_real.get(real, real)
            else:
                self.memo[obj] = obj
        return self.memo[obj]


def compare(root, report, installed, imports, traces):
    """Member by member, the loader's answers against wheelcheck's. Returns (per-module results,
    disagreements)."""
    wc_members = {m["path"]: m for m in report.get("members", [])}
    arc_of = dict(installed)
    canon = Canon(root, arc_of)
    results, dis = [], []
    for dest, arc in sorted(installed.items()):
        if dest not in imports:
            continue
        loads, err, how = classify(imports[dest])
        t = traces[dest]
        missing = set(t["missing"])
        versions = {v for v, _, _ in t["versions"]}
        m = ERR_OPEN.search(err) if not loads else None
        if m:
            missing.add(os.path.basename(m.group(1)))
        m = ERR_VERSION.search(err) if not loads else None
        if m:
            versions.add(m.group(2))
        unres = {(canon(o), s, v) for o, s, v in t["undefined"]}
        res = {"module": arc, "loader": {"loads": loads, "how": how, "error": err, "missing_libraries": sorted(missing),
                                         "missing_versions": sorted(f"{v} of {lib} (required by {req})"
                                                                    for v, lib, req in t["versions"]),
                                         "unresolved": sorted(unres)[:50]}}
        wm = wc_members.get(arc)
        if wm is None:
            res["wheelcheck"] = None
            dis.append(f"{arc}: the loader {'loads' if loads else 'refuses'} it ({err}); wheelcheck has no member for it")
            results.append(res)
            continue
        wc_missing = set(wm["missing_libraries"])
        wc_versions = {v.split(" of ")[0] for v in wm["missing_versions"]}
        wc_unres = {(canon(u["object"]), u["symbol"], u["version"]) for u in wm["unresolved"]}
        res["wheelcheck"] = {"loads": wm["loads"], "missing_libraries": sorted(wc_missing),
                             "missing_versions": sorted(wm["missing_versions"]), "unresolved": sorted(wc_unres)[:50]}
        d = []
        if wm["loads"] != loads:
            d.append(f"loads: loader {loads} ({how}{': ' + err if err else ''}); wheelcheck {wm['loads']}")
        if wc_missing != missing:
            d.append(f"missing libraries: loader {sorted(missing)}; wheelcheck {sorted(wc_missing)}")
        if wc_versions != versions:
            d.append(f"missing versions: loader {sorted(res['loader']['missing_versions'])}; "
                     f"wheelcheck {sorted(wm['missing_versions'])}")
        if not missing and not versions:
            # wheelcheck lists at most 1000 (symbols.unbound counts them all): past that only what it lists
            truncated = wm["symbols"]["unbound"] > len(wm["unresolved"])
            extra = wc_unres - unres
            lacking = set() if truncated else unres - wc_unres
            if extra or lacking:
                d.append("unresolved symbols: only the loader " + _few(lacking) + "; only wheelcheck " + _few(extra))
        for x in d:
            dis.append(f"{arc}: {x}")
        res["agree"] = not d
        results.append(res)
    return results, dis


def _few(s, n=8):
    s = sorted(s)
    text = ", ".join(f"{o}:{sym}{'@' + v if v else ''}" for o, sym, v in s[:n])
    return f"[{text}{f', ... {len(s) - n} more' if len(s) > n else ''}]"


def run_variant(args, suite, base, meta, pkg, whl, variant, change, work):
    """One check: the variant's root, wheelcheck's verdict before the install, then the loader's."""
    ws = Workspace(base, os.path.join(work, suite.name, pkg, variant))
    try:
        root = ws.root
        applied = remove_own(root, meta, pkg)
        if change:
            applied += change(root)
        if change or applied:
            ldconfig(root)
        report = wheelcheck_json(args.wheelcheck, whl, root, os.path.join(work, "wc-cache"))
        py = report.get("python") or {}
        site = py.get("site_packages")
        if not site:  # an older wheelcheck says it only in its notes
            m = re.search(r"installed into (\S+)", " ".join(report.get("notes", [])))
            site = m.group(1) if m else None
        if not site:
            raise HarnessError(f"wheelcheck chose no Python in the root: {report.get('headline')} {report.get('notes')}")
        if py.get("executable") and os.path.basename(py["executable"]) != os.path.basename(meta["python"]):
            raise HarnessError(f"wheelcheck chose {py['executable']}, the root's is {meta['python']}")
        installed = install_wheel(whl, root, site)
        mods = [(modname(arc), dest) for dest, arc in sorted(installed.items())]
        imports = import_modules(root, meta["python"], mods)
        preload = [f"/usr/lib/{TRIPLE}/libc.so.6", meta["libpython"]] + \
            [p for p in meta["interp_libs"] if not p.endswith("/libc.so.6")]
        traces = {dest: loader_trace(root, dest, preload) for dest in installed}
        for t in traces.values():  # the files the loader mapped, resolved while the root is there
            t["loaded"] = [(soname, path, root_realpath(root, path)) for soname, path in t["loaded"]]
        results, dis = compare(root, report, installed, imports, traces)
        return {"variant": variant, "applied": applied, "verdict": report.get("verdict"), "results": results,
                "disagreements": dis, "traces": traces, "root": root}
    finally:
        ws.close(bool(args.keep))


def modname(arc):
    parts = arc.split("/")
    parts[-1] = parts[-1].split(".")[0]
    return ".".join(parts)


def drop_choice(suite, base, meta, pkg, full):
    """The library variant (b) removes: among the real files the package's modules load (the full
    variant's trace), not glibc's, not the interpreter's own, not the wheel's. In bookworm one a direct
    dependency provides first, then one reached through others; in trixie the other way round (so that
    both kinds are dropped); then libgcc_s/libstdc++; by soname within each."""
    owner_of = {}
    for p, files in meta["owner"].items():
        for f in files:
            owner_of["/" + f] = p
    interp = {root_realpath(base, p) for p in meta["interp_libs"]} | {root_realpath(base, meta["libpython"])}
    direct = set(suite.direct_deps(pkg))
    cands = {}
    site_marker = "-packages/"
    for dest, t in full["traces"].items():
        for soname, path, real in t["loaded"]:
            if site_marker in path:
                continue
            if real in interp:
                continue
            own = owner_of.get(real) or owner_of.get(path)
            if own is None or own in NEVER_DROP_PKGS:
                continue
            if own.startswith("libpython"):
                continue
            # bookworm: a direct dependency's library first; trixie: one reached only through another
            near = (own in direct) == (suite.name != "trixie")
            rank = 2 if own in RUNTIMES else 0 if near else 1
            cands.setdefault(real, (rank, soname, own, path))
    if not cands:
        return None
    real, (rank, soname, own, path) = min(cands.items(), key=lambda kv: (kv[1][0], kv[1][1]))
    return soname, own, path


def dynamic(path):
    """(DT_NEEDED names, DT_RUNPATH or DT_RPATH entries) of an ELF file, by readelf."""
    p = run(["readelf", "-dW", path])
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", p.stdout)
    paths = []
    for m in re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]", p.stdout):
        paths += [x for x in m.split(":") if x]
    return needed, paths


def runpath_choice(base, full):
    """Variant runpath-NAME: an image library whose DT_RUNPATH/DT_RPATH has $ORIGIN, with a DT_NEEDED NAME
    lying in its real folder, where the full variant's loader found NAME by a link in the loader's usual
    folders: those links removed, so that only the $ORIGIN entry could still find NAME (and $ORIGIN is
    the folder the library was opened as, which need not be its real folder). First by NAME."""
    if shutil.which("readelf") is None:
        return None
    cands = []
    for dest, t in sorted(full["traces"].items()):
        where = {soname: (path, real) for soname, path, real in t["loaded"]}
        for soname, path, real in t["loaded"]:
            if "-packages/" in path:
                continue
            needed, paths = dynamic(base + real)
            origin_dirs = [p for p in paths if "$ORIGIN" in p or "${ORIGIN}" in p]
            if not origin_dirs:
                continue
            rdir = os.path.dirname(real)
            for n in needed:
                if n not in where or not os.path.lexists(base + rdir + "/" + n):
                    continue
                npath, nreal = where[n]
                if os.path.dirname(npath) != rdir and os.path.islink(base + root_realpath(base, os.path.dirname(npath)) + "/" + n):
                    cands.append((n, rdir, real))
    return min(cands) if cands else None


def remove_links(root, name, keep_dir):
    """Removes every link named name in the loader's usual folders (not in keep_dir)."""
    gone = []
    for d in LIB_DIRS:
        p = os.path.join(root, d, name)
        if os.path.islink(p) and root_realpath(root, "/" + d) != keep_dir:
            os.unlink(p)
            gone.append(f"removed link /{d}/{name}")
    return gone


def check_package(args, suite, base, meta, pkg, work):
    """Every variant of one package. Returns a list of variant outcomes and the package's skips."""
    whl, elves, others = make_pkg_wheel(suite, pkg)
    if whl is None:
        return [], [f"{suite.name} {pkg}: {elves}"], 0
    outs, skips = [], []
    if others:
        skips.append(f"{suite.name} {pkg}: left out of the wheel, not for CPython {suite.pyver}'s import: "
                     + ", ".join(os.path.basename(o) for o in others))
    want = lambda v: not args.variant or any(v.startswith(w) for w in args.variant)  # noqa: E731

    def do(variant, change):
        t0 = time.time()
        o = run_variant(args, suite, base, meta, pkg, whl, variant, change, work)
        o["secs"] = time.time() - t0
        o["package"], o["suite"] = pkg, suite.name
        outs.append(o)
        fails = [r["module"].split("/")[-1] for r in o["results"] if not r["loader"]["loads"]]
        state = "agree" if not o["disagreements"] else f"DISAGREE ({len(o['disagreements'])})"
        log(f"  {suite.name} {pkg} [{variant}] {len(o['results'])} modules, loader refuses {len(fails)}"
            f"{' (' + ', '.join(fails[:3]) + (', ...' if len(fails) > 3 else '') + ')' if fails else ''}; "
            f"wheelcheck {o['verdict']}: {state} ({o['secs']:.1f} s)")
        return o

    full = do("full", None)
    # (b) without one real library the modules reach
    choice = drop_choice(suite, base, meta, pkg, full)
    if choice is None:
        skips.append(f"{suite.name} {pkg} [drop]: its modules reach no library beyond glibc's and the interpreter's")
    else:
        soname, own, path = choice
        if want("drop"):
            do(f"drop-{soname}", lambda root: [f"removed {x} ({own})" for x in remove_library(root, path)])
    # (b') a library found only through an image library's $ORIGIN
    rp = runpath_choice(base, full)
    if rp and want("runpath"):
        n, rdir, lib = rp
        do(f"runpath-{n}", lambda root: remove_links(root, n, rdir) + [f"(kept {rdir}/{n}, beside {lib})"])
    # (c) a partly upgraded image: the older release's libstdc++, and its versions of the direct libraries
    reaches_cxx = any(s == "libstdc++.so.6" for t in full["traces"].values() for s, _, _ in t["loaded"])
    old = [n for n in suite.old.get(pkg, []) if n in suite.old_debs]
    if not suite.older:
        skips.append(f"{suite.name} {pkg} [old]: no older release configured")
    else:
        if "libstdc++6" in old and reaches_cxx:
            if want("old-libstdc++"):
                do("old-libstdc++", lambda root: replace_packages(root, meta, suite, ["libstdc++6"]))
        elif want("old-libstdc++"):
            skips.append(f"{suite.name} {pkg} [old-libstdc++]: its modules do not reach libstdc++.so.6")
        libs = [n for n in old if n != "libstdc++6" and n in meta["owner"] and suite.old_debs[n][0] != suite.debs[n][0]]
        if libs:
            if want("old-libs"):
                do("old-libs", lambda root: replace_packages(root, meta, suite, libs))
        elif want("old-libs"):
            skips.append(f"{suite.name} {pkg} [old-libs]: none of its direct library dependencies is in "
                         f"{suite.older} under the same name with another version")
    return outs, skips, len(elves)


# --- main ------------------------------------------------------------------------------------------------

KNOWN = ("bookworm", "python3-pil", "old-libstdc++", "PIL/_imaging",
         "version `GLIBCXX_3.4.29' not found (required by", "libLerc.so.4")


def open_suite(name):
    """The fetched suite `name`, or None after its `skipped: ...` line (the caller stops with 77) when what
    fetch.sh left is incomplete."""
    try:
        return Suite(name)
    except OSError as e:
        print(f"skipped: {name}: the fetched state is incomplete ({e}); run tests/realworld/fetch.sh")
        return None


def fetch_suites(name, suites, extra=(), echo=False):
    """fetch.sh for `suites` (and `extra` arguments), as the tier's scripts call it, its output printed with
    `echo`: None to go on, or the exit code to stop with (77 with its `skipped: ...` line when the archive is
    unreachable and the cache incomplete, 2 when it failed)."""
    p = subprocess.run(["bash", os.path.join(HERE, "fetch.sh")] + sum([["--suite", s] for s in suites], []) +
                       list(extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if echo:
        for line in p.stdout.splitlines():
            print("  " + line)
    if p.returncode == 77:
        print(next((l for l in p.stdout.splitlines() if l.startswith("skipped:")), "skipped: fetch.sh skipped"))
        return 77
    if p.returncode != 0:
        print(f"{name}: fetch.sh failed ({p.returncode}): {p.stdout.strip()[-800:]}")
        return 2
    return None


def preflight(args, name, needs_root, ci_fails=False):
    """What every tier script checks first: the wheelcheck it is given (made absolute in args), and root with chroot
    (`needs_root` says why). An exit code to stop with (2 no binary, 77 skipped, 1 under CI=true where ci_fails),
    or None to go on."""
    if not os.path.exists(args.wheelcheck):
        print(f"{name}: no wheelcheck at {args.wheelcheck}")
        return 2
    args.wheelcheck = os.path.abspath(args.wheelcheck)
    if os.geteuid() != 0 or run(["chroot", "/", "true"]).returncode != 0:
        if ci_fails and os.environ.get("CI") == "true":
            print(f"FAIL: {needs_root} (CI=true: a refused chroot is a failure)")
            return 1
        print(f"skipped: {needs_root}")
        return 77
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--suite", action="append", choices=["bookworm", "trixie"])
    ap.add_argument("--only", action="append", metavar="PKG", help="only this package (repeatable)")
    ap.add_argument("--variant", action="append", metavar="V",
                    help="only variants starting so: full is always run (drop, old-libstdc++, old-libs)")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep every variant's root (overlays stay mounted)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--json", metavar="FILE", help="write every module's both sides to FILE")
    ap.add_argument("--no-fetch", action="store_true", help="use the cache as it is (never run fetch.sh)")
    ap.add_argument("--list", metavar="FILE", help="another package list for fetch.sh (default packages.txt)")
    args = ap.parse_args()
    t0 = time.time()
    suites = args.suite or ["bookworm", "trixie"]
    stop = preflight(args, "realworld", "the real-binaries tier needs root (chroot into its roots)", ci_fails=True)
    if stop is not None:
        return stop
    print(f"realworld: suites {', '.join(suites)}, cache {CACHE}, {args.jobs} jobs")
    if not args.no_fetch:
        stop = fetch_suites("realworld", suites, ["--list", args.list] if args.list else [], echo=True)
        if stop is not None:
            return stop
    print(f"  fetched and unpacked: {time.time() - t0:.1f} s", flush=True)
    work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="wheelcheck-realworld-")
    os.makedirs(work, exist_ok=True)
    # a snapshot of the binary under test: a rebuild during the run does not change it under the checks
    snap = os.path.join(work, "wheelcheck")
    for attempt in range(10):
        try:
            shutil.copy2(args.wheelcheck, snap)
            v = run([snap, "--version"])
            if v.returncode != 0:
                raise OSError(f"--version exited {v.returncode}")
            break
        except (OSError, subprocess.SubprocessError) as e:  # being rebuilt: wait for it
            print(f"  {args.wheelcheck}: {e}; retrying in 30 s", flush=True)
            time.sleep(30)
    else:
        print(f"realworld: cannot read {args.wheelcheck}")
        return 2
    print(f"  wheelcheck: {args.wheelcheck} ({v.stdout.strip().splitlines()[0] if v.stdout.strip() else '?'}; built "
          f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(os.path.getmtime(snap)))}), run from a snapshot", flush=True)
    args.wheelcheck_given, args.wheelcheck = args.wheelcheck, snap
    Workspace.use_overlay = overlay_works(work)
    if args.keep:
        KEEP_MOUNTS.append(work)
    print(f"  work {work} ({'overlay mounts' if Workspace.use_overlay else 'hard-link copies'} over each suite's base root)")
    outs, skips, errors, modules, pkgs = [], [], [], 0, 0
    try:
        loaded = []
        for s in suites:
            suite = open_suite(s)
            if suite is None:
                return 77
            skips += [f"{s} {x}" for x in suite.skipped]
            t1 = time.time()
            base, meta = base_root(suite)
            print(f"  {s}: base root {base}: {len(meta['packages'])} packages, Python {meta['python_version']}, "
                  f"{len(meta['alternatives'])} alternatives ({time.time() - t1:.1f} s)", flush=True)
            for a in meta["alternatives"]:
                if re.match(r"\S+\.so\.\d+ ->", a):  # the shared libraries' alternatives
                    print("    " + a)
            chosen = [p for p in suite.packages if not args.only or p in args.only]
            loaded.append((suite, base, meta, chosen))
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = {}
            # the biggest packages first, so that the two lanes end together
            tasks = [(suite, base, meta, p) for suite, base, meta, chosen in loaded for p in chosen]
            tasks.sort(key=lambda t: -len(t[0].closures[t[3]]) - (200 if "scipy" in t[3] or "numpy" in t[3] else 0))
            for suite, base, meta, p in tasks:
                futs[pool.submit(check_package, args, suite, base, meta, p, work)] = (suite.name, p)
            for fut in concurrent.futures.as_completed(futs):
                s, p = futs[fut]
                try:
                    o, sk, n = fut.result()
                except Exception as e:  # a harness failure is a failure, never a pass
                    errors.append(f"{s} {p}: {type(e).__name__}: {e}")
                    log(f"ERROR {s} {p}: {e}")
                    continue
                outs += o
                skips += sk
                modules += n
                pkgs += 1 if o else 0
    finally:
        if not args.keep:
            _unmount_all()
            shutil.rmtree(work, ignore_errors=True)
    # the known case of the issue must be among the checks, with the loader's answer it had
    s, pkg, variant, module, text, lib = KNOWN
    known = [r for o in outs if (o["suite"], o["package"], o["variant"]) == (s, pkg, variant)
             for r in o["results"] if r["module"].startswith(module)]
    if "bookworm" in suites and (not args.only or pkg in args.only) and (not args.variant or any(variant.startswith(v) for v in args.variant)):
        if not known:
            errors.append(f"the known case ({pkg} in {s} with {variant}, {module}) was not checked")
        elif not any(text in r["loader"]["error"] and lib in r["loader"]["error"] for r in known):
            errors.append(f"the known case ({pkg} in {s} with {variant}): CPython's import said "
                          f"{known[0]['loader']['error']!r}, not {text} ...{lib}")
        else:
            print(f"  known case: {pkg} in {s} [{variant}] {known[0]['module']}: {known[0]['loader']['error']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{k: v for k, v in o.items() if k not in ("traces",)} for o in outs], f, indent=1, default=list)
    disagreeing = [o for o in outs if o["disagreements"]]
    print()
    for o in sorted(disagreeing, key=lambda o: (o["suite"], o["package"], o["variant"])):
        print(f"DISAGREE {o['suite']} {o['package']} [{o['variant']}]"
              + (f" ({'; '.join(o['applied'][:3])})" if o["applied"] else ""))
        for d in o["disagreements"]:
            print("    " + d)
        only = f"--suite {o['suite']} --only {o['package']}" + \
            (f" --variant {o['variant'].split('-')[0] if o['variant'].startswith('drop') else o['variant']}" if o["variant"] != "full" else "")
        print(f"    replay: {sys.argv[0]} --wheelcheck {args.wheelcheck_given} {only} --keep /tmp/rw-keep")
    for e in errors:
        print("ERROR " + e)
    member_checks = sum(len(o["results"]) for o in outs)
    agree_m = sum(1 for o in outs for r in o["results"] if r.get("agree"))
    variants = {}
    for o in outs:
        k = o["variant"].split("-")[0] if o["variant"].startswith("drop") else o["variant"]
        variants[k] = variants.get(k, 0) + 1
    print(f"\nrealworld: suites {', '.join(suites)}; {pkgs} packages, {modules} extension modules; "
          f"{len(outs)} checks ({', '.join(f'{k} {v}' for k, v in sorted(variants.items()))}); "
          f"{member_checks} module checks: {agree_m} agree, {member_checks - agree_m} disagree "
          f"(in {len(disagreeing)} checks); {len(errors)} harness errors; {len(skips)} skips; "
          f"{time.time() - t0:.0f} s")
    for s in sorted(skips):
        print("  skip: " + s)
    if args.keep and Workspace.mounts:
        print(f"  kept {len(Workspace.mounts)} overlay roots under {work}; unmount: "
              f"findmnt -rn -o TARGET | grep '^{work}/' | xargs -r umount")
    if errors:
        return 2
    return 1 if disagreeing else 0


if __name__ == "__main__":
    sys.exit(main())

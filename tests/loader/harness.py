#!/usr/bin/env python3
"""The loader harness: wheelcheck's verdict against glibc's own loader, in real roots.

  harness.py --wheelcheck BIN [--cases N] [--start S0] [--seed S] [--case K] [--arch x86_64|aarch64] [--jobs J]
             [--keep DIR] [--wheels W... --roots R...]

For each generated case (cases.py): compile its libraries with gcc, lay out a root from this machine's
real glibc, libstdc++ (and, for Python cases, Debian's python3.11 with its standard library), write the
wheel, and ask wheelcheck (`wheelcheck WHEEL --image ROOT --json`) before the wheel is installed. Then
install the wheel into the root's site-packages as pip would and let the root's own loader decide:
  1. the probe (probe.c, or probe.py under the root's CPython) dlopens each member in a child process,
     RTLD_NOW | RTLD_LOCAL, after what the wheel's Requires-Dist distributions leave loaded; an
     executable member is run. Loads, or the loader's first error.
  2. the loader's trace (LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=yes ld.so MEMBER, as `ldd -r`)
     lists every missing library, every version not found and every unresolved symbol, not only the
     first; the preloaded distributions (and libpython, for Python roots) are given as LD_PRELOAD.
Member by member, wheelcheck's members[] must agree: loads or not, missing libraries, missing versions
("V of FILE") and the set of unresolved (object, symbol, version). Every disagreement prints both sides and
fails. The requester of a missing version or an unresolved symbol may be any object the member's load
reaches: a wheel member is named by its name in the wheel, an image library or a distribution's library by
its path in the root (symlinks resolved inside the root on both sides: the loader names an object by the
path it opened). A program (a NAME-1.0.data/scripts file, or any member that is ET_EXEC or a DF_1_PIE
object with a PT_INTERP) is run, not dlopened, and must be a member of kind "executable"; it exits with
the case's exe_rc. The trace is given, as LD_PRELOAD, everything the Requires-Dist distributions' import
left loaded in the probe (`probe --list`: what their own search paths found too). When that import itself
fails (the probe's "preload-fail"), the member is never reached: wheelcheck must refuse it and have a
finding that names the library the import misses; nothing else of the member is compared.

Inside a root the loader runs by chroot (x86_64; root is required, and in CI a refused chroot is a
failure) or by qemu-aarch64-static -L ROOT (aarch64; no chroot needed).
"""
import argparse, concurrent.futures, json, os, re, shutil, subprocess, sys, tempfile, time
import zipfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import cases as gen  # noqa: E402
from make_wheel import write_wheel as pack_wheel  # noqa: E402  (the tests' one wheel writer)
import compile_cache  # noqa: E402  (compiles kept by content)

HERE = os.path.dirname(os.path.abspath(__file__))
TRIPLE = gen.TRIPLE
INTERP = {"x86_64": "/lib64/ld-linux-x86-64.so.2", "aarch64": "/lib/ld-linux-aarch64.so.1"}
CC = {"x86_64": {"gcc": "gcc", "g++": "g++", "i686": "i686-linux-gnu-gcc", "aarch64": "aarch64-linux-gnu-gcc"},
      "aarch64": {"gcc": "aarch64-linux-gnu-gcc", "g++": "aarch64-linux-gnu-g++", "gcc-x86_64": "gcc"}}
PY_SITE = "/usr/local/lib/python3.11/dist-packages"  # Debian's pip site, the first site-packages
STUB_SITE = "/usr/lib/python3.11/site-packages"  # roots without an interpreter: a bare site folder


class HarnessError(Exception):
    pass




def run(cmd, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("text", True)
    return subprocess.run(cmd, **kw)


def must(cmd, **kw):
    p = run(cmd, **kw)
    if p.returncode != 0:
        raise HarnessError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[:2000]}")
    return p


# --- base roots -------------------------------------------------------------------------------------------

def host_libs(arch, python):
    if arch == "x86_64":
        d = "/usr/lib/x86_64-linux-gnu"
        names = ["libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libdl.so.2", "libpthread.so.0",
                 "ld-linux-x86-64.so.2"]
        if python:
            names += ["libz.so.1", "libexpat.so.1", "libffi.so.8", "libpython3.11.so.1.0"]
        return d, names
    d = "/usr/aarch64-linux-gnu/lib"
    return d, ["libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libdl.so.2", "libpthread.so.0",
               "ld-linux-aarch64.so.1"]


def make_base(work, arch, layout, python):
    """A root folder laid out as Debian 12 lays out / (usr-merged, multiarch), from this machine's files."""
    base = os.path.join(work, f"base-{arch}-{layout}-{'py' if python else 'nopy'}")
    if os.path.isdir(base):
        return base
    tmp = base + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    trip = TRIPLE[arch]
    libdir = os.path.join(tmp, "usr/lib", trip)
    os.makedirs(libdir)
    for d in ["usr/bin", "usr/lib64", "etc/ld.so.conf.d", "var/cache/ldconfig", "tmp", "opt", "usr/local/lib"]:
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
    os.symlink("usr/lib", os.path.join(tmp, "lib"))
    os.symlink("usr/bin", os.path.join(tmp, "bin"))
    src_dir, names = host_libs(arch, python)
    interp = os.path.basename(INTERP[arch])
    for n in names:
        real = os.path.realpath(os.path.join(src_dir, n))
        if n == interp and layout == "interp-lib64":
            os.makedirs(os.path.join(tmp, "lib64"), exist_ok=True)
            shutil.copy2(real, os.path.join(tmp, "lib64", n))
            continue
        shutil.copy2(real, os.path.join(libdir, n))
    if arch == "x86_64" and layout != "interp-lib64":
        os.symlink("usr/lib64", os.path.join(tmp, "lib64"))
        os.symlink(f"../lib/{trip}/{interp}", os.path.join(tmp, "usr/lib64", interp))
    if arch == "aarch64":  # PT_INTERP /lib/ld-linux-aarch64.so.1, a link into the multiarch folder
        os.symlink(f"{trip}/{interp}", os.path.join(tmp, "usr/lib", interp))
    with open(os.path.join(tmp, "etc/ld.so.conf"), "w") as f:
        f.write("include /etc/ld.so.conf.d/*.conf\n")
    with open(os.path.join(tmp, f"etc/ld.so.conf.d/{trip}.conf"), "w") as f:
        f.write(f"# Multiarch support\n/usr/local/lib/{trip}\n/lib/{trip}\n/usr/lib/{trip}\n")
    with open(os.path.join(tmp, "etc/ld.so.conf.d/libc.conf"), "w") as f:
        f.write("/usr/local/lib\n")
    if python:
        shutil.copy2("/usr/bin/python3.11", os.path.join(tmp, "usr/bin/python3.11"))
        # The standard library without the test suite and the site folders (hard links would cross file systems).
        shutil.copytree("/usr/lib/python3.11", os.path.join(tmp, "usr/lib/python3.11"), symlinks=True,
                        ignore=shutil.ignore_patterns("test", "idlelib", "tkinter", "site-packages", "dist-packages",
                                                      "__pycache__", "ensurepip", "lib2to3", "pydoc_data"))
        os.makedirs(os.path.join(tmp, PY_SITE.lstrip("/")))
        shutil.copy2(os.path.join(HERE, "probe.py"), os.path.join(tmp, "probe.py"))
    else:
        os.makedirs(os.path.join(tmp, STUB_SITE.lstrip("/")))
    os.rename(tmp, base)
    return base


def build_probe(work, arch):
    out = os.path.join(work, f"probe-{arch}")
    if not os.path.exists(out):
        must([CC[arch]["gcc"], "-O1", "-o", out, os.path.join(HERE, "probe.c"), "-ldl"])
    return out


# --- ELF facts and paths inside a root ---------------------------------------------------------------------

def elf_info(path):
    """The few facts of an ELF file the harness needs: e_type, PT_INTERP, DT_SONAME, DT_FLAGS_1 (None when it
    is not an ELF file)."""
    import struct
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or len(data) < 64:
        return None
    wide, end = data[4] == 2, "<" if data[5] == 1 else ">"
    e_type = struct.unpack_from(end + "H", data, 16)[0]
    if wide:
        phoff, = struct.unpack_from(end + "Q", data, 32)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 54)
    else:
        phoff, = struct.unpack_from(end + "I", data, 28)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 42)
    loads, dynamic, interp = [], None, None
    for i in range(phnum):
        o = phoff + i * phentsize
        if wide:
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(end + "IIQQQQ", data, o)
        else:
            p_type, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(end + "IIIII", data, o)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:
            dynamic = (p_offset, p_filesz)
        elif p_type == 3:
            interp = data[p_offset:p_offset + p_filesz].split(b"\0")[0].decode()
    info = {"type": e_type, "interp": interp, "soname": None, "flags_1": 0}
    if dynamic:
        fmt, size = (end + "qQ", 16) if wide else (end + "iI", 8)
        strtab, soname = None, None
        for o in range(dynamic[0], dynamic[0] + dynamic[1], size):
            tag, val = struct.unpack_from(fmt, data, o)
            if tag == 0:
                break
            if tag == 5:
                strtab = val
            elif tag == 14:
                soname = val
            elif tag == 0x6ffffffb:
                info["flags_1"] = val
        if strtab is not None and soname is not None:
            for vaddr, off, size_ in loads:
                if vaddr <= strtab < vaddr + size_:
                    start = off + strtab - vaddr + soname
                    info["soname"] = data[start:data.index(b"\0", start)].decode()
    return info


def is_program(path):
    """A program, run and not dlopened: ET_EXEC, or ET_DYN marked DF_1_PIE, with a PT_INTERP."""
    info = elf_info(path)
    return bool(info and info["interp"] and (info["type"] == 2 or (info["type"] == 3 and info["flags_1"] & 0x08000000)))


def canon(root, path):
    """PATH as the root's own "/" resolves it: every symlink followed inside the root (an absolute link target
    is the root's path, not this machine's)."""
    parts = [p for p in path.split("/") if p]
    out = []
    hops = 0
    while parts:
        p = parts.pop(0)
        if p == ".":
            continue
        if p == "..":
            if out:
                out.pop()
            continue
        full = root + "/" + "/".join(out + [p])
        if os.path.islink(full) and hops < 40:
            hops += 1
            target = os.readlink(full)
            if target.startswith("/"):
                out = []
            parts = [t for t in target.split("/") if t] + parts
            continue
        out.append(p)
    return "/" + "/".join(out)


# --- one case ---------------------------------------------------------------------------------------------

def c_source(lib, modname):
    lines = ["#include <stddef.h>"] if lib.cc not in ("g++",) else []
    ext_c = 'extern "C" ' if lib.cc == "g++" else ""
    for u in lib.uses:
        lines.append(f"{ext_c}int {u}(void);")
    for w in lib.weak:
        lines.append(f"{ext_c}int {w}(void) __attribute__((weak));")
    lines.append(lib.extra)
    calls = " + ".join([f"{u}()" for u in lib.uses] + [f"({w} ? {w}() : 0)" for w in lib.weak]) or "0"
    for d in lib.defs:
        lines.append(f"{ext_c}int {d}(void) {{ return 1; }}")
    if lib.kind == "exe":
        return "\n".join(lines) + "\n"
    lines.append(f"{ext_c}int anchor_{lib.key}(void) {{ return {calls}; }}")
    if lib.kind == "ext":
        lines.append(f"{ext_c}void* PyInit_{modname}(void) {{ (void)anchor_{lib.key}(); return 0; }}")
    return "\n".join(lines) + "\n"


def compile_case(case, bdir):
    built = {}
    for lib in case.libs:
        modname = os.path.basename(lib.place or lib.key).split(".")[0]
        lang = "cpp" if lib.cc == "g++" else "c"
        src = os.path.join(bdir, f"{lib.key}.{lang}")
        with open(src, "w") as f:
            f.write(c_source(lib, modname))
        out = os.path.join(bdir, f"{lib.key}.out")
        cmd = [CC[case.arch][lib.cc], "-O0", "-w", *lib.cflags, "-o", out, src]
        if lib.kind != "exe":
            cmd[1:1] = ["-shared", "-fPIC"]
        if lib.soname:
            cmd.append(f"-Wl,-soname,{lib.soname}")
        if lib.vs:
            vs = os.path.join(bdir, f"{lib.key}.map")
            with open(vs, "w") as f:
                f.write(lib.vs)
            cmd.append(f"-Wl,--version-script={vs}")
        cmd.append("-Wl,--no-as-needed")
        for n in lib.needs:
            cmd.append(built[n])
        if lib.rpath:
            cmd += ["-Wl,--disable-new-dtags", "-Wl,-rpath," + ":".join(lib.rpath)]
        if lib.runpath:
            cmd += ["-Wl,--enable-new-dtags", "-Wl,-rpath," + ":".join(lib.runpath)]
        cmd += lib.ldflags
        if lib.rpath and lib.runpath:
            raise HarnessError(f"{lib.key}: GNU ld writes DT_RPATH or DT_RUNPATH, not both")
        if lib.kind == "exe" and lib.cc == "gcc":
            cmd += ["-Wl,--allow-shlib-undefined"]
        compile_cache.compile_kept(cmd, bdir, out, [src] + ([vs] if lib.vs else []) + [built[n] for n in lib.needs],
                                   must)
        built[lib.key] = out
    return built


def write_wheel(case, built, path):
    files = [(lib.place[len("wheel:"):], built[lib.key]) for lib in case.libs
             if lib.place and lib.place.startswith("wheel:")]
    return pack_wheel(path, files, requires_dist=case.requires)


def install_path(site, arc):
    m = re.match(r"[^/]+\.data/(purelib|platlib|scripts|data)/(.*)", arc)
    if not m:
        return site + "/" + arc
    prefix = os.path.normpath(site + "/../../..")
    return {"purelib": site, "platlib": site, "scripts": prefix + "/bin", "data": prefix}[m.group(1)] + "/" + \
        m.group(2)


def root_path(site, place, built_path=None):
    """An image place ("/abs", "dist:REL", or "asbuilt": the absolute path it was built at, which is what a
    library without DT_SONAME is named by in its consumers' DT_NEEDED) as a path of the root."""
    if place == "asbuilt":
        return built_path
    return site + "/" + place[5:] if place.startswith("dist:") else place


def dist_files(case, d):
    """The site-packages-relative files of distribution d: its libraries and their links."""
    prefix = f"dist:{d.folder or d.name}/"
    out = []
    for lib in case.libs:
        if lib.place and lib.place.startswith(prefix):
            out.append(lib.place[5:])
        for link in lib.links:
            path = link.split("->")[0]
            if path.startswith(prefix):
                out.append(path[5:])
    return out


def place_file(src, dest):
    """Copies src to dest as a new file: a case's root shares the base's files by hard link, and writing
    into one of them would change the base under every other case."""
    if os.path.lexists(dest):
        os.unlink(dest)
    shutil.copy2(src, dest)


def lay_out(case, built, root, site):
    """The image's own files and distributions (before wheelcheck looks), and the ld.so cache."""
    for lib in case.libs:
        if not lib.place or lib.place.startswith("wheel:"):
            continue
        dest = root_path(site, lib.place, built[lib.key])
        full = root + dest
        os.makedirs(os.path.dirname(full), exist_ok=True)
        place_file(built[lib.key], full)
    for lib in case.libs:
        # Links (after every file): "PATH" links to the library's place, "PATH->TARGET" to TARGET.
        for link in lib.links:
            path, _, target = link.partition("->")
            path, target = root_path(site, path), root_path(site, target or lib.place)
            full = root + path
            os.makedirs(os.path.dirname(full), exist_ok=True)
            if os.path.lexists(full):
                os.unlink(full)
            if lib.abs_links and case.arch == "x86_64":
                os.symlink(target, full)
            else:
                os.symlink(os.path.relpath(target, os.path.dirname(path)), full)
    for d in case.dists:
        info = f"{root}{site}/{d.name}-1.0.dist-info"
        os.makedirs(info, exist_ok=True)
        with open(info + "/METADATA", "w") as f:
            f.write(f"Metadata-Version: 2.1\nName: {d.meta_name or d.name}\nVersion: 1.0\n")
        if d.top_level:
            with open(info + "/top_level.txt", "w") as f:
                f.write((d.folder or d.name).split("/")[0] + "\n")
        if d.record:
            with open(info + "/RECORD", "w") as f:
                for rel in dist_files(case, d):
                    f.write(f"{rel},,\n")
                f.write(f"{d.name}-1.0.dist-info/METADATA,,\n{d.name}-1.0.dist-info/RECORD,,\n")
    if case.conf:
        with open(root + "/etc/ld.so.conf.d/case.conf", "w") as f:
            f.write("\n".join(case.conf) + "\n")
    if case.layout != "nocache":
        cmd = ["ldconfig", "-r", root] + ([] if case.ldconfig_links else ["-X"])
        if case.arch != "x86_64":
            cmd = ["ldconfig", "-r", root, "-X"] if not case.ldconfig_links else ["ldconfig", "-r", root]
        must(cmd)


def install_wheel(case, built, root, site):
    installed = {}
    for lib in case.libs:
        if lib.place and lib.place.startswith("wheel:"):
            arc = lib.place[len("wheel:"):]
            dest = install_path(site, arc)
            os.makedirs(os.path.dirname(root + dest), exist_ok=True)
            place_file(built[lib.key], root + dest)
            os.chmod(root + dest, 0o755)
            installed[dest] = arc
    return installed


def in_root(root, arch, argv, env):
    """Runs argv inside the root under its own loader."""
    if arch == "x86_64":
        def enter():
            os.chroot(root)
            os.chdir("/")
        return run(argv, env=env, preexec_fn=enter, timeout=60)
    # qemu-user: -L makes the root the prefix for the interpreter and every absolute path the loader opens;
    # -E sets the guest's environment (the host's stays qemu's own).
    prog = argv[0]
    host_prog = root + prog if prog.startswith("/") else prog
    return run(["qemu-aarch64-static", "-L", root] + sum([["-E", f"{k}={v}"] for k, v in env.items()], []) +
               [host_prog] + argv[1:], timeout=120)


UNDEF = re.compile(r"^undefined symbol: ([^\t,]+)(?:, version (\S+))?\t\((.*)\)$")
VERSION = re.compile(r"^(.*): (.*): version `([^']+)' not found \(required by (.*)\)$")
NOTFOUND = re.compile(r"^\t(\S+) => not found$")
FOUND = re.compile(r"^\t(\S+) => (\S+) \(0x[0-9a-f]+\)$")


def loader_trace(case, root, member, preload, env):
    e = dict(env)
    e.update({"LD_TRACE_LOADED_OBJECTS": "1", "LD_WARN": "yes", "LD_BIND_NOW": "yes"})
    if preload:
        e["LD_PRELOAD"] = ":".join(preload)
    p = in_root(root, case.arch, [INTERP[case.arch], member], e)
    missing, undefined, versions = set(), set(), set()
    for line in p.stdout.splitlines():
        m = NOTFOUND.match(line)
        if m:
            missing.add(m.group(1))
    for line in p.stderr.splitlines():
        m = UNDEF.match(line)
        if m:
            undefined.add((m.group(3), m.group(1), m.group(2) or ""))
            continue
        m = VERSION.match(line)
        if m:
            versions.add((m.group(4), m.group(3), m.group(2)))  # (requester, version, provider)
    return missing, undefined, versions, p


def run_probe(case, root, members, preload, env, exes):
    results = {}
    libs = [m for m in members if m not in exes]
    if libs:
        if case.python:
            argv = ["/usr/bin/python3.11", "-S", "/probe.py"]
        else:
            argv = ["/probe"]
        for p in preload:
            argv += ["--preload", p]
        argv += ["--"] + libs
        p = in_root(root, case.arch, argv, env)
        for line in p.stdout.splitlines():
            parts = line.split("\t")
            if len(parts) >= 2:
                err = parts[2] if len(parts) > 2 else ""
                if parts[1] == "preload-fail":
                    err = "preload-fail: " + err  # `import DIST` itself failed: the member was never loaded
                results[parts[0]] = (parts[1] == "ok", err)
        for m in libs:
            if m not in results:
                raise HarnessError(f"the probe said nothing of {m}: rc {p.returncode}, {p.stderr.strip()[:500]}")
    for m in members:
        if m in exes:
            e = dict(env)
            e["LD_BIND_NOW"] = "1"
            # Run by its interpreter: $ORIGIN of a program comes from /proc/self/exe, which a chroot
            # without /proc lacks; given on ld.so's command line, its path is known.
            p = in_root(root, case.arch, [INTERP[case.arch], m], e)
            results[m] = (p.returncode == case.exe_rc and p.stdout.startswith("ok"),
                          p.stderr.strip() or f"exit status {p.returncode}, output {p.stdout.strip()[:200]!r}")
    return results


def wheelcheck_json(wc, whl, root, env, cache):
    cmd = [wc, whl, "--image", root, "--json", "-q", "--cache-dir", cache]
    for k, v in env.items():
        cmd += ["--image-env", f"{k}={v}"]
    for attempt in range(11):
        try:
            p = run(cmd)
            break
        except OSError as e:  # the binary is being rebuilt (missing, not yet executable, busy): wait for it
            if attempt == 10:
                raise HarnessError(f"cannot run {wc}: {e}")
            time.sleep(30)
    if p.returncode not in (0, 1, 3, 4):
        raise HarnessError(f"wheelcheck exited {p.returncode}: {p.stderr.strip()[:2000]}")
    return json.loads(p.stdout)


def glibc_platform(work, arch):
    """What this machine's glibc expands $PLATFORM to (it depends on the CPU), from LD_DEBUG's search path."""
    if arch != "x86_64":
        return arch
    src = os.path.join(work, "platform.c")
    with open(src, "w") as f:
        f.write("int missing(void);\nint main(void) { return missing(); }\n")
    lib = os.path.join(work, "libmissing.so")
    must(["gcc", "-shared", "-fPIC", "-o", lib, "-x", "c", "-", "-Wl,-soname,libmissing.so"], input="int missing(void){return 0;}\n")
    exe = os.path.join(work, "platform")
    must(["gcc", "-o", exe, src, lib, "-Wl,--disable-new-dtags", "-Wl,-rpath,/nonexistent/$PLATFORM"])
    os.unlink(lib)
    p = run([exe], env={"LD_DEBUG": "libs"})
    m = re.search(r"/nonexistent/([^/:\s]+)", p.stderr)
    if not m:
        raise HarnessError("cannot tell glibc's $PLATFORM: " + p.stderr[:500])
    return m.group(1)


def compare(case, report, installed, probe, traces, platform, root=None, exes=()):
    """Member by member: the loader's answers against wheelcheck's. Returns the disagreements.

    Objects are named as wheelcheck names them: a wheel member by its name in the wheel, any other object
    (an image library, a distribution's library) by its path in the root, symlinks resolved inside the root
    on both sides (the loader names an object by the path it opened it by)."""
    out = []
    # Needs found only under some $PLATFORM values: where this CPU's value is not among them, wheelcheck
    # answers for another CPU; the loader must then fail to find the library, and nothing else is compared.
    other_cpu = {}
    for f in report["findings"]:
        if f["kind"] == "cpu-platform" and platform not in f["candidates"]:
            for m in f["loaded_by"] + [f["member"]]:
                other_cpu[m] = f["library"]
    wc_members = {m["path"]: m for m in report["members"]}
    arc_of = {dest: arc for dest, arc in installed.items()}
    if root is not None:
        arc_of.update({canon(root, dest): arc for dest, arc in installed.items()})

    def who(path):
        """The loader's name of an object (the path it opened) as wheelcheck names it."""
        if path in arc_of:
            return arc_of[path]
        if root is None:
            return path
        c = canon(root, path)
        return arc_of.get(c, c)

    def wc_who(name):
        return canon(root, name) if root is not None and name.startswith("/") else name

    def provider_name(path):
        """What a requester's DT_VERNEED names a provider by: its DT_SONAME, else its file name."""
        info = elf_info(root + canon(root, path)) if root is not None else None
        return (info or {}).get("soname") or os.path.basename(path)

    for dest, arc in sorted(installed.items()):
        if dest not in probe:
            continue
        loads, err = probe[dest]
        wm = wc_members.get(arc)
        if wm is None:
            # A library another member needs is judged inside that member's load; an extension module or
            # a program must be a member of its own.
            if ".cpython-" in arc or ".data/scripts/" in arc or dest in exes:
                out.append(f"{arc}: the loader {'loads' if loads else 'refuses'} it; wheelcheck did not check it")
            continue
        if dest in exes and wm.get("kind") != "executable":
            out.append(f"{arc}: a program (PT_INTERP, {'PIE' if is_program(root + dest) and elf_info(root + dest)['type'] == 3 else 'ET_EXEC'}); "
                       f"wheelcheck's kind {wm.get('kind')!r}, not 'executable'" if root is not None else
                       f"{arc}: a program; wheelcheck's kind {wm.get('kind')!r}")
        missing, undefined, versions, _ = traces[dest]
        if arc in other_cpu:
            if loads or other_cpu[arc] not in missing | {err.split(":")[0]}:
                out.append(f"{arc}: wheelcheck finds {other_cpu[arc]} only on another CPU's $PLATFORM than "
                           f"{platform}, yet the loader here {'loads it' if loads else 'fails otherwise: ' + err}")
            continue
        # The trace does not print every missing library (an object marked DF_1_NODEFLIB gets no "not
        # found" line); dlopen's own error names the first.
        m = re.match(r"(?:.*: error while loading shared libraries: )?([^ :]+): cannot open shared object file", err)
        if not loads and m:
            missing = missing | {m.group(1)}
        wc_missing = set(wm["missing_libraries"])
        wc_unres = {(wc_who(u["object"]), u["symbol"], u["version"]) for u in wm["unresolved"]}
        wc_versions = {tuple(v.split(" of ", 1)) if " of " in v else (v, "") for v in wm["missing_versions"]}
        # Every requester counts, the member's own libraries and the image's and distributions' alike.
        ld_unres = {(who(p), s, v) for (p, s, v) in undefined}
        ld_versions = {(v, provider_name(prov)) for (req, v, prov) in versions}
        if wm["loads"] != loads:
            out.append(f"{arc}: loads? loader {loads} ({err}); wheelcheck {wm['loads']}")
        if err.startswith("preload-fail: "):
            # A Requires-Dist distribution cannot be imported: the loader never reaches the member, so its own
            # libraries, versions and symbols are not observed. wheelcheck must refuse it (above) and say why:
            # a finding that names what the distribution's load misses.
            m = re.search(r"([^ :/]+): cannot open shared object file", err)
            if m and not any(m.group(1) in (f.get("library", ""), f.get("explanation", "")) or
                             m.group(1) in f.get("explanation", "") for f in report["findings"]):
                out.append(f"{arc}: the required distribution does not load ({err}); no wheelcheck finding names "
                           f"{m.group(1)}")
            continue
        if wc_missing != missing:
            out.append(f"{arc}: missing libraries: loader {sorted(missing)}; wheelcheck {sorted(wc_missing)}")
        if wc_versions != ld_versions:
            required = sorted({f"{v} of {provider_name(prov)} (required by {who(req)})" for (req, v, prov) in versions})
            out.append(f"{arc}: missing versions: loader {required}; wheelcheck {sorted(wm['missing_versions'])}")
        if missing:
            # With a library missing the loader fakes its map and relocates nothing, so it lists no
            # symbols; only wheelcheck's own bookkeeping of them is left, and it is not compared.
            pass
        elif wc_unres != ld_unres:
            out.append(f"{arc}: unresolved symbols: loader {sorted(ld_unres)}; wheelcheck {sorted(wc_unres)}")
    return out


def run_case(args, case, work):
    t0 = time.time()
    cdir = os.path.join(work, f"case-{case.number:04d}")
    shutil.rmtree(cdir, ignore_errors=True)
    bdir = os.path.join(cdir, "build")
    os.makedirs(bdir)
    built = compile_case(case, bdir)
    base = make_base(work, case.arch, "interp-lib64" if case.layout == "interp-lib64" else "debian", case.python)
    root = os.path.join(cdir, "root")
    # Hard links, not copies: the base is the same in every case (the Python stdlib is most of it), and what
    # a case lays out over it replaces a file (place_file), never writes into one the base shares.
    must(["cp", "-al", base, root])
    if case.layout == "nocache":
        pass
    shutil.copy2(os.path.join(work, f"probe-{case.arch}"), os.path.join(root, "probe"))
    site = PY_SITE if case.python else STUB_SITE
    lay_out(case, built, root, site)
    whl = write_wheel(case, built, os.path.join(cdir, f"{case.wheel}-1.0-cp311-cp311-linux_{case.arch}.whl"))
    report = wheelcheck_json(args.wheelcheck, whl, root, case.env, os.path.join(work, "cache"))
    notes = " ".join(report.get("notes", []))
    if f"installed into {site}" not in notes:
        raise HarnessError(f"wheelcheck installs elsewhere than {site}: {notes}")
    installed = install_wheel(case, built, root, site)
    preload = []
    # What `import DIST` leaves loaded, for each Requires-Dist distribution of the case (not the others: an
    # nvidia-like distribution is loaded only through what needs it).
    wanted = {norm_dist(re.split(r"[ <>=!~;\[(]", q.strip())[0]) for q in case.requires}
    for d in case.dists:
        if norm_dist(d.meta_name or d.name) not in wanted:
            continue
        prefix = f"dist:{d.folder or d.name}/"
        for lib in case.libs:
            if lib.place and lib.place.startswith(prefix):
                preload.append(site + "/" + lib.place[5:])
    preload.sort(key=lambda p: 0 if "tcore" in p else 1)  # dependencies first, as torch's __init__ does
    dis = judge(args, case, report, root, installed, preload)
    if not args.keep and not dis:
        shutil.rmtree(cdir, ignore_errors=True)
    return dis, time.time() - t0, report


def preload_closure(case, root, preload):
    """Every object the preloads leave loaded (they and what their own search paths found), as the probe sees
    it: the trace gets them all as LD_PRELOAD, since ld.so would otherwise search a member's need of one of
    them (an nvidia-like library a torch-like one found by its RUNPATH) before the preload's own needs."""
    if not preload:
        return []
    probe = "/probe"
    if not os.path.exists(root + probe):
        return list(preload)
    argv = [probe, "--list"] + sum([["--preload", p] for p in preload], [])
    p = in_root(root, case.arch, argv, case.env)
    out = []
    for line in p.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[0] == "loaded":
            path = parts[1]
            if path == probe or os.path.basename(path).startswith(("libc.so", "ld-linux")) or path in out:
                continue
            if case.arch != "x86_64" and path.startswith(root):
                path = path[len(root):]
            out.append(path)
    for p_ in preload:  # a preload that did not load: still given, the trace says why
        if p_ not in out:
            out.append(p_)
    return out


def norm_dist(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def judge(args, case, report, root, installed, preload):
    """The loader's two passes over every installed ELF member, compared with wheelcheck's report."""
    # Programs are run, not dlopened: a script, or anything with a PT_INTERP that is ET_EXEC or a PIE.
    exes = {d for d, a in installed.items() if ".data/scripts/" in a or is_program(root + d)}
    members = sorted(installed)
    probe = run_probe(case, root, members, preload, case.env, exes)
    case.observed = probe  # what the loader did, member by member (libtree.py checks its premises by it)
    traces = {}
    # The trace makes the member the main program: what every process has loaded before an import (libc;
    # for a Python root, libpython standing in for the interpreter's exports and its libm) is preloaded.
    libdir = f"/usr/lib/{TRIPLE[case.arch]}"
    trace_pre = [f"{libdir}/libc.so.6"] + preload_closure(case, root, preload)
    if case.python:
        trace_pre += [f"{libdir}/libpython3.11.so.1.0", f"{libdir}/libm.so.6"]
    for m in members:
        traces[m] = loader_trace(case, root, m, trace_pre if m not in exes else [], case.env)
    return compare(case, report, installed, probe, traces, args.platform, root, exes)


# --- given wheels: the sample incident wheels, the corpus ------------------------------------------------

def wheel_arch(whl):
    return "aarch64" if whl.endswith("_aarch64.whl") else "x86_64"


def requires_dist(whl):
    with zipfile.ZipFile(whl) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        names = []
        for line in z.read(meta).decode("utf-8", "replace").splitlines():
            if line.startswith("Requires-Dist:") and "extra ==" not in line:
                names.append(re.split(r"[ <>=!~;\[(]", line.split(":", 1)[1].strip())[0].lower().replace("_", "-"))
        return names


def install_zip(whl, root, site):
    """pip's layout of every file of the wheel; returns {installed path: member} for the ELF ones."""
    installed = {}
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            if n.endswith("/"):
                continue
            dest = install_path(site, n)
            os.makedirs(os.path.dirname(root + dest), exist_ok=True)
            data = z.read(n)
            with open(root + dest, "wb") as f:
                f.write(data)
            if data[:4] == b"\x7fELF":
                os.chmod(root + dest, 0o755)
                installed[dest] = n
    return installed


def sample_roots(work, arch):
    """Roots for the FlagOS incident samples: the CUDA 13 / CUDA 12 images with a torch distribution, and
    the Ascend (aarch64) one, from the samples' own stub sources compiled here."""
    src = os.path.join(os.path.dirname(os.path.dirname(HERE)), "samples", "flagos", "stubs")
    cc, cxx = CC[arch]["gcc"], CC[arch]["g++"]
    roots = []
    specs = ([("cuda13-torch", "13", ["-D_GLIBCXX_USE_CXX11_ABI=1"]), ("cuda12-torch-oldabi", "12", ["-D_GLIBCXX_USE_CXX11_ABI=0"])]
             if arch == "x86_64" else [("ascend-torch", None, ["-D_GLIBCXX_USE_CXX11_ABI=1"])])
    for name, cuda, abi in specs:
        root = os.path.join(work, f"sample-root-{name}")
        if os.path.isdir(root):
            roots.append((name, root))
            continue
        # x86_64: with Debian's real python3.11, which imports the modules (their Py* symbols count).
        must(["cp", "-a", make_base(work, arch, "debian", arch == "x86_64"), root])
        vendor = "/usr/local/cuda/lib64" if cuda else "/usr/local/Ascend/lib64"
        os.makedirs(root + vendor)
        if cuda:
            must([cc, "-shared", "-fPIC", "-o", f"{root}{vendor}/libcudart.so.{cuda}", f"-Wl,-soname,libcudart.so.{cuda}",
                  os.path.join(src, "cudart.c")])
        else:
            for lib, c in (("libascendcl.so", "ascendcl.c"), ("libhccl.so", "hccl.c")):
                must([cc, "-shared", "-fPIC", "-o", f"{root}{vendor}/{lib}", f"-Wl,-soname,{lib}", os.path.join(src, c)])
        with open(root + "/etc/ld.so.conf.d/vendor.conf", "w") as f:
            f.write(vendor + "\n")
        site = root + (PY_SITE if arch == "x86_64" else STUB_SITE)
        os.makedirs(site + "/torch/lib")
        must([cxx, "-shared", "-fPIC", *abi, "-I", src, "-o", site + "/torch/lib/libc10.so", "-Wl,-soname,libc10.so",
              os.path.join(src, "c10.cpp")])
        os.makedirs(site + "/torch-2.10.0.dist-info")
        with open(site + "/torch-2.10.0.dist-info/METADATA", "w") as f:
            f.write("Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0\n")
        with open(site + "/torch-2.10.0.dist-info/RECORD", "w") as f:
            f.write("torch/lib/libc10.so,,\ntorch-2.10.0.dist-info/METADATA,,\n")
        must(["ldconfig", "-r", root])
        roots.append((name, root))
    return roots


def corpus_dir():
    return os.environ.get("WHEELCHECK_CORPUS", os.path.expanduser("~/.cache/wheelcheck-corpus"))


def corpus_roots_aarch64(work):
    """aarch64: Debian's arm64 glibc 2.36 (libc6-arm64-cross) with PyTorch 2.6 for arm64, as Debian and as
    pip lay it out."""
    src = os.path.join(corpus_dir(), "debs", "libtorch2.6-arm64", "usr/lib/aarch64-linux-gnu")
    roots = []
    for layout in ("deb", "pip"):
        name = f"glibc2.36-aarch64-torch2.6-{layout}"
        root = os.path.join(work, "corpus-root-" + name)
        if not os.path.isdir(root):
            must(["cp", "-a", make_base(work, "aarch64", "debian", False), root])
            if layout == "deb":
                must(["cp", "-a", *[os.path.join(src, f) for f in os.listdir(src)], os.path.join(root, "usr/lib/aarch64-linux-gnu")])
            else:
                lay_pip_torch(root + STUB_SITE, src, "2.6")
            must(["ldconfig", "-r", root])
        roots.append((name, root))
    return roots


def lay_pip_torch(site, src, version):
    """torch's libraries as pip installs them: site-packages/torch/lib, named as the wheel names them, and
    a dist-info whose RECORD lists them."""
    os.makedirs(site + "/torch/lib")
    os.makedirs(f"{site}/torch-{version}.0.dist-info")
    record = []
    for f in sorted(os.listdir(src)):
        full = os.path.join(src, f)
        if os.path.islink(full):
            continue
        rel = "torch/lib/" + f.split(".so.")[0] + ".so"
        shutil.copy2(full, os.path.join(site, rel))
        record.append(f"{rel},,")
    with open(f"{site}/torch-{version}.0.dist-info/METADATA", "w") as fh:
        fh.write(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}.0\n")
    with open(f"{site}/torch-{version}.0.dist-info/RECORD", "w") as fh:
        fh.write("\n".join(record) + "\n")


def corpus_wheel_aarch64(work):
    """The corpus has no aarch64 wheel: Debian's arm64 libtorch_python and libshm, packed here."""
    src = os.path.join(corpus_dir(), "debs", "libtorch2.6-arm64", "usr/lib/aarch64-linux-gnu")
    whl = os.path.join(work, "torch_python_ext-2.6.0-cp313-cp313-linux_aarch64.whl")
    if os.path.exists(whl):
        return whl
    return pack_wheel(whl, [(f"torch_python_ext/{f}", os.path.realpath(os.path.join(src, f)))
                            for f in ("libtorch_python.so.2.6", "libshm.so.2.6")])


def corpus_roots(work):
    """Roots from the corpus's real binaries: Debian 12's glibc 2.36 (this machine's) or Debian 13's 2.41,
    with PyTorch 1.13 / 2.6 / 2.14 installed as Debian installs it (usr/lib/<triple>, found through
    ld.so.cache) or as pip installs torch (site-packages/torch/lib, a dist-info with RECORD), and the
    CUDA 12.4 runtime."""
    debs = os.path.join(corpus_dir(), "debs")
    trip = "usr/lib/x86_64-linux-gnu"
    roots = []
    for glibc in ("2.36", "2.41"):
        for torch in ("1.13", "2.6", "2.14"):
            for layout in ("deb", "pip"):
                name = f"glibc{glibc}-torch{torch}-{layout}"
                root = os.path.join(work, "corpus-root-" + name)
                src = os.path.join(debs, f"libtorch{torch}", trip)
                if not os.path.isdir(src):
                    continue
                if not os.path.isdir(root):
                    must(["cp", "-a", make_base(work, "x86_64", "debian", False), root])
                    if glibc == "2.41":
                        for d in ("libc6", "libstdc++6", "libgcc-s1"):
                            must(["cp", "-a", *[os.path.join(debs, d, trip, f) for f in os.listdir(os.path.join(debs, d, trip))
                                                if ".so" in f], os.path.join(root, trip)])
                    for d in ("libnuma1", "libcpuinfo0", "libcudart12"):
                        sd = os.path.join(debs, d, trip)
                        if os.path.isdir(sd):
                            must(["cp", "-a", *[os.path.join(sd, f) for f in os.listdir(sd)], os.path.join(root, trip)])
                    if layout == "deb":
                        must(["cp", "-a", *[os.path.join(src, f) for f in os.listdir(src)], os.path.join(root, trip)])
                    else:
                        lay_pip_torch(root + STUB_SITE, src, torch)
                    must(["ldconfig", "-r", root])
                roots.append((name, root))
    return roots


def run_corpus(args, work):
    wheels_dir = os.path.join(corpus_dir(), "wheels")
    absent = f"SKIP: the corpus is absent ({corpus_dir()}): run ../shared/corpus/fetch-real-binaries.sh and make-real-wheels.sh"
    if args.arch == "aarch64":
        if not os.path.isdir(os.path.join(corpus_dir(), "debs", "libtorch2.6-arm64")):
            print(absent)
            return 77
        return run_pairs(args, work, [corpus_wheel_aarch64(work)], corpus_roots_aarch64(work), "corpus")
    wheels = sorted(os.path.join(wheels_dir, f) for f in os.listdir(wheels_dir) if f.endswith(".whl")) \
        if os.path.isdir(wheels_dir) else []
    # The --large wheels (423 MB, 870 MB) are benchmark inputs: unpacking them into 12 roots is not a test.
    wheels = [w for w in wheels if wheel_arch(w) == "x86_64" and os.path.getsize(w) < (300 << 20)]
    if not wheels or not os.path.isdir(os.path.join(corpus_dir(), "debs", "libtorch2.6")):
        print(absent)
        return 77
    return run_pairs(args, work, wheels, corpus_roots(work), "corpus")


def run_given(args, whl, root_name, root, n, work):
    """One given wheel in a copy of one root: wheelcheck first, then the loader."""
    arch = wheel_arch(whl)
    case = gen.Case(number=n, template=f"wheel {os.path.basename(whl)} in {root_name}", arch=arch,
                    python=os.path.exists(os.path.join(root, "usr/bin/python3.11")))
    cdir = os.path.join(work, f"given-{n:04d}")
    shutil.rmtree(cdir, ignore_errors=True)
    os.makedirs(cdir)
    croot = os.path.join(cdir, "root")
    must(["cp", "-a", root, croot])
    shutil.copy2(os.path.join(work, f"probe-{arch}"), os.path.join(croot, "probe"))
    report = wheelcheck_json(args.wheelcheck, whl, croot, {}, os.path.join(work, "cache"))
    notes = " ".join(report.get("notes", []))
    m = re.search(r"installed into (\S+)", notes)
    if not m:
        raise HarnessError(f"wheelcheck did not say where it installs: {notes}")
    site = m.group(1)
    installed = install_zip(whl, croot, site)
    wanted = set(requires_dist(whl))
    preload = []
    for info in sorted(os.listdir(croot + site)):
        if not info.endswith(".dist-info"):
            continue
        dist = info.split("-")[0].lower().replace("_", "-")
        if dist in wanted and os.path.exists(f"{croot}{site}/{info}/RECORD"):
            for line in open(f"{croot}{site}/{info}/RECORD"):
                path = line.split(",")[0]
                if re.search(r"\.so(\.|$)", path):
                    preload.append(f"{site}/{path}")
    dis = judge(args, case, report, croot, installed, preload)
    if not args.keep and not dis:
        shutil.rmtree(cdir, ignore_errors=True)
    return dis, case, report


def check_chroot():
    try:
        p = run(["chroot", "/", "true"])
        return p.returncode == 0
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--cases", type=int, default=520)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--case", type=int, action="append", help="replay only this case number (repeatable)")
    ap.add_argument("--start", type=int, default=0, help="the first case number: runs START..CASES-1 (cases.py: "
                    "numbers from 520 on x86_64, 260 on aarch64, are the image, program and distribution templates)")
    ap.add_argument("--arch", default="x86_64", choices=["x86_64", "aarch64"])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--work", help="work folder (default: a temporary one, removed unless --keep)")
    ap.add_argument("--keep", action="store_true", help="keep every case's root and wheel")
    ap.add_argument("--corpus", action="store_true", help="instead of generated cases: every corpus wheel against "
                    "every corpus root (skips, exit 77, when ../shared/corpus has not been fetched)")
    ap.add_argument("--samples", metavar="DIR", help="instead of generated cases: every *.whl of DIR (the FlagOS "
                    "incident samples) against the sample roots of its architecture")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(os.environ.get("WHEELCHECK_LOADER_SEED", "20261130"))
    in_ci = os.environ.get("CI") == "true"
    if args.arch == "x86_64":
        if os.geteuid() != 0 or not check_chroot():
            msg = "the loader harness needs root for chroot into its roots"
            if in_ci:
                print(f"FAIL: {msg} (CI=true: a refused chroot is a failure)")
                return 1
            print(f"SKIP: {msg}")
            return 77
    else:
        if shutil.which("qemu-aarch64-static") is None or shutil.which("aarch64-linux-gnu-gcc") is None:
            msg = "qemu-aarch64-static or aarch64-linux-gnu-gcc is missing (scripts/install-deps.sh installs them)"
            if in_ci:
                print(f"FAIL: {msg}")
                return 1
            print(f"SKIP: {msg}")
            return 77
    work = args.work or tempfile.mkdtemp(prefix="wheelcheck-loader-")
    os.makedirs(work, exist_ok=True)
    if args.samples:
        return run_samples(args, work)
    if args.corpus:
        return run_corpus(args, work)
    numbers = args.case or list(range(args.start, args.cases))
    print(f"loader harness: seed {seed}, {len(numbers)} cases, {args.arch}, {args.jobs} jobs, work {work}")
    print(f"  replay one: {sys.argv[0]} --wheelcheck {args.wheelcheck} --seed {seed} --arch {args.arch} --case N")
    sys.stdout.flush()
    t0 = time.time()
    # The probe and the bases first, once (the workers share them).
    build_probe(work, args.arch)
    args.platform = glibc_platform(work, args.arch)
    print(f"  glibc's $PLATFORM here: {args.platform}")
    for layout in ("debian", "interp-lib64"):
        for py in ((False, True) if args.arch == "x86_64" else (False,)):
            make_base(work, args.arch, layout, py)
    failures, errors, done = 0, 0, 0
    by_template = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = {}
        for n in numbers:
            case = gen.generate(seed, n, args.arch)
            futs[pool.submit(run_case, args, case, work)] = case
        for fut in concurrent.futures.as_completed(futs):
            case = futs[fut]
            done += 1
            by_template[case.template] = by_template.get(case.template, 0) + 1
            try:
                dis, secs, _ = fut.result()
            except Exception as e:  # a harness failure is a failure too, never a pass
                errors += 1
                print(f"ERROR case {case.number} ({case.template}: {case.desc}): {e}")
                continue
            if dis:
                failures += 1
                print(f"DISAGREE case {case.number} ({case.template}: {case.desc}), layout {case.layout}:")
                for d in dis:
                    print("    " + d)
            if done % 100 == 0:
                print(f"  {done}/{len(numbers)} cases, {time.time() - t0:.0f} s")
                sys.stdout.flush()
    if not args.keep and not args.work and failures == 0 and errors == 0:
        shutil.rmtree(work, ignore_errors=True)
    print("templates: " + ", ".join(f"{k} {v}" for k, v in sorted(by_template.items())))
    passed = len(numbers) - failures - errors
    print(f"loader harness ({args.arch}): {len(numbers)} cases in {time.time() - t0:.0f} s, "
          f"{failures} disagreements, {errors} harness errors")
    print(f"{passed} passed, {failures + errors} failed")
    return 0 if failures == 0 and errors == 0 else 1


def run_samples(args, work):
    wheels = sorted(os.path.join(args.samples, f) for f in os.listdir(args.samples) if f.endswith(".whl"))
    wheels = [w for w in wheels if wheel_arch(w) == args.arch]
    if not wheels:
        print(f"SKIP: no {args.arch} wheels in {args.samples}")
        return 77
    build_probe(work, args.arch)
    args.platform = glibc_platform(work, args.arch)
    return run_pairs(args, work, wheels, sample_roots(work, args.arch), "samples")


def run_pairs(args, work, wheels, roots, what):
    build_probe(work, args.arch)
    args.platform = glibc_platform(work, args.arch)
    t0 = time.time()
    failures = errors = n = 0
    for whl in wheels:
        for name, root in roots:
            n += 1
            try:
                dis, case, report = run_given(args, whl, name, root, n, work)
            except Exception as e:
                errors += 1
                print(f"ERROR {os.path.basename(whl)} in {name}: {e}")
                continue
            loads = ", ".join(f"{m['path']} {'loads' if m['loads'] else 'fails'}" for m in report["members"])
            print(f"  {os.path.basename(whl)} in {name}: {report['verdict']} ({loads})")
            if dis:
                failures += 1
                print(f"DISAGREE {case.template}:")
                for d in dis:
                    print("    " + d)
    if not args.keep and not args.work and failures == 0 and errors == 0:
        shutil.rmtree(work, ignore_errors=True)
    print(f"loader harness, {what} ({args.arch}): {n} wheel-root pairs in {time.time() - t0:.0f} s, "
          f"{failures} disagreements, {errors} harness errors")
    print(f"{n - failures - errors} passed, {failures + errors} failed")
    return 0 if failures == 0 and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

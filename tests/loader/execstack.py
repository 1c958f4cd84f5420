#!/usr/bin/env python3
"""Executable stacks against the real loaders: glibc 2.41 refuses to dlopen them, 2.36 does not.

  execstack.py --wheelcheck BIN [--db DIR] [--keep DIR]

Builds, with gcc, a library linked -z execstack, one linked -z noexecstack, and one whose PT_GNU_STACK is
turned into PT_NULL (no header: glibc's DEFAULT_STACK_PERMS decides), and a tiny program that dlopen()s each
path it is given and prints dlerror(). Then lays out two minimal roots from Debian's own glibc packages:
2.36 (Debian 12: ~/.cache/wheelcheck-realworld/x/libc6_2.36-*, or this machine's /lib when it is 2.36) and
2.41 (Debian 13: ~/.cache/wheelcheck-corpus/debs/libc6, or ~/.cache/wheelcheck-realworld/x/libc6_2.41-*),
and runs the program under `chroot ROOT` in each. Asserted, from what each loader prints:
  - 2.41 refuses the execstack library, with glibc's own message (quoted as it prints it), and the one
    without PT_GNU_STACK (x86_64's default stack is executable); 2.36 loads both; both load the plain one;
    both start a program that needs the execstack library (a program's start still makes the stack executable);
  - `wheelcheck check WHEEL --image debian13` (glibc 2.41) and `--image debian12` (2.36), for wheels holding
    each library as an extension module and as a library: an exec-stack error exactly where the real 2.41
    refused (the member does not load, the verdict is incompatible), and no error on 2.36;
  - where Debian's base roots of the realworld tier are cached (~/.cache/wheelcheck-realworld/roots/
    trixie-*, bookworm-*), the extension module is imported by that root's real CPython (3.13 and 3.11),
    in an overlay over the root: ImportError on trixie, a clean import on bookworm;
  - aarch64, where qemu-aarch64-static, aarch64-linux-gnu-gcc and both arm64 glibcs are there (2.36 of
    libc6-arm64-cross in /usr/aarch64-linux-gnu, 2.41 unpacked in ~/.cache/wheelcheck-realworld/x/libc6_2.41-*_arm64):
    the execstack library is refused by 2.41 and the one without PT_GNU_STACK loads (AArch64's default stack
    is not executable), and `wheelcheck inspect` says so (gnu_stack.executable).
Exit 0 passed, 1 failed, 77 skipped (not root, or neither glibc cached; under CI=true a refused chroot fails).
"""
import argparse, glob, json, os, re, shutil, struct, subprocess, sys, tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from make_wheel import write_wheel  # noqa: E402  (the tests' one wheel writer)
from harness import HarnessError, must, run  # noqa: E402  (the loader tier's commands)

REFUSAL = "cannot enable executable stack as shared object requires: Invalid argument"
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL: " + msg)


DL_C = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (h != NULL) printf("loaded %s\n", argv[i]);
    else printf("refused %s\n", dlerror());
  }
  return 0;
}
"""


def drop_gnu_stack(path):
    """PT_GNU_STACK -> PT_NULL in an ELF64 little-endian file."""
    b = bytearray(open(path, "rb").read())
    assert b[:4] == b"\x7fELF" and b[4] == 2 and b[5] == 1, path
    phoff = struct.unpack_from("<Q", b, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", b, 54)
    n = 0
    for i in range(phnum):
        o = phoff + i * phentsize
        if struct.unpack_from("<I", b, o)[0] == 0x6474E551:
            struct.pack_into("<I", b, o, 0)
            n += 1
    assert n == 1, f"{path}: {n} PT_GNU_STACK"
    open(path, "wb").write(bytes(b))


def build(work, cc, prefix):
    """The three libraries (each an extension module too: PyInit__es) and the dlopen program."""
    src = os.path.join(work, "es.c")
    with open(src, "w") as f:
        f.write("int es_value(void) { return 42; }\nvoid *PyInit__es(void) { return 0; }\n")
    out = {}
    for kind, flags in (("exec", ["-Wl,-z,execstack"]), ("plain", ["-Wl,-z,noexecstack"]),
                        ("none", ["-Wl,-z,noexecstack"])):
        path = os.path.join(work, f"{prefix}lib{kind}.so")
        must([cc, "-shared", "-fPIC", "-O1", "-o", path, src, *flags])
        if kind == "none":
            drop_gnu_stack(path)
        out[kind] = path
    with open(os.path.join(work, "dl.c"), "w") as f:
        f.write(DL_C)
    out["dl"] = os.path.join(work, f"{prefix}dl")
    must([cc, "-O1", "-o", out["dl"], os.path.join(work, "dl.c"), "-ldl"])
    # A program that needs the execstack library (DT_NEEDED libexec.so, found in /tmp): loaded as it starts.
    with open(os.path.join(work, "prog.c"), "w") as f:
        f.write("int es_value(void);\nint main(void) { return es_value() == 42 ? 0 : 1; }\n")
    os.makedirs(os.path.join(work, prefix + "link"), exist_ok=True)
    shutil.copy2(out["exec"], os.path.join(work, prefix + "link", "libexec.so"))
    out["prog"] = os.path.join(work, f"{prefix}prog")
    must([cc, "-O1", "-o", out["prog"], os.path.join(work, "prog.c"), "-L" + os.path.join(work, prefix + "link"),
          "-lexec", "-Wl,-rpath,/tmp"])
    return out


def gnu_stack_flags(path):
    m = re.search(r"^\s+GNU_STACK\s+(?:0x[0-9a-f]+\s+){5}([RWE ]{3}) (?:0x[0-9a-f]+|\d+)$", must(["readelf", "-lW", path]).stdout, re.M)
    return m.group(1).replace(" ", "") if m else None


# --- the glibcs ---------------------------------------------------------------------------------------------

def host_glibc():
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").split()[-1]
    except (ValueError, OSError):
        return ""


def glibc_dirs(version, arch):
    """Folders holding that glibc's libc.so.6 and loader, from Debian's packages (or the host's own)."""
    home = os.path.expanduser("~")
    corpus = os.environ.get("WHEELCHECK_CORPUS", os.path.join(home, ".cache/wheelcheck-corpus"))
    realworld = os.environ.get("WHEELCHECK_REALWORLD", os.path.join(home, ".cache/wheelcheck-realworld"))
    trip = "x86_64-linux-gnu" if arch == "x86_64" else "aarch64-linux-gnu"
    deb_arch = "amd64" if arch == "x86_64" else "arm64"
    candidates = []
    if version == "2.41" and arch == "x86_64":
        candidates.append(os.path.join(corpus, "debs", "libc6"))
    candidates += sorted(glob.glob(os.path.join(realworld, "x", f"libc6_{version}-*_{deb_arch}")))
    if arch == "x86_64" and host_glibc() == version:
        candidates.append("/")
    if arch == "aarch64" and version == "2.36":
        candidates.append("/usr/aarch64-linux-gnu")  # libc6-arm64-cross: Debian 12's arm64 glibc
    for c in candidates:
        for sub in (f"usr/lib/{trip}", f"lib/{trip}", "lib"):
            d = os.path.join(c, sub)
            if os.path.isfile(os.path.join(d, "libc.so.6")):
                return c, d
    return None, None


def make_root(work, name, libdir, arch):
    """A root with only that glibc: merged /usr, the loader where PT_INTERP names it."""
    root = os.path.join(work, name)
    trip = "x86_64-linux-gnu" if arch == "x86_64" else "aarch64-linux-gnu"
    lib = os.path.join(root, "usr/lib", trip)
    os.makedirs(lib)
    os.makedirs(os.path.join(root, "usr/lib64"))
    os.makedirs(os.path.join(root, "tmp"))
    os.symlink("usr/lib", os.path.join(root, "lib"))
    os.symlink("usr/lib64", os.path.join(root, "lib64"))
    for f in os.listdir(libdir):
        if ".so" in f and os.path.isfile(os.path.join(libdir, f)):
            shutil.copy2(os.path.realpath(os.path.join(libdir, f)), os.path.join(lib, f))
    if arch == "x86_64":
        os.symlink(f"../lib/{trip}/ld-linux-x86-64.so.2", os.path.join(root, "usr/lib64/ld-linux-x86-64.so.2"))
    else:
        os.symlink(f"{trip}/ld-linux-aarch64.so.1", os.path.join(root, "usr/lib/ld-linux-aarch64.so.1"))
    return root


def in_root(root, arch, argv):
    if arch == "x86_64":
        return run(["chroot", root, *argv])
    # qemu-aarch64-static -L ROOT: the program and the paths it opens are the root's, named from here.
    return run(["qemu-aarch64-static", "-L", root, *[os.path.join(root, a.lstrip("/")) if a.startswith("/") else a
                                                        for a in argv]])


def loader_says(root, arch, built):
    """What the root's own loader does with each library: {kind: (loaded, message)}."""
    for k in ("dl", "exec", "plain", "none", "prog"):
        shutil.copy2(built[k], os.path.join(root, "tmp", os.path.basename(built[k])))
    shutil.copy2(built["exec"], os.path.join(root, "tmp", "libexec.so"))  # the program's DT_NEEDED
    interp = "/lib64/ld-linux-x86-64.so.2" if arch == "x86_64" else "/lib/ld-linux-aarch64.so.1"
    version = in_root(root, arch, [interp, "--version"]).stdout.splitlines()[:1]
    p = in_root(root, arch, ["/tmp/" + os.path.basename(built["dl"]),
                             *["/tmp/" + os.path.basename(built[k]) for k in ("exec", "plain", "none")]])
    lines = p.stdout.splitlines()
    if p.returncode != 0 or len(lines) != 3:
        raise SystemExit(f"FAIL: the dlopen program in {root} exited {p.returncode}: {p.stdout}{p.stderr}")
    result = {k: (line.startswith("loaded "), line) for k, line in zip(("exec", "plain", "none"), lines)}
    started = in_root(root, arch, ["/tmp/" + os.path.basename(built["prog"])])
    result["prog"] = (started.returncode == 0, f"a program needing libexec.so exits {started.returncode} "
                                                 f"{started.stderr.strip()}".strip())
    return (version[0] if version else "?"), result


# --- wheelcheck ---------------------------------------------------------------------------------------------

def wheels(work, built, arch):
    """Per library: a wheel holding it as an extension module (pkg/_es.abi3.so) and one holding it as a library."""
    out = {}
    plat = "linux_x86_64" if arch == "x86_64" else "linux_aarch64"
    for kind in ("exec", "plain", "none"):
        for role, arc in (("ext", f"es{kind}/_es.abi3.so"), ("lib", f"es{kind}/lib{kind}.so")):
            whl = os.path.join(work, f"es{kind}{role}-1.0-py3-none-{plat}.whl")
            write_wheel(whl, [(arc, built[kind])])
            out[(kind, role)] = (whl, arc)
    return out


def check(args, whl, image):
    p = run([args.wheelcheck, "check", whl, "--image", image, "--json", *(["--db", args.db] if args.db else [])],
            env={**os.environ, "WHEELCHECK_OFFLINE": "1"})
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        raise SystemExit(f"FAIL: wheelcheck check {whl} --image {image} exited {p.returncode}: {p.stderr[-2000:]}")
    return p.returncode, doc


def reports_of(doc):
    """The wheel reports of a check's JSON, whatever its envelope."""
    if isinstance(doc, dict) and "findings" in doc and "members" in doc:
        return [doc]
    out = []
    if isinstance(doc, dict):
        for v in doc.values():
            out += reports_of(v)
    elif isinstance(doc, list):
        for v in doc:
            out += reports_of(v)
    return out


def judge_wheelcheck(args, whls, refused_by, image, glibc):
    """wheelcheck's answer on IMAGE must be the real loader's of that glibc, member by member."""
    for (kind, role), (whl, arc) in sorted(whls.items()):
        rc, doc = check(args, whl, image)
        reps = reports_of(doc)
        if len(reps) != 1:
            fail(f"{image} {os.path.basename(whl)}: expected one wheel report, got {len(reps)}")
            continue
        r = reps[0]
        es = [f for f in r["findings"] if f.get("kind") == "exec-stack"]
        errors = [f for f in es if f.get("severity") == "error"]
        member = [m for m in r["members"] if m.get("path") == arc]
        loads = member[0].get("loads") if member else None
        refused = refused_by[kind]
        what = f"{image} (glibc {glibc}) {kind} as {role}: the real loader {'refuses' if refused else 'loads'} it"
        if refused:
            if not errors or errors[0].get("member") != arc:
                fail(f"{what}; wheelcheck has no exec-stack error on {arc}: {es}")
            elif REFUSAL not in errors[0].get("explanation", ""):
                fail(f"{what}; wheelcheck's explanation does not quote glibc's message: {errors[0].get('explanation')}")
            if loads is not False:
                fail(f"{what}; wheelcheck's members[] says loads={loads}")
            if r.get("verdict") != "incompatible" or rc != 1:
                fail(f"{what}; wheelcheck's verdict is {r.get('verdict')} (exit {rc}), not incompatible (exit 1)")
        else:
            if errors:
                fail(f"{what}; wheelcheck says error: {errors[0].get('explanation')}")
            if loads is False:
                fail(f"{what}; wheelcheck's members[] says it does not load: {r['findings']}")
            if kind == "plain" and es:
                fail(f"{what}; wheelcheck has an exec-stack finding on a library asking for no executable stack: {es}")
            if kind != "plain" and glibc == "2.36" and not any(f.get("severity") == "warning" for f in es):
                fail(f"{what}; wheelcheck does not warn that 2.41 refuses it: {es}")
        print(f"  {'ok ' if not FAILURES else '   '} {what}: wheelcheck {r.get('verdict')}, "
              f"{[f.get('severity') for f in es] or 'no exec-stack finding'}")


# --- CPython, in the realworld tier's base roots ---------------------------------------------------------------

MODULE_C = r"""
#define Py_LIMITED_API 0x030b0000
#include <Python.h>
static struct PyModuleDef es_module = {PyModuleDef_HEAD_INIT, "_es", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__es(void) { return PyModule_Create(&es_module); }
"""


def build_module(work):
    """_es.abi3.so, a real extension module (the limited API of 3.11: bookworm's 3.11 and trixie's 3.13 import
    it) linked -z execstack; None where Debian's Python headers are absent (python3-dev)."""
    inc = "/usr/include/python3.11"
    if not os.path.isfile(os.path.join(inc, "Python.h")):
        return None
    src = os.path.join(work, "esmodule.c")
    with open(src, "w") as f:
        f.write(MODULE_C)
    out = os.path.join(work, "_es.abi3.so")
    must(["gcc", "-shared", "-fPIC", "-O1", "-I" + inc, "-o", out, src, "-Wl,-z,execstack"])
    return out


def python_import(work, base, ext):
    """Imports _es under the root's own python3, the module in /tmp/execstack-mod of an overlay over the base
    root (nothing is written into it): (exit code, last line of stderr); None where overlayfs is refused."""
    d = os.path.join(work, "ov-" + os.path.basename(base))
    for s in ("u", "w", "m"):
        os.makedirs(os.path.join(d, s))
    p = run(["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={base},upperdir={d}/u,workdir={d}/w", f"{d}/m"])
    if p.returncode != 0:
        return None
    try:
        mod = os.path.join(d, "m", "tmp", "execstack-mod")
        os.makedirs(mod)
        shutil.copy2(ext, os.path.join(mod, "_es.abi3.so"))
        q = run(["chroot", f"{d}/m", "/usr/bin/python3", "-c", "import sys; sys.path.insert(0, '/tmp/execstack-mod'); "
                 "import _es; print(_es.__file__)"])
        err = q.stderr.strip().splitlines()
        return q.returncode, (err[-1] if err else q.stdout.strip())
    finally:
        run(["umount", f"{d}/m"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--db", help="the db folder (default: wheelcheck's own)")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    args = ap.parse_args()
    in_ci = os.environ.get("CI") == "true"
    if os.geteuid() != 0 or run(["chroot", "/", "true"]).returncode != 0:
        msg = "the executable-stack loader test needs root for chroot into its glibc roots"
        print(f"FAIL: {msg} (CI=true)" if in_ci else f"SKIP: {msg}")
        return 1 if in_ci else 77
    new_pkg, new = glibc_dirs("2.41", "x86_64")
    old_pkg, old = glibc_dirs("2.36", "x86_64")
    if new is None or old is None:
        print("SKIP: Debian's glibc " + " and ".join(v for v, d in (("2.41", new), ("2.36", old)) if d is None) +
              " not cached: run ../shared/corpus/fetch-real-binaries.sh (libc6 2.41) or tests/realworld/fetch.sh "
              "(libc6 2.36 and 2.41)")
        return 77
    work = args.keep or tempfile.mkdtemp(prefix="wheelcheck-execstack-")
    os.makedirs(work, exist_ok=True)
    try:
        built = build(work, "gcc", "")
        print(f"built: libexec.so GNU_STACK {gnu_stack_flags(built['exec'])}, libplain.so GNU_STACK "
              f"{gnu_stack_flags(built['plain'])}, libnone.so GNU_STACK {gnu_stack_flags(built['none'])}")
        said = {}
        for version, pkg, libdir in (("2.41", new_pkg, new), ("2.36", old_pkg, old)):
            root = make_root(work, f"root-{version}", libdir, "x86_64")
            banner, result = loader_says(root, "x86_64", built)
            print(f"glibc {version} from {pkg}: {banner}")
            if f"version {version}" not in banner:
                fail(f"the root of glibc {version} runs another loader: {banner}")
            for k, (loaded, line) in result.items():
                print(f"  {k}: {line}" if k == "prog" else f"  lib{k}.so: {line}")
            said[version] = result
        # What glibc does, as its own loaders print it.
        n, o = said["2.41"], said["2.36"]
        if n["exec"][0] or REFUSAL not in n["exec"][1]:
            fail(f"glibc 2.41 should refuse libexec.so with \"{REFUSAL}\": {n['exec'][1]}")
        if n["none"][0] or REFUSAL not in n["none"][1]:
            fail(f"glibc 2.41 should refuse libnone.so (no PT_GNU_STACK: x86_64's default is executable): {n['none'][1]}")
        for k in ("exec", "plain", "none"):
            if not o[k][0]:
                fail(f"glibc 2.36 should load lib{k}.so: {o[k][1]}")
        if not n["plain"][0]:
            fail(f"glibc 2.41 should load libplain.so: {n['plain'][1]}")
        for version in ("2.41", "2.36"):  # a program's start still makes the stack executable
            if not said[version]["prog"][0]:
                fail(f"glibc {version} should start a program that needs libexec.so: {said[version]['prog'][1]}")
        # wheelcheck against each: the real loader's answer, member by member.
        whls = wheels(work, built, "x86_64")
        for version, image in (("2.41", "debian13"), ("2.36", "debian12")):
            refused = {k: not loaded for k, (loaded, _) in said[version].items() if k != "prog"}
            judge_wheelcheck(args, whls, refused, image, version)
        # The import itself, by Debian's CPython, where the realworld tier's base roots are there.
        module = build_module(work)
        if module is None:
            print("python: /usr/include/python3.11/Python.h absent (python3-dev): no module to import")
        realworld = os.environ.get("WHEELCHECK_REALWORLD", os.path.expanduser("~/.cache/wheelcheck-realworld"))
        for suite, refuses in (("trixie", True), ("bookworm", False)) if module else ():
            bases = sorted(d for d in glob.glob(os.path.join(realworld, "roots", suite + "-*")) if os.path.isdir(d))
            if not bases:
                print(f"python: no {suite} base root cached (tests/realworld/realworld.py builds it): not imported")
                continue
            got = python_import(work, bases[-1], module)
            if got is None:
                print(f"python: overlayfs refused here: {suite}'s CPython not run")
                continue
            rc, line = got
            print(f"python3 in {os.path.basename(bases[-1])}: import _es (-z execstack) -> exit {rc}: {line}")
            if refuses and (rc == 0 or "ImportError" not in line or REFUSAL not in line):
                fail(f"{suite}'s CPython should fail the import with ImportError: ...{REFUSAL}: got {rc} {line}")
            if not refuses and rc != 0:
                fail(f"{suite}'s CPython should import it: got {rc} {line}")
        aarch64(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("passed")
    return 0


def aarch64(args, work):
    """AArch64: no PT_GNU_STACK is a non-executable stack there (DEFAULT_STACK_PERMS of sysdeps/aarch64)."""
    missing = [p for p in ("qemu-aarch64-static", "aarch64-linux-gnu-gcc") if shutil.which(p) is None]
    new_pkg, new = glibc_dirs("2.41", "aarch64")
    old_pkg, old = glibc_dirs("2.36", "aarch64")
    if missing or new is None or old is None:
        why = ", ".join(missing + [f"arm64 glibc {v}" for v, d in (("2.41", new), ("2.36", old)) if d is None])
        print(f"aarch64: not run ({why} absent; arm64 2.41: `apt-get download libc6:arm64` of trixie, unpacked "
              "with dpkg -x into ~/.cache/wheelcheck-realworld/x/libc6_VERSION_arm64)")
        return
    a64 = os.path.join(work, "a64")
    os.makedirs(a64, exist_ok=True)
    built = build(a64, "aarch64-linux-gnu-gcc", "a64-")
    said = {}
    for version, pkg, libdir in (("2.41", new_pkg, new), ("2.36", old_pkg, old)):
        root = make_root(work, f"a64-root-{version}", libdir, "aarch64")
        banner, result = loader_says(root, "aarch64", built)
        print(f"aarch64 glibc {version} from {pkg}: {banner}")
        for k, (loaded, line) in result.items():
            print(f"  {k}: {line}" if k == "prog" else f"  lib{k}.so: {line}")
        said[version] = result
    if said["2.41"]["exec"][0] or REFUSAL not in said["2.41"]["exec"][1]:
        fail(f"aarch64 glibc 2.41 should refuse libexec.so: {said['2.41']['exec'][1]}")
    if not said["2.41"]["none"][0]:
        fail(f"aarch64 glibc 2.41 should load libnone.so (AArch64's default stack is not executable): "
             f"{said['2.41']['none'][1]}")
    for k in ("exec", "plain", "none"):
        if not said["2.36"][k][0]:
            fail(f"aarch64 glibc 2.36 should load lib{k}.so: {said['2.36'][k][1]}")
    # wheelcheck's reading of each: executable exactly where 2.41 refused it.
    whls = wheels(work, built, "aarch64")
    for kind in ("exec", "plain", "none"):
        whl, arc = whls[(kind, "lib")]
        p = run([args.wheelcheck, "inspect", whl, "--json"])
        members = [m for m in json.loads(p.stdout).get("members", []) if m.get("path") == arc]
        gs = members[0].get("elf", {}).get("gnu_stack") if members else None
        if gs is None or gs.get("executable") != (not said["2.41"][kind][0]):
            fail(f"aarch64 lib{kind}.so: wheelcheck inspect says gnu_stack {gs}, glibc 2.41 "
                 f"{'loads' if said['2.41'][kind][0] else 'refuses'} it")
        else:
            print(f"  ok  aarch64 lib{kind}.so: gnu_stack {gs}, as glibc 2.41 decides")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except HarnessError as e:  # a command it needs failed (harness.must)
        raise SystemExit(f"FAIL: {e}")

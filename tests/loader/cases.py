"""The loader harness's case generator: small C and C++ library graphs, their roots and wheels.

Each case is a pure function of (seed, number): `generate(seed, n)` picks a template by n and draws the
template's choices (which link breaks, where a library sits, which flags) from random.Random(seed, n), so
`harness.py --seed S --case N` replays one case exactly. A case is data only; harness.py compiles it
with gcc at test time, lays out the root and the wheel, runs the real loader inside the root and
wheelcheck beside it, and compares them.

A library spec (Lib):
  place   where the built file goes: an absolute root path, "wheel:REL" (a wheel member; "REL" may be
          under NAME-1.0.data/scripts/), "dist:REL" (a file of a distribution installed in site-packages,
          see Dist), "asbuilt" (the root path equal to the absolute path it was built at: a library without
          DT_SONAME, which its consumers' DT_NEEDED names by that path), or None (a link-time stub only: what
          the consumer was built against)
  defs    functions it defines and exports; uses: functions it calls (undefined symbols);
  weak    functions it references weakly; needs: keys of the libraries it is linked against (their
          DT_NEEDED, in order); rpath/runpath: DT_RPATH/DT_RUNPATH entries; vs: a version script;
  extra   more C (or C++) source; kind: lib | ext (an extension module) | exe; cc: gcc | g++ | i686 | aarch64
  links   symlinks to the built file, each "PATH" (a link to place) or "PATH->TARGET" (a link to TARGET, e.g.
          another link: a chain); PATH and TARGET are absolute root paths or "dist:REL"; the link is written
          relative (it resolves inside the root under chroot and under qemu -L alike), or absolute (the
          root's own "/", x86_64 only) when abs_links. The loader opens the link's path: $ORIGIN of an
          object found through a link is the link's folder (glibc's l_origin comes from the opened path).

Numbering. A case number picks its template, and the old numbers keep their old templates: numbers below
OLD_COUNT[arch] (520 on x86_64, 260 on aarch64, the harness's counts before the image, program and
distribution templates came) cycle through OLD_TEMPLATES exactly as before, with the same draws, so an old
`--case K` replays the case it always did; numbers from OLD_COUNT on cycle through NEW_TEMPLATES (appended
ones only). `--cases 720` (x86_64) and `--cases 360` (aarch64) run both: 40 cases of each new template on
x86_64 (5 templates), 20 on aarch64.
"""
import os
import random
from dataclasses import dataclass, field
from typing import List, Optional

TRIPLE = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}


@dataclass
class Lib:
    key: str
    place: Optional[str]
    soname: Optional[str] = None
    defs: List[str] = field(default_factory=list)
    uses: List[str] = field(default_factory=list)
    weak: List[str] = field(default_factory=list)
    needs: List[str] = field(default_factory=list)
    rpath: List[str] = field(default_factory=list)
    runpath: List[str] = field(default_factory=list)
    vs: Optional[str] = None
    extra: str = ""
    kind: str = "lib"
    cc: str = "gcc"
    cflags: List[str] = field(default_factory=list)
    ldflags: List[str] = field(default_factory=list)
    links: List[str] = field(default_factory=list)
    abs_links: bool = False


@dataclass
class Dist:
    name: str
    record: bool = True
    top_level: bool = False
    folder: Optional[str] = None  # the folder under site-packages its files sit in (default: name), e.g.
    #                               "nvidia/cuda_runtime" for nvidia-cuda-runtime-cu12
    meta_name: Optional[str] = None  # its Name: in METADATA (default: name)


@dataclass
class Case:
    number: int
    template: str
    arch: str = "x86_64"
    layout: str = "debian"  # debian | interp-lib64 | nocache
    python: bool = False  # a real CPython in the root (Debian's python3.11), else a bare site-packages
    ldconfig_links: bool = True  # ldconfig -X when False: the cache only, no soname links
    env: dict = field(default_factory=dict)
    conf: List[str] = field(default_factory=list)  # extra ld.so.conf.d folders
    libs: List[Lib] = field(default_factory=list)
    dists: List[Dist] = field(default_factory=list)
    requires: List[str] = field(default_factory=list)  # Requires-Dist of the wheel
    wheel: str = "gen"
    desc: str = ""
    exe_rc: int = 0  # the exit status a program member that loads and runs exits with


def libdir(case):
    return "/usr/lib/" + TRIPLE[case.arch]


def ext(name, case):
    return f"wheel:{case.wheel}/{name}.cpython-311-{TRIPLE[case.arch]}.so"


# --- templates: each draws its choices from r and returns the case ---------------------------------------

def t_chain(c, r):
    """DT_NEEDED chains and diamonds inside the wheel and the image; one link may be broken."""
    L = libdir(c)
    depth = r.randint(1, 3)
    where = r.choice(["wheel", "image"])
    libs = []
    prev = None
    for k in range(depth):
        key = f"l{k}"
        place = f"wheel:{c.wheel}/libs/lib{key}.so" if where == "wheel" else f"{L}/lib{key}.so.1"
        so = f"lib{key}.so" if where == "wheel" else f"lib{key}.so.1"
        libs.append(Lib(key, place, soname=so, defs=[f"f_{key}"], uses=[f"f_{prev}"] if prev else [],
                        needs=[prev] if prev else []))
        prev = key
    # a diamond: two middle libraries share the bottom one
    libs.append(Lib("side", f"wheel:{c.wheel}/libs/libside.so", soname="libside.so", defs=["f_side"],
                    uses=["f_l0"], needs=["l0"], rpath=["$ORIGIN"] if where == "wheel" else []))
    rp = ["$ORIGIN/libs"]
    m1 = Lib("m1", ext("_m1", c), needs=[prev, "side"], uses=[f"f_{prev}", "f_side"], rpath=rp, kind="ext")
    m2 = Lib("m2", ext("_m2", c), needs=["side"], uses=["f_side"], rpath=rp, kind="ext")
    libs += [m1, m2]
    if where == "wheel":
        for lb in libs[:depth]:
            lb.rpath = ["$ORIGIN"]
    brk = r.choice(["none", "remove-bottom", "drop-symbol", "remove-top"])
    c.desc = f"chain depth {depth} in the {where}, diamond via libside, break: {brk}"
    if brk == "remove-bottom":
        libs[0].place = None  # built, linked against, not installed: both members fail through libside
    elif brk == "drop-symbol":
        stub = Lib("l0b", None, soname=libs[0].soname, defs=["f_l0", "f_gone"])
        libs[0].defs = ["f_l0"]
        libs.insert(1, stub)
        for lb in libs:
            if "l0" in lb.needs and lb.key != "l0b":
                lb.needs = ["l0b" if n == "l0" else n for n in lb.needs]
                lb.uses = lb.uses + ["f_gone"]
    elif brk == "remove-top":
        libs[depth - 1].place = None
    c.libs = libs
    return c


def t_rpath_runpath(c, r):
    """DT_RPATH is inherited down the loader chain, DT_RUNPATH is not; RUNPATH disables RPATH."""
    top = r.choice(["rpath", "runpath"])
    mid = r.choice(["none", "rpath", "runpath"])
    where = f"wheel:{c.wheel}/deep/libbottom.so"
    bottom = Lib("bottom", where, soname="libbottom.so", defs=["f_bottom"])
    mid_lib = Lib("mid", f"wheel:{c.wheel}/mid/libmid.so", soname="libmid.so", defs=["f_mid"], uses=["f_bottom"],
                  needs=["bottom"])
    if mid == "rpath":
        mid_lib.rpath = ["$ORIGIN/../nowhere"]
    elif mid == "runpath":
        mid_lib.runpath = ["$ORIGIN/../nowhere"]
    m = Lib("m", ext("_m", c), needs=["mid"], uses=["f_mid"], kind="ext")
    dirs = ["$ORIGIN/mid", "$ORIGIN/deep"]
    if top == "rpath":
        m.rpath = dirs
    else:
        m.runpath = dirs
    if r.random() < 0.3:  # the middle library's own folder is not searched for its needs under RUNPATH
        m.rpath, m.runpath = ([], ["$ORIGIN/mid", "$ORIGIN/deep"]) if top == "runpath" else (["$ORIGIN/mid"], [])
    c.libs = [bottom, mid_lib, m]
    c.desc = f"extension {top}, middle {mid}"
    return c


def t_tokens(c, r):
    """$ORIGIN, ${ORIGIN}, $LIB and $PLATFORM in search paths."""
    tok = r.choice(["origin", "origin-braced", "lib", "platform", "origin-dotdot"])
    if tok == "lib":
        dep_place, entry = f"/opt/tok/{'lib/' + TRIPLE[c.arch]}/libtok.so", "/opt/tok/$LIB"
    elif tok == "platform":
        dep_place, entry = f"/opt/tok/{c.arch}/libtok.so", "/opt/tok/$PLATFORM"
    elif tok == "origin-braced":
        dep_place, entry = f"wheel:{c.wheel}/sub/libtok.so", "${ORIGIN}/sub"
    elif tok == "origin-dotdot":
        dep_place, entry = f"wheel:{c.wheel}_libs/libtok.so", "$ORIGIN/../" + c.wheel + "_libs"
    else:
        dep_place, entry = f"wheel:{c.wheel}/sub/libtok.so", "$ORIGIN/sub"
    if r.random() < 0.25:  # the file sits elsewhere: the token must not match by luck
        dep_place = dep_place.replace("libtok.so", "x/libtok.so")
    dep = Lib("tok", dep_place, soname="libtok.so", defs=["f_tok"])
    m = Lib("m", ext("_m", c), needs=["tok"], uses=["f_tok"], kind="ext")
    (m.rpath if r.random() < 0.5 else m.runpath).append(entry)
    c.libs = [dep, m]
    c.desc = f"token {tok}: {entry} -> {dep_place}"
    return c


def t_search_order(c, r):
    """LD_LIBRARY_PATH, ld.so.conf with includes and the cache, default folders; sonames unlike file names."""
    L = libdir(c)
    choice = r.choice(["ld_library_path", "conf", "default", "soname-differs", "nocache-conf", "first-wins"])
    m = Lib("m", ext("_m", c), needs=["dep"], uses=["f_dep"], kind="ext")
    dep = Lib("dep", f"{L}/libdep.so.1", soname="libdep.so.1", defs=["f_dep"])
    if choice == "ld_library_path":
        dep.place = "/opt/llp/libdep.so.1"
        c.env["LD_LIBRARY_PATH"] = r.choice(["/opt/llp", "/opt/none:/opt/llp", "/opt/none"])
    elif choice in ("conf", "nocache-conf"):
        dep.place = "/opt/conf/libdep.so.1"
        c.conf = ["/opt/conf"] if r.random() < 0.8 else []
        if choice == "nocache-conf":
            c.layout = "nocache"  # ld.so.conf folders count only through the cache
    elif choice == "soname-differs":
        dep.place = f"{L}/libdep.so.1.2.3"  # the file; its soname libdep.so.1 only via ldconfig's link or cache
        c.ldconfig_links = r.random() < 0.5
    elif choice == "first-wins":
        # two files by the same soname, the first in search order lacks the symbol
        old = Lib("depold", "/opt/llp/libdep.so.1", soname="libdep.so.1", defs=["f_other"])
        c.env["LD_LIBRARY_PATH"] = "/opt/llp"
        c.libs = [old]
    c.libs = c.libs + [dep, m]
    c.desc = choice
    return c


def t_nodeflib(c, r):
    """DF_1_NODEFLIB: the cache and default folders are not searched for the object's needs."""
    L = libdir(c)
    m = Lib("m", ext("_m", c), needs=["dep"], uses=["f_dep"], kind="ext", ldflags=["-Wl,-z,nodefaultlib"])
    where = r.choice(["default", "rpath"])
    dep = Lib("dep", f"{L}/libdep.so.1" if where == "default" else f"wheel:{c.wheel}/libdep.so.1",
              soname="libdep.so.1", defs=["f_dep"])
    if where == "rpath":
        m.rpath = ["$ORIGIN"]
    c.libs = [dep, m]
    c.desc = f"nodeflib, dependency in {where}"
    return c


def t_preloaded(c, r):
    """A distribution Python imported first (`import torch`): its libraries are loaded under their sonames."""
    record = r.random() < 0.6
    top_level = not record and r.random() < 0.5
    c.dists = [Dist("tlib", record=record, top_level=top_level)]
    c.requires = ["tlib>=1.0"] if r.random() < 0.85 else []
    file_differs = r.random() < 0.3
    core_file = "libtcore.so.2.6" if file_differs else "libtcore.so"
    core = Lib("tcore", f"dist:tlib/lib/{core_file}", soname="libtcore.so", defs=["t_core", "t_core2"])
    other = Lib("tother", "dist:tlib/lib/libtother.so", soname="libtother.so", defs=["t_other"], needs=["tcore"],
                uses=["t_core"], rpath=["$ORIGIN"])
    need = r.choice(["tcore", "tother"])
    m = Lib("m", ext("_m", c), needs=[need], uses=["t_core" if need == "tcore" else "t_other"], kind="ext")
    if r.random() < 0.3:
        m.uses.append("t_core2")  # reached only if tcore is in the member's scope
    c.libs = [core, other, m]
    c.desc = (f"preloaded dist (RECORD {record}, top_level {top_level}), requires {bool(c.requires)}, "
              f"member needs {need}, core file {core_file}")
    return c


def t_wrong_class(c, r):
    """Candidates of another ELF class or machine are skipped; the search goes on."""
    L = libdir(c)
    bad_cc = r.choice(["i686", "aarch64"] if c.arch == "x86_64" else ["gcc-x86_64"])
    good = r.random() < 0.7
    bad = Lib("bad", f"wheel:{c.wheel}/first/libdep.so", soname="libdep.so", defs=["f_dep"], cc=bad_cc)
    libs = [bad]
    if good:
        libs.append(Lib("dep", f"wheel:{c.wheel}/second/libdep.so", soname="libdep.so", defs=["f_dep"]))
    else:
        libs.append(Lib("dep", None, soname="libdep.so", defs=["f_dep"]))
    m = Lib("m", ext("_m", c), needs=["dep"], uses=["f_dep"], kind="ext", rpath=["$ORIGIN/first", "$ORIGIN/second"])
    c.libs = libs + [m]
    c.desc = f"{bad_cc} candidate first, a good one after: {good}"
    return c


def t_versions(c, r):
    """Symbol versions: default and hidden definitions, a missing version node, an unversioned provider."""
    kind = r.choice(["default", "hidden-old", "missing-node", "unversioned-provider", "unversioned-ref",
                     "weak-version"])
    where = r.choice(["image", "wheel"])
    place = f"{libdir(c)}/libv.so.1" if where == "image" else f"wheel:{c.wheel}/libv.so.1"
    vs12 = "V1 { global: va; local: *; };\nV2 { global: vb; } V1;\n"
    if kind == "default":
        build = Lib("vbuild", None, soname="libv.so.1", defs=["va", "vb"], vs=vs12)
        run = Lib("v", place, soname="libv.so.1", defs=["va", "vb"], vs=vs12)
        uses = ["va", "vb"]
    elif kind == "hidden-old":
        old = "V1 { global: vc; local: *; };\n"
        build = Lib("vbuild", None, soname="libv.so.1", defs=["vc"], vs=old)
        extra = ('int vc_old(void) { return 1; }\nint vc_new(void) { return 2; }\n'
                 '__asm__(".symver vc_old,vc@V1");\n__asm__(".symver vc_new,vc@@V2");\n')
        run = Lib("v", place, soname="libv.so.1", extra=extra,
                  vs="V1 { global: vc; local: *; };\nV2 { global: vc; } V1;\n")
        uses = ["vc"]
    elif kind == "missing-node":
        build = Lib("vbuild", None, soname="libv.so.1", defs=["va", "vb"], vs=vs12)
        run = Lib("v", place, soname="libv.so.1", defs=["va", "vb"], vs="V1 { global: va; vb; local: *; };\n")
        uses = ["va", "vb"] if r.random() < 0.7 else ["va"]
    elif kind == "unversioned-provider":
        build = Lib("vbuild", None, soname="libv.so.1", defs=["va", "vb"], vs=vs12)
        run = Lib("v", place, soname="libv.so.1", defs=["va", "vb"] if r.random() < 0.7 else ["va"])
        uses = ["va", "vb"]
    elif kind == "unversioned-ref":
        build = Lib("vbuild", None, soname="libv.so.1", defs=["va", "vb"])
        run = Lib("v", place, soname="libv.so.1", defs=["va", "vb"], vs=vs12)
        uses = ["va", "vb"]
    else:  # a weak reference to a versioned symbol the provider lacks
        build = Lib("vbuild", None, soname="libv.so.1", defs=["va", "vb"], vs=vs12)
        run = Lib("v", place, soname="libv.so.1", defs=["va"], vs="V1 { global: va; local: *; };\n")
        m = Lib("m", ext("_m", c), needs=["vbuild"], uses=["va"], weak=["vb"], kind="ext", rpath=["$ORIGIN"])
        c.libs = [build, run, m]
        c.desc = f"{kind} in the {where}"
        return c
    m = Lib("m", ext("_m", c), needs=["vbuild"], uses=uses, kind="ext", rpath=["$ORIGIN"])
    c.libs = [build, run, m]
    c.desc = f"{kind} in the {where}"
    return c


def t_visibility(c, r):
    """Weak undefined symbols; hidden and protected definitions; IFUNC; TLS; STB_GNU_UNIQUE."""
    kind = r.choice(["weak-missing", "hidden", "protected", "ifunc", "ifunc-missing", "tls", "tls-missing", "unique"])
    place = f"wheel:{c.wheel}/libp.so"
    build = Lib("pbuild", None, soname="libp.so")
    run = Lib("p", place, soname="libp.so")
    m = Lib("m", ext("_m", c), needs=["pbuild"], kind="ext", rpath=["$ORIGIN"])
    if kind == "weak-missing":
        build.defs, run.defs = ["pa", "pw"], ["pa"]
        m.uses, m.weak = ["pa"], ["pw"]
    elif kind == "hidden":
        build.defs = ["pa", "ph"]
        run.defs = ["pa"]
        run.extra = '__attribute__((visibility("hidden"))) int ph(void) { return 3; }\n'
        m.uses = ["pa", "ph"]
    elif kind == "protected":
        build.defs = ["pa", "pp"]
        run.defs = ["pa"]
        run.extra = '__attribute__((visibility("protected"))) int pp(void) { return 3; }\n'
        m.uses = ["pa", "pp"]
    elif kind in ("ifunc", "ifunc-missing"):
        build.defs = ["pi"]
        run.extra = ('static int pi_impl(void) { return 4; }\n'
                     'static void* pi_resolve(void) { return (void*)pi_impl; }\n'
                     'int pi(void) __attribute__((ifunc("pi_resolve")));\n') if kind == "ifunc" else "int pq(void) { return 1; }\n"
        m.uses = ["pi"]
    elif kind in ("tls", "tls-missing"):
        build.extra = "__thread int ptls = 3;\n"
        run.extra = "__thread int ptls = 3;\n" if kind == "tls" else "__thread int pother = 3;\n"
        m.extra = "extern __thread int ptls;\nint read_tls(void) { return ptls; }\n"
    else:  # STB_GNU_UNIQUE: both define the same unique object; nothing undefined between them
        src = ("template <typename T> struct Holder { static int value; };\n"
               "template <typename T> int Holder<T>::value = 7;\n")
        build.cc = run.cc = m.cc = "g++"
        build.extra = run.extra = src + 'extern "C" int pu(void) { return Holder<int>::value; }\n'
        m.extra = src + 'extern "C" int pu(void);\nextern "C" int mu(void) { return Holder<int>::value + pu(); }\n'
    c.libs = [build, run, m]
    c.desc = kind
    return c


def t_cxx_abi(c, r):
    """C++ names whose ABI tag differs: a std::string parameter under the old and the new libstdc++ ABI."""
    same = r.random() < 0.4
    decl = "#include <string>\nint takes(const std::string& s);\n"
    prov_src = decl + "int takes(const std::string& s) { return (int)s.size(); }\n"
    build = Lib("sbuild", None, soname="libs.so", extra=prov_src, cc="g++", cflags=["-D_GLIBCXX_USE_CXX11_ABI=0"])
    run = Lib("s", f"wheel:{c.wheel}/libs.so", soname="libs.so", extra=prov_src, cc="g++",
              cflags=[] if not same else ["-D_GLIBCXX_USE_CXX11_ABI=0"])
    m = Lib("m", ext("_m", c), needs=["sbuild"], cc="g++", rpath=["$ORIGIN"], kind="ext",
            cflags=["-D_GLIBCXX_USE_CXX11_ABI=0"],
            extra=decl + 'extern "C" int mcall(void) { return takes(std::string("x")); }\n')
    c.libs = [build, run, m]
    c.desc = f"consumer old ABI, provider {'old' if same else 'new'} ABI"
    return c


def t_executable(c, r):
    """An executable member (NAME.data/scripts): copy relocations of its data against a library."""
    has = r.random() < 0.7
    build = Lib("dbuild", None, soname="libdata.so", extra="int counter = 5;\nint f_data(void) { return counter; }\n")
    run = Lib("d", f"wheel:{c.wheel}/libdata.so", soname="libdata.so",
              extra=("int counter = 5;\n" if has else "int other = 5;\n") + "int f_data(void) { return 1; }\n")
    exe = Lib("tool", f"wheel:{c.wheel}-1.0.data/scripts/tool", needs=["dbuild"], kind="exe",
              cflags=["-fno-pie"], ldflags=["-no-pie"],
              rpath=[f"$ORIGIN/../lib/python3.11/site-packages/{c.wheel}"],
              extra="#include <stdio.h>\nextern int counter;\nint main(void) { printf(\"ok %d\\n\", counter); return 0; }\n")
    c.libs = [build, run, exe]
    c.desc = f"executable with a copy relocation, symbol present: {has}"
    return c


def t_interp(c, r):
    """The program interpreter only in /lib64 (its PT_INTERP path): its soname is loaded everywhere."""
    c.layout = "interp-lib64"
    # TLS in a shared object needs __tls_get_addr from ld-linux-x86-64.so.2: a DT_NEEDED of the interpreter.
    dep = Lib("t", f"wheel:{c.wheel}/libt.so", soname="libt.so", extra="__thread int tv = 1;\n")
    m1 = Lib("m1", ext("_m1", c), needs=["t"], rpath=["$ORIGIN"], kind="ext",
             extra="extern __thread int tv;\nint read1(void) { return tv; }\n")
    m2 = Lib("m2", ext("_m2", c), needs=["t"], rpath=["$ORIGIN"], kind="ext",
             extra="extern __thread int tv;\nint read2(void) { return tv; }\n")
    c.libs = [dep, m1, m2]
    c.desc = "interpreter only in /lib64, two members with TLS"
    return c


def t_python(c, r):
    """A real CPython in the root: symbols an extension expects from the interpreter."""
    c.python = True
    kind = r.choice(["api", "removed", "libm-from-python"])
    m = Lib("m", ext("_m", c), kind="ext")
    if kind == "api":
        m.uses = ["PyLong_FromLong"]
    elif kind == "removed":
        m.uses = ["PyLong_FromLong"]
        m.extra = "extern int PyFPE_jbuf[];\nint* fpe(void) { return PyFPE_jbuf; }\n"
    else:  # cos() from libm, which the extension does not link but the interpreter does (global scope)
        m.uses = ["PyFloat_FromDouble"]
        m.cflags = ["-fno-builtin"]
        m.extra = "extern double cos(double);\ndouble mc(double x) { return cos(x); }\n"
    c.libs = [m]
    c.desc = f"python interpreter symbols: {kind}"
    return c


# --- templates that came later (numbers from OLD_COUNT on): the image's and distributions' own search paths,
# programs as roots, image libraries bound against the member's load scope ------------------------------------

def main_source(calls, code=0):
    """A program's main (C, with libc): calls each of calls, prints "ok", exits with code."""
    body = " + ".join(f"{u}()" for u in calls) or "0"
    return ('#include <stdio.h>\nint main(void) { volatile int v = %s; printf("ok %%d\\n", v); return %d; }\n'
            % (body, code))


# A program without libc (gcc -nostdlib): its own _start, write(2) and exit(2) by system call, so that it needs
# nothing the case does not give it.
BARE_START = r"""
static long wc_sys(long n, long a, long b, long c) {
#if defined(__x86_64__)
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
#else
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
  return x0;
#endif
}
#if defined(__x86_64__)
#define WC_WRITE 1
#define WC_EXIT 60
__attribute__((force_align_arg_pointer))
#else
#define WC_WRITE 64
#define WC_EXIT 93
#endif
void _start(void) {
  volatile int v = BODY;
  (void)v;
  wc_sys(WC_WRITE, 1, (long)"ok\n", 3);
  wc_sys(WC_EXIT, CODE, 0, 0);
  for (;;) {}
}
"""


def bare_source(calls, code=0):
    body = " + ".join(f"{u}()" for u in calls) or "0"
    return BARE_START.replace("BODY", body).replace("CODE", str(code))


def pie_flags(pie):
    return (["-fPIE"], ["-pie"]) if pie else (["-fno-pie"], ["-no-pie"])


def scripts_to_package(c):
    """$ORIGIN of a NAME-1.0.data/scripts program, as pip installs it, to the wheel's package folder."""
    return f"$ORIGIN/../lib/python3.11/{'dist-packages' if c.python else 'site-packages'}/{c.wheel}"


def t_image_search(c, r):
    """Image libraries searched with their own DT_RPATH / DT_RUNPATH and $ORIGIN, to folders only they name;
    reached through a symlink ($ORIGIN is the link's folder, not the target's); an RPATH inherited by the
    image library's dependency, a RUNPATH not."""
    L = libdir(c)
    tag = r.choice(["runpath", "rpath"])
    entry_kind = r.choice(["origin", "origin-braced", "absolute"])
    reach = r.choice(["conf", "member-rpath", "llp", "symlink-default", "symlink-folder", "symlink-chain"])
    deep = r.random() < 0.5
    v = Lib("v", "/opt/vendor/lib/libv.so.1", soname="libv.so.1", defs=["f_v"], uses=["f_vd"], needs=["vd"])
    m = Lib("m", ext("_m", c), needs=["v"], uses=["f_v"], kind="ext")
    opened = "/opt/vendor/lib"  # the folder of the path the loader opens libv.so.1 by (physically)
    if reach == "conf":
        c.conf = ["/opt/vendor/lib"]
    elif reach == "member-rpath":
        (m.rpath if r.random() < 0.5 else m.runpath).append("/opt/vendor/lib")
    elif reach == "llp":
        c.env["LD_LIBRARY_PATH"] = "/opt/vendor/lib"
    elif reach == "symlink-default":
        v.links = [f"{L}/libv.so.1"]  # the cache (or the default folder) gives /lib/TRIPLE/libv.so.1, the link
        opened = L
    elif reach == "symlink-folder":
        v.links = ["/opt/links/libv.so.1"]
        m.rpath = ["/opt/links"]
        opened = "/opt/links"
    else:  # a chain of links: /opt/links/libv.so.1 -> /opt/vendor/lib/libv.so.1 -> libv.so.1.2.3
        v.place = "/opt/vendor/lib/libv.so.1.2.3"
        v.links = ["/opt/vendor/lib/libv.so.1->/opt/vendor/lib/libv.so.1.2.3",
                   "/opt/links/libv.so.1->/opt/vendor/lib/libv.so.1"]
        m.runpath = ["/opt/links"]
        opened = "/opt/links"
    v.abs_links = c.arch == "x86_64" and r.random() < 0.4
    if entry_kind == "absolute":
        entry, dep_dir = "/opt/vendor/deps", "/opt/vendor/deps"
    else:
        entry = "$ORIGIN/../deps" if entry_kind == "origin" else "${ORIGIN}/../deps"
        dep_dir = os.path.normpath(opened + "/../deps")
        if reach.startswith("symlink") and r.random() < 0.5:
            dep_dir = "/opt/vendor/deps"  # beside the link's target: glibc does not look there
    getattr(v, tag).append(entry)
    vd = Lib("vd", dep_dir + "/libvd.so.1", soname="libvd.so.1", defs=["f_vd"])
    absent = r.random() < 0.1
    if absent:
        vd.place = None
    libs = [vd, v, m]
    if deep:  # libvd's own need, beside it: found through libv's RPATH (inherited), never its RUNPATH
        vdd = Lib("vdd", dep_dir + "/libvdd.so.1", soname="libvdd.so.1", defs=["f_vdd"])
        vd.uses, vd.needs = ["f_vdd"], ["vdd"]
        libs.insert(0, vdd)
    c.libs = libs
    c.desc = (f"image libv {tag} {entry}, reached by {reach}{' (absolute links)' if v.abs_links else ''}, "
              f"libvd in {dep_dir}{' (absent)' if absent else ''}, deep {deep}")
    return c


def t_image_nodeflib(c, r):
    """An image library marked DF_1_NODEFLIB: its needs skip the default folders and the cache entries under
    the system folders; cache entries of other ld.so.conf folders, LD_LIBRARY_PATH, its RUNPATH and RPATHs
    inherited from the member still count."""
    L = libdir(c)
    where = r.choice(["default", "local", "conf", "runpath", "llp", "inherited-rpath"])
    reach = r.choice(["conf", "member-rpath"])
    v = Lib("v", "/opt/vendor/lib/libv.so.1", soname="libv.so.1", defs=["f_v"], uses=["f_vd"], needs=["vd"],
            ldflags=["-Wl,-z,nodefaultlib"])
    m = Lib("m", ext("_m", c), needs=["v"], uses=["f_v"], kind="ext")
    c.conf = ["/opt/vendor/lib"] if reach == "conf" else []
    if reach == "member-rpath":
        m.rpath.append("/opt/vendor/lib")
    if where == "default":
        dep = f"{L}/libvd.so.1"  # in the cache, under a system folder: refused
    elif where == "local":
        dep = "/usr/local/lib/libvd.so.1"  # libc.conf's folder, not a system folder: the cache entry counts
    elif where == "conf":
        dep = "/opt/conf2/libvd.so.1"
        c.conf.append("/opt/conf2")
    elif where == "runpath":
        dep = "/opt/vendor/deps/libvd.so.1"
        v.runpath = ["$ORIGIN/../deps"]
    elif where == "llp":
        dep = "/opt/llp/libvd.so.1"
        c.env["LD_LIBRARY_PATH"] = "/opt/llp"
    else:
        dep = "/opt/mem/libvd.so.1"
        m.rpath.append("/opt/mem")
    vd = Lib("vd", dep, soname="libvd.so.1", defs=["f_vd"])
    c.libs = [vd, v, m]
    c.desc = f"nodeflib image libv reached by {reach}, its dependency {where}: {dep}"
    return c


def t_program(c, r):
    """Programs (PT_INTERP, PIE or not) as roots: the program and its own needs are the initial objects (no
    libc preloaded, no Python interpreter in scope); DF_1_NODEFLIB on a program (libc only in the system
    folders: refused; a library from an ld.so.conf folder outside them: taken from the cache)."""
    L = libdir(c)
    kinds = ["wheel-lib", "image-lib", "image-runpath", "missing", "nodeflib-libc", "nodeflib-libc-rpath",
             "nodeflib-conf", "nodeflib-default", "no-libc-scope", "libc-via-dep", "in-package"]
    if c.arch == "x86_64":
        kinds.append("no-python-scope")
    kind = r.choice(kinds)
    pie = r.random() < 0.5
    if kind == "no-python-scope":
        c.python = True
    cflags, ldflags = pie_flags(pie)
    prog = Lib("tool", f"wheel:{c.wheel}-1.0.data/scripts/tool", kind="exe", cflags=list(cflags),
               ldflags=list(ldflags))
    to_pkg = scripts_to_package(c)
    libs = []
    calls = []
    bare = False
    detail = ""
    if kind in ("wheel-lib", "nodeflib-libc", "in-package"):
        w = Lib("w", f"wheel:{c.wheel}/libw.so", soname="libw.so", defs=["f_w"])
        libs.append(w)
        prog.needs, calls = ["w"], ["f_w"]
        if kind == "in-package":  # a program inside the package, not under .data/scripts
            prog.place = f"wheel:{c.wheel}/bin/tool"
            w.place = f"wheel:{c.wheel}/libs/libw.so"
            entry = "$ORIGIN/../libs"
        else:
            entry = to_pkg
        tag = r.choice(["rpath", "runpath"])
        getattr(prog, tag).append(entry)
        if kind == "wheel-lib" and r.random() < 0.5:  # libw's need beside it: the program's RPATH is inherited
            w2 = Lib("w2", w.place.replace("libw.so", "libw2.so"), soname="libw2.so", defs=["f_w2"])
            w.needs, w.uses = ["w2"], ["f_w2"]
            libs.insert(0, w2)
            detail = f", libw needs libw2 beside it, program {tag}"
        else:
            detail = f", program {tag}"
        if kind == "nodeflib-libc":
            prog.ldflags.append("-Wl,-z,nodefaultlib")
    elif kind == "image-lib":
        libs.append(Lib("img", f"{L}/libimg.so.1", soname="libimg.so.1", defs=["f_img"]))
        prog.needs, calls = ["img"], ["f_img"]
    elif kind == "image-runpath":
        v = Lib("v", "/opt/vendor/lib/libv.so.1", soname="libv.so.1", defs=["f_v"], uses=["f_vd"], needs=["vd"],
                runpath=["$ORIGIN/../deps"])
        via = r.choice(["conf", "symlink-default"])
        if via == "conf":
            c.conf = ["/opt/vendor/lib"]
            dep_dir = "/opt/vendor/deps"
        else:
            v.links = [f"{L}/libv.so.1"]
            dep_dir = os.path.normpath(L + "/../deps")
        libs += [Lib("vd", dep_dir + "/libvd.so.1", soname="libvd.so.1", defs=["f_vd"]), v]
        prog.needs, calls = ["v"], ["f_v"]
        detail = f", libv by {via}, libvd in {dep_dir}"
    elif kind == "missing":
        libs.append(Lib("gone", None, soname="libgone.so.1", defs=["f_gone"]))
        prog.needs, calls = ["gone"], ["f_gone"]
    elif kind == "nodeflib-libc-rpath":  # libc by the program's own search path, not the default folders
        prog.ldflags.append("-Wl,-z,nodefaultlib")
        getattr(prog, r.choice(["rpath", "runpath"])).append(L)
    elif kind == "nodeflib-conf":  # no libc of its own: its library (no NODEFLIB) finds libc
        bare = True
        prog.ldflags.append("-Wl,-z,nodefaultlib")
        where = r.choice(["/opt/conf", "/usr/local/lib"])
        if where == "/opt/conf":
            c.conf = ["/opt/conf"]
        libs.append(Lib("cf", f"{where}/libconf.so.1", soname="libconf.so.1", defs=["f_conf"], uses=["getpid"]))
        prog.needs, calls = ["cf"], ["f_conf"]
        detail = f", libconf in {where}"
    elif kind == "nodeflib-default":
        bare = True
        prog.ldflags.append("-Wl,-z,nodefaultlib")
        libs.append(Lib("x", f"{L}/libx.so.1", soname="libx.so.1", defs=["f_x"], cflags=["-nostdlib"]))
        prog.needs, calls = ["x"], ["f_x"]
    elif kind in ("no-libc-scope", "libc-via-dep"):
        # Linked against a libx that gave getpid; the real libx does not: only libc can, if it is in scope.
        bare = True
        libs.append(Lib("xbuild", None, soname="libx.so", defs=["f_x", "getpid"], cflags=["-nostdlib"]))
        x = Lib("x", f"wheel:{c.wheel}/libx.so", soname="libx.so", defs=["f_x"])
        if kind == "no-libc-scope":
            x.cflags = ["-nostdlib"]
        libs.append(x)
        prog.needs, calls = ["xbuild"], ["f_x", "getpid"]
        prog.rpath = [to_pkg]
    else:  # no-python-scope: a Python root, a program that expects the interpreter's PyLong_FromLong
        libs.append(Lib("wbuild", None, soname="libw.so", defs=["f_w", "PyLong_FromLong"]))
        libs.append(Lib("w", f"wheel:{c.wheel}/libw.so", soname="libw.so", defs=["f_w"]))
        prog.needs, calls = ["wbuild"], ["f_w", "PyLong_FromLong"]
        prog.rpath = [to_pkg]
    if bare:
        prog.cflags.append("-nostdlib")
        prog.extra = bare_source(calls)
    else:
        prog.extra = main_source(calls)
    prog.uses = [u for u in calls]
    c.libs = libs + [prog]
    c.desc = f"program ({'PIE' if pie else 'non-PIE'}{', no libc' if bare else ''}): {kind}{detail}"
    return c


def t_dist_runpath(c, r):
    """torch-like and nvidia-like distributions: a distribution's library in site-packages finds another
    distribution's library by its own RUNPATH (or RPATH) $ORIGIN/../../nvidia/X/lib; the wheel
    Requires-Dist the torch-like one (imported first), or finds it by its own RPATH."""
    tag = r.choice(["runpath", "rpath"])
    requires = r.random() < 0.75
    deep = r.random() < 0.5
    broken = r.random() < 0.15  # the runtime's files sit in lib64: the torch-like RUNPATH misses them
    direct = r.random() < 0.4  # the member needs the runtime itself too
    c.dists = [Dist("torchl"), Dist("nvidia_cuda_runtime_cu12", folder="nvidia/cuda_runtime",
                                    meta_name="nvidia-cuda-runtime-cu12")]
    rt = Lib("rt", f"dist:nvidia/cuda_runtime/{'lib64' if broken else 'lib'}/libcudartl.so.12",
             soname="libcudartl.so.12", defs=["cuda_fn"])
    torch = Lib("torch", "dist:torchl/lib/libtorchl.so", soname="libtorchl.so", defs=["torch_fn"], uses=["cuda_fn"],
                needs=["rt"])
    entries = ["$ORIGIN/../../nvidia/cuda_runtime/lib"]
    libs = [rt]
    how = "-"
    if deep:  # the runtime needs nvjitlink: by its own RUNPATH, by torch's RPATH (inherited) or not at all
        c.dists.append(Dist("nvidia_nvjitlink_cu12", folder="nvidia/nvjitlink", meta_name="nvidia-nvjitlink-cu12"))
        jit = Lib("jit", "dist:nvidia/nvjitlink/lib/libnvjitlinkl.so.12", soname="libnvjitlinkl.so.12",
                  defs=["jit_fn"])
        rt.needs, rt.uses = ["jit"], ["jit_fn"]
        how = r.choice(["own-runpath", "torch-entry", "none"])
        if how == "own-runpath":
            rt.runpath = ["$ORIGIN/../../nvjitlink/lib"]
        elif how == "torch-entry":
            entries.append("$ORIGIN/../../nvidia/nvjitlink/lib")
        libs.insert(0, jit)
    getattr(torch, tag).extend(entries)
    m = Lib("m", ext("_m", c), needs=["torch"] + (["rt"] if direct else []),
            uses=["torch_fn"] + (["cuda_fn"] if direct else []), kind="ext")
    own = False
    if not requires and r.random() < 0.7:
        own = True
        m.rpath = ["$ORIGIN/../torchl/lib"]
    c.requires = ["torchl"] if requires else []
    c.libs = libs + [torch, m]
    c.desc = (f"torch-like {tag} {':'.join(entries)}, requires {requires}, member rpath to torch {own}, "
              f"nvjitlink {how if deep else 'none needed'}, runtime in lib64 {broken}, member needs the runtime {direct}")
    return c


def t_image_binding(c, r):
    """A partly upgraded image: an image library whose version needs or undefined symbols its image provider
    does not meet, bound against the member's load scope (RTLD_NOW): a version node or a function the older
    provider lacks, a weak one, one another object of the scope gives."""
    L = libdir(c)
    kind = r.choice(["version-missing", "version-symbol-missing", "symbol-missing", "symbol-weak",
                     "symbol-from-member", "symbol-from-sibling", "glibc-too-new", "unversioned-provider"])
    reach = r.choice(["member", "wheel-lib", "program"])
    vs12 = "V1 { global: dep_old; local: *; };\nV2 { global: dep_new; } V1;\n"
    build = Lib("dbuild", None, soname="libdep.so.1", defs=["dep_old", "dep_new"], vs=vs12)
    run = Lib("dep", f"{L}/libdep.so.1", soname="libdep.so.1")
    img = Lib("img", f"{L}/libimg.so.1", soname="libimg.so.1", defs=["f_img"], needs=["dbuild"], uses=["dep_old"])
    extra_libs, root_defs, root_needs = [], [], []
    if kind == "version-missing":  # built against a newer libdep (V2); the image has the older one (V1 only)
        run.defs, run.vs = ["dep_old"], "V1 { global: dep_old; local: *; };\n"
        img.uses.append("dep_new")
    elif kind == "version-symbol-missing":  # V2 is there, dep_new@V2 is not
        run.defs = ["dep_old", "dep_other"]
        run.vs = "V1 { global: dep_old; local: *; };\nV2 { global: dep_other; } V1;\n"
        img.uses.append("dep_new")
    elif kind == "unversioned-provider":  # no version information at all: not an error
        run.defs = ["dep_old", "dep_new"]
        img.uses.append("dep_new")
    elif kind == "glibc-too-new":  # built against a libc with GLIBC_2.99
        build = Lib("cbuild", None, soname="libc.so.6", defs=["fancy_fn"], cflags=["-nostdlib"],
                    vs="GLIBC_2.99 { global: fancy_fn; local: *; };\n")
        run = None
        img = Lib("img", f"{L}/libimg.so.1", soname="libimg.so.1", defs=["f_img"], needs=["cbuild"],
                  uses=["fancy_fn"], cflags=["-nostdlib"])
    else:  # unversioned: dep_gone was in the libdep it was built against, not in the image's
        build.vs, build.defs = None, ["dep_old", "dep_gone"]
        run.defs = ["dep_old"]
        if kind == "symbol-weak":
            img.weak = ["dep_gone"]
        else:
            img.uses.append("dep_gone")
        if kind == "symbol-from-member":
            root_defs = ["dep_gone"]
        elif kind == "symbol-from-sibling":
            extra_libs = [Lib("sib", f"{L}/libsib.so.1", soname="libsib.so.1", defs=["dep_gone", "f_sib"])]
            root_needs = ["sib"]
    libs = [build] + ([run] if run else []) + extra_libs + [img]
    if reach == "member":
        root = Lib("m", ext("_m", c), needs=["img"] + root_needs, uses=["f_img"], defs=root_defs, kind="ext")
    elif reach == "wheel-lib":
        libs.append(Lib("w", f"wheel:{c.wheel}/libs/libw.so", soname="libw.so", needs=["img"], uses=["f_img"],
                        defs=["f_w"]))
        root = Lib("m", ext("_m", c), needs=["w"] + root_needs, uses=["f_w"], defs=root_defs, kind="ext",
                   rpath=["$ORIGIN/libs"])
    else:
        cflags, ldflags = pie_flags(r.random() < 0.5)
        root = Lib("tool", f"wheel:{c.wheel}-1.0.data/scripts/tool", needs=["img"] + root_needs, uses=["f_img"],
                   defs=root_defs, kind="exe", cflags=list(cflags), ldflags=list(ldflags),
                   extra=main_source(["f_img"]))
    c.libs = libs + [root]
    c.desc = f"partly upgraded image: {kind}, reached from the {reach}"
    return c


OLD_TEMPLATES = [t_chain, t_rpath_runpath, t_tokens, t_search_order, t_nodeflib, t_preloaded, t_wrong_class,
                 t_versions, t_visibility, t_cxx_abi, t_executable, t_interp, t_python]
NEW_TEMPLATES = [t_image_search, t_image_nodeflib, t_program, t_dist_runpath, t_image_binding]
TEMPLATES = OLD_TEMPLATES + NEW_TEMPLATES
OLD_COUNT = {"x86_64": 520, "aarch64": 260}  # numbers below: OLD_TEMPLATES, as before NEW_TEMPLATES came


def generate(seed, n, arch="x86_64"):
    r = random.Random(f"{seed}:{n}:{arch}")
    if n < OLD_COUNT[arch]:
        templates = [t for t in OLD_TEMPLATES if arch == "x86_64" or t not in (t_python, t_interp)]
        t = templates[n % len(templates)]
    else:
        t = NEW_TEMPLATES[(n - OLD_COUNT[arch]) % len(NEW_TEMPLATES)]
    c = Case(number=n, template=t.__name__[2:], arch=arch)
    c.wheel = "gen"
    t(c, r)
    if c.layout == "debian" and r.random() < 0.1 and t not in (t_search_order,):
        c.layout = "nocache"
    return c

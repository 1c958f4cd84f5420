"""The loader harness's case generator: small C and C++ library graphs, their roots and wheels.

Each case is a pure function of (seed, number): `generate(seed, n)` picks a template by n and draws the
template's choices (which link breaks, where a library sits, which flags) from random.Random(seed, n), so
`harness.py --seed S --case N` replays one case exactly. A case is data only; harness.py compiles it
with gcc at test time, lays out the root and the wheel, runs the real loader inside the root and
wheelcheck beside it, and compares them.

A library spec (Lib):
  place   where the built file goes: an absolute root path, "wheel:REL" (a wheel member; "REL" may be
          under NAME-1.0.data/scripts/), "dist:REL" (a file of a distribution installed in site-packages,
          see Dist), or None (a link-time stub only: what the consumer was built against)
  defs    functions it defines and exports; uses: functions it calls (undefined symbols);
  weak    functions it references weakly; needs: keys of the libraries it is linked against (their
          DT_NEEDED, in order); rpath/runpath: DT_RPATH/DT_RUNPATH entries; vs: a version script;
  extra   more C (or C++) source; kind: lib | ext (an extension module) | exe; cc: gcc | g++ | i686 | aarch64
"""
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


@dataclass
class Dist:
    name: str
    record: bool = True
    top_level: bool = False


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


TEMPLATES = [t_chain, t_rpath_runpath, t_tokens, t_search_order, t_nodeflib, t_preloaded, t_wrong_class,
             t_versions, t_visibility, t_cxx_abi, t_executable, t_interp, t_python]


def generate(seed, n, arch="x86_64"):
    r = random.Random(f"{seed}:{n}:{arch}")
    templates = [t for t in TEMPLATES if arch == "x86_64" or t not in (t_python, t_interp)]
    t = templates[n % len(templates)]
    c = Case(number=n, template=t.__name__[2:], arch=arch)
    c.wheel = "gen"
    t(c, r)
    if c.layout == "debian" and r.random() < 0.1 and t not in (t_search_order,):
        c.layout = "nocache"
    return c

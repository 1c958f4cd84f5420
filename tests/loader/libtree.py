#!/usr/bin/env python3
"""libtree's test cases as roots and wheels: wheelcheck against glibc's own loader, case by case.

  libtree.py --wheelcheck BIN [--arch x86_64|aarch64] [--case NAME]... [--jobs J] [--work DIR] [--keep]

libtree (github.com/haampie/libtree) tests its resolver with small library graphs, numbered 01 to 10 in its
tests/ folder: $ORIGIN, the RPATH of a parent's parent, direct and absolute RPATHs, RPATH over
LD_LIBRARY_PATH over RUNPATH, 32-bit candidates, symbol versions, $ORIGIN of a symlink, nodefaultlib, a
sysroot, RPATH order. Each is expressed here, with C sources of our own, as an image root and a wheel: the
object of interest may be a program of the wheel (run, as a script or a program inside the package), an
extension module (dlopened RTLD_NOW | RTLD_LOCAL), or a library of the image that one of them reaches. The
graphs are cases.py's Lib and Case records; harness.py builds them with gcc, lays out the root from this
machine's glibc, asks wheelcheck, installs the wheel, runs the real loader in the root (chroot, or qemu-user
on aarch64) and compares member by member (harness.judge).

Each case also states what glibc does (`loads`, and a piece of the loader's error): when the loader does
otherwise the case itself is wrong, and that fails too. Exit 0: every case agrees; 1: a disagreement, a
case whose premise does not hold, or a harness error (both sides printed); 77: the loader cannot be run in
a root here (no root for chroot, or no qemu-aarch64-static).
"""
import argparse, concurrent.futures, os, shutil, sys, tempfile, time
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
import cases as G  # noqa: E402
from cases import Lib  # noqa: E402

SITE = H.STUB_SITE  # no interpreter in these roots: the bare site folder wheelcheck installs into


@dataclass
class Entry:
    name: str
    mirrors: str  # which libtree test, and what glibc does
    build: Callable  # (arch) -> cases.Case
    expect: Dict[str, bool]  # wheel member -> does glibc load (and, for a program, run it to exit 42)?
    why: Dict[str, str] = field(default_factory=dict)  # wheel member -> a piece of the loader's error
    # Where the case can be expressed. An aarch64 root's ld.so.cache is empty: this machine's ldconfig (x86_64)
    # does not index aarch64 libraries ("unknown machine 183"), so a case that needs an ld.so.conf folder's
    # cache entry is x86_64 only.
    arches: tuple = ("x86_64", "aarch64")


def case(arch, libs, env=None, conf=None, layout="debian"):
    return G.Case(number=0, template="libtree", arch=arch, libs=libs, env=dict(env or {}), conf=list(conf or []),
                  layout=layout, exe_rc=42)


def prog(key, place, calls, needs, bare=False, **kw):
    """A program that calls each of calls, prints ok and exits 42; bare: no libc (gcc -nostdlib, own _start)."""
    p = Lib(key, place, kind="exe", needs=list(needs), uses=list(calls), **kw)
    p.extra = G.bare_source(calls, 42) if bare else G.main_source(calls, 42)
    if bare:
        p.cflags = p.cflags + ["-nostdlib"]
    return p


def nolibc(key, place, soname, defs, **kw):
    """A library without libc, as libtree's tests build them (-nostdlib)."""
    return Lib(key, place, soname=soname, defs=list(defs), cflags=["-nostdlib"], **kw)


def ext(arch, name):
    return f"wheel:gen/{name}.cpython-311-{G.TRIPLE[arch]}.so"


def L(arch):
    return "/usr/lib/" + G.TRIPLE[arch]


SCRIPT = "gen-1.0.data/scripts/"
EXE = "gen/bin/"


# --- the table --------------------------------------------------------------------------------------------

def c01(tag):
    def build(arch):
        a = nolibc("a", "wheel:gen/bin/liba.so", "liba.so", ["f"])
        e = prog("exe", f"wheel:{EXE}exe", ["f"], ["a"], bare=True, **{tag: ["$ORIGIN"]})
        return case(arch, [a, e])
    return build


def c02_exe(arch):
    b = nolibc("b", "wheel:gen/libs/libb.so", "libb.so", ["g"])
    a = nolibc("a", "wheel:gen/libs/liba.so", "liba.so", ["f"], uses=["g"], needs=["b"])
    e = prog("exe", f"wheel:{EXE}exe", ["f"], ["a"], bare=True, rpath=["$ORIGIN/../libs"])
    return case(arch, [b, a, e])


def c02_lib(llp):
    def build(arch):
        b = nolibc("b", "wheel:gen/libs/libb.so", "libb.so", ["g"])
        a = Lib("a", ext(arch, "libs/_a"), uses=["g"], needs=["b"], kind="ext")
        return case(arch, [b, a], env={"LD_LIBRARY_PATH": f"{SITE}/gen/libs"} if llp else None)
    return build


def c02_image(tag):
    def build(arch):
        vdd = Lib("vdd", "/opt/vendor/deps/libvdd.so.1", soname="libvdd.so.1", defs=["f_vdd"])
        vd = Lib("vd", "/opt/vendor/deps/libvd.so.1", soname="libvd.so.1", defs=["f_vd"], uses=["f_vdd"],
                 needs=["vdd"])
        v = Lib("v", "/opt/vendor/lib/libv.so.1", soname="libv.so.1", defs=["f_v"], uses=["f_vd"], needs=["vd"],
                **{tag: ["/opt/vendor/deps"]})
        e = prog("tool", f"wheel:{SCRIPT}tool", ["f_v"], ["v"], rpath=["/opt/vendor/lib"])
        return case(arch, [vdd, vd, v, e])
    return build


def c03(both):
    def build(arch):
        f = Lib("f", "/opt/app/some_dir/lib_f.so", soname="lib_f.so", defs=["f"])
        g = Lib("g", "/opt/app/lib_g.so", soname="lib_g.so", defs=["g"], uses=["f"], needs=["f"],
                rpath=["/opt/app/some_dir"])
        i = Lib("i", "asbuilt", defs=["i"])  # no DT_SONAME: its consumer's DT_NEEDED is its absolute path
        e = prog("exe", f"wheel:{SCRIPT}exe", ["f", "g", "i"], ["f", "g", "i"],
                 rpath=["/opt/app"] + (["/opt/app/some_dir"] if both else []))
        return case(arch, [f, g, i, e])
    return build


def c04(tag, llp):
    def build(arch):
        top = nolibc("btop", "/opt/app/libb.so", "libb.so", ["b"])
        a = nolibc("a", "/opt/app/dir/liba.so", "liba.so", ["a"])
        bdir = nolibc("bdir", "/opt/app/dir/libb.so", "libb.so", ["b", "b_dir"], uses=["a"], needs=["a"],
                      rpath=["$ORIGIN"])
        # Linked against dir/libb.so: b_dir is defined only there, so the program runs only if it gets that one.
        e = prog("exe", f"wheel:{SCRIPT}exe", ["b", "b_dir"], ["bdir"], bare=True, **{tag: ["/opt/app"]})
        return case(arch, [top, a, bdir, e], env={"LD_LIBRARY_PATH": "/opt/app/dir"} if llp else None)
    return build


def c05(with64):
    def build(arch):
        wrong = "i686" if arch == "x86_64" else "gcc-x86_64"
        libs = [Lib("x32", "/opt/app/lib32/libx.so", soname="libx.so", defs=["a"], cc=wrong, cflags=["-nostdlib"])]
        x = nolibc("x", "/opt/app/lib64/libx.so" if with64 else None, "libx.so", ["a"])
        e = prog("exe", f"wheel:{SCRIPT}exe", ["a"], ["x"], bare=True, rpath=["/opt/app/lib32", "/opt/app/lib64"])
        return case(arch, libs + [x, e])
    return build


V1 = "VER_V1 { global: xyz; local: *; };\n"
V12 = "VER_V1 { global: xyz; local: *; };\nVER_V2 { global: xyz; } VER_V1;\n"
V12_SRC = ('int xyz_v1(void) { return 1; }\nint xyz_v2(void) { return 2; }\n'
           '__asm__(".symver xyz_v1,xyz@VER_V1");\n__asm__(".symver xyz_v2,xyz@@VER_V2");\n')


def c06(linked):
    def build(arch):
        v1 = nolibc("v1", "/opt/app/v1/libx.so", "libx.so", ["xyz"], vs=V1)
        v2 = nolibc("v2", "/opt/app/v2/libx.so", "libx.so", [], vs=V12, extra=V12_SRC)
        first = "/opt/app/v2" if linked == "v1" else "/opt/app/v1"
        second = "/opt/app/v1" if linked == "v1" else "/opt/app/v2"
        e = prog("exe", f"wheel:{SCRIPT}exe", ["xyz"], [linked], rpath=[first, second])
        return case(arch, [v1, v2, e])
    return build


def c06_image(kind, reach):
    def build(arch):
        vs12 = "V1 { global: dep_old; local: *; };\nV2 { global: dep_new; } V1;\n"
        if kind == "version":
            build_ = Lib("dbuild", None, soname="libdep.so.1", defs=["dep_old", "dep_new"], vs=vs12)
            run = Lib("dep", f"{L(arch)}/libdep.so.1", soname="libdep.so.1", defs=["dep_old"],
                      vs="V1 { global: dep_old; local: *; };\n")
            uses = ["dep_old", "dep_new"]
        else:
            build_ = Lib("dbuild", None, soname="libdep.so.1", defs=["dep_old", "dep_gone"])
            run = Lib("dep", f"{L(arch)}/libdep.so.1", soname="libdep.so.1", defs=["dep_old"])
            uses = ["dep_old", "dep_gone"]
        img = Lib("img", f"{L(arch)}/libimg.so.1", soname="libimg.so.1", defs=["f_img"], uses=uses, needs=["dbuild"])
        if reach == "program":
            top = prog("tool", f"wheel:{SCRIPT}tool", ["f_img"], ["img"])
        else:
            top = Lib("m", ext(arch, "_m"), needs=["img"], uses=["f_img"], kind="ext")
        return case(arch, [build_, run, img, top])
    return build


def c07(llp):
    def build(arch):
        f = nolibc("f", "/opt/app/a/libf.so", "libf.so", ["f"])
        g = nolibc("g", "/opt/app/a/libg.so", "libg.so", ["g"], uses=["f"], needs=["f"], rpath=["${ORIGIN}"],
                   links=["/opt/app/b/libg.so"])
        e = prog("exe", f"wheel:{SCRIPT}exe", ["g"], ["g"], bare=True, rpath=["/opt/app/b"])
        return case(arch, [f, g, e], env={"LD_LIBRARY_PATH": "/opt/app/a"} if llp else None)
    return build


def c07_image(dep_beside_link):
    def build(arch):
        dep_dir = os.path.normpath(L(arch) + "/../deps") if dep_beside_link else "/opt/vendor/deps"
        vd = Lib("vd", f"{dep_dir}/libvd.so.1", soname="libvd.so.1", defs=["f_vd"])
        v = Lib("v", "/opt/vendor/lib/libv.so.1", soname="libv.so.1", defs=["f_v"], uses=["f_vd"], needs=["vd"],
                runpath=["$ORIGIN/../deps"], links=[f"{L(arch)}/libv.so.1"])
        m = Lib("m", ext(arch, "_m"), needs=["v"], uses=["f_v"], kind="ext")
        return case(arch, [vd, v, m])
    return build


def c08(which):
    def build(arch):
        nd = Lib("nd", "wheel:gen/bin/lib_nodefaultlib.so", soname="lib_nodefaultlib.so", defs=["f"],
                 ldflags=["-Wl,-z,nodefaultlib"])
        d = Lib("d", "wheel:gen/bin/lib_defaultlib.so", soname="lib_defaultlib.so", defs=["g"])
        nodef = ["-Wl,-z,nodefaultlib"]
        if which == "a":
            e = prog("exe_a", f"wheel:{EXE}exe_a", ["f", "g"], ["nd", "d"], runpath=["$ORIGIN"], ldflags=nodef)
        else:
            e = prog("exe_b", f"wheel:{EXE}exe_b", ["g"], ["d"], rpath=["$ORIGIN"], ldflags=nodef)
        return case(arch, [nd, d, e])
    return build


def c08_conf(arch):
    cf = Lib("cf", "/opt/conf/libconf.so.1", soname="libconf.so.1", defs=["f_conf"], uses=["getpid"])
    e = prog("tool", f"wheel:{SCRIPT}tool", ["f_conf"], ["cf"], bare=True, ldflags=["-Wl,-z,nodefaultlib"])
    return case(arch, [cf, e], conf=["/opt/conf"])


def c08_rpath(arch):
    e = prog("tool", f"wheel:{SCRIPT}tool", [], [], rpath=[L(arch)], ldflags=["-Wl,-z,nodefaultlib"])
    return case(arch, [e])


def c09(tag):
    def build(arch):
        dp = nolibc("dp", "/usr/lib/libdefaultpath.so", "libdefaultpath.so", ["a"])
        rp = nolibc("rp", "/usr/lib/local/rpath/librpath.so", "librpath.so", ["b"])
        e = prog("exe", f"wheel:{SCRIPT}exe", ["a", "b"], ["dp", "rp"], bare=True,
                 **{tag: ["/usr/lib/local/rpath"]})
        return case(arch, [dp, rp, e])
    return build


def c10(where):
    def build(arch):
        if where == "wheel":
            d, exe_rpath = "wheel:gen/libs", ["$ORIGIN/../libs", "$ORIGIN/../libs/first"]
        else:
            d, exe_rpath = "/opt/app", ["/opt/app", "/opt/app/first"]
        first = nolibc("bfirst", f"{d}/first/libb.so", "libb.so", ["g"])
        second = nolibc("bsecond", f"{d}/second/libb.so", "libb.so", ["g", "g_second"])
        # liba uses g_second, which only second/libb.so defines: it loads only if liba's own RPATH wins.
        a = nolibc("a", f"{d}/liba.so", "liba.so", ["f"], uses=["g_second"], needs=["bsecond"],
                   rpath=["$ORIGIN/second"])
        e = prog("exe", f"wheel:{EXE}exe", ["f"], ["a"], bare=True, rpath=exe_rpath)
        return case(arch, [first, second, a, e])
    return build


def c_image_runpath(via):
    def build(arch):
        v = Lib("v", "/opt/vendor/lib/libv.so.1", soname="libv.so.1", defs=["f_v"], uses=["f_vd"], needs=["vd"],
                runpath=["$ORIGIN/../deps"])
        if via == "conf":
            dep_dir, conf = "/opt/vendor/deps", ["/opt/vendor/lib"]
        else:
            v.links = [f"{L(arch)}/libv.so.1"]
            dep_dir, conf = os.path.normpath(L(arch) + "/../deps"), []
        vd = Lib("vd", f"{dep_dir}/libvd.so.1", soname="libvd.so.1", defs=["f_vd"])
        e = prog("tool", f"wheel:{SCRIPT}tool", ["f_v"], ["v"])
        return case(arch, [vd, v, e], conf=conf)
    return build


TABLE = [
    Entry("01-origin-rpath", "01_origin: a program's DT_RPATH $ORIGIN finds liba.so beside it; glibc runs it",
          c01("rpath"), {EXE + "exe": True}),
    Entry("01-origin-runpath", "01_origin: the same by DT_RUNPATH $ORIGIN; glibc runs it",
          c01("runpath"), {EXE + "exe": True}),
    Entry("02-rpath-of-parents-parent", "02_rpath_of_parents_parent: exe -> liba -> libb, liba has no search "
          "path, libb is found by the program's DT_RPATH (a loader's RPATH is searched for its dependents' needs)",
          c02_exe, {EXE + "exe": True}),
    Entry("02-lib-alone", "02_rpath_of_parents_parent (`libtree liba.so`): liba alone does not find libb beside "
          "it (no $ORIGIN without a search path); glibc refuses it", c02_lib(False),
          {f"gen/libs/_a.cpython-311-{{triple}}.so": False}, {f"gen/libs/_a.cpython-311-{{triple}}.so": "libb.so"}),
    Entry("02-lib-llp", "02_rpath_of_parents_parent: with LD_LIBRARY_PATH naming libb's folder it does",
          c02_lib(True), {f"gen/libs/_a.cpython-311-{{triple}}.so": True}),
    Entry("02-image-rpath-inherited", "02_rpath_of_parents_parent, within the image: the program needs the image's "
          "libv (DT_RPATH /opt/vendor/deps), whose libvd needs libvdd: found by libv's RPATH; glibc runs it",
          c02_image("rpath"), {SCRIPT + "tool": True}),
    Entry("02-image-runpath-not-inherited", "02_rpath_of_parents_parent, the other way: libv's DT_RUNPATH finds "
          "libvd but is not searched for libvd's own need libvdd; glibc refuses the program",
          c02_image("runpath"), {SCRIPT + "tool": False}, {SCRIPT + "tool": "libvdd.so.1"}),
    Entry("03-direct-rpath-only", "03_direct_and_absolute_rpath exe_a: the program's own DT_RPATH /opt/app lacks "
          "some_dir; lib_g's RPATH would find lib_f but the program's needs are searched first; glibc refuses",
          c03(False), {SCRIPT + "exe": False}, {SCRIPT + "exe": "lib_f.so"}),
    Entry("03-direct-and-absolute-rpath", "03_direct_and_absolute_rpath exe_b: both folders in its RPATH, and a "
          "library without soname NEEDED by its absolute path; glibc runs it", c03(True), {SCRIPT + "exe": True}),
    Entry("04-rpath-over-env", "04_rpath_over_env_over_runpath: DT_RPATH /opt/app comes before LD_LIBRARY_PATH: "
          "glibc takes /opt/app/libb.so, which lacks b_dir; refused", c04("rpath", True),
          {SCRIPT + "exe": False}, {SCRIPT + "exe": "b_dir"}),
    Entry("04-env-over-runpath", "04_rpath_over_env_over_runpath: LD_LIBRARY_PATH comes before DT_RUNPATH: "
          "glibc takes dir/libb.so (and its liba by its $ORIGIN RPATH); runs", c04("runpath", True),
          {SCRIPT + "exe": True}),
    Entry("04-runpath-alone", "04_rpath_over_env_over_runpath without LD_LIBRARY_PATH: the RUNPATH's libb.so, "
          "without b_dir; refused", c04("runpath", False), {SCRIPT + "exe": False}, {SCRIPT + "exe": "b_dir"}),
    Entry("05-32-bits", "05_32_bits: a candidate of the other ELF class (or machine) first in the RPATH is "
          "skipped, the search goes on to lib64; glibc runs it", c05(True), {SCRIPT + "exe": True}),
    Entry("05-32-bits-only", "05_32_bits: only the other class's libx.so: not found", c05(False),
          {SCRIPT + "exe": False}, {SCRIPT + "exe": "libx.so"}),
    Entry("06-symbol-versions-v1", "06_symbol_versions exe_v1: linked against v1, v2 first in its RPATH; v2 "
          "defines xyz@VER_V1 too; glibc runs it", c06("v1"), {SCRIPT + "exe": True}),
    Entry("06-symbol-versions-v2", "06_symbol_versions exe_v2: linked against v2 (VER_V2), v1 first in its RPATH: "
          "glibc takes v1 and refuses (version `VER_V2' not found), it does not search on",
          c06("v2"), {SCRIPT + "exe": False}, {SCRIPT + "exe": "VER_V2"}),
    Entry("06-partly-upgraded-image", "06_symbol_versions, within the image: the program needs the image's libimg, "
          "built against a libdep with V2; the image's libdep has only V1: glibc refuses (version `V2' not found, "
          "required by the image library)", c06_image("version", "program"), {SCRIPT + "tool": False},
          {SCRIPT + "tool": "`V2' not found"}),
    Entry("06-partly-upgraded-image-ext", "the same image library reached from an extension module (dlopen "
          "RTLD_NOW): refused", c06_image("version", "ext"), {f"gen/_m.cpython-311-{{triple}}.so": False},
          {f"gen/_m.cpython-311-{{triple}}.so": "`V2' not found"}),
    Entry("06-image-undefined-function", "an image library calls dep_gone, which the image's older libdep lacks "
          "(unversioned): RTLD_NOW refuses the extension that reaches it", c06_image("symbol", "ext"),
          {f"gen/_m.cpython-311-{{triple}}.so": False}, {f"gen/_m.cpython-311-{{triple}}.so": "dep_gone"}),
    Entry("06-image-undefined-function-program", "the same from a program run with LD_BIND_NOW: refused",
          c06_image("symbol", "program"), {SCRIPT + "tool": False}, {SCRIPT + "tool": "dep_gone"}),
    Entry("07-origin-of-symlink", "07_origin_is_relative_to_symlink_location_not_realpath: libg is found as "
          "/opt/app/b/libg.so, a link to a/libg.so; its ${ORIGIN} is /opt/app/b, where libf is not: refused",
          c07(False), {SCRIPT + "exe": False}, {SCRIPT + "exe": "libf.so"}),
    Entry("07-origin-of-symlink-llp", "07: with LD_LIBRARY_PATH=/opt/app/a libf is found; glibc runs it",
          c07(True), {SCRIPT + "exe": True}),
    Entry("07-image-link-in-default-folder", "07 within the image: /usr/lib/TRIPLE/libv.so.1 links to "
          "/opt/vendor/lib/libv.so.1 (RUNPATH $ORIGIN/../deps): the cache gives the link's path, $ORIGIN/../deps "
          "is /usr/lib/deps, where libvd is; loads", c07_image(True), {f"gen/_m.cpython-311-{{triple}}.so": True}),
    Entry("07-image-link-target-folder", "07 within the image, the other way: libvd beside the link's target "
          "(/opt/vendor/deps) is not found", c07_image(False), {f"gen/_m.cpython-311-{{triple}}.so": False},
          {f"gen/_m.cpython-311-{{triple}}.so": "libvd.so.1"}),
    Entry("08-nodeflib-exe-a", "08_nodeflib exe_a: a DF_1_NODEFLIB program (RUNPATH $ORIGIN) needing libc.so.6, "
          "which is only in the system folders: the cache entry is refused, the default folders skipped; "
          "glibc refuses it", c08("a"), {EXE + "exe_a": False}, {EXE + "exe_a": "libc.so.6"}),
    Entry("08-nodeflib-exe-b", "08_nodeflib exe_b: the same by RPATH $ORIGIN: libc.so.6 not found",
          c08("b"), {EXE + "exe_b": False}, {EXE + "exe_b": "libc.so.6"}),
    Entry("08-nodeflib-conf-folder", "08_nodeflib: a NODEFLIB program without libc of its own, whose library is "
          "in /opt/conf (ld.so.conf, outside the system folders): glibc takes the cache entry and runs it",
          c08_conf, {SCRIPT + "tool": True}, arches=("x86_64",)),
    Entry("08-nodeflib-libc-by-rpath", "08_nodeflib: a NODEFLIB program whose RPATH names libc's folder: an "
          "explicit search path is not a default one; glibc runs it", c08_rpath, {SCRIPT + "tool": True}),
    Entry("09-sysroot-rpath", "09_sysroot: absolute RPATH /usr/lib/local/rpath and the default folder /usr/lib, "
          "both the root's own; glibc runs it", c09("rpath"), {SCRIPT + "exe": True}),
    Entry("09-sysroot-runpath", "09_sysroot by RUNPATH; glibc runs it", c09("runpath"), {SCRIPT + "exe": True}),
    Entry("10-rpath-order", "10_rpath_order: liba's own RPATH ($ORIGIN/second) is searched before its loader's "
          "(the program's, which lists first/): second/libb.so with g_second; glibc runs it", c10("wheel"),
          {EXE + "exe": True}),
    Entry("10-rpath-order-image", "10_rpath_order with the libraries in the image (/opt/app): the same",
          c10("image"), {EXE + "exe": True}),
    Entry("runpath-of-image-library", "a program that needs only an image library (/opt/vendor/lib, an ld.so.conf "
          "folder) whose dependency is found by that library's own RUNPATH $ORIGIN/../deps: glibc loads and runs "
          "it, exit 42", c_image_runpath("conf"), {SCRIPT + "tool": True}, arches=("x86_64",)),
    Entry("runpath-of-image-library-symlink", "the same image library reached by a link in the default folder: "
          "$ORIGIN/../deps of the link's folder (/usr/lib/deps); glibc runs it", c_image_runpath("symlink"),
          {SCRIPT + "tool": True}),
]


def member_name(key, arch):
    return key.replace("{triple}", G.TRIPLE[arch])


def run_entry(args, n, entry, work):
    c = entry.build(args.arch)
    c.number, c.template, c.desc = n, f"libtree {entry.name}", entry.mirrors
    dis, secs, report = H.run_case(args, c, work)
    problems = list(dis)
    observed = getattr(c, "observed", {})
    installed = {lib.place[len("wheel:"):] for lib in c.libs if lib.place and lib.place.startswith("wheel:")}
    # The case's premise: glibc did what the table says.
    for key, want in entry.expect.items():
        arc = member_name(key, args.arch)
        if arc not in installed:
            problems.append(f"(the case) {arc} is not a member of the wheel")
            continue
        dest = H.install_path(SITE, arc)
        if dest not in observed:
            problems.append(f"(the case) the loader said nothing of {arc}")
            continue
        loads, err = observed[dest]
        if loads != want:
            problems.append(f"(the case) glibc {'loads' if loads else 'refuses'} {arc} ({err}); the table says it "
                            f"{'loads' if want else 'refuses'}")
        why = entry.why.get(key)
        if why and not loads and why not in err:
            problems.append(f"(the case) glibc's error for {arc} is {err!r}, the table expects {why!r} in it")
    return problems, c, report


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--arch", default="x86_64", choices=["x86_64", "aarch64"])
    ap.add_argument("--case", action="append", help="run only this case (its name; repeatable)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--list", action="store_true", help="print the table and exit")
    args = ap.parse_args()
    if args.list:
        for e in TABLE:
            print(f"{e.name}: {e.mirrors}")
        return 0
    in_ci = os.environ.get("CI") == "true"
    if args.arch == "x86_64":
        if os.geteuid() != 0 or not H.check_chroot():
            print("SKIP: the libtree cases need root for chroot into their roots")
            return 1 if in_ci else 77
    elif shutil.which("qemu-aarch64-static") is None or shutil.which("aarch64-linux-gnu-gcc") is None:
        print("SKIP: qemu-aarch64-static or aarch64-linux-gnu-gcc is missing")
        return 1 if in_ci else 77
    entries = [e for e in TABLE if (not args.case or e.name in args.case) and args.arch in e.arches]
    unknown = set(args.case or []) - {e.name for e in TABLE}
    if unknown:
        print(f"no such case: {', '.join(sorted(unknown))} (--list prints them)")
        return 1
    work = args.work or tempfile.mkdtemp(prefix="wheelcheck-libtree-")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    H.build_probe(work, args.arch)
    args.platform = H.glibc_platform(work, args.arch)
    H.make_base(work, args.arch, "debian", False)
    print(f"libtree cases: {len(entries)}, {args.arch}, work {work}")
    print(f"  replay one: {sys.argv[0]} --wheelcheck {args.wheelcheck} --arch {args.arch} --case NAME")
    sys.stdout.flush()
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_entry, args, n, e, work): e for n, e in enumerate(entries)}
        results = {}
        for fut in concurrent.futures.as_completed(futs):
            e = futs[fut]
            try:
                results[e.name] = fut.result()[0]
            except Exception as ex:  # a harness failure is a failure, never a pass
                results[e.name] = [f"(harness) {type(ex).__name__}: {ex}"]
    for e in entries:
        problems = results[e.name]
        if problems:
            failed += 1
            print(f"DISAGREE {e.name} ({e.mirrors})")
            for p in problems:
                print("    " + p)
            print(f"    replay: {sys.argv[0]} --wheelcheck {args.wheelcheck} --arch {args.arch} --case {e.name}")
        else:
            print(f"ok {e.name}")
    if not args.keep and not args.work and failed == 0:
        shutil.rmtree(work, ignore_errors=True)
    print(f"libtree cases ({args.arch}): {len(entries)} in {time.time() - t0:.0f} s, {failed} failed, "
          f"{len(entries) - failed} passed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""What the job suite builds at test time: small ELF files compiled from inline C (gcc), wheels packed with
tests/tools/make_wheel.py, and root folders laid out as images are (several Pythons, a torch distribution,
the host's own C library). Nothing here is downloaded or copied into the repository.
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import make_wheel  # noqa: E402

# The CPython C API symbols each fake interpreter exports, by the version that added them: a wheel built
# for 3.12 binds a symbol only 3.12 and later have, so binding against the wrong interpreter shows.
API = {
    (3, 9): ["PyModule_Create2"],
    (3, 11): ["Py_Version"],
    (3, 12): ["PyUnstable_Long_IsCompact"],
    (3, 13): ["PyUnstable_Module_SetGIL"],
}


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def cc(out, source, args=(), shared=True):
    """Compiles C source text into `out` (a shared object by default)."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = out + ".c"
    with open(src, "w") as f:
        f.write(source)
    run(["gcc", "-O1", "-fPIC", *(["-shared"] if shared else []), "-o", out, src, *args])
    os.unlink(src)
    return out


def api_symbols(major, minor):
    return [s for (ma, mi), names in API.items() if (ma, mi) <= (major, minor) for s in names]


def fake_python(root, prefix, version, exports=True):
    """An interpreter at PREFIX/bin/pythonX.Y with its stdlib marker and site-packages; with exports, its
    executable exports the C API of its version (-rdynamic), as a static-libpython build's does."""
    major, minor = (int(x) for x in version.split("."))
    defs = "".join(f"void {s}(void) {{}}\n" for s in api_symbols(major, minor)) if exports else ""
    exe = os.path.join(root, prefix.lstrip("/"), "bin", f"python{version}")
    cc(exe, defs + "int main(void) { return 0; }\n", ["-rdynamic"] if exports else [], shared=False)
    lib = os.path.join(root, prefix.lstrip("/"), "lib", f"python{version}")
    os.makedirs(lib, exist_ok=True)
    open(os.path.join(lib, "os.py"), "w").close()
    site = "dist-packages" if prefix == "/usr" else "site-packages"
    os.makedirs(os.path.join(lib, site), exist_ok=True)
    return exe


def host_libc(root):
    """The host's C library and loader (Debian 12: glibc 2.36), where the image's loader looks."""
    libdir = os.path.join(root, "usr/lib/x86_64-linux-gnu")
    os.makedirs(libdir, exist_ok=True)
    for name in ["libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2", "libgcc_s.so.1", "libstdc++.so.6"]:
        src = os.path.realpath(os.path.join("/usr/lib/x86_64-linux-gnu", name))
        shutil.copy(src, os.path.join(libdir, name))
    os.makedirs(os.path.join(root, "lib64"), exist_ok=True)
    link = os.path.join(root, "lib64/ld-linux-x86-64.so.2")
    if not os.path.lexists(link):
        os.symlink("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", link)
    if not os.path.lexists(os.path.join(root, "lib")):
        os.symlink("usr/lib", os.path.join(root, "lib"))


def many_pythons_root(root):
    """A root with four Pythons, as a CI image with pyenv beside Debian's: pyenv's 3.10 (the first found
    in folder order), 3.12 and 3.13, and Debian's 3.11, which /usr/bin/python3 runs. Each exports the C API
    of its own version only, so a wheel bound against another one's interpreter misses a symbol."""
    host_libc(root)
    fake_python(root, "/root/.pyenv/versions/3.10.13", "3.10")
    fake_python(root, "/root/.pyenv/versions/3.12.7", "3.12")
    fake_python(root, "/root/.pyenv/versions/3.13.0", "3.13")
    fake_python(root, "/usr", "3.11")
    os.symlink("python3.11", os.path.join(root, "usr/bin/python3"))
    return root


def extension_wheel(out_dir, name, tag, symbols, requires_dist=(), needed=(), runpath=None):
    """A wheel NAME-1.0-TAG.whl whose one extension module calls `symbols` (left undefined, as an
    interpreter's or a library's), links `needed` (pairs of -L folder, library) and has `runpath`."""
    python = tag.split("-")[0]
    build = os.path.join(out_dir, "build-" + name + "-" + tag)
    calls = "".join(f"extern void {s}(void);\n" for s in symbols)
    body = "".join(f"  {s}();\n" for s in symbols)
    args = []
    for folder, lib in needed:
        args += ["-L" + folder, "-l:" + lib]
    if runpath:
        args += ["-Wl,--enable-new-dtags,-rpath," + runpath]
    so = cc(os.path.join(build, f"_ext.{python}.so"),
            calls + f"void* PyInit__ext(void) {{\n{body}  return 0;\n}}\n", ["-Wl,--allow-shlib-undefined", *args])
    whl = os.path.join(out_dir, f"{name}-1.0-{tag}.whl")
    # Named as its build names it: a stable-ABI build .abi3.so (CPython 3.13 never imports a .cpython-310- one).
    suffix = ".abi3.so" if tag.split("-")[1] == "abi3" else f".cpython-{python[2:]}-x86_64-linux-gnu.so"
    make_wheel.write_wheel(whl, [(f"{name}/_ext{suffix}", so)],
                           requires_dist=list(requires_dist))
    return whl


def torch_root(root, needs_glibc_238):
    """A glibc 2.36 root (the host's) with Python 3.11 and torch 2.10.0 in its dist-packages, whose
    torch/lib/libc10.so exports c10_version() and, with needs_glibc_238, needs GLIBC_2.38 of libc.so.6
    (linked against a stand-in libc.so.6 that defines that version: as a torch built on a newer glibc)."""
    host_libc(root)
    fake_python(root, "/usr", "3.11")
    os.symlink("python3.11", os.path.join(root, "usr/bin/python3"))
    site = os.path.join(root, "usr/lib/python3.11/dist-packages")
    lib = os.path.join(site, "torch/lib")
    stub_dir = os.path.join(os.path.dirname(root.rstrip("/")), "stub-libc-" + os.path.basename(root.rstrip("/")))
    args = []
    source = "int c10_version(void) { return 210; }\n"
    if needs_glibc_238:
        vs = os.path.join(stub_dir, "v.map")
        os.makedirs(stub_dir, exist_ok=True)
        with open(vs, "w") as f:
            f.write("GLIBC_2.38 { global: __isoc23_strtol; local: *; };\n")
        cc(os.path.join(stub_dir, "libc.so.6"), "long __isoc23_strtol(void) { return 0; }\n",
           ["-nostdlib", "-Wl,-soname,libc.so.6", "-Wl,--version-script=" + vs])
        source = "extern long __isoc23_strtol(void);\nint c10_version(void) { return (int)__isoc23_strtol(); }\n"
        args = ["-nostdlib", "-L" + stub_dir, "-l:libc.so.6"]
    cc(os.path.join(lib, "libc10.so"), source, ["-Wl,-soname,libc10.so", *args])
    info = os.path.join(site, "torch-2.10.0.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0\n")
    with open(os.path.join(info, "RECORD"), "w") as f:
        f.write("torch/lib/libc10.so,,\ntorch-2.10.0.dist-info/METADATA,,\n")
    return lib

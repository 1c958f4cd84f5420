"""Compiling the stand-ins the FlagOS tests pack into wheels (tests/flagos/incidents.py, catalog.py).

build() compiles C or C++ source into a shared library (or a program) for x86_64 or aarch64 (the
aarch64-linux-gnu cross compilers), deterministic (-g0, the work folder mapped out of the binary) and cached by
content: a stamp beside the output holds the hash of everything that went into it.
"""
import hashlib
import json
import os
import shutil
import subprocess


def have_compiler(arch):
    return shutil.which("gcc" if arch == "x86_64" else "aarch64-linux-gnu-gcc") is not None


def build(out, source, arch, work, args=(), cxx=False, shared=True, soname=None):
    """Compiles `source` into `out`; `work` is the folder mapped to "." in its debug paths."""
    key = hashlib.sha256(json.dumps([source, arch, list(args), cxx, shared, soname]).encode()).hexdigest()[:16]
    stamp = out + ".key"
    if os.path.exists(out) and os.path.exists(stamp) and open(stamp).read() == key:
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = out + (".cpp" if cxx else ".c")
    with open(src, "w") as f:
        f.write(source)
    prefix = "" if arch == "x86_64" else "aarch64-linux-gnu-"
    cmd = [prefix + ("g++" if cxx else "gcc"), "-fPIC", "-O1", "-g0", "-w", "-fno-builtin",
           f"-ffile-prefix-map={work}=.", "-o", out, src]
    if shared:
        cmd += ["-shared", f"-Wl,-soname,{soname or os.path.basename(out)}"]
    cmd += ["-Wl,--no-as-needed"] + list(args)
    subprocess.run(cmd, check=True)
    with open(stamp, "w") as f:
        f.write(key)
    return out

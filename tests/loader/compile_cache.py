"""Compiled libraries of the loader harness, kept by content (harness.py, libtree.py).

The generated cases are the same every run of a seed, and compiling them is most of the harness's time.
A compile is kept under the sha256 of what decides its output: the compiler and linker (their -v and the
C library they link against), the command with the case's folder written as @B, and the bytes of every
file it reads (the source, a version script, the libraries it links); a later run copies it instead of
compiling. An output that names the folder it was built in (a library without a soname, NEEDED by the
path it was linked as) is never kept. WHEELCHECK_LOADER_CC_CACHE names the folder (default: the build caches' loader-cc/, beside
ccache; empty: no cache).
"""
import hashlib, os, shutil, subprocess, threading

CC_CACHE = os.environ.get("WHEELCHECK_LOADER_CC_CACHE", os.path.join(
    os.environ.get("WHEELCHECK_BUILD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wheelcheck", "build"), "loader-cc"))
# Raised when what a kept output may hold changes: entries of another format are never used.
FORMAT = "loader-cc 2"
_toolchains, _toolchain_lock = {}, threading.Lock()


def toolchain_id(compiler):
    with _toolchain_lock:
        if compiler not in _toolchains:
            h = hashlib.sha256()
            ld = _run([compiler, "-print-prog-name=ld"]).stdout.strip()
            for probe in ([compiler, "-v"], [ld, "--version"]):
                p = _run(probe)
                h.update((p.stdout + p.stderr).encode())
            libc = _run([compiler, "-print-file-name=libc.so.6"]).stdout.strip()
            if os.path.isfile(libc):
                with open(libc, "rb") as f:
                    h.update(f.read())
            _toolchains[compiler] = h.hexdigest()
        return _toolchains[compiler]


def _run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def compile_kept(cmd, cwd, out, inputs, must):
    """Runs the compile `cmd` with `must` (writing `out`) unless the cache has its output; `inputs`: the files
    it reads."""
    if not CC_CACHE:
        must(cmd, cwd=cwd)
        return
    h = hashlib.sha256(f"{FORMAT}\0{toolchain_id(cmd[0])}".encode())
    for arg in cmd:
        h.update(arg.replace(cwd, "@B").encode() + b"\0")
    for path in inputs:
        with open(path, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    key = h.hexdigest()
    kept = os.path.join(CC_CACHE, key[:2], key)
    if os.path.isfile(kept):
        shutil.copyfile(kept, out)
        os.chmod(out, 0o755)
        return
    must(cmd, cwd=cwd)
    # An output that names its case's folder (a library without a soname is NEEDED by the path it was
    # linked as) depends on where it was built: compiled again each time, never kept.
    with open(out, "rb") as f:
        if os.path.dirname(cwd).encode() in f.read():
            return
    os.makedirs(os.path.dirname(kept), exist_ok=True)
    tmp = f"{kept}.tmp{os.getpid()}.{threading.get_ident()}"
    shutil.copyfile(out, tmp)
    os.replace(tmp, kept)

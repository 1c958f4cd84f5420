#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target, at run time, from what this machine and the repository have.

  seeds.py BUILD_DIR [--out DIR] [--shared DIR]

Writes DIR/<target>/seed-* (default BUILD_DIR/fuzz-corpus; files libFuzzer added beside them are left alone).
Nothing written here is committed: ELF files are compiled on the spot with gcc (and the cross compilers
when present), system libraries and /etc/ld.so.cache are read where they lie, wheels come from the
build's samples, ../shared (when present) and python's zipfile, JSON from db/. Each seed carries the
selector bytes its entry function reads first (see fuzz/entries.hpp). Seeds stay under 1 MiB so that
libFuzzer's default -max_len stays small enough for fast executions.
"""
import argparse, base64, glob, hashlib, io, os, re, shutil, subprocess, sys, tempfile, zipfile, zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_SEED = 1 << 20

LIB_C = r"""
int foo_v1(int x) { return x + 1; }
int foo_v2(int x) { return x + 2; }
__asm__(".symver foo_v1,foo@FOO_1.0");
__asm__(".symver foo_v2,foo@@FOO_2.0");
extern int missing_function(void) __attribute__((weak));
int data_object = 42;
int call_missing(void) { return missing_function ? missing_function() : 0; }
"""
LIB_MAP = "FOO_1.0 { global: foo; data_object; call_missing; local: *; };\nFOO_2.0 { global: foo; } FOO_1.0;\n"
EXE_C = r"""
#include <stdio.h>
#include <math.h>
int main(int argc, char** argv) { printf("%f %s\n", sqrt((double)argc), argv[0]); return 0; }
"""
CXX_CC = r"""
#include <string>
#include <vector>
namespace ns { struct X { std::string name() const { return "x"; } };
std::vector<std::string> names(const X& x, int n) { return std::vector<std::string>(n, x.name()); } }
"""

KERNEL_CU = r"""
__global__ void add(float* a, const float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += b[i]; }
extern "C" void launch(float* a, const float* b, int n) { add<<<(n + 255) / 256, 256>>>(a, b, n); }
"""

TAGS = ["cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64", "py3-none-any", "cp311-abi3-musllinux_1_2_aarch64",
        "pp310-pypy310_pp73-manylinux_2_28_aarch64", "cp39-cp39-macosx_11_0_arm64", "cp312-cp312-win_amd64",
        "cp38-cp38-manylinux1_i686", "cp310-cp310-manylinux2010_x86_64", "cp313-cp313t-linux_armv7l",
        "py2.py3-none-any", "cp312-cp312-android_24_arm64_v8a", "cp312-cp312-linux_ppc64le"]
VERSIONS = ["1.0", "v2.10.0+cu130", "1.0a1.post2.dev3", "2!1.0-1", "1.0.0rc1", "0.9.1+ascend.local_3", "1.0-r2",
            "3.12.4", "1.0.*", "junk"]
SPECIFIERS = [">=3.10,<3.14", "~=3.11", "==3.12.*", "!=3.13.0", "===foo", ">3.8, <=3.12.1", "", "~=1", "<3.10.0a1"]


class Corpus:
    def __init__(self, out):
        self.out = out
        self.counts = {}

    def add(self, target, name, data):
        if isinstance(data, str):
            data = data.encode()
        if len(data) > MAX_SEED:
            return
        folder = os.path.join(self.out, target)
        if target not in self.counts:  # the seeds of an earlier run go, what libFuzzer added stays
            os.makedirs(folder, exist_ok=True)
            for old in glob.glob(os.path.join(folder, "seed-*")):
                os.remove(old)
            self.counts[target] = 0
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:80]
        with open(os.path.join(folder, f"seed-{safe}"), "wb") as f:
            f.write(data)
        self.counts[target] += 1


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **kw)


def build_elves(tmp):
    """(name, bytes) of ELF files compiled here: a versioned shared library (native and cross), a program,
    a C++ library; empty when no compiler is present."""
    out = []
    src, mapf = os.path.join(tmp, "lib.c"), os.path.join(tmp, "lib.map")
    open(src, "w").write(LIB_C)
    open(mapf, "w").write(LIB_MAP)
    small_pages = ["-nostdlib", "-Wl,-z,max-page-size=4096"]  # 64 KiB pages would pad the file with zeros
    compilers = [("gcc", []), ("i686-linux-gnu-gcc", small_pages), ("aarch64-linux-gnu-gcc", small_pages),
                 ("powerpc64-linux-gnu-gcc", small_pages)]
    for cc, extra in compilers:
        if not shutil.which(cc):
            continue
        so = os.path.join(tmp, f"libfoo-{cc}.so.1")
        if run([cc, "-shared", "-fPIC", "-O1", "-Wl,-soname,libfoo.so.1", f"-Wl,--version-script={mapf}",
                "-Wl,-rpath,$ORIGIN/../lib", "-o", so, src] + extra).returncode == 0:
            out.append((os.path.basename(so), open(so, "rb").read()))
    if shutil.which("gcc"):
        exe_src, exe = os.path.join(tmp, "exe.c"), os.path.join(tmp, "exe")
        open(exe_src, "w").write(EXE_C)
        if run(["gcc", "-O1", "-Wl,--enable-new-dtags,-rpath,/opt/x", "-o", exe, exe_src, "-lm"]).returncode == 0:
            out.append(("exe", open(exe, "rb").read()))
    if shutil.which("g++"):
        cc_src, cc_so = os.path.join(tmp, "x.cc"), os.path.join(tmp, "libx.so")
        open(cc_src, "w").write(CXX_CC)
        if run(["g++", "-shared", "-fPIC", "-O1", "-o", cc_so, cc_src]).returncode == 0:
            out.append(("libx.so", open(cc_so, "rb").read()))
    # GPU code: a kernel library from nvcc (CUDA 13.0 on this kind of machine), SASS and PTX, small with
    # the shared CUDA runtime.
    nvcc = next((p for p in ["/usr/local/cuda-13.0/bin/nvcc", shutil.which("nvcc") or ""] if p and os.path.isfile(p)), None)
    if nvcc:
        cu, so = os.path.join(tmp, "k.cu"), os.path.join(tmp, "libk.so")
        open(cu, "w").write(KERNEL_CU)
        if run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-gencode",
                "arch=compute_80,code=[sm_80,compute_80]", "-gencode", "arch=compute_90a,code=sm_90a",
                "-o", so, cu]).returncode == 0:
            # nvcc names its intermediate files after its process id (tmpxft_<8 hex digits>_...) and a
            # symbol keeps that name: made the same every time (same length, so no offset moves), so that
            # the seeds, and CI's fuzzing over them, are the same bytes on every run.
            data = re.sub(rb"tmpxft_[0-9a-f]{8}_", b"tmpxft_00000000_", open(so, "rb").read())
            out.append(("libk.so", data))
    # Small system libraries only: the largest seed sets libFuzzer's -max_len, and so the cost of every input.
    for lib in ["libz.so.1", "libutil.so.1", "libdl.so.2", "libpthread.so.0"]:
        path = os.path.join("/usr/lib/x86_64-linux-gnu", lib)
        if os.path.isfile(path) and os.path.getsize(path) <= 128 << 10:
            out.append((lib, open(path, "rb").read()))
    return out


def fatbin_seeds(corpus, elves, tmp):
    """The .nv_fatbin sections of the GPU seeds, and containers written here: SASS, compressed PTX with
    an ISA, an a/f pair, zero padding between containers, a cut entry."""
    import struct
    for name, data in elves:
        if name != "libk.so":
            continue
        path, sec = os.path.join(tmp, "fatbin-src.so"), os.path.join(tmp, "fatbin.bin")
        open(path, "wb").write(data)
        if run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", path, sec]).returncode == 0:
            corpus.add("fatbin", "nvcc", open(sec, "rb").read())

    def entry(kind, arch, flags, isa=(0, 0), payload=b"\0" * 24, header=64):
        head = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x101, header, len(payload), 0, 0, isa[1], isa[0], arch, 0, 0,
                           flags, 0, 0)
        return head + b"\0" * (header - len(head)) + payload

    def container(*entries):
        body = b"".join(entries)
        return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body

    a = container(entry(2, 80, 0x11), entry(1, 80, 0x8011, (9, 0)))
    b = container(entry(2, 90, 0x100011), entry(2, 100, 0x1200011, header=112), entry(1, 120, 0x208011, (9, 3), header=80))
    corpus.add("fatbin", "written", a + b"\0" * 8 + b)
    corpus.add("fatbin", "cut", (a + b)[:-30])


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(files, stored=False, name="demo", version="1.0", tag="cp312-cp312-linux_x86_64"):
    """A well-formed wheel in memory, from (archive name, bytes)."""
    info = f"{name}-{version}.dist-info"
    meta = {f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: seeds\nRoot-Is-Purelib: false\nTag: {tag}\n",
            f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                "Requires-Python: >=3.10\nRequires-Dist: numpy>=1.20\n\nA description.\n"}
    buf = io.BytesIO()
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    lines = []
    # A fixed time stamp: the same seeds, byte for byte, on every run (CI's fuzzing starts from them).
    stamp = (2024, 1, 1, 0, 0, 0)
    with zipfile.ZipFile(buf, "w", method) as z:
        for arc, data in list(files) + [(k, v.encode()) for k, v in meta.items()]:
            z.writestr(zipfile.ZipInfo(arc, stamp), data, method)
            lines.append(record_line(arc, data))
        lines.append(f"{info}/RECORD,,")
        z.writestr(zipfile.ZipInfo(f"{info}/RECORD", stamp), "\n".join(lines) + "\n", method)
    return buf.getvalue()


def zip_seeds(corpus, elves, build, shared, tmp):
    small = [(n, b) for n, b in elves if len(b) < 200_000]
    so = small[0][1] if small else b"\x7fELF"
    corpus.add("zip", "demo-deflated", make_wheel([("demo/_native.so", so), ("demo/__init__.py", b"x = 1\n")]))
    corpus.add("zip", "demo-stored", make_wheel([("demo/_native.so", so)], stored=True))
    corpus.add("zip", "demo-many", make_wheel([(f"demo/lib/{n}", b) for n, b in small[:4]]))
    hostile = os.path.join(REPO, "tests", "tools", "hostile_zip.py")
    for kind, args in [("valid", []), ("truncated", []), ("bomb", ["1M"]), ("lying-size", []), ("short-size", []),
                       ("bad-crc", []), ("traversal", []), ("duplicate", []), ("encrypted", [])]:
        out = os.path.join(tmp, f"h_{kind.replace('-', '_')}-1.0-py3-none-any.whl")
        if run([sys.executable, hostile, kind, out] + args).returncode == 0 and os.path.isfile(out):
            corpus.add("zip", f"hostile-{kind}", open(out, "rb").read())
    wheels = []
    for folder in [os.path.join(build, "samples"), os.path.join(REPO, "build", "samples")] + ([shared] if shared else []):
        wheels += glob.glob(os.path.join(folder, "**", "*.whl"), recursive=True)
    seen = set()
    for w in sorted(wheels):
        if os.path.basename(w) in seen or os.path.getsize(w) > MAX_SEED:
            continue
        seen.add(os.path.basename(w))
        corpus.add("zip", os.path.basename(w), open(w, "rb").read())
        corpus.add("names", "file-" + os.path.basename(w), os.path.basename(w) + "\n>=3.10")
        with zipfile.ZipFile(w) as z:
            for n in z.namelist():
                base = n.rsplit("/", 1)[-1]
                if ".dist-info/" in n and base in ("WHEEL", "METADATA", "RECORD"):
                    sel = {"WHEEL": "0", "METADATA": "1", "RECORD": "2"}[base]
                    corpus.add("dist_info", f"{base}-{os.path.basename(w)}", sel.encode() + z.read(n))
    return seen


def inflate_tail_seeds(corpus, elves):
    texts = [(n, b[:300_000]) for n, b in elves[:3]]
    texts += [("text", b"".join(b"line %d of a text that repeats\n" % i for i in range(5000))),
              ("zeros", bytes(100_000)), ("short", b"hello hello hello")]
    for name, data in texts:
        for level in (1, 6, 9):
            c = zlib.compressobj(level, zlib.DEFLATED, -15)
            stream = c.compress(data) + c.flush()
            for keep in (len(stream), 2000, 300, 40):
                tail = stream[-keep:]
                corpus.add("inflate_tail", f"{name}-l{level}-{keep}", len(data).to_bytes(4, "little") + tail)


def inflate_middle_seeds(corpus, elves):
    # A stream with the anchor and the wanted bytes in it, at their true offsets: a placement to find.
    import random
    rnd = random.Random(5)
    data = bytearray(b"".join(b"row %d of a table\n" % i for i in range(4000)))
    anchor_at, want = 50_000, 40_000
    anchor = bytes(rnd.randrange(1, 255) for _ in range(8))
    data[anchor_at:anchor_at + 8] = anchor
    for k in range(0, 64, 8):
        data[want + k:want + k + 8] = anchor
    for level in (1, 6, 9):
        c = zlib.compressobj(level, zlib.DEFLATED, -15)
        stream = c.compress(bytes(data)) + c.flush()
        head = anchor_at.to_bytes(4, "little") + anchor + want.to_bytes(4, "little")
        corpus.add("inflate_middle", f"table-l{level}", head + stream)
        corpus.add("inflate_middle", f"table-l{level}-cut", head + stream[len(stream) // 3:])
    for name, blob in elves[:2]:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        stream = c.compress(blob[:100_000]) + c.flush()
        corpus.add("inflate_middle", f"{name}-elf", (64).to_bytes(4, "little") + blob[64:72] + (0).to_bytes(4, "little") + stream[1000:])


def dist_info_seeds(corpus):
    corpus.add("dist_info", "wheel", "0Wheel-Version: 1.0\nGenerator: bdist_wheel (0.41)\nRoot-Is-Purelib: false\n"
               "Tag: cp312-cp312-manylinux_2_17_x86_64\nTag: cp312-cp312-manylinux2014_x86_64\nBuild: 1\n")
    corpus.add("dist_info", "metadata", "1Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0\nSummary: x\n"
               "Requires-Dist: numpy (>=1.20) ; extra == 'np'\nRequires-Python: >=3.9\n  continued\n\nBody text\n")
    corpus.add("dist_info", "record", '2demo/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,1\n'
               '"demo/a,b.py",sha256=abc,12\n"demo/""q"".py",,\ndemo-1.0.dist-info/RECORD,,\n')
    corpus.add("dist_info", "headers", "3Key: value\nOther:  spaced value \n\tcontinuation\nKey: second\n\nbody")


def names_seeds(corpus):
    for i, tag in enumerate(TAGS):
        py, abi, plat = tag.split("-")
        corpus.add("names", f"tag-{i}", f"pkg_name-1.0-{tag}.whl\n{plat}")
        corpus.add("names", f"interp-{i}", f"{py}\n{abi}")
        corpus.add("names", f"plat-{i}", f"{plat}\n{plat.rsplit('_', 1)[-1]}")
    corpus.add("names", "build", "torch-2.10.0%2Bcu130-1b-cp312-cp312-manylinux_2_28_x86_64.whl\nx86_64")
    for i, v in enumerate(VERSIONS):
        corpus.add("names", f"version-{i}", f"{v}\n{VERSIONS[(i + 1) % len(VERSIONS)]}")
    for i, s in enumerate(SPECIFIERS):
        corpus.add("names", f"spec-{i}", f"{s}\n3.12")


def demangle_seeds(corpus):
    names = set()
    for lib in ["/usr/lib/x86_64-linux-gnu/libstdc++.so.6"] + glob.glob("/usr/lib/x86_64-linux-gnu/libLIEF.so*")[:1]:
        if not os.path.exists(lib) or not shutil.which("nm"):
            continue
        out = run(["nm", "-D", "--defined-only", lib]).stdout.decode(errors="replace")
        names.update(line.split()[-1].split("@")[0] for line in out.splitlines() if " _Z" in line)
    picked = sorted(names, key=lambda n: (hashlib.sha1(n.encode()).hexdigest()))[:300]
    picked += ["_ZN3c1013MessageLoggerC1EPKcii", "_ZNK3ns1XclEv", "_ZZ4mainE1x", "_ZTVN10__cxxabiv117__class_type_infoE",
               "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc", "_ZN2ns3fooB5cxx11Ev",
               "_ZN2nsplERKNS_1XES2_", "_ZN2ns1XIiE3getIJidEEEvDpT_", "_Z3fooIiEDTplfp_fp0_ET_S0_"]
    for i, n in enumerate(picked):
        corpus.add("demangle", f"n{i}", n)
    corpus.add("demangle", "demangled", "bool ns::operator< <int>(ns::X const&, int) const [clone .cold]")


def ldconfig_seeds(corpus):
    if os.path.isfile("/etc/ld.so.cache"):
        corpus.add("ldconfig", "ld.so.cache", b"0" + open("/etc/ld.so.cache", "rb").read())
    confs = [open(p, "rb").read() for p in ["/etc/ld.so.conf"] + sorted(glob.glob("/etc/ld.so.conf.d/*.conf"))
             if os.path.isfile(p)]
    if confs:
        corpus.add("ldconfig", "system-conf", b"1" + b"\0".join(confs[:3]))
    corpus.add("ldconfig", "includes", b"1include /etc/ld.so.conf.d/*.conf\n/usr/local/lib\n\0"
               b"/opt/lib=libc6\n# comment\nhwcap 0 nosegneg\ninclude b.conf\n\0/lib/\n/usr/lib/x86_64-linux-gnu\n"
               b"relative/dir\ninclude loop.conf\ninclude ../ld.so.conf\n")


def index_seeds(corpus):
    digest = "a" * 64
    html = ('<!DOCTYPE html><html><head><meta name="pypi:repository-version" content="1.1"><base href="../files/">'
            '</head><body><a href="demo-1.0-py3-none-any.whl#sha256=' + digest + '" data-requires-python="&gt;=3.10" '
            'data-dist-info-metadata="sha256=' + digest + '">demo-1.0-py3-none-any.whl</a>'
            '<a href=/x/demo-1.1.tar.gz data-yanked="broken &amp; bad">demo-1.1.tar.gz</a>'
            '<a href="https://other.example/demo-2.0-cp312-cp312-linux_x86_64.whl#md5=00">x</a></body></html>')
    corpus.add("index", "html", "0" + html)
    corpus.add("index", "html-old", '0<html><body><a href="demo-0.1.zip">demo</a><a>no href</a></body>')
    js = ('{"meta": {"api-version": "1.1"}, "name": "demo", "versions": ["1.0", "1.1"], "files": ['
          '{"filename": "demo-1.0-py3-none-any.whl", "url": "../../files/demo-1.0-py3-none-any.whl", '
          '"hashes": {"sha256": "' + digest + '"}, "requires-python": ">=3.10", "core-metadata": {"sha256": "' + digest +
          '"}, "size": 1234, "upload-time": "2024-01-01T00:00:00.000000Z", "yanked": false}, '
          '{"filename": "demo-1.1.tar.gz", "url": "https://x.example/demo-1.1.tar.gz", "hashes": {}, '
          '"yanked": "broken", "dist-info-metadata": true}]}')
    corpus.add("index", "json", "1" + js)
    corpus.add("index", "json-newer", '1{"meta": {"api-version": "1.9"}, "name": "demo", "files": []}')


def image_seeds(corpus):
    for path in sorted(glob.glob(os.path.join(REPO, "db", "images", "*.json")) +
                       glob.glob(os.path.join(REPO, "db", "layers", "*.json"))):
        corpus.add("image", "image-" + os.path.basename(path), b"00" + open(path, "rb").read())
    for path in sorted(glob.glob(os.path.join(REPO, "db", "rules", "*.json"))):
        corpus.add("image", "rules-" + os.path.basename(path), b"10" + open(path, "rb").read())
    for libc, family in enumerate(["manylinux", "musllinux", "android"]):
        path = os.path.join(REPO, "db", "policies", f"{family}-policy.json")
        if os.path.isfile(path):
            corpus.add("image", f"policy-{family}", b"2" + bytes([ord("0") + libc]) + open(path, "rb").read())


PYLOCK = r'''lock-version = "1.0"
requires-python = ">=3.10"
created-by = "seeds"

[[packages]]
name = "torch"
version = "2.10.0+cpu"
marker = "platform_machine == 'x86_64' and python_version >= '3.10'"
requires-python = ">=3.10"
index = "https://download.pytorch.org/whl/cpu"
wheels = [
  {name = "torch-2.10.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl", url = "https://download.pytorch.org/whl/cpu/torch-2.10.0%2Bcpu-cp312-cp312-manylinux_2_28_x86_64.whl", size = 184000000, hashes = {sha256 = "DIGEST"}},
  {path = "./wheels/torch-2.10.0+cpu-cp311-cp311-linux_x86_64.whl", hashes.sha256 = "DIGEST"},
]
sdist = {url = "https://files.example/torch-2.10.0.tar.gz#sha256=DIGEST", upload-time = 2024-01-01T00:00:00Z}

[[packages]]
name = "local-tool"
directory = {path = "../tool", editable = true}

[[packages]]
name = "pinned-git"
vcs = {type = "git", url = "https://github.com/example/x.git", commit-id = "0123abc"}
[packages.tool.seeds]
note = """a "multi-line"
basic string"""
other = 'literal \ text'
'''

PIP_REPORT = r'''{"version": "1", "pip_version": "24.0", "install": [
 {"download_info": {"url": "https://files.example/demo-1.0-py3-none-any.whl",
   "archive_info": {"hash": "sha256=DIGEST", "hashes": {"sha256": "DIGEST"}}},
  "is_direct": false, "is_yanked": false, "requested": true,
  "metadata": {"metadata_version": "2.1", "name": "demo", "version": "1.0", "requires_python": ">=3.8"}},
 {"download_info": {"url": "file:///src/tool", "dir_info": {"editable": true}}, "metadata": {"name": "tool"}},
 {"download_info": {"url": "https://github.com/example/x.git", "vcs_info": {"vcs": "git", "commit_id": "0123abc"}},
  "metadata": {"name": "x", "version": "0.1"}},
 {"download_info": {"url": "https://files.example/old-0.9.tar.gz#md5=00"}, "metadata": {"name": "old", "version": "0.9"}}],
 "environment": {"python_full_version": "3.12.4", "platform_machine": "x86_64", "sys_platform": "linux"}}
'''

# -r more.txt and -r loop.txt name the files fuzz_lock writes in its folder (a pin, and a cycle).
REQUIREMENTS = r'''# pinned, as pip-compile writes them
--index-url https://download.pytorch.org/whl/cpu
--extra-index-url=https://pypi.org/simple
-f ./wheels
torch==2.10.0+cpu ; platform_machine == "x86_64" \
    --hash=sha256:DIGEST \
    --hash="sha256:OTHER"
numpy[extra1, extra2] == 2.1.0 ; python_version >= "3.10"  # a comment
demo @ https://files.example/demo-1.0-py3-none-any.whl#sha256=DIGEST ; sys_platform == 'linux'
./dist/local_pkg-0.3-cp312-cp312-linux_x86_64.whl
https://files.example/old-0.9.tar.gz#egg=old
-e git+https://github.com/example/x.git#egg=x
-c constraints.txt
--only-binary :all:
-r more.txt
exact===1.0.local
'''

MARKERS = ["python_version >= '3.10' and platform_machine == 'x86_64'",
           "(sys_platform == \"linux\" or os_name == 'nt') and python_full_version < '3.13.0rc1'",
           "extra == 'dev-tools' or 'cpu' in extras", "'dev' not in dependency_groups",
           "implementation_name == 'cpython' and platform_release >= '6'", "'3.12' ~= python_version",
           "platform.machine in 'x86_64 aarch64' and python_implementation === 'CPython'"]


# Python sources for the python target: FlagTree#1234's wrapper shape (a load at import from __file__), lazy
# and guarded loads, cffi, the tokenizer's corners (every string prefix, triple quotes across lines, f-strings,
# continuations, brackets over lines, CRLF, tabs, a loader's name in a comment and a string), and real files
# of this machine's Python when it has them.
PY_WRAPPER = """import os
import ctypes
from typing import TYPE_CHECKING

_here = os.path.dirname(os.path.abspath(__file__))
_lib = ctypes.CDLL(os.path.join(_here, "..", "..", "_C", "libflagcx.so"), mode=ctypes.RTLD_GLOBAL)

def lazy():
    import numpy
    return ctypes.cdll.LoadLibrary("libm.so.6")

try:
    import torch
    torch.ops.load_library(os.path.join(_here, "libops.so"))
except (ImportError, OSError):
    pass
if TYPE_CHECKING: import never
"""
PY_CORNERS = r"""'''A docstring that names ctypes.CDLL and ffi.dlopen
over lines'''
# cdll.LoadLibrary("in a comment")
x = rb'\'' + Rb"\"" + f"{y!r:>{w}}" + F'{{}}' + u'''a
b''' + br'''c'''
s = ("a"
     'b', [1,
           2], {3:
                4})
if x and \
   y: import a.b as c, d
from .. import (e,
    f as g)
from . x import *
class K(object): pass
async def h(): await z
"""


def python_seeds(corpus):
    corpus.add("python", "wrapper", PY_WRAPPER)
    corpus.add("python", "corners", PY_CORNERS)
    corpus.add("python", "crlf-tabs", PY_CORNERS.replace("\n", "\r\n").replace("    ", "\t"))
    corpus.add("python", "cffi",
               "from cffi import FFI\nffi = FFI()\nlib = ffi.dlopen(None)\nL = ffi.dlopen('libz.so.1')\n")
    corpus.add("python", "unterminated", "x = 'abc\nimport a\ny = '''never closed\nimport b\n")
    for name in ("ctypes/__init__.py", "ctypes/util.py", "json/decoder.py"):
        path = os.path.join("/usr/lib/python3.11", name)
        if os.path.exists(path):
            corpus.add("python", "cpython-" + name.replace("/", "-"), open(path, "rb").read())


def layer_seeds(corpus):
    """Tar layers as images write them: folders, libraries, links (a merged-/usr link, one climbing, one
    absolute), a hard link, whiteouts and an opaque marker, GNU and pax long names; plain, gzip and zstd."""
    import gzip
    import io
    import shutil
    import subprocess
    import tarfile

    def tar(entries, fmt=tarfile.PAX_FORMAT):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
            for name, kind, extra in entries:
                ti = tarfile.TarInfo(name)
                if kind == "dir":
                    ti.type = tarfile.DIRTYPE
                    t.addfile(ti)
                elif kind == "sym":
                    ti.type, ti.linkname = tarfile.SYMTYPE, extra
                    t.addfile(ti)
                elif kind == "hard":
                    ti.type, ti.linkname = tarfile.LNKTYPE, extra
                    t.addfile(ti)
                else:
                    data = extra.encode()
                    ti.size = len(data)
                    t.addfile(ti, io.BytesIO(data))
        return buf.getvalue()

    base = tar([("usr", "dir", None), ("usr/lib", "dir", None), ("lib", "sym", "usr/lib"),
                ("usr/lib/libc.so.6", "file", "\x7fELF"), ("usr/lib/libm.so.6", "hard", "usr/lib/libc.so.6"),
                ("etc/ld.so.conf", "file", "include /etc/ld.so.conf.d/*.conf\n"), ("opt", "dir", None),
                ("opt/up", "sym", "../../.."), ("opt/abs", "sym", "/usr/lib"), ("lib/libz.so.1", "file", "z")])
    upper = tar([("usr/lib/.wh.libm.so.6", "file", ""), ("opt/.wh..wh..opq", "file", ""),
                 ("opt/abs/libnew.so", "file", "new"), ("usr/lib/" + "d" * 120 + "/libdeep.so", "file", "deep")])
    gnu = tar([("usr/lib/" + "g" * 150 + "/libgnu.so.1", "file", "gnu")], fmt=tarfile.GNU_FORMAT)
    corpus.add("layer", "base", base)
    corpus.add("layer", "upper-gzip", gzip.compress(upper, 1))
    corpus.add("layer", "gnu-names", gnu)
    corpus.add("layer", "two-gzip-members", gzip.compress(base[:1024], 1) + gzip.compress(base[1024:], 1))
    if shutil.which("zstd"):
        z = subprocess.run(["zstd", "-q", "-c"], input=base, capture_output=True)
        if z.returncode == 0:
            corpus.add("layer", "base-zstd", z.stdout)


def lock_seeds(corpus):
    digest, other = "ab" * 32, "cd" * 32
    corpus.add("lock", "pylock", "0" + PYLOCK.replace("DIGEST", digest))
    corpus.add("lock", "pip-report", "1" + PIP_REPORT.replace("DIGEST", digest))
    corpus.add("lock", "requirements", "2" + REQUIREMENTS.replace("DIGEST", digest).replace("OTHER", other))
    corpus.add("lock", "requirements-cycle", "2demo==1.0\n-r loop.txt\n")
    for i, m in enumerate(MARKERS):
        corpus.add("lock", f"marker-{i}", "3" + m)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--out")
    ap.add_argument("--shared", default=os.environ.get("WHEELCHECK_SHARED_DIR", os.path.join(REPO, "..", "shared")))
    args = ap.parse_args()
    corpus = Corpus(args.out or os.path.join(args.build, "fuzz-corpus"))
    shared = args.shared if os.path.isdir(args.shared) else None
    with tempfile.TemporaryDirectory(prefix="wheelcheck-seeds-") as tmp:
        elves = build_elves(tmp)
        for name, data in elves:
            corpus.add("elf", name, data)
        zip_seeds(corpus, elves, args.build, shared, tmp)
        inflate_tail_seeds(corpus, elves)
        inflate_middle_seeds(corpus, elves)
        fatbin_seeds(corpus, elves, tmp)
    dist_info_seeds(corpus)
    names_seeds(corpus)
    demangle_seeds(corpus)
    ldconfig_seeds(corpus)
    index_seeds(corpus)
    image_seeds(corpus)
    lock_seeds(corpus)
    python_seeds(corpus)
    layer_seeds(corpus)
    print("seeds: " + ", ".join(f"{t} {n}" for t, n in sorted(corpus.counts.items())))


if __name__ == "__main__":
    main()

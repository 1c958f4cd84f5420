#!/usr/bin/env python3
"""FlagOS's wheel catalog as real wheels, laid out as a loopback replica of FlagOS's package indexes.

  catalog.py --db DIR --out DIR [--json]

Reads the catalog's rows from db/flagos/release-facts.json (../shared/reference/flagos-release.md section 3,
pinned by scripts/gen-flagos.py) and the images the builds are for from db/images/flagos-*.json, then builds
every release version (55: FlagTree in 14 vendor builds, FlagCX 0.14.0 in 20 SDK builds, torch-fl in 7,
flag_gems, vLLM, megatron-core, vllm-plugin-fl and seven pure-Python projects) with compiled code:

- flagcx/_C (RUNPATH $ORIGIN/lib) and flagcx/lib/libflagcx.so, whose DT_NEEDED are the SDK runtime sonames of the
  image the build is for (its toolkit's runtime_sonames: FlagOS backends.yaml vendor_libs), _C leaving torch's
  c10d symbols undefined as the real one does; NVIDIA builds add lib/libflagcx_device.bc;
- triton/_C/libtriton.so of FlagTree, real C++ built here (glibc and libstdc++ floors of Debian 12's toolchain,
  below Ubuntu 22.04's: the rebuilt 22.04 builds FlagOS publishes), the MetaX plugin, NVIDIA's device bitcode;
- torch-fl's libc10/libtorch_cpu and a vendor library needing its SDK's runtime; megatron-core's pybind11-shaped
  helpers_cpp; vLLM 0.24.0's _C.abi3.so linking torch.

Stand-ins for the vendor and torch libraries are link-time stubs, never packed. The wheels go to
OUT/index/<index>/<project>/<file>, tests/net/server.py's layout: flagos-pypi-hosted (the NVIDIA FlagTree line,
flag_gems, vLLM, megatron-core, the pure projects), flagos-pypi-daily (a flag_gems dev build) and
flagos-pypi-{vendor} for the vendor builds, as section 1 names them. OUT/manifest.json lists every file with the
backend it is for. Deterministic (fixed zip dates, no build paths) and idempotent: a wheel whose bytes would not
change is not rewritten. aarch64 builds (Ascend, and the aarch64 files of megatron-core and vLLM) need
aarch64-linux-gnu-gcc; without it they are left out and the manifest says so.
"""
import argparse
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import make_wheel  # noqa: E402

sys.path.insert(0, HERE)
import native  # noqa: E402

A = None
SKIPPED = []

# FlagTree's Triton-line labels name the vendor: the index it is on ("hosted" for the NVIDIA line).
FLAGTREE_VENDOR = {"triton": "nvidia", "ascend": "ascend", "enflame": "enflame", "hcu": "hygon",
                   "iluvatar": "iluvatar", "metax": "metax", "mthreads": "mthreads", "ppu": "thead",
                   "sunrise": "sunrise", "tsingmicro": "tsingmicro", "xpu": "kunlunxin"}
# The CANN / CoreX release a FlagTree build is for, where section 3 says it in parentheses.
FLAGTREE_FOR = {"0.6.0+ascend3.2": "ascend-cann8.5.0", "0.7.0+ascend3.5": "ascend-cann9.0.0",
                "0.6.1+iluvatar3.6": "iluvatar-corex4.4.0", "0.7.0+iluvatar3.6": "iluvatar-corex4.5.0"}


def backticked(text):
    return re.findall(r"`([^`]+)`", text)


def load(path):
    with open(path) as f:
        return json.load(f)


def runtime_images():
    """backend -> (arch, python, runtime sonames of its SDK), from the generated descriptions."""
    out = {}
    for name in sorted(os.listdir(os.path.join(A.db, "images"))):
        m = re.match(r"flagos-runtime-(.+)\.json$", name)
        if not m:
            continue
        rt = load(os.path.join(A.db, "images", name))
        base = load(os.path.join(A.db, "images", f"flagos-base-{m.group(1)}.json"))
        py = next(l.split("python")[-1] for l in rt["layers"] if l.startswith("flagos-venv-python"))
        arch = base["arch"] if isinstance(base["arch"], str) else base["arch"]["value"]
        out[m.group(1)] = (arch, py, base.get("toolkit", {}).get("runtime_sonames", []))
    return out


def backend_of_label(label, backends):
    """flagcx and torch-fl labels: the backend key without its vendor prefix (cuda13.3 -> nvidia-cuda13.3,
    cann9.0.0.910c -> ascend-cann9.0.0-910c, dtk2604 -> hygon-dtk26.04)."""
    squash = lambda s: re.sub(r"[.\-]", "", s)
    for b in backends:
        if squash(b.split("-", 1)[1]) == squash(label):
            return b
    return None


# --- building --------------------------------------------------------------------------------------------

have_compiler = native.have_compiler


def build(out, source, arch, args=(), cxx=False, soname=None):
    return native.build(out, source, arch, A.out, args, cxx, True, soname)


def stub(arch, soname, symbols):
    d = os.path.join(A.out, "obj", "stubs", arch)
    return build(os.path.join(d, soname), "".join(f"void {s}(void) {{}}\n" for s in symbols), arch,
                 ["-nostdlib"], soname=soname)


def link(libs):
    out = []
    for lib in libs:
        out += [f"-L{os.path.dirname(lib)}", f"-l:{os.path.basename(lib)}"]
    return out


BLOCK = "_ZN4c10d4Work18blockCurrentStreamEv"


def torch_stubs(arch):
    c10 = stub(arch, "libc10.so", ["c10_init"])
    cpu = stub(arch, "libtorch_cpu.so", [BLOCK])
    return [c10, stub(arch, "libtorch.so", ["torch_init"]), cpu, stub(arch, "libtorch_python.so", ["torch_python_init"])]


def py_file(text="# stand-in\n"):
    p = os.path.join(A.out, "obj", "py", hashlib.sha256(text.encode()).hexdigest()[:12] + ".py")
    if not os.path.exists(p):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    return p


MANIFEST = []


def emit(index, project, filename, files, backend, kind):
    project = re.sub(r"[-_.]+", "-", project).lower()  # PEP 503: the page's name
    d = os.path.join(A.out, "index", index, project)
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, filename)
    tmp = os.path.join(A.out, "obj", "wheels", filename)
    os.makedirs(os.path.dirname(tmp), exist_ok=True)
    make_wheel.write_wheel(tmp, files)
    if os.path.exists(out) and open(out, "rb").read() == open(tmp, "rb").read():
        os.unlink(tmp)
    else:
        os.replace(tmp, out)
    MANIFEST.append({"file": filename, "project": project, "index": index, "backend": backend, "kind": kind,
                     "members": [a for a, _ in files if a.endswith(".so")]})


def plat(arch):
    return "linux_" + arch


# --- the catalog -------------------------------------------------------------------------------------------

def flagcx(labels, images):
    for label in labels:
        backend = backend_of_label(label, images)
        arch, py, sonames = images[backend]
        if not have_compiler(arch):
            SKIPPED.append(f"flagcx 0.14.0+{label} ({arch}: no cross compiler)")
            continue
        vendor = backend.split("-")[0]
        libs = [stub(arch, s, [re.sub(r"\W", "_", s) + "_init"]) for s in sonames]
        lib = build(os.path.join(A.out, "obj", f"flagcx-{label}", "libflagcx.so"),
                    "int devApiBackend;\nint flagcxGetVersion(int* v) { *v = 1400; return 0; }\n", arch, link(libs),
                    soname="libflagcx.so")
        tag = f"cp{py.replace('.', '')}"
        ext = f"_C.cpython-{py.replace('.', '')}-{arch}-linux-gnu.so"
        c = build(os.path.join(A.out, "obj", f"flagcx-{label}", ext),
                  f"extern int flagcxGetVersion(int*);\nextern void {BLOCK}(void);\n"
                  f"void* PyInit__C(void) {{ int v; {BLOCK}(); return (void*)(long)flagcxGetVersion(&v); }}\n",
                  arch, link([lib] + torch_stubs(arch)) + ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib"],
                  soname=ext)
        files = [("flagcx/__init__.py", py_file()), (f"flagcx/{ext}", c), ("flagcx/lib/libflagcx.so", lib)]
        if vendor == "nvidia":
            bc = os.path.join(A.out, "obj", f"flagcx-{label}", "libflagcx_device.bc")
            os.makedirs(os.path.dirname(bc), exist_ok=True)
            with open(bc, "wb") as f:
                f.write(b"BC\xc0\xde" + hashlib.sha256(label.encode()).digest() * 16)
            files += [("flagcx/lib/libflagcx_device.bc", bc), ("flagcx/include/flagcx_device_wrapper.h", py_file("/* */\n"))]
        emit(f"flagos-pypi-{vendor}", "flagcx", f"flagcx-0.14.0+{label}-{tag}-{tag}-{plat(arch)}.whl", files, backend,
             "flagcx")


def flagtree(versions, images):
    for version in versions:
        word = re.match(r"[a-z]+", version.split("+")[1]).group(0)
        vendor = FLAGTREE_VENDOR[word]
        backend = FLAGTREE_FOR.get(version) or next((b for b in images if b.startswith(vendor + "-")), None)
        arch, py = (images[backend][0], images[backend][1]) if backend else ("x86_64", "3.12")  # ppu: no image
        if not have_compiler(arch):
            SKIPPED.append(f"flagtree {version} ({arch}: no cross compiler)")
            continue
        src = ("#include <string>\n#include <vector>\n"
               "extern \"C\" int triton_version(char* out, int n) {\n"
               "  std::vector<std::string> v{\"" + version + "\"};\n"
               "  return (int)v.front().copy(out, (size_t)n);\n}\n")
        lib = build(os.path.join(A.out, "obj", f"flagtree-{version}-{arch}", "libtriton.so"), src, arch, cxx=True)
        files = [("triton/__init__.py", py_file()), ("triton/_C/libtriton.so", lib)]
        if vendor == "metax":
            plugin = build(os.path.join(A.out, "obj", f"flagtree-{version}", "metaxTritonPlugin.so"),
                           "int metax_plugin(void) { return 1; }\n", arch)
            files.append(("triton/backends/metax/metaxTritonPlugin.so", plugin))
        if vendor == "nvidia":
            bc = os.path.join(A.out, "obj", f"flagtree-{version}", "libflagcx_device.bc")
            os.makedirs(os.path.dirname(bc), exist_ok=True)
            with open(bc, "wb") as f:
                f.write(b"BC\xc0\xde" + hashlib.sha256(version.encode()).digest() * 16)
            files.append(("triton/backends/nvidia/lib/libflagcx_device.bc", bc))
        tag = f"cp{py.replace('.', '')}"
        emit("flagos-pypi-hosted" if vendor == "nvidia" else f"flagos-pypi-{vendor}", "flagtree",
             f"flagtree-{version}-{tag}-{tag}-{plat(arch)}.whl", files, backend, "flagtree")


def torch_fl(labels, images):
    for label in labels:
        backend = backend_of_label(label, images)
        arch, py, sonames = images[backend] if backend else ("x86_64", "3.12", [])  # ppu2.0.0: no image
        if label.startswith("dtk") or label.startswith("musa"):
            py = "3.10"
        if not have_compiler(arch):
            SKIPPED.append(f"torch-fl 2.10.0+{label} ({arch}: no cross compiler)")
            continue
        c10 = build(os.path.join(A.out, "obj", f"torch-fl-{label}", "libc10.so"), "int c10_init(void) { return 0; }\n",
                    arch)
        origin = ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN"]  # torch's libraries find each other beside them
        cpu = build(os.path.join(A.out, "obj", f"torch-fl-{label}", "libtorch_cpu.so"),
                    f"void {BLOCK}(void) {{}}\n", arch, link([c10]) + origin)
        runtime = [stub(arch, s, [re.sub(r"\W", "_", s) + "_init"]) for s in sonames[:2]]
        dev_name = "libtorch_cuda.so" if label.startswith("cuda") else f"libtorch_{re.match(r'[a-z]+', label).group(0)}.so"
        dev = build(os.path.join(A.out, "obj", f"torch-fl-{label}", dev_name), "int torch_device(void) { return 0; }\n",
                    arch, link([cpu] + runtime) + origin)
        vendor = backend.split("-")[0] if backend else "thead"
        tag = f"cp{py.replace('.', '')}"
        emit(f"flagos-pypi-{vendor}", "torch-fl", f"torch_fl-2.10.0+{label}-{tag}-{tag}-{plat(arch)}.whl",
             [("torch/__init__.py", py_file()), ("torch/lib/libc10.so", c10), ("torch/lib/libtorch_cpu.so", cpu),
              (f"torch/lib/{dev_name}", dev)], backend, "torch-fl")


def pure(project, version, index="flagos-pypi-hosted"):
    dist = project.replace("-", "_")
    emit(index, project, f"{dist}-{version}-py3-none-any.whl", [(f"{dist}/__init__.py", py_file())], None, "pure")


def megatron(versions):
    for version in versions:
        for arch in ("x86_64", "aarch64"):
            if not have_compiler(arch):
                SKIPPED.append(f"megatron-core {version} {arch}")
                continue
            for py in ("3.10", "3.11", "3.12"):
                t = py.replace(".", "")
                ext = f"helpers_cpp.cpython-{t}-{arch}-linux-gnu.so"
                so = build(os.path.join(A.out, "obj", f"megatron-{version}-{arch}", ext),
                           "#include <string>\nextern \"C\" void* PyInit_helpers_cpp() {\n"
                           "  static std::string name(\"helpers_cpp\"); return (void*)name.c_str();\n}\n",
                           arch, cxx=True, soname=ext)
                emit("flagos-pypi-hosted", "megatron-core", f"megatron_core-{version}-cp{t}-cp{t}-{plat(arch)}.whl",
                     [("megatron/__init__.py", py_file()), (f"megatron/core/datasets/{ext}", so)], None, "megatron")


def vllm(rows):
    pure("vllm", "0.20.2+flagos")
    for py, arch in (("3.11", "aarch64"), ("3.10", "x86_64"), ("3.12", "x86_64")):
        if not have_compiler(arch):
            SKIPPED.append(f"vllm 0.24.0+flagos {arch}")
            continue
        t = py.replace(".", "")
        so = build(os.path.join(A.out, "obj", f"vllm-{arch}", "_C.abi3.so"),
                   "extern void c10_init(void);\nvoid* PyInit__C(void) { c10_init(); return 0; }\n", arch,
                   link(torch_stubs(arch)[:3]), soname="_C.abi3.so")
        emit("flagos-pypi-hosted", "vllm", f"vllm-0.24.0+flagos-cp{t}-cp{t}-{plat(arch)}.whl",
             [("vllm/__init__.py", py_file()), ("vllm/_C.abi3.so", so)], None, "vllm")


def main():
    global A
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--json", action="store_true", help="print the manifest")
    A = ap.parse_args()
    A.out = os.path.abspath(A.out)
    facts = load(os.path.join(A.db, "flagos", "release-facts.json"))
    images = runtime_images()
    rows = {r["package"].split(" ")[0]: r for r in facts["catalog"]}
    versions = lambda p: backticked(rows[p]["versions (the local label names the build)"])
    flagtree(versions("flagtree"), images)
    flagcx(versions("flagcx")[1:], images)  # "`0.14.0+` one of `cuda12.8`, ...": the labels
    torch_fl(versions("torch-fl")[1:], images)
    pure("flag_gems", versions("flag_gems")[0])
    pure("flag_gems", "5.4.1.dev20260928", "flagos-pypi-daily")
    vllm(rows)
    megatron(versions("megatron-core"))
    pure_row = next(r for r in facts["catalog"] if r["package"].startswith("vllm-plugin-fl"))
    names = pure_row["package"].split(", ")
    for v in re.findall(r"\d+\.\d+\.\d+", names[0]):
        pure("vllm-plugin-fl", v)
    for name in names[1:]:
        pure(name, "0.1.0")  # the catalog states no version
    MANIFEST.sort(key=lambda m: (m["index"], m["project"], m["file"]))
    doc = {"source": "db/flagos/release-facts.json (catalog)", "files": MANIFEST, "skipped": SKIPPED}
    with open(os.path.join(A.out, "manifest.json"), "w") as f:
        json.dump(doc, f, indent=1)
    indexes = sorted({m["index"] for m in MANIFEST})
    for i in indexes:
        files = [m for m in MANIFEST if m["index"] == i]
        size = sum(os.path.getsize(os.path.join(A.out, "index", i, m["project"], m["file"])) for m in files)
        print(f"  {i:<26} {len(files):>3} files {size:>9} bytes", file=sys.stderr)
    print(f"catalog: {len(MANIFEST)} files on {len(indexes)} indexes"
          + (f"; left out: {', '.join(SKIPPED)}" if SKIPPED else ""), file=sys.stderr)
    if A.json:
        print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()

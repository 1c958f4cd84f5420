#!/usr/bin/env python3
"""Writes a torch-shaped wheel for the benchmarks: a few real libraries of this machine (libstdc++,
libcrypto, libpython when present) under torch_shaped/lib/, and N small Python sources (2-8 KiB each, as
torch's 15,000 files mostly are) under torch_shaped/, packed by the tests' own wheel writer.

    bench/torch_shaped.py OUT_DIR [N] [--sources DIR]      (N: the Python members, default 1900)

--sources DIR packs the first N real .py files under DIR instead (sorted paths; PyTorch's own from the corpus,
$WHEELCHECK_CORPUS/debs/python3-torch-cuda/usr/lib/python3/dist-packages, is what bench/python-sources.sh uses).
"""
import os, random, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools"))
from make_wheel import write_wheel  # noqa: E402

args = sys.argv[1:]
sources = None
if "--sources" in args:
    i = args.index("--sources")
    sources = args[i + 1]
    del args[i:i + 2]
out_dir = args[0]
n = int(args[1]) if len(args) > 1 else 1900
rng = random.Random(1)
libs = [p for p in ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
                    "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0") if os.path.exists(p)]
with tempfile.TemporaryDirectory() as tmp:
    files = []
    for lib in libs:
        files.append((f"torch_shaped/lib/{os.path.basename(lib)}", os.path.realpath(lib)))
    words = ["tensor", "grad", "module", "def", "return", "import", "self", "torch", "None", "if", "else"]
    real = []
    if sources:
        for top, _, names in os.walk(sources):
            real += [os.path.join(top, f) for f in names if f.endswith(".py")]
        real = sorted(real)[:n]
    for rel in real:
        files.append((os.path.relpath(rel, sources), rel))
    for i in range(n if not real else 0):
        path = os.path.join(tmp, f"m{i}.py")
        with open(path, "w") as f:
            size = rng.randint(2048, 8192)
            text = []
            while sum(len(w) + 1 for w in text) < size:
                text.append(rng.choice(words))
            f.write(" ".join(text) + "\n")
        files.append((f"torch_shaped/sub{i % 40}/m{i}.py", path))
    os.makedirs(out_dir, exist_ok=True)
    wheel = os.path.join(out_dir, "torch_shaped-1.0-cp311-cp311-linux_x86_64.whl")
    write_wheel(wheel, files)
    print(wheel)

#!/usr/bin/env python3
"""Writes a wheel of N copies of one mid-sized library (default 6), each under its own name, for the
headers-only benchmark: over 32 MiB, so a local `--verify headers` reads it by ranges rather than whole,
and made of libraries whose dynamic section lies in the last few hundred KB of a 19 MB member: the shape
where decoding each member's end costs the most against inflating it all (the full read).

    bench/midlibs.py WHEEL_WITH_A_LIBRARY OUT_DIR [N]

The library is the first member of WHEEL_WITH_A_LIBRARY whose name holds ".so" (the corpus's
torch_python_ext: libtorch_python.so.2.6 from Debian's PyTorch 2.6), packed by the tests' wheel writer.
"""
import os, sys, tempfile, zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools"))
from make_wheel import write_wheel  # noqa: E402

source, out_dir = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 6
with zipfile.ZipFile(source) as z, tempfile.TemporaryDirectory() as tmp:
    member = next(m for m in z.namelist() if ".so" in os.path.basename(m))
    lib = os.path.join(tmp, "lib.so")
    with z.open(member) as f, open(lib, "wb") as g:
        while chunk := f.read(1 << 20):
            g.write(chunk)
    os.makedirs(out_dir, exist_ok=True)
    wheel = os.path.join(out_dir, "midlibs-1.0-cp313-cp313-linux_x86_64.whl")
    write_wheel(wheel, [(f"midlibs/lib/libpart{i}.so", lib) for i in range(1, n + 1)])
    print(wheel)

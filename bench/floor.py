#!/usr/bin/env python3
"""The floor of inspect: decompress every member of a wheel once, in one thread (zipfile, zlib)."""
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        with z.open(info) as f:
            while f.read(1 << 20):
                pass

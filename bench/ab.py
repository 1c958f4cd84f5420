#!/usr/bin/env python3
"""Two builds side by side, interleaved run by run (old, new, new, old, ...), so that the load of a shared
machine falls on both alike; medians and their ratio. hyperfine runs one command's series after the
other's, which on a busy 2-core machine can put a whole series under someone else's build.

  bench/ab.py OLD_BINARY NEW_BINARY [RUNS] -- ARGS...      (ARGS as for wheelcheck; WHEELCHECK_CACHE_DIR
                                                            is kept per binary: each warms its own cache)
"""
import os, statistics, subprocess, sys, tempfile, time

def main():
    if "--" not in sys.argv or sys.argv.index("--") < 3:
        sys.exit(__doc__)
    split = sys.argv.index("--")
    old, new = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if split > 3 else 30
    args = sys.argv[split + 1:]
    caches = {b: tempfile.mkdtemp(prefix="wheelcheck-ab-") for b in (old, new)}
    times = {old: [], new: []}
    for i in range(runs + 1):  # the first round warms each cache and is not counted
        for b in (old, new) if i % 2 == 0 else (new, old):
            env = dict(os.environ, WHEELCHECK_CACHE_DIR=caches[b])
            t = time.perf_counter()
            subprocess.run([b] + args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if i > 0:
                times[b].append(time.perf_counter() - t)
    mo, mn = statistics.median(times[old]), statistics.median(times[new])
    print(f"{' '.join(args)}: old {1000 * mo:.1f} ms, new {1000 * mn:.1f} ms (medians of {runs}), new/old {mn / mo:.2f}")

main()

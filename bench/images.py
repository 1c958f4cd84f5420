#!/usr/bin/env python3
"""Probing a container image from a registry (issue 63), side by side in one run with what a user does without
wheelcheck's reader: `skopeo copy` the image to an OCI layout, `umoci unpack` it, `wheelcheck probe --root`.

    python3 bench/images.py [--root DIR] [--runs N] [--wheelcheck build/wheelcheck]

The image: one layer of a Debian 12 root of at least 300 MB (--root DIR; default the real-binaries tier's
bookworm root under ~/.cache/wheelcheck-realworld/roots when it is there, else a root of this machine's own
Debian packages, chromium and LLVM among them), packed by umoci, pushed by skopeo to Debian's docker-registry
on loopback. Three commands, interleaved round by round (RUNS, default 5; the order reversed every other round):
  baseline  skopeo copy docker://... oci:DIR + umoci unpack --rootless + wheelcheck probe --root (a fresh folder)
  cold      wheelcheck probe docker://... --json, a fresh cache each round
  warm      the same on a warm cache (the tag re-resolved with a conditional request, 304)
Targets: cold at most 0.5x the baseline (the median of the per-round ratios), warm under 1 s. Peak RSS of
each (/usr/bin/time -v). The cold probe's description is checked to equal `probe --root` of umoci's unpack
(less "from") before anything is timed. Results: bench/out/images-*.json and a Markdown table on stdout
(bench/out/images-summary.md). Needs root (chroot for ldconfig), docker-registry, skopeo, umoci.
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "images"))
import imagelib  # noqa: E402

# A root of this machine's packages when the real-binaries tier's is absent: big real libraries.
BIG = ["chromium", "libllvm14", "libclang-cpp14", "libgtk-3-0", "libicu72", "libpython3.11-stdlib",
       "python3.11-minimal", "libpython3.11", "libstdc++6", "libc6", "libc-bin", "libgcc-s1", "zlib1g"]


def du(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                total += os.lstat(p).st_size
    return total


def pick_root(work, given):
    if given:
        return given, "given"
    found = sorted(glob.glob(os.path.expanduser("~/.cache/wheelcheck-realworld/roots/bookworm-*[!n]")))
    found = [f for f in found if os.path.isdir(f)]
    if found:
        return found[0], "the real-binaries tier's Debian 12 root"
    root = os.path.join(work, "root")
    imagelib.merged_usr(root)
    imagelib.copy_packages(root, BIG, missing_ok=True)
    imagelib.ldconfig(root)
    return root, "this machine's Debian packages (" + ", ".join(BIG[:4]) + ", ...)"


def interleaved(cmds, runs):
    times = {n: [] for n, _ in cmds}
    for r in range(runs + 1):
        for n, c in (cmds if r % 2 == 0 else cmds[::-1]):
            t = time.perf_counter()
            p = subprocess.run(c, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode != 0:
                sys.exit(f"images.py: {n} failed ({p.returncode}): {p.stderr.decode()[-800:]}")
            if r > 0:
                times[n].append(time.perf_counter() - t)
    first = cmds[0][0]
    return [{"command": n, "median": statistics.median(times[n]), "times": times[n],
             "ratio": statistics.median(a / b for a, b in zip(times[n], times[first]))} for n, _ in cmds]


def peak_rss(cmd):
    p = subprocess.run(["/usr/bin/time", "-v", "bash", "-c", cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return int(m.group(1)) // 1024 if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheelcheck", default=os.path.join(HERE, "..", "build", "wheelcheck"))
    ap.add_argument("--root")
    ap.add_argument("--runs", type=int, default=int(os.environ.get("RUNS", "5")))
    args = ap.parse_args()
    for tool in ("docker-registry", "skopeo", "umoci"):
        if not shutil.which(tool):
            sys.exit(f"images.py: {tool} is missing (scripts/install-deps.sh installs it)")
    out = os.path.join(HERE, "out")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="wc-bench-images-")
    try:
        wc = os.path.join(work, "wheelcheck")
        shutil.copy2(args.wheelcheck, wc)
        root, what = pick_root(work, args.root)
        size = du(root)
        print(f"images.py: the root: {what}, {size / 1e6:.0f} MB; packing it with umoci", file=sys.stderr)
        layout = os.path.join(work, "layout")
        bundle = os.path.join(work, "bundle")
        imagelib.run(["umoci", "init", "--layout", layout])
        imagelib.run(["umoci", "new", "--image", f"{layout}:img"])
        imagelib.run(["umoci", "unpack", "--rootless", "--image", f"{layout}:img", bundle])
        subprocess.run(["cp", "-a", root + "/.", os.path.join(bundle, "rootfs") + "/"], check=True)
        imagelib.run(["umoci", "repack", "--image", f"{layout}:img", bundle], timeout=900)
        shutil.rmtree(bundle)
        layer_bytes = du(os.path.join(layout, "blobs"))
        skopeo = imagelib.Skopeo(work)
        with imagelib.Registry(os.path.join(work, "registry")) as reg:
            ref = f"docker://{reg.host}/bench/img:1"
            skopeo.copy(f"oci:{layout}:img", ref)
            b = os.path.join(work, "b")
            env = f"HOME={shlex.quote(skopeo.home)} TMPDIR={shlex.quote(skopeo.home)}"
            baseline = (f"rm -rf {b} && mkdir -p {b} && {env} skopeo --policy {skopeo.policy} copy -q --src-tls-verify=false "
                        f"{ref} oci:{b}/l:img && umoci unpack --rootless --image {b}/l:img {b}/u >/dev/null && "
                        f"{wc} probe --root {b}/u/rootfs --json -q >/dev/null")
            c = os.path.join(work, "cold")
            w = os.path.join(work, "warm")
            cold = f"rm -rf {c} && WHEELCHECK_CACHE_DIR={c} {wc} probe {ref} --json -q >/dev/null"
            warm = f"WHEELCHECK_CACHE_DIR={w} {wc} probe {ref} --json -q >/dev/null"
            # The answer first: the cold probe equals probe --root of umoci's unpack (less "from").
            subprocess.run(baseline.replace(">/dev/null", ""), shell=True, check=True, stdout=subprocess.DEVNULL)
            by_root = json.loads(subprocess.run(f"{wc} probe --root {b}/u/rootfs --name img --json -q", shell=True,
                                                check=True, capture_output=True).stdout)
            by_ref = json.loads(subprocess.run(f"rm -rf {c} && WHEELCHECK_CACHE_DIR={c} {wc} probe {ref} --name img "
                                               "--json -q", shell=True, check=True, capture_output=True).stdout)
            by_ref.pop("from", None)
            if by_ref != by_root:
                sys.exit("images.py: probe REF and probe --root of umoci's unpack differ: " +
                         "; ".join(imagelib.json_diff(by_ref, by_root)))
            subprocess.run(warm, shell=True, check=True)  # warms the cache
            res = interleaved([("baseline", baseline), ("cold", cold), ("warm", warm)], args.runs)
            rss = {"baseline-probe": peak_rss(f"{wc} probe --root {b}/u/rootfs --json -q >/dev/null"),
                   "cold": peak_rss(cold), "warm": peak_rss(warm)}
        doc = {"root": what, "root_bytes": size, "layer_bytes": layer_bytes, "libraries": len(by_root.get("libraries", [])),
               "results": res, "peak_rss_mb": rss, "runs": args.runs}
        with open(os.path.join(out, "images-bench.json"), "w") as f:
            json.dump(doc, f, indent=2)
        med = {r["command"]: r for r in res}
        lines = [f"Probing a container image from a loopback registry: {what}, {size / 1e6:.0f} MB unpacked, "
                 f"one {layer_bytes / 1e6:.0f} MB gzip layer, {doc['libraries']} libraries ({args.runs} interleaved rounds)",
                 "", "| command | median | per-round ratio to baseline | peak RSS |", "| --- | --- | --- | --- |",
                 f"| baseline: skopeo copy + umoci unpack + probe --root | {med['baseline']['median']:.2f} s | 1.00 | "
                 f"probe {rss['baseline-probe']} MB (skopeo and umoci not measured) |",
                 f"| wheelcheck probe docker://..., cold | {med['cold']['median']:.2f} s | {med['cold']['ratio']:.3f} | "
                 f"{rss['cold']} MB |",
                 f"| wheelcheck probe docker://..., warm (304) | {med['warm']['median']:.3f} s | "
                 f"{med['warm']['ratio']:.4f} | {rss['warm']} MB |"]
        text = "\n".join(lines) + "\n"
        with open(os.path.join(out, "images-summary.md"), "w") as f:
            f.write(text)
        print(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`wheelcheck lint` against CPython's import, on Debian's own extension packages (issue 60): each package of
packages.txt packed as a wheel as the real-binaries tier packs it (realworld.py's make_pkg_wheel), linted with no
image, then installed into the suite's base root (the `full` variant: the package's real dependency closure) and
each ELF member imported by the root's python3.X under chroot with LD_BIND_NOW=1.

lint's errors that say a member cannot load on any machine (unloadable-symbol, module-init, extension-suffix) are
held to the import: such an error where the import loads the member is a false error; an import the loader refuses
for an undefined symbol (`undefined symbol: S`) with no unloadable-symbol error on the member is a miss (the
interpreter's global scope -- libc, libm -- completes what a member leaves undefined, and lint must count it; 30
members of numpy, pandas, astropy, skimage, PIL, pygame, pywt and asyncpg leave sqrt, exp, fma so).

  lint_truth.py --wheelcheck BIN [--suite bookworm|trixie]... [--only PKG]... [--no-fetch] [--json FILE]

Exit: 0 lint and CPython agree on every member, 1 a disagreement, 2 a harness error, 77 skipped (not root, or the
archive unreachable with an incomplete cache: the line `skipped: ...` says which).
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import realworld as rw  # noqa: E402  (the tier's fetch, roots, wheels and importer)

# lint's error kinds that claim the member fails to load or import on every machine
LOAD_KINDS = {"unloadable-symbol", "module-init", "extension-suffix"}


def lint_json(wc, whl):
    p = subprocess.run([wc, "lint", "--format", "json", "-q", "--no-cache", whl], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1, 3):
        raise rw.HarnessError(f"wheelcheck lint {whl} exited {p.returncode}: {p.stderr.strip()[-800:]}")
    doc = json.loads(p.stdout)
    return doc["wheels"][0]


def imports_bound_now(root, py, mods):
    """realworld's importer with LD_BIND_NOW=1 for every library it maps."""
    return rw.import_modules(root, py, mods, bind_now=True)


def check_package(args, suite, base, meta, pkg, work):
    whl, elves, others = rw.make_pkg_wheel(suite, pkg)
    if whl is None:
        return None, f"{suite.name} {pkg}: {elves}"
    report = lint_json(args.wheelcheck, whl)
    errors = {}
    for f in report["findings"]:
        if f["severity"] == "error" and f["kind"] in LOAD_KINDS and f.get("member"):
            errors.setdefault(f["member"], []).append(f)
    ws = rw.Workspace(base, os.path.join(work, suite.name, pkg))
    try:
        root = ws.root
        if rw.remove_own(root, meta, pkg):
            rw.ldconfig(root)
        site = f"/usr/local/lib/python{suite.pyver}/dist-packages"
        installed = rw.install_wheel(whl, root, site)
        mods = [(rw.modname(arc), dest) for dest, arc in sorted(installed.items())]
        imports = imports_bound_now(root, meta["python"], mods)
    finally:
        ws.close(False)
    results, disagree = [], []
    for dest, arc in sorted(installed.items()):
        loads, err, how = rw.classify(imports[dest])
        undefined = rw.ERR_UNDEF.search(err or "") if not loads else None
        said = errors.get(arc, [])
        unloadable = [f for f in said if f["kind"] == "unloadable-symbol"]
        row = {"member": arc, "loads": loads, "import": err, "how": how,
               "lint_errors": [f"{f['kind']}: {f.get('symbol') or f.get('explanation', '')[:80]}" for f in said]}
        results.append(row)
        if said and loads:
            disagree.append(f"{arc}: lint says {'; '.join(row['lint_errors'])}, but CPython's import loads it "
                            f"({how}{': ' + err if err else ''})")
        elif undefined and not unloadable:
            disagree.append(f"{arc}: CPython's import fails ({err}), and lint gives no unloadable-symbol error")
    return {"suite": suite.name, "package": pkg, "wheel": os.path.basename(whl), "results": results,
            "disagreements": disagree}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--suite", action="append", choices=["bookworm", "trixie"])
    ap.add_argument("--only", action="append", metavar="PKG")
    ap.add_argument("--no-fetch", action="store_true", help="use the cache as it is (never run fetch.sh)")
    ap.add_argument("--json", metavar="FILE", help="write each member's both sides to FILE")
    args = ap.parse_args()
    t0 = time.time()
    suites = args.suite or ["bookworm", "trixie"]
    stop = rw.preflight(args, "lint_truth", "lint's truth on Debian's packages needs root (chroot into the tier's roots)")
    if stop is not None:
        return stop
    if not args.no_fetch:
        stop = rw.fetch_suites("lint_truth", suites)
        if stop is not None:
            return stop
    work = tempfile.mkdtemp(prefix="wheelcheck-lint-truth-")
    rw.Workspace.use_overlay = rw.overlay_works(work)
    outs, skips, errors = [], [], []
    try:
        for s in suites:
            suite = rw.open_suite(s)
            if suite is None:
                return 77
            base, meta = rw.base_root(suite)
            for pkg in suite.packages:
                if args.only and pkg not in args.only:
                    continue
                try:
                    o, skip = check_package(args, suite, base, meta, pkg, work)
                except Exception as e:  # a harness failure is a failure, never a pass
                    errors.append(f"{s} {pkg}: {type(e).__name__}: {e}")
                    continue
                if skip:
                    skips.append(skip)
                    continue
                outs.append(o)
                n_err = sum(1 for r in o["results"] if r["lint_errors"])
                n_fail = sum(1 for r in o["results"] if not r["loads"])
                print(f"  {s} {pkg}: {len(o['results'])} members, lint errors on {n_err}, import refuses {n_fail}: "
                      f"{'agree' if not o['disagreements'] else 'DISAGREE'}", flush=True)
    finally:
        rw._unmount_all()
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(outs, f, indent=1)
    members = sum(len(o["results"]) for o in outs)
    disagreements = [(o, d) for o in outs for d in o["disagreements"]]
    for o, d in disagreements:
        print(f"DISAGREE {o['suite']} {o['package']}: {d}")
    for e in errors:
        print("ERROR " + e)
    print(f"\nlint_truth: {len(outs)} packages, {members} members; "
          f"{sum(1 for o in outs for r in o['results'] if r['lint_errors'])} with a load error from lint, "
          f"{sum(1 for o in outs for r in o['results'] if not r['loads'])} refused by CPython's import; "
          f"{len(disagreements)} disagreements; {len(errors)} harness errors; {len(skips)} skips; "
          f"{time.time() - t0:.0f} s")
    for s in skips:
        print("  skip: " + s)
    if errors:
        return 2
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())

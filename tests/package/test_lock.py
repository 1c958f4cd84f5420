#!/usr/bin/env python3
"""Pins that moved (label "package", ctest package.lock): scripts/package.sh against a lock whose pins are
stale, as packaging/sources.lock becomes the day Debian removes a superseded security update.

The lock is packaging/sources.lock with two inputs broken: libssl-dev for amd64 pinned at a version the
archive never had, with a wrong sha256, and libzip's Debian tarball pinned at its real path with a wrong
sha256. Then:

  --locked   refuses before building anything: exit 1, each stale pin named with what is wrong, and
             --relock named as the way out;
  default    builds the x86_64 packages all the same: one warning line per moved input, naming the pinned
             and the used version; dist/SOURCES.used has each input's version, "moved" for exactly the
             inputs warned about and "as pinned" for the rest; the used versions of the broken inputs are
             the archive's current ones (its signed indexes, through a private apt state); the binary's
             --version says which inputs moved; and SOURCES.used is itself a lock that --locked accepts.

    test_lock.py --repo DIR --work DIR

Needs Debian's archive (the package step does anyway); exit 77 (skipped) where it cannot be reached.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from wheelcheck_test import Checks  # noqa: E402

CHECKS = Checks(indent="")
check, FAILURES = CHECKS.check, CHECKS.failures
BROKEN_DEB = "3.0.22-1~deb12u99"  # a libssl-dev version Debian never published


def stale_lock(real, out):
    lines, broken = [], {}
    for line in open(real, encoding="utf-8").read().splitlines():
        f = line.split()
        if len(f) == 4 and f[0] == "deb" and f[1] == "libssl-dev" and f[2].endswith("_amd64.deb"):
            path = re.sub(r"_[^_]+_amd64\.deb$", f"_{BROKEN_DEB}_amd64.deb", f[2])
            line = f"deb   libssl-dev          {path} {'0' * 64}"
            broken["libssl-dev (amd64)"] = BROKEN_DEB
        elif len(f) == 4 and f[0] == "src" and f[1] == "libzip" and ".debian.tar." in f[2]:
            line = f"src   libzip              {f[2]} {'1' * 64}"
            broken["libzip (source)"] = re.search(r"_([^_]+)\.debian\.tar", f[2]).group(1)
        lines.append(line)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return broken


def archive_reachable():
    try:
        with urllib.request.urlopen("http://deb.debian.org/debian/dists/bookworm/InRelease", timeout=20) as r:
            return r.status == 200
    except OSError:
        return False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repo", required=True)
    p.add_argument("--work", required=True, help="a scratch folder (emptied first)")
    args = p.parse_args()
    if not archive_reachable():
        print("SKIP: Debian's archive cannot be reached from here (the package step needs it)")
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    lock = os.path.join(args.work, "stale.lock")
    broken = stale_lock(os.path.join(args.repo, "packaging", "sources.lock"), lock)
    check(len(broken) == 2, f"the stale lock breaks two inputs: {broken}")
    # The package step's work folder sits beside scripts/package.sh's own (build-package/), at the same depth
    # below the checkout: the compiler cache rewrites the checkout's paths relative to the build folder
    # (CCACHE_BASEDIR), so only a build folder as deep as the first one's finds its objects, and this build
    # compiles little more than the one file that says which sources moved.
    package_dir = os.path.join(args.repo, "build-package-lock")
    shutil.rmtree(package_dir, ignore_errors=True)
    env = dict(os.environ, DIST=os.path.join(args.work, "dist"), WHEELCHECK_PACKAGE_DIR=package_dir)
    script = os.path.join(args.repo, "scripts", "package.sh")

    # --locked: a release refuses, naming each stale pin and --relock.
    r = subprocess.run([script, "--locked", "--lock", lock, "x86_64"], env=env, capture_output=True, text=True, timeout=900)
    err = r.stderr
    check(r.returncode == 1, f"--locked with stale pins exits 1 (got {r.returncode})")
    check(f"libssl-dev (amd64) {BROKEN_DEB}" in err and "gone from the archive" in err,
          "--locked names the libssl-dev pin that is gone from the archive")
    check("libzip (source)" in err and "has sha256" in err, "--locked names the libzip pin whose sha256 differs")
    check("2 pinned input(s)" in err and "--relock" in err, "--locked counts the stale pins and names --relock")
    check(not os.path.exists(os.path.join(args.work, "dist")), "--locked built nothing")
    if r.returncode != 1:
        print(err[-3000:])

    # The default: the build goes on with the archive's current versions, one warning per moved input.
    r = subprocess.run([script, "--lock", lock, "x86_64"], env=env, capture_output=True, text=True, timeout=1800)
    if not check(r.returncode == 0, f"the default mode builds with stale pins (exit {r.returncode})"):
        print(r.stderr[-4000:])
        return 1
    warnings = [line for line in r.stderr.splitlines() if line.startswith("package: warning: ")]
    used_path = os.path.join(args.work, "dist", "SOURCES.used")
    used = open(used_path, encoding="utf-8").read()
    entries = [line for line in used.splitlines() if line and not line.startswith("#")]
    moved = {}
    for line in entries:
        m = re.match(r"(src|deb)\s+(\S+)\s+(\S+)\s+[0-9a-f]{64}\s+# (\S+), (as pinned|moved: the lock pins (\S+))$", line)
        if not check(m is not None, f"SOURCES.used line has a version and a status: {line}"):
            continue
        kind, name, path, version, status, pinned = m.groups()
        label = f"{name} (source)" if kind == "src" else f"{name} ({re.search(r'_([a-z0-9]+)[.]deb$', path).group(1)})"
        if status.startswith("moved"):
            moved[label] = (pinned, version)
    for label, pinned in broken.items():
        check(label in moved and moved[label][0] == pinned, f"SOURCES.used records {label} as moved from {pinned}: {moved.get(label)}")
    check(moved.get("libssl-dev (amd64)", ("", BROKEN_DEB))[1] != BROKEN_DEB,
          f"libssl-dev is built from the archive's version, not the stale pin: {moved.get('libssl-dev (amd64)')}")
    check(len(warnings) == len(moved), f"one warning line per moved input ({len(warnings)} warnings, {len(moved)} moved)")
    for label, (pinned, version) in moved.items():
        check(any(label in w and pinned in w and version in w for w in warnings),
              f"a warning names {label}: pinned {pinned}, used {version}")
    # The archive's current version of each broken input, asked of apt's own verified indexes in the state
    # package.sh made (the same private state: nothing of the machine's apt configuration is read).
    apt_dir = os.path.join(os.environ.get("WHEELCHECK_BUILD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wheelcheck", "build"), "apt")
    opts = [f"-oDir::State::Lists={apt_dir}/lists", f"-oDir::Etc::SourceList={apt_dir}/sources.list",
            "-oDir::Etc::SourceParts=/dev/null", f"-oDir::Cache={apt_dir}/cache", "-oAPT::Architectures=amd64,arm64"]
    q = subprocess.run(["apt-cache", *opts, "policy", "libssl-dev:amd64"], capture_output=True, text=True)
    cand = re.search(r"Candidate: (\S+)", q.stdout)
    check(cand is not None and moved.get("libssl-dev (amd64)", ("", ""))[1] == cand.group(1),
          f"libssl-dev's used version is the archive's candidate ({cand.group(1) if cand else q.stderr.strip()})")
    binary = os.path.join(package_dir, "x86_64", "stage", "bin", "wheelcheck")
    v = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    check("sources moved from the lock: " in v and f"(pinned {BROKEN_DEB})" in v, f"--version says which inputs moved: {v.strip()}")
    wheels = [f for f in os.listdir(os.path.join(args.work, "dist")) if f.endswith(".whl")]
    check(len(wheels) == 1 and "x86_64" in wheels[0], f"the x86_64 wheel was written: {wheels}")

    # SOURCES.used is a lock: --locked accepts it (every file is there, verified, nothing moved).
    r = subprocess.run([script, "--locked", "--lock", used_path, "x86_64"], env=dict(env, DIST=os.path.join(args.work, "dist2")),
                       capture_output=True, text=True, timeout=1800)
    check(r.returncode == 0 and "package: warning" not in r.stderr,
          f"--locked --lock dist/SOURCES.used rebuilds with no warning (exit {r.returncode})")
    if r.returncode != 0:
        print(r.stderr[-3000:])
    v2 = subprocess.run([os.path.join(package_dir, "x86_64", "stage", "bin", "wheelcheck"), "--version"],
                        capture_output=True, text=True).stdout
    check("sources as pinned in the lock" in v2, f"built from SOURCES.used, --version says as pinned: {v2.strip()}")
    print(f"{len(FAILURES)} failed" if FAILURES else "every check holds")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

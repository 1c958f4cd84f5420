#!/usr/bin/env python3
"""The fault suite: wheelcheck under the faults of a real machine (a full disk, a full stdout, a closed pipe,
SIGKILL at any moment, two runs at once, a damaged, hostile or foreign cache, a read-only cache, an index that
always fails), each case pinned to one robustness promise. The correct answer is always the same command run
with --no-cache (or on a fresh empty cache).

  fault.py --wheelcheck BIN --samples DIR --db DIR [--seed N] [CASE ...]

Cases (default: all): scan-commits-last scan-lock download-collision damaged-entries symlinked-shard
foreign-cache full-stdout full-files kill-9 cache-cap scan-errors image-kill-9 image-two-at-once image-full-cache
image-damaged-blob image-read-only-cache. Runs as root, inside its own mount
namespace (unshare -m: every tmpfs it mounts disappears with it). Exit 0 when every assertion holds, 1 otherwise
(each failure named), 77 when a tool it needs is absent (root, unshare, mount).
"""
import argparse
import concurrent.futures
import fnmatch
import hashlib
import json
import os
import pwd
import random
import re
import shlex
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "images"))
from wheelcheck_test import Checks  # noqa: E402
import imagelib as IL  # noqa: E402  (the image tier's fixtures: an OCI layout writer, a fake registry)


HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "net", "server.py")
CHECKS = Checks()
check, FAILURES = CHECKS.check, CHECKS.failures
A = None
ENV = {}       # the environment of every wheelcheck run of the current case
MOUNTS = []    # tmpfs mounted by the current case (unmounted at its end)
REFS = {}      # --no-cache references, by command


# --- running wheelcheck ---------------------------------------------------------------------------------------

class Res:
    def __init__(self, rc, out, err, secs, timed_out=False):
        self.rc, self.out, self.err, self.secs, self.timed_out = rc, out or b"", err or b"", secs, timed_out

    @property
    def crashed(self):
        return self.timed_out or self.rc == 70 or (self.rc is not None and self.rc < 0)

    def text(self):
        return f"exit {self.rc}{' (timed out)' if self.timed_out else ''}\nstdout: {self.out[:600]!r}\n" \
               f"stderr: {self.err[-600:]!r}"

def wc(args, env=None, stdout=None, timeout=60):
    e = dict(ENV)
    e.update(env or {})
    t0 = time.time()
    try:
        p = subprocess.run([A.wheelcheck, *args], env=e, stdin=subprocess.DEVNULL, timeout=timeout,
                           stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE)
        return Res(p.returncode, p.stdout, p.stderr, time.time() - t0)
    except subprocess.TimeoutExpired as x:
        return Res(None, x.stdout, x.stderr, time.time() - t0, True)

def ref(args):
    """The reference: the same command with --no-cache."""
    if tuple(args) not in REFS:
        REFS[tuple(args)] = wc([*args, "--no-cache"])
    return REFS[tuple(args)]

def differs(r, reference, as_json=False, canary=None):
    """What differs between a run and its reference (empty: nothing)."""
    why = []
    if r.timed_out:
        return ["hung (killed after the timeout)"]
    if r.crashed:
        why.append(f"crashed (exit {r.rc})")
    if r.rc != reference.rc:
        why.append(f"exit {r.rc}, the reference {reference.rc}")
    try:
        same = json.loads(r.out) == json.loads(reference.out) if as_json else r.out == reference.out
    except ValueError:
        same = False
    if not same:
        i = next((k for k in range(min(len(r.out), len(reference.out))) if r.out[k] != reference.out[k]),
                 min(len(r.out), len(reference.out)))
        why.append(f"stdout differs from the reference at byte {i}: {r.out[max(0, i - 30):i + 50]!r}")
    if canary and (canary.encode() in r.out or canary.encode() in r.err):  # the canary's unique token
        why.append("the canary's content is in the output")
    return why

def err_line(r, prefix="wheelcheck: error:"):
    return any(line.startswith(prefix) for line in r.err.decode(errors="replace").splitlines())

def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()

# --- folders, mounts, snapshots -------------------------------------------------------------------------------

def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)

def newdir(*parts):
    os.makedirs(os.path.join(*parts), exist_ok=True)
    return os.path.join(*parts)

def tmpfs(path, size, fill=False):
    """A tmpfs of SIZE at PATH, with fill: filled up by PATH/.filler (every write there then fails: ENOSPC)."""
    sh("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", newdir(path))
    MOUNTS.append(path)
    with open(os.path.join(path, ".filler"), "wb", buffering=0) as f:
        try:
            while fill:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    return path

def files_under(root):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(out)

def regular_files(root, subdirs=("profiles", "index")):
    return [f for f in files_under(root) if f.split("/")[0] in subdirs and os.path.isfile(os.path.join(root, f))]

def total_size(root):
    return sum(os.lstat(os.path.join(root, f)).st_size for f in files_under(root)
               if os.path.isfile(os.path.join(root, f)))

def snapshot(root):
    """Every entry with its type, size, mtime, mode and owner: a folder written to (even by a file created and
    removed again) changes its snapshot."""
    out = []
    for d, dirs, names in os.walk(root):
        for p in [d] + [os.path.join(d, n) for n in dirs + names]:
            st = os.lstat(p)
            out.append((os.path.relpath(p, root), st.st_mode, st.st_size if not stat.S_ISDIR(st.st_mode) else 0,
                        st.st_mtime_ns, st.st_uid, st.st_gid))
    return sorted(set(out))

def changes(before, after):
    return "\n".join(f"{'before' if x in before else 'after '} {x}" for x in sorted(set(before) ^ set(after))[:8])

def leftovers(*roots):
    """Temporary files of dead processes, and partial downloads that cannot be resumed (no .part.json)."""
    out = []
    for root in roots:
        for f in files_under(root):
            name = os.path.basename(f)
            if fnmatch.fnmatch(name, "*.tmp.*") or (name.endswith(".part") and
                                                      not os.path.exists(os.path.join(root, f + ".json"))):
                out.append(os.path.join(root, f))
    return out

def jsons_parse(folder):
    """The JSON files of a folder that do not parse."""
    bad = []
    for f in [f for f in files_under(folder) if f.endswith(".json")]:
        try:
            json.load(open(os.path.join(folder, f)))
        except (ValueError, OSError) as e:
            bad.append(f"{f}: {e}")
    return bad

# --- the loopback index ---------------------------------------------------------------------------------------

class Index:
    """tests/net/server.py serving project flagcx: its CUDA and its Ascend wheel. Scanned against ascend-cann9,
    the Ascend wheel is incompatible (libtorch_npu.so), so a first scan exits 1 with 2 new wheels."""

    def __init__(self, tmp):
        root = os.path.join(tmp, "indexes")
        self.wheels = [sample(CX), sample(CXA)]
        for w in self.wheels:
            shutil.copy(w, newdir(root, "ix", "flagcx"))
        self.proc = subprocess.Popen([sys.executable, SERVER, "--root", root], stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline().split()[1])
        self.url = f"http://127.0.0.1:{self.port}/ix/simple/"
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self.refs = {}

    def faults(self, rules=None):
        """POST fault rules to the server (none: DELETE them all)."""
        self.opener.open(urllib.request.Request(f"http://127.0.0.1:{self.port}/_faults",
                                                  json.dumps(rules).encode() if rules else None,
                                                  method="POST" if rules else "DELETE")).read()

    def scan(self, state, cache, report=None, pins=None, extra=()):
        return ["scan", "--index", self.url, "--project", "flagcx", "--image", "ascend-cann9", "--state", state,
                "--cache-dir", cache, "-q", *extra, *(["--report", report] if report else []),
                *(["--pins", pins] if pins else [])]

    def ref(self, tmp, extra=()):
        """(exit code, new wheels) of a lone scan on a fresh state and cache."""
        if extra not in self.refs:
            d = tempfile.mkdtemp(dir=tmp)
            r = wc(self.scan(d + "/state", d + "/cache", extra=extra))
            self.refs[extra] = (r.rc, new_of(r))
        return self.refs[extra]

    def close(self):
        self.proc.kill()
        self.proc.wait()

def new_of(r):
    m = re.search(rb"(\d+) new", r.out)
    return int(m.group(1)) if m else None

def state_knows(state, names):
    """The names the state does not remember: its wheels' keys are FILE#SHA256 (STATE/state.db, SQLite; opened
    read-only, and an integrity check first: a state a kill or a crash damaged counts as knowing nothing)."""
    path = os.path.join(state, "state.db")
    if not os.path.exists(path):
        return list(names)
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if con.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            return list(names)
        keys = [k for (k,) in con.execute("SELECT key FROM wheels")]
    finally:
        con.close()
    return [n for n in names if not any(k.startswith(n + "#") for k in keys)]

# --- samples --------------------------------------------------------------------------------------------------

GEMS = "flagos/flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl"
TREE = "flagos/flagtree-0.6.1-cp312-cp312-linux_x86_64.whl"
CX = "flagos/flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl"
CXA = "flagos/flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl"
HELLO = "hello_native-1.0-cp311-cp311-linux_x86_64.whl"

def sample(name):
    path = os.path.join(A.samples, name)
    if not os.path.exists(path):
        print(f"skip: {path} is not built (cmake --build build --target samples)")
        sys.exit(77)
    return path

def inspect_j(w): return ["inspect", "--json", w]  # noqa: E704
def inspect_t(w): return ["inspect", w]  # noqa: E704
def check_j(w): return ["check", w, "--image", "cuda13.0", "--json"]  # noqa: E704

def warm(cache, *wheels):
    for w in wheels:
        for args in (inspect_j(w), check_j(w)):
            wc([*args, "--cache-dir", cache], stdout=subprocess.DEVNULL)

# --- 1. scan-commits-last -------------------------------------------------------------------------------------

def case_scan_commits_last(tmp, rng):
    idx = Index(tmp)
    try:
        ref_rc, ref_new = idx.ref(tmp)
        check(ref_rc == 1 and (ref_new or 0) >= 1, f"a lone first scan: exit 1, {ref_new} new")
        # Room for the report once the filler is gone: it carries each finding whole (issue 39), about 100 KB here.
        full = tmpfs(tmp + "/full", "256k", fill=True)
        state, cache = tmp + "/state", tmp + "/cache"
        cmd = idx.scan(state, cache, full + "/r", full + "/p")
        r = wc(cmd)
        check(r.rc == 2 and err_line(r), "--report and --pins on a full disk: exit 2 and a wheelcheck: error: line",
              r.text())
        os.unlink(full + "/.filler")
        r = wc(cmd)
        check((r.rc, new_of(r)) == (ref_rc, ref_new),
              f"the same scan with space again: the same {ref_new} new wheels, exit {ref_rc} (the state was not "
              f"committed before the report)", r.text())
        check(not jsons_parse(full + "/r") and os.path.exists(full + "/r/report.json"), "and its report.json parses")
        state2 = tmp + "/state2"
        cmd = idx.scan(state2, cache, tmp + "/r2", tmp + "/p2")
        with open("/dev/full", "wb") as devfull:
            r = wc(cmd, stdout=devfull)
        check(r.rc == 2 and err_line(r), "scan > /dev/full: exit 2 and a wheelcheck: error: line", r.text())
        r = wc(cmd)
        check((r.rc, new_of(r)) == (ref_rc, ref_new),
              f"the rerun after stdout was full: the same {ref_new} new wheels, exit {ref_rc}", r.text())
    finally:
        idx.close()

# --- 2. scan-lock ---------------------------------------------------------------------------------------------

def at_once(*commands, timeout=120):
    """Starts the commands at the same moment; their results."""
    procs = [subprocess.Popen([A.wheelcheck, *c], env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for c in commands]
    out = []
    for p in procs:
        try:
            o, e = p.communicate(timeout=timeout)
            out.append(Res(p.returncode, o, e, 0))
        except subprocess.TimeoutExpired:
            p.kill()
            out.append(Res(None, *p.communicate(), timeout, True))
    return out

def case_scan_lock(tmp, rng):
    idx = Index(tmp)
    try:
        ref_rc, ref_new = idx.ref(tmp)
        idx.faults([{"path": r"/files/", "fault": "slow", "rate": 3000, "count": -1}])
        state, cache = tmp + "/state", tmp + "/cache"
        rs = at_once(*(idx.scan(state, cache, tmp + f"/r{i}", tmp + f"/p{i}") for i in (1, 2)))
        idx.faults()
        for i, r in enumerate(rs, 1):
            check(r.rc in (0, 1) and b"cannot rename" not in r.out + r.err,
                  f"scan {i} of two on one state and cache exits normally (exit {r.rc})", r.text())
        news = sorted((new_of(r), r.rc) for r in rs)
        check(news == [(0, 0), (ref_new, ref_rc)],
              f"exactly one reports the {ref_new} wheels as new (exit {ref_rc}), the other 0 new (exit 0): got {news}",
              "\n".join(r.text() for r in rs))
        missing = state_knows(state, [os.path.basename(w) for w in idx.wheels])
        check(not missing and not jsons_parse(state), "the state afterwards parses and knows every wheel",
              f"missing: {missing} {jsons_parse(state)}")
    finally:
        idx.close()

# --- 3. download-collision ------------------------------------------------------------------------------------

def case_download_collision(tmp, rng):
    idx = Index(tmp)
    try:
        full = ("--verify", "full")
        ref_rc, ref_new = idx.ref(tmp, full)
        idx.faults([{"path": r"/files/.*\.whl$", "fault": "slow", "rate": 6000, "count": -1}])
        for n in range(3):
            cache = tmp + f"/cache{n}"
            rs = at_once(*(idx.scan(tmp + f"/state{n}-{i}", cache, extra=full) for i in (1, 2)))
            bad = [r.text() for r in rs if r.rc != ref_rc or new_of(r) != ref_new or b"cannot rename" in r.out + r.err
                   or b"No such file" in r.out + r.err]
            check(not bad, f"try {n + 1}: two --verify full scans sharing one cache both exit {ref_rc} with "
                           f"{ref_new} new, no 'cannot rename' or 'No such file'", "\n".join(bad))
            left = leftovers(cache)
            check(not left, f"try {n + 1}: no temporary or unresumable partial file is left in the cache", left)
        idx.faults()
    finally:
        idx.close()

# --- 4. damaged-entries ---------------------------------------------------------------------------------------

def damages(data, rng, other):
    """(name, function) for each damage of one cache file."""
    out = [("truncated to half", lambda p: os.truncate(p, len(data) // 2)),
           ("truncated to 0", lambda p: os.truncate(p, 0))]

    def patch(i, new):
        return lambda p: open(p, "wb").write(data[:i] + new + data[i + len(new):])

    for o in sorted({rng.randrange(min(64, len(data))), len(data) - 1, rng.randrange(len(data)),
                     rng.randrange(len(data))}) if data else []:
        out.append((f"byte {o} flipped", patch(o, bytes([data[o] ^ rng.randrange(1, 256)]))))
    try:
        data.decode("utf-8")
        text = b"\0" not in data
    except UnicodeDecodeError:
        text = False
    if text:
        for old, new in ((b"1", b"0"), (b"12", b"13")):
            at = [m.start() for m in re.finditer(re.escape(old), data)]
            if at:
                i = rng.choice(at)
                out.append((f"'{old.decode()}' at {i} made '{new.decode()}'", patch(i, new)))
    if b"libcudart.so.12" in data:
        out.append(("libcudart.so.12 made libcudart.so.13",
                    lambda p: open(p, "wb").write(data.replace(b"libcudart.so.12", b"libcudart.so.13"))))

    def replace(make):
        return lambda p: (os.unlink(p), make(p))

    out += [("replaced by a folder", replace(os.mkdir)), ("replaced by a FIFO", replace(os.mkfifo)),
            ("replaced by a symlink to a canary", replace(lambda p: os.symlink(CANARY_FILE, p)))]
    if other is not None:
        out.append(("replaced by the other wheel's", lambda p: shutil.copyfile(other, p)))
    return out

CANARY_FILE, CANARY_TEXT = None, None

def damage_trial(c0, rel, fn, cmds, tmp, n, canary):
    d = os.path.join(tmp, f"t{n}")
    shutil.copytree(c0, d, symlinks=True)
    fn(os.path.join(d, rel))
    problems = []
    for rnd, (args, reference, as_json) in [(n, c) for n in (1, 2) for c in cmds]:
        r = wc([*args, "--cache-dir", d], timeout=20)
        why = differs(r, reference, as_json, canary)
        if why:
            problems.append(f"    run {rnd}, {' '.join(a for a in args if not a.startswith('/'))}: {'; '.join(why)}")
        if r.timed_out:  # a hang is enough: the next runs would hang as well
            break
    if open(CANARY_FILE).read() != CANARY_TEXT:
        problems.append("    the canary file was written to")
    shutil.rmtree(d, ignore_errors=True)
    return problems

def case_damaged_entries(tmp, rng):
    global CANARY_FILE, CANARY_TEXT
    w, b = sample(TREE), sample(GEMS)
    shas = {sha256(w): "<W>", sha256(b): "<B>"}
    c0 = tmp + "/warm"
    warm(c0, w, b)
    token = "CANARY-%016x" % rng.getrandbits(64)
    CANARY_FILE = tmp + "/canary.json"
    CANARY_TEXT = f'{{"schema_version":1,"canary":"{token}","members":[]}}\n{token}\n'
    open(CANARY_FILE, "w").write(CANARY_TEXT)
    cmds = {x: [(args, ref(args), as_json) for args, as_json in ((inspect_j(x), False), (inspect_t(x), False),
                                                                  (check_j(x), True))] for x in (w, b)}
    files = regular_files(c0)
    check(len(files) >= 4, f"the warm cache of two wheels holds {len(files)} files under profiles/ and index/", files)

    def label(rel, owner):
        for s, name in shas.items():
            rel = rel.replace(s, name)
        return re.sub(r"[0-9a-f]{64}", "<key of " + "+".join(shas[sha256(x)].strip("<>") for x in owner) + ">", rel)

    trials = []
    for rel in files:
        data = open(os.path.join(c0, rel), "rb").read()
        owner = [x for x in (w, b) if sha256(x) in rel or sha256(x).encode() in data] or [w]
        # The same kind of file of the other wheel's entry: its name with the other sha256, wherever it lies;
        # for a file not named by a sha256 (an index entry), the other file of its folder.
        name = os.path.basename(rel)
        twin = name.replace(sha256(w), "\0").replace(sha256(b), sha256(w)).replace("\0", sha256(b))
        other = [f for f in files if f != rel and (os.path.basename(f) == twin if twin != name else
                                                   os.path.dirname(f) == os.path.dirname(rel))]
        other = os.path.join(c0, other[0]) if other else None
        for name, fn in damages(data, rng, other):
            trials.append((label(rel, owner), name, rel, fn, [c for x in owner for c in cmds[x]]))
    fifo = [t for t in trials if "FIFO" in t[1]]
    rest = [t for t in trials if "FIFO" not in t[1]]
    print(f"  ...   {len(trials)} damages of {len(files)} files, each followed by two rounds of inspect --json, "
          f"inspect, check --json")
    with concurrent.futures.ThreadPoolExecutor(max(1, len(fifo))) as hang_pool, \
            concurrent.futures.ThreadPoolExecutor(4) as pool:
        futs = [(t, (hang_pool if t in fifo else pool).submit(damage_trial, c0, t[2], t[3], t[4], tmp, n, token))
                for n, t in enumerate(fifo + rest)]
        for (lab, name, _, _, _), f in sorted(futs, key=lambda x: (x[0][0], x[0][1])):
            problems = f.result()
            check(not problems, f"{lab} {name}: the reference twice, no canary, no crash", "\n".join(problems))

# --- 5. symlinked-shard ---------------------------------------------------------------------------------------

def case_symlinked_shard(tmp, rng):
    w = sample(GEMS)
    learn = tmp + "/learn"
    warm(learn, w)
    dirs = sorted({os.path.dirname(f) for f in files_under(learn)} - {""})
    check(dirs, f"the cache's entry folders: {dirs}")
    for sel in [[d] for d in dirs] + ([dirs] if len(dirs) > 1 else []):
        c = tempfile.mkdtemp(dir=tmp)
        outside = []
        for n, d in enumerate(sel):
            o = newdir(tmp, f"outside-{os.path.basename(c)}-{n}")
            newdir(c, os.path.dirname(d))
            os.symlink(o, os.path.join(c, d))
            outside.append(o)
        bad = []
        for args, as_json in ((inspect_j(w), False), (check_j(w), True), (inspect_j(w), False)):
            why = differs(wc([*args, "--cache-dir", c]), ref(args), as_json)
            bad += [f"{args[0]}: {x}" for x in why]
        written = [os.path.join(o, f) for o in outside for f in os.listdir(o)]
        check(not written and not bad, f"{', '.join(sel)} a symlink out of the cache: nothing written outside, "
                                       f"the reference output", "\n".join(bad + written))

# --- 6. foreign-cache -----------------------------------------------------------------------------------------

def rewire(cache, a, b):
    """A's entry files get B's content: a cache that, if read, answers B's profile for A."""
    sa, sb = sha256(a), sha256(b)
    files = files_under(cache)
    n = 0
    for f in files:
        twin = [t for t in files if sa in f and os.path.basename(t) == os.path.basename(f).replace(sa, sb)]
        if twin:
            shutil.copyfile(os.path.join(cache, twin[0]), os.path.join(cache, f))
            n += 1
    return n

def case_foreign_cache(tmp, rng):
    a, b = sample(GEMS), sample(TREE)

    def owned(c):
        sh("chown", "-R", "65534:65534", c)
        os.chmod(c, 0o755)

    for what, prep in (("owned by another user (65534)", owned), ("root's, mode 0777", lambda c: os.chmod(c, 0o777)),
                       ("root's, mode 1777", lambda c: os.chmod(c, 0o1777))):
        c = tempfile.mkdtemp(dir=tmp)
        warm(c, a, b)
        check(rewire(c, a, b) > 0, f"a cache {what}, rewired: A's entry files hold B's profile")
        prep(c)
        before = snapshot(c)
        for args, as_json in ((inspect_j(a), False), (check_j(a), True)):
            r = wc(args, env={"WHEELCHECK_CACHE_DIR": c})
            why = differs(r, ref(args), as_json)
            warned = [l for l in r.err.decode(errors="replace").splitlines()
                      if l.startswith("wheelcheck: warning:") and "cache" in l.lower()]
            check(not why and warned, f"a cache {what} as WHEELCHECK_CACHE_DIR, {args[0]}: the reference, and a "
                                      f"wheelcheck: warning: about the cache", "\n".join(why + [r.text()]))
            r = wc([*args, "--cache-dir", c])
            check(r.rc == 2 and err_line(r), f"a cache {what} as --cache-dir, {args[0]}: exit 2 and a wheelcheck: "
                                             f"error:", r.text())
        after = snapshot(c)
        check(before == after, f"the cache {what} is not written", changes(before, after))
    # HOME, XDG_CACHE_HOME and WHEELCHECK_CACHE_DIR unset: ~ falls back to /tmp, where anyone may plant a cache.
    stage = newdir(tmp, "home")
    spec = {"wheelcheck": A.wheelcheck, "db": A.db, "a": a, "b": b, "stage": stage}
    p = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, os.path.abspath(__file__),
                        "--home-child", json.dumps(spec)], capture_output=True, text=True, timeout=300)
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        check(False, "the HOME-unset run (unshare -m, a tmpfs on /tmp) reports", p.stdout[-1500:] + p.stderr[-1500:])
        return
    check(res["plain_same"], "HOME unset, nothing planted: inspect --json gives the reference", res["plain_detail"])
    check(not res["created"], "HOME unset, nothing planted: no /tmp/.cache is created", res["created_detail"])
    check(res["rewired"] > 0, f"a cache planted in /tmp/.cache/wheelcheck (owner 65534) answers B's profile for A "
                              f"({res['rewired']} files rewired)")
    check(res["planted_same"], "HOME unset, a planted /tmp/.cache/wheelcheck: inspect --json and check --json give "
                               "A's reference", res["planted_detail"])
    check(res["planted_unchanged"], "and nothing under /tmp/.cache changed", res["unchanged_detail"])

def home_child(spec):
    """Inside `unshare -m`: a fresh tmpfs on /tmp (the real one untouched), the binary, wheels and db staged
    there, HOME, XDG_CACHE_HOME and WHEELCHECK_CACHE_DIR unset (env -i PATH=...)."""
    global A, ENV
    s = json.loads(spec)
    new = newdir(s["stage"], "newtmp")
    sh("mount", "-t", "tmpfs", "-o", "size=1g,mode=1777", "tmpfs", new)
    st = newdir(new, "stage")
    shutil.copy(s["wheelcheck"], st + "/wheelcheck")
    shutil.copytree(s["db"], st + "/db")
    for k in ("a", "b"):
        shutil.copy(s[k], st)
    sh("mount", "--move", new, "/tmp")
    # And the passwd home's .cache (a fallback for HOME) hidden by a tmpfs as well: the real one stays untouched.
    home_cache = os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".cache")
    if os.path.isdir(home_cache) and not sys.prefix.startswith(home_cache + "/"):
        sh("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", home_cache)
    A = argparse.Namespace(wheelcheck="/tmp/stage/wheelcheck")
    ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "WHEELCHECK_DB": "/tmp/stage/db"}
    a, b = (os.path.join("/tmp/stage", os.path.basename(s[k])) for k in ("a", "b"))
    plain = wc(inspect_j(a))
    res = {"created": os.path.lexists("/tmp/.cache"), "created_detail": "\n".join(files_under("/tmp/.cache")[:10])}
    shutil.rmtree("/tmp/.cache", ignore_errors=True)
    reference = {k: wc([*k, "--no-cache"], env={"WHEELCHECK_CACHE_DIR": "/tmp/stage/refcache"})
                 for k in (tuple(inspect_j(a)), tuple(check_j(a)))}
    why = differs(plain, reference[tuple(inspect_j(a))])
    res["plain_same"], res["plain_detail"] = not why, "\n".join(why)
    shutil.rmtree("/tmp/.cache", ignore_errors=True)
    planted = "/tmp/.cache/wheelcheck"
    warm(planted, a, b)
    res["rewired"] = rewire(planted, a, b)
    sh("chown", "-R", "65534:65534", "/tmp/.cache")
    before = snapshot("/tmp/.cache")
    why = []
    for args, as_json in ((inspect_j(a), False), (check_j(a), True)):
        why += [f"{args[0]}: {x}" for x in differs(wc(args), reference[tuple(args)], as_json)]
    res["planted_same"], res["planted_detail"] = not why, "\n".join(why)
    after = snapshot("/tmp/.cache")
    res["planted_unchanged"], res["unchanged_detail"] = before == after, changes(before, after)
    print(json.dumps(res))
    return 0

# --- 7. full-stdout -------------------------------------------------------------------------------------------

def case_full_stdout(tmp, rng):
    g = sample(GEMS)
    cmds = [inspect_j(g), inspect_t(g), ["check", g, "--image", "cuda13.0"], check_j(g),
            ["gates", g, "--image", "cuda13.0"]]
    for args in cmds + [["images"]]:
        for mode in (("cold", "warm") if args[0] != "images" else ("",)):
            c = tempfile.mkdtemp(dir=tmp)
            extra = ["--cache-dir", c] if mode else []
            if mode == "warm":
                wc([*args, *extra], stdout=subprocess.DEVNULL)
            with open("/dev/full", "wb") as full:
                r = wc([*args, *extra], stdout=full)
            what = " ".join([a for a in args if not a.startswith("/")] + [mode]).strip()
            check(r.rc == 2 and err_line(r) and b"No space left on device" in r.err,
                  f"{what} > /dev/full: exit 2, wheelcheck: error: ... No space left on device", r.text())
    idx = Index(tmp)
    try:
        for mode in ("cold", "warm"):
            c = tmp + "/scan-cache"
            if mode == "warm":
                wc(idx.scan(tmp + "/warm-state", c))
            with open("/dev/full", "wb") as full:
                r = wc(idx.scan(tempfile.mkdtemp(dir=tmp), c, extra=("--json",)), stdout=full)
            check(r.rc == 2 and err_line(r) and b"No space left on device" in r.err,
                  f"scan --json {mode} > /dev/full: exit 2, wheelcheck: error: ... No space left on device", r.text())
    finally:
        idx.close()
    # A closed pipe: quiet, whatever the exit status; cold (the profile rendered) and warm (streamed from the cache).
    flagos = sorted(os.path.join(A.samples, "flagos", f) for f in os.listdir(os.path.join(A.samples, "flagos"))
                    if f.endswith(".whl"))
    big = ("check --image all --json of every flagos sample (1 MB)", ["check", *flagos, "--image", "all", "--json"])
    for (what, args), mode in [(x, m) for x in (("inspect --json", inspect_j(g)), big) for m in ("cold", "warm")]:
        c = tempfile.mkdtemp(dir=tmp)
        what = f"{what} {mode}"
        if mode == "warm":
            wc([*args, "--cache-dir", c], stdout=subprocess.DEVNULL)
        line = " ".join(shlex.quote(x) for x in [A.wheelcheck, *args, "--cache-dir", c])
        p = subprocess.run(["bash", "-c", f'{line} | head -c 1 >/dev/null; echo "rc=${{PIPESTATUS[0]}}"'],
                           capture_output=True, env=ENV)
        rc = p.stdout.decode().strip()
        check(b"error" not in p.stderr.lower() and rc not in ("rc=70",),
              f"{what} | head -c 1: nothing on stderr about an error ({rc})", p.stderr[-500:])
        for ignored in (False, True):
            if mode == "cold":
                shutil.rmtree(c)
            rd, wr = os.pipe()
            os.close(rd)
            p = subprocess.run([A.wheelcheck, *args, "--cache-dir", c], stdout=wr, stderr=subprocess.PIPE, env=ENV,
                               restore_signals=not ignored)
            os.close(wr)
            check(b"error" not in p.stderr.lower() and p.returncode not in (70,) and (p.returncode >= 0 or
                                                                                    p.returncode == -signal.SIGPIPE),
                  f"{what} into a pipe already closed{', SIGPIPE ignored' if ignored else ''}: quiet (exit "
                  f"{p.returncode})", p.stderr[-500:])

# --- 8. full-files --------------------------------------------------------------------------------------------

def case_full_files(tmp, rng):
    g = sample(GEMS)
    full = tmpfs(tmp + "/full", "64k", fill=True)
    ok = newdir(tmp, "ok")
    img = ["--image", "cuda13.0"]
    # -o: the commands that have it (probe's description, exports' table), on a root and a library built here.
    libc = next(p for p in ("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                            "/lib/aarch64-linux-gnu/libc.so.6") if os.path.exists(p))
    root = newdir(tmp, "root/usr/lib")
    shutil.copy(libc, root + "/libc.so.6")
    cmds = [("probe -o FULL/image.json", ["probe", "--root", tmp + "/root", "--name", "x", "-o", full + "/image.json"]),
            ("exports -o FULL/libc.exports.gz", ["exports", libc, "-o", full + "/libc.exports.gz"])]
    gh = ["--format", "github"]
    cmds += [("check --format github --env-file FULL/env", ["check", g, *img, *gh, "--env-file", full + "/env"]),
             ("check --format github --summary FULL/sum", ["check", g, *img, *gh, "--env-file", ok + "/e1",
                                                           "--summary", full + "/sum"]),
             ("gates --format github --env-file FULL/env", ["gates", g, *img, *gh, "--env-file", full + "/env2"]),
             ("gates --format github --summary FULL/sum", ["gates", g, *img, *gh, "--env-file", ok + "/e2",
                                                           "--summary", full + "/sum2"])]
    for what, args in cmds:
        has_cache = args[0] in ("check", "gates", "inspect", "scan")
        r = wc([*args, *(["--cache-dir", tempfile.mkdtemp(dir=tmp)] if has_cache else [])])
        check(r.rc == 2 and err_line(r) and b"No space left on device" in r.err,
              f"{what} on a full disk: exit 2, wheelcheck: error: ... No space left on device", r.text())
    idx = Index(tmp)
    try:
        for what, rep, pins in (("--report FULL/r --pins FULL/p", full + "/r", full + "/p"),
                                ("--report FULL/r", full + "/r2", ok + "/p"),
                                ("--pins FULL/p", ok + "/r", full + "/p3")):
            r = wc(idx.scan(tempfile.mkdtemp(dir=tmp), tmp + "/scan-cache", rep, pins))
            check(r.rc == 2 and err_line(r) and b"No space left on device" in r.err,
                  f"scan {what} on a full disk: exit 2, wheelcheck: error: ... No space left on device", r.text())
    finally:
        idx.close()
    # A cache that cannot be written costs speed, never the answer.
    for what, size, fill in (("a full 64k tmpfs", "64k", True), ("an 8k tmpfs (full mid-entry)", "8k", False)):
        c = tmpfs(tempfile.mkdtemp(dir=tmp), size, fill)
        bad = []
        for rnd in (1, 2):
            for args, as_json in ((inspect_j(g), False), (inspect_t(g), False), (check_j(g), True)):
                bad += [f"run {rnd} {args[0]}: {x}" for x in differs(wc([*args, "--cache-dir", c]), ref(args), as_json)]
        check(not bad, f"the cache on {what}: inspect --json, inspect, check --json give the reference, twice",
              "\n".join(bad))
        left = leftovers(c)
        check(not left, f"the cache on {what}: no *.tmp.* file is left", left)

# --- 9. kill-9 ------------------------------------------------------------------------------------------------

KILLS, SPAN = 12, 1.2  # kills per command; the delays are drawn from 0 to SPAN times a cold run

def kill_at(args, delay):
    p = subprocess.Popen([A.wheelcheck, *args], env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    return p.wait()

def cold_time(tmp, make):
    """The median time of three cold runs of make(a fresh folder)."""
    return sorted(wc(make(tempfile.mkdtemp(dir=tmp))).secs for _ in range(3))[1]

def case_kill_9(tmp, rng):
    wheels = [os.path.join(d, f) for d, _, fs in os.walk(A.samples) for f in fs if f.endswith(".whl")]
    big = max(wheels, key=os.path.getsize)
    for what, args, as_json in (("inspect --json", inspect_j(big), False), ("check --json", check_j(big), True)):
        t = cold_time(tmp, lambda c: [*args, "--cache-dir", c])
        bad, left, killed = [], [], 0
        for n in range(KILLS):
            c = tempfile.mkdtemp(dir=tmp)
            delay = rng.uniform(0, SPAN * t)
            killed += kill_at([*args, "--cache-dir", c], delay) == -signal.SIGKILL
            why = differs(wc([*args, "--cache-dir", c]), ref(args), as_json)
            bad += [f"kill {n} at {delay * 1000:.0f} ms: {x}" for x in why]
            left += leftovers(c)
        check(not bad, f"{what} of {os.path.basename(big)} killed {KILLS} times in its first {SPAN * t * 1000:.0f} ms "
                       f"({killed} died of the kill): every rerun gives the reference", "\n".join(bad))
        check(not left, f"{what}: no *.tmp.* or unresumable *.part left by the killed runs after the reruns",
              "\n".join(left))
    idx = Index(tmp)
    try:
        ref_rc, ref_new = idx.ref(tmp)
        t = cold_time(tmp, lambda d: idx.scan(d + "/s", d + "/c", d + "/r", d + "/p"))
        bad, left, partial, killed = [], [], [], 0
        for n in range(KILLS):
            d = tempfile.mkdtemp(dir=tmp)
            cmd = idx.scan(d + "/s", d + "/c", d + "/r", d + "/p")
            delay = rng.uniform(0, SPAN * t)
            killed += kill_at(cmd, delay) == -signal.SIGKILL
            partial += [f"kill {n} at {delay * 1000:.0f} ms: {x}"
                        for x in jsons_parse(d + "/s") + jsons_parse(d + "/r")]
            r = wc(cmd)
            if (r.rc, new_of(r)) not in ((ref_rc, ref_new), (0, 0)):
                bad.append(f"kill {n} at {delay * 1000:.0f} ms: exit {r.rc}, {new_of(r)} new\n{r.text()}")
            if not os.path.exists(d + "/r/report.json") or jsons_parse(d + "/r") or jsons_parse(d + "/s"):
                bad.append(f"kill {n}: after the rerun, the report or state does not parse")
            left += leftovers(d + "/s", d + "/c", d + "/r")
        check(not partial, f"scan killed {KILLS} times in its first {SPAN * t * 1000:.0f} ms ({killed} died of the "
                           f"kill): the state and report.json, where present, always parse", "\n".join(partial))
        check(not bad, f"every rerun reports the {ref_new} new wheels (exit {ref_rc}), or 0 new where the killed scan "
                       f"had committed", "\n".join(bad))
        check(not left, "scan: no *.tmp.* or unresumable *.part left in cache, state, report after the reruns",
              "\n".join(left))
    finally:
        idx.close()

def dead_pid():
    """The pid of a process that has exited (and been reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def case_leftovers(tmp, rng):
    """What a kill -9 leaves, planted where it would be (so the case does not depend on the kill's timing):
    a dead process's 1 MiB temporaries in the cache's entry and index folders, the state and the report
    folder; the next run that touches each folder removes them, and leaves a live process's alone."""
    g = sample(GEMS)
    c = tempfile.mkdtemp(dir=tmp)
    wc([*inspect_j(g), "--cache-dir", c])
    folders = sorted({os.path.dirname(os.path.join(c, f)) for f in files_under(c)})
    dead, live = dead_pid(), os.getpid()
    planted, kept = [], []
    for n, folder in enumerate(folders):
        for pid, into in ((dead, planted), (live, kept)):
            path = os.path.join(folder, f"entry{n}.json.tmp.{pid}")
            with open(path, "wb") as f:
                f.write(b"x" * (1 << 20))
            into.append(path)
    r = wc([*inspect_j(g), "--cache-dir", c])  # warm: it reads there, and writes nothing
    check(not differs(r, ref(inspect_j(g))), "a warm inspect --json beside the leftovers gives the reference", r.text())
    check(not [p for p in planted if os.path.exists(p)],
          f"the dead process's temporaries in {len(folders)} cache folders are gone after one warm run",
          "\n".join(p for p in planted if os.path.exists(p)))
    check(all(os.path.exists(p) for p in kept), "a live process's temporaries stay")
    idx = Index(tmp)
    try:
        d = tempfile.mkdtemp(dir=tmp)
        wc(idx.scan(d + "/s", d + "/c", d + "/r", d + "/p"))
        planted = []
        for folder, name in ((d + "/s", "state.db"), (d + "/r", "report.json")):
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, f"{name}.tmp.{dead}-0")
            open(path, "wb").write(b"{" * 4096)
            planted.append(path)
        r = wc(idx.scan(d + "/s", d + "/c", d + "/r", d + "/p"))
        check(r.rc in (0, 1), "the next scan runs", r.text())
        check(not [p for p in planted if os.path.exists(p)], "its state and report folders are swept",
              "\n".join(p for p in planted if os.path.exists(p)))
    finally:
        idx.close()


# --- 10. cache-cap --------------------------------------------------------------------------------------------

def case_cache_cap(tmp, rng):
    if not check("--cache-max-size" in wc(["inspect", "--help"]).out.decode(), "inspect --help lists --cache-max-size"):
        return
    wheels = [sample(x) for x in (TREE, CX, CXA, HELLO, GEMS)]
    size, entry = {}, {}  # what one wheel's entry takes, and the names of its files (those naming its sha256)
    for w in wheels:
        c = tempfile.mkdtemp(dir=tmp)
        wc([*inspect_j(w), "--cache-dir", c])
        size[w], entry[w] = total_size(c), {os.path.basename(f) for f in files_under(c) if sha256(w) in f}
    big = max(size.values())
    # A cap midway between what any two of the first three wheels' entries take and what all three take.
    three = wheels[:3]
    pair, triple = max(size[x] + size[y] for x in three for y in three if x != y), sum(size[x] for x in three)
    cap_k = max(pair // 1024 + 1, (pair + triple) // 2048)
    print(f"  ...   entry sizes (bytes of their files) {sorted(size.values())}, cap {cap_k}K")
    ok_cap = pair <= cap_k * 1024 < triple

    def present(c, w):  # True: every file of its entry is there; False: none is; None: a part of it
        have = entry[w] & {os.path.basename(f) for f in files_under(c)}
        return True if have == entry[w] and have else False if not have else None

    def step(c, w):
        """inspect --json w under the cap, then two hours pass (every mtime and atime of the cache moved back):
        recency is then plain whatever the clock's resolution, and an hourly refresh of a hit's mtime is due."""
        r = wc([*inspect_j(w), "--cache-dir", c, "--cache-max-size", f"{cap_k}K"])
        for d, dirs, names in os.walk(c):
            for p in [os.path.join(d, n) for n in dirs + names]:
                st = os.lstat(p)
                os.utime(p, ns=(st.st_atime_ns - 7200 * 10**9, st.st_mtime_ns - 7200 * 10**9), follow_symlinks=False)
        return r

    c, over = tmp + "/capped", []
    for w in wheels:
        r = step(c, w)
        if r.rc != 0 or r.out != ref(inspect_j(w)).out:
            over.append(f"{os.path.basename(w)}: not the reference: {r.text()}")
        if total_size(c) > cap_k * 1024 + big:
            over.append(f"after {os.path.basename(w)}: {total_size(c)} bytes")
    check(not over, f"{len(wheels)} wheels inspected in turn with --cache-max-size {cap_k}K: the cache stays within "
                    f"the cap plus one entry ({big} bytes), every answer the reference", "\n".join(over))
    check(present(c, wheels[-1]) is True, "the last wheel inspected is still in the cache, its whole entry",
          files_under(c))
    check(present(c, wheels[0]) is not True, "the first (least recently used) is gone (or no longer whole)",
          files_under(c))
    if ok_cap:
        c = tmp + "/lru"
        for w in (three[0], three[1], three[0], three[2]):
            step(c, w)
        check(present(c, three[0]) is True and present(c, three[2]) is True and present(c, three[1]) is not True,
              "a, b, a again (a hit), c with room for two: b (the least recently used) is the one removed, a and c "
              "stay whole", files_under(c))

# --- 11. scan-errors ------------------------------------------------------------------------------------------

def case_scan_errors(tmp, rng):
    idx = Index(tmp)
    try:
        idx.faults([{"path": ".", "fault": "status", "code": 500, "count": -1}])
        r = wc(idx.scan(tmp + "/s1", tmp + "/c1", tmp + "/r1", extra=("--retries", "1")))
        named = [l for l in r.err.decode(errors="replace").splitlines()
                 if l.startswith("wheelcheck: error:") and f"127.0.0.1:{idx.port}" in l]
        check(r.rc == 2 and named, "an index that always answers 500: exit 2, a wheelcheck: error: line naming it",
              r.text())
        idx.faults()
        m = tmpfs(tmp + "/ro-cache", "16m")
        for w in idx.wheels:
            wc([*inspect_j(w), "--cache-dir", m], stdout=subprocess.DEVNULL)
        sh("mount", "-o", "remount,ro", m)
        args = ["scan", "--index", idx.url, "--project", "flagcx", "--image", "ascend-cann9", "--report", tmp + "/r2",
                "-q"]
        r = wc(args, env={"WHEELCHECK_CACHE_DIR": m})
        rep = tmp + "/r2/report.json"
        check(r.rc == 2, f"a read-only default cache and no --state: exit 2 (got {r.rc})", r.text())
        check(os.path.exists(rep) and not jsons_parse(tmp + "/r2"), "the report is still written and parses", r.text())
        check(any(line.startswith("wheelcheck: error:") and "state" in line
                  for line in r.err.decode(errors="replace").splitlines()),
              "a wheelcheck: error: line says the state was not saved", r.text())
    finally:
        idx.close()

# --- 12. container images (probe REF) -------------------------------------------------------------------------

IMAGE_PACKAGES = (["base-files", "libc6", "libgcc-s1", "zlib1g"], ["libstdc++6", "libexpat1"])
IMAGE_NAME = "tiny"

class TinyImage:
    """A small image of this machine's real Debian packages in two gzip layers (libc6, libgcc-s1, zlib1g and
    base-files; then libstdc++6 and libexpat1): an OCI layout written per the OCI image spec (tests/images/
    imagelib.py), its oci-archive (a tar of the layout, written here), and a fake registry serving it
    (FakeRegistry: http.server on 127.0.0.1, every request logged). A context manager: the registry stops on exit."""

    def __init__(self, tmp):
        t0 = time.time()
        layers_tar = []
        for n, pkgs in enumerate(IMAGE_PACKAGES):
            root = newdir(tmp, f"image-root{n}")
            if n == 0:
                IL.merged_usr(root)
            IL.copy_packages(root, pkgs)
            layers_tar.append(IL.tar_of_dir(root))
        self.layout = IL.Layout(os.path.join(tmp, "image-oci"))
        self.layers = [self.layout.layer(t, "gzip") for t in layers_tar]
        self.manifest, _, self.config = self.layout.image(self.layers, tag="1")
        self.archive = os.path.join(tmp, "image.oci.tar")
        with tarfile.open(self.archive, "w") as t:
            for name in ("oci-layout", "index.json", "blobs"):
                t.add(os.path.join(self.layout.path, name), name)
        self.fake = IL.FakeRegistry()
        self.fake.add_layout_image(self.layout, "tiny/img", "1", self.manifest["digest"])
        self.refs = {"registry": f"docker://{self.fake.host}/tiny/img:1",
                     "registry-digest": f"docker://{self.fake.host}/tiny/img@{self.manifest['digest']}",
                     "oci-archive": f"oci-archive:{self.archive}:1"}
        self.layer_sizes = [d["size"] for d, _ in self.layers]
        print(f"  ...   image: {len(self.layers)} gzip layers, {sum(self.layer_sizes) >> 10} KiB "
              f"({time.time() - t0:.1f} s)", flush=True)

    def __enter__(self):
        self.fake.__enter__()
        return self

    def __exit__(self, *exc):
        self.fake.__exit__(*exc)

    def blob_gets(self):
        return [p for m, p, _ in self.fake.requests if m == "GET" and "/blobs/" in p]

def probe_args(ref):
    return ["probe", ref, "--json", "--name", IMAGE_NAME, "-q"]

def in_cache(cache):
    # The fake registry is on loopback: scripts/test.sh's WHEELCHECK_OFFLINE=1 is lifted (tests/images does too).
    return {"WHEELCHECK_CACHE_DIR": cache, "WHEELCHECK_OFFLINE": ""}

def image_ref(img, what, tmp):
    """The reference answer for IMG's reference WHAT: probe --json on a fresh cache."""
    key = ("image", what)
    if key not in REFS:
        REFS[key] = wc(probe_args(img.refs[what]), env=in_cache(tempfile.mkdtemp(dir=tmp)))
        check(REFS[key].rc == 0 and REFS[key].out.startswith(b"{"), f"{what}: the reference (a fresh cache) exits 0",
              REFS[key].text())
    return REFS[key]

def roots_of(cache):
    """(complete roots: images/roots/HEX holding image.json, every other entry of images/roots/)"""
    top = os.path.join(cache, "images", "roots")
    names = sorted(os.listdir(top)) if os.path.isdir(top) else []
    done = [n for n in names if re.fullmatch(r"[0-9a-f]{64}", n) and os.path.isfile(os.path.join(top, n, "image.json"))]
    return done, [n for n in names if n not in done]

def build_pid(name):
    m = re.search(r"-(\d+)$", name)
    return int(m.group(1)) if m else None

def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True

def image_leftovers(cache):
    """Temporary files of dead processes and unresumable partial downloads in the image cache, less what lies
    inside roots/.build-* (the unfinished roots, reported on their own)."""
    return [p for p in leftovers(os.path.join(cache, "images")) if "/roots/.build-" not in p]

def kill_image_at(args, env, delay):
    p = subprocess.Popen([A.wheelcheck, *args], env=dict(ENV, **env), stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    return p.wait()

IMAGE_KILLS = 8

def case_image_kill_9(tmp, rng):
    with TinyImage(tmp) as img:
        # The layers come at 8 MB/s: the download, the layers' application and the probe each get their share of
        # the kills.
        img.fake.faults["slow"] = (r"/blobs/", 8 << 20)
        for what in ("registry", "oci-archive"):
            args, reference = probe_args(img.refs[what]), image_ref(img, what, tmp)
            t = sorted(wc(args, env=in_cache(tempfile.mkdtemp(dir=tmp))).secs for _ in range(3))[1]
            bad, left, unverified, killed, builds, builds_after, kept = [], [], [], 0, 0, [], 0
            for n in range(IMAGE_KILLS):
                c = tempfile.mkdtemp(dir=tmp)
                delay = rng.uniform(0, SPAN * t)
                killed += kill_image_at(args, in_cache(c), delay) == -signal.SIGKILL
                _, others = roots_of(c)
                started = [x for x in others if x.startswith(".build-")]
                builds += len(started)
                r = wc(args, env=in_cache(c))
                bad += [f"kill {n} at {delay * 1000:.0f} ms: {x}" for x in differs(r, reference)]
                done, others = roots_of(c)
                if done != [img.manifest["digest"][7:]]:
                    bad.append(f"kill {n}: after the rerun images/roots/ holds {done} complete, not the manifest's")
                live = [x for x in others if x.startswith(".build-") and build_pid(x) and alive(build_pid(x))]
                if live:
                    bad.append(f"kill {n}: a live process's unfinished root {live}")
                builds_after += [x for x in others if x.startswith(".build-")]
                kept += sum(1 for x in started if x in others)
                left += [f"kill {n}: {p}" for p in image_leftovers(c)]
                unverified += [f"kill {n}: {p}" for p in IL.unverified_blobs(c)]
                # and the next run is served from the complete root, whatever the killed run left beside it
                r = wc([*args[:-1]], env=in_cache(c))
                if differs(r, reference) or b"cached" not in r.err:
                    bad.append(f"kill {n}: the warm run after the rerun is not the cached reference: {r.text()}")
            print(f"  ...   {what}: {builds} unfinished roots (roots/.build-*) left by the kills; after the reruns "
                  f"{len(builds_after)} remain ({kept} of them the killed runs': "
                  f"{'ignored, not removed' if kept else 'removed'})", flush=True)
            check(not bad, f"{what}: probe --json killed {IMAGE_KILLS} times in its first {SPAN * t * 1000:.0f} ms "
                           f"({killed} died of the kill): every rerun gives the reference, roots/ holds the complete "
                           f"root, a warm run after it is served from the cache", "\n".join(bad))
            check(not builds_after, f"{what}: no roots/.build-* is left after the reruns (the killed runs' unfinished "
                                    f"roots are removed by the next run that builds)", "\n".join(builds_after))
            check(not left, f"{what}: no *.tmp.* or unresumable partial download left after the reruns",
                  "\n".join(left))
            check(not unverified, f"{what}: every images/blobs/sha256/HEX hashes to HEX, kill after kill",
                  "\n".join(unverified))

def case_image_two_at_once(tmp, rng):
    with TinyImage(tmp) as img:
        img.fake.faults["slow"] = (r"/blobs/", 16 << 20)
        for what in ("registry", "oci-archive"):
            reference = image_ref(img, what, tmp)
            for n in range(3):
                c = tempfile.mkdtemp(dir=tmp)
                e = dict(ENV, **in_cache(c))
                procs = [subprocess.Popen([A.wheelcheck, *probe_args(img.refs[what])[:-1]], env=e,
                                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                         for _ in (1, 2)]
                rs = []
                for p in procs:
                    try:
                        o, err = p.communicate(timeout=120)
                        rs.append(Res(p.returncode, o, err, 0))
                    except subprocess.TimeoutExpired:
                        p.kill()
                        rs.append(Res(None, *p.communicate(), 120, True))
                bad = [f"{'; '.join(differs(r, reference))}\n{r.text()}" for r in rs if differs(r, reference)]
                bad += [r.text() for r in rs if b"rename" in r.err or b"wheelcheck: error" in r.err]
                check(not bad, f"{what}, try {n + 1}: two probes on one cache at once both exit 0 with the reference, "
                               f"no error (about rename or any)", "\n".join(bad))
                done, others = roots_of(c)
                check(done == [img.manifest["digest"][7:]] and not others,
                      f"{what}, try {n + 1}: one roots/DIGEST, nothing else in roots/", f"{done} {others}")
                check(not IL.unverified_blobs(c) and not image_leftovers(c),
                      f"{what}, try {n + 1}: every blob verified, no temporary left",
                      IL.unverified_blobs(c) + image_leftovers(c))
                cached = [b"cached" in r.err for r in rs]
                print(f"  ...   {what}, try {n + 1}: {sum(cached)} of the two said cached", flush=True)

def case_image_full_cache(tmp, rng):
    with TinyImage(tmp) as img:
        need = sum(img.layer_sizes)
        for what in ("registry", "oci-archive"):
            reference = image_ref(img, what, tmp)
            args = probe_args(img.refs[what])
            # A full tmpfs, then one too small for the image (the layers alone take NEED bytes)
            half = f"{need // 2 >> 10}k"
            for how, size, fill in (("a full 256k tmpfs", "256k", True),
                                    (f"a {half} tmpfs (full mid-image)", half, False)):
                c = tmpfs(tempfile.mkdtemp(dir=tmp), size, fill)
                r = wc(args, env=in_cache(c))
                check(r.rc == 2 and err_line(r) and b"No space left on device" in r.err,
                      f"{what}, the cache on {how}: exit 2, wheelcheck: error: ... No space left on device", r.text())
                done, others = roots_of(c)
                check(not done, f"{what}, the cache on {how}: no roots/DIGEST (complete roots only)",
                      f"{done} {others}")
                check(not IL.unverified_blobs(c), f"{what}, the cache on {how}: every blob verified",
                      IL.unverified_blobs(c))
                if fill:
                    os.unlink(os.path.join(c, ".filler"))
                sh("mount", "-o", "remount,size=256m", c)  # room for the image
                r = wc(args, env=in_cache(c))
                check(not differs(r, reference), f"{what}, {how} given space again: the reference",
                      "; ".join(differs(r, reference)) + "\n" + r.text())
                done, _ = roots_of(c)
                check(done == [img.manifest["digest"][7:]] and not IL.unverified_blobs(c) and not image_leftovers(c),
                      f"{what}, {how} given space again: the complete root, every blob verified, no temporary left",
                      f"{done} {IL.unverified_blobs(c)} {image_leftovers(c)}")

def case_image_damaged_blob(tmp, rng):
    with TinyImage(tmp) as img:
        reference = image_ref(img, "registry", tmp)
        args = probe_args(img.refs["registry"])
        warm0 = tmp + "/warm"
        r = wc(args, env=in_cache(warm0))
        check(not differs(r, reference), "a warm registry cache", r.text())
        for layer, (desc, _) in enumerate(img.layers):
            hexd = desc["digest"][7:]
            data = open(os.path.join(warm0, "images/blobs/sha256", hexd), "rb").read()
            offset = rng.randrange(len(data))
            for how, damage in ((f"byte {offset} flipped", data[:offset] + bytes([data[offset] ^ 0x40]) +
                                 data[offset + 1:]), ("truncated to half", data[:len(data) // 2])):
                c = tempfile.mkdtemp(dir=tmp)
                shutil.rmtree(c)
                shutil.copytree(warm0, c, symlinks=True)
                shutil.rmtree(os.path.join(c, "images", "roots"))
                blob = os.path.join(c, "images/blobs/sha256", hexd)
                open(blob, "wb").write(damage)
                mark = len(img.blob_gets())
                r = wc(args, env=in_cache(c))
                what = f"layer {layer + 1}'s cached blob {how}, roots/ removed"
                check(not differs(r, reference), f"{what}: the next probe gives the reference",
                      "; ".join(differs(r, reference)) + "\n" + r.text())
                gets = img.blob_gets()[mark:]
                check(any(hexd in g for g in gets), f"{what}: the layer is fetched again (the registry's log)", gets)
                check(os.path.exists(blob) and IL.sha256_file(blob) == hexd and not IL.unverified_blobs(c),
                      f"{what}: the blob hashes to its name again, every blob verified", IL.unverified_blobs(c))

def case_image_read_only_cache(tmp, rng):
    """WHEELCHECK_CACHE_DIR on a read-only tmpfs holding a warm cache. Observed, and pinned: a digest reference and
    an oci-archive are answered from the cached root (the reference output, "cached", no blob fetched); a tag is
    resolved again and its manifest stored anew, so it may be answered or refused with a clear exit 2 (today:
    "cannot write .../blobs/sha256/HEX: Read-only file system"), whichever it is is printed. Either way the cache
    is not changed."""
    with TinyImage(tmp) as img:
        m = tmpfs(tmp + "/ro-cache", "64m")
        for what in ("registry", "registry-digest", "oci-archive"):
            r = wc(probe_args(img.refs[what]), env=in_cache(m))
            check(r.rc == 0, f"{what}: warmed", r.text())
        before = snapshot(m)
        sh("mount", "-o", "remount,ro", m)
        for what in ("registry", "registry-digest", "oci-archive"):
            reference = image_ref(img, what, tmp)
            mark = len(img.blob_gets())
            r = wc(probe_args(img.refs[what])[:-1], env=in_cache(m))
            answered = not differs(r, reference)
            refused = r.rc == 2 and err_line(r) and b"Read-only file system" in r.err
            if what == "registry":
                check(answered or refused, f"{what} (a tag): a read-only cache holding it: the reference, or exit 2 "
                                           f"with a wheelcheck: error: ... Read-only file system", r.text())
            else:
                check(answered, f"{what}: a read-only cache holding it answers the reference", r.text())
            if answered:
                check(b"cached" in r.err and not img.blob_gets()[mark:],
                      f"{what}: answered from the read-only cache (says cached, fetched no blob)", r.text())
            said = r.err.decode(errors="replace").strip().splitlines()[-1:]
            print(f"  ...   {what}: {'answered from the read-only cache' if answered else 'refused, exit 2'}: {said}",
                  flush=True)
            check(snapshot(m) == before, f"{what}: the read-only cache is unchanged", changes(before, snapshot(m)))

CASES = {"scan-commits-last": case_scan_commits_last, "scan-lock": case_scan_lock,
         "download-collision": case_download_collision, "damaged-entries": case_damaged_entries,
         "symlinked-shard": case_symlinked_shard, "foreign-cache": case_foreign_cache,
         "full-stdout": case_full_stdout, "full-files": case_full_files, "kill-9": case_kill_9,
         "leftovers": case_leftovers, "cache-cap": case_cache_cap, "scan-errors": case_scan_errors,
         "image-kill-9": case_image_kill_9, "image-two-at-once": case_image_two_at_once,
         "image-full-cache": case_image_full_cache, "image-damaged-blob": case_image_damaged_blob,
         "image-read-only-cache": case_image_read_only_cache}

def case_env(tmp):
    """No proxy, no GitHub files, a scratch HOME and default cache inside the case's folder."""
    drop = {"GITHUB_ENV", "GITHUB_STEP_SUMMARY", "XDG_CACHE_HOME", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "NETRC"}
    e = {k: v for k, v in os.environ.items() if k not in drop and "proxy" not in k.lower()}
    return dict(e, WHEELCHECK_DB=A.db, NO_COLOR="1", HOME=newdir(tmp, "home-dir"),
                WHEELCHECK_CACHE_DIR=os.path.join(tmp, "default-cache"), no_proxy="*")

def main():
    global A, ENV
    if len(sys.argv) == 3 and sys.argv[1] == "--home-child":
        return home_child(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for opt in ("--wheelcheck", "--samples", "--db"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--seed", type=int, default=20251202)
    ap.add_argument("cases", nargs="*", metavar="CASE")
    A = ap.parse_args()
    A.wheelcheck, A.samples, A.db = (os.path.abspath(x) for x in (A.wheelcheck, A.samples, A.db))
    unknown = [c for c in A.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case {unknown}: one of {', '.join(CASES)}")
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "mount", "umount", "chown", "bash", "head")):
        print("skip: the fault suite runs as root with unshare, mount, chown, bash and head")
        return 77
    if os.environ.get("FAULT_SUITE_NS") != "1":
        if subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True).returncode != 0:
            print("skip: unshare -m is not permitted here")
            return 77
        os.environ["FAULT_SUITE_NS"] = "1"
        os.execvp("unshare", ["unshare", "-m", "--propagation", "private", sys.executable, os.path.abspath(__file__),
                              *sys.argv[1:]])
    start = time.time()
    for name in A.cases or list(CASES):
        tmp = tempfile.mkdtemp(prefix=f"wheelcheck-fault-{name}-")
        ENV = case_env(tmp)
        REFS.clear()
        print(f"case {name}:", flush=True)
        t0 = time.time()
        try:
            CASES[name](tmp, random.Random(f"{A.seed}-{name}"))
        except Exception:  # a broken case is a failure, the others still run
            import traceback
            check(False, f"{name} ran to its end", traceback.format_exc())
        finally:
            for m in reversed(MOUNTS):
                subprocess.run(["umount", "-l", m], capture_output=True)
            MOUNTS.clear()
            subprocess.run(["chmod", "-R", "u+rwX", tmp], capture_output=True)
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"case {name}: {time.time() - t0:.1f} s")
    print(f"{len(FAILURES)} failed ({time.time() - start:.1f} s)")
    for f in FAILURES:
        print(f"  FAILED  {f}")
    return 1 if FAILURES else 0

if __name__ == "__main__":
    sys.exit(main())

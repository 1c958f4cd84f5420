"""The environment job's lookups (issue 60), each asserted against what is true of it:

  find-links  `--find-links ./lock` inside lock/requirements.txt is read where pip reads it (req_file.py: beside the
              requirements file when that exists, else from the working folder): the referee is Debian's pip itself,
              `python3 -m pip download --no-index --no-deps -d OUT -r lock/requirements.txt`, offline, from working
              folders where only one of the two places holds the wheel, and where both hold a different one.
  offline     with WHEELCHECK_OFFLINE=1 no lookup opens a socket: an index URL, a page of links and a wheel's URL
              point at a loopback listener that counts connections; none reaches it, and the package's answer is
              "offline ... not looked up", UNKNOWN, exit 4, never "without a wheel".
  failed      an index that cannot be read (a closed port) is a lookup that failed: UNKNOWN (exit 4), the failure named,
              never INCOMPATIBLE nor "without a wheel".
  hash        a file that is not what the lock's hash says (a --hash against a --find-links wheel, which pip refuses,
              and a pylock path whose sha256 lies) is an integrity failure: said so, "do not pin it", exit 2, never
              INCOMPATIBLE nor "without a wheel".
Wheels are built here (tests/tools/make_wheel.py); nothing leaves the machine.
"""
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import make_wheel  # noqa: E402

DEMO = "demo-1.0-py3-none-any.whl"


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def demo_wheel(path, text):
    """A pure wheel demo 1.0 whose content (and so sha256) is `text`'s."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    src = path + ".py"
    open(src, "w").write(text)
    make_wheel.write_wheel(path, [("demo/__init__.py", src)])
    os.remove(src)
    return path


class Listener:
    """A loopback TCP port that accepts and counts connections (and closes each): whether anything reached it."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.count = 0
        self.done = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.count += 1
            c.close()

    def close(self):
        self.done = True
        self.sock.close()


def closed_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def env_json(r):
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def package(doc, name="demo"):
    return next((p for p in doc.get("packages", []) if p.get("name") == name), {})


def pip_download(reqs, cwd, out):
    """pip's own answer, offline: the file `pip download --no-index --no-deps -r REQS` saves, or None (and why)."""
    shutil.rmtree(out, ignore_errors=True)
    # The machine's pip settings (a config file's find-links, PIP_* variables) are no part of the question.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-index", "--no-deps", "--disable-pip-version-check",
                        "-d", out, "-r", reqs], capture_output=True, text=True, cwd=cwd, env=env)
    files = os.listdir(out) if os.path.isdir(out) else []
    return (os.path.join(out, files[0]) if r.returncode == 0 and len(files) == 1 else None), r


def job_env_lookups(tmp, J):
    wc, check = J.wc, J.check
    root = os.path.join(tmp, "lookups")
    have_pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0
    if not have_pip:
        print("  skip  find-links: pip is not installed for this Python: no referee for where --find-links is read")

    # --- find-links: where pip reads `--find-links ./lock` of lock/requirements.txt ---------------------------------
    cases = {
        # working folder -> (the wheel beside the file, lock/lock/; the wheel from the working folder, ./lock/)
        "only-cwd": (False, True),
        "only-beside": (True, False),
        "both": (True, True),
    }
    for case, (beside, from_cwd) in cases.items():
        cwd = os.path.join(root, case)
        os.makedirs(os.path.join(cwd, "lock"), exist_ok=True)
        reqs = os.path.join(cwd, "lock", "requirements.txt")
        open(reqs, "w").write("--find-links ./lock\ndemo==1.0\n")
        expect = None
        if from_cwd:
            expect = demo_wheel(os.path.join(cwd, "lock", DEMO), "where = 'working folder'\n")
        if beside:  # pip takes the folder beside the file whenever it exists
            expect = demo_wheel(os.path.join(cwd, "lock", "lock", DEMO), "where = 'beside the file'\n")
        r = wc("check", "lock/requirements.txt", "--image", "cuda13.0", "--format", "json", "--no-cache", "-q",
               cwd=cwd, env={"WHEELCHECK_OFFLINE": "1", "WHEELCHECK_DB": os.path.abspath(J.A.db)})
        p = package(env_json(r))
        found = p.get("sha256")
        check(r.returncode == 0 and p.get("state") == "checked" and found == sha256(expect)
              and os.path.realpath(os.path.join(cwd, p.get("path", ""))) == os.path.realpath(expect),
              f"find-links {case}: wheelcheck reads {os.path.relpath(expect, cwd)} (exit {r.returncode})",
              json.dumps(p)[:800] + r.stderr[-800:])
        if have_pip:
            saved, pr = pip_download("lock/requirements.txt", cwd, os.path.join(root, "pip-" + case))
            check(saved is not None and sha256(saved) == found,
                  f"find-links {case}: pip downloads the very file wheelcheck checked "
                  f"({'the same sha256' if saved and sha256(saved) == found else 'differs'})",
                  (pr.stdout + pr.stderr)[-1500:])

    # --- offline: no socket, and the answer says it was not looked up -----------------------------------------------
    lis = Listener()
    try:
        base = f"http://127.0.0.1:{lis.port}"
        off = os.path.join(root, "offline")
        os.makedirs(off, exist_ok=True)
        wheel = demo_wheel(os.path.join(off, "w", DEMO), "x = 1\n")
        reqs = os.path.join(off, "requirements.txt")
        open(reqs, "w").write(f"--index-url {base}/simple/\n--find-links {base}/links/\ndemo==1.0\n")
        lock = os.path.join(off, "pylock.toml")
        open(lock, "w").write('lock-version = "1.0"\ncreated-by = "wheelcheck-tests"\n\n[[packages]]\nname = "demo"\n'
                              f'version = "1.0"\nwheels = [{{ url = "{base}/files/{DEMO}", '
                              f'hashes = {{ sha256 = "{sha256(wheel)}" }} }}]\n')
        for what, path in (("an index URL and a page of links", reqs), ("a wheel's URL", lock)):
            r = wc("check", path, "--image", "cuda13.0", "--format", "json", "--no-cache", "-q",
                   env={"WHEELCHECK_OFFLINE": "1"})
            t = wc("check", path, "--image", "cuda13.0", "--no-cache", "-q", env={"WHEELCHECK_OFFLINE": "1"})
            p = package(env_json(r))
            check(lis.count == 0, f"offline, {what}: no connection reaches the loopback port ({lis.count})")
            check(r.returncode == 4 and t.returncode == 4 and p.get("state") == "unknown"
                  and "offline (WHEELCHECK_OFFLINE is set)" in p.get("reason", "")
                  and ("not looked up" in p["reason"] or "was not read" in p["reason"])
                  and env_json(r).get("verdict") == "unknown" and "UNKNOWN" in t.stdout
                  and "INCOMPATIBLE" not in t.stdout and "without a wheel" not in t.stdout,
                  f"offline, {what}: 'offline ... not looked up', UNKNOWN, exit 4 (exit {r.returncode})",
                  json.dumps(p)[:800] + t.stdout[-1500:] + t.stderr[-800:])
        # A --find-links folder beside the index: the wheel found there is picked (pip, offline, goes on with the
        # files it found); the index not looked up is said beside it.
        open(reqs, "w").write(f"--index-url {base}/simple/\n--find-links w\ndemo==1.0\n")
        r = wc("check", reqs, "--image", "cuda13.0", "--format", "json", "--no-cache", "-q",
               env={"WHEELCHECK_OFFLINE": "1"})
        p = package(env_json(r))
        check(lis.count == 0 and r.returncode == 0 and p.get("state") == "checked" and "not looked up" in p.get("lookup", ""),
              f"offline, a local --find-links beside an index: its wheel is checked, the index named as not looked up "
              f"(exit {r.returncode})", json.dumps(p)[:800] + r.stderr[-800:])
        t = wc("check", reqs, "--image", "cuda13.0", "--no-cache", "-q", env={"WHEELCHECK_OFFLINE": "1"})
        check("  1 wheel installed together and checked\n" in t.stdout and "the environment of 1 wheel; exit 0" in t.stdout
              and "not looked up; picked among the files found" in t.stdout,
              "offline, a local --find-links beside an index: the text counts 1 wheel and names the index not looked up",
              t.stdout)
    finally:
        lis.close()

    # --- a lookup that failed: unknown, the failure named ---------------------------------------------------------
    failed = os.path.join(root, "failed", "requirements.txt")
    os.makedirs(os.path.dirname(failed), exist_ok=True)
    open(failed, "w").write(f"--index-url http://127.0.0.1:{closed_port()}/simple/\ndemo==1.0\n")
    r = wc("check", failed, "--image", "cuda13.0", "--format", "json", "--no-cache", "-q", env={"WHEELCHECK_OFFLINE": ""})
    t = wc("check", failed, "--image", "cuda13.0", "--no-cache", "-q", env={"WHEELCHECK_OFFLINE": ""})
    p = package(env_json(r))
    check(r.returncode == 4 and t.returncode == 4 and p.get("state") == "unknown"
          and p.get("reason", "").startswith("the lookup failed: ") and "127.0.0.1" in p["reason"]
          and "UNKNOWN" in t.stdout and "INCOMPATIBLE" not in t.stdout and "without a wheel" not in t.stdout,
          f"a lookup that failed: 'the lookup failed: ...', UNKNOWN, exit 4 (exit {r.returncode})",
          json.dumps(p)[:800] + t.stdout[-1500:])

    # --- a file that is not what the lock's hash says: an integrity failure ----------------------------------------
    hashdir = os.path.join(root, "hash")
    wheel = demo_wheel(os.path.join(hashdir, "w", DEMO), "x = 2\n")
    liar = "1" * 64
    reqs = os.path.join(hashdir, "requirements.txt")
    open(reqs, "w").write(f"--no-index\n--find-links w\ndemo==1.0 --hash=sha256:{liar}\n")
    lock = os.path.join(hashdir, "pylock.toml")
    open(lock, "w").write('lock-version = "1.0"\ncreated-by = "wheelcheck-tests"\n\n[[packages]]\nname = "demo"\n'
                          f'version = "1.0"\nwheels = [{{ path = "w/{DEMO}", hashes = {{ sha256 = "{liar}" }} }}]\n')
    if have_pip:
        saved, pr = pip_download(reqs, hashdir, os.path.join(root, "pip-hash"))
        check(saved is None and "DO NOT MATCH THE HASHES" in pr.stderr,
              "hash: pip refuses the --find-links wheel whose sha256 is not the --hash", (pr.stdout + pr.stderr)[-1500:])
    for what, path in (("a --hash against a --find-links wheel", reqs), ("a pylock path whose sha256 lies", lock)):
        r = wc("check", path, "--image", "cuda13.0", "--format", "json", "--no-cache", "-q")
        t = wc("check", path, "--image", "cuda13.0", "--no-cache", "-q")
        p = package(env_json(r))
        words = "is not the file the lock's hash says: its sha256 is " + sha256(wheel)
        check(r.returncode == 2 and t.returncode == 2 and p.get("state") == "integrity"
              and words in p.get("reason", "") and "do not pin it" in p["reason"] and words in t.stderr
              and env_json(r).get("verdict") != "incompatible" and "INCOMPATIBLE" not in t.stdout
              and "without a wheel" not in t.stdout and "INTEGRITY FAILURE" in t.stdout,
              f"hash, {what}: an integrity failure, 'do not pin it', exit 2, not INCOMPATIBLE (exit {r.returncode})",
              json.dumps(p)[:800] + t.stdout[-1500:] + t.stderr[-800:])
        check("  0 wheels installed together and checked, 1 package whose file is not what the lock's hash says\n"
              in t.stdout and "the environment of 0 wheels, 1 package whose file is not what the lock's hash says; "
              "exit 2" in t.stdout, f"hash, {what}: the counts say what is true, singular and plural right", t.stdout)
        g = wc("gates", path, "--image", "cuda13.0", "--no-cache", "-q")
        check(g.returncode == 2 and "WHEELCHECK_VERDICT='error'" in g.stdout and words in g.stdout,
              f"hash, {what}: the gates fail closed, naming the file (exit {g.returncode})", g.stdout[-1500:])

"""The sharded scan (issue 44): `scan --shard K/N --state DIR` jobs and `scan --merge DIR... --state OUT`, run as
a CI matrix runs them, against the scan one process makes.

On a loopback FlagOS index (tests/tools/sample_index.py: the samples, re-packs, six more projects):
  - night 1, from no state: the unsharded scan, and N = 1, 2, 3, 7 shards merged into an empty folder, write the
    same report (JSON, Markdown, HTML, SARIF, JUnit), pins, state and run record, byte for byte but for the time
    stamps (generated_at, first_seen) and the report's "shard";
  - night 2, two wheels uploaded since: shards started from copies of night 1's merged state and merged into it
    give what the unsharded second scan gives; a wheel's shard does not change when others are added;
  - a shard killed mid-run (SIGKILL while it downloads) leaves its folder as it started: the merge refuses it,
    naming it, writes nothing and leaves the state as it was; the shard rerun, the merge is whole again;
  - a missing shard, a shard run twice on its own folder, a merge with other options: refused, nothing written.
"""
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "tools")
sys.path.insert(0, TOOLS)
import sample_index  # noqa: E402

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


class Index:
    """The sample index on tests/net/server.py."""

    def __init__(self, J, tmp):
        self.tree = os.path.join(tmp, "index")
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "sample_index.py"), "--samples", J.A.samples,
                            "--out", self.tree, "--extra-projects", "6"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("sample_index.py: " + r.stderr)
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "net", "server.py"), "--root",
                                      self.tree], stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline().split()[1])
        self.base = f"http://127.0.0.1:{self.port}"

    def args(self):
        out = []
        for index in ("flagos-pypi-hosted", "flagos-pypi-nvidia", "flagos-pypi-ascend"):
            out += ["--index", f"{self.base}/{index}/simple/"]
        for p in ["flagtree", "flag-gems-cpp-cuda", "flagcx"] + [f"demo-proj-{k}" for k in range(1, 7)]:
            out += ["--project", p]
        return out + ["--image", "cuda13.0", "--image", "ascend-cann9", "-q", "--no-cache"]

    def faults(self, rules):
        req = urllib.request.Request(self.base + "/_faults", data=json.dumps(rules).encode(), method="POST")
        urllib.request.urlopen(req).read()

    def clear_faults(self):
        urllib.request.urlopen(urllib.request.Request(self.base + "/_faults", method="DELETE")).read()

    def upload(self, index, project, src, name=None, version=None):
        """A re-pack of src put on the index (a wheel uploaded between two scans)."""
        data = sample_index.repack(src, name=name, version=version)
        base = os.path.basename(src).split("-")
        base[1] = version
        if name:
            base[0] = name
        folder = os.path.join(self.tree, index, project)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "-".join(base)), "wb") as f:
            f.write(data)

    def close(self):
        self.proc.kill()
        self.proc.wait()


def outputs(where):
    """The options that write every output of a run named `where` (a folder prefix)."""
    return ["--report", where + "-report", "--pins", where + ".env", "-o", f"sarif={where}.sarif",
            "-o", f"junit={where}.xml"]


def normalized(where):
    """What two runs that did the same work must have byte for byte: each output, time stamps and the report's
    shard taken out."""
    out = {}
    report = json.load(open(where + "-report/report.json"))
    report.pop("generated_at")
    report.pop("shard")
    out["report.json"] = json.dumps(report, indent=1)
    for name in ("report.md", "report.html"):
        text = STAMP.sub("<time>", open(f"{where}-report/{name}").read())
        out[name] = re.sub(r"(shard \d+ of \d+|merged from \d+ shards)", "<shard>", text)
    out["pins"] = open(where + ".env").read().split("\n", 1)[1]
    out["sarif"] = STAMP.sub("<time>", open(where + ".sarif").read())
    out["junit"] = re.sub(r'timestamp="[^"]*"', "", STAMP.sub("<time>", open(where + ".xml").read()))
    return out


def state_of(folder):
    """The state's tables (STATE/state.db, SQLite), each as JSON text, but for when each wheel was first seen."""
    con = sqlite3.connect(f"file:{folder}/state.db?mode=ro", uri=True)

    def value(v):  # a JSON column read, less when the run first saw the wheel
        try:
            j = json.loads(v)
        except (TypeError, ValueError):
            return v
        if isinstance(j, dict):
            j.pop("first_seen", None)
        return j

    try:
        def rows(sql):
            return json.dumps([[value(x) for x in r] for r in con.execute(sql)], indent=1)
        return {"wheels": rows("SELECT key, record FROM wheels ORDER BY key"),
                "pages": rows("SELECT url, entry, length(body) FROM pages ORDER BY url"),
                "run": rows("SELECT key, value FROM run ORDER BY key"),
                "run_fetched": rows("SELECT url, outcome FROM run_fetched ORDER BY url"),
                "run_wheels": rows("SELECT seq, key, entry, remembered FROM run_wheels ORDER BY seq"),
                "run_pins": rows("SELECT seq, pin FROM run_pins ORDER BY seq")}
    finally:
        con.close()


def same_as(J, whole, merged, what):
    a, b = normalized(whole), normalized(merged)
    differ = [k for k in a if a[k] != b[k]]
    J.check(not differ, f"{what}: the report (JSON, Markdown, HTML, SARIF, JUnit) and pins are the unsharded scan's",
            "differ: " + ", ".join(differ) + "\n" + next((f"{a[k][:1500]}\n---\n{b[k][:1500]}" for k in differ), ""))
    sa, sb = state_of(whole + "-state"), state_of(merged + "-state")
    differ = [k for k in sa if sa[k] != sb[k]]
    J.check(not differ, f"{what}: the state and run record are the unsharded scan's", "differ: " + ", ".join(differ))


def wheels_of(report_dir):
    return sorted(w["filename"] for w in json.load(open(report_dir + "/report.json"))["wheels"])


def job_shards(tmp, J):
    idx = Index(J, tmp)
    try:
        run_shards(tmp, J, idx)
    finally:
        idx.close()


def scan(J, idx, *args):
    return J.wc("scan", *idx.args(), *args)


def shard_runs(J, idx, tmp, name, n, start=None):
    """N shard jobs, each on its own copy of `start` (a state folder; None: no state yet)."""
    dirs = []
    for k in range(1, n + 1):
        d = os.path.join(tmp, f"{name}-{k}of{n}")
        shutil.rmtree(d, ignore_errors=True)
        if start:
            shutil.copytree(start, d)
        r = scan(J, idx, "--shard", f"{k}/{n}", "--state", d, "--report", d + "-report")
        J.check(r.returncode in (0, 1), f"{name}: shard {k}/{n} runs (exit {r.returncode})", r.stderr[-1500:])
        if n > 1:  # its pins would see its share only: it says the merge pins, and prints none
            J.check(f"pins: shard {k} of {n} checks a share of the new wheels; `scan --merge` pins" in r.stdout
                    and not pin_lines(r.stdout), f"{name}: shard {k}/{n} leaves the pins to the merge", r.stdout)
        dirs.append(d)
    return dirs


def pin_lines(stdout):
    return [line for line in stdout.splitlines() if line.startswith("pin ")]


def merge(J, idx, where, dirs, *extra):
    return J.wc("scan", *idx.args(), "--merge", *dirs, "--state", where + "-state", *outputs(where), *extra)


def run_shards(tmp, J, idx):
    t = lambda name: os.path.join(tmp, name)  # noqa: E731

    # --- night 1 ------------------------------------------------------------------------------------------
    whole = scan(J, idx, "--state", t("night1-state"), *outputs(t("night1")))
    J.check(whole.returncode == 1, f"night 1: the unsharded scan finds the sample's incompatible wheel (exit "
            f"{whole.returncode})", whole.stderr[-1500:])
    listed = wheels_of(t("night1-report"))
    J.check(len(listed) >= 12, f"night 1: {len(listed)} new wheels to share out")
    for n in (1, 2, 3, 7):
        dirs = shard_runs(J, idx, tmp, "n1", n)
        shares = [set(wheels_of(d + "-report")) for d in dirs]
        J.check(sum(len(s) for s in shares) == len(listed) and set().union(*shares) == set(listed),
                f"night 1, {n} shards: every new wheel is checked by exactly one shard "
                f"({[len(s) for s in shares]})")
        r = merge(J, idx, t(f"night1-merged{n}"), dirs)
        J.check(r.returncode == whole.returncode, f"night 1, {n} shards: the merge exits as the scan does "
                f"({r.returncode})", r.stderr[-1500:])
        same_as(J, t("night1"), t(f"night1-merged{n}"), f"night 1, {n} shard{'s' if n > 1 else ''} merged")
        J.check(pin_lines(r.stdout) and pin_lines(r.stdout) == pin_lines(whole.stdout),
                f"night 1, {n} shards: the merge prints the unsharded scan's pins", r.stdout + whole.stdout)
    night1_shares = [set(wheels_of(d + "-report")) for d in shard_runs(J, idx, tmp, "n1again", 3)]

    # --- night 2: two wheels uploaded -------------------------------------------------------------------
    samples = os.path.join(J.A.samples, "flagos")
    idx.upload("flagos-pypi-hosted", "flagtree", os.path.join(samples, J.TREE), version="0.8.0")
    hello = os.path.join(J.A.samples, "hello_native-1.0-cp311-cp311-linux_x86_64.whl")
    idx.upload("flagos-pypi-hosted", "demo-proj-3", hello, name="demo_proj_3", version="1.1")
    shutil.copytree(t("night1-state"), t("night2-state"))
    whole2 = scan(J, idx, "--state", t("night2-state"), *outputs(t("night2")))
    new2 = wheels_of(t("night2-report"))
    J.check(new2 == ["demo_proj_3-1.1-cp311-cp311-linux_x86_64.whl", "flagtree-0.8.0-cp312-cp312-linux_x86_64.whl"],
            f"night 2: the unsharded scan reports the two uploads only ({new2})", whole2.stderr[-1500:])
    base = t("night1-merged3-state")  # night 1's merged state: where the shards start and the merge saves
    dirs = shard_runs(J, idx, tmp, "n2", 3, start=base)
    shutil.copytree(base, t("night2-merged-state"))
    r = merge(J, idx, t("night2-merged"), dirs)
    J.check(r.returncode == whole2.returncode, f"night 2: the merge exits as the scan does ({r.returncode})",
            r.stderr[-1500:])
    same_as(J, t("night2"), t("night2-merged"), "night 2, 3 shards merged into night 1's merged state")

    # Stable under re-listing: with every wheel new again (no state), each night-1 wheel is in the same shard.
    fresh = [set(wheels_of(d + "-report")) for d in shard_runs(J, idx, tmp, "relisted", 3)]
    J.check(all(a <= b for a, b in zip(night1_shares, fresh)),
            "a wheel's shard does not change when others are added (night 1's shares within night 2's)",
            f"{night1_shares}\n{fresh}")

    # --- a shard killed mid-run, then rerun -----------------------------------------------------------------
    dirs = shard_runs(J, idx, tmp, "killed", 3, start=base)
    victim = dirs[1]
    shutil.rmtree(victim)
    shutil.copytree(base, victim)
    idx.faults([{"path": "/files/", "fault": "slow", "rate": 2000, "count": -1}])
    env = dict(os.environ, WHEELCHECK_DB=J.A.db, WHEELCHECK_OFFLINE="1", NO_COLOR="1")
    proc = subprocess.Popen([J.A.wheelcheck, "scan", *idx.args(), "--shard", "2/3", "--state", victim],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(2.0)
    still_running = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    idx.clear_faults()
    J.check(still_running, "the shard was killed while it downloaded (it had not finished)")
    J.check(state_of(victim)["wheels"] == state_of(base)["wheels"] and "running" in state_of(victim)["run"],
            "the killed shard's state remembers what it started from (its run is unfinished, nothing half-written)",
            state_of(victim)["run"])
    shutil.copytree(base, t("killed-merged-state"))
    before = state_of(t("killed-merged-state"))
    r = merge(J, idx, t("killed-merged"), dirs)
    J.check(r.returncode == 2 and victim in r.stderr and "did not finish" in r.stderr,
            f"the merge refuses the killed shard, naming its folder (exit {r.returncode})", r.stderr[-1500:])
    J.check(not os.path.exists(t("killed-merged-report")) and not os.path.exists(t("killed-merged.env")),
            "a refused merge writes no report and no pins")
    J.check(state_of(t("killed-merged-state")) == before, "a refused merge leaves the state as it was")
    rerun = scan(J, idx, "--shard", "2/3", "--state", victim)
    J.check(rerun.returncode in (0, 1), f"the killed shard rerun ({rerun.returncode})", rerun.stderr[-800:])
    r = merge(J, idx, t("killed-merged"), dirs)
    J.check(r.returncode == whole2.returncode, f"with the shard rerun, the merge is whole ({r.returncode})",
            r.stderr[-1500:])
    same_as(J, t("night2"), t("killed-merged"), "night 2, the killed shard rerun and merged")

    # --- refusals ---------------------------------------------------------------------------------------
    empty = t("refused-state")
    r = merge(J, idx, t("missing"), [dirs[0], dirs[2]])
    J.check(r.returncode == 2 and "shard 2 of 3 is missing" in r.stderr,
            f"a missing shard is an error, never a smaller report (exit {r.returncode})", r.stderr[-800:])
    J.check(not os.path.exists(t("missing-report")), "nothing is written for a missing shard")
    other = J.wc("scan", *idx.args(), "--image", "debian12", "--merge", *dirs, "--state", empty,
                 "--report", t("other-report"))
    J.check(other.returncode == 2 and "other options" in other.stderr and "images" in other.stderr,
            f"a merge with other options than the shards' is refused ({other.returncode})", other.stderr[-800:])
    # A shard run again on its own finished folder: what it checked is no longer new to it, so its second record
    # starts from another state than the others'.
    busy = next(k for k, d in enumerate(dirs) if wheels_of(d + "-report"))
    again = scan(J, idx, "--shard", f"{busy + 1}/3", "--state", dirs[busy])
    r = merge(J, idx, t("twice"), dirs)
    J.check(again.returncode == 0 and r.returncode == 2 and "started from another state" in r.stderr,
            f"a shard run twice on its own folder is refused ({again.returncode}, {r.returncode})", r.stderr[-800:])
    # A record that is not what wheelcheck writes (edited by hand, or another tool's), its state naming it.
    forged = t("forged")
    shutil.copytree(dirs[0], forged)
    con = sqlite3.connect(forged + "/state.db")
    con.execute("UPDATE run SET value = '[0, 3]' WHERE key = 'shard'")
    con.commit()
    con.close()
    r = merge(J, idx, t("forged-merge"), [forged, dirs[1], dirs[2]])
    J.check(r.returncode == 2 and "forged is not a finished shard" in r.stderr and "damaged" in r.stderr,
            f"a forged record is refused with a message, never a crash ({r.returncode})", r.stderr[-800:])
    nostate = J.wc("scan", *idx.args(), "--shard", "1/3", "--report", t("nostate-report"))
    J.check(nostate.returncode == 2 and "--state" in nostate.stderr,
            f"a shard without its own --state is a usage error ({nostate.returncode})", nostate.stderr[-400:])

"""Where the sharded scan runs (issue 44): samples/nightly-scan.yml run as GitHub's runner runs a workflow, and
samples/k8s/scan-{shards,merge}.yaml validated against Kubernetes' Job schema and run per index here.

The workflow: its `scan` job once per value of its matrix, then its `merge` job, each in its own workspace; `run:`
steps as the runner runs them (`bash --noprofile --norc -eo pipefail FILE`, the workflow's env and the step's,
${{ matrix.* }} / ${{ github.run_id }} / ${{ runner.temp }} / ${{ steps.*.outputs.* }} substituted, GITHUB_OUTPUT
and GITHUB_STEP_SUMMARY files, `if:` with always(), ==, || and &&); actions/cache/restore and save (a key, else the
newest key with a restore-keys prefix), actions/upload-artifact and actions/download-artifact (a pattern: each
artifact into a folder of its name) done as those actions do with folders here. The install step is replaced by
the wheelcheck under test on PATH; SCAN_OPTIONS is edited to the loopback index, as a user edits it. Two nights:
the merged report and pins are the unsharded scan's, and the second night's shards start from the state the first
night's merge saved.

The Indexed Job: each document validated against the pinned batch/v1 Job schema (tests/data/k8s), completions =
parallelism = SHARDS; the shard container's command run for JOB_COMPLETION_INDEX 0..N-1 with $SCAN_ROOT a folder
here (one pod of them killed mid-run and retried, as the Job's backoff retries it), then the merge Job's command:
the report and pins are the unsharded scan's.
"""
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import shards_job  # noqa: E402

WORKFLOW = os.path.join(ROOT, "samples", "nightly-scan.yml")
K8S = [os.path.join(ROOT, "samples", "k8s", f) for f in ("scan-shards.yaml", "scan-merge.yaml")]
JOB_SCHEMA = os.path.join(ROOT, "tests", "data", "k8s", "job-batch-v1.json")
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def comparable(report_json, pins):
    report = json.load(open(report_json))
    report.pop("generated_at")
    report.pop("shard")
    return json.dumps(report, indent=1), open(pins).read().split("\n", 1)[1]


def first_difference(a, b):
    for x, y in zip(a, b):
        for i, (p, q) in enumerate(zip(x.splitlines(), y.splitlines())):
            if p != q:
                return f"line {i}: {p[:400]}\n   against: {q[:400]}"
    return "one is longer"


def unsharded(J, idx, tmp, name, start=None):
    state = os.path.join(tmp, name + "-state")
    if start:
        shutil.copytree(start, state)
    # A fresh profile cache, as each CI job starts with.
    J.wc("scan", *idx.args()[:-2], "-q", "--cache-dir", os.path.join(tmp, name + "-cache"), "--state", state,
         "--report", os.path.join(tmp, name), "--pins", os.path.join(tmp, name + ".env"))
    return comparable(os.path.join(tmp, name, "report.json"), os.path.join(tmp, name + ".env")), state


# --- a workflow runner ------------------------------------------------------------------------------------


class Runner:
    def __init__(self, J, tmp, env_edits):
        self.J, self.tmp = J, tmp
        self.doc = __import__("yaml").safe_load(open(WORKFLOW))
        self.env = {k: str(v) for k, v in self.doc.get("env", {}).items()}
        self.env.update(env_edits)
        self.cache = os.path.join(tmp, "gh-cache")
        self.artifacts = os.path.join(tmp, "gh-artifacts")
        self.bin = os.path.dirname(os.path.abspath(J.A.wheelcheck))

    def substitute(self, text, ctx):
        def value(m):
            expr = m.group(1)
            parts = expr.split(".")
            v = ctx
            for p in parts:
                v = v.get(p) if isinstance(v, dict) else None
            if v is None:
                raise ValueError(f"expression this runner does not know: {expr}")
            return str(v)
        return EXPR.sub(value, str(text))

    def condition(self, cond, ctx, failed):
        if cond is None:
            return not failed
        expr = cond[3:-2].strip() if cond.strip().startswith("${{") else cond
        has_status = re.search(r"\b(always|success|failure)\(\)", expr)
        def path(m):
            v = ctx
            for p in m.group(0).split("."):
                v = v.get(p) if isinstance(v, dict) else None
            return repr("" if v is None else str(v))
        py = re.sub(r"\b(steps|matrix|github|env)\.[\w.-]+", path, expr)
        py = py.replace("always()", "True").replace("success()", str(not failed)).replace("failure()", str(failed))
        py = py.replace("&&", " and ").replace("||", " or ").replace("!", " not ").replace(" not =", "!=")
        result = bool(eval(py, {"__builtins__": {}}))  # noqa: S307 (a test's own workflow file)
        return result if has_status else (result and not failed)

    def run_job(self, name, ctx):
        job = self.doc["jobs"][name]
        work = os.path.join(self.tmp, "gh", ctx["github"]["run_id"],
                            name + "-".join([""] + [str(v) for v in ctx.get("matrix", {}).values()]))
        os.makedirs(work)
        ctx = dict(ctx, steps={}, runner={"temp": os.path.join(work, "_temp")})
        os.makedirs(ctx["runner"]["temp"])
        failed = False
        log = []
        for i, step in enumerate(job["steps"]):
            if not self.condition(step.get("if"), ctx, failed):
                log.append(f"skip {step.get('name') or step.get('uses')}")
                continue
            if step.get("name", "").startswith("Install wheelcheck"):
                continue  # the wheelcheck under test is on PATH
            uses, w = step.get("uses"), {k: self.substitute(v, ctx) for k, v in (step.get("with") or {}).items()}
            if uses:
                self.action(uses, w, work)
                continue
            out_file, summary = os.path.join(work, f"_out{i}"), os.path.join(work, "_summary")
            open(out_file, "w").close()
            env = dict(os.environ, **self.env, **{k: self.substitute(v, ctx) for k, v in (step.get("env") or {}).items()})
            env.update(GITHUB_OUTPUT=out_file, GITHUB_STEP_SUMMARY=summary, WHEELCHECK_DB=self.J.A.db,
                       WHEELCHECK_CACHE_DIR=os.path.join(work, "_cache"),
                       WHEELCHECK_OFFLINE="1", PATH=self.bin + ":" + os.environ["PATH"], NO_COLOR="1")
            script = os.path.join(work, f"_step{i}.sh")
            open(script, "w").write(self.substitute(step["run"], ctx))
            r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], cwd=work, env=env,
                               capture_output=True, text=True)
            log.append(f"{step.get('name')}: exit {r.returncode}\n{r.stdout[-600:]}{r.stderr[-1200:]}")
            outputs = dict(line.split("=", 1) for line in open(out_file).read().splitlines() if "=" in line)
            if step.get("id"):
                ctx["steps"][step["id"]] = {"outputs": outputs, "outcome": "failure" if r.returncode else "success"}
            failed = failed or r.returncode != 0
        return work, failed, "\n".join(log)

    def action(self, uses, w, work):
        kind = uses.split("@")[0]
        if kind == "actions/cache/restore":
            keys = [w["key"]] + [k for k in w.get("restore-keys", "").splitlines() if k]
            found = None
            if os.path.isdir(self.cache):
                names = sorted(os.listdir(self.cache), key=lambda n: os.path.getmtime(os.path.join(self.cache, n)))
                for key in keys:
                    hits = [n for n in names if n == key] or [n for n in names if n.startswith(key) and key != w["key"]]
                    if hits:
                        found = hits[-1]
                        break
            if found:
                shutil.copytree(os.path.join(self.cache, found, w["path"]), os.path.join(work, w["path"]))
        elif kind == "actions/cache/save":
            dest = os.path.join(self.cache, w["key"])
            if not os.path.exists(dest):  # a cache key is written once
                shutil.copytree(os.path.join(work, w["path"]), os.path.join(dest, w["path"]))
        elif kind == "actions/upload-artifact":
            shutil.copytree(os.path.join(work, w["path"]), os.path.join(self.artifacts, w["name"]))
        elif kind == "actions/download-artifact":
            for name in sorted(os.listdir(self.artifacts)):
                if fnmatch.fnmatch(name, w.get("pattern", "*")):
                    shutil.copytree(os.path.join(self.artifacts, name), os.path.join(work, name))
        else:
            raise ValueError(f"an action this runner does not do: {uses}")

    def night(self, run_id):
        shutil.rmtree(self.artifacts, ignore_errors=True)
        os.makedirs(self.artifacts)
        github = {"run_id": str(run_id)}
        shard_values = self.doc["jobs"]["scan"]["strategy"]["matrix"]["shard"]
        logs = []
        for v in shard_values:
            _, failed, log = self.run_job("scan", {"matrix": {"shard": v}, "github": github})
            logs.append(log)
            self.J.check(not failed, f"workflow night {run_id}: scan job shard {v} succeeds", log)
        work, failed, log = self.run_job("merge", {"github": github})
        return work, failed, log


def job_workflow(J, idx, tmp):
    runner = Runner(J, tmp, {"SCAN_OPTIONS": " ".join(idx.args()[:-2])})  # less -q --no-cache: the sample's own
    shards = runner.doc["jobs"]["scan"]["strategy"]["matrix"]["shard"]
    J.check(len(shards) == int(runner.env["SHARDS"]) and shards == list(range(1, len(shards) + 1)),
            f"the workflow's matrix is shards 1..SHARDS ({shards}, SHARDS={runner.env['SHARDS']})")
    expected, state1 = unsharded(J, idx, tmp, "gh-whole1")
    work, failed, log = runner.night(1)
    J.check(failed and "Merge, summarise, pin: exit 1" in log,
            "night 1: the merge step fails the run with exit 1 (the sample's incompatible wheel)", log)
    got = comparable(os.path.join(work, "report", "report.json"), os.path.join(work, "report", "version-pins.env"))
    J.check(got == expected, "night 1: the merge job's report and pins are the unsharded scan's",
            first_difference(got, expected))
    J.check(os.path.isdir(os.path.join(runner.cache, "wheelcheck-scan-state-1", "state")),
            "night 1: the merged state is saved in the cache for tomorrow's shards", log)
    J.check("wheelcheck scan" in open(os.path.join(work, "_summary")).read(),
            "night 1: the step summary has the report's Markdown")
    # Night 2: a wheel uploaded; the shards restore night 1's merged state.
    samples = os.path.join(J.A.samples, "flagos")
    idx.upload("flagos-pypi-hosted", "flagtree", os.path.join(samples, J.TREE), version="0.9.0")
    expected2, _ = unsharded(J, idx, tmp, "gh-whole2", start=state1)
    time.sleep(1.1)  # the cache's entries are ordered by time
    work2, failed2, log2 = runner.night(2)
    got2 = comparable(os.path.join(work2, "report", "report.json"), os.path.join(work2, "report", "version-pins.env"))
    J.check(got2 == expected2, "night 2: the merge job's report and pins are the unsharded second scan's",
            f"{log2}\n{got2[0][:1200]}\n---\n{expected2[0][:1200]}")
    new = [w["filename"] for w in json.load(open(os.path.join(work2, "report", "report.json")))["wheels"]]
    J.check(new == ["flagtree-0.9.0-cp312-cp312-linux_x86_64.whl"], f"night 2 reports only the upload ({new})", log2)


# --- the Kubernetes Indexed Job ---------------------------------------------------------------------------


def container(doc):
    c = doc["spec"]["template"]["spec"]["containers"][0]
    return c["command"], {e["name"]: str(e["value"]) for e in c.get("env", [])}


def job_k8s(J, idx, tmp):
    import yaml
    docs = [d for f in K8S for d in yaml.safe_load_all(open(f))]
    if os.path.exists(JOB_SCHEMA):
        import jsonschema
        schema = json.load(open(JOB_SCHEMA))
        for d in docs:
            errors = list(jsonschema.Draft7Validator(schema).iter_errors(d))  # its "$schema" names no draft
            J.check(not errors, f"{d['metadata']['name']} validates against Kubernetes' batch/v1 Job schema",
                    "\n".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:5]))
        # The schema is strict: a misspelt field (what a kubectl apply would refuse) is an error here too.
        typo = json.loads(json.dumps(docs[0]))
        typo["spec"]["completionsMode"] = typo["spec"].pop("completionMode")
        J.check(any(True for _ in jsonschema.Draft7Validator(schema).iter_errors(typo)),
                "the schema refuses a misspelt field (completionsMode)")
    else:
        print(f"  skip  the Job schema is not at {JOB_SCHEMA}")
    shards_doc, merge_doc = docs
    spec = shards_doc["spec"]
    command, env = container(shards_doc)
    n = int(env["SHARDS"])
    J.check(spec["completionMode"] == "Indexed" and spec["completions"] == n and spec["parallelism"] == n,
            f"an Indexed Job of SHARDS = {n} completions, all in parallel")
    root = os.path.join(tmp, "k8s-volume")
    os.makedirs(root)
    options = " ".join(idx.args()[:-2])
    base_env = dict(os.environ, WHEELCHECK_DB=J.A.db, WHEELCHECK_OFFLINE="1", NO_COLOR="1",
                    WHEELCHECK_CACHE_DIR=os.path.join(tmp, "pod-cache"),
                    PATH=os.path.dirname(os.path.abspath(J.A.wheelcheck)) + ":" + os.environ["PATH"])

    def pod(cmd, env_of, index=None, kill_after=None):
        e = dict(base_env, **env_of)
        e.update(SCAN_ROOT=root, SCAN_OPTIONS=options)  # the volume here; the loopback index
        if index is not None:
            e["JOB_COMPLETION_INDEX"] = str(index)
        # A pod of its own process group, killed whole as the kubelet kills a pod's container.
        p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        if kill_after:
            time.sleep(kill_after)
            os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return p.returncode, out

    expected, _ = unsharded(J, idx, tmp, "k8s-whole")
    # Index 1's first pod is killed while it downloads; the Job's backoff retries it from a fresh copy.
    idx.faults([{"path": "/files/", "fault": "slow", "rate": 2000, "count": -1}])
    rc, out = pod(command, env, index=1, kill_after=2.0)
    idx.clear_faults()
    J.check(rc != 0, f"the killed pod of index 1 failed (exit {rc})", out[-600:])
    for i in range(n):
        rc, out = pod(command, env, index=i)
        J.check(rc == 0, f"the pod of index {i} completes (exit {rc})", out[-1500:])
    m_command, m_env = container(merge_doc)
    rc, out = pod(m_command, m_env)
    J.check(rc in (0, 1), f"the merge Job's pod runs (exit {rc})", out[-1500:])
    got = comparable(os.path.join(root, "report", "report.json"), os.path.join(root, "report", "version-pins.env"))
    J.check(got == expected, "the merge Job's report and pins are the unsharded scan's",
            f"{got[0][:1200]}\n---\n{expected[0][:1200]}")


def job_shards_ci(tmp, J):
    try:
        import yaml  # noqa: F401
    except ImportError:
        print("skip: python3-yaml is needed to read the workflow and the manifests (scripts/install-deps.sh)")
        sys.exit(77)
    idx = shards_job.Index(J, tmp)
    try:
        for name, job in (("workflow", job_workflow), ("k8s", job_k8s)):
            os.makedirs(os.path.join(tmp, name))
            job(J, idx, os.path.join(tmp, name))
    finally:
        idx.close()

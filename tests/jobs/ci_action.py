"""The Action job (issue 30): action.yml run as GitHub's runner runs a composite action, and the pre-commit
hook (.pre-commit-hooks.yaml, scripts/pre-commit.sh) run as pre-commit runs it.

The runner here does what actions/runner does for `using: composite`: each `run:` step gets its env:
mapping with ${{ inputs.* }}, ${{ steps.*.outputs.* }}, ${{ runner.temp }}, ${{ github.* }} substituted, is
written to a file and run with `bash --noprofile --norc -eo pipefail FILE` in the workspace, with fresh
GITHUB_OUTPUT, GITHUB_ENV and GITHUB_PATH files; what a step writes there becomes its outputs, the later
steps' environment and PATH; a step that fails stops the action; the action's outputs are then evaluated.

Cases: the FlagOS samples (flagtree + flag_gems_cpp --with flagcx on cuda13.0) through `gates` and `check`
(verdict degraded, the exit status wheelcheck's, gates JSON and $GITHUB_ENV, the summary's table, SARIF and
JUnit files that parse), export-gates/summary off, exit-zero, a missing wheel (fail closed), inputs that try
script injection, bad inputs; the install step with the `wheel` and `version` inputs into a fresh venv, offline
(dist/'s wheel when scripts/package.sh has made it, else a stand-in wheel that runs the binary under test); a
scan of loopback indexes through the Action; samples/wheelcheck-action.yml against action.yml. The hook: its file
pattern, lock files of the samples checked one by one against wheelcheck.toml's images, the worst exit code.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
ACTION = os.path.join(ROOT, "action.yml")
HOOKS = os.path.join(ROOT, ".pre-commit-hooks.yaml")

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
PATH_EXPR = re.compile(r"([A-Za-z_][\w-]*)((?:\.[A-Za-z_][\w-]*|\['[^']*'\])*)")


def evaluate(expr, ctx):
    """A property path (inputs.x, steps.run.outputs.exit-code, steps.run.outputs['x']); a missing one is ''."""
    m = PATH_EXPR.fullmatch(expr)
    if not m:
        raise ValueError(f"expression this runner does not evaluate: {expr}")
    parts = [m.group(1)] + [a or b for a, b in re.findall(r"\.([A-Za-z_][\w-]*)|\['([^']*)'\]", m.group(2))]
    value = ctx
    for p in parts:
        value = value.get(p) if isinstance(value, dict) else None
    return "" if value is None else str(value)


def substitute(text, ctx):
    return EXPR.sub(lambda m: evaluate(m.group(1), ctx), text)


def file_commands(path):
    """A GITHUB_OUTPUT / GITHUB_ENV file: NAME=value lines and NAME<<DELIMITER ... DELIMITER blocks."""
    out = {}
    if not os.path.exists(path):
        return out
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            while i < len(lines) and lines[i] != delim:
                body.append(lines[i])
                i += 1
            i += 1
            out[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


class Step:
    def __init__(self, sid, rc, stdout, stderr, outputs, env_text, paths):
        self.id, self.rc, self.stdout, self.stderr = sid, rc, stdout, stderr
        self.outputs, self.env_text, self.paths = outputs, env_text, paths


class Run:
    def __init__(self, steps, outputs, summary, env, path, workspace):
        self.steps, self.outputs, self.summary, self.env, self.path = steps, outputs, summary, env, path
        self.workspace = workspace
        self.rc = steps[-1].rc if steps else None

    def step(self, sid):
        return next((s for s in self.steps if s.id == sid), None)

    def log(self):
        return "\n".join(f"--- step {s.id} (exit {s.rc}) outputs {s.outputs}\n{s.stdout[-2500:]}\n{s.stderr[-2500:]}"
                         for s in self.steps)


def run_action(J, folder, inputs, env=None, setup=None):
    """Runs action.yml's steps in a fresh workspace under folder, as the runner does. setup(workspace) first."""
    action = __import__("yaml").safe_load(open(ACTION))
    ws, temp = os.path.join(folder, "workspace"), os.path.join(folder, "runner-temp")
    os.makedirs(ws)
    os.makedirs(temp)
    if setup:
        setup(ws)
    summary = os.path.join(folder, "step-summary.md")
    open(summary, "w").close()
    unknown = set(inputs) - set(action["inputs"])
    if unknown:
        raise ValueError(f"inputs the action does not declare: {unknown}")
    ins = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    ins.update({k: str(v) for k, v in inputs.items()})
    ctx = {"inputs": ins, "steps": {}, "runner": {"temp": temp, "os": "Linux", "arch": "X64"},
           "github": {"action_path": ROOT, "workspace": ws}}
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and k not in ("RUNNER_TEMP", "CI")}
    base.update(WHEELCHECK_DB=os.path.abspath(J.A.db), NO_COLOR="1", CI="true", GITHUB_ACTIONS="true", RUNNER_TEMP=temp,
                GITHUB_WORKSPACE=ws, GITHUB_ACTION_PATH=ROOT, GITHUB_STEP_SUMMARY=summary)
    for k, v in (env or {}).items():  # None: not set at all
        if v is None:
            base.pop(k, None)
        else:
            base[k] = v
    added_env, added_path, steps = {}, [], []
    for n, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", f"step{n}")
        files = {k: os.path.join(folder, f"{sid}.{k}") for k in ("output", "env", "path")}
        for f in files.values():
            open(f, "w").close()
        e = dict(base)
        e.update(added_env)
        e["PATH"] = ":".join(list(reversed(added_path)) + [base["PATH"]])
        for k, v in (step.get("env") or {}).items():
            e[k] = substitute(str(v), ctx)
        e.update(GITHUB_OUTPUT=files["output"], GITHUB_ENV=files["env"], GITHUB_PATH=files["path"])
        script = os.path.join(temp, f"{sid}.sh")
        open(script, "w").write(substitute(step["run"], ctx))
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], cwd=ws, env=e,
                           capture_output=True, text=True, timeout=600)
        outputs = file_commands(files["output"])
        ctx["steps"][sid] = {"outputs": outputs, "outcome": "success" if r.returncode == 0 else "failure"}
        added_env.update(file_commands(files["env"]))
        paths = [p for p in open(files["path"]).read().splitlines() if p]
        added_path += paths
        steps.append(Step(sid, r.returncode, r.stdout, r.stderr, outputs, open(files["env"]).read(), paths))
        if r.returncode != 0:
            break
    outs = {k: substitute(str(v.get("value", "")), ctx) for k, v in action["outputs"].items()}
    return Run(steps, outs, open(summary).read(), added_env, added_path, ws)


def copy_samples(J, ws):
    d = os.path.join(ws, "dist")
    os.makedirs(d, exist_ok=True)
    for w in (J.TREE, J.GEMS, J.CX):
        shutil.copy(J.sample(w), d)


GEMS_NAME = re.compile(r"flag[_-]gems")
FLAGOS_ARGS = "dist/flagtree-*.whl dist/flag_gems_cpp_cuda-*.whl\n  --with dist/flagcx-*+cu130-*.whl --image cuda13.0"


def gate_lines(text):
    return dict(l.split("=", 1) for l in text.splitlines() if re.match(r"^[A-Z][A-Z0-9_]*=", l))


def job_action(tmp, J):
    try:
        import yaml  # noqa: F401
    except ImportError:
        print("skip: PyYAML is needed to read action.yml")
        sys.exit(77)
    check = J.check
    for w in (J.TREE, J.GEMS, J.CX):
        J.sample(w)  # skips (77) when the samples are not built
    binary = os.path.abspath(J.A.wheelcheck)
    static_checks(J)
    n = [0]

    def case(inputs, env=None, setup=copy_samples):
        n[0] += 1
        folder = os.path.join(tmp, f"action-{n[0]}")
        os.makedirs(folder)
        return run_action(J, folder, dict({"wheelcheck": binary}, **inputs), env,
                          setup and (lambda ws: setup(J, ws)))

    # 1. gates, every output asked for: exit 0 (gates exit 0 whenever they could evaluate), degraded.
    r = case({"command": "gates", "args": FLAGOS_ARGS, "sarif": "wheelcheck.sarif", "junit": "reports/junit.xml"},
             setup=lambda J, ws: (copy_samples(J, ws), os.makedirs(os.path.join(ws, "reports"))))
    run = r.step("run")
    check(r.rc == 0 and run is not None, f"gates through the Action: the step succeeds (exit {r.rc})", r.log())
    check(r.outputs.get("verdict") == "degraded", f"gates: the verdict output is degraded ({r.outputs.get('verdict')})",
          r.log())
    check(r.outputs.get("exit-code") == "0", f"gates: the exit-code output is 0 ({r.outputs.get('exit-code')})")
    try:
        gates = json.loads(r.outputs.get("gates") or "null")
    except ValueError:
        gates = None
    check(isinstance(gates, dict) and gates.get("FLAGOS_USE_FLAGGEMS_CPP") == "0" and gates.get("USE_TLE_DIST") == "0",
          "gates: the gates output is a JSON object with FLAGOS_USE_FLAGGEMS_CPP=0 and USE_TLE_DIST=0",
          str(r.outputs.get("gates")))
    written = gate_lines(run.env_text if run else "")
    check(written.get("FLAGOS_USE_FLAGGEMS_CPP") == "0" and written.get("USE_TLE_DIST") == "0"
          and written.get("WHEELCHECK_VERDICT") == "degraded",
          "gates: $GITHUB_ENV gets the gate lines and WHEELCHECK_VERDICT=degraded (export-gates true)",
          run.env_text if run else "")
    check(r.env.get("FLAGOS_USE_FLAGGEMS_CPP") == "0", "gates: a later step of the job sees FLAGOS_USE_FLAGGEMS_CPP=0")
    table = [l for l in r.summary.splitlines() if l.startswith("|") and l.rstrip().endswith("|")]
    check(len(table) >= 3 and any(re.match(r"^\|\s*:?-{3,}", l) for l in table)
          and GEMS_NAME.search(r.summary) and "flagtree" in r.summary,
          "gates: the job summary has a Markdown table naming both wheels", r.summary[:2000])
    check(r.outputs.get("sarif") == "wheelcheck.sarif" and r.outputs.get("junit") == "reports/junit.xml",
          f"gates: the sarif and junit outputs are the paths asked for ({r.outputs.get('sarif')}, {r.outputs.get('junit')})")
    check_sarif(J, os.path.join(r.workspace, "wheelcheck.sarif"), "gates")
    check_junit(J, os.path.join(r.workspace, "reports", "junit.xml"), "gates")
    check(run is not None and "::" in run.stdout, "gates: annotations are printed for the log", run.stdout[-1500:] if run else "")

    # 2. check, export-gates and summary off, no files: exit 3 (degraded), nothing in $GITHUB_ENV.
    r = case({"args": FLAGOS_ARGS, "export-gates": "false", "summary": "false"})
    run = r.step("run")
    check(r.rc == 3, f"check through the Action: the step's exit status is wheelcheck's, 3 for degraded (exit {r.rc})",
          r.log())
    check(r.outputs.get("verdict") == "degraded" and r.outputs.get("exit-code") == "3",
          f"check: outputs verdict=degraded, exit-code=3 ({r.outputs.get('verdict')}, {r.outputs.get('exit-code')})")
    check(run is not None and not gate_lines(run.env_text) and "FLAGOS_USE_FLAGGEMS_CPP" not in r.env,
          "check, export-gates false: $GITHUB_ENV gets no gate line", run.env_text if run else "")
    gates = json.loads(r.outputs.get("gates") or "{}")
    check(gates.get("FLAGOS_USE_FLAGGEMS_CPP") == "0", "check, export-gates false: the gates output still has them",
          str(r.outputs.get("gates")))
    check(r.summary == "", "check, summary false: nothing in the job summary", r.summary[:500])
    check(r.outputs.get("sarif") == "" and r.outputs.get("junit") == ""
          and not glob.glob(os.path.join(r.workspace, "**", "*.sarif"), recursive=True),
          "check without sarif/junit: no file, empty outputs")

    # 3. check with exit-zero: the step succeeds, the verdict stays degraded.
    r = case({"args": FLAGOS_ARGS, "exit-zero": "true", "junit": "junit.xml"})
    run = r.step("run")
    check(r.rc == 0, f"check, exit-zero true: the step succeeds (exit {r.rc})", r.log())
    check(r.outputs.get("verdict") == "degraded" and r.outputs.get("exit-code") == "0",
          f"check, exit-zero: the verdict output stays degraded, exit-code is the step's 0 "
          f"({r.outputs.get('verdict')}, exit-code {r.outputs.get('exit-code')})")
    check(run is not None and gate_lines(run.env_text).get("FLAGOS_USE_FLAGGEMS_CPP") == "0",
          "check, exit-zero: the gates still go to $GITHUB_ENV")
    check_junit(J, os.path.join(r.workspace, "junit.xml"), "check --exit-zero")

    # 4. a wheel that is not there: exit 2 and verdict error, with check and with exit-zero; gates fail closed.
    missing = "dist/flagtree-9*.whl --image cuda13.0"
    for inputs in ({"args": missing}, {"args": missing, "exit-zero": "true"}):
        r = case(inputs)
        check(r.rc == 2 and r.outputs.get("verdict") == "error",
              f"check {'with exit-zero ' if 'exit-zero' in inputs else ''}of a missing wheel: exit 2, verdict error "
              f"(exit {r.rc}, {r.outputs.get('verdict')})", r.log())
    r = case({"command": "gates", "args": missing})
    run = r.step("run")
    written = gate_lines(run.env_text if run else "")
    check(r.rc == 2 and written.get("WHEELCHECK_VERDICT") == "error" and written.get("FLAGOS_USE_FLAGGEMS_CPP") == "0"
          and written.get("USE_TLE_DIST") == "0",
          f"gates of a missing wheel: the step fails (exit {r.rc}) and $GITHUB_ENV gets every gate off", r.log())

    # 5. inputs that try to run commands: nothing runs; a bad command or boolean is exit 2 before wheelcheck.
    inj = "$(touch pwned1) `touch pwned2` ;touch pwned3; dist/flagcx-*+cu130-*.whl --image cuda13.0 && touch pwned4"
    r = case({"args": inj, "sarif": 'x"; touch pwned5; "', "junit": "$(touch pwned6)"})
    pwned = glob.glob(os.path.join(r.workspace, "pwned*")) + glob.glob(os.path.join(os.path.dirname(r.workspace), "pwned*"))
    check(not pwned and r.rc == 2, f"args and file inputs with $(...), backquotes and ; run nothing (exit {r.rc}, {pwned})",
          r.log())
    for inputs, what in (({"command": "check; touch pwned7", "args": "dist/flagcx-*+cu130-*.whl -i cuda13.0"},
                          "a command input that is not check, gates or scan"),
                         ({"summary": "maybe", "args": "dist/flagcx-*+cu130-*.whl -i cuda13.0"}, "summary: maybe"),
                         ({"wheelcheck": os.path.join(tmp, "no-such-wheelcheck")}, "a wheelcheck input that is not there")):
        r = case(inputs)
        check(r.rc == 2 and not glob.glob(os.path.join(r.workspace, "pwned*")), f"{what}: the action fails, exit 2 "
              f"(exit {r.rc})", r.log())
    check(r.step("run") is None, "an install step that fails stops the action")

    # 6. a compatible wheel (the driver the CUDA 13 runtime needs assumed): exit 0, verdict compatible.
    r = case({"args": "dist/flagcx-*+cu130-*.whl --image cuda13.0 --assume driver=580.95.05", "sarif": "s.sarif"})
    check(r.rc == 0 and r.outputs.get("verdict") == "compatible" and r.outputs.get("exit-code") == "0",
          f"check of the CUDA 13 FlagCX build on cuda13.0: exit 0, compatible ({r.rc}, {r.outputs.get('verdict')})",
          r.log())

    # 7. scan through the Action: the summary gets report.md, the verdict and exit code are outputs.
    idx = J.Index(tmp)
    try:
        args = " ".join(idx.urls() + J.PROJECTS) + f" --state {tmp}/scan-state --report report -q --no-cache"
        r = case({"command": "scan", "args": args, "sarif": "scan.sarif"}, setup=None)
        check(r.rc in (0, 1) and r.outputs.get("exit-code") == str(r.rc)
              and r.outputs.get("verdict") in ("compatible", "degraded", "incompatible", "unknown"),
              f"scan through the Action: exit {r.rc}, outputs {r.outputs.get('verdict')}/{r.outputs.get('exit-code')}",
              r.log())
        md = os.path.join(r.workspace, "report", "report.md")
        first = open(md).read().strip().splitlines()[0] if os.path.exists(md) else "(no report.md)"
        check(first in r.summary, "scan: the job summary has report.md", r.summary[:800])
        check_sarif(J, os.path.join(r.workspace, "scan.sarif"), "scan", per_image=False)
    finally:
        idx.close()

    install_cases(J, tmp, case)
    hook(J, tmp)


def static_checks(J):
    check = J.check
    import yaml
    action = yaml.safe_load(open(ACTION))
    check(action.get("runs", {}).get("using") == "composite", "action.yml is a composite action")
    want = {"command": "check", "args": "", "version": "latest", "wheel": "", "wheelcheck": "", "sarif": "",
            "junit": "", "summary": "true", "export-gates": "true", "exit-zero": "false"}
    got = {k: str(v.get("default", "")) for k, v in (action.get("inputs") or {}).items()}
    check(got == want, "action.yml's inputs and their defaults", json.dumps(got, indent=1))
    check(all((v or {}).get("description") for v in (action.get("inputs") or {}).values()), "every input is described")
    outs = action.get("outputs") or {}
    check(set(outs) == {"verdict", "exit-code", "gates", "sarif", "junit"}
          and all("steps." in str(v.get("value")) for v in outs.values()), "action.yml's outputs come from its steps",
          json.dumps(outs, indent=1))
    steps = action["runs"]["steps"]
    check(all(s.get("shell") == "bash" and "run" in s for s in steps), "every step is a bash run: step")
    check(not any("${{" in s["run"] for s in steps),
          "no ${{ }} expression is spliced into a script (inputs reach the scripts through env:)",
          "\n".join(s["run"] for s in steps if "${{" in s["run"]))
    used = " ".join(str(v) for s in steps for v in (s.get("env") or {}).values())
    check(all(f"inputs.{k}" in used for k in want), "every input is passed to a step's env:", used)
    # samples/wheelcheck-action.yml uses only what action.yml declares.
    flow = yaml.safe_load(open(os.path.join(ROOT, "samples", "wheelcheck-action.yml")))
    uses = [st for job in flow["jobs"].values() for st in job["steps"] if "wheelcheck@" in str(st.get("uses", ""))]
    text = open(os.path.join(ROOT, "samples", "wheelcheck-action.yml")).read()
    named = set(re.findall(r"steps\.wheelcheck\.outputs\.([\w-]+)", text))
    check(uses and all(set(st.get("with") or {}) <= set(want) for st in uses) and named and named <= set(outs),
          f"samples/wheelcheck-action.yml passes declared inputs and reads declared outputs ({sorted(named)})",
          json.dumps([st.get("with") for st in uses]))
    for s in steps:
        r = subprocess.run(["bash", "-n"], input=s["run"], capture_output=True, text=True)
        check(r.returncode == 0, f"step {s.get('id')}: bash -n", r.stderr)
        if shutil.which("shellcheck"):
            r = subprocess.run(["shellcheck", "-s", "bash", "-"], input=s["run"], capture_output=True, text=True)
            check(r.returncode == 0, f"step {s.get('id')}: shellcheck is clean", r.stdout[-2000:])


def check_sarif(J, path, what, per_image=True):
    check = J.check
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        check(False, f"{what}: the SARIF file parses ({e})")
        return
    runs = doc.get("runs") or []
    check(doc.get("version") == "2.1.0" and runs and all(r.get("tool", {}).get("driver", {}).get("name") == "wheelcheck"
                                                         for r in runs),
          f"{what}: SARIF 2.1.0 from the wheelcheck driver ({len(runs)} runs)", json.dumps(doc)[:1500])
    if not per_image:
        return
    ids = [r.get("automationDetails", {}).get("id", "") for r in runs]
    check(any(i.startswith("wheelcheck/cuda13.0/") for i in ids), f"{what}: a run per image, wheelcheck/cuda13.0/ ({ids})")
    rules = {res.get("ruleId") for r in runs for res in r.get("results", [])}
    check({"cxx-abi-mismatch", "missing-library"} <= rules,
          f"{what}: results for FlagGems' c10 ABI (cxx-abi-mismatch) and FlagTree's libcudart.so.12 (missing-library)"
          f" ({sorted(r for r in rules if r)})", json.dumps(doc)[:2000])


def check_junit(J, path, what):
    check = J.check
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        check(False, f"{what}: the JUnit XML parses ({e})")
        return
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    names = [s.get("name", "") for s in suites]
    cases = [c for s in suites for c in s.iter("testcase")]
    text = " ".join(f"{c.get('classname', '')} {c.get('name', '')}" for c in cases)
    check(any("cuda13.0" in n for n in names) and "flagtree" in text and GEMS_NAME.search(text) and len(cases) >= 2,
          f"{what}: JUnit has a testsuite for cuda13.0 with testcases for both wheels ({names}, {len(cases)} cases)",
          ET.tostring(root, encoding="unicode")[:1500])
    off = [c for c in cases if c.find("skipped") is not None and "route" in c.get("name", "")
           and "FLAGOS_USE_FLAGGEMS_CPP=0" in (c.find("skipped").get("message") or "")]
    check(off and not any(c.find("failure") is not None for c in cases),
          f"{what}: FlagGems' optional C++ route is a skipped testcase naming its gate; nothing fails (degraded)",
          ET.tostring(root, encoding="unicode")[:3000])


def standin_wheel(folder, binary, version):
    """A wheel laid out as scripts/package.sh lays out wheelcheck's (the executable in .data/scripts/), whose
    executable runs the binary under test: the install step is tested where dist/ has no wheel."""
    import base64
    import zipfile
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, f"wheelcheck-{version}-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
    files = {f"wheelcheck-{version}.data/scripts/wheelcheck": f'#!/bin/sh\nexec "{binary}" "$@"\n'.encode(),
             f"wheelcheck-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: wheelcheck\nVersion: {version}\n".encode(),
             f"wheelcheck-{version}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: wheelcheck-tests\n"
                                                      b"Root-Is-Purelib: false\nTag: py3-none-manylinux_2_17_x86_64\n"}
    record = []
    with zipfile.ZipFile(out, "w") as z:
        for name, data in files.items():
            zi = zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0))
            zi.external_attr = 0o100755 << 16
            z.writestr(zi, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append(f"wheelcheck-{version}.dist-info/RECORD,,")
        z.writestr(f"wheelcheck-{version}.dist-info/RECORD", "\n".join(record) + "\n")
    return out


def install_cases(J, tmp, case):
    """The install step from a local wheelcheck wheel, offline into a fresh venv: dist/'s (scripts/package.sh)
    when there is one, which must then run with its own db; else a stand-in wheel that runs the binary under test."""
    check = J.check
    wheels = sorted(glob.glob(os.path.join(ROOT, "dist", "wheelcheck-*manylinux*x86_64.whl")))
    if wheels:
        dist, real = os.path.join(ROOT, "dist"), True
        version = os.path.basename(wheels[-1]).split("-")[1]
    else:
        dist, real, version = os.path.join(tmp, "standin-dist"), False, "0.0.0+standin"
        standin_wheel(dist, os.path.abspath(J.A.wheelcheck), version)
        print(f"  note  no wheelcheck-*manylinux*x86_64.whl in {ROOT}/dist (scripts/package.sh): the install step "
              "installs a stand-in wheel that runs the binary under test")
    what = "dist/'s wheel" if real else "a stand-in wheel"

    def venv(name):
        v = os.path.join(tmp, name)
        r = subprocess.run([sys.executable, "-m", "venv", v], capture_output=True, text=True)
        if r.returncode != 0:
            check(False, f"python3 -m venv ({r.stderr[-300:]})")
            return None
        # the venv's python3 first on PATH, offline; a packaged wheelcheck reads the db pip installed with it.
        env = {"PATH": os.path.join(v, "bin") + ":" + os.environ["PATH"], "VIRTUAL_ENV": v, "PIP_NO_INDEX": "1",
               "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_FIND_LINKS": None}
        if real:
            env["WHEELCHECK_DB"] = None
        return env, v

    made = venv("venv-wheel")
    if made:
        env, v = made
        r = case({"wheelcheck": "", "wheel": os.path.join(dist, "wheelcheck-*-manylinux*_x86_64.whl"),
                  "command": "gates", "args": FLAGOS_ARGS}, env=env)
        inst = r.step("install")
        bin_ = inst.outputs.get("bin", "") if inst else ""
        check(inst is not None and inst.rc == 0 and bin_ == os.path.join(v, "bin", "wheelcheck"),
              f"the wheel input ({what}): pip installs it into the venv's python3 ({bin_})", r.log())
        on_path = [os.path.join(p, "wheelcheck") for p in (inst.paths if inst else [])]
        ok = [p for p in on_path if subprocess.run([p, "--version"], capture_output=True).returncode == 0]
        check(len(on_path) == 1 and ok and os.listdir(os.path.dirname(on_path[0])) == ["wheelcheck"]
              and os.path.dirname(on_path[0]) != os.path.join(v, "bin"),
              f"the wheel input: $GITHUB_PATH gets a folder with only wheelcheck, which runs ({on_path})")
        check(r.rc == 0 and r.outputs.get("verdict") == "degraded",
              f"the installed wheelcheck{' (its own db)' if real else ''} gives the same verdict "
              f"({r.outputs.get('verdict')})", r.log())
    made = venv("venv-version")
    if made:
        env, v = made
        env["PIP_FIND_LINKS"] = dist
        r = case({"wheelcheck": "", "version": version,
                  "args": "dist/flagcx-*+cu130-*.whl -i cuda13.0 --assume driver=580.95.05"}, env=env)
        inst = r.step("install")
        check(inst is not None and inst.rc == 0 and f"wheelcheck-{version}" in inst.stdout
              and os.path.exists(os.path.join(v, "bin", "wheelcheck")) and r.rc == 0
              and r.outputs.get("verdict") == "compatible",
              f"the version input: pip installs wheelcheck=={version} (here from --find-links)", r.log())
        r = case({"wheelcheck": "", "version": "9.9.9", "args": "x.whl -i cuda13.0"}, env=env)
        check(r.rc == 2 and r.step("run") is None, f"a version pip cannot find: the install fails, exit 2 (exit {r.rc})",
              r.log())
    r = case({"wheelcheck": "", "version": "1.0; touch pwned", "args": "x.whl -i cuda13.0"})
    check(r.rc == 2 and not glob.glob(os.path.join(r.workspace, "pwned*")),
          f"a version input that is no pip specifier: exit 2 before pip (exit {r.rc})", r.log())
    r = case({"wheelcheck": "", "wheel": os.path.join(tmp, "nothing-*.whl")})
    check(r.rc == 2, f"a wheel input that matches no file: exit 2 (exit {r.rc})", r.log())


# --- the pre-commit hook -----------------------------------------------------------------------------------

RANK = {0: 0, 3: 1, 4: 2, 1: 3}


def worst(codes):
    best = 0
    for c in codes:
        if RANK.get(c, 4) > RANK.get(best, 4):
            best = c
    return best


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def hook(J, tmp):
    import yaml
    check = J.check
    hooks = yaml.safe_load(open(HOOKS))
    h = next((x for x in hooks if x.get("id") == "wheelcheck"), None) if isinstance(hooks, list) else None
    check(h is not None and h.get("language") == "script" and h.get("entry") == "scripts/pre-commit.sh",
          "the hook wheelcheck runs scripts/pre-commit.sh (language: script)", json.dumps(hooks))
    if h is None:
        return
    entry = os.path.join(ROOT, h["entry"])
    check(os.access(entry, os.X_OK), f"{h['entry']} is executable")
    pattern = re.compile(h.get("files", ""))
    match = ["pylock.toml", "pylock.cuda.toml", "env/pylock.dev.toml", "requirements.txt", "requirements-cuda.txt",
             "ci/requirements_dev.txt"]
    nomatch = ["setup.py", "report.json", "README.md", "pyproject.toml", "constraints.txt", "docs/pylock.md",
               "pylock.toml.orig"]
    check(all(pattern.search(f) for f in match) and not any(pattern.search(f) for f in nomatch),
          f"the hook's files pattern takes lock and pins files only ({h.get('files')})")

    # The real thing: three lock files of the samples, each an environment of its own, in a repository whose
    # wheelcheck.toml names the image.
    repo = os.path.join(tmp, "hook-repo")
    wheels = os.path.join(repo, "wheels")
    os.makedirs(wheels)
    for w in (J.TREE, J.GEMS, J.CX):
        shutil.copy(J.sample(w), wheels)
    hello = os.path.join(J.A.samples, "hello_native-1.0-cp311-cp311-linux_x86_64.whl")
    open(os.path.join(repo, "wheelcheck.toml"), "w").write('images = ["cuda13.0"]\n')
    open(os.path.join(repo, "requirements-gems.txt"), "w").write(f"./wheels/{J.TREE}\n./wheels/{J.GEMS}\n")
    cx = os.path.join(wheels, J.CX)
    open(os.path.join(repo, "pylock.cx.toml"), "w").write(
        'lock-version = "1.0"\ncreated-by = "wheelcheck-tests"\n\n[[packages]]\nname = "flagcx"\n'
        f'version = "0.9.0+cu130"\nwheels = [{{ path = "wheels/{J.CX}", hashes = {{ sha256 = "{sha256(cx)}" }} }}]\n')
    files = ["requirements-gems.txt", "pylock.cx.toml"]
    if os.path.exists(hello):
        shutil.copy(hello, wheels)
        open(os.path.join(repo, "requirements-hello.txt"), "w").write(f"./wheels/{os.path.basename(hello)}\n")
        files.append("requirements-hello.txt")
    alone = {}
    e = dict(os.environ, WHEELCHECK=os.path.abspath(J.A.wheelcheck), WHEELCHECK_DB=os.path.abspath(J.A.db), NO_COLOR="1")
    e.pop("GITHUB_ENV", None)
    e.pop("GITHUB_OUTPUT", None)
    for f in files:
        r = subprocess.run([e["WHEELCHECK"], "check", f], cwd=repo, env=e, capture_output=True, text=True)
        alone[f] = r.returncode
        check(r.returncode in (0, 1, 3, 4) and "cuda13.0" in r.stdout,
              f"{f}: wheelcheck check takes the image from wheelcheck.toml (exit {r.returncode})",
              r.stdout[-1500:] + r.stderr[-1500:])
    check(len({RANK.get(c, 4) for c in alone.values()}) >= 2, f"the lock files give different answers ({alone})")
    for order in (files, list(reversed(files))):
        r = subprocess.run([entry, *order], cwd=repo, env=e, capture_output=True, text=True)
        said = dict(re.findall(r"^wheelcheck: (.*): exit (\d+)$", r.stderr, re.M))
        check(r.returncode == worst(alone.values()),
              f"the hook on {order}: exit {r.returncode}, the worst of {alone}", r.stdout[-2000:] + r.stderr[-2000:])
        check({k: int(v) for k, v in said.items()} == alone and r.stdout.count("on cuda13.0") >= len(files),
              f"the hook checks each file on its own, against cuda13.0 ({said})", r.stdout[-2000:])

    # The ordering and the args, with a stand-in wheelcheck that exits with the code a file names.
    stub = os.path.join(tmp, "stub-wheelcheck")
    log = os.path.join(tmp, "stub.log")
    open(stub, "w").write('#!/bin/sh\necho "$*" >> "$STUB_LOG"\nexit "$(cat "$2")"\n')  # check FILE ...
    os.chmod(stub, 0o755)
    code_files = {}
    for c in (0, 1, 2, 3, 4, 70):
        code_files[c] = os.path.join(tmp, f"requirements-{c}.txt")
        open(code_files[c], "w").write(str(c))
    e = dict(os.environ, WHEELCHECK=stub, STUB_LOG=log)
    for codes, want in (([0, 3], 3), ([3, 0], 3), ([3, 4], 4), ([4, 3], 4), ([4, 1], 1), ([1, 4, 3], 1), ([1, 2], 2),
                        ([2, 1], 2), ([0, 70, 1], 70), ([0, 0], 0), ([], 0)):
        r = subprocess.run([entry, *[code_files[c] for c in codes]], env=e, capture_output=True, text=True)
        check(r.returncode == want, f"the hook's exit for files exiting {codes}: {want} (got {r.returncode})", r.stderr)
    open(log, "w").close()
    r = subprocess.run([entry, "-i", "cuda13.0", "--with", "extra.whl", "--exit-zero", "--rules=flagos",
                        code_files[0], code_files[3]], env=e, capture_output=True, text=True)
    calls = open(log).read().splitlines()
    want = [f"check {code_files[c]} -i cuda13.0 --with extra.whl --exit-zero --rules=flagos" for c in (0, 3)]
    check(calls == want and r.returncode == 3, "the hook's args follow each file, an option's value stays with it",
          "\n".join(calls))
    open(log, "w").close()
    r = subprocess.run([entry, "--image", "cuda13.0", "--", "-odd-name.txt"], env=e, capture_output=True, text=True)
    calls = open(log).read().splitlines()
    check(calls == ["check -odd-name.txt --image cuda13.0"], "after --, every word is a file", "\n".join(calls))

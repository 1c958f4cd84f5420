"""The ci job (issue 30): wheelcheck where CI already looks, run as a CI job runs it.

  - SARIF 2.1.0 of the FlagOS samples against every db image (--image all), validated against
    ../shared/reference/sarif-schema-2.1.0.json and read back: a run per image with its automationDetails.id,
    one result per finding of the JSON (not-targeted cells make none), each with a rule of the driver and a
    location; fingerprints stable across two runs; a pylock.toml's results located on its package's line;
  - JUnit XML parsed with xml.etree: per-suite counts equal to the testcases, wheel testcases agreeing with
    the matrix text (failures = incompatible, skipped = not for it, errors = unknown), routes as testcases;
  - one exit code in every format (text, json, sarif, junit, sh, github), --exit-zero, gates' 0, and a run
    that cannot be made still printing a SARIF document;
  - the settings file: wheelcheck.toml and pyproject.toml's [tool.wheelcheck] found from a subfolder, flags
    over the file, an accepted condition making the verdict, its expiry, `wheelcheck config`, and errors that
    name FILE:LINE;
  - the scan's SARIF and JUnit over the loopback FlagOS indexes.
"""
import hashlib
import json
import os
import subprocess
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "..", "shared", "reference", "sarif-schema-2.1.0.json")


def validate_sarif(J, doc, what):
    try:
        import jsonschema
    except ImportError:
        J.check(False, f"{what}: python3-jsonschema is installed (scripts/install-deps.sh)")
        return
    schema_path = os.environ.get("WHEELCHECK_SARIF_SCHEMA", SCHEMA)
    if not os.path.exists(schema_path):
        print(f"  skip  {what}: no SARIF schema at {schema_path} (../shared/reference)")
        return
    schema = json.load(open(schema_path))
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    J.check(not errors, f"{what} validates against SARIF 2.1.0",
            "\n".join(f"{list(e.path)}: {e.message[:300]}" for e in errors[:5]))


def sarif_readback(J, doc, what):
    """Every result names a rule of its run's driver (by id and index) and has a location."""
    bad = []
    for run in doc["runs"]:
        rules = run["tool"]["driver"]["rules"]
        ids = [r["id"] for r in rules]
        for res in run["results"]:
            if res["ruleId"] not in ids or ids.index(res["ruleId"]) != res.get("ruleIndex"):
                bad.append(f"rule {res['ruleId']} / index {res.get('ruleIndex')}")
            locs = res.get("locations") or []
            if not locs or not locs[0]["physicalLocation"]["artifactLocation"].get("uri"):
                bad.append(f"no location: {res['message']['text'][:120]}")
            if res["level"] not in ("error", "warning", "note"):
                bad.append(f"level {res['level']}")
            if not res.get("partialFingerprints"):
                bad.append("no partialFingerprints")
    J.check(not bad, f"{what}: every result has a rule of the driver, a level and a location", "\n".join(bad[:10]))


def job_ci(tmp, J):
    wheels = [J.sample(w) for w in (J.TREE, J.GEMS, J.CX, J.CX_ASCEND)]
    names = [i["name"] for i in json.loads(J.wc("images", "--json").stdout)
             if i["kind"] == "image" and i["group"] != "target"]

    # --- SARIF on every db image ----------------------------------------------------------------------
    common = [*wheels, "--image", "all", "-q", "--no-cache"]
    js = J.wc("check", *common, "--json")
    cells = json.loads(js.stdout)
    sa = J.wc("check", *common, "--format", "sarif")
    J.check(sa.returncode == js.returncode, f"sarif exits as json does ({sa.returncode} / {js.returncode})", sa.stderr)
    doc = json.loads(sa.stdout)
    validate_sarif(J, doc, "check --image all --format sarif")
    sarif_readback(J, doc, "check --image all --format sarif")
    runs = {r["automationDetails"]["id"]: r for r in doc["runs"]}
    J.check(sorted(runs) == sorted(f"wheelcheck/{n}/" for n in names),
            f"one run per db image, automationDetails.id wheelcheck/IMAGE/ ({len(runs)} runs, {len(names)} images)",
            json.dumps(sorted(runs)))
    mismatches = []
    for c in cells:
        image, wheel = c["image"]["name"], c["wheel"]["filename"]
        run = runs.get(f"wheelcheck/{image}/", {"results": []})
        mine = [r for r in run["results"] if r["properties"]["wheel"] == wheel]
        want = len(c["findings"]) if c["targeted"] else 0
        if len(mine) != want:
            mismatches.append(f"{wheel} on {image}: {len(mine)} results, {want} findings")
        kinds = sorted(r["properties"]["kind"] for r in mine)
        if c["targeted"] and kinds != sorted(f["kind"] for f in c["findings"]):
            mismatches.append(f"{wheel} on {image}: kinds {kinds}")
        for r in mine:
            uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            if os.path.basename(uri) != wheel:
                mismatches.append(f"{wheel}: located at {uri}")
    J.check(not mismatches, "one SARIF result per finding of each targeted cell, located at its wheel",
            "\n".join(mismatches[:10]))
    cuda = runs["wheelcheck/cuda13.0/"]
    rules = {r["ruleId"] for r in cuda["results"]}
    J.check({"cxx-abi-mismatch", "missing-library"} <= rules,
            f"cuda13.0: FlagGems' c10 symbol is cxx-abi-mismatch, FlagTree's libcudart.so.12 missing-library ({rules})")
    tle = [r for r in cuda["results"] if r["ruleId"] == "missing-library" and "libcudart.so.12" in r["message"]["text"]]
    J.check(tle and "USE_TLE_DIST=0" in tle[0]["message"]["text"] and "requires libcudart.so.12" in tle[0]["message"]["text"],
            "the message says what is required in pip's words and the gate that turns the route off",
            tle[0]["message"]["text"] if tle else "")
    J.check(cuda["properties"]["gates"].get("FLAGOS_USE_FLAGGEMS_CPP") == "0",
            "the run's properties carry the gates", json.dumps(cuda["properties"]))
    again = json.loads(J.wc("check", *common, "--format", "sarif").stdout)
    prints = lambda d: sorted(r["partialFingerprints"]["wheelcheckFinding/v1"] for run in d["runs"] for r in run["results"])
    J.check(prints(doc) == prints(again) and len(set(prints(doc))) > 10,
            f"partial fingerprints are the same on a second run ({len(set(prints(doc)))} distinct)")

    # --- JUnit, against the matrix text --------------------------------------------------------------
    ju = J.wc("check", *common, "--format", "junit")
    J.check(ju.returncode == js.returncode, f"junit exits as json does ({ju.returncode})", ju.stderr)
    root = ET.fromstring(ju.stdout)
    text = J.wc("check", *common).stdout
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] in names:
            words = " ".join(parts[1:]).replace("not for it", "not-for-it").split()
            rows[parts[0]] = words[:len(wheels)]
    bad = []
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root.findall("testsuite"):
        image = suite.get("name")
        cases = suite.findall("testcase")
        counted = {"tests": len(cases),
                   "failures": sum(1 for c in cases if c.find("failure") is not None),
                   "errors": sum(1 for c in cases if c.find("error") is not None),
                   "skipped": sum(1 for c in cases if c.find("skipped") is not None)}
        for k, v in counted.items():
            total[k] += v
            if int(suite.get(k)) != v:
                bad.append(f"{image}: {k}={suite.get(k)}, counted {v}")
        wheel_cases = [c for c in cases if c.get("classname") == image]
        words = rows.get(image, [])
        expect = {"failures": words.count("incompatible"), "errors": words.count("unknown"),
                  "skipped": words.count("not-for-it")}
        got = {"failures": sum(1 for c in wheel_cases if c.find("failure") is not None),
               "errors": sum(1 for c in wheel_cases if c.find("error") is not None),
               "skipped": sum(1 for c in wheel_cases if c.find("skipped") is not None)}
        if len(wheel_cases) != len(wheels) or got != expect:
            bad.append(f"{image}: wheel testcases {got} ({len(wheel_cases)}), the text says {expect} ({words})")
    for k, v in total.items():
        if int(root.get(k)) != v:
            bad.append(f"testsuites {k}={root.get(k)}, counted {v}")
    J.check(not bad and len(root.findall("testsuite")) == len(names),
            f"JUnit: a testsuite per image, counts as counted and as the matrix text says ({total})", "\n".join(bad[:10]))
    suite = next(s for s in root.findall("testsuite") if s.get("name") == "cuda13.0")
    routes = {c.get("name"): c for c in suite.findall("testcase")
              if c.get("name").startswith("route ") and c.get("classname") == "cuda13.0." + J.TREE}
    tle_case = routes.get("route flagtree-tle-dist (optional)")
    J.check(tle_case is not None and tle_case.find("skipped") is not None
            and "USE_TLE_DIST=0" in tle_case.find("skipped").get("message", ""),
            "the optional route that is off is a skipped testcase naming its gate", ju.stdout[:1500])

    # --- one exit code in every format; --exit-zero; gates ----------------------------------------------
    gems = J.sample(J.GEMS)
    codes = {}
    for fmt in ("text", "json", "sarif", "junit", "sh", "github"):
        extra = ["--env-file", os.path.join(tmp, "env")] if fmt == "github" else []
        codes[fmt] = J.wc("check", gems, "--image", "cuda13.0", "--format", fmt, "-q", "--no-cache", *extra).returncode
    J.check(set(codes.values()) == {3}, f"check exits 3 (degraded) in every format ({codes})")
    r = J.wc("check", gems, "--image", "cuda13.0", "--format", "sarif", "--exit-zero", "-q", "--no-cache")
    J.check(r.returncode == 0 and json.loads(r.stdout)["runs"][0]["invocations"][0]["exitCode"] == 0,
            f"--exit-zero: exit 0 with the report (exit {r.returncode})")
    r = J.wc("check", gems, os.path.join(tmp, "missing.whl"), "--image", "cuda13.0", "--exit-zero", "-q",
             "--no-cache", "--format", "sarif")
    res = [x for x in json.loads(r.stdout)["runs"][0]["results"] if x["ruleId"] == "not-checked"] if r.stdout else []
    J.check(r.returncode == 2 and res, f"--exit-zero keeps 2 for a wheel that cannot be read, a not-checked result "
            f"(exit {r.returncode})", r.stdout[:500] + r.stderr)
    gcodes = {fmt: J.wc("gates", gems, "--image", "cuda13.0", "--format", fmt, "-q", "--no-cache",
                        *(["--env-file", os.path.join(tmp, "genv")] if fmt == "github" else [])).returncode
              for fmt in ("sh", "json", "github", "sarif", "junit")}
    J.check(set(gcodes.values()) == {0}, f"gates exit 0 in every format once evaluated ({gcodes})")
    r = J.wc("check", gems, "--image", "cuda99.9", "--format", "sarif", "-q")
    failed = json.loads(r.stdout) if r.stdout.strip() else {}
    J.check(r.returncode == 2 and failed.get("runs") and
            failed["runs"][0]["invocations"][0]["executionSuccessful"] is False,
            f"a run that cannot be made (an unknown image) still prints SARIF saying so (exit {r.returncode})",
            r.stdout[:600] + r.stderr)
    outs = os.path.join(tmp, "outs")
    os.makedirs(outs)
    r = J.wc("check", gems, "--image", "cuda13.0", "-q", "--no-cache", "-o", f"sarif={outs}/a.sarif",
             "-o", f"junit={outs}/a.xml", "-o", f"json={outs}/a.json", "-o", f"markdown={outs}/a.md")
    ok = all(os.path.getsize(os.path.join(outs, f)) > 100 for f in ("a.sarif", "a.xml", "a.json", "a.md"))
    J.check(r.returncode == 3 and ok and "DEGRADED" in r.stdout and "| degraded |" in open(f"{outs}/a.md").read(),
            "--output writes each format beside the text on stdout", r.stderr)
    r = J.wc("check", gems, "--image", "cuda13.0", "-o", "sarf=x.sarif")
    J.check(r.returncode == 2 and "did you mean sarif" in r.stderr, "--output with a mistyped format names the right one",
            r.stderr)

    # --- a lock file's results are located on its lines -------------------------------------------------
    lockdir = os.path.join(tmp, "lock")
    os.makedirs(lockdir)
    lines = ['lock-version = "1.0"', 'created-by = "wheelcheck-tests"', ""]
    where = {}
    for p in wheels[:3]:
        f = os.path.basename(p)
        name, version = f.split("-")[0].replace("_", "-"), f.split("-")[1]
        lines.append("[[packages]]")
        where[f] = len(lines)
        sha = hashlib.sha256(open(p, "rb").read()).hexdigest()
        lines += [f'name = "{name}"', f'version = "{version}"',
                  f'wheels = [{{ path = "{p}", hashes = {{ sha256 = "{sha}" }} }}]', ""]
    open(os.path.join(lockdir, "pylock.toml"), "w").write("\n".join(lines))
    r = J.wc("check", "pylock.toml", "--image", "cuda13.0", "--format", "sarif", "-q", "--no-cache", cwd=lockdir)
    doc = json.loads(r.stdout) if r.stdout.strip() else {"runs": []}
    validate_sarif(J, doc, "check pylock.toml --format sarif")
    located = {}
    for run in doc["runs"]:
        for res in run["results"]:
            loc = res["locations"][0]["physicalLocation"]
            located.setdefault(res["properties"]["wheel"], set()).add(
                (loc["artifactLocation"]["uri"], loc.get("region", {}).get("startLine")))
    bad = [f"{w}: {sorted(located.get(w, []))}, want line {n} or {n + 1}" for w, n in where.items()
           if w in located and not all(u.endswith("pylock.toml") and s in (n, n + 1) for u, s in located[w])]
    J.check(located and not bad, "pylock.toml: each result is located on its package's lines of the lock",
            "\n".join(bad) + json.dumps({k: sorted(map(str, v)) for k, v in located.items()}))

    # --- the settings file -------------------------------------------------------------------------------
    cx = J.sample(J.CX)
    proj = os.path.join(tmp, "proj")
    sub = os.path.join(proj, "sub", "deeper")
    os.makedirs(sub)
    base = J.wc("check", cx, "--image", "cuda13.0", "-q", "--no-cache", "--no-config")
    J.check(base.returncode == 4, f"FlagCX (CUDA 13) on cuda13.0: unknown, the driver is not known (exit {base.returncode})")
    open(os.path.join(proj, "pyproject.toml"), "w").write(
        '[project]\nname = "x"\n\n[tool.wheelcheck]\nimages = ["cuda13.0"]\n'
        '[[tool.wheelcheck.accept]]\nrule = "driver"\nwheel = "flagcx-*"\n'
        'reason = "the runners run driver 580.95 (nvidia-smi)"\nexpires = 2999-12-31\n')
    r = J.wc("check", cx, "-q", "--no-cache", cwd=sub)
    J.check(r.returncode == 0 and "COMPATIBLE" in r.stdout and "accepted until 2999-12-31" in r.stdout,
            f"[tool.wheelcheck] found from a subfolder: its images, its accepted driver condition (exit {r.returncode})",
            r.stdout[-1500:] + r.stderr)
    r = J.wc("check", cx, "--image", "ascend-cann9", "-q", "--no-cache", cwd=sub)
    J.check(r.returncode == 1 and "ascend-cann9" in r.stdout, f"--image on the command line wins over the file "
            f"(exit {r.returncode})", r.stdout[:300])
    open(os.path.join(proj, "wheelcheck.toml"), "w").write(
        'images = ["cuda13.0"]\n[[accept]]\nrule = "driver"\nreason = "checked once"\nexpires = 2020-01-31\n')
    r = J.wc("check", cx, "-q", "--no-cache", cwd=sub)
    J.check(r.returncode == 4 and "expired on 2020-01-31" in r.stderr and "wheelcheck.toml:2" in r.stderr,
            f"wheelcheck.toml wins over pyproject.toml; an expired acceptance warns and counts again (exit {r.returncode})",
            r.stderr)
    r = J.wc("config", "--json", cwd=sub)
    cfg = json.loads(r.stdout) if r.returncode == 0 else {}
    J.check(cfg.get("file", "").endswith("proj/wheelcheck.toml") and
            cfg["settings"]["images"] == {"value": ["cuda13.0"], "source": cfg["file"] + ":1"} and
            cfg["settings"]["verify"]["source"] == "default" and len(cfg["expired"]) == 1,
            "wheelcheck config --json: each setting and where it came from", r.stdout[:1500] + r.stderr)
    r = J.wc("config", "--image", "musa5.1", cwd=sub)
    J.check(r.returncode == 0 and "musa5.1" in r.stdout and "--image" in r.stdout and "expired" in r.stdout,
            "wheelcheck config: a flag shows as the flag's", r.stdout)
    r = J.wc("check", cx, "-q", "--no-cache", "--no-config", cwd=sub)
    J.check(r.returncode == 2 and "no image given" in r.stderr, "--no-config reads no file", r.stderr)
    bad_cfg = os.path.join(tmp, "bad.toml")
    open(bad_cfg, "w").write('images = ["cuda13.0"]\nimage = "x"\n')
    r = J.wc("check", cx, "--config", bad_cfg, "-q")
    J.check(r.returncode == 2 and "bad.toml:2" in r.stderr and "did you mean 'images'" in r.stderr,
            "an unknown setting is an error naming FILE:LINE and the closest key", r.stderr)
    open(bad_cfg, "w").write('[[accept]]\nrule = "driver"\nreason = "forever"\n')
    r = J.wc("gates", cx, "--image", "cuda13.0", "--config", bad_cfg, "-q")
    J.check(r.returncode == 2 and "expires" in r.stderr and "WHEELCHECK_VERDICT='error'" in r.stdout,
            "an acceptance without an expiry is refused, and gates fail closed", r.stdout + r.stderr)
    open(bad_cfg, "w").write('images = "cuda13.0"\n[output]\nsarif = "out/r.sarif"\njunit = "out/r.xml"\n')
    os.makedirs(os.path.join(tmp, "out"))
    r = J.wc("check", cx, "--config", bad_cfg, "-q", "--no-cache")
    J.check(r.returncode == 4 and os.path.exists(os.path.join(tmp, "out", "r.sarif")) and
            os.path.exists(os.path.join(tmp, "out", "r.xml")),
            "the file's [output] paths are written, relative to the file", r.stderr)

    # --- the scan's SARIF and JUnit -----------------------------------------------------------------------
    idx = J.Index(tmp)
    try:
        rep = os.path.join(tmp, "scan-report")
        r = J.wc("scan", *idx.urls(), *J.PROJECTS, "--image", "cuda13.0", "--image", "ascend-cann9", "--state",
                 tmp + "/state", "--report", rep, "-q", "--no-cache", "--format", "sarif", "-o", f"junit={tmp}/scan.xml",
                 "--summary", f"{tmp}/summary.md", "--github-output", f"{tmp}/gh-out")
        doc = json.loads(r.stdout) if r.stdout.strip() else {"runs": []}
        validate_sarif(J, doc, "scan --format sarif")
        sarif_readback(J, doc, "scan --format sarif")
        report = json.load(open(os.path.join(rep, "report.json")))
        findings = sum(len(res["findings"]) for w in report["wheels"] for res in w["results"] if res["targeted"])
        # and the publisher run: each new wheel's own findings, once (wheelcheck lint's)
        findings += sum(len(w.get("publisher", {}).get("findings", [])) for w in report["wheels"])
        results = sum(len(run["results"]) for run in doc["runs"])
        ids = sorted(run["automationDetails"]["id"] for run in doc["runs"])
        J.check(r.returncode == report["exit_code"] and results == findings and
                ids == ["wheelcheck/ascend-cann9/", "wheelcheck/cuda13.0/", "wheelcheck/publisher/"],
                f"scan: a run per image and the publisher run, one result per finding of the report ({results} / "
                f"{findings}, exit {r.returncode})",
                r.stderr[-800:])
        root = ET.parse(f"{tmp}/scan.xml").getroot()
        J.check(int(root.get("tests")) >= 2 * len(report["wheels"]) and root.findall("testsuite"),
                f"scan: JUnit with a testcase per wheel and image ({root.get('tests')})")
        gh = open(f"{tmp}/gh-out").read()
        J.check(f"exit-code={r.returncode}\n" in gh and "verdict=" in gh and "| Wheel |" in open(f"{tmp}/summary.md").read(),
                "scan: step outputs and the Markdown summary", gh)
    finally:
        idx.close()

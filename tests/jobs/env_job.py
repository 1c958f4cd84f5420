"""The environment job (issue 28): a lock file wherever a wheel goes, wheels installed together as pip installs
them (a torch wheel replaces the image's torch), and export tables read from the wheel an image names as
published. Everything is built at test time and served on loopback (tests/net/server.py):

  whl-cpu/torch/    torch-2.14.1+cpu wheels laid out as PyTorch publishes them (torch/lib/libc10.so, soname
                    libc10.so), one per platform and Python: only the one for the image may be read. Its
                    libc10.so is compiled here with PyTorch 2.14's MessageLogger(c10::SourceLocation, int, bool)
                    in place of 2.6's MessageLogger(char const*, int, int), which the FlagGems sample needs.
  flagos/...        the FlagOS sample wheels.

Against cuda13.0, whose torch 2.10.0+cpu has no tables in the db, each route must find the signature change:
a pylock.toml, a pip report and a requirements file for the same set; --with the torch wheel; an image whose
torch names the loopback index as where it is published. Also: the lying hash, a package with only an sdist,
a marker that skips a package, gates under set -e, the offline condition naming the index, and `image fill`
writing the same tables `probe` writes for the same library.
"""
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import make_wheel  # noqa: E402
import env_lookup_job  # noqa: E402

C10_214 = r"""
#include <string>
namespace c10 {
struct SourceLocation { const char* function; const char* file; unsigned line; };
namespace detail {
[[noreturn]] void torchCheckFail(const char*, const char*, unsigned int, const std::string& msg) { throw msg; }
}  // namespace detail
class MessageLogger {
 public:
  MessageLogger(SourceLocation location, int severity, bool log_stack);
 private:
  int severity_;
};
MessageLogger::MessageLogger(SourceLocation, int severity, bool) : severity_(severity) {}
}  // namespace c10
"""

TORCH = "torch-2.14.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl"
TORCH_ARM = "torch-2.14.1+cpu-cp312-cp312-manylinux_2_28_aarch64.whl"
TORCH_311 = "torch-2.14.1+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
MESSAGE_LOGGER = "c10::MessageLogger::MessageLogger(char const*, int, int)"
NEW_LOGGER = "c10::MessageLogger::MessageLogger(c10::SourceLocation, int, bool)"


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def build_torch(tmp, J):
    """libc10.so and the torch wheels (per platform and Python, the same bytes: only one may be read)."""
    lib = os.path.join(tmp, "torch-build", "libc10.so")
    os.makedirs(os.path.dirname(lib), exist_ok=True)
    src = lib + ".cpp"
    open(src, "w").write(C10_214)
    r = subprocess.run(["g++", "-O1", "-fPIC", "-shared", "-Wl,-soname,libc10.so", "-o", lib, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    out = os.path.join(tmp, "wheels")
    os.makedirs(out, exist_ok=True)
    wheels = {}
    for name in (TORCH, TORCH_ARM, TORCH_311):
        wheels[name] = make_wheel.write_wheel(os.path.join(out, name), [("torch/lib/libc10.so", lib)])
    return lib, wheels


class Server:
    def __init__(self, tree):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "net", "server.py"), "--root", tree],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline().split()[1])
        self.base = f"http://127.0.0.1:{self.port}"

    def index(self, name):
        return f"{self.base}/{name}/simple/"

    def file(self, index, project, filename):
        return f"{self.base}/{index}/files/{project}/{filename.replace('+', '%2B')}"

    def stats(self, clear=True):
        import urllib.request
        data = json.load(urllib.request.urlopen(self.base + "/_stats"))
        if clear:
            urllib.request.urlopen(urllib.request.Request(self.base + "/_stats", method="DELETE")).read()
        return data

    def close(self):
        self.proc.kill()
        self.proc.wait()


def validate(doc):
    """Schema errors of an environment document, its packages' reports included ([] when valid)."""
    import jsonschema
    docs = os.path.join(HERE, "..", "..", "docs")
    env_schema = json.load(open(os.path.join(docs, "environment.schema.json")))
    verdict_schema = json.load(open(os.path.join(docs, "verdict.schema.json")))
    report_schema = dict(verdict_schema)
    report_schema.pop("oneOf", None)
    report_schema["$ref"] = "#/$defs/report"
    def short(e):
        return f"{'/'.join(str(x) for x in e.absolute_path)}: {e.validator} {str(e.validator_value)[:80]}"
    errors = [short(e) for e in jsonschema.Draft202012Validator(env_schema).iter_errors(doc)]
    for p in doc.get("packages", []):
        if "report" in p:
            errors += [f"{p['name']}: {short(e)}" for e in
                       jsonschema.Draft202012Validator(report_schema).iter_errors(p["report"])]
    return errors


def probed_table(tmp, lib, wc):
    """The export tables `wheelcheck probe` writes for libc10.so in a root where torch is installed as pip
    installs it (usr/lib/python3.12/site-packages/torch/lib/libc10.so), and the probe's result."""
    site = os.path.join(tmp, "root", "usr/lib/python3.12/site-packages")
    os.makedirs(os.path.join(site, "torch/lib"), exist_ok=True)
    shutil.copy(lib, os.path.join(site, "torch/lib/libc10.so"))
    info = os.path.join(site, "torch-2.14.1+cpu.dist-info")
    os.makedirs(info, exist_ok=True)
    open(os.path.join(info, "METADATA"), "w").write("Metadata-Version: 2.1\nName: torch\nVersion: 2.14.1+cpu\n")
    open(os.path.join(info, "RECORD"), "w").write("torch/lib/libc10.so,,\n")
    probed = os.path.join(tmp, "probed", "root.json")
    r = wc("probe", "--root", os.path.join(tmp, "root"), "--name", "root", "-o", probed)
    tables = [os.path.join(d, f) for d, _, fs in os.walk(os.path.dirname(probed)) for f in fs
              if f == "libc10.so.exports.gz"]
    return tables, r


def symbols(path):
    """A table's lines, but for where it was read from."""
    return [line for line in gzip.open(path, "rt").read().splitlines() if not line.startswith("#source")]


def findings(report):
    return report.get("findings", [])


def c10_finding(report):
    for f in findings(report):
        if "MessageLogger" in (f.get("demangled") or f.get("symbol") or ""):
            return f
    return None


def gems_report(doc):
    for p in doc["packages"]:
        if p["name"].replace("_", "-") == "flag-gems-cpp-cuda":
            return p.get("report") or {}
    return {}


def job_env(tmp, J):
    wc, check = J.wc, J.check
    gems, tree_whl, cx = J.sample(J.GEMS), J.sample(J.TREE), J.sample(J.CX)
    lib, wheels = build_torch(tmp, J)
    tree = os.path.join(tmp, "indexes")
    for name, path in wheels.items():
        os.makedirs(os.path.join(tree, "whl-cpu", "torch"), exist_ok=True)
        shutil.copy(path, os.path.join(tree, "whl-cpu", "torch", name))
    for path in (gems, tree_whl, cx):
        project = os.path.basename(path).split("-")[0].replace("_", "-")
        os.makedirs(os.path.join(tree, "flagos", project), exist_ok=True)
        shutil.copy(path, os.path.join(tree, "flagos", project))
    srv = Server(tree)
    online = {"WHEELCHECK_OFFLINE": ""}
    try:
        run_env(tmp, J, srv, lib, wheels, gems, tree_whl, cx, online)
    finally:
        srv.close()
    env_lookup_job.job_env_lookups(tmp, J)


def run_env(tmp, J, srv, lib, wheels, gems, tree_whl, cx, online):
    wc, check = J.wc, J.check
    cache = ["--cache-dir", os.path.join(tmp, "cache")]
    sample_urls = {os.path.basename(p): srv.file("flagos", os.path.basename(p).split("-")[0].replace("_", "-"),
                                                  os.path.basename(p)) for p in (gems, tree_whl, cx)}

    def wheel_entry(path, url):
        return f'  {{ url = "{url}", hashes = {{ sha256 = "{sha256(path)}" }} }}'

    def pylock(torch_sha=None, extra=""):
        t = wheels[TORCH]
        lines = ['lock-version = "1.0"', 'created-by = "wheelcheck-tests"', ""]
        for p in (gems, tree_whl, cx):
            f = os.path.basename(p)
            name, version = f.split("-")[0].replace("_", "-"), f.split("-")[1]
            lines += ["[[packages]]", f'name = "{name}"', f'version = "{version}"', "wheels = [",
                      wheel_entry(p, sample_urls[f]), "]", ""]
        lines += ["[[packages]]", 'name = "torch"', 'version = "2.14.1+cpu"',
                  f'index = "{srv.index("whl-cpu")}"', "wheels = ["]
        for name in (TORCH_ARM, TORCH_311, TORCH):
            sha = torch_sha if (torch_sha and name == TORCH) else sha256(wheels[name])
            lines.append(f'  {{ url = "{srv.file("whl-cpu", "torch", name)}", hashes = {{ sha256 = "{sha}" }} }},')
        lines += ["]", "", "[[packages]]", 'name = "pywin32"', 'version = "306"', "marker = 'sys_platform == \"win32\"'",
                  'sdist = { url = "http://127.0.0.1:9/pywin32-306.tar.gz", hashes = { sha256 = "' + "0" * 64 + '" } }',
                  ""]
        return "\n".join(lines) + extra

    lockfile = os.path.join(tmp, "pylock.toml")
    open(lockfile, "w").write(pylock())

    # 1. the lock, checked as installed: the c10 symbols bind against the locked torch's own tables.
    srv.stats()
    r = wc("check", lockfile, "--image", "cuda13.0", "--format", "json", *cache, env=online)
    check(r.returncode in (0, 1, 3, 4), f"pylock.toml against cuda13.0 is checked (exit {r.returncode})", r.stderr[-2000:])
    doc = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    rep = gems_report(doc)
    f = c10_finding(rep)
    check(f is not None and f.get("classification") == "signature-changed" and NEW_LOGGER in json.dumps(f.get("candidates", [])),
          "the lock: MessageLogger is a signature change against the locked torch 2.14.1's real table",
          json.dumps(f, indent=1)[:1500])
    check(not any(x.get("classification") == "unknown-exports" and "MessageLogger" in json.dumps(x) for x in findings(rep)),
          "the lock: no 'exports unknown' condition for the c10 symbols")
    check(any("replaces the image's torch 2.10.0+cpu" in n for n in rep.get("notes", [])),
          "the lock: the locked torch replaces the image's torch 2.10.0+cpu", json.dumps(rep.get("notes"), indent=1))
    schema_errors = validate(doc)
    check(not schema_errors, "the environment JSON validates against docs/environment.schema.json, each report "
          "against docs/verdict.schema.json", "\n".join(schema_errors[:10]))
    states = {p["name"]: p["state"] for p in doc.get("packages", [])}
    check(states.get("pywin32") == "skipped", f"a package whose marker is false for the image is skipped ({states})")
    paths = [urllib.parse.unquote(s["path"]) for s in srv.stats()]
    check(not any(TORCH_ARM in p or TORCH_311 in p for p in paths),
          "only the torch wheel for the image's platform and Python is read", "\n".join(paths))
    check(any(TORCH in p for p in paths), "the image's torch wheel is read from its URL", "\n".join(paths))

    # the text: a table of the set, one verdict.
    r = wc("check", lockfile, "--image", "cuda13.0", *cache, env=online)
    check("package" in r.stdout and "torch" in r.stdout and "2.14.1+cpu" in r.stdout and "pylock.toml on cuda13.0" in r.stdout,
          "the text has a table of the set under one verdict line", r.stdout[:3000])

    # a second check moves none of the wheels' bytes (the profile cache, by sha256).
    srv.stats()
    r = wc("check", lockfile, "--image", "cuda13.0", "--format", "json", *cache, env=online)
    moved = [s for s in srv.stats() if "/files/" in s["path"]]
    check(r.returncode in (0, 1, 3, 4) and not moved, "a second check of the lock fetches no wheel byte",
          json.dumps(moved, indent=1)[:1500])

    # 2. the same set as a pip installation report and as a requirements file with indexes and hashes.
    report = {"version": "1", "pip_version": "24.0", "install": []}
    for p, url in [(gems, sample_urls[J.GEMS]), (tree_whl, sample_urls[J.TREE]), (cx, sample_urls[J.CX]),
                   (wheels[TORCH], srv.file("whl-cpu", "torch", TORCH))]:
        f = os.path.basename(p)
        report["install"].append({"download_info": {"url": url, "archive_info": {"hashes": {"sha256": sha256(p)}}},
                                  "is_direct": False, "requested": True,
                                  "metadata": {"name": f.split("-")[0], "version": f.split("-")[1]}})
    rep_file = os.path.join(tmp, "report.json")
    json.dump(report, open(rep_file, "w"))
    reqs = os.path.join(tmp, "requirements.txt")
    with open(reqs, "w") as out:
        out.write(f"--index-url {srv.index('whl-cpu')}\n--extra-index-url {srv.index('flagos')}\n")
        out.write(f"torch==2.14.1+cpu \\\n    --hash=sha256:{sha256(wheels[TORCH])}\n")
        for p in (gems, tree_whl, cx):
            f = os.path.basename(p)
            out.write(f"{f.split('-')[0].replace('_', '-')}=={f.split('-')[1]} --hash=sha256:{sha256(p)}\n")
    for what, path in (("the pip report", rep_file), ("the requirements file", reqs)):
        r = wc("check", path, "--image", "cuda13.0", "--format", "json", *cache, env=online)
        d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
        f = c10_finding(gems_report(d))
        check(f is not None and f.get("classification") == "signature-changed",
              f"{what}: the same signature change (exit {r.returncode})", (r.stdout[-1500:] + r.stderr[-1500:]))
        picked = {p["name"].replace("_", "-"): p.get("file") for p in d.get("packages", [])}
        check(picked.get("torch") == TORCH, f"{what}: torch's file is the image's ({picked.get('torch')})")

    # 2b. --find-links: a local folder of wheels and a page of links, without an index.
    fl = os.path.join(tmp, "requirements-find-links.txt")
    with open(fl, "w") as out:
        out.write(f"--no-index\n--find-links {os.path.dirname(wheels[TORCH])}\n"
                  f"-f {srv.index('flagos')}flag-gems-cpp-cuda/\n"
                  f"torch==2.14.1+cpu --hash=sha256:{sha256(wheels[TORCH])}\nflag-gems-cpp-cuda==5.4.0\n")
    r = wc("check", fl, "--image", "cuda13.0", "--format", "json", *cache, env=online)
    d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    f = c10_finding(gems_report(d))
    picked = {p["name"]: (p.get("file"), p.get("path")) for p in d.get("packages", [])}
    check(f is not None and f.get("classification") == "signature-changed" and picked.get("torch", ("", ""))[0] == TORCH
          and picked["torch"][1].startswith(tmp),
          f"--find-links a folder and a page of links: the wheels are found, the change named (exit {r.returncode})",
          json.dumps(picked) + r.stderr[-1000:])

    # 3. a hash in the lock that lies: --verify full downloads the wheel and refuses it.
    liar = os.path.join(tmp, "pylock.liar.toml")
    open(liar, "w").write(pylock(torch_sha="1" * 64))
    r = wc("check", liar, "--image", "cuda13.0", "--verify", "full", "--no-cache", env=online)
    check(r.returncode == 2 and "is not the file the lock's hash says: its sha256 is " + sha256(wheels[TORCH]) in r.stderr
          and "INTEGRITY FAILURE" in r.stdout and "INCOMPATIBLE" not in r.stdout and "without a wheel" not in r.stdout,
          f"a lock whose torch hash lies: --verify full refuses the wheel as an integrity failure, exit 2, never "
          f"INCOMPATIBLE nor 'without a wheel' (exit {r.returncode})",
          (r.stdout + r.stderr)[-1500:])

    # 4. a package with no wheel for the image is one finding of the environment.
    nowheel = os.path.join(tmp, "pylock.sdist.toml")
    open(nowheel, "w").write(pylock(extra='\n[[packages]]\nname = "bar"\nversion = "1.0"\n'
                                          'sdist = { url = "http://127.0.0.1:9/bar-1.0.tar.gz" }\n'))
    r = wc("check", nowheel, "--image", "cuda13.0", "--format", "json", *cache, env=online)
    d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    bar = [p for p in d.get("packages", []) if p["name"] == "bar"]
    check(r.returncode == 1 and bar and bar[0]["state"] == "no-wheel" and "only an sdist" in bar[0]["reason"],
          f"an sdist-only package: 'only an sdist' and the environment is incompatible (exit {r.returncode})",
          json.dumps(bar, indent=1))

    # 5. gates of the environment under set -e.
    r = J.sh(f'set -euo pipefail\neval "$(wheelcheck gates {lockfile} --image cuda13.0 --cache-dir {tmp}/cache)"\n'
             + J.PRINT_ENV, env=online)
    env = J.env_of(r.stdout)
    check(r.returncode == 0 and env.get("FLAGOS_USE_FLAGGEMS_CPP") == "0",
          f"eval \"$(wheelcheck gates pylock.toml ...)\" turns off the FlagGems C++ route (exit {r.returncode})",
          r.stdout[-1500:] + r.stderr[-1500:])

    # 5b. the nightly scan checks each new wheel in the lock's environment (the new wheel replaces its own entry).
    for label, extra in (("alone", []), ("in the lock", ["--with", lockfile])):
        rep = os.path.join(tmp, "scan-" + label.replace(" ", "-"))
        r = wc("scan", "--index", srv.index("flagos"), "--project", "flag-gems-cpp-cuda", "--image", "cuda13.0",
               "--state", rep + "-state", "--report", rep, "-q", *cache, *extra, env=online)
        d = json.load(open(os.path.join(rep, "report.json"))) if os.path.exists(os.path.join(rep, "report.json")) else {}
        heads = [x.get("headline", "") for w in d.get("wheels", []) for x in w.get("results", [])]
        if extra:
            check(r.returncode in (0, 1) and d.get("environment") == [lockfile] and heads and "MessageLogger" in heads[0]
                  and "signature-changed" in heads[0],
                  f"scan --with pylock.toml: FlagGems is judged against the locked torch 2.14.1 (exit {r.returncode})",
                  json.dumps(heads) + r.stderr[-800:])
        else:
            check(r.returncode in (0, 1) and heads and "torchCheckFail" in heads[0],
                  f"scan alone: FlagGems against the image's torch (exit {r.returncode})", json.dumps(heads))

    # 6. --with a torch wheel replaces the image's torch.
    r = wc("check", gems, "--with", wheels[TORCH], "--image", "cuda13.0", "--json", *cache, env=online)
    d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    f = c10_finding(d)
    check(f is not None and f.get("classification") == "signature-changed" and
          any("replaces the image's torch 2.10.0+cpu" in n for n in d.get("notes", [])),
          "--with torch.whl: it replaces the image's torch, and the signature change is found",
          json.dumps(d.get("notes"), indent=1) + json.dumps(f, indent=1))

    # 7. an image whose torch names the loopback index as where it is published.
    def image_file(name, index):
        path = os.path.join(tmp, name + ".json")
        json.dump({"schema": "wheelcheck-image/1", "name": name, "kind": "image", "origin": "declared",
                   "layers": ["cuda13.0"],
                   "distributions": [{"name": "torch", "version": "2.14.1+cpu",
                                      "exports_unknown": "not in the db",
                                      "libraries": [{"path": "torch/lib/libc10.so", "soname": "libc10.so"}],
                                      "cxx11_abi": True,
                                      "published": {"index": index, "requirement": "torch==2.14.1+cpu"}}]},
                  open(path, "w"), indent=1)
        return path

    pub = image_file("cuda13.0-published", srv.index("whl-cpu"))
    srv.stats()
    r = wc("check", gems, "--image", pub, "--json", *cache, env=online)
    d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    f = c10_finding(d)
    check(f is not None and f.get("classification") == "signature-changed",
          f"an image naming its torch's index: real tables from there (exit {r.returncode})",
          json.dumps(f, indent=1) + r.stderr[-1500:])
    check(any("export tables" in n and "whl-cpu" in n for n in d.get("notes", [])),
          "the verdict says where the tables came from", json.dumps(d.get("notes"), indent=1))
    off = image_file("cuda13.0-offline", "https://download.pytorch.invalid/whl/cpu")
    r = wc("check", gems, "--image", off, "--json", "--retries", "0", *cache, env=online)
    d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    cond = [x for x in findings(d) if x.get("classification") == "unknown-exports"]
    check(cond and "download.pytorch.invalid/whl/cpu" in json.dumps(cond),
          "offline: the condition names the index that could not be read", json.dumps(cond, indent=1)[:2000])
    # an index that refuses connections holds the check up for two quick attempts, not the client's six
    refused = image_file("cuda13.0-refused", "http://127.0.0.1:9/whl/cpu/")
    started = time.time()
    r = wc("check", gems, "--image", refused, "--json", *cache, env=online)
    took = time.time() - started
    d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    cond = [x for x in findings(d) if x.get("classification") == "unknown-exports"]
    check(cond and "127.0.0.1:9" in json.dumps(cond) and took < 10,
          f"an index that refuses: the condition names it, after {took:.1f} s", json.dumps(cond, indent=1)[:1500])
    r = wc("check", gems, "--image", pub, "--json", *cache, env={"WHEELCHECK_OFFLINE": "1"})
    d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    cond = [x for x in findings(d) if x.get("classification") == "unknown-exports"]
    check(cond and srv.index("whl-cpu") in json.dumps(cond) and "WHEELCHECK_OFFLINE" in json.dumps(cond),
          "WHEELCHECK_OFFLINE: nothing is fetched, and the condition names the index", json.dumps(cond, indent=1)[:2000])

    # 8. image fill writes the tables probe writes for the same library.
    out = os.path.join(tmp, "fill")
    r = wc("image", "fill", pub, "-o", out, *cache, env=online)
    check(r.returncode == 0, f"image fill writes the published tables (exit {r.returncode})", r.stdout + r.stderr)
    filled = [os.path.join(d_, f) for d_, _, fs in os.walk(out) for f in fs if f.endswith("libc10.so.exports.gz")]
    mine, r2 = probed_table(tmp, lib, wc)
    check(len(filled) == 1 and len(mine) == 1 and symbols(filled[0]) == symbols(mine[0]),
          f"image fill's table of libc10.so equals probe's (probe exit {r2.returncode})",
          f"{filled} {mine}\n{r2.stderr[-800:]}")
    layer = [os.path.join(d_, f) for d_, _, fs in os.walk(out) for f in fs if f.endswith(".json")]
    if layer:
        desc = json.load(open(layer[0]))
        libs = [l for d_ in desc.get("distributions", []) for l in d_.get("libraries", [])]
        check(libs and all(l.get("exports") for l in libs), "the filled description refers to its tables",
              json.dumps(desc, indent=1)[:1500])


# --- the corpus tier: Debian's real libc10 of PyTorch 2.14 and 2.6, as pip's torch wheels lay them out ------

def corpus_torch(tmp, version, debs):
    """torch-VERSION+cpu-cp312-cp312-manylinux_2_28_x86_64.whl from Debian's libtorch: torch/lib/libc10.so
    (soname libc10.so, RUNPATH $ORIGIN, as pip's torch has them) with what it needs that the image lacks
    (libnuma.so.1, libcpuinfo.so.0) beside it, as auditwheel-repaired wheels carry them."""
    short = ".".join(version.split(".")[:2])
    src = os.path.join(debs, f"libtorch{short}", "usr/lib/x86_64-linux-gnu", f"libc10.so.{short}")
    work = os.path.join(tmp, f"torch-{version}")
    os.makedirs(work, exist_ok=True)
    lib = os.path.join(work, "libc10.so")
    shutil.copy(src, lib)
    for cmd in (["patchelf", "--set-soname", "libc10.so", lib], ["patchelf", "--set-rpath", "$ORIGIN", lib]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
    files = [("torch/lib/libc10.so", lib)]
    for pkg, name in (("libnuma1", "libnuma.so.1"), ("libcpuinfo0", "libcpuinfo.so.0")):
        files.append((f"torch/lib/{name}", os.path.realpath(os.path.join(debs, pkg, "usr/lib/x86_64-linux-gnu", name))))
    whl = os.path.join(tmp, "corpus-wheels", f"torch-{version}+cpu-cp312-cp312-manylinux_2_28_x86_64.whl")
    os.makedirs(os.path.dirname(whl), exist_ok=True)
    return make_wheel.write_wheel(whl, files), lib


def job_env_corpus(tmp, J, corpus):
    debs = os.path.join(corpus, "debs")
    missing = [d for d in ("libtorch2.14", "libtorch2.6", "libnuma1", "libcpuinfo0") if not os.path.isdir(os.path.join(debs, d))]
    if missing or shutil.which("patchelf") is None:
        print(f"skip: the corpus ({corpus}) lacks {missing or 'nothing'}; patchelf "
              f"{'missing' if shutil.which('patchelf') is None else 'present'} "
              "(../shared/corpus/fetch-real-binaries.sh; scripts/install-deps.sh)")
        sys.exit(77)
    wc, check = J.wc, J.check
    gems = J.sample(J.GEMS)
    t214, lib214 = corpus_torch(tmp, "2.14.1", debs)
    t26, _ = corpus_torch(tmp, "2.6.0", debs)
    tree = os.path.join(tmp, "indexes")
    os.makedirs(os.path.join(tree, "whl-cpu", "torch"))
    for w in (t214, t26):
        shutil.copy(w, os.path.join(tree, "whl-cpu", "torch"))
    os.makedirs(os.path.join(tree, "flagos", "flag-gems-cpp-cuda"))
    shutil.copy(gems, os.path.join(tree, "flagos", "flag-gems-cpp-cuda"))
    srv = Server(tree)
    online = {"WHEELCHECK_OFFLINE": ""}
    cache = ["--cache-dir", os.path.join(tmp, "cache")]
    try:
        for version, changed in (("2.14.1", True), ("2.6.0", False)):
            reqs = os.path.join(tmp, f"requirements-{version}.txt")
            with open(reqs, "w") as out:
                out.write(f"-i {srv.index('whl-cpu')}\n--extra-index-url {srv.index('flagos')}\n"
                          f"torch=={version}+cpu\nflag-gems-cpp-cuda==5.4.0\n")
            srv.stats()
            r = wc("check", reqs, "--image", "cuda13.0", "--format", "json", *cache, env=online)
            d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
            f = c10_finding(gems_report(d))
            read = [urllib.parse.unquote(s["path"]) for s in srv.stats() if "/files/torch/" in s["path"]]
            check(all(f"torch-{version}" in p for p in read) and read,
                  f"requirements torch=={version}+cpu: only that wheel is read ({read})")
            if changed:
                check(f is not None and f.get("classification") == "signature-changed" and
                      NEW_LOGGER in json.dumps(f.get("candidates", [])),
                      "Debian's real libc10 2.14, as a locked torch wheel: MessageLogger's signature change",
                      json.dumps(f, indent=1)[:1500] + r.stderr[-1000:])
            else:
                check(f is None, "Debian's real libc10 2.6, as a locked torch wheel: MessageLogger binds",
                      json.dumps(f, indent=1)[:1500] + r.stderr[-1000:])
        # --with the 2.14 wheel, and an image that names the loopback index for its torch.
        r = wc("check", gems, "--with", t214, "--image", "cuda13.0", "--json", *cache, env=online)
        d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
        f = c10_finding(d)
        check(f is not None and f.get("classification") == "signature-changed", "--with Debian's 2.14 as a torch wheel: the change",
              json.dumps(f, indent=1)[:1500])
        img = os.path.join(tmp, "cuda13.0-torch2.14.json")
        json.dump({"schema": "wheelcheck-image/1", "name": "cuda13.0-torch2.14-published", "kind": "image",
                   "origin": "declared", "layers": ["cuda13.0"],
                   "distributions": [{"name": "torch", "version": "2.14.1+cpu", "exports_unknown": "not in the db",
                                      "libraries": [{"path": "torch/lib/libc10.so", "soname": "libc10.so"}],
                                      "published": {"index": srv.index("whl-cpu"), "requirement": "torch==2.14.1+cpu"}}]},
                  open(img, "w"))
        r = wc("check", gems, "--image", img, "--json", *cache, env=online)
        d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
        f = c10_finding(d)
        check(f is not None and f.get("classification") == "signature-changed",
              "an image naming the index of its torch: Debian's real 2.14 tables from the published wheel",
              json.dumps(f, indent=1)[:1500] + r.stderr[-1000:])
        # image fill's table of the real libc10 equals probe's.
        out = os.path.join(tmp, "fill")
        r = wc("image", "fill", img, "-o", out, *cache, env=online)
        filled = [os.path.join(d_, f_) for d_, _, fs in os.walk(out) for f_ in fs if f_ == "libc10.so.exports.gz"]
        mine, r2 = probed_table(tmp, lib214, wc)
        check(r.returncode == 0 and len(filled) == 1 and len(mine) == 1 and symbols(filled[0]) == symbols(mine[0]),
              f"image fill's table of Debian's libc10 2.14 equals probe's ({len(symbols(filled[0])) if filled else 0} "
              f"lines; fill exit {r.returncode}, probe exit {r2.returncode})", r.stderr[-800:] + r2.stderr[-800:])
    finally:
        srv.close()

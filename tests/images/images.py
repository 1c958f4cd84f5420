#!/usr/bin/env python3
"""The image tier (tests/images/README.md): `wheelcheck probe REF` and `check --image REF` against the same image
unpacked, for every kind of reference, on a Debian 12 root made of this machine's real packages.

  images.py --wheelcheck BIN --samples DIR [--work DIR] [PART ...]

Parts (default: all): refs (probe of docker-archive, oci, oci with a zstd layer, oci-archive, the loopback
registry with and without basic auth == probe --root; -o's export tables too), check (every sample wheel:
check --image REF == check --image ROOT), cache (a second probe is served from the cache, fetching no blob; a
tag that moved is re-resolved, its shared layer not fetched again), auth (credentials: none, wrong, their
order, never printed), bearer (a token realm, anonymous and with basic credentials, on a fake registry),
platforms (a two-platform index: --platform, the wheel's arch, this machine's).

Exit 0 when every check holds, 1 otherwise (each failure named), 77 (skipped: ...) when a tool is missing or
the binary predates image references (under CI=true both are failures).
"""
import argparse
import base64
import contextlib
import gzip
import json
import os
import platform
import re
import shutil
import sys
import tarfile
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import imagelib as L  # noqa: E402

CHECKS = L.Checks(context=lambda: f"[{PART}]")
check, FAILURES = CHECKS.check, CHECKS.failures
PART = "setup"
A = None
NAME = "deb12"          # the --name every probe gets (probe --root would otherwise name it after the folder)
USER, PASSWORD = "alice", "s3cret-pw-7f1c"
MACHINE_PLATFORM = {"x86_64": "linux/amd64", "aarch64": "linux/arm64"}.get(platform.machine(), "?")


class World:
    """Everything built once per run: the base image, its archives, the two registries, the references."""


W = World()


def wc(args, env, timeout=180, cwd=None):
    return L.wheelcheck(A.wheelcheck, args, env, timeout=timeout, cwd=cwd or W.cwd)


def fresh_cache(tag):
    c = tempfile.mkdtemp(prefix=f"cache-{tag}-", dir=W.caches)
    return os.path.join(c, "wc")


def env_for(cache, extra=None):
    e = dict(W.env, WHEELCHECK_CACHE_DIR=cache)
    e.update(extra or {})
    return e


def outside_clean(before, what):
    """Nothing new in HOME, TMPDIR or the working folder (the cache and -o's files are elsewhere)."""
    diff = L.snapshot_diff(before, L.snapshot(W.home, W.tmp, W.cwd))
    check(not diff, f"{what}: nothing written outside the cache (HOME, TMPDIR, working folder)", "\n".join(diff[:10]))


def cache_verified(cache, what):
    bad = L.unverified_blobs(cache)
    check(not bad, f"{what}: every blob in the cache hashes to its name", "\n".join(bad[:10]))


# --- setup ---------------------------------------------------------------------------------------------------------

def setup(stack):
    W.work = A.work
    W.home, W.tmp, W.cwd, W.caches = (os.path.join(A.work, d) for d in ("home", "tmp", "cwd", "caches"))
    for d in (W.cwd, W.caches):
        os.makedirs(d, exist_ok=True)
    W.env = L.base_env(A.work, os.path.join(A.work, "unused-cache"))
    W.env.pop("WHEELCHECK_CACHE_DIR")
    W.base = L.Base(A.work)
    b = W.base
    W.skopeo = L.Skopeo(A.work)
    # the same root, its layer compressed with zstd
    zl = b.layout.layer(b.tar, "zstd")
    W.zstd_manifest, _, _ = b.layout.image([zl], tag="bookworm-zstd")
    t0 = time.time()
    W.docker_archive = os.path.join(A.work, "deb12.docker.tar")
    W.oci_archive = os.path.join(A.work, "deb12.oci.tar")
    W.skopeo.copy(b.ref, f"docker-archive:{W.docker_archive}:deb12/root:bookworm")
    W.skopeo.copy(b.ref, f"oci-archive:{W.oci_archive}:bookworm")
    W.reg = stack.enter_context(L.Registry(os.path.join(A.work, "registry")))
    W.reg_auth = stack.enter_context(L.Registry(os.path.join(A.work, "registry-auth"), users={USER: PASSWORD}))
    W.skopeo.copy(b.ref, f"docker://{W.reg.host}/deb12/root:bookworm")
    W.skopeo.copy(b.ref, f"docker://{W.reg_auth.host}/deb12/root:bookworm", "--dest-creds", f"{USER}:{PASSWORD}")
    W.docker_config = L.docker_config(os.path.join(A.work, "docker-config"), W.reg_auth.host, USER, PASSWORD)
    print(f"fixture: docker-archive, oci-archive, pushed to {W.reg.host} and {W.reg_auth.host} (basic auth) "
          f"({time.time() - t0:.1f} s)", flush=True)
    # The config's Env as skopeo reads it (the referee for what probe --root is given as --env).
    cfg = json.loads(W.skopeo("inspect", "--config", f"docker-archive:{W.docker_archive}").stdout)
    W.config_env = cfg["config"]["Env"]
    check(W.config_env == b.env, "skopeo reads the config's Env back as written", W.config_env)
    W.repo_tags = [t for e in json.loads(tar_member(W.docker_archive, "manifest.json")) for t in e.get("RepoTags", [])]
    check(W.repo_tags == ["docker.io/deb12/root:bookworm"],
          "skopeo's docker-archive names the image docker.io/deb12/root:bookworm (RepoTags, with the registry host)",
          W.repo_tags)
    W.refs = {
        "docker-archive": (f"docker-archive:{W.docker_archive}", {}),
        "docker-archive-named": (f"docker-archive:{W.docker_archive}:deb12/root:bookworm", {}),
        "docker-archive-host": (f"docker-archive:{W.docker_archive}:docker.io/deb12/root:bookworm", {}),
        "oci": (b.ref, {}),
        "oci-zstd": (f"oci:{b.layout.path}:bookworm-zstd", {}),
        "oci-archive": (f"oci-archive:{W.oci_archive}:bookworm", {}),
        "registry": (f"docker://{W.reg.host}/deb12/root:bookworm", {}),
        "registry-auth": (f"docker://{W.reg_auth.host}/deb12/root:bookworm", {"DOCKER_CONFIG": W.docker_config}),
    }
    # The digest each reference's answer names: the manifest's; docker-archive's is the config's (docker's image
    # ID: a docker save holds no manifest).
    W.digests = {name: b.config["digest"] if name.startswith("docker-archive") else
                 W.zstd_manifest["digest"] if name == "oci-zstd" else b.manifest["digest"] for name in W.refs}
    # probe --root of the unpacked root, with the config's Env: what every reference must describe.
    cache = fresh_cache("root")
    r = wc(["probe", "--root", b.root, "--name", NAME, *b.env_args(env=W.config_env), "--json", "-q"], env_for(cache))
    if not check(r.rc == 0, "probe --root of the Debian root", r.show()):
        raise SystemExit(1)
    W.root_desc = r.json()
    check(W.root_desc.get("arch", {}).get("value") == "x86_64" and W.root_desc.get("pythons"),
          "the root's description has its arch and Python", json.dumps(W.root_desc)[:400])
    check(any(d.get("name") == "PyYAML" for d in W.root_desc.get("distributions", [])),
          "the root's description lists python3-yaml's distribution (PyYAML)")
    W.snap = L.snapshot(W.home, W.tmp, W.cwd)


# --- refs ----------------------------------------------------------------------------------------------------------

def expect_from(doc, ref, what, digest=None, config=None, plat="linux/amd64"):
    f = doc.get("from")
    if not check(isinstance(f, dict), f"{what}: the description has a \"from\" object", json.dumps(doc)[:300]):
        return
    check(f.get("reference") == ref, f"{what}: from.reference is the reference as given", f.get("reference"))
    check(re.fullmatch(r"sha256:[0-9a-f]{64}", str(f.get("digest"))), f"{what}: from.digest is a sha256 digest",
          f.get("digest"))
    if digest:
        check(f.get("digest") == digest, f"{what}: from.digest is the manifest's digest {digest[:19]}",
              f.get("digest"))
    if config:
        check(f.get("config") == config, f"{what}: from.config is the config's digest {config[:19]}", f.get("config"))
    check(f.get("platform") == plat, f"{what}: from.platform is {plat}", f.get("platform"))


def tar_member(path, name):
    with tarfile.open(path) as t:
        return t.extractfile(name).read()


def part_refs():
    b = W.base
    W.ref_caches = {}
    for name, (ref, extra) in W.refs.items():
        cache = fresh_cache(name)
        W.ref_caches[name] = cache
        r = wc(["probe", ref, "--name", NAME, "--json"], env_for(cache, extra))
        if not check(r.rc == 0 and not r.timed_out, f"{name}: probe {ref} exits 0", r.show()):
            continue
        try:
            doc = r.json()
        except ValueError:
            check(False, f"{name}: probe --json prints JSON", r.show())
            continue
        diff = L.json_diff(L.without_from(doc), W.root_desc)
        check(not diff, f"{name}: probe REF == probe --root ROOT (less \"from\")", "\n".join(diff))
        expect_from(doc, ref, name, W.digests[name], b.config["digest"])
        check(any("linux/amd64" in ln for ln in r.probe_lines()),
              f"{name}: a probe: line on stderr names the platform linux/amd64", r.err[-600:])
        cache_verified(cache, name)
    # docker-archive:FILE:REPO:TAG names a RepoTags entry exactly, or after a registry host; nothing else.
    for tag in ("deb12/root:sid", "root:bookworm", "b12/root:bookworm"):
        ref = f"docker-archive:{W.docker_archive}:{tag}"
        r = wc(["probe", ref, "--json"], env_for(fresh_cache("da-tag")))
        check(r.rc == 2 and any("docker.io/deb12/root:bookworm" in ln for ln in r.error_lines()),
              f"docker-archive:F:{tag} (no RepoTags entry, nor one after a registry host): exit 2, an error listing "
              "the tags the archive has", r.show())
    outside_clean(W.snap, "the probes")
    # -o FILE: the description and its export tables, as probe --root -o writes them.
    for name in ("oci", "registry"):
        ref, extra = W.refs[name]
        out_ref = os.path.join(A.work, "out", name)
        out_root = os.path.join(A.work, "out", f"{name}-root")
        os.makedirs(out_ref)
        os.makedirs(out_root)
        r1 = wc(["probe", ref, "--name", NAME, "-o", os.path.join(out_ref, "d.json"), "-q"],
                env_for(fresh_cache(f"{name}-o"), extra))
        r2 = wc(["probe", "--root", b.root, "--name", NAME, *b.env_args(env=W.config_env), "-o",
                 os.path.join(out_root, "d.json"), "-q"], env_for(fresh_cache(f"{name}-o-root")))
        if not check(r1.rc == 0 and r2.rc == 0, f"{name}: probe REF -o and probe --root -o exit 0",
                     r1.show() + "\n" + r2.show()):
            continue
        with open(os.path.join(out_ref, "d.json")) as f1, open(os.path.join(out_root, "d.json")) as f2:
            d1, d2 = json.load(f1), json.load(f2)
        check(not L.json_diff(L.without_from(d1), d2), f"{name}: -o's description == probe --root -o's",
              "\n".join(L.json_diff(L.without_from(d1), d2)))
        t1, t2 = export_tables(out_ref), export_tables(out_root)
        check(t1 and t1 == t2, f"{name}: -o's export tables ({len(t1)}) == probe --root -o's ({len(t2)})",
              "\n".join(sorted(set(t1) ^ set(t2))[:10]) or "contents differ: " +
              ", ".join(k for k in t1 if t1[k] != t2.get(k))[:600])
        check(sorted(os.listdir(out_ref)) == ["d.json", "exports"],
              f"{name}: -o wrote d.json and exports/ beside it, nothing else", os.listdir(out_ref))


def export_tables(folder):
    out = {}
    top = os.path.join(folder, "exports")
    for dirpath, _, files in os.walk(top):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                data = fh.read()
            if f.endswith(".gz"):
                data = gzip.decompress(data)
            out[os.path.relpath(p, top)] = L.sha256_hex(data)
    return out


# --- check ---------------------------------------------------------------------------------------------------------

def normalized_verdict(doc, names):
    """The verdict with the image's name and summary dropped, and every string naming the image (the root's
    path, its folder name, the reference, the name the reference got) replaced by <IMAGE>."""
    names = sorted({n for n in names if n}, key=len, reverse=True)

    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, str):
            for n in names:
                v = v.replace(n, "<IMAGE>")
            return v
        return v
    doc = json.loads(json.dumps(doc))
    if isinstance(doc.get("image"), dict):
        doc["image"].pop("name", None)
        doc["image"].pop("summary", None)
    return walk(doc)


def part_check():
    b = W.base
    wheels = L.samples(A.samples)
    if not check(bool(wheels), f"sample wheels under {A.samples}"):
        return
    for wheel in wheels:
        wn = os.path.basename(wheel)
        cache = fresh_cache("check-root")
        r0 = wc(["check", wheel, "--image", b.root, *b.env_args("--image-env", W.config_env), "--json", "-q"],
                env_for(cache))
        if not check(r0.rc in (0, 1, 3, 4), f"{wn}: check --image ROOT gives a verdict", r0.show()):
            continue
        ref_doc0 = r0.json()
        want = normalized_verdict(ref_doc0, [b.root, os.path.basename(b.root), ref_doc0.get("image", {}).get("name")])
        for name, (ref, extra) in W.refs.items():
            r = wc(["check", wheel, "--image", ref, "--json", "-q"], env_for(W.ref_caches.get(name) or
                                                                              fresh_cache(name), extra))
            if not check(r.rc == r0.rc, f"{wn} vs {name}: check --image REF exits {r0.rc} as against the root",
                         r.show()):
                continue
            try:
                doc = r.json()
            except ValueError:
                check(False, f"{wn} vs {name}: check --json prints JSON", r.show())
                continue
            want_sum = image_summary(ref, "linux/amd64", "the image's only platform", W.digests[name])
            check(summary_of(doc) == want_sum,
                  f"{wn} vs {name}: the image summary names the reference, the platform and why, the digest",
                  f"{summary_of(doc)!r}\nwant {want_sum!r}")
            got = normalized_verdict(doc, [ref, doc.get("image", {}).get("name"), b.root])
            check(got.get("verdict") == want.get("verdict"),
                  f"{wn} vs {name}: the verdict ({got.get('verdict')}) is the root's ({want.get('verdict')})")
            diff = L.json_diff(got, want)
            check(not diff, f"{wn} vs {name}: the findings, conditions and members are the root's", "\n".join(diff))
    # The text answer: the summary on the line under the image's name; without -q, an image: line on stderr.
    wheel = next((w for w in wheels if "hello_native" in w), wheels[0])
    for name in ("oci", "registry", "docker-archive"):
        ref, extra = W.refs[name]
        r = wc(["check", wheel, "--image", ref], env_for(W.ref_caches.get(name) or fresh_cache(name), extra))
        want = image_summary(ref, "linux/amd64", "the image's only platform", W.digests[name])
        lines = r.out.splitlines()
        under = [lines[i + 1].strip() for i, ln in enumerate(lines[:-1]) if want not in ln and want in lines[i + 1]]
        check(r.rc in (0, 1, 3, 4) and under, f"check (text) --image {name}: the summary on the line under the "
              "image's name", r.show(3000))
        said = f"image: {ref} is {W.digests[name]} (linux/amd64, the image's only platform)"
        check(said in r.err.splitlines(), f"check (text) --image {name}: stderr says {said!r}", r.err[-800:])
    outside_clean(W.snap, "the checks")


def image_summary(ref, plat, why, digest):
    """What check --image REF says of the image (the verdict's image.summary and the text's line under its name)."""
    return f"{ref}, {plat} ({why}), manifest {digest}"


def summary_of(doc):
    image = doc.get("image") if isinstance(doc, dict) else None
    return image.get("summary") if isinstance(image, dict) else None


# --- cache ---------------------------------------------------------------------------------------------------------

def part_cache():
    b = W.base
    ref, _ = W.refs["registry"]
    cache = fresh_cache("cache")
    e = env_for(cache)
    r1 = wc(["probe", ref, "--name", NAME, "--json"], e)
    if not check(r1.rc == 0, "cold probe of the registry reference", r1.show()):
        return
    cold_gets = W.reg.blob_gets()
    mark = len(W.reg.log_text())
    check(any(b.layer[0]["digest"] in g for g in cold_gets), "the registry's log shows the cold probe's layer GET",
          "\n".join(cold_gets[-5:]))
    r2 = wc(["probe", ref, "--name", NAME, "--json"], e)
    if check(r2.rc == 0, "second probe of the registry reference", r2.show()):
        check(r2.json() == r1.json(), "the second probe's description is the first's")
        check(any("cached" in ln for ln in r2.probe_lines()), "the second probe says on stderr it is cached",
              r2.err[-600:])
    gets = W.reg.blob_gets(mark)
    check(not gets, "the second probe fetched no blob (the registry's access log)", "\n".join(gets))
    asked = re.findall(r'"GET /v2/deb12/root/manifests/bookworm HTTP/[0-9.]+" (\d+)', W.reg.log_text()[mark:])
    check(asked == ["304"], "the second probe asked for the tag once, conditionally, and the registry said 304",
          asked)
    # Offline (WHEELCHECK_OFFLINE=1): the warm cache answers without a request; a cold one refuses, saying so.
    mark = len(W.reg.log_text())
    r_off = wc(["probe", ref, "--name", NAME, "--json", "-q"], dict(e, WHEELCHECK_OFFLINE="1"))
    if check(r_off.rc == 0, "offline, the warm cache answers the tag", r_off.show()):
        check(r_off.json() == r1.json(), "offline: the same description")
    check(len(W.reg.log_text()) == mark, "offline: no request reached the registry", W.reg.log_text()[mark:][:400])
    r_cold = wc(["probe", ref, "--json", "-q"], env_for(fresh_cache("offline"), {"WHEELCHECK_OFFLINE": "1"}))
    check(r_cold.rc == 2 and "offline" in r_cold.err, "offline on a cold cache: exit 2, saying it is offline",
          r_cold.show())
    # check --image REF with the same cache: the probed image is read from the cache.
    wheel = next((w for w in L.samples(A.samples) if "hello_native" in w), None)
    if wheel:
        mark = len(W.reg.log_text())
        r = wc(["check", wheel, "--image", ref, "--json", "-q"], e)
        check(r.rc in (0, 1, 3, 4), "check --image REF after the probe gives a verdict", r.show())
        gets = W.reg.blob_gets(mark)
        check(not gets, "check --image REF after the probe fetched no blob", "\n".join(gets))
    # by digest: the same description
    dref = f"docker://{W.reg.host}/deb12/root@{b.manifest['digest']}"
    r = wc(["probe", dref, "--name", NAME, "--json", "-q"], e)
    if check(r.rc == 0, "probe by digest (REPO@sha256:...)", r.show()):
        check(L.without_from(r.json()) == L.without_from(r1.json()), "by digest: the same description")
        check(r.json().get("from", {}).get("digest") == b.manifest["digest"], "by digest: from.digest is it")
    # The tag moves: the same base layer and a second one, a new Env. Re-resolved, not served stale; the shared
    # layer is not fetched again.
    t = L.Tar().dir("opt").dir("opt/vendor").dir("opt/vendor/lib").file("opt/vendor/MOVED", b"moved\n")
    extra_layer = b.layout.layer(t.bytes(), "gzip")
    moved_env = b.env + ["MOVED=1"]
    man2, _, cfg2 = b.layout.image([b.layer, extra_layer], env=moved_env, tag="moved")
    W.skopeo.copy(f"oci:{b.layout.path}:moved", f"docker://{W.reg.host}/deb12/root:bookworm")
    mark = len(W.reg.log_text())
    r3 = wc(["probe", ref, "--name", NAME, "--json"], e)
    if check(r3.rc == 0, "probe after the tag moved", r3.show()):
        d3 = r3.json()
        check(d3.get("from", {}).get("digest") == man2["digest"], "after the move: from.digest is the new manifest's",
              d3.get("from"))
        check(d3.get("env", {}).get("MOVED") == "1", "after the move: the new config's Env is in the description",
              d3.get("env"))
    gets = W.reg.blob_gets(mark)
    check(not any(b.layer[0]["digest"] in g for g in gets), "after the move: the shared base layer was not fetched",
          "\n".join(gets))
    check(any(cfg2["digest"] in g for g in gets), "after the move: the new config was fetched", "\n".join(gets))
    # put the tag back for the parts after this one
    W.skopeo.copy(b.ref, f"docker://{W.reg.host}/deb12/root:bookworm")
    cache_verified(cache, "cache")
    outside_clean(W.snap, "the cache part")


# --- auth ----------------------------------------------------------------------------------------------------------

AUTH_WORDS = re.compile(r"(?i)(401|unauthori[sz]ed|authenticat|credential|denied|login)")


def part_auth():
    ref, _ = W.refs["registry-auth"]
    host = W.reg_auth.host
    secrets = [PASSWORD, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()]

    def no_secret(r, what):
        check(not any(s in r.out or s in r.err for s in secrets), f"{what}: the password is never printed")

    r = wc(["probe", ref, "--json"], env_for(fresh_cache("noauth")))
    check(r.rc == 2 and r.error_lines() and AUTH_WORDS.search(" ".join(r.error_lines())),
          "no credentials: exit 2 and a wheelcheck: error: line saying authentication failed", r.show())
    check(host in " ".join(r.error_lines()) or "deb12/root" in " ".join(r.error_lines()),
          "no credentials: the error names the registry or repository", r.error_lines())
    bad = L.docker_config(os.path.join(A.work, "docker-config-bad"), host, USER, "wrong-password")
    r = wc(["probe", ref, "--json"], env_for(fresh_cache("badauth"), {"DOCKER_CONFIG": bad}))
    check(r.rc == 2 and r.error_lines() and AUTH_WORDS.search(" ".join(r.error_lines())),
          "a wrong password: exit 2 and an error saying authentication failed", r.show())
    no_secret(r, "a wrong password")
    # REGISTRY_AUTH_FILE comes before DOCKER_CONFIG
    good_file = os.path.join(W.docker_config, "config.json")
    r = wc(["probe", ref, "--json", "-q"], env_for(fresh_cache("authfile"),
                                                   {"DOCKER_CONFIG": bad, "REGISTRY_AUTH_FILE": good_file}))
    check(r.rc == 0, "REGISTRY_AUTH_FILE (right) is read before DOCKER_CONFIG (wrong)", r.show())
    no_secret(r, "REGISTRY_AUTH_FILE")
    # ~/.docker/config.json without DOCKER_CONFIG; it is then removed (HOME must stay as it was)
    dot = os.path.join(W.home, ".docker")
    L.docker_config(dot, host, USER, PASSWORD)
    try:
        snap = L.snapshot(W.home, W.tmp, W.cwd)
        r = wc(["probe", ref, "--json", "-q"], env_for(fresh_cache("homeauth")))
        check(r.rc == 0, "~/.docker/config.json is read without DOCKER_CONFIG", r.show())
        no_secret(r, "~/.docker/config.json")
        diff = L.snapshot_diff(snap, L.snapshot(W.home, W.tmp, W.cwd))
        check(not diff, "~/.docker/config.json: nothing written in HOME", "\n".join(diff))
    finally:
        shutil.rmtree(dot)
    r = wc(["probe", ref, "--json", "-q"], env_for(fresh_cache("dcfg"), {"DOCKER_CONFIG": W.docker_config}))
    check(r.rc == 0, "DOCKER_CONFIG's config.json is read", r.show())
    no_secret(r, "DOCKER_CONFIG")
    outside_clean(W.snap, "the auth part")


# --- bearer --------------------------------------------------------------------------------------------------------

def part_bearer():
    b = W.base
    for mode in ("anonymous", "basic"):
        with L.FakeRegistry() as fake:
            fake.add_layout_image(b.layout, "deb12/root", "bookworm", b.manifest["digest"])
            token = f"tok-{mode}-5d2e"
            body = {"token": token} if mode == "anonymous" else {"access_token": token, "expires_in": 300}
            fake.faults["token"] = {"good": token, "realm_body": json.dumps(body).encode(),
                                    "realm_basic": (USER, PASSWORD) if mode == "basic" else None}
            extra = {}
            if mode == "basic":
                extra["DOCKER_CONFIG"] = L.docker_config(os.path.join(A.work, "docker-config-fake"), fake.host,
                                                         USER, PASSWORD)
            ref = f"docker://{fake.host}/deb12/root:bookworm"
            r = wc(["probe", ref, "--name", NAME, "--json", "-q"], env_for(fresh_cache(f"bearer-{mode}"), extra),
                   timeout=120)
            if check(r.rc == 0, f"bearer token ({mode}): probe exits 0", r.show()):
                diff = L.json_diff(L.without_from(r.json()), W.root_desc)
                check(not diff, f"bearer token ({mode}): the description is probe --root's", "\n".join(diff))
            realm = [q for q in fake.requests if q[1].startswith("/token")]
            check(bool(realm), f"bearer token ({mode}): the realm was asked for a token")
            if realm:
                q = realm[0][1]
                check("service=fake" in q and re.search(r"scope=repository(%3A|:)deb12(%2F|/)root(%3A|:)pull", q),
                      f"bearer token ({mode}): the realm request carries the challenge's service and scope", q)
                auth = realm[0][2].get("Authorization", "")
                if mode == "basic":
                    check(auth.startswith("Basic "), "bearer token (basic): the realm got the basic credentials", auth)
                else:
                    check(not auth, "bearer token (anonymous): the realm got no Authorization", auth)
            served = [q for q in fake.requests if "/manifests/" in q[1] or "/blobs/" in q[1]]
            check(served and any(q[2].get("Authorization") == f"Bearer {token}" for q in served),
                  f"bearer token ({mode}): the manifest and blob requests carry the token")
    outside_clean(W.snap, "the bearer part")


# --- platforms -----------------------------------------------------------------------------------------------------

def part_platforms():
    b = W.base
    arm = L.arm64_root(os.path.join(A.work, "arm64root"))
    arm_layer = b.layout.layer(L.tar_of_dir(arm), "gzip")
    amd, _, _ = b.layout.image([b.layer], platform_in_index=True)
    armd, _, _ = b.layout.image([arm_layer], arch="arm64", variant="v8", env=["PATH=/usr/bin:/bin"],
                                platform_in_index=True)
    b.layout.multi([amd, armd], "multi")
    W.skopeo.copy(f"oci:{b.layout.path}:multi", f"docker://{W.reg.host}/deb12/multi:1", "--all")
    raw = json.loads(W.skopeo("inspect", "--raw", "--tls-verify=false", f"docker://{W.reg.host}/deb12/multi:1").stdout)
    check(sorted(m["digest"] for m in raw.get("manifests", [])) == sorted([amd["digest"], armd["digest"]]),
          "the registry holds the index with both manifests", raw)
    for ref in (f"docker://{W.reg.host}/deb12/multi:1", f"oci:{b.layout.path}:multi"):
        kind = ref.split(":", 1)[0]
        cache = fresh_cache("platforms")
        for plat, arch, digest in (("linux/arm64", "aarch64", armd["digest"]),
                                   ("linux/arm64/v8", "aarch64", armd["digest"]),
                                   ("linux/amd64", "x86_64", amd["digest"]),
                                   (None, {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}.get(MACHINE_PLATFORM),
                                    amd["digest"] if MACHINE_PLATFORM == "linux/amd64" else armd["digest"])):
            args = ["probe", ref, "--name", NAME, "--json"] + (["--platform", plat] if plat else [])
            what = f"{kind} --platform {plat}" if plat else f"{kind} without --platform (this machine's)"
            r = wc(args, env_for(cache))
            if not check(r.rc == 0, f"{what}: exit 0", r.show()):
                continue
            d = r.json()
            check(d.get("arch", {}).get("value") == arch, f"{what}: arch {arch}", d.get("arch"))
            f = d.get("from", {})
            check(f.get("digest") == digest, f"{what}: from.digest is that platform's manifest", f)
            want_plat = plat or MACHINE_PLATFORM
            check(str(f.get("platform", "")).startswith(want_plat.rsplit("/v8", 1)[0]),
                  f"{what}: from.platform names {want_plat}", f)
            check(any(want_plat.rsplit("/v8", 1)[0] in ln for ln in r.probe_lines()),
                  f"{what}: a probe: line names the platform chosen", r.err[-600:])
        r = wc(["probe", ref, "--platform", "linux/s390x", "--json"], env_for(cache))
        check(r.rc == 2 and any("s390x" in ln for ln in r.error_lines()),
              f"{kind} --platform linux/s390x: exit 2, an error naming the platform the index lacks", r.show())
        cache_verified(cache, f"platforms {kind}")
    # check picks the wheel's architecture
    ref = f"docker://{W.reg.host}/deb12/multi:1"
    for wheel in L.samples(A.samples):
        want = "linux/arm64" if "aarch64" in wheel else "linux/amd64" if "x86_64" in wheel else None
        if not want:
            continue
        r = wc(["check", wheel, "--image", ref, "--json"], env_for(fresh_cache("platforms-check")))
        wn = os.path.basename(wheel)
        if check(r.rc in (0, 1, 3, 4), f"check {wn} --image (index): a verdict", r.show()):
            digest = amd["digest"] if want == "linux/amd64" else armd["digest"]
            # the platform of the manifest chosen, its variant included (the index's arm64 entry is arm64/v8)
            chosen = "linux/amd64" if want == "linux/amd64" else "linux/arm64/v8"
            want_sum = image_summary(ref, chosen, "the wheel's architecture", digest)
            check(summary_of(r.json_or_none()) == want_sum, f"check {wn}: the image summary is {want_sum!r}",
                  repr(summary_of(r.json_or_none())))
            said = f"image: {ref} is {digest} ({chosen}"
            check(any(ln.startswith(said) and "the wheel's architecture" in ln for ln in r.err.splitlines()),
                  f"check {wn}: stderr says {said}..., the wheel's architecture)", r.err[-600:])
            other = "x86_64" if want == "linux/arm64" else "aarch64"
            check('"wrong-arch"' not in r.out and f"the image is {other}" not in r.out,
                  f"check {wn}: no architecture mismatch (no wrong-arch, no \"the image is {other}\")", r.out[:600])
    # check --platform overrides the wheel's architecture: an aarch64 wheel against the amd64 manifest
    arm_wheel = next((w for w in L.samples(A.samples) if "aarch64" in w), None)
    if arm_wheel:
        r = wc(["check", arm_wheel, "--image", ref, "--platform", "linux/amd64", "--json"],
               env_for(fresh_cache("platforms-check")))
        check(r.rc == 1 and "the image is x86_64" in r.out,
              "check of the aarch64 sample --platform linux/amd64: exit 1 against the amd64 manifest (\"the image "
              "is x86_64\")", r.show())
        want_sum = image_summary(ref, "linux/amd64", "--platform linux/amd64", amd["digest"])
        check(summary_of(r.json_or_none()) == want_sum,
              f"check --platform linux/amd64: the image summary is {want_sum!r}", r.out[:600])
    outside_clean(W.snap, "the platforms part")


# --- settings ------------------------------------------------------------------------------------------------------

def part_settings():
    """The settings file's images take references too: oci:DIR relative to the file's folder (not the working
    folder), docker:// as it is. gates and config run in another folder than the layout's."""
    b = W.base
    wheels = L.samples(A.samples)
    wheel = next((w for w in wheels if "hello_native" in w), wheels[0] if wheels else None)
    if not check(wheel is not None, f"a sample wheel under {A.samples}"):
        return
    proj = os.path.join(W.work, "settings-project")
    os.makedirs(proj, exist_ok=True)
    rel = os.path.relpath(b.layout.path, proj)
    elsewhere = tempfile.mkdtemp(prefix="cwd-", dir=W.work)
    absolute = f"oci:{os.path.normpath(os.path.join(proj, rel))}:bookworm"
    for name, written, resolved in (("oci", f"oci:{rel}:bookworm", absolute),
                                    ("registry", W.refs["registry"][0], W.refs["registry"][0])):
        with open(os.path.join(proj, "wheelcheck.toml"), "w") as f:
            f.write(f'images = ["{written}"]\n')
        cache = fresh_cache(f"settings-{name}")
        r = wc(["config", "--config", os.path.join(proj, "wheelcheck.toml")], env_for(cache), cwd=elsewhere)
        check(r.rc == 0 and resolved in r.out, f"settings ({name}): config shows the image as {resolved}", r.show())
        g = wc(["gates", wheel, "--config", os.path.join(proj, "wheelcheck.toml"), "--format", "json", "-q"],
               env_for(cache), cwd=elsewhere)
        ref = wc(["gates", wheel, "--image", resolved, "--format", "json", "-q"], env_for(cache), cwd=elsewhere)
        check(g.rc == ref.rc == 0 and g.out == ref.out,
              f"settings ({name}): gates with the file's image equal gates --image {resolved}", g.show() + ref.show())


PARTS = {"refs": part_refs, "check": part_check, "cache": part_cache, "auth": part_auth, "bearer": part_bearer,
         "settings": part_settings, "platforms": part_platforms}


def main():
    global A, PART
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--work", help="work here and keep it (default: a temporary folder, removed)")
    ap.add_argument("parts", nargs="*", metavar="PART")
    A = ap.parse_args()
    unknown = [p for p in A.parts if p not in PARTS]
    if unknown:
        ap.error(f"unknown part {unknown}: one of {', '.join(PARTS)}")
    A.wheelcheck, A.samples = os.path.abspath(A.wheelcheck), os.path.abspath(A.samples)
    L.need_tools("dpkg-query", "skopeo", "docker-registry", "zstd")
    L.need_wheelcheck(A.wheelcheck)
    keep = bool(A.work)
    A.work = os.path.abspath(A.work) if A.work else tempfile.mkdtemp(prefix="wheelcheck-images-")
    if keep:
        os.makedirs(A.work, exist_ok=True)
        if os.listdir(A.work):
            ap.error(f"--work {A.work} is not empty")
    t0 = time.time()
    try:
        with contextlib.ExitStack() as stack:
            setup(stack)
            if "check" in A.parts and "refs" not in A.parts:
                A.parts.insert(0, "refs")  # check uses the refs' caches
            for name in A.parts or list(PARTS):
                PART = name
                t1 = time.time()
                print(f"part {name}:", flush=True)
                try:
                    PARTS[name]()
                except Exception:
                    check(False, "ran to its end", traceback.format_exc())
                print(f"part {name}: {time.time() - t1:.1f} s", flush=True)
    except SystemExit as x:
        if x.code not in (None, 1):
            raise
    except Exception:
        check(False, "the fixtures were built", traceback.format_exc())
    finally:
        if not keep:
            shutil.rmtree(A.work, ignore_errors=True)
    print(f"{len(FAILURES)} failed ({time.time() - t0:.1f} s)")
    for f in FAILURES:
        print(f"  FAILED  {f}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

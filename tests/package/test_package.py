#!/usr/bin/env python3
"""The packaged wheelcheck where its users run it (scripts/package.sh's output in dist/), label "package":

  venv      the x86_64 wheel installed offline into a fresh venv (and with pip --target): `wheelcheck`
            and `python -m wheelcheck` run the static binary, which finds the db pip installed beside it;
            `images` and a check of each sample wheel answer exactly as the build tree's wheelcheck does.
  chroot    the static binary alone in a root folder with no libc, libzip, OpenSSL or libstdc++: the same
            answers; a remote check over https://localhost/ resolves the name with /etc/hosts even where
            nsswitch.conf names only a module that does not exist, verifies the server with
            $SSL_CERT_FILE, and ignores an OpenSSL configuration that would fail if it were read.
  aarch64   the aarch64 binary under qemu-aarch64-static prints what the x86_64 one prints.
  tarball   each tarball holds bin/wheelcheck, the db and the licences, and runs from where it is unpacked.

    test_package.py --dist DIR --samples DIR --reference BUILD_TREE_WHEELCHECK [--only NAME]

Exit 0 when every check holds, 1 on a failure, 77 (skipped) when dist/ has no packages: run
scripts/package.sh first (scripts/test.sh does).
"""
import argparse
import glob
import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tarfile
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from wheelcheck_test import Checks  # noqa: E402

CHECKS = Checks(indent="")
check, FAILURES = CHECKS.check, CHECKS.failures
# A name only the chroot's /etc/hosts knows: libcurl answers `localhost` itself (RFC 6761) without asking
# glibc, so only another name shows that the static glibc's own lookup works.
INDEX_HOST = "index.wheelcheck.test"
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"  # the tests' environments have no PATH to find it with


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 300)
    return subprocess.run(cmd, **kw)


def clean_env(**extra):
    """No WHEELCHECK_* or proxy variables of the caller's: the binary must find its db by itself."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WHEELCHECK_") and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


def answers(binary, samples, cwd, env, prefix=()):
    """What a binary says: `images`, and the verdict JSON and exit code of each sample wheel on its image."""
    out = {}
    r = run([*prefix, binary, "images"], cwd=cwd, env=env)
    out["images"] = (r.returncode, without_db_line(r.stdout))
    for wheel in samples:
        image = "ascend-cann9" if "aarch64" in wheel else "cuda13.0"
        r = run([*prefix, binary, "--no-cache", "--json", wheel, "--image", image], cwd=cwd, env=env)
        try:
            doc = json.loads(r.stdout)
        except json.JSONDecodeError:
            doc = {"unparsable": r.stdout[-2000:], "stderr": r.stderr[-2000:]}
        out[os.path.basename(wheel)] = (r.returncode, doc)
    return out


def without_db_line(text):
    """`images` ends by naming the db it read: the one thing that differs between installations."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("db: "))


def db_used(cmd, **kw):
    """The db folder a wheelcheck command line reads, as `images` names it."""
    r = run([*cmd, "images"], **kw)
    return next((line[4:].split("   ")[0] for line in r.stdout.splitlines() if line.startswith("db: ")), None)


def same_answers(got, want, what):
    for key, value in want.items():
        if not check(got.get(key) == value, f"{what}: {key} answers as the build tree's wheelcheck does"):
            print(f"      want {str(value)[:600]}\n      got  {str(got.get(key))[:600]}")


def test_venv(args, wheel, samples, reference):
    with tempfile.TemporaryDirectory(prefix="wc-venv-") as tmp:
        venv = os.path.join(tmp, "venv")
        r = run([sys.executable, "-m", "venv", venv])
        if not check(r.returncode == 0, f"python -m venv ({r.stderr.strip()[-300:]})"):
            return
        py = os.path.join(venv, "bin", "python")
        r = run([py, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check", wheel])
        if not check(r.returncode == 0, f"pip install --no-index {os.path.basename(wheel)} ({r.stderr.strip()[-500:]})"):
            return
        licenses = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "wheelcheck-*.dist-info",
                                          "licenses", "*"))
        names = {os.path.basename(p) for p in licenses}
        check({"glibc.copyright", "gcc-runtime-libstdc++.copyright", "openssl.copyright", "curl.copyright",
               "libzip.copyright", "lief.copyright", "README"} <= names,
              f"the installed wheel carries the licences of what is linked ({len(names)} files)")
        exe = os.path.join(venv, "bin", "wheelcheck")
        check(os.access(exe, os.X_OK), "pip put an executable wheelcheck in the venv's bin/")
        check(os.path.isdir(os.path.join(venv, "share", "wheelcheck", "db", "images")),
              "pip put the db in <venv>/share/wheelcheck/db")
        r = run([exe, "--version"], env=clean_env(), cwd="/")
        check(r.returncode == 0 and "(static, x86_64;" in r.stdout, f"--version names the build: {r.stdout.strip()}")
        # What the binary was built from: dist/SOURCES.used, and --version says whether any input moved.
        used_path = os.path.join(args.dist, "SOURCES.used")
        if check(os.path.exists(used_path), "dist/SOURCES.used records what the packages were built from"):
            moved = "moved: the lock pins" in open(used_path, encoding="utf-8").read()
            check(("sources moved from the lock: " if moved else "sources as pinned in the lock") in r.stdout,
                  f"--version says the sources were {'moved' if moved else 'as pinned'}, as SOURCES.used does")
        got = answers(exe, samples, "/", clean_env())
        same_answers(got, reference, "venv wheelcheck")
        db = db_used([exe], env=clean_env(), cwd="/")
        check(db == os.path.join(venv, "share/wheelcheck/db"), f"the venv's wheelcheck reads the db pip installed: {db}")
        r = run([py, "-m", "wheelcheck", "images"], env=clean_env(), cwd="/")
        check((r.returncode, without_db_line(r.stdout)) == reference["images"],
              "python -m wheelcheck images is the same command")
        # The man page: in <venv>/share/man/man1, which man finds from the venv's bin/ on PATH.
        page = os.path.join(venv, "share", "man", "man1", "wheelcheck.1")
        if check(os.path.isfile(page), "pip put the man page in <venv>/share/man/man1/wheelcheck.1") and shutil.which("man"):
            path = os.path.join(venv, "bin") + ":/usr/bin:/bin"
            env = clean_env(PATH=path)
            env.pop("MANPATH", None)  # man-db then derives the search path from PATH (<dir>/../share/man)
            r = run(["man", "-w", "wheelcheck"], env=env, cwd="/")
            check(r.returncode == 0 and r.stdout.strip() == page,
                  f"`man wheelcheck` finds it with the venv's bin/ on PATH ({r.stdout.strip() or r.stderr.strip()})")
            r = run([exe, "help", "--man"], env=clean_env(), cwd="/")
            check(r.returncode == 0 and r.stdout == open(page, encoding="utf-8").read(),
                  "the installed page is the installed binary's own `help --man`")
        r = run([py, "-m", "wheelcheck", "--version"], env=clean_env(), cwd="/")
        check("(static, x86_64;" in r.stdout, "python -m wheelcheck --version runs the static binary")

        # pip install --target: the package, bin/ and share/ side by side; the shim finds bin/wheelcheck.
        target = os.path.join(tmp, "target")
        r = run([py, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check",
                 "--target", target, wheel])
        if check(r.returncode == 0, "pip install --target"):
            r = run([sys.executable, "-m", "wheelcheck", "images"], cwd="/", env=clean_env(PYTHONPATH=target))
            check((r.returncode, without_db_line(r.stdout)) == reference["images"],
                  "python -m wheelcheck from a --target folder finds its binary")
            db = db_used([sys.executable, "-m", "wheelcheck"], cwd="/", env=clean_env(PYTHONPATH=target))
            check(db == os.path.join(target, "share/wheelcheck/db"), f"... and the db beside it: {db}")


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def https_server(folder, workdir):
    """An https server on 127.0.0.1 for `localhost`, with a CA made here; returns (server, port, ca)."""
    ca_key, ca, key, csr, cert = (os.path.join(workdir, n) for n in ("ca.key", "ca.pem", "srv.key", "srv.csr", "srv.pem"))
    ext = os.path.join(workdir, "ext.cnf")
    with open(ext, "w") as f:
        f.write(f"subjectAltName=DNS:localhost,DNS:{INDEX_HOST}\nbasicConstraints=CA:FALSE\n")
    for cmd in (["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
                 "-days", "2", "-subj", "/CN=wheelcheck test CA"],
                ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
                ["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
                 "-days", "2", "-extfile", ext]):
        r = run(cmd, env={"PATH": os.environ["PATH"]})
        if r.returncode != 0:
            raise RuntimeError(f"{cmd[0:2]}: {r.stderr}")
    handler = lambda *a, **kw: Quiet(*a, directory=folder, **kw)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1], ca


def test_chroot(args, binary, samples, reference):
    if os.geteuid() != 0:
        check(False, "chroot needs root (tests run as root here and in CI)")
        return
    with tempfile.TemporaryDirectory(prefix="wc-chroot-") as root:
        for d in ("bin", "share/wheelcheck", "etc", "wheels", "tmp", "usr/lib/ssl"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        shutil.copy2(binary, os.path.join(root, "bin/wheelcheck"))
        shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(binary)), "share/wheelcheck/db"),
                        os.path.join(root, "share/wheelcheck/db"))
        for w in samples:
            shutil.copy2(w, os.path.join(root, "wheels"))
        with open(os.path.join(root, "etc/hosts"), "w") as f:
            f.write(f"127.0.0.1 localhost {INDEX_HOST}\n")
        # A module that does not exist: a lookup that obeyed this file would find nothing.
        with open(os.path.join(root, "etc/nsswitch.conf"), "w") as f:
            f.write("hosts: wheelcheck_no_such_module\n")
        # An OpenSSL configuration that fails loudly if read: it activates a provider that does not exist.
        evil = ("config_diagnostics = 1\nopenssl_conf = conf\n[conf]\nproviders = providers\n"
                "[providers]\nevil = evil\n[evil]\nmodule = /no/such/provider.so\nactivate = 1\n")
        for cnf in ("usr/lib/ssl/openssl.cnf", "evil.cnf"):
            with open(os.path.join(root, cnf), "w") as f:
                f.write(evil)
        elves = [p for p in glob.glob(os.path.join(root, "**", "*"), recursive=True)
                 if os.path.isfile(p) and open(p, "rb").read(4) == b"\x7fELF"]
        check(elves == [os.path.join(root, "bin/wheelcheck")],
              f"the only ELF file in the root folder is wheelcheck: no libc, libzip, OpenSSL or libstdc++ ({elves})")
        check(not os.path.exists(os.path.join(root, "proc/self")), "and no /proc")
        inside = [f"wheels/{os.path.basename(w)}" for w in samples]
        env = {"PATH": "/bin", "NO_COLOR": "1", "HOME": "/tmp", "OPENSSL_CONF": "/evil.cnf"}
        got = answers("/bin/wheelcheck", inside, "/", env, prefix=(CHROOT, root))
        # the verdicts name the wheel by the path given; compare with the reference under the same names
        same_answers(got, reference, "chroot wheelcheck")

        # A remote check by name over https, inside the chroot.
        with tempfile.TemporaryDirectory(prefix="wc-tls-") as tls:
            server, port, ca = https_server(os.path.dirname(samples[0]), tls)
            try:
                shutil.copy2(ca, os.path.join(root, "ca.pem"))
                wheel = next(w for w in samples if "flagtree" in w)
                want = reference[os.path.basename(wheel)]
                for host in ("localhost", INDEX_HOST):
                    url = f"https://{host}:{port}/{os.path.basename(wheel)}"
                    r = run([CHROOT, root, "/bin/wheelcheck", "--no-cache", "--json", url, "--image", "cuda13.0"],
                            env={**env, "SSL_CERT_FILE": "/ca.pem"}, cwd="/")
                    try:
                        doc = json.loads(r.stdout)
                    except json.JSONDecodeError:
                        doc = None
                    check(doc is not None and r.returncode == want[0] and doc.get("verdict") == want[1].get("verdict"),
                          f"{url} checked from the chroot: exit {r.returncode}, verdict "
                          f"{doc.get('verdict') if doc else None} ({r.stderr.strip()[-400:]})")
                r = run([CHROOT, root, "/bin/wheelcheck", "--no-cache", "--json", url, "--image", "cuda13.0"],
                        env=env, cwd="/")
                check(r.returncode == 2 and "certificate" in r.stderr.lower() + r.stdout.lower(),
                      "without the test CA the same URL is refused (the certificate is verified)")
            finally:
                server.shutdown()


def test_aarch64(args, x86, arm):
    qemu = shutil.which("qemu-aarch64-static")
    if not check(qemu is not None, "qemu-aarch64-static is installed (scripts/install-deps.sh)"):
        return
    r = run([qemu, arm, "--version"], env=clean_env())
    check(r.returncode == 0 and "(static, aarch64;" in r.stdout, f"aarch64 --version: {r.stdout.strip()}")
    samples = sorted(glob.glob(os.path.join(args.samples, "*.whl")))
    db = os.path.join(os.path.dirname(os.path.dirname(arm)), "share/wheelcheck/db")
    check(os.path.isdir(db), "the aarch64 stage has its db beside the binary")
    want = answers(x86, samples, "/", clean_env())
    got = answers(arm, samples, "/", clean_env(), prefix=(qemu,))
    for key, value in want.items():
        check(got.get(key) == value, f"aarch64 under qemu: {key} answers exactly as x86_64")


def test_tarball(args, tarball, arch, reference):
    with tempfile.TemporaryDirectory(prefix="wc-tar-") as tmp:
        with tarfile.open(tarball) as t:
            names = t.getnames()
            t.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(tmp)  # noqa: S202
        top = os.path.join(tmp, os.path.basename(tarball)[: -len(".tar.gz")])
        for rel in ("bin/wheelcheck", "share/wheelcheck/db/images", "share/man/man1/wheelcheck.1", "licenses/glibc.copyright",
                    "licenses/openssl.copyright", "licenses/curl.copyright", "licenses/README"):
            check(os.path.exists(os.path.join(top, rel)), f"{os.path.basename(tarball)} holds {rel}")
        check(all(n.startswith(os.path.basename(top) + "/") or n == os.path.basename(top) for n in names),
              "everything in the tarball is under its one top folder")
        if arch == "x86_64":
            r = run([os.path.join(top, "bin/wheelcheck"), "images"], env=clean_env(), cwd="/")
            check((r.returncode, without_db_line(r.stdout)) == reference["images"], "the unpacked tarball runs")
            db = db_used([os.path.join(top, "bin/wheelcheck")], env=clean_env(), cwd="/")
            check(db == os.path.join(top, "share/wheelcheck/db"), f"... and reads the db beside it: {db}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dist", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--reference", required=True, help="the build tree's (dynamic) wheelcheck")
    p.add_argument("--stage-root", help="build-package/ (the staged binaries; default: beside --dist)")
    p.add_argument("--only", choices=["venv", "chroot", "aarch64", "tarball"])
    args = p.parse_args()
    args.dist, args.samples, args.reference = map(os.path.abspath, (args.dist, args.samples, args.reference))
    wheels = {a: glob.glob(os.path.join(args.dist, f"wheelcheck-*-py3-none-manylinux_2_17_{a}.manylinux2014_{a}.whl"))
              for a in ("x86_64", "aarch64")}
    if not wheels["x86_64"]:
        print(f"SKIP: no wheelcheck wheels in {args.dist}: run scripts/package.sh (scripts/test.sh does)")
        return 77
    stage_root = args.stage_root or os.path.join(os.path.dirname(os.path.abspath(args.dist)), "build-package")
    x86 = os.path.join(stage_root, "x86_64/stage/bin/wheelcheck")
    arm = os.path.join(stage_root, "aarch64/stage/bin/wheelcheck")
    samples = sorted(glob.glob(os.path.join(args.samples, "*.whl")))
    if not samples:
        print(f"FAIL: no sample wheels in {args.samples}")
        return 1
    reference = answers(args.reference, samples, "/", clean_env())
    if args.only in (None, "venv"):
        test_venv(args, wheels["x86_64"][0], samples, reference)
    if args.only in (None, "chroot"):
        # the chroot names the wheels wheels/NAME from its /: the reference is asked the same way
        with tempfile.TemporaryDirectory(prefix="wc-ref-") as ref_root:
            os.makedirs(os.path.join(ref_root, "wheels"))
            for w in samples:
                shutil.copy2(w, os.path.join(ref_root, "wheels"))
            ref_chroot = answers(args.reference, [f"wheels/{os.path.basename(w)}" for w in samples], ref_root,
                                 clean_env())
        test_chroot(args, x86, samples, ref_chroot)
    if args.only in (None, "aarch64"):
        if check(bool(wheels["aarch64"]) and os.path.exists(arm), "the aarch64 wheel and binary were built"):
            test_aarch64(args, x86, arm)
    if args.only in (None, "tarball"):
        for arch in ("x86_64", "aarch64"):
            for t in glob.glob(os.path.join(args.dist, f"wheelcheck-*-linux-{arch}.tar.gz")):
                test_tarball(args, t, arch, reference)
    print(f"{len(FAILURES)} failure(s)" if FAILURES else "all package checks hold")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

"""What the image tier's scripts share (tests/images/README.md): the Debian 12 root made of this machine's
installed packages, an OCI image layout writer (the OCI image spec, with tarfile, gzip and hashlib), the
tools that repack it (skopeo, umoci), Debian's docker-registry on loopback (with and without htpasswd basic
auth), a small fake registry (http.server on 127.0.0.1, the distribution spec's /v2/ from a dict, with
faults), and the runner of wheelcheck.

Nothing is committed as bytes: every root, layer and image is made at test time under a temporary folder.
"""
import base64
import contextlib
import gzip
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import signal
import socket
import socketserver
import stat
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pylib"))
from wheelcheck_test import Checks  # noqa: E402,F401  (re-exported for the scripts)

IN_CI = os.environ.get("CI") == "true"

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = {"gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
             "zstd": "application/vnd.oci.image.layer.v1.tar+zstd",
             "plain": "application/vnd.oci.image.layer.v1.tar"}
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
REF_NAME = "org.opencontainers.image.ref.name"

# The Debian 12 root: glibc, the C++ runtime, zlib, expat, Python 3.11 (interpreter, its stdlib and shared
# library), one extension package (python3-yaml, whose _yaml extension needs libyaml-0-2), libc-bin for
# /sbin/ldconfig and /etc/ld.so.conf, base-files for /etc/os-release. All are installed on a Debian 12 machine
# that ran scripts/install-deps.sh (python3.11, libpython3.11, python3-yaml are in its test list).
ROOT_PACKAGES = ["base-files", "libc6", "libc-bin", "libgcc-s1", "libstdc++6", "zlib1g", "libexpat1",
                 "python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib", "libpython3.11",
                 "libyaml-0-2", "python3-yaml"]
# The image config's environment (it becomes the description's "env", like probe's --env).
ROOT_ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
            "LD_LIBRARY_PATH=/opt/vendor/lib", "VENDOR_HOME=/opt/vendor"]
MERGED = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


# --- skips and failures -----------------------------------------------------------------------------------------

def skip(why):
    """Exit 77 with the reason; under CI=true a missing tool that scripts/install-deps.sh installs fails (1)."""
    if IN_CI:
        print(f"FAIL: {why} (CI=true: scripts/install-deps.sh installs it)", flush=True)
        sys.exit(1)
    print(f"skipped: {why}", flush=True)
    sys.exit(77)


def need_tools(*tools):
    for t in tools:
        if shutil.which(t) is None:
            skip(f"{t} is not installed (Debian package: {TOOL_PACKAGE.get(t, t)})")


TOOL_PACKAGE = {"docker-registry": "docker-registry", "skopeo": "skopeo", "umoci": "umoci", "zstd": "zstd",
                "dpkg-query": "dpkg", "chroot": "coreutils", "ldconfig": "libc-bin"}


def need_wheelcheck(path):
    """The binary exists and its probe takes image references (docker://); else a skip (77), never in CI."""
    if not os.access(path, os.X_OK):
        skip(f"no wheelcheck binary at {path}")
    h = subprocess.run([path, "probe", "--help"], capture_output=True, text=True, timeout=30)
    if "docker://" not in h.stdout + h.stderr:
        # In CI the binary is the one built from the same tree as this test: a probe without references fails.
        if IN_CI:
            print("FAIL: wheelcheck probe --help names no docker:// reference", flush=True)
            sys.exit(1)
        print(f"skipped: {path} probe --help does not mention docker:// (built before image references)",
              flush=True)
        sys.exit(77)


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --- the Debian 12 root -----------------------------------------------------------------------------------------

def dpkg_files(pkg, arch=None):
    name = f"{pkg}:{arch}" if arch else pkg
    p = subprocess.run(["dpkg-query", "-L", name], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    return [line for line in p.stdout.splitlines() if line.startswith("/") and line != "/."]


def _in_root(root, path):
    """Where dpkg's unpacking puts PATH in a merged-/usr root: lib/, bin/, ... through the links into usr/."""
    rel = path.lstrip("/")
    first = rel.split("/", 1)[0]
    if first in MERGED:
        rel = "usr/" + rel
    return os.path.join(root, rel)


def merged_usr(root):
    os.makedirs(os.path.join(root, "usr"), exist_ok=True)
    for d in MERGED[:2] + ("lib", "lib64"):
        os.makedirs(os.path.join(root, "usr", d), exist_ok=True)
        if not os.path.lexists(os.path.join(root, d)):
            os.symlink(f"usr/{d}", os.path.join(root, d))


def copy_packages(root, packages, missing_ok=False):
    """Copies each installed package's files and symlinks from this machine, as `dpkg -L` lists them."""
    for pkg in packages:
        files = dpkg_files(pkg)
        if files is None:
            if missing_ok:
                continue
            skip(f"Debian package {pkg} is not installed (scripts/install-deps.sh)")
        for path in files:
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue  # excluded at install (path-exclude), or a file the admin removed
            dest = _in_root(root, path)
            if stat.S_ISDIR(st.st_mode):
                os.makedirs(dest, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            if os.path.lexists(dest):
                continue
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(path), dest)
            elif stat.S_ISREG(st.st_mode):
                shutil.copy2(path, dest)


def ldconfig(root):
    """The root's own ld.so.cache, by its own /sbin/ldconfig under chroot (else the host's ldconfig -r)."""
    if os.geteuid() == 0 and os.path.exists(os.path.join(root, "usr/sbin/ldconfig")):
        p = subprocess.run(["chroot", root, "/sbin/ldconfig"], capture_output=True, text=True, timeout=120)
        if p.returncode == 0:
            return
    p = subprocess.run(["ldconfig", "-r", root], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"ldconfig -r {root}: {p.stderr}")


def debian_root(root):
    """The Debian 12 root of ROOT_PACKAGES, with /opt/vendor/lib (the config's LD_LIBRARY_PATH) and ld.so.cache."""
    merged_usr(root)
    copy_packages(root, ROOT_PACKAGES)
    for d in ("tmp", "opt/vendor/lib", "usr/local/lib/python3.11/dist-packages"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    ldconfig(root)
    for must in ("usr/lib/x86_64-linux-gnu/libc.so.6", "usr/bin/python3.11", "etc/ld.so.cache",
                 "usr/lib/x86_64-linux-gnu/libyaml-0.so.2"):
        if not os.path.exists(os.path.join(root, must)):
            raise RuntimeError(f"the Debian root lacks {must}")
    yaml_ext = [f for f in os.listdir(os.path.join(root, "usr/lib/python3/dist-packages"))
                if f.startswith("_yaml")]
    if not yaml_ext:
        raise RuntimeError("the Debian root lacks python3-yaml's _yaml extension")
    return root


def arm64_root(root):
    """A small arm64 root: the aarch64 cross glibc's loader and libc (real arm64 ELF files), laid where Debian's
    arm64 libc6 lays them (/lib/aarch64-linux-gnu, merged into usr), and the loader link /lib/ld-linux-aarch64.so.1."""
    src = "/usr/aarch64-linux-gnu/lib"
    if not os.path.exists(os.path.join(src, "libc.so.6")):
        skip("no aarch64 libc at /usr/aarch64-linux-gnu/lib (Debian package libc6-arm64-cross)")
    merged_usr(root)
    dest = os.path.join(root, "usr/lib/aarch64-linux-gnu")
    os.makedirs(dest, exist_ok=True)
    for name in ("ld-linux-aarch64.so.1", "libc.so.6", "libm.so.6"):
        if os.path.exists(os.path.join(src, name)):
            shutil.copy2(os.path.realpath(os.path.join(src, name)), os.path.join(dest, name))
    os.symlink("aarch64-linux-gnu/ld-linux-aarch64.so.1", os.path.join(root, "usr/lib/ld-linux-aarch64.so.1"))
    os.makedirs(os.path.join(root, "etc/ld.so.conf.d"), exist_ok=True)
    with open(os.path.join(root, "etc/ld.so.conf"), "w") as f:
        f.write("include /etc/ld.so.conf.d/*.conf\n")
    with open(os.path.join(root, "etc/ld.so.conf.d/aarch64-linux-gnu.conf"), "w") as f:
        f.write("/usr/local/lib/aarch64-linux-gnu\n/lib/aarch64-linux-gnu\n/usr/lib/aarch64-linux-gnu\n")
    shutil.copy2("/usr/lib/os-release", os.path.join(root, "usr/lib/os-release"))
    os.symlink("../usr/lib/os-release", os.path.join(root, "etc/os-release"))
    return root


# --- layers and the OCI image layout ---------------------------------------------------------------------------

def _norm(ti):
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    return ti


def tar_of_dir(root):
    """An uncompressed tar of ROOT's contents (names relative, no leading ./), sorted, owned by root; hard links
    kept as tar link entries (tarfile does that for files with one inode)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(dirnames) + sorted(filenames):
                full = os.path.join(dirpath, name)
                arc = os.path.relpath(full, root)
                ti = t.gettarinfo(full, arc)
                _norm(ti)
                if ti.isreg():
                    with open(full, "rb") as f:
                        t.addfile(ti, f)
                else:
                    t.addfile(ti)
            # symlinked folders are not descended (os.walk does not follow links by default)
    return buf.getvalue()


class Tar:
    """A layer written entry by entry (for whiteouts, links and the hostile members)."""

    def __init__(self, fmt=tarfile.PAX_FORMAT):
        self.buf = io.BytesIO()
        self.t = tarfile.open(fileobj=self.buf, mode="w", format=fmt)

    def dir(self, name, mode=0o755):
        ti = _norm(tarfile.TarInfo(name))
        ti.type, ti.mode = tarfile.DIRTYPE, mode
        self.t.addfile(ti)
        return self

    def file(self, name, data=b"", mode=0o644, size=None):
        ti = _norm(tarfile.TarInfo(name))
        ti.size, ti.mode = len(data), mode
        self.t.addfile(ti, io.BytesIO(data))
        return self

    def symlink(self, name, target):
        ti = _norm(tarfile.TarInfo(name))
        ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, target, 0o777
        self.t.addfile(ti)
        return self

    def hardlink(self, name, target):
        ti = _norm(tarfile.TarInfo(name))
        ti.type, ti.linkname = tarfile.LNKTYPE, target
        self.t.addfile(ti)
        return self

    def special(self, name, kind, major=0, minor=0):
        ti = _norm(tarfile.TarInfo(name))
        ti.type = {"chr": tarfile.CHRTYPE, "blk": tarfile.BLKTYPE, "fifo": tarfile.FIFOTYPE}[kind]
        ti.devmajor, ti.devminor, ti.mode = major, minor, 0o644
        self.t.addfile(ti)
        return self

    def bytes(self):
        self.t.close()
        return self.buf.getvalue()


def compress(data, how):
    if how == "gzip":
        return gzip.compress(data, compresslevel=1, mtime=0)
    if how == "zstd":
        return subprocess.run(["zstd", "-q", "-1", "-c"], input=data, capture_output=True, check=True).stdout
    if how == "plain":
        return data
    raise ValueError(how)


def descriptor(media_type, data, **extra):
    d = {"mediaType": media_type, "digest": "sha256:" + sha256_hex(data), "size": len(data)}
    d.update(extra)
    return d


class Layout:
    """An OCI image layout (oci-layout, index.json, blobs/sha256/) written per the OCI image spec."""

    def __init__(self, path):
        self.path = path
        self.index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": []}
        os.makedirs(os.path.join(path, "blobs", "sha256"), exist_ok=True)
        with open(os.path.join(path, "oci-layout"), "w") as f:
            json.dump({"imageLayoutVersion": "1.0.0"}, f)
        self.save()

    def blob(self, data, media_type="application/octet-stream", **extra):
        d = descriptor(media_type, data, **extra)
        p = os.path.join(self.path, "blobs", "sha256", d["digest"][7:])
        if not os.path.exists(p):
            with open(p, "wb") as f:
                f.write(data)
        return d

    def blob_path(self, digest):
        return os.path.join(self.path, "blobs", "sha256", digest.split(":", 1)[1])

    def read_blob(self, digest):
        with open(self.blob_path(digest), "rb") as f:
            return f.read()

    def layer(self, tar_bytes, how="gzip"):
        """Returns (descriptor, diff_id)."""
        return self.blob(compress(tar_bytes, how), OCI_LAYER[how]), "sha256:" + sha256_hex(tar_bytes)

    def image(self, layers, env=ROOT_ENV, arch="amd64", os_="linux", variant=None, config_extra=None,
              tag=None, platform_in_index=False):
        """A config and manifest over LAYERS [(descriptor, diff_id)]; tagged in index.json when TAG is given.
        Returns (manifest descriptor, manifest bytes, config descriptor)."""
        cfg = {"architecture": arch, "os": os_, "config": {"Env": list(env), "WorkingDir": "/"},
               "rootfs": {"type": "layers", "diff_ids": [d for _, d in layers]},
               "history": [{"created_by": f"wheelcheck tests/images layer {i}"} for i in range(len(layers))]}
        if variant:
            cfg["variant"] = variant
        if config_extra:
            cfg.update(config_extra)
        cfg_desc = self.blob(json.dumps(cfg, sort_keys=True).encode(), OCI_CONFIG)
        man = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": cfg_desc,
               "layers": [d for d, _ in layers]}
        man_bytes = json.dumps(man, sort_keys=True).encode()
        plat = {"architecture": arch, "os": os_}
        if variant:
            plat["variant"] = variant
        man_desc = self.blob(man_bytes, OCI_MANIFEST)
        if platform_in_index:
            man_desc = dict(man_desc, platform=plat)
        if tag is not None:
            self.tag(tag, man_desc)
        return man_desc, man_bytes, cfg_desc

    def multi(self, manifests, tag):
        """An image index over MANIFESTS (descriptors with platform), tagged in index.json. Returns its descriptor."""
        idx = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}
        d = self.blob(json.dumps(idx, sort_keys=True).encode(), OCI_INDEX)
        self.tag(tag, d)
        return d

    def tag(self, tag, desc):
        self.index["manifests"] = [m for m in self.index["manifests"]
                                   if m.get("annotations", {}).get(REF_NAME) != tag]
        self.index["manifests"].append(dict(desc, annotations={REF_NAME: tag}))
        self.save()

    def save(self):
        with open(os.path.join(self.path, "index.json"), "w") as f:
            json.dump(self.index, f, sort_keys=True)


# --- tools -----------------------------------------------------------------------------------------------------

def run(cmd, timeout=300, env=None, check=True, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL,
                       **kw)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


class Skopeo:
    """skopeo with its own policy (accept anything: the images are ours) and its own HOME (no auth file of the
    user's is read, nothing written to theirs)."""

    def __init__(self, work):
        self.home = os.path.join(work, "skopeo-home")
        os.makedirs(self.home, exist_ok=True)
        self.policy = os.path.join(work, "skopeo-policy.json")
        with open(self.policy, "w") as f:
            json.dump({"default": [{"type": "insecureAcceptAnything"}]}, f)
        self.env = dict(os.environ, HOME=self.home, TMPDIR=self.home, XDG_RUNTIME_DIR=self.home)
        self.env.pop("REGISTRY_AUTH_FILE", None)
        self.env.pop("DOCKER_CONFIG", None)

    def __call__(self, *args, timeout=300):
        return run(["skopeo", "--policy", self.policy, *args], timeout=timeout, env=self.env)

    def copy(self, src, dst, *extra):
        return self("copy", "-q", "--src-tls-verify=false", "--dest-tls-verify=false", *extra, src, dst)


def umoci_unpack(layout, tag, bundle):
    """umoci's own unpacking of LAYOUT:TAG into BUNDLE (its rootfs/ is the referee's world)."""
    run(["umoci", "unpack", "--image", f"{layout}:{tag}", bundle], timeout=300)
    return os.path.join(bundle, "rootfs")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, timeout=20, auth_ok=True):
    """Waits until URL answers any HTTP status (a 401 counts: the server is up)."""
    end = time.time() + timeout
    last = None
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except urllib.error.HTTPError:
            return
        except Exception as x:  # refused while it starts
            last = x
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer in {timeout} s: {last}")


def bcrypt_hash(password):
    """A bcrypt hash for htpasswd (python3-bcrypt; Debian's python3 when this interpreter lacks the module)."""
    try:
        import bcrypt  # noqa: PLC0415
        return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=5, prefix=b"2a")).decode()
    except ImportError:
        py = "/usr/bin/python3"
        code = ("import bcrypt,sys;print(bcrypt.hashpw(sys.argv[1].encode(),"
                "bcrypt.gensalt(rounds=5,prefix=b'2a')).decode())")
        if os.path.exists(py):
            p = subprocess.run([py, "-c", code, password], capture_output=True, text=True)
            if p.returncode == 0:
                return p.stdout.strip()
        skip("no bcrypt module for the registry's htpasswd file (Debian package python3-bcrypt)")


class Registry:
    """Debian's docker-registry (the distribution registry) on 127.0.0.1:PORT, its storage in WORK/storage; with
    USERS ({name: password}) htpasswd basic auth. Its stderr (access log included) goes to WORK/registry.log.
    A context manager: stopped (SIGTERM, then SIGKILL after 10 s) on exit."""

    def __init__(self, work, users=None):
        self.work = work
        os.makedirs(work, exist_ok=True)
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.storage = os.path.join(work, "storage")
        self.log_path = os.path.join(work, "registry.log")
        cfg = ["version: 0.1", "log:", "  level: info", "  accesslog:", "    disabled: false", "storage:",
               "  filesystem:", f"    rootdirectory: {self.storage}", "  delete:", "    enabled: true",
               "  maintenance:", "    uploadpurging:", "      enabled: false", "http:",
               f"  addr: 127.0.0.1:{self.port}", "  secret: wheelcheck-tests-only"]
        if users:
            ht = os.path.join(work, "htpasswd")
            with open(ht, "w") as f:
                for u, pw in users.items():
                    f.write(f"{u}:{bcrypt_hash(pw)}\n")
            cfg += ["auth:", "  htpasswd:", "    realm: wheelcheck-test", f"    path: {ht}"]
        self.config = os.path.join(work, "config.yml")
        with open(self.config, "w") as f:
            f.write("\n".join(cfg) + "\n")
        self.proc = None

    def __enter__(self):
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(["docker-registry", "serve", self.config], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_http(f"http://{self.host}/v2/")
        except Exception:
            self.__exit__(None, None, None)
            raise RuntimeError(f"docker-registry did not start:\n{self.log_text()[-2000:]}")
        return self

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def blob_gets(self, since=0):
        """The GET requests for blobs in the access log after byte SINCE of it."""
        text = self.log_text()[since:]
        return re.findall(r'"GET (/v2/[^ ]*/blobs/sha256:[0-9a-f]+) HTTP', text)


# --- the fake registry -----------------------------------------------------------------------------------------

class FakeRegistry:
    """An HTTP server on 127.0.0.1 serving the distribution spec's /v2/ from dicts:
      manifests[(repo, ref)] = (media_type, bytes)   (ref: a tag or "sha256:...")
      blobs[digest] = bytes
    Faults (self.faults, a dict, read per request): "token": {"realm_body": bytes, "good": TOKEN,
    "realm_basic": (user, pw) or None} answers 401 + a Bearer challenge (realm http://127.0.0.1:PORT/token,
    service "fake", scope repository:REPO:pull) until "Authorization: Bearer TOKEN" is shown; the realm answers
    realm_body (to basic auth only, with realm_basic); "stall": a path regex whose answer sends headers then never the body;
    "redirect_loop": a path regex answered by 302 to itself (alternating two URLs); "basic": (user, pw) needs
    basic auth; "slow": (path regex, bytes per second) sends a matching blob at that rate, in 64 KiB writes.
    Every request is logged in self.requests (method, path, headers)."""

    def __init__(self):
        self.manifests = {}
        self.blobs = {}
        self.faults = {}
        self.requests = []
        self.stop_event = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send(self, code, body=b"", headers=None):
                self.send_response(code)
                hs = {"Content-Length": str(len(body)), "Docker-Distribution-API-Version": "registry/2.0"}
                hs.update(headers or {})
                for k, v in hs.items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def do_HEAD(self):
                self.do_GET()

            def _send_slowly(self, body, rate):
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                if self.command == "HEAD":
                    return
                step = 1 << 16
                for i in range(0, len(body), step):
                    if outer.stop_event.is_set():
                        return
                    self.wfile.write(body[i:i + step])
                    self.wfile.flush()
                    time.sleep(min(step, len(body) - i) / rate)

            def do_GET(self):
                outer.requests.append((self.command, self.path, dict(self.headers)))
                f = outer.faults
                path = self.path.split("?", 1)[0]
                if path == "/token" and "token" in f:
                    need = f["token"].get("realm_basic")
                    if need:
                        want = "Basic " + base64.b64encode(f"{need[0]}:{need[1]}".encode()).decode()
                        if self.headers.get("Authorization") != want:
                            return self._send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}')
                    return self._send(200, f["token"].get("realm_body", b""),
                                      {"Content-Type": "application/json"})
                if "basic" in f:
                    u, pw = f["basic"]
                    want = "Basic " + base64.b64encode(f"{u}:{pw}".encode()).decode()
                    if self.headers.get("Authorization") != want:
                        return self._send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}',
                                          {"WWW-Authenticate": 'Basic realm="fake"'})
                if "token" in f:
                    good = f["token"].get("good")
                    if good is None or self.headers.get("Authorization") != f"Bearer {good}":
                        realm = f"http://127.0.0.1:{outer.port}/token"
                        m = re.match(r"/v2/(.+)/(manifests|blobs)/", path)
                        scope = f"repository:{m.group(1)}:pull" if m else "registry:catalog:*"
                        return self._send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', {
                            "WWW-Authenticate": f'Bearer realm="{realm}",service="fake",scope="{scope}"'})
                if "redirect_loop" in f and re.search(f["redirect_loop"], path):
                    other = path + "x" if not path.endswith("x") else path[:-1]
                    return self._send(302, b"", {"Location": other})
                if "stall" in f and re.search(f["stall"], path):
                    self.send_response(200)
                    self.send_header("Content-Length", "1048576")
                    self.send_header("Content-Type", "application/octet-stream")
                    self.end_headers()
                    self.wfile.flush()
                    outer.stop_event.wait(120)  # never the body (until the server stops)
                    return
                if path in ("/v2/", "/v2"):
                    return self._send(200, b"{}", {"Content-Type": "application/json"})
                m = re.fullmatch(r"/v2/(.+)/manifests/([^/]+)", path)
                if m:
                    key = (m.group(1), m.group(2))
                    if key not in outer.manifests:
                        return self._send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}')
                    mt, body = outer.manifests[key]
                    return self._send(200, body, {"Content-Type": mt,
                                                  "Docker-Content-Digest": "sha256:" + sha256_hex(body)})
                m = re.fullmatch(r"/v2/(.+)/blobs/(sha256:[0-9a-f]+)", path)
                if m:
                    if m.group(2) not in outer.blobs:
                        return self._send(404, b'{"errors":[{"code":"BLOB_UNKNOWN"}]}')
                    if "slow" in f and re.search(f["slow"][0], path):
                        return self._send_slowly(outer.blobs[m.group(2)], f["slow"][1])
                    return self._send(200, outer.blobs[m.group(2)], {"Content-Type": "application/octet-stream"})
                return self._send(404, b"{}")

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request, client_address):
                if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
                    super().handle_error(request, client_address)  # a client hanging up is not the server's error

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.host = f"127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1},
                                       daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

    def add_layout_image(self, layout, repo, tag, manifest_digest):
        """Serves the manifest MANIFEST_DIGEST of LAYOUT (and, for an index, its manifests) and every blob it
        names as REPO:TAG, from the layout's blobs."""
        def add(digest):
            body = layout.read_blob(digest)
            doc = json.loads(body)
            mt = doc.get("mediaType", OCI_MANIFEST)
            self.manifests[(repo, digest)] = (mt, body)
            if "manifests" in doc:
                for m in doc["manifests"]:
                    add(m["digest"])
            else:
                for d in [doc["config"]] + doc["layers"]:
                    self.blobs[d["digest"]] = layout.read_blob(d["digest"])
            return mt, body
        self.manifests[(repo, tag)] = add(manifest_digest)


# --- wheelcheck --------------------------------------------------------------------------------------------------

class Res:
    def __init__(self, argv, rc, out, err, secs, timed_out=False):
        self.argv, self.rc, self.out, self.err, self.secs, self.timed_out = argv, rc, out, err, secs, timed_out

    def json(self):
        return json.loads(self.out)

    def json_or_none(self):
        try:
            return json.loads(self.out)
        except ValueError:
            return None

    def error_lines(self):
        return [ln for ln in self.err.splitlines() if ln.startswith("wheelcheck: error:")]

    def probe_lines(self):
        return [ln for ln in self.err.splitlines() if re.match(r"(wheelcheck: )?probe:", ln)]

    def show(self, limit=1500):
        cmd = " ".join(self.argv)
        return (f"$ {cmd}\nexit {self.rc}{' (timed out)' if self.timed_out else ''} in {self.secs:.1f} s\n"
                f"stdout: {self.out[:limit]}\nstderr: {self.err[-limit:]}")


def wheelcheck(binary, args, env, timeout=120, cwd=None):
    t0 = time.time()
    argv = [binary, *args]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd,
                           stdin=subprocess.DEVNULL)
        return Res(argv, p.returncode, p.stdout, p.stderr, time.time() - t0)
    except subprocess.TimeoutExpired as x:
        out = x.stdout.decode(errors="replace") if isinstance(x.stdout, bytes) else (x.stdout or "")
        err = x.stderr.decode(errors="replace") if isinstance(x.stderr, bytes) else (x.stderr or "")
        return Res(argv, None, out, err, time.time() - t0, True)


def base_env(work, cache):
    """A clean environment: HOME, TMPDIR and XDG folders of its own under WORK, WHEELCHECK_CACHE_DIR=CACHE, no
    credentials of the user's (REGISTRY_AUTH_FILE, DOCKER_CONFIG removed)."""
    home = os.path.join(work, "home")
    tmp = os.path.join(work, "tmp")
    for d in (home, tmp, cache):
        os.makedirs(d, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("REGISTRY_AUTH_FILE", "DOCKER_CONFIG", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                        "WHEELCHECK_CACHE_DIR", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                        "all_proxy", "ALL_PROXY")}
    # The registries are on loopback: scripts/test.sh's WHEELCHECK_OFFLINE=1 (no test reads the internet) is
    # lifted, as tests/jobs does for its loopback indexes; images.py's cache part sets it to test offline runs.
    env.update(HOME=home, TMPDIR=tmp, WHEELCHECK_CACHE_DIR=cache, NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost", WHEELCHECK_OFFLINE="")
    return env


def docker_config(folder, host, user, password):
    """A Docker config folder (DOCKER_CONFIG) whose config.json holds HOST's credentials."""
    os.makedirs(folder, exist_ok=True)
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({"auths": {host: {"auth": auth}}}, f)
    return folder


def samples(folder):
    out = []
    for dirpath, _, files in os.walk(folder):
        out += [os.path.join(dirpath, f) for f in files if f.endswith(".whl")]
    return sorted(out)


def without_from(doc):
    doc = dict(doc)
    doc.pop("from", None)
    return doc


def json_diff(a, b, path="", out=None, limit=12):
    """The first LIMIT paths where two JSON values differ, as lines."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{path}/{k}: only in the second: {json.dumps(b[k])[:200]}")
            elif k not in b:
                out.append(f"{path}/{k}: only in the first: {json.dumps(a[k])[:200]}")
            else:
                json_diff(a[k], b[k], f"{path}/{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            json_diff(x, y, f"{path}[{i}]", out, limit)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}")
    return out[:limit]


def snapshot(*folders):
    """Every path under FOLDERS with its type, size and content hash (for 'nothing written outside')."""
    snap = {}
    for top in folders:
        for dirpath, dirnames, files in os.walk(top):
            for name in dirnames + files:
                p = os.path.join(dirpath, name)
                st = os.lstat(p)
                if stat.S_ISREG(st.st_mode):
                    snap[p] = ("f", st.st_size, sha256_file(p))
                elif stat.S_ISLNK(st.st_mode):
                    snap[p] = ("l", os.readlink(p))
                else:
                    snap[p] = ("d" if stat.S_ISDIR(st.st_mode) else "o", stat.S_IFMT(st.st_mode))
    return snap


def snapshot_diff(before, after):
    lines = []
    for p in sorted(set(before) | set(after)):
        if p not in before:
            lines.append(f"new: {p}")
        elif p not in after:
            lines.append(f"gone: {p}")
        elif before[p] != after[p]:
            lines.append(f"changed: {p}")
    return lines


def unverified_blobs(cache):
    """Files under CACHE/images/blobs/sha256/ whose content does not hash to their name."""
    bad = []
    folder = os.path.join(cache, "images", "blobs", "sha256")
    if not os.path.isdir(folder):
        return bad
    for dirpath, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(dirpath, f)
            if os.path.islink(p) or not re.fullmatch(r"[0-9a-f]{64}", f) or sha256_file(p) != f:
                bad.append(os.path.relpath(p, cache))
    return bad


@contextlib.contextmanager
def stopped_on_exit(*servers):
    with contextlib.ExitStack() as stack:
        for s in servers:
            stack.enter_context(s)
        yield servers


# --- the shared fixture ------------------------------------------------------------------------------------------

class Base:
    """The Debian 12 root (WORK/deb12img) and its one-layer image in the OCI layout WORK/oci, tag "bookworm"
    (gzip layer), with ROOT_ENV as the config's Env."""

    TAG = "bookworm"

    def __init__(self, work):
        t0 = time.time()
        self.work = work
        self.root = debian_root(os.path.join(work, "deb12img"))
        self.tar = tar_of_dir(self.root)
        self.layout = Layout(os.path.join(work, "oci"))
        self.layer = self.layout.layer(self.tar, "gzip")
        self.manifest, self.manifest_bytes, self.config = self.layout.image([self.layer], tag=self.TAG)
        self.env = list(ROOT_ENV)
        self.ref = f"oci:{self.layout.path}:{self.TAG}"
        print(f"fixture: Debian 12 root of {len(ROOT_PACKAGES)} packages, {len(self.tar) >> 20} MiB as tar, "
              f"layer {self.layer[0]['size'] >> 20} MiB gzip, manifest {self.manifest['digest'][:19]} "
              f"({time.time() - t0:.1f} s)", flush=True)

    def env_args(self, flag="--env", env=None):
        out = []
        for kv in (self.env if env is None else env):
            out += [flag, kv]
        return out

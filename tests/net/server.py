#!/usr/bin/env python3
"""A loopback package index and file server for wheelcheck's network tests (standard library only).

  server.py --root DIR [--host 127.0.0.1] [--port 0] [--auth USER:PASS] [--html-only] [--latency SECONDS]

Prints "PORT <n>" (flushed) once it listens, then serves until killed. HTTP/1.1 with keep-alive; every
answer has a Content-Length.

Layout of DIR: DIR/<index>/<project>/<files>. Beside a file, optional "<file>.yanked" (its text is the
reason, may be empty) and "<file>.metadata" (the core metadata file, PEP 658/714).

Routes:
  GET /<index>/simple/                    the project list (PEP 503 HTML)
  GET /<index>/simple/<project>/          the project page: PEP 691 JSON (application/vnd.pypi.simple.v1+json,
                                          api-version 1.1, with "versions") when the Accept header prefers
                                          it by q-value, else PEP 503 HTML with links
                                          ../../files/<project>/<file>#sha256=<hex> and data-requires-python,
                                          data-yanked, data-dist-info-metadata, data-core-metadata.
                                          A non-normalized project name (PEP 503) is answered with a 301 to
                                          the normalized URL. --html-only never serves JSON. Pages carry a
                                          strong ETag that changes with the folder; If-None-Match -> 304.
  GET|HEAD /<index>/files/<project>/<file>  the bytes, with a strong ETag (size + mtime), Last-Modified,
                                          Accept-Ranges, a single Range (206 + Content-Range; 416 when it
                                          cannot be satisfied), If-Range (a stale validator -> full 200),
                                          If-None-Match (304).
  GET /<index>/files/<project>/<file>.metadata  the core metadata file.
  POST /_faults    body: a JSON list of rules {"path": REGEX, "fault": NAME, "count": N, ...params}; count
                   defaults to 1, -1 means always. A request whose path matches (re.search) consumes one
                   count of the first live rule. Faults:
                     status        answer "code" (default 500), with "retry_after" (seconds) when given
                     truncate      headers with the full Content-Length, then only "bytes" body bytes (default
                                   half), then close
                     reset         close the socket without an answer (SO_LINGER 0: an RST)
                     slow          send the body at "rate" bytes/s (default 100)
                     wrong_hash    serve a file with some bytes flipped, same length
                     redirect      302 to "to" (an absolute URL, e.g. another host name for this server)
                     redirect_loop 302 into /_loop/a <-> /_loop/b, forever
                     no_ranges     ignore Range and If-Range: answer 200 with the whole file
                     no_suffix     refuse a suffix range (bytes=-N) with 416, as some servers do; other
                                   ranges as usual
                     base_href     the project page HTML gets <base href="HREF"> and links relative to it
                     garbage       200 with random bytes as "type" "html" (text/html) or "json" (the PEP 691
                                   content type with invalid JSON); default: what the Accept header prefers
                     never_end     headers with a large Content-Length, then one byte every 0.5 s, forever
                     huge          200 with a Content-Length of 1 TiB and an endless fast body of links (64 KiB
                                   writes, as fast as the client reads), "type" "html" or "json" as for garbage
                     deep          200 with a well-formed page nested "depth" (default 100000) levels deep:
                                   "type" "html" (<div> inside <div>) or "json" ("files" a list of lists)
  DELETE /_faults  clears the rules.
  GET /_stats      JSON list of the requests so far (/_* excluded): method, path, range, if_range,
                   if_none_match, status, bytes_sent, host, authorization (bool), user_agent, accept.
  DELETE /_stats   clears it.

--auth USER:PASS: every path except /_* needs that Basic authorization, else 401. To test a redirect to
another host, serve on 127.0.0.1 and redirect to http://localhost:<same port>/... (the Host header differs).

--latency SECONDS (default 0): every answer except those of /_* (/_stats, /_faults, /_loop) waits that long
before it is sent, as a distant index would; one thread per connection, so concurrent requests wait in parallel.
"""
import argparse
import base64
import email.utils
import hashlib
import html
import json
import os
import posixpath
import random
import re
import socket
import struct
import sys
import threading
import time
import zipfile
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote, urlsplit

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPE = "text/html"


def normalize(name):
    """PEP 503 normalization."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def requires_python(path):
    """Requires-Python from a wheel's METADATA (None when absent or unreadable)."""
    if not path.endswith(".whl"):
        return None
    try:
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if name.count("/") == 1 and name.endswith(".dist-info/METADATA"):
                    text = z.read(name).decode("utf-8", "replace")
                    for line in text.split("\n"):
                        if not line.strip():
                            break
                        if line.lower().startswith("requires-python:"):
                            return line.split(":", 1)[1].strip()
    except (OSError, zipfile.BadZipFile):
        return None
    return None


def parse_accept(header):
    """[(media type, q)] from an Accept header."""
    out = []
    for item in (header or "").split(","):
        parts = [p.strip() for p in item.split(";")]
        if not parts[0]:
            continue
        q = 1.0
        for p in parts[1:]:
            if p.lower().startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        out.append((parts[0].lower(), q))
    return out


def quality(accept, offered):
    """The q the Accept list gives `offered` (most specific match wins; -1 when nothing matches)."""
    best, best_specificity = -1.0, -1
    major = offered.split("/")[0]
    for media, q in accept:
        if media == offered:
            specificity = 2
        elif media == major + "/*":
            specificity = 1
        elif media == "*/*":
            specificity = 0
        else:
            continue
        if specificity > best_specificity:
            best, best_specificity = q, specificity
    return best


def prefers_json(accept_header):
    if not accept_header:
        return False
    accept = parse_accept(accept_header)
    q_json = max(quality(accept, JSON_TYPE), quality(accept, "application/vnd.pypi.simple.latest+json"))
    q_html = max(quality(accept, HTML_TYPE), quality(accept, "application/vnd.pypi.simple.v1+html"),
                 quality(accept, "application/vnd.pypi.simple.latest+html"))
    return q_json > 0 and q_json > q_html


def http_date(ts):
    return email.utils.formatdate(ts, usegmt=True)


class State:
    def __init__(self, root, auth, html_only, latency=0.0):
        self.root = root
        self.latency = latency
        self.auth = auth
        self.html_only = html_only
        self.lock = threading.Lock()
        self.faults = []
        self.stats = []
        self.hash_cache = {}
        self.project_dirs_cache = {}  # index folder -> (its names, {normalized: folder})

    def take_fault(self, path):
        with self.lock:
            for rule in self.faults:
                count = rule.get("count", 1)
                if count == 0:
                    continue
                if re.search(rule.get("path", ""), path):
                    if count > 0:
                        rule["count"] = count - 1
                    return dict(rule)
        return None

    def sha256(self, path):
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns)
        with self.lock:
            if key in self.hash_cache:
                return self.hash_cache[key]
        digest = sha256_file(path)
        with self.lock:
            self.hash_cache[key] = digest
        return digest


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "wheelcheck-test-server/1"
    state = None  # set in main()

    def log_message(self, fmt, *args):  # quiet
        pass

    def setup(self):
        super().setup()
        # The head and the body go out in two writes: without TCP_NODELAY, Nagle's algorithm holds the body
        # until the client acknowledges the head, which a client delays up to 40 ms on a kept-alive
        # connection. Real servers (nginx's tcp_nodelay, on by default) send at once; so does this one.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass

    # ---- plumbing -------------------------------------------------------------------------------------------

    def do_GET(self):
        self.dispatch(head=False)

    def do_HEAD(self):
        self.dispatch(head=True)

    def do_POST(self):
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if path == "/_faults":
            try:
                rules = json.loads(body or b"[]")
                if isinstance(rules, dict):
                    rules = [rules]
                assert isinstance(rules, list)
            except (ValueError, AssertionError):
                return self.simple(400, b"bad fault rules\n")
            with self.state.lock:
                self.state.faults.extend(rules)
            return self.simple(200, b"ok\n")
        self.simple(405, b"method not allowed\n")

    def do_DELETE(self):
        path = urlsplit(self.path).path
        with self.state.lock:
            if path == "/_faults":
                self.state.faults.clear()
            elif path == "/_stats":
                self.state.stats.clear()
            else:
                path = None
        if path is None:
            return self.simple(405, b"method not allowed\n")
        self.simple(200, b"ok\n")

    def send_head(self, code, headers, length):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.record["status"] = code

    def send_body(self, data, fault=None):
        """Writes data, bent by a truncate or slow fault; counts bytes into the record."""
        kind = fault.get("fault") if fault else None
        if kind == "truncate":
            n = int(fault.get("bytes", len(data) // 2))
            data = data[: max(0, min(n, len(data)))]
        if kind == "slow":
            rate = max(1, int(fault.get("rate", 100)))
            step = max(1, rate // 10)
            for i in range(0, len(data), step):
                self.write_counted(data[i : i + step])
                time.sleep(0.1 * min(step, len(data) - i) / step)
        else:
            self.write_counted(data)
        if kind == "truncate":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def write_counted(self, data):
        # Counted before the write, since a client that has every byte may ask /_stats before this thread runs
        # again (the sanitized suite's HeadersOnly test once read 0 bytes of a whole wheel); taken back when the
        # write fails, as a client that hangs up mid-body (a server that ignores ranges) did not get them.
        self.record["bytes_sent"] += len(data)
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.record["bytes_sent"] -= len(data)
            raise

    def simple(self, code, body, headers=(), fault=None, head=False, content_type="text/plain"):
        if not hasattr(self, "record"):
            self.record = {"status": 0, "bytes_sent": 0}
        self.send_head(code, [("Content-Type", content_type), *headers], len(body))
        if not head:
            self.send_body(body, fault)

    def dispatch(self, head):
        split = urlsplit(self.path)
        path = unquote(split.path)
        h = self.headers
        self.record = {
            "method": self.command, "path": path, "range": h.get("Range"), "if_range": h.get("If-Range"),
            "if_none_match": h.get("If-None-Match"), "status": 0, "bytes_sent": 0, "host": h.get("Host"),
            "authorization": h.get("Authorization") is not None, "user_agent": h.get("User-Agent"),
            "accept": h.get("Accept"),
        }
        internal = path.startswith("/_")
        if not internal:
            with self.state.lock:
                self.state.stats.append(self.record)
        if not internal and self.state.latency > 0:
            time.sleep(self.state.latency)
        try:
            self.route(path, head, internal)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def route(self, path, head, internal):
        if path == "/_stats":
            with self.state.lock:
                body = json.dumps(self.state.stats).encode()
            return self.simple(200, body, content_type="application/json", head=head)
        if path == "/_faults":
            with self.state.lock:
                body = json.dumps(self.state.faults).encode()
            return self.simple(200, body, content_type="application/json", head=head)
        if path in ("/_loop/a", "/_loop/b"):
            other = "/_loop/b" if path.endswith("a") else "/_loop/a"
            return self.simple(302, b"", [("Location", other)], head=head)
        if not internal and self.state.auth:
            expected = "Basic " + base64.b64encode(self.state.auth.encode()).decode()
            if self.headers.get("Authorization") != expected:
                return self.simple(401, b"authorization required\n", [("WWW-Authenticate", 'Basic realm="wheelcheck"')],
                                   head=head)
        fault = None if internal else self.state.take_fault(path)
        if fault and self.general_fault(fault, head):
            return
        parts = [p for p in path.split("/")]
        # parts[0] == "" for the leading slash
        if len(parts) >= 4 and parts[2] == "simple":
            return self.serve_simple(parts, path, head, fault)
        if len(parts) == 5 and parts[2] == "files":
            return self.serve_file(parts[1], parts[3], parts[4], head, fault)
        self.simple(404, b"not found\n", head=head)

    def general_fault(self, fault, head):
        """Faults that replace the answer; True when one did."""
        kind = fault.get("fault")
        if kind == "status":
            code = int(fault.get("code", 500))
            headers = []
            if "retry_after" in fault:
                headers.append(("Retry-After", str(fault["retry_after"])))
            self.simple(code, f"injected {code}\n".encode(), headers, head=head)
            return True
        if kind == "reset":
            self.close_connection = True
            try:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            except OSError:
                pass
            return True
        if kind == "redirect":
            self.simple(302, b"", [("Location", fault["to"])], head=head)
            return True
        if kind == "redirect_loop":
            self.simple(302, b"", [("Location", "/_loop/a")], head=head)
            return True
        if kind == "garbage":
            want = fault.get("type") or ("json" if prefers_json(self.headers.get("Accept")) else "html")
            body = bytes(random.getrandbits(8) for _ in range(int(fault.get("size", 4096))))
            if want == "json":
                body = b'{"meta": {"api-version": "1.1"}, "files": [' + body
            self.simple(200, body, content_type=JSON_TYPE if want == "json" else HTML_TYPE, head=head)
            return True
        if kind == "huge":
            want = fault.get("type") or ("json" if prefers_json(self.headers.get("Accept")) else "html")
            ctype = JSON_TYPE if want == "json" else HTML_TYPE
            self.send_head(200, [("Content-Type", ctype)], 1 << 40)
            self.close_connection = True
            if head:
                return True
            start = b'{"meta": {"api-version": "1.1"}, "files": [' if want == "json" else b"<html><body>\n"
            piece = (b'{"filename": "x.whl", "url": "x.whl", "hashes": {}}, ' if want == "json"
                     else b'<a href="x-1.0-py3-none-any.whl">x-1.0-py3-none-any.whl</a>\n')
            chunk = piece * (65536 // len(piece))
            try:
                self.wfile.write(start)
                while True:
                    self.wfile.write(chunk)
                    self.record["bytes_sent"] += len(chunk)
            except OSError:
                pass
            return True
        if kind == "deep":
            want = fault.get("type") or ("json" if prefers_json(self.headers.get("Accept")) else "html")
            depth = int(fault.get("depth", 100000))
            if want == "json":
                body = b'{"meta": {"api-version": "1.1"}, "name": "x", "files": ' + b"[" * depth + b"]" * depth + b"}"
            else:
                body = b"<!DOCTYPE html>\n<html><body>" + b"<div>" * depth + b"</div>" * depth + b"</body></html>\n"
            self.simple(200, body, content_type=JSON_TYPE if want == "json" else HTML_TYPE, head=head)
            return True
        if kind == "never_end":
            self.send_head(200, [("Content-Type", "application/octet-stream")], 1 << 30)
            self.close_connection = True
            if head:
                return True
            try:
                while True:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    self.record["bytes_sent"] += 1
                    time.sleep(0.5)
            except OSError:
                pass
            return True
        return False

    # ---- index pages ----------------------------------------------------------------------------------------

    def project_dirs(self, index):
        if not index or index.startswith(".") or "/" in index or "\0" in index:
            return None
        base = os.path.join(self.state.root, index)
        if not os.path.isdir(base):
            return None
        # Kept while the folder holds the same names: an index of thousands of projects is stat()ed once, not on
        # every request (bench/scale.sh).
        names = sorted(os.listdir(base))
        cached = self.state.project_dirs_cache.get(base)
        if cached is not None and cached[0] == names:
            return cached[1]
        dirs = {normalize(d): os.path.join(base, d) for d in names if os.path.isdir(os.path.join(base, d))}
        self.state.project_dirs_cache[base] = (names, dirs)
        return dirs

    def listing_etag(self, folder):
        h = hashlib.sha256()
        for name in sorted(os.listdir(folder)):
            st = os.stat(os.path.join(folder, name))
            h.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        return '"' + h.hexdigest()[:32] + '"'

    def not_modified(self, etag):
        inm = self.headers.get("If-None-Match")
        if inm is None:
            return False
        tags = [t.strip() for t in inm.split(",")]
        return "*" in tags or etag in tags or ("W/" + etag) in tags

    def serve_simple(self, parts, path, head, fault):
        index = parts[1]
        projects = self.project_dirs(index)
        if projects is None:
            return self.simple(404, b"no such index\n", head=head)
        if len(parts) == 4 and parts[3] == "":
            links = "".join(f'<a href="{quote(p)}/">{html.escape(p)}</a>\n' for p in sorted(projects))
            body = ("<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\">"
                    f"<title>Simple index</title></head><body>\n{links}</body></html>\n").encode()
            return self.simple(200, body, head=head, fault=fault, content_type=HTML_TYPE)
        project = parts[3]
        if len(parts) > 5 or (len(parts) == 5 and parts[4] != ""):
            return self.simple(404, b"not found\n", head=head)
        if project != normalize(project) or len(parts) == 4:
            location = f"/{index}/simple/{normalize(project)}/"
            return self.simple(301, b"", [("Location", location)], head=head)
        folder = projects.get(project)
        if folder is None:
            return self.simple(404, b"no such project\n", head=head)
        etag = self.listing_etag(folder)
        use_json = not self.state.html_only and prefers_json(self.headers.get("Accept"))
        ctype = JSON_TYPE if use_json else HTML_TYPE
        headers = [("ETag", etag), ("Vary", "Accept"), ("Cache-Control", "max-age=0")]
        if self.not_modified(etag):
            return self.simple(304, b"", headers, head=True, content_type=ctype)
        files = self.project_files(folder)
        if use_json:
            body = self.project_json(project, files)
        else:
            base = fault.get("href") if fault and fault.get("fault") == "base_href" else None
            body = self.project_html(project, index, files, base)
        self.simple(200, body, headers, head=head, fault=fault, content_type=ctype)

    def project_files(self, folder):
        out = []
        for name in sorted(os.listdir(folder)):
            full = os.path.join(folder, name)
            if name.endswith((".yanked", ".metadata")) or not os.path.isfile(full):
                continue
            st = os.stat(full)
            entry = {"filename": name, "path": full, "sha256": self.state.sha256(full), "size": st.st_size,
                     "mtime": st.st_mtime, "requires_python": requires_python(full), "yanked": None,
                     "metadata_sha256": None}
            if os.path.isfile(full + ".yanked"):
                with open(full + ".yanked", encoding="utf-8") as f:
                    entry["yanked"] = f.read().strip()
            if os.path.isfile(full + ".metadata"):
                entry["metadata_sha256"] = self.state.sha256(full + ".metadata")
            out.append(entry)
        return out

    def project_json(self, project, files):
        versions = set()
        out = []
        for f in files:
            pieces = f["filename"].split("-")
            if len(pieces) >= 2:
                versions.add(pieces[1])
            meta = {"sha256": f["metadata_sha256"]} if f["metadata_sha256"] else False
            out.append({
                "filename": f["filename"],
                "url": f"../../files/{project}/{quote(f['filename'])}",
                "hashes": {"sha256": f["sha256"]},
                "requires-python": f["requires_python"],
                "yanked": (f["yanked"] or True) if f["yanked"] is not None else False,
                "core-metadata": meta,
                "dist-info-metadata": meta,
                "size": f["size"],
                "upload-time": datetime.fromtimestamp(f["mtime"], timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            })
        doc = {"meta": {"api-version": "1.1"}, "name": project, "files": out, "versions": sorted(versions)}
        return json.dumps(doc, indent=1).encode()

    def project_html(self, project, index, files, base):
        head = '<meta name="pypi:repository-version" content="1.1">'
        page_dir = f"/{index}/simple/{project}/"
        if base is not None:
            head += f'<base href="{html.escape(base)}">'
            base_path = urlsplit(base).path or "/"
            page_dir = base_path if base_path.endswith("/") else posixpath.dirname(base_path) + "/"
        lines = []
        for f in files:
            target = f"/{index}/files/{project}/{quote(f['filename'])}"
            href = posixpath.relpath(target, page_dir) + "#sha256=" + f["sha256"]
            attrs = f'href="{html.escape(href)}"'
            if f["requires_python"]:
                attrs += f' data-requires-python="{html.escape(f["requires_python"])}"'
            if f["yanked"] is not None:
                attrs += f' data-yanked="{html.escape(f["yanked"])}"'
            if f["metadata_sha256"]:
                attrs += f' data-dist-info-metadata="sha256={f["metadata_sha256"]}"'
                attrs += f' data-core-metadata="sha256={f["metadata_sha256"]}"'
            lines.append(f"<a {attrs}>{html.escape(f['filename'])}</a><br>\n")
        return (f"<!DOCTYPE html>\n<html><head>{head}<title>Links for {html.escape(project)}</title></head>"
                f"<body><h1>Links for {html.escape(project)}</h1>\n{''.join(lines)}</body></html>\n").encode()

    # ---- files ----------------------------------------------------------------------------------------------

    def serve_file(self, index, project, name, head, fault):
        projects = self.project_dirs(index)
        folder = projects.get(normalize(project)) if projects else None
        full = os.path.join(folder, name) if folder else None
        if not full or "/" in name or name.startswith(".") or not os.path.isfile(full):
            return self.simple(404, b"no such file\n", head=head)
        st = os.stat(full)
        size = st.st_size
        etag = f'"{size:x}-{st.st_mtime_ns:x}"'
        last_modified = http_date(st.st_mtime)
        headers = [("ETag", etag), ("Last-Modified", last_modified), ("Accept-Ranges", "bytes")]
        ctype = "application/octet-stream"
        if self.not_modified(etag):
            return self.simple(304, b"", headers, head=True, content_type=ctype)
        kind = fault.get("fault") if fault else None
        rng = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if kind == "no_ranges":
            rng = None
        if kind == "no_suffix" and rng is not None and re.fullmatch(r"\s*bytes\s*=\s*-\s*\d+\s*", rng):
            return self.simple(416, b"suffix ranges are not supported\n", headers, head=head)
        if rng is not None and if_range is not None and if_range.strip() not in (etag, last_modified):
            rng = None  # stale validator: the whole file
        start, end = 0, size - 1
        code = 200
        if rng is not None:
            m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", rng)
            if m and (m.group(1) or m.group(2)):
                if m.group(1):
                    start = int(m.group(1))
                    end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
                else:
                    suffix = int(m.group(2))
                    start, end = max(0, size - suffix), size - 1
                    if suffix == 0:
                        start = size
                if start >= size or start > end:
                    return self.simple(416, b"range not satisfiable\n", headers + [("Content-Range", f"bytes */{size}")],
                                       head=head)
                code = 206
                headers.append(("Content-Range", f"bytes {start}-{end}/{size}"))
            # a malformed or multi-range header is ignored: 200
        length = end - start + 1 if size else 0
        if head:
            return self.send_head(code, [("Content-Type", ctype), *headers], length)
        with open(full, "rb") as f:
            f.seek(start)
            data = f.read(length)
        if kind == "wrong_hash" and data:
            buf = bytearray(data)
            for i in range(0, len(buf), max(1, len(buf) // 7)):
                buf[i] ^= 0xFF
            data = bytes(buf)
        self.send_head(code, [("Content-Type", ctype), *headers], len(data))
        self.send_body(data, fault)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that goes away mid-answer (an aborted stat, a pooled connection closed) is normal here.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--auth", default=None, help="USER:PASS required on every non-/_ path")
    parser.add_argument("--html-only", action="store_true")
    parser.add_argument("--latency", type=float, default=0.0, metavar="SECONDS",
                        help="delay every answer (not /_*) this long before it is sent")
    args = parser.parse_args()
    if args.latency < 0:
        parser.error("--latency must be >= 0")
    Handler.state = State(os.path.abspath(args.root), args.auth, args.html_only, args.latency)
    server = Server((args.host, args.port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

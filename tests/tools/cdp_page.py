#!/usr/bin/env python3
"""Loads a local HTML page in headless chromium and measures it over the DevTools protocol (standard library only).

  cdp_page.py PAGE.html [--screenshot OUT.png] [--selector CSS] [--width 1280 --height 900] [--timeout 60]

Starts /usr/bin/chromium (or /usr/bin/chromium-browser) as tests/support.cpp's run_chromium does (--headless
--no-sandbox --disable-gpu --no-first-run ..., a private --user-data-dir, HOME in a temp folder, D-Bus disabled)
with --remote-debugging-pipe: the protocol's JSON messages, each ended by a NUL byte, go in on the browser's fd 3
and come out on its fd 4. Target.createTarget + Target.attachToTarget (flatten), then on that session
Emulation.setDeviceMetricsOverride (WIDTH x HEIGHT), Page.enable, Page.navigate to file://PAGE; waits for
Page.loadEventFired, then Runtime.evaluate reads the navigation timing (loadEventEnd and
domContentLoadedEventEnd, from navigation start) and the first element SELECTOR (default #summary) matches: its
innerText (the first 2,000 characters) and getBoundingClientRect(); "visible" when it lies in the first viewport
(top < innerHeight and height > 0). With --screenshot, Page.captureScreenshot writes the PNG of that viewport.
Prints one JSON object:
  {"load_ms", "dom_content_loaded_ms", "selector", "found", "visible", "text", "rect", "screenshot", "bytes"}
(rect: {"x", "y", "width", "height", "top", "bottom"} or null; screenshot: the PNG's path or null; bytes: the
page's size), plus "viewport" {"width", "height"}. Exit 0 when it measured (whether the element was found or
visible or not), 2 on failure (no chromium, the page absent, a protocol error, TIMEOUT seconds passed), with a
message on stderr. The browser (its whole process group) is killed at the end, and on a timeout or an error.
"""
import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--hide-scrollbars", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-sync",
         "--no-default-browser-check", "--remote-debugging-pipe"]

# Evaluated once the load event fired: loadEventEnd is set only after the load handlers return, so it waits
# (up to 2 s) for it to be non-zero.
MEASURE = r"""
(async () => {
  const nav = () => (performance.getEntriesByType && performance.getEntriesByType('navigation')[0]) || null;
  for (let i = 0; i < 200 && !(nav() ? nav().loadEventEnd : performance.timing.loadEventEnd); ++i)
    await new Promise(r => setTimeout(r, 10));
  const n = nav(), t = performance.timing;
  const load = n ? n.loadEventEnd : t.loadEventEnd - t.navigationStart;
  const dcl = n ? n.domContentLoadedEventEnd : t.domContentLoadedEventEnd - t.navigationStart;
  const el = document.querySelector(SELECTOR);
  let rect = null, text = null, visible = false;
  if (el) {
    const r = el.getBoundingClientRect();
    rect = {x: r.x, y: r.y, width: r.width, height: r.height, top: r.top, bottom: r.bottom};
    text = (el.innerText || '').slice(0, 2000);
    visible = r.top < window.innerHeight && r.height > 0;
  }
  return {load_ms: load, dom_content_loaded_ms: dcl, found: !!el, visible, text, rect,
          viewport: {width: window.innerWidth, height: window.innerHeight}};
})()
"""


class Failure(Exception):
    pass


class Browser:
    """chromium over --remote-debugging-pipe: send() writes a command, call() waits for its answer while it
    keeps the events that came meanwhile, wait_event() waits for one."""

    def __init__(self, exe, profile, home, log, deadline, width, height):
        self.deadline = deadline
        self.next_id = 0
        self.buffer = b""
        self.events = []
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # Out of the way of 3 and 4, so that the dup2s below cannot overwrite one another.
        fds = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w)]
        os.close(to_browser_r)
        os.close(from_browser_w)
        log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null_fd = os.open(os.devnull, os.O_RDONLY)
        env = dict(os.environ, HOME=home, DBUS_SESSION_BUS_ADDRESS="disabled:", DBUS_SYSTEM_BUS_ADDRESS="disabled:")
        args = [exe, *FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile}", "about:blank"]
        try:
            self.pid = os.posix_spawn(exe, args, env, setsid=True, file_actions=[
                (os.POSIX_SPAWN_DUP2, null_fd, 0), (os.POSIX_SPAWN_DUP2, log_fd, 1), (os.POSIX_SPAWN_DUP2, log_fd, 2),
                (os.POSIX_SPAWN_DUP2, fds[0], 3), (os.POSIX_SPAWN_DUP2, fds[1], 4)])
        finally:
            for fd in (*fds, log_fd, null_fd):
                os.close(fd)

    def kill(self):
        if self.pid:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self.to_browser = self.from_browser = -1

    def left(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Failure("timed out")
        return left

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            _, w, _ = select.select([], [self.to_browser], [], self.left())
            if w:
                try:
                    data = data[os.write(self.to_browser, data):]
                except BrokenPipeError:
                    raise Failure("chromium closed its pipe (see its log)") from None
        return self.next_id

    def read_message(self):
        while b"\0" not in self.buffer:
            r, _, _ = select.select([self.from_browser], [], [], self.left())
            if r:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise Failure("chromium exited (see its log)")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(line)

    def call(self, method, params=None, session=None):
        want = self.send(method, params, session)
        while True:
            msg = self.read_message()
            if msg.get("id") == want:
                if "error" in msg:
                    raise Failure(f"{method}: {msg['error'].get('message', msg['error'])}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, session=None):
        while True:
            for i, ev in enumerate(self.events):
                if ev["method"] == method and (session is None or ev.get("sessionId") == session):
                    return self.events.pop(i)
            msg = self.read_message()
            if "method" in msg:
                self.events.append(msg)


def measure(a, page, tmp):
    exe = next((p for p in CHROMIUM if os.path.isfile(p) and os.access(p, os.X_OK)), None)
    if exe is None:
        raise Failure(f"chromium is not installed (looked for {', '.join(CHROMIUM)}; apt-get install chromium)")
    log = os.path.join(tmp, "chromium.log")
    browser = Browser(exe, os.path.join(tmp, "profile"), tmp, log, time.monotonic() + a.timeout, a.width, a.height)
    try:
        try:
            target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            browser.call("Emulation.setDeviceMetricsOverride",
                         {"width": a.width, "height": a.height, "deviceScaleFactor": 1, "mobile": False}, session)
            browser.call("Page.enable", {}, session)
            nav = browser.call("Page.navigate", {"url": "file://" + page}, session)
            if nav.get("errorText"):
                raise Failure(f"Page.navigate: {nav['errorText']}")
            browser.wait_event("Page.loadEventFired", session)
            expr = MEASURE.replace("SELECTOR", json.dumps(a.selector))
            res = browser.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True},
                               session)
            if "exceptionDetails" in res:
                raise Failure(f"Runtime.evaluate: {res['exceptionDetails'].get('text')} "
                              f"{res.get('result', {}).get('description', '')}")
            got = res["result"]["value"]
            shot = None
            if a.screenshot:
                png = base64.b64decode(browser.call("Page.captureScreenshot", {"format": "png"}, session)["data"])
                shot = os.path.abspath(a.screenshot)
                with open(shot, "wb") as f:
                    f.write(png)
            try:
                browser.call("Browser.close")
            except Failure:
                pass
        except Failure as e:
            try:  # its last lines, less the D-Bus noise of a machine without a bus
                lines = [ln for ln in open(log, errors="replace").read().splitlines()
                         if ln.strip() and "dbus" not in ln.lower()]
                tail = " | ".join(lines[-5:])[-1000:]
            except OSError:
                tail = ""
            raise Failure(f"{e}{'; chromium said: ' + tail if tail else ''}") from None
    finally:
        browser.kill()
    return {"load_ms": round(got["load_ms"], 1), "dom_content_loaded_ms": round(got["dom_content_loaded_ms"], 1),
            "selector": a.selector, "found": got["found"], "visible": got["visible"], "text": got["text"],
            "rect": got["rect"], "screenshot": shot, "bytes": os.path.getsize(page), "viewport": got["viewport"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("page")
    ap.add_argument("--screenshot", metavar="OUT.png")
    ap.add_argument("--selector", default="#summary")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=900)
    ap.add_argument("--timeout", type=float, default=60, help="seconds for all of it (default 60)")
    a = ap.parse_args()
    page = os.path.abspath(a.page)
    if not os.path.isfile(page):
        print(f"cdp_page.py: {a.page}: no such file", file=sys.stderr)
        return 2
    def stop(signum, frame):  # a killed run still kills the browser (measure's finally)
        raise Failure(f"stopped by signal {signum}")
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    tmp = tempfile.mkdtemp(prefix="cdp_page.")
    try:
        out = measure(a, page, tmp)
    except Failure as e:
        print(f"cdp_page.py: {e}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

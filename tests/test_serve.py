#!/usr/bin/env python3
"""caustic serve's tests (ctest: test_serve, test_serve_browser).

  test_serve.py CAUSTIC protocol   the server alone, through tools/serve_client.py: the token on
                                   every request, refusals (other paths, traversal, methods,
                                   garbage, oversized and binary messages, floods), frames, a drag
                                   that changes the view and the tag that times it, convergence,
                                   the render alive after all of it, SIGTERM
  test_serve.py CAUSTIC browser    Debian's chromium, headless, through Selenium and chromedriver:
                                   the page without the token is refused; with it, frames come, a
                                   mouse drag changes the image, which then converges
Exit 77 (ctest: skipped) with one line saying why where caustic has no serve (built without
libcivetweb-dev) or, for the browser, where chromium, chromedriver or Selenium is missing.
CAUSTIC_SERVE_SCREENSHOT=FILE (browser): a screenshot of the page once converged.
"""
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import serve_client  # noqa: E402

SPP = 128


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(77)


def start(caustic, tmp, res="96x96"):
    p = subprocess.run([caustic, "serve", "--help"], capture_output=True, text=True)
    if p.returncode != 0 and "needs libcivetweb-dev" in p.stderr:
        skip(p.stderr.strip())
    cmd = [caustic, "serve", "cornell", "--res", res, "--spp", str(SPP), "--device", "cpu", "--port", "0",
           "--seed", "1", "-o", os.path.join(tmp, "shot")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    t0 = time.monotonic()
    lines = []
    while time.monotonic() - t0 < 60:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"open (http://\S+/\?token=([0-9a-f]+))", line)
        if m:
            return proc, m.group(1), m.group(2)
    proc.kill()
    fail("caustic serve printed no URL:\n" + "".join(lines))


def http(url, method="GET"):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def raw_request(host, port, data):
    """Sends raw bytes, returns what comes back (b'' when the server just closes)."""
    s = socket.create_connection((host, port), timeout=10)
    try:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def spp_of(title):
    m = re.search(r"\| (\d+) spp \|", title or "")
    return int(m.group(1)) if m else -1


def alive(proc):
    if proc.poll() is not None:
        fail(f"caustic serve exited ({proc.returncode}): " + proc.stdout.read())


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("caustic serve did not stop within 30 s of SIGTERM")
    if proc.returncode != 0 or "stopped" not in out:
        fail(f"caustic serve after SIGTERM: status {proc.returncode}, output:\n{out}")
    return out


class Viewer:
    """A socket client that keeps the newest frame and text state."""

    def __init__(self, url):
        self.ws = serve_client.connect(url)
        self.title, self.frame, self.tag, self.frames = "", None, 0, 0

    def pump(self, seconds, until=None):
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            self.ws.sock.settimeout(max(0.05, seconds - (time.monotonic() - t0)))
            try:
                op, p = self.ws.recv()
            except socket.timeout:
                continue
            if op == 1:
                m = json.loads(p)
                if "title" in m:
                    self.title = m["title"]
            elif op == 2:
                self.tag = serve_client.frame_header(p)[0]
                self.frame = p[8:]
                self.frames += 1
            elif op == 8:
                return ("closed", p)
            if until and until(self):
                return True
        return False


def protocol(caustic):
    tmp = tempfile.mkdtemp(prefix="caustic-serve-")
    proc, url, token = start(caustic, tmp)
    host, port, _ = serve_client.parse_url(url)
    base = f"http://{host}:{port}"
    try:
        # the token on every request
        for u in (base + "/", base + "/?token=", base + "/?token=" + "0" * 32, base + "/?token=" + token[:-1],
                  base + f"/?token={token}&token={token}"):
            st, body = http(u)
            if st != 403 or "access token" not in body:
                fail(f"GET {u}: expected 403 naming the access token, got {st}: {body[:200]}")
        st, body = http(url)
        if st != 200 or "<canvas" not in body:
            fail(f"GET the page with the token: {st}")
        print("ok: the page needs the token (403 without, wrong, twice or truncated; 200 with)")
        # nothing but the page: other paths, traversal, methods
        for path in (f"/index.html?token={token}", f"/../../../../etc/passwd?token={token}",
                     f"/%2e%2e/%2e%2e/etc/passwd?token={token}", f"/ws/../etc/passwd?token={token}",
                     f"/favicon.ico?token={token}"):
            out = raw_request(host, port, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()).decode(errors="replace")
            if " 404 " not in out.split("\r\n", 1)[0] or "root:" in out:
                fail(f"GET {path}: expected 404, got {out[:200]!r}")
        st, body = http(url, "POST")
        if st != 405:
            fail(f"POST the page: expected 405, got {st}")
        print("ok: other paths (traversal included) 404, POST 405")
        # garbage and oversized requests: refused or closed, the server goes on
        for data in (os.urandom(3000), b"\x00" * 100 + b"\r\n\r\n", b"GET / HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n",
                     b"GET /?token=" + b"9" * 9000 + b" HTTP/1.1\r\n\r\n"):
            out = raw_request(host, port, data)
            if out and not re.match(rb"HTTP/1\.[01] (4\d\d)", out):
                fail(f"garbage request answered {out[:100]!r}")
        alive(proc)
        print("ok: garbage and oversized requests refused")
        # the socket needs the token too
        for q in ("", "?token=", "?token=" + "f" * 32):
            try:
                serve_client.WebSocket(host, port, "/ws" + q)
                fail(f"/ws{q}: the socket opened without the token")
            except ConnectionRefusedError as e:
                if "403" not in str(e) or "access token" not in str(e):
                    fail(f"/ws{q}: expected a 403 naming the token, got {e}")
        print("ok: the socket needs the token (403)")
        # frames and the readout
        v = Viewer(url)
        if not v.pump(60, lambda s: s.frame is not None and spp_of(s.title) >= 1):
            fail(f"no frame or readout within 60 s (frames {v.frames}, title {v.title!r})")
        if not v.frame.startswith(b"\xff\xd8") or "cpu" not in v.title.lower():
            fail(f"frame not a JPEG or readout without the device: {v.frame[:4]!r} {v.title!r}")
        print(f"ok: frames are JPEGs, readout {v.title!r}")
        if not v.pump(120, lambda s: spp_of(s.title) >= SPP):
            fail(f"not converged to {SPP} spp within 120 s: {v.title!r}")
        v.pump(1.0)
        before = v.frame
        # hostile messages, each on its own socket; the render goes on
        h = serve_client.connect(url)
        h.send("garbage")
        op, p = h.recv()
        while op == 2 or (op == 1 and b"error" not in p):
            op, p = h.recv()
        if b"not a message" not in p:
            fail(f"garbage message: expected an error reply, got {op} {p[:100]!r}")
        for t in ("m 1", "d 9 1 1", "w 1000", "k", "k ab", "d 1 -1 5", "m 99999999 1"):
            h.send(t)
        h.send("x" * 200)
        op, p = h.recv()
        while op != 8:
            op, p = h.recv()
        if p[:2] != b"\x03\xf1":
            fail(f"oversized message: expected close 1009, got {p!r}")
        h = serve_client.connect(url)
        h.send_frame(0x2, b"\x00" * 10)
        op, p = h.recv()
        while op != 8:
            op, p = h.recv()
        if p[:2] != b"\x03\xeb":
            fail(f"binary message: expected close 1003, got {p!r}")
        # a frame header declaring 2^40 bytes: CivetWeb closes the socket at once
        h = serve_client.connect(url)
        h.sock.sendall(bytes([0x81, 0xFF]) + struct.pack(">Q", 1 << 40) + os.urandom(4) + b"x" * 100)
        t0 = time.monotonic()
        try:
            while h.recv()[0] != 8:
                pass
        except ConnectionError:
            pass
        except OSError:
            fail("a frame declaring 2^40 bytes: the socket stayed open")
        if time.monotonic() - t0 > 5:
            fail("a frame declaring 2^40 bytes: the socket stayed open for 5 s")
        h = serve_client.connect(url)
        try:
            for _ in range(3000):
                h.send("ping")
            op, p = h.recv()
            while op != 8:
                op, p = h.recv()
            if p[:2] != b"\x03\xf0":
                fail(f"flood: expected close 1008, got {p!r}")
        except (ConnectionError, OSError):
            pass  # closed while sending: refused as well
        # too many viewers: the ninth is refused
        time.sleep(1.0)  # (the refused sockets above are gone)
        many = [serve_client.connect(url) for _ in range(7)]
        try:
            serve_client.connect(url)
            fail("a ninth viewer was let in")
        except ConnectionRefusedError as e:
            if "503" not in str(e):
                fail(f"ninth viewer: expected 503, got {e}")
        for i, m in enumerate(many):  # several viewers watch one render: each gets the frame
            m.sock.settimeout(30)
            op, p = m.recv()
            while op != 2:
                op, p = m.recv()
            if not p[8:].startswith(b"\xff\xd8"):
                fail(f"viewer {i + 2} of 8 got no JPEG frame")
        for m in many:
            m.close()
        alive(proc)
        print("ok: bad, oversized (64 B, 2^40 B), binary and flooding messages refused; 8 viewers get frames, a ninth 503")
        # a drag changes the view; its tag times it; it converges again. Meanwhile a viewer that
        # acknowledges no frame ("lazy") is sent at most 2 (the rest dropped, not queued)
        # (the server notices the 7 closed sockets above when it next reads them: until then a
        # new viewer may still be the ninth, so a 503 is retried for a few seconds)
        for attempt in range(50):
            try:
                lazy = serve_client.connect(url)
                break
            except ConnectionRefusedError as e:
                if "503" not in str(e) or attempt == 49:
                    raise
                time.sleep(0.1)
        frames_before_drag = v.frames
        v.ws.send("d 1 48 48")
        for x in range(50, 80, 3):
            v.ws.send(f"m {x} 48")
        v.ws.send("u 1 80 48")
        v.ws.send("t 7")
        if not v.pump(60, lambda s: s.tag >= 7):
            fail("no frame with the drag's tag within 60 s")
        if v.frame == before:
            fail("the frame after the drag is the one before it")
        if not v.pump(120, lambda s: spp_of(s.title) >= SPP and s.tag >= 7):
            fail(f"not converged again within 120 s: {v.title!r}")
        v.pump(1.0)
        a = v.frame
        v.pump(1.5)
        if v.frame != a:
            fail("frames still change after convergence")
        if a == before:
            fail("the converged frame after the drag equals the one before it")
        print("ok: a drag changes the view, the tag reaches the frame, it converges again")
        lazy.sock.settimeout(0.2)
        got, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < 1.0:
            try:
                if lazy.recv(ack=False)[0] == 2:
                    got += 1
            except socket.timeout:
                pass
        if got > 2 or v.frames - frames_before_drag < 4:
            fail(f"a viewer acknowledging nothing got {got} frames (at most 2) while another got "
                 f"{v.frames - frames_before_drag}")
        lazy.close()
        print(f"ok: a viewer acknowledging nothing got {got} frames while another got {v.frames - frames_before_drag}")
        # keys: save (p) writes the images, with a message to the page
        v.ws.send("k p")
        v.ws.send("K p")
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30 and not os.path.exists(os.path.join(tmp, "shot.000.png")):
            v.pump(0.2)
        if not os.path.exists(os.path.join(tmp, "shot.000.png")):
            fail("key p saved no image")
        v.ws.close()
        print("ok: key p saves the image")
        out = stop(proc)
        print("ok: SIGTERM stops it: " + out.strip().splitlines()[-1])
    finally:
        if proc.poll() is None:
            proc.kill()


def browser(caustic):
    chromium = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if os.path.exists(p)), None)
    driver_path = next((p for p in ("/usr/bin/chromedriver",) if os.path.exists(p)), None)
    try:
        from selenium import webdriver
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By
    except ImportError:
        webdriver = None
    if not chromium or not driver_path or webdriver is None:
        if webdriver is None and os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != \
                os.path.realpath("/usr/bin/python3") and not os.environ.get("CAUSTIC_SERVE_REEXEC"):
            # Debian's python3-selenium is for Debian's python3
            os.environ["CAUSTIC_SERVE_REEXEC"] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        skip("the browser test needs chromium, chromium-driver and python3-selenium "
             "(CAUSTIC_DEPS_BROWSER=1 scripts/deps.sh installs them)")
    tmp = tempfile.mkdtemp(prefix="caustic-serve-")
    shot = os.environ.get("CAUSTIC_SERVE_SCREENSHOT")
    proc, url, token = start(caustic, tmp, "320x240" if shot else "96x96")
    host, port, _ = serve_client.parse_url(url)
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=720,560"):
        opts.add_argument(a)
    service = webdriver.ChromeService(executable_path=driver_path) if hasattr(webdriver, "ChromeService") else \
        webdriver.chrome.service.Service(executable_path=driver_path)
    d = webdriver.Chrome(service=service, options=opts)
    try:
        d.set_script_timeout(30)
        # without the token: refused
        d.get(f"http://{host}:{port}/")
        if "access token" not in d.find_element(By.TAG_NAME, "body").text:
            fail("the page without the token was not refused: " + d.page_source[:300])
        print("ok: the browser without the token is refused")
        d.get(url)

        def state():
            return d.execute_script("return window.caustic && {frames: window.caustic.frames, "
                                    "title: window.caustic.title, open: window.caustic.open};") or {}

        def pixels():
            return d.execute_script("var c = document.getElementById('view');"
                                    "return Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data"
                                    ".filter(function (v, i) { return i % 4 !== 3; }));")

        def wait(pred, seconds, what):
            t0 = time.monotonic()
            while time.monotonic() - t0 < seconds:
                s = state()
                if pred(s):
                    return s
                time.sleep(0.2)
            fail(f"{what} within {seconds} s (state {state()})")

        wait(lambda s: s.get("frames", 0) > 0 and spp_of(s.get("title")) >= SPP, 180, "no converged image")
        time.sleep(1.0)
        a = pixels()
        if max(a) == 0:
            fail("the converged image is black")
        print(f"ok: the page shows the render, converged: {state()['title']!r}")
        frames0 = state()["frames"]
        canvas = d.find_element(By.ID, "view")
        ch = ActionChains(d).move_to_element(canvas).click_and_hold()
        for _ in range(10):
            ch = ch.move_by_offset(6, 0)
        ch.release().perform()

        def diff(x, y):
            return sum(abs(p - q) for p, q in zip(x, y)) / len(x)

        t0, changed = time.monotonic(), 0.0
        while time.monotonic() - t0 < 60 and changed < 2.0:
            time.sleep(0.2)
            if state()["frames"] > frames0:
                changed = diff(a, pixels())
        if changed < 2.0:
            fail(f"the image did not change after a mouse drag (mean difference {changed:.2f})")
        print(f"ok: a mouse drag changes the image (mean difference {changed:.1f} of 255)")
        s = wait(lambda s: spp_of(s.get("title")) >= SPP, 180, "not converged again")
        time.sleep(1.0)
        b = pixels()
        time.sleep(1.5)
        c = pixels()
        if diff(b, c) != 0.0:
            fail("the image still changes after convergence")
        if diff(a, c) < 2.0:
            fail("the converged image after the drag is the one before it")
        print(f"ok: it converges again: {s['title']!r}")
        if shot:
            d.save_screenshot(shot)
            print("screenshot: " + shot)
        alive(proc)
    finally:
        d.quit()
        if proc.poll() is None:
            stop(proc)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("protocol", "browser"):
        sys.exit(__doc__)
    (protocol if sys.argv[2] == "protocol" else browser)(sys.argv[1])
    print("PASS")

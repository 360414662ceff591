#!/usr/bin/env python3
"""A small client of `caustic serve` (Python standard library only): its WebSocket, frames and
messages, for measurements and tests.

  serve_client.py bench URL [--seconds S] [--moves N]
      URL as caustic serve prints it (http://HOST:PORT/?token=T). Counts frames for S seconds
      (default 5) with the view still (frames/s, MB/s), then N times (default 20) drags the
      mouse (a button down, a move, a button up, then the tag "t K") and times each move to the
      first frame carrying tag K: the frame rendered after the viewer took the move. Prints one
      line: serve-bench: fps_still=... latency_ms_median=... latency_ms_p90=... ...

Frames are 8 bytes (tag, number: little-endian uint32) and a JPEG (src/serve/serve.c); a client
acknowledges each with "a" (the server keeps at most 2 unacknowledged frames in flight).
"""
import argparse
import base64
import os
import socket
import statistics
import struct
import sys
import time
import urllib.parse


class WebSocket:
    """A client WebSocket (RFC 6455) over a plain socket: text and binary messages, no extensions."""

    def __init__(self, host, port, path, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            head += chunk
        status_line = head.split(b"\r\n", 1)[0].decode(errors="replace")
        self.status = int(status_line.split()[1]) if len(status_line.split()) > 1 else 0
        self.response = head.decode(errors="replace")
        self.buf = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
        if self.status != 101:
            # the refusal's body (what the server says) after the headers
            try:
                while True:
                    chunk = self.sock.recv(4096)
                    if not chunk:
                        break
                    self.buf += chunk
            except OSError:
                pass
            self.body = self.buf.decode(errors="replace")
            self.sock.close()
            raise ConnectionRefusedError(f"{status_line}: {self.body.strip()}")

    def send_frame(self, opcode, payload, fin=True):
        head = bytearray([(0x80 if fin else 0) | opcode])
        n = len(payload)
        if n < 126:
            head.append(0x80 | n)
        elif n < 65536:
            head.append(0x80 | 126)
            head += struct.pack(">H", n)
        else:
            head.append(0x80 | 127)
            head += struct.pack(">Q", n)
        mask = os.urandom(4)
        head += mask
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(bytes(head) + body)

    def send(self, text):
        self.send_frame(0x1, text.encode())

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self, ack=True):
        """(opcode, payload) of the next message; a close is (8, payload). A frame (binary) is
        acknowledged ("a") unless ack is False."""
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0xF, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            if opcode == 0x2 and ack:
                self.send("a")
            if opcode == 0x9:  # ping: pong
                self.send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            return opcode, payload

    def close(self):
        try:
            self.send_frame(0x8, b"\x03\xe8")
        except OSError:
            pass
        self.sock.close()


def parse_url(url):
    u = urllib.parse.urlparse(url)
    token = urllib.parse.parse_qs(u.query).get("token", [""])[0]
    return u.hostname, u.port or 80, token


def connect(url, timeout=10.0):
    host, port, token = parse_url(url)
    return WebSocket(host, port, "/ws?token=" + token, timeout)


def frame_header(payload):
    tag, seq = struct.unpack("<II", payload[:8])
    return tag, seq


def bench(url, seconds, moves):
    ws = connect(url)
    size = None
    # the first frame gives the image size (JPEG SOF0/SOF2 marker)
    while size is None:
        op, p = ws.recv()
        if op == 2:
            jpg = p[8:]
            i = 2
            while i < len(jpg) - 9:
                if jpg[i] == 0xFF and jpg[i + 1] in (0xC0, 0xC2):
                    h, w = struct.unpack(">HH", jpg[i + 5:i + 9])
                    size = (w, h)
                    break
                i += 2 + struct.unpack(">H", jpg[i + 2:i + 4])[0] if jpg[i] == 0xFF else 1
    w, h = size
    t0, frames, nbytes = time.monotonic(), 0, 0
    while time.monotonic() - t0 < seconds:
        op, p = ws.recv()
        if op == 2:
            frames += 1
            nbytes += len(p)
    still = time.monotonic() - t0
    lat, tag, mframes, t1 = [], 0, 0, time.monotonic()
    for k in range(moves):
        tag += 1
        x, y = w // 2, h // 2
        dx = 12 if k % 2 == 0 else -12
        ts = time.monotonic()
        ws.send(f"d 1 {x} {y}")
        ws.send(f"m {x + dx} {y}")
        ws.send(f"u 1 {x + dx} {y}")
        ws.send(f"t {tag}")
        while True:
            op, p = ws.recv()
            if op == 2:
                mframes += 1
                if frame_header(p)[0] >= tag:
                    lat.append((time.monotonic() - ts) * 1e3)
                    break
            elif op == 8:
                raise ConnectionError("closed: " + p[2:].decode(errors="replace"))
        # let it render a little between moves (as a hand would)
        te = time.monotonic() + 0.1
        while time.monotonic() < te:
            op, p = ws.recv()
            if op == 2:
                mframes += 1
    moving = time.monotonic() - t1
    ws.close()
    lat.sort()
    p90 = lat[min(len(lat) - 1, int(0.9 * len(lat)))] if lat else 0.0
    print(f"serve-bench: res={w}x{h} still_seconds={still:.1f} fps_still={frames / still:.1f} "
          f"MB/s_still={nbytes / still / 1e6:.2f} kB_per_frame={nbytes / max(frames, 1) / 1e3:.1f} "
          f"moves={moves} fps_moving={mframes / moving:.1f} latency_ms_median={statistics.median(lat):.1f} "
          f"latency_ms_p90={p90:.1f} latency_ms_min={lat[0]:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench")
    b.add_argument("url")
    b.add_argument("--seconds", type=float, default=5.0)
    b.add_argument("--moves", type=int, default=20)
    a = ap.parse_args()
    if a.cmd == "bench":
        bench(a.url, a.seconds, a.moves)


if __name__ == "__main__":
    sys.exit(main())

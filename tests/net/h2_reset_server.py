#!/usr/bin/env python3
"""A TLS server that breaks every HTTP/2 stream but serves HTTP/1.1: proves a client's HTTP/2 -> HTTP/1.1
fallback (standard library only).

  h2_reset_server.py --cert CERT --key KEY [--host 127.0.0.1] [--port 0] [--mode rst|goaway]

Prints "PORT <n>" (flushed) once it listens. ALPN offers h2 and http/1.1:
  h2        the server sends its SETTINGS, acknowledges the client's, and answers each request (a HEADERS
            frame) with RST_STREAM(INTERNAL_ERROR) (--mode rst, the default) or with GOAWAY(INTERNAL_ERROR)
            and a closed connection (--mode goaway). No HTTP/2 response is ever completed.
  http/1.1  (or no ALPN) every request gets 200 with the body "ok <path> http/1.1\\n", keep-alive.
GET /_stats over HTTP/1.1 answers JSON {"h2_streams_reset": N, "h2_connections": N, "http1_requests": N}.
Make a throwaway key and certificate with the openssl CLI at test time, e.g.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost \\
      -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout key.pem -out cert.pem
"""
import argparse
import json
import socket
import ssl
import struct
import threading

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS, HEADERS, RST_STREAM, GOAWAY, PING = 0x4, 0x1, 0x3, 0x7, 0x6
INTERNAL_ERROR = 0x2

counters = {"h2_streams_reset": 0, "h2_connections": 0, "http1_requests": 0}
lock = threading.Lock()


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def read_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def serve_h2(conn, mode):
    with lock:
        counters["h2_connections"] += 1
    if read_exact(conn, len(PREFACE)) != PREFACE:
        return
    conn.sendall(frame(SETTINGS, 0, 0))
    while True:
        head = read_exact(conn, 9)
        length = int.from_bytes(head[:3], "big")
        kind, flags = head[3], head[4]
        stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
        payload = read_exact(conn, length)
        if kind == SETTINGS and not flags & 0x1:
            conn.sendall(frame(SETTINGS, 0x1, 0))
        elif kind == PING and not flags & 0x1:
            conn.sendall(frame(PING, 0x1, 0, payload))
        elif kind == HEADERS:
            with lock:
                counters["h2_streams_reset"] += 1
            if mode == "goaway":
                conn.sendall(frame(GOAWAY, 0, 0, struct.pack(">II", 0, INTERNAL_ERROR)))
                return
            conn.sendall(frame(RST_STREAM, 0, stream, struct.pack(">I", INTERNAL_ERROR)))


def serve_http1(conn):
    buf = b""
    while True:
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        request_line = head.split(b"\r\n")[0].decode("latin-1")
        parts = request_line.split(" ")
        path = parts[1] if len(parts) > 1 else "/"
        if path == "/_stats":
            with lock:
                body = json.dumps(counters).encode()
        else:
            with lock:
                counters["http1_requests"] += 1
            body = f"ok {path} http/1.1\n".encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + str(len(body)).encode() +
                     b"\r\n\r\n" + body)


def handle(raw, context, mode):
    try:
        with context.wrap_socket(raw, server_side=True) as conn:
            if conn.selected_alpn_protocol() == "h2":
                serve_h2(conn, mode)
            else:
                serve_http1(conn)
    except (OSError, ConnectionError, ssl.SSLError):
        pass
    finally:
        try:
            raw.close()
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=("rst", "goaway"), default="rst")
    args = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    context.set_alpn_protocols(["h2", "http/1.1"])
    listener = socket.create_server((args.host, args.port))
    print(f"PORT {listener.getsockname()[1]}", flush=True)
    while True:
        raw, _ = listener.accept()
        threading.Thread(target=handle, args=(raw, context, args.mode), daemon=True).start()


if __name__ == "__main__":
    main()

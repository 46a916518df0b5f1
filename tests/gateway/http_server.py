#!/usr/bin/env python3
"""The server side of the gateway's namespace test (netns_gateway_test.sh).

A real HTTP/1.1 server (http.server.ThreadingHTTPServer, keep-alive) on
[::]:HTTP_PORT, both families:

  GET  /bytes/N[.EXT]?seed=S     N deterministic bytes (content.py), Content-Type
                                 by EXT: .html text/html, .js application/javascript,
                                 .png image/png, .jpg image/jpeg, else octet-stream
  GET  /slow/N[.EXT]?seed=S&seconds=T   the same N bytes spread over T seconds
  GET  /reset/N?seed=S           announces N bytes, sends a quarter, then resets the
                                 connection (SO_LINGER 0): never a clean EOF
  GET  /health                   "ok"
  PUT|POST any path              the body (Content-Length or chunked) is read and
                                 answered with "SHA256HEX SIZE\\n"

and a raw TCP server on [::]:RAW_PORT for the half-close cases, one command
line per connection:

  UPLOAD\\n<bytes...>EOF         reads to EOF, answers "SHA256HEX SIZE\\n", closes
  EARLYFIN TOKEN M K\\n<bytes...> reads K bytes, then sends M bytes (content(M,
                                 TOKEN)) and shuts its write side while the client
                                 is still sending, then reads to EOF and keeps
                                 "SHA256HEX SIZE" of all it read under TOKEN
  RESULT TOKEN\\n                answers what EARLYFIN TOKEN read ("pending" until
                                 its EOF), closes

and, with --silent-port, a server that accepts and never answers: it reads
and discards what the client sends until the client closes, then prints
"silent-end EPOCH eof|reset BYTES" on stdout (the fault matrix checks that a
client's close reaches the server through the gateways).

Prints "ready" once all listen.
  usage: http_server.py [--http-port 80] [--raw-port 7000] [--silent-port PORT]
"""
import argparse
import hashlib
import http.server
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse

from content import content, content_type, digest_of

quiet = True


def log(*args):
    if not quiet:
        print(*args, file=sys.stderr, flush=True)


def hard_reset(sock):
    """Closes with an RST (SO_LINGER 0) rather than a FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "egw-test/1"

    def log_message(self, fmt, *args):
        log("%s %s" % (self.client_address[0], fmt % args))

    def _query(self):
        parts = urllib.parse.urlsplit(self.path)
        return parts.path, dict(urllib.parse.parse_qsl(parts.query))

    def _size(self, path, prefix):
        name = path[len(prefix):]
        return int(name.split(".", 1)[0])

    def _head(self, status, length, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def _text(self, status, text):
        body = text.encode()
        self._head(status, len(body), "text/plain")
        self.wfile.write(body)

    def do_GET(self):
        path, q = self._query()
        seed = q.get("seed", "0")
        try:
            if path == "/health":
                return self._text(200, "ok\n")
            if path.startswith("/bytes/"):
                n = self._size(path, "/bytes/")
                self._head(200, n, content_type(path))
                for chunk in content(n, seed):
                    self.wfile.write(chunk)
                return
            if path.startswith("/slow/"):
                n = self._size(path, "/slow/")
                seconds = float(q.get("seconds", "10"))
                self._head(200, n, content_type(path))
                chunks = max(1, (n + 16383) // 16384)
                pause = seconds / chunks
                for chunk in content(n, seed):
                    for at in range(0, len(chunk), 16384):
                        self.wfile.write(chunk[at:at + 16384])
                        self.wfile.flush()
                        time.sleep(pause)
                return
            if path.startswith("/reset/"):
                n = self._size(path, "/reset/")
                self._head(200, n, content_type(path))
                sent = 0
                for chunk in content(n // 4, seed):
                    self.wfile.write(chunk)
                    sent += len(chunk)
                self.wfile.flush()
                time.sleep(0.3)  # the bytes leave before the RST
                self.close_connection = True
                # makefile() objects keep the socket open: close them first so
                # close() really closes (with the RST).
                self.rfile.close()
                self.wfile.close()
                hard_reset(self.connection)
                log("reset after %d of %d bytes" % (sent, n))
                return
        except (ValueError, IndexError):
            return self._text(400, "bad request\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        self._text(404, "not found\n")

    def _body(self):
        h = hashlib.sha256()
        size = 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                line = self.rfile.readline(1024)
                n = int(line.split(b";", 1)[0].strip(), 16)
                if n == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                left = n
                while left:
                    data = self.rfile.read(min(left, 1 << 16))
                    if not data:
                        raise ConnectionError("EOF in a chunk")
                    h.update(data)
                    size += len(data)
                    left -= len(data)
                self.rfile.readline(16)
        else:
            left = int(self.headers.get("Content-Length", "0"))
            while left:
                data = self.rfile.read(min(left, 1 << 16))
                if not data:
                    raise ConnectionError("EOF in the body")
                h.update(data)
                size += len(data)
                left -= len(data)
        return h.hexdigest(), size

    def do_PUT(self):
        try:
            hexdigest, size = self._body()
        except (ValueError, ConnectionError) as e:
            self.close_connection = True
            log("upload failed: %s" % e)
            return
        self._text(200, "%s %d\n" % (hexdigest, size))

    do_POST = do_PUT


class DualStackServer(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True
    request_queue_size = 1024

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


# ---------------------------------------------------------------- raw TCP

results = {}
results_lock = threading.Lock()


def read_line(sock):
    line = b""
    while not line.endswith(b"\n"):
        b = sock.recv(1)
        if not b:
            break
        line += b
        if len(line) > 200:
            break
    return line.decode(errors="replace").strip()


def raw_connection(sock):
    try:
        words = read_line(sock).split()
        if not words:
            return
        if words[0] == "UPLOAD":
            hexdigest, size = digest_of(sock.recv)
            sock.sendall(b"%s %d\n" % (hexdigest.encode(), size))
        elif words[0] == "EARLYFIN" and len(words) == 4:
            token, m, k = words[1], int(words[2]), int(words[3])
            with results_lock:
                results[token] = "pending"
            h = hashlib.sha256()
            size = 0
            while size < k:  # the client is sending: FIN in the middle of it
                data = sock.recv(min(1 << 16, k - size))
                if not data:
                    break
                h.update(data)
                size += len(data)
            for chunk in content(m, token):
                sock.sendall(chunk)
            sock.shutdown(socket.SHUT_WR)
            while True:
                data = sock.recv(1 << 16)
                if not data:
                    break
                h.update(data)
                size += len(data)
            hexdigest = h.hexdigest()
            with results_lock:
                results[token] = "%s %d" % (hexdigest, size)
        elif words[0] == "RESULT" and len(words) == 2:
            with results_lock:
                answer = results.get(words[1], "unknown")
            sock.sendall(answer.encode() + b"\n")
    except OSError as e:
        log("raw connection: %s" % e)
    finally:
        sock.close()


def serve_tcp(port, handler):
    """Accepts on [::]:port (both families), each connection in a thread of its own."""
    s = socket.create_server(("::", port), family=socket.AF_INET6, dualstack_ipv6=True, backlog=128)

    def serve():
        while True:
            c, _ = s.accept()
            threading.Thread(target=handler, args=(c,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()


def silent_connection(sock):
    got = 0
    how = "eof"
    try:
        while True:
            data = sock.recv(1 << 16)
            if not data:
                break
            got += len(data)
    except OSError:
        how = "reset"
    finally:
        sock.close()
    print("silent-end %.3f %s %d" % (time.time(), how, got), flush=True)



def main():
    global quiet
    p = argparse.ArgumentParser()
    p.add_argument("--http-port", type=int, default=80)
    p.add_argument("--raw-port", type=int, default=7000)
    p.add_argument("--silent-port", type=int, default=0)
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args()
    quiet = not a.verbose
    httpd = DualStackServer(("::", a.http_port), Handler)
    serve_tcp(a.raw_port, raw_connection)
    if a.silent_port:
        serve_tcp(a.silent_port, silent_connection)
    print("ready", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()

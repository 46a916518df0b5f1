#!/usr/bin/env python3
"""The client side of the fault matrix (fault_matrix.sh): one transfer per
command, judged by what the user sees.

Every transfer ends in one of these outcomes:
  intact     all bytes arrived and their SHA-256 is the one the server sent
             (content.py: the server's bytes are content(SIZE, SEED))
  reset      the connection was reset, and the bytes that did arrive are an
             exact prefix of what the server sent (SHA-256 of the prefix)
  truncated  a clean EOF before the end: a silent truncation (always a failure)
  corrupt    bytes that differ from the server's (always a failure)
  hang       no byte for LIMIT seconds (always a failure)

  fault_client.py get HOST PORT PATH SIZE SEED LIMIT EXPECT
      GET PATH (a /bytes/, /slow/ or /reset/ URL of http_server.py serving
      content(SIZE, SEED)); prints "receiving EPOCH" once 64 KB arrived
  fault_client.py put HOST PORT SIZE SEED LIMIT EXPECT
      PUT SIZE bytes; the server answers the SHA-256 and size it read
  fault_client.py silent HOST PORT WAIT
      sends a request to a server that never answers: expects neither a
      byte nor a reset nor an EOF for WAIT seconds (what a direct connection
      shows), then closes
EXPECT: intact, reset or intact|reset. Each command prints one line of
figures ending with "end=EPOCH outcome=OUTCOME bytes=N" and exits 0 when the
outcome is expected, 1 otherwise (2 on bad usage).
"""
import hashlib
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gateway"))
from client import main as dispatch  # noqa: E402
from content import content, digest  # noqa: E402


def prefix_digest(size, seed, n):
    """SHA-256 of the first n bytes the server sends for content(size, seed)."""
    h = hashlib.sha256()
    left = n
    for chunk in content(size, seed):
        if left <= 0:
            break
        h.update(chunk[:left])
        left -= len(chunk)
    return h.hexdigest()


def error_outcome(e):
    if isinstance(e, (ConnectionResetError, ConnectionAbortedError, ConnectionRefusedError, BrokenPipeError)):
        return "reset"
    if isinstance(e, (socket.timeout, TimeoutError)):
        return "hang"
    return "%s: %s" % (type(e).__name__, e)


def finish(outcome, expect, got, t0, text):
    print("%s: %s in %.2f s; end=%.3f outcome=%s bytes=%d" % (
        outcome, text, time.monotonic() - t0, time.time(), outcome, got), flush=True)
    return 0 if outcome in expect.split("|") else 1


def cmd_get(host, port, path, size, seed, limit, expect):
    size, limit = int(size), float(limit)
    t0 = time.monotonic()
    head = b""
    body = 0
    h = hashlib.sha256()
    announced = False
    outcome = None
    try:
        s = socket.create_connection((host, int(port)), timeout=limit)
        s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path.encode(), host.encode()))
        while body < size:
            data = s.recv(1 << 16)
            if not data:
                outcome = "truncated"
                break
            if b"\r\n\r\n" not in head:
                head += data
                if b"\r\n\r\n" not in head:
                    continue
                head, _, data = head.partition(b"\r\n\r\n")
                head += b"\r\n\r\n"
                if not head.startswith(b"HTTP/1.1 200"):
                    outcome = "corrupt"
                    break
            h.update(data)
            body += len(data)
            if not announced and body >= 65536:
                print("receiving %.3f" % time.time(), flush=True)
                announced = True
        s.close()
    except Exception as e:  # noqa: BLE001 -- how it ended is the figure
        outcome = error_outcome(e)
    got = h.hexdigest()
    if outcome is None:
        outcome = "intact" if body == size and got == digest(size, seed) else "corrupt"
        text = "%d of %d bytes, sha256 %s" % (body, size, "matches the server's" if outcome == "intact"
                                                else "differs from the server's")
    else:
        same = body <= size and got == prefix_digest(size, seed, body)
        if not same:
            outcome = "corrupt"
        text = "%d of %d bytes, sha256 of the prefix %s" % (
            body, size, "matches the server's" if same else "DIFFERS from the server's")
    return finish(outcome, expect, body, t0, text)


def cmd_put(host, port, size, seed, limit, expect):
    size, limit = int(size), float(limit)
    t0 = time.monotonic()
    sent = 0
    answer = b""
    try:
        s = socket.create_connection((host, int(port)), timeout=limit)
        s.sendall(b"PUT /upload HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (
            host.encode(), size))
        for chunk in content(size, seed):
            s.sendall(chunk)
            sent += len(chunk)
        while True:
            data = s.recv(4096)
            if not data:
                break
            answer += data
        s.close()
        body = answer.partition(b"\r\n\r\n")[2].decode(errors="replace").strip()
        if not answer:
            outcome = "truncated"
        else:
            outcome = "intact" if body == "%s %d" % (digest(size, seed), size) else "corrupt"
        text = "sent %d bytes, server read %s" % (sent, "the same sha256 and size" if outcome == "intact"
                                                   else repr(body[:80]) if answer else "? (EOF, no answer)")
    except Exception as e:  # noqa: BLE001
        outcome = error_outcome(e)
        text = "sent %d of %d bytes, then %s" % (sent, size, outcome)
    return finish(outcome, expect, sent, t0, text)


def cmd_silent(host, port, wait):
    wait = float(wait)
    t0 = time.monotonic()
    s = None
    try:
        s = socket.create_connection((host, int(port)), timeout=wait)
        s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host.encode())
        data = s.recv(1)
        outcome = "answered" if data else "eof"
    except (socket.timeout, TimeoutError):
        outcome = "open"
    except Exception as e:  # noqa: BLE001
        outcome = error_outcome(e)
    if s:
        s.close()
    print("%s: nothing received for %.2f s, then the client closed; end=%.3f outcome=%s bytes=0" % (
        outcome, time.monotonic() - t0, time.time(), outcome), flush=True)
    return 0 if outcome == "open" else 1


COMMANDS = {"get": cmd_get, "put": cmd_put, "silent": cmd_silent}


if __name__ == "__main__":
    sys.exit(dispatch(COMMANDS, __doc__))

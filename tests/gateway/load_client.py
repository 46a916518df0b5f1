#!/usr/bin/env python3
"""Load clients for the gateway's overload and slow-reader tests
(netns_load_test.sh) and the soak (bench/soak). Each command prints one
line of figures (JSON) and exits 0 when the outcome is the expected one.

  load_client.py downloads HOST PORT COUNT SIZE SEED [PATH_PREFIX]
      COUNT downloads of SIZE bytes at once, every SHA-256 checked; figures:
      per-download rate (min, median), the aggregate, the slowest. With
      PATH_PREFIX /slow and SEED "NAME&seconds=T" each is spread over T s.
  load_client.py refused HOST PORT COUNT WITHIN
      COUNT connections one after the other, each sends a GET and must see a
      reset within WITHIN s (not an answer, not a clean EOF, not a hang).
  load_client.py outcomes HOST PORT COUNT WITHIN
      COUNT connections at once, each sends a GET: a reset or an answer
      within WITHIN s are fine, a clean EOF without an answer or nothing
      (hung) are not.
  load_client.py stall HOST PORT COUNT SIZE
      COUNT connections that ask for SIZE bytes and never read (a 4 KiB
      receive buffer): prints {"stalled": N} once every request is sent, then
      holds them until stdin closes or SIGTERM, and closes them with a reset.
"""
import json
import os
import select
import signal
import socket
import statistics
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client import at_once, failures_of, http_get, outcome_of  # noqa: E402
from content import digest  # noqa: E402


def emit(passed, **figures):
    print(json.dumps(figures, sort_keys=True), flush=True)
    return 0 if passed else 1


def cmd_downloads(host, port, count, size, seed, prefix="/bytes"):
    port, count, size = int(port), int(count), int(size)
    seed, _, query = seed.partition("&")
    results = [None] * count

    def one(i):
        path = "%s/%d.bin?seed=%s-%d%s" % (prefix, size, seed, i, "&" + query if query else "")
        try:
            status, got, n, _, secs = http_get(host, port, path, 120)
            ok = status == 200 and n == size and got == digest(size, "%s-%d" % (seed, i))
            results[i] = ("ok" if ok else "bad(status %d, %d of %d bytes)" % (status, n, size), secs)
        except Exception as e:  # noqa: BLE001 -- any failure is a figure
            results[i] = (outcome_of(e), 0.0)

    wall = at_once(count, one, 150)
    ok = [r for r in results if r and r[0] == "ok"]
    failures = failures_of(results)
    rates = sorted(size * 8 / 1e6 / max(r[1], 1e-6) for r in ok)
    return emit(len(ok) == count, ok=len(ok), count=count, failures=failures, wall_s=round(wall, 2),
                mbit_s_min=round(rates[0], 1) if rates else 0,
                mbit_s_median=round(statistics.median(rates), 1) if rates else 0,
                mbit_s_aggregate=round(len(ok) * size * 8 / 1e6 / max(wall, 1e-6), 1),
                slowest_s=round(max((r[1] for r in ok), default=0), 2))


def expect_reset(host, port, within):
    """'reset', 'answered', 'eof' or 'timeout', and the seconds it took."""
    t0 = time.monotonic()
    try:
        s = socket.create_connection((host, port), timeout=within)
        s.settimeout(within)
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = s.recv(4096)
        s.close()
        return ("answered" if data else "eof"), time.monotonic() - t0
    except Exception as e:  # noqa: BLE001
        out = outcome_of(e)
        if isinstance(e, (BrokenPipeError, ConnectionRefusedError)):
            out = "reset"
        return out, time.monotonic() - t0


def cmd_refused(host, port, count, within):
    port, count, within = int(port), int(count), float(within)
    outcomes, slowest = {}, 0.0
    for _ in range(count):
        out, secs = expect_reset(host, port, within)
        outcomes[out] = outcomes.get(out, 0) + 1
        slowest = max(slowest, secs)
    return emit(outcomes.get("reset", 0) == count, count=count, outcomes=outcomes, slowest_s=round(slowest, 3))


def cmd_outcomes(host, port, count, within):
    port, count, within = int(port), int(count), float(within)
    results = [None] * count

    def one(i):
        results[i] = expect_reset(host, port, within)
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(within + 5)
    outcomes = {}
    for r in results:
        key = r[0] if r else "timeout"
        outcomes[key] = outcomes.get(key, 0) + 1
    slowest = max((r[1] for r in results if r), default=0.0)
    return emit(outcomes.get("reset", 0) + outcomes.get("answered", 0) == count, count=count, outcomes=outcomes,
                slowest_s=round(slowest, 3))


def cmd_stall(host, port, count, size):
    port, count, size = int(port), int(count), int(size)
    socks = []
    for i in range(count):
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
        s.connect((host, port))
        s.sendall(b"GET /bytes/%d.bin?seed=stall-%d HTTP/1.1\r\nHost: x\r\n\r\n" % (size, i))
        socks.append(s)
    print(json.dumps({"stalled": len(socks)}), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.is_set():
        r, _, _ = select.select([sys.stdin], [], [], 0.5)
        if r and not sys.stdin.readline():
            break
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    return 0


COMMANDS = {"downloads": cmd_downloads, "refused": cmd_refused, "outcomes": cmd_outcomes, "stall": cmd_stall}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(COMMANDS[sys.argv[1]](*sys.argv[2:]))

#!/usr/bin/env python3
"""One LAN client that takes connection slots, and another that loads pages
beside it (netns_hog_test.sh, issue 19). Each command prints one line of
figures (JSON).

  hog_client.py hog SOURCE HOST PORT COUNT
      COUNT connections from SOURCE (an address of this host) to HOST:PORT,
      opened as fast as they go, that send nothing: prints {"opened": N,
      "failed": M, "open_s": T} once every connect ended, then holds them
      until stdin closes or SIGTERM, and closes them (a FIN each) and exits.
  hog_client.py pages HOST PORT COUNT SIZE [SECONDS]
      COUNT page loads one after the other (a new connection each, GET of
      SIZE bytes, SHA-256 checked, 5 s at most each), or as many as fit in
      SECONDS: success rate and latency (median, p95, max).
"""
import json
import os
import resource
import selectors
import signal
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client import http_get, outcome_of  # noqa: E402
from content import digest  # noqa: E402


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def cmd_hog(source, host, port, count):
    raise_nofile()
    port, count = int(port), int(count)
    sel = selectors.DefaultSelector()
    socks, failed, connecting = [], {}, 0
    t0 = time.monotonic()
    for _ in range(count):
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        s.bind((source, 0))
        s.setblocking(False)
        err = s.connect_ex((host, port))
        if err not in (0, 115):  # EINPROGRESS
            failed[os.strerror(err)] = failed.get(os.strerror(err), 0) + 1
            s.close()
            continue
        sel.register(s, selectors.EVENT_WRITE)
        connecting += 1
        while connecting > 512:  # keep the SYN backlog reasonable
            connecting -= finish_connects(sel, socks, failed, 0.5)
    while connecting > 0:
        done = finish_connects(sel, socks, failed, 10)
        if done == 0:
            break
        connecting -= done
    print(json.dumps({"opened": len(socks), "failed": failed, "open_s": round(time.monotonic() - t0, 2)}), flush=True)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    sel2 = selectors.DefaultSelector()
    sel2.register(sys.stdin, selectors.EVENT_READ)
    while not stop:
        if sel2.select(0.5) and not sys.stdin.readline():
            break
    for s in socks:
        s.close()
    return 0


def finish_connects(sel, socks, failed, timeout):
    done = 0
    for key, _ in sel.select(timeout):
        s = key.fileobj
        sel.unregister(s)
        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err == 0:
            socks.append(s)
        else:
            failed[os.strerror(err)] = failed.get(os.strerror(err), 0) + 1
            s.close()
        done += 1
    return done


def cmd_pages(host, port, count, size, seconds="0"):
    port, count, size, seconds = int(port), int(count), int(size), float(seconds)
    outcomes, latencies = {}, []
    t0 = time.monotonic()
    for i in range(count):
        if seconds and time.monotonic() - t0 > seconds:
            break
        seed = "page-%d-%d" % (os.getpid(), i)
        try:
            status, got, n, _, secs = http_get(host, port, "/bytes/%d.html?seed=%s" % (size, seed), 5)
            ok = status == 200 and n == size and got == digest(size, seed)
            out = "ok" if ok else "bad"
            if ok:
                latencies.append(secs)
        except Exception as e:  # noqa: BLE001 -- any failure is a figure
            out = outcome_of(e)
        outcomes[out] = outcomes.get(out, 0) + 1
    total = sum(outcomes.values())
    latencies.sort()
    ms = lambda x: round(1000 * x, 1)  # noqa: E731
    print(json.dumps({
        "loads": total, "ok": outcomes.get("ok", 0), "outcomes": outcomes,
        "success_pct": round(100.0 * outcomes.get("ok", 0) / max(total, 1), 1),
        "median_ms": ms(statistics.median(latencies)) if latencies else None,
        "p95_ms": ms(latencies[int(0.95 * (len(latencies) - 1))]) if latencies else None,
        "max_ms": ms(latencies[-1]) if latencies else None}, sort_keys=True), flush=True)
    return 0 if outcomes.get("ok", 0) == total else 1


COMMANDS = {"hog": cmd_hog, "pages": cmd_pages}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(COMMANDS[sys.argv[1]](*sys.argv[2:]))

#!/usr/bin/env python3
"""Mixed traffic for bench/soak, run in the client namespace against
tests/gateway/http_server.py. Every byte is checked (SHA-256 of the
deterministic content, tests/gateway/content.py).

  traffic.py HOST PORT SECONDS [--scale 1.0]

Four kinds at once, until SECONDS have passed:
  pages      a page load per second: an HTML page (20 KB), then 8 objects
             (2-200 KB, scripts and images) over 4 new keep-alive
             connections, closed after the page
  bulk       a 20 MB download every 5 s (at full speed), a 5 MB upload every 30 s
  keepalive  50 connections held for the whole run, each a small GET every
             5-15 s
  churn      10 connections a second: open, GET /health, close
Prints one JSON line per minute ({"minute": m, counts...}) and a last line
{"total": {...}}; exits 1 if any transfer failed.
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "gateway"))
from content import content, digest, digest_of  # noqa: E402

lock = threading.Lock()
counts = {}


def count(kind, ok, nbytes=0):
    with lock:
        c = counts.setdefault(kind, {"ok": 0, "failed": 0, "bytes": 0})
        c["ok" if ok else "failed"] += 1
        c["bytes"] += nbytes if ok else 0
        if not ok:
            errors.append(kind)


errors = []


def get(conn, size, seed, ext="bin"):
    """One GET on a keep-alive connection; True if every byte is right."""
    conn.request("GET", "/bytes/%d.%s?seed=%s" % (size, ext, seed))
    r = conn.getresponse()
    got, n = digest_of(r.read)
    return r.status == 200 and n == size and got == digest(size, seed)


def safely(kind, fn, nbytes):
    try:
        count(kind, fn(), nbytes)
    except Exception as e:  # noqa: BLE001 -- a failure is a figure
        count(kind, False)
        print(json.dumps({"error": kind, "what": "%s: %s" % (type(e).__name__, e)}), file=sys.stderr, flush=True)


def pages(host, port, stop, rng, period):
    n = 0
    while not stop.is_set():
        t0 = time.monotonic()
        n += 1

        def page():
            c = http.client.HTTPConnection(host, port, timeout=30)
            try:
                return get(c, 20_000, "page%d" % n, "html")
            finally:
                c.close()
        safely("page_html", page, 20_000)
        objects = [(rng.randint(2_000, 200_000), rng.choice(["js", "png", "jpg", "css"])) for _ in range(8)]

        def fetch(part):
            c = http.client.HTTPConnection(host, port, timeout=30)
            try:
                for i, (size, ext) in enumerate(part):
                    safely("page_object", lambda: get(c, size, "obj%d-%d-%d" % (n, i, size), ext), size)
            finally:
                c.close()
        threads = [threading.Thread(target=fetch, args=(objects[k::4],)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.wait(max(0.0, period - (time.monotonic() - t0)))


def bulk(host, port, stop, period):
    n = 0
    while not stop.is_set():
        t0 = time.monotonic()
        n += 1
        c = http.client.HTTPConnection(host, port, timeout=60)
        try:
            safely("bulk_download", lambda: get(c, 20_000_000, "bulk%d" % n), 20_000_000)
        finally:
            c.close()
        stop.wait(max(0.0, period - (time.monotonic() - t0)))


def uploads(host, port, stop, period):
    n = 0
    while not stop.wait(period):
        n += 1
        size = 5_000_000
        body = b"".join(content(size, "up%d" % n))

        def put():
            c = http.client.HTTPConnection(host, port, timeout=60)
            try:
                c.request("PUT", "/upload", body=body)
                answer = c.getresponse().read().decode().split()
                return answer == [hashlib.sha256(body).hexdigest(), str(size)]
            finally:
                c.close()
        safely("upload", put, size)


def keepalive(host, port, stop, rng, k):
    c = http.client.HTTPConnection(host, port, timeout=30)
    n = 0
    while not stop.wait(rng.uniform(5, 15)):
        n += 1
        try:
            ok = get(c, 1_000, "ka%d-%d" % (k, n))
        except Exception as e:  # noqa: BLE001
            print(json.dumps({"error": "keepalive", "what": "%s: %s" % (type(e).__name__, e)}),
                  file=sys.stderr, flush=True)
            ok = False
            c.close()
            c = http.client.HTTPConnection(host, port, timeout=30)  # reconnect: a failure is counted once
        count("keepalive", ok, 1_000)
    c.close()


def churn(host, port, stop, per_second):
    while not stop.is_set():
        t0 = time.monotonic()
        for _ in range(per_second):
            def health():
                c = http.client.HTTPConnection(host, port, timeout=10)
                try:
                    c.request("GET", "/health")
                    r = c.getresponse()
                    return r.status == 200 and r.read() == b"ok\n"
                finally:
                    c.close()
            safely("churn", health, 3)
        stop.wait(max(0.0, 1.0 - (time.monotonic() - t0)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("seconds", type=float)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the rates and the keep-alive count")
    a = ap.parse_args()
    rng = random.Random(1)
    stop = threading.Event()
    workers = [threading.Thread(target=pages, args=(a.host, a.port, stop, random.Random(2), 1.0 / a.scale)),
               threading.Thread(target=bulk, args=(a.host, a.port, stop, 5.0 / a.scale)),
               threading.Thread(target=uploads, args=(a.host, a.port, stop, 30.0 / a.scale)),
               threading.Thread(target=churn, args=(a.host, a.port, stop, max(1, round(10 * a.scale))))]
    workers += [threading.Thread(target=keepalive, args=(a.host, a.port, stop, random.Random(rng.random()), k))
                for k in range(max(1, round(50 * a.scale)))]
    for w in workers:
        w.start()
    t0 = time.monotonic()
    minute = 0
    while time.monotonic() - t0 < a.seconds:
        time.sleep(min(60.0, a.seconds - (time.monotonic() - t0)))
        minute += 1
        with lock:
            print(json.dumps({"minute": minute, "counts": counts}, sort_keys=True), flush=True)
    stop.set()
    for w in workers:
        w.join(90)
    with lock:
        print(json.dumps({"total": counts, "failed": len(errors)}, sort_keys=True), flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

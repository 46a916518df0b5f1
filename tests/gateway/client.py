#!/usr/bin/env python3
"""The client side of the gateway's namespace test (netns_gateway_test.sh).

Each command prints one line of figures and exits 0 when the outcome is the
expected one, 1 otherwise (2 on bad usage).

  client.py digest SIZE SEED            the SHA-256 of content(SIZE, SEED)
  client.py gen SIZE SEED               content(SIZE, SEED) on stdout
  client.py concurrent HOST PORT COUNT MIN MAX SEED
                                        COUNT downloads at once, random sizes, digests checked
  client.py expect-reset HOST PORT WITHIN [PATH]
                                        connect, send a GET, expect a reset (not EOF, not
                                        an answer, not a hang) within WITHIN seconds
  client.py reset-midway HOST PORT N    GET /reset/N: expect some bytes then a reset
  client.py halfclose-upload HOST PORT SIZE
  client.py halfclose-earlyfin HOST PORT DOWN UP
  client.py long-get HOST PORT PATH SIZE SEED LIMIT
                                        a download expected to be cut: prints when it
                                        started receiving and how it ended (epoch times)
  client.py retry HOST PORT DEADLINE    GET /health until it answers; seconds taken
  client.py overtake HOST PORT IMAGES IMAGE_SIZE HTML_SIZE DELAY FAIR_SHARE_S
                                        class overtaking figures (see cmd_overtake)
"""
import hashlib
import http.client
import inspect
import os
import random
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from content import content, digest, digest_of  # noqa: E402


def connect(host, port, timeout):
    return socket.create_connection((host, port), timeout=timeout)


def http_get(host, port, path, timeout=60):
    """(status, sha256 hex, size, content-type, seconds) of one GET."""
    t0 = time.monotonic()
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        hexdigest, size = digest_of(r.read)
        return r.status, hexdigest, size, r.getheader("Content-Type", ""), time.monotonic() - t0
    finally:
        c.close()


def outcome_of(e):
    if isinstance(e, ConnectionResetError):
        return "reset"
    if isinstance(e, (socket.timeout, TimeoutError)):
        return "timeout"
    if isinstance(e, http.client.IncompleteRead):
        return "clean-eof-truncated"
    if isinstance(e, http.client.RemoteDisconnected):
        return "clean-eof-no-response"
    return type(e).__name__ + ": " + str(e)


def at_once(count, one, join_s):
    """one(i) for i in range(count) on threads released together; the
    seconds from the release until they ended (or join_s each passed)."""
    start = threading.Barrier(count + 1)

    def run(i):
        start.wait()
        one(i)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    start.wait()
    for t in threads:
        t.join(join_s)
    return time.monotonic() - t0


def failures_of(results):
    """{outcome: count} of the (outcome, seconds) results not "ok" (None: "unfinished")."""
    failures = {}
    for r in results:
        if not r or r[0] != "ok":
            key = r[0] if r else "unfinished"
            failures[key] = failures.get(key, 0) + 1
    return failures


# ---------------------------------------------------------------- commands

def cmd_digest(size, seed):
    print(digest(int(size), seed))
    return 0


def cmd_gen(size, seed):
    out = sys.stdout.buffer
    for chunk in content(int(size), seed):
        out.write(chunk)
    out.flush()
    return 0


def cmd_concurrent(host, port, count, lo, hi, seed):
    port, count, lo, hi = int(port), int(count), int(lo), int(hi)
    rng = random.Random(seed)
    sizes = [rng.randint(lo, hi) for _ in range(count)]
    results = [None] * count

    def one(i):
        try:
            status, got, size, _, secs = http_get(host, port, "/bytes/%d?seed=c%s-%d" % (sizes[i], seed, i), 90)
            want = digest(sizes[i], "c%s-%d" % (seed, i))
            results[i] = ("ok" if status == 200 and got == want and size == sizes[i]
                          else "bad(status %d, %d of %d bytes)" % (status, size, sizes[i]), secs)
        except Exception as e:  # noqa: BLE001 -- any failure is a figure
            results[i] = (outcome_of(e), 0.0)

    wall = at_once(count, one, 120)
    ok = sum(1 for r in results if r and r[0] == "ok")
    failures = failures_of(results)
    secs = [r[1] for r in results if r and r[0] == "ok"]
    print("%d/%d complete with correct digests, %.1f MB in %.2f s (%.0f Mbit/s), "
          "per-connection median %.2f s max %.2f s%s" % (
              ok, count, sum(sizes) / 1e6, wall, sum(sizes) * 8 / 1e6 / wall,
              statistics.median(secs) if secs else 0, max(secs) if secs else 0,
              ", failures: %s" % failures if failures else ""))
    return 0 if ok == count else 1


def read_until_end(s, limit):
    """Reads until EOF, an error or `limit` seconds: (outcome, bytes, seconds)."""
    t0 = time.monotonic()
    got = 0
    s.settimeout(limit)
    try:
        while True:
            data = s.recv(1 << 16)
            if not data:
                return "eof", got, time.monotonic() - t0
            got += len(data)
    except Exception as e:  # noqa: BLE001
        return outcome_of(e), got, time.monotonic() - t0


def cmd_expect_reset(host, port, within, path="/"):
    within = float(within)
    t0 = time.monotonic()
    try:
        s = connect(host, int(port), within)
        s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path.encode(), host.encode()))
        outcome, got, _ = read_until_end(s, within)
    except Exception as e:  # noqa: BLE001
        outcome, got = "connect: " + outcome_of(e), 0
    secs = time.monotonic() - t0
    print("%s after %.3f s (%d bytes received)" % (outcome, secs, got))
    return 0 if outcome in ("reset", "connect: reset") and got == 0 and secs <= within else 1


def cmd_reset_midway(host, port, n):
    n = int(n)
    t0 = time.monotonic()
    s = connect(host, int(port), 10)
    s.sendall(b"GET /reset/%d?seed=r HTTP/1.1\r\nHost: %s\r\n\r\n" % (n, host.encode()))
    outcome, got, _ = read_until_end(s, 15)
    print("%s after %.2f s, %d bytes received (headers included) of %d announced" % (
        outcome, time.monotonic() - t0, got, n))
    return 0 if outcome == "reset" and got > 0 else 1


def cmd_halfclose_upload(host, port, size):
    size = int(size)
    seed = "hu%d" % os.getpid()
    s = connect(host, int(port), 30)
    s.sendall(b"UPLOAD\n")
    for chunk in content(size, seed):
        s.sendall(chunk)
    s.shutdown(socket.SHUT_WR)
    t0 = time.monotonic()
    reply = b""
    try:
        while True:
            data = s.recv(4096)
            if not data:
                break
            reply += data
    except Exception as e:  # noqa: BLE001
        print("after SHUT_WR: %s (reply so far %r)" % (outcome_of(e), reply))
        return 1
    want = "%s %d" % (digest(size, seed), size)
    got = reply.decode(errors="replace").strip()
    ok = got == want
    print("sent %d bytes + FIN; reply %s after %.2f s, then EOF" % (
        size, "matches the digest" if ok else "%r (want %r)" % (got, want), time.monotonic() - t0))
    return 0 if ok else 1


def cmd_halfclose_earlyfin(host, port, down, up):
    """The client sends UP bytes in all: half, then (once the server's FIN
    came) the rest and its own FIN. The server sends DOWN bytes and its FIN
    after a quarter of the client's bytes arrived: mid-upload."""
    down, up = int(down), int(up)
    token = "he%d" % os.getpid()
    port = int(port)
    s = connect(host, port, 30)
    # The server shuts its side after a quarter of ours: mid-upload.
    s.sendall(b"EARLYFIN %s %d %d\n" % (token.encode(), down, up // 4))
    state = {"got": 0, "h": hashlib.sha256(), "end": None, "sent_at_eof": None}
    sent = [0]
    eof = threading.Event()

    def reader():
        try:
            while True:
                data = s.recv(1 << 16)
                if not data:
                    state["end"] = "eof"
                    break
                state["h"].update(data)
                state["got"] += len(data)
        except Exception as e:  # noqa: BLE001
            state["end"] = outcome_of(e)
        state["sent_at_eof"] = sent[0]
        eof.set()

    rt = threading.Thread(target=reader, daemon=True)
    rt.start()
    chunks = list(content(up, token + "-up"))
    half = len(chunks) // 2
    for c in chunks[:half]:
        s.sendall(c)
        sent[0] += len(c)
    if not eof.wait(20):
        print("no EOF from the server within 20 s (got %d of %d bytes)" % (state["got"], down))
        return 1
    try:
        for c in chunks[half:]:
            s.sendall(c)
            sent[0] += len(c)
        s.shutdown(socket.SHUT_WR)
    except Exception as e:  # noqa: BLE001
        print("sending after the server's FIN failed: %s (%d of %d sent)" % (outcome_of(e), sent[0], up))
        return 1
    down_ok = state["end"] == "eof" and state["got"] == down and state["h"].hexdigest() == digest(down, token)
    # What the server read, from its own record (it cannot answer on this connection).
    want = "%s %d" % (digest(up, token + "-up"), up)
    answer = "pending"
    deadline = time.monotonic() + 20
    while answer == "pending" and time.monotonic() < deadline:
        time.sleep(0.1)
        q = connect(host, port, 10)
        q.sendall(b"RESULT %s\n" % token.encode())
        answer = q.makefile().readline().strip()
        q.close()
    s.close()
    up_ok = answer == want
    print("server's %d bytes + FIN: %s (%s, %d bytes) while the client had sent %d of %d; "
          "then the client sent the rest + FIN: server read %s" % (
              down, "ok" if down_ok else "BAD", state["end"], state["got"], state["sent_at_eof"], up,
              "all %d bytes, digest ok" % up if up_ok else "%r (want %r)" % (answer, want)))
    return 0 if down_ok and up_ok and state["sent_at_eof"] < up else 1


def cmd_long_get(host, port, path, size, seed, limit):
    """A download that the test cuts: prints 'receiving' once bytes flow
    (the driver then kills the hub), and at the end how it ended."""
    size, limit = int(size), float(limit)
    s = connect(host, int(port), 10)
    s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path.encode(), host.encode()))
    got = 0
    announced = False
    t0 = time.monotonic()
    s.settimeout(1)
    end = None
    while end is None:
        try:
            data = s.recv(1 << 16)
            if not data:
                end = "eof"
                break
            got += len(data)
            if not announced and got > 100_000:
                print("receiving %.3f" % time.time(), flush=True)
                announced = True
        except socket.timeout:
            if time.monotonic() - t0 > limit:
                end = "hang"
        except Exception as e:  # noqa: BLE001
            end = outcome_of(e)
    print("end %.3f %s %d" % (time.time(), end, got), flush=True)
    return 0 if end == "reset" and got < size else 1


def cmd_retry(host, port, deadline):
    deadline = float(deadline)
    t0 = time.monotonic()
    tries = 0
    last = ""
    while time.monotonic() - t0 < deadline:
        tries += 1
        try:
            status, _, size, _, _ = http_get(host, int(port), "/health", 3)
            if status == 200 and size == 3:
                print("answered after %.2f s (%d tries)" % (time.monotonic() - t0, tries))
                return 0
            last = "status %d" % status
        except Exception as e:  # noqa: BLE001
            last = outcome_of(e)
        time.sleep(0.5)
    print("no answer within %.0f s (%d tries, last: %s)" % (deadline, tries, last))
    return 1


def cmd_overtake(host, port, images, image_size, html_size, delay, fair_share_s):
    """IMAGES downloads of IMAGE_SIZE bytes (.png) start at once; DELAY
    seconds later a HTML_SIZE .html and an equal-size .png start together.
    The HTML (its class from Content-Type) must overtake: it finishes in
    under half the time the big images take, faster than a fair share of the
    link would allow (FAIR_SHARE_S), and in under 60 % of the time of its
    equal-size .png twin (same size, same start: only the class differs)."""
    port, images, image_size, html_size = int(port), int(images), int(image_size), int(html_size)
    delay, fair_share_s = float(delay), float(fair_share_s)
    # Alone first: the HTML's time without competition (the floor).
    _, got, size, ctype, alone = http_get(host, port, "/bytes/%d.html?seed=alone" % html_size)
    if got != digest(html_size, "alone"):
        print("the HTML alone came back wrong (%d bytes, %s)" % (size, ctype))
        return 1
    done = {}

    def fetch(name, path, seed, n):
        try:
            status, h, size, ctype, secs = http_get(host, port, "%s?seed=%s" % (path, seed), 120)
            done[name] = (secs, time.monotonic(), h == digest(n, seed) and status == 200, ctype)
        except Exception as e:  # noqa: BLE001
            done[name] = (0.0, time.monotonic(), False, outcome_of(e))

    t0 = time.monotonic()
    threads = [threading.Thread(target=fetch, args=("img%d" % i, "/bytes/%d.png" % image_size, "i%d" % i,
                                                     image_size), daemon=True) for i in range(images)]
    for t in threads:
        t.start()
    time.sleep(delay)
    small = [threading.Thread(target=fetch, args=("html", "/bytes/%d.html" % html_size, "h", html_size),
                              daemon=True),
             threading.Thread(target=fetch, args=("twin", "/bytes/%d.png" % html_size, "t", html_size),
                              daemon=True)]
    for t in small:
        t.start()
    for t in threads + small:
        t.join(150)
    if len(done) != images + 2 or not all(v[2] for v in done.values()):
        print("transfers failed: %s" % {k: v[3] for k, v in done.items() if not v[2]})
        return 1
    html = done["html"][0]
    twin = done["twin"][0]
    imgs = sorted(done["img%d" % i][1] - t0 for i in range(images))
    first_img = imgs[0]
    ok = html < 0.5 * first_img and html < fair_share_s and html < 0.6 * twin
    print("HTML %d B: %.3f s (alone %.3f s); its %d B .png twin %.3f s; %d x %d B images finished "
          "%.2f..%.2f s; fair share would be %.2f s; HTML/twin %.0f %%, HTML/first image %.0f %%" % (
              html_size, html, alone, html_size, twin, images, image_size, first_img, imgs[-1], fair_share_s,
              100 * html / twin, 100 * html / first_img))
    return 0 if ok else 1


COMMANDS = {
    "digest": cmd_digest,
    "gen": cmd_gen,
    "concurrent": cmd_concurrent,
    "expect-reset": cmd_expect_reset,
    "reset-midway": cmd_reset_midway,
    "halfclose-upload": cmd_halfclose_upload,
    "halfclose-earlyfin": cmd_halfclose_earlyfin,
    "long-get": cmd_long_get,
    "retry": cmd_retry,
    "overtake": cmd_overtake,
}


def main(commands=COMMANDS, doc=__doc__):
    """Runs argv's command from `commands` (also tests/reliability/fault_client.py's)."""
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(doc, file=sys.stderr)
        return 2
    fn = commands[sys.argv[1]]
    try:
        inspect.signature(fn).bind(*sys.argv[2:])
    except TypeError as e:
        print("usage: %s (%s)" % (sys.argv[1], e), file=sys.stderr)
        return 2
    return fn(*sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())

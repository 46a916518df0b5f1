#!/usr/bin/env python3
"""UDP helpers for netns_udp_test.sh.

  udp_echo.py server PORT...          echo each datagram back as b"echo <payload> from <source ip>"
                                      (prints "ready", then one line per datagram)
  udp_echo.py client HOST PORT COUNT  COUNT datagrams from one socket; prints
                                      "replies R of COUNT from IP:PORT, source seen SRC"
  udp_echo.py flows HOST PORT N       N sockets (N flows) send one datagram each;
                                      prints "answered A of N"
  udp_echo.py rtt HOST PORT COUNT     COUNT 200-byte datagrams 20 ms apart (50/s, a call's
                                      rate); prints "rtt p50 X ms p99 Y ms lost L of COUNT"
"""
import select
import socket
import sys
import time


def server(ports):
    socks = []
    for port in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", port))
        socks.append(s)
    print("ready", flush=True)
    while True:
        readable, _, _ = select.select(socks, [], [])
        for s in readable:
            data, (ip, port) = s.recvfrom(65535)
            print(f"{s.getsockname()[1]} {len(data)} from {ip}:{port}", flush=True)
            s.sendto(b"echo " + data + b" from " + ip.encode(), (ip, port))


def client(host, port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    replies, sources, seen = 0, set(), set()
    for i in range(count):
        s.sendto(b"hello %d" % i, (host, port))
        try:
            data, src = s.recvfrom(65535)
        except socket.timeout:
            continue
        if data.startswith(b"echo hello %d from " % i):
            replies += 1
            sources.add("%s:%d" % src)
            seen.add(data.rsplit(b" from ", 1)[1].decode())
    print("replies %d of %d from %s, source seen %s"
          % (replies, count, ",".join(sorted(sources)) or "-", ",".join(sorted(seen)) or "-"))


def flows(host, port, n):
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for i, s in enumerate(socks):
        s.sendto(b"flow %d" % i, (host, port))
        time.sleep(0.02)
    answered = set()
    deadline = time.time() + 2.0
    while time.time() < deadline and len(answered) < n:
        readable, _, _ = select.select(socks, [], [], 0.2)
        for s in readable:
            s.recvfrom(65535)
            answered.add(s)
    print("answered %d of %d" % (len(answered), n))


def rtt(host, port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setblocking(False)
    sent, rtts = {}, []
    start = time.monotonic()
    for i in range(count):
        sent[i] = time.monotonic()
        s.sendto(b"%08d" % i + b"x" * 192, (host, port))
        until = start + (i + 1) * 0.02
        while True:
            left = until - time.monotonic()
            if left <= 0:
                break
            if select.select([s], [], [], left)[0]:
                data, _ = s.recvfrom(65535)
                rtts.append(time.monotonic() - sent[int(data[5:13])])
    deadline = time.monotonic() + 1.0
    while len(rtts) < count and time.monotonic() < deadline:
        if select.select([s], [], [], 0.1)[0]:
            data, _ = s.recvfrom(65535)
            rtts.append(time.monotonic() - sent[int(data[5:13])])
    rtts.sort()
    if not rtts:
        print("rtt - lost %d of %d" % (count, count))
        return
    p = lambda q: rtts[min(len(rtts) - 1, int(len(rtts) * q))] * 1000
    print("rtt p50 %.2f ms p99 %.2f ms lost %d of %d" % (p(0.5), p(0.99), count - len(rtts), count))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "server":
        server([int(p) for p in sys.argv[2:]])
    elif mode == "client":
        client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif mode == "flows":
        flows(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif mode == "rtt":
        rtt(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))

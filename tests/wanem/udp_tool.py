#!/usr/bin/env python3
"""UDP probes for netns_wanem_test.sh (no ping or iperf3 needed).

  udp_tool.py echo PORT                       answer every datagram (runs until killed)
  udp_tool.py rtt HOST PORT COUNT GAP_S       COUNT probes GAP_S apart: prints "min_ms median_ms received"
  udp_tool.py sink PORT SECONDS IDLE_S        count datagrams until IDLE_S of silence after the first
                                              (or SECONDS in all): prints "packets ip_bytes first_s last_s"
                                              (IP bytes = payload + 28, the times from the first arrival)
  udp_tool.py blast HOST PORT PAYLOAD BPS SECONDS   paced at BPS bit/s of IP bytes
  udp_tool.py burst HOST PORT PAYLOAD COUNT   COUNT datagrams back to back
"""
import socket
import statistics
import sys
import time

IP_UDP_HEADERS = 28  # IPv4 20 + UDP 8


def echo(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    print("ready", flush=True)
    while True:
        data, peer = s.recvfrom(65536)
        s.sendto(data, peer)


def rtt(host, port, count, gap):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    rtts = []
    for i in range(count):
        sent = time.monotonic()
        s.sendto(b"%08d" % i, (host, port))
        try:
            while True:  # skip a late answer to an earlier probe
                data = s.recv(64)
                if data == b"%08d" % i:
                    rtts.append((time.monotonic() - sent) * 1000)
                    break
        except socket.timeout:
            pass
        time.sleep(gap)
    if not rtts:
        print("nan nan 0")
        return
    print(f"{min(rtts):.3f} {statistics.median(rtts):.3f} {len(rtts)}")


def sink(port, seconds, idle):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("0.0.0.0", port))
    print("ready", flush=True)
    end = time.monotonic() + seconds
    packets = ip_bytes = 0
    first = last = None
    while True:
        now = time.monotonic()
        limit = end if first is None else min(end, last + idle)
        if now >= limit:
            break
        s.settimeout(limit - now)
        try:
            data = s.recv(65536)
        except socket.timeout:
            break
        last = time.monotonic()
        if first is None:
            first = last
        packets += 1
        ip_bytes += len(data) + IP_UDP_HEADERS
    if first is None:
        print("0 0 0 0")
    else:
        print(f"{packets} {ip_bytes} 0 {last - first:.6f}")


def blast(host, port, payload, bps, seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    data = b"x" * payload
    gap = (payload + IP_UDP_HEADERS) * 8 / bps
    start = time.monotonic()
    sent = 0
    while True:
        now = time.monotonic()
        if now - start >= seconds:
            break
        due = int((now - start) / gap) + 1
        while sent < due:
            s.sendto(data, (host, port))
            sent += 1
        time.sleep(0.001)
    print(sent)


def burst(host, port, payload, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    data = b"b" * payload
    for _ in range(count):
        s.sendto(data, (host, port))
    print(count)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "echo":
        echo(int(args[0]))
    elif cmd == "rtt":
        rtt(args[0], int(args[1]), int(args[2]), float(args[3]))
    elif cmd == "sink":
        sink(int(args[0]), float(args[1]), float(args[2]))
    elif cmd == "blast":
        blast(args[0], int(args[1]), int(args[2]), float(args[3]), float(args[4]))
    elif cmd == "burst":
        burst(args[0], int(args[1]), int(args[2]), int(args[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

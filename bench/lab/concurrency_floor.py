#!/usr/bin/python3
"""The E-TCP pages' floor with the client's connection limit: what a perfect
transport would take when the client fetches the root HTML alone, then the
other objects in page order over at most N connections (HTTP/1.0: a request
round trip per object). The link serves the bytes that have arrived at the
bottleneck, shortest first (which frees a connection soonest), at its full
rate. bounds.page() has no connection limit, so the ratio printed here is the
part of a page's time / bound that no transport can remove.

  bench/lab/concurrency_floor.py [--connections 4] [--rate-bps 800000] [--rtt-ms 100]
"""
import argparse

import bounds
from pages import PAGES


def floor_s(objects, rtt_s, rate_bps, connections):
    root = rtt_s + bounds.seconds(bounds.REQUEST_BYTES, rate_bps) + bounds.seconds(
        bounds.wire_bytes(objects[0][0]), rate_bps)
    waiting = [bounds.wire_bytes(b) for b, _ in objects[1:]]
    active = []  # [time its first byte reaches the bottleneck, bytes left]
    now = last = root

    def request(at):
        while waiting and len(active) < (connections or len(objects)):
            active.append([at + rtt_s / 2 + bounds.seconds(bounds.REQUEST_BYTES, rate_bps), waiting.pop(0)])

    request(now)
    while active:
        ready = [a for a in active if a[0] <= now]
        if not ready:
            now = min(a[0] for a in active)
            continue
        a = min(ready, key=lambda x: x[1])
        until = min([x[0] for x in active if x[0] > now] + [now + bounds.seconds(a[1], rate_bps)])
        a[1] -= (until - now) * rate_bps / 8
        now = until
        if a[1] <= 1e-9:
            active.remove(a)
            last = max(last, now + rtt_s / 2)
            request(now + rtt_s / 2)  # the client learns at the last byte's arrival
    return last


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--connections", type=int, default=4, help="0: unlimited")
    ap.add_argument("--rate-bps", type=float, default=800e3)
    ap.add_argument("--rtt-ms", type=float, default=100)
    a = ap.parse_args()
    rtt = a.rtt_ms / 1000
    for name, objects in PAGES.items():
        _, bound = bounds.page(objects, rtt, a.rate_bps)
        f = floor_s(objects, rtt, a.rate_bps, a.connections)
        print(f"{name:9s} bound {bound:.3f} s  floor with {a.connections or 'unlimited'} connections "
              f"{f:.3f} s ({f / bound:.2f}x)")


if __name__ == "__main__":
    main()

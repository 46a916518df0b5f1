"""wanem's trace (bench/wanem/README.md, --trace) as rate and queue delay over time.

The link is FIFO per direction (drop-tail, no jitter or reordering in the
lab's scenarios), so the n-th `deq` of a direction is its n-th waiting `enq`
(a `drop_le` removes the newest waiting packet of its kind). The queue delay
is the link model's (link.h), rebuilt from the arrivals: a packet starts on
the wire at max(its enq, the previous packet's finish), so wanem waking late
on a busy machine does not show as queue; that lateness (deq - delay - the
model's finish; `deq` is logged at departure) is reported beside it.
A `rate` line (wanem's `set`) changes a direction's rate for the packets
that start on the wire after it, as in wanem's model.
"""
import bisect
import collections

BIN_S = 0.1


def analyse(path, links, offset_s, win=None, phases=None):
    """{"bin_s", "a2b"/"b2a": {"t0_s", "mbps": [...], "qdelay_ms": [...] (mean per bin),
    "qmax_ms": [...]}, "qdelay_ms": {dir: {p50_ms, p99_ms, max_ms}} over win,
    "wanem_late_ms": {dir: {p50_ms, p99_ms}} (departures after the model's time)}.
    links: {dir: netlab.Link}; offset_s: added to trace times (the caller's origin);
    win: (from_s, to_s) in the caller's times, for the quantiles; phases: a list
    of such windows, their quantiles in "phase_qdelay_ms": {dir: [...]}."""
    waiting = {d: collections.deque() for d in links}
    bins = {d: {} for d in links}  # bin -> [bytes, delay sum, count, max]
    in_win = {d: [] for d in links}
    in_phase = {d: [[] for _ in phases or ()] for d in links}
    late = {d: [] for d in links}
    finish = {d: float("-inf") for d in links}
    changes = {d: ([], []) for d in links}  # (times, rates) of `rate` lines
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) < 7 or parts[1] not in links:
                continue
            d, ev = parts[1], parts[2]
            t = int(parts[0]) / 1e6 + offset_s
            if ev == "rate":
                changes[d][0].append(t)
                changes[d][1].append(int(parts[3]))
            elif ev == "enq":
                waiting[d].append((t, parts[3:]))
            elif ev == "drop_le":
                q = waiting[d]
                for i in range(len(q) - 1, -1, -1):
                    if q[i][1] == parts[3:]:
                        del q[i]
                        break
            elif ev == "deq" and waiting[d]:
                t_enq, _ = waiting[d].popleft()
                link = links[d]
                size = int(parts[3])
                start = max(t_enq, finish[d])
                rate = _rate_at(changes[d], start, link.rate_bps)
                ser = size * 8 / rate if rate else 0.0
                finish[d] = start + ser
                on_wire, delay = start, start - t_enq
                late[d].append(t - link.delay_ms / 1e3 - finish[d])
                b = bins[d].setdefault(int(on_wire // BIN_S), [0, 0.0, 0, 0.0])
                b[0] += size
                b[1] += delay
                b[2] += 1
                b[3] = max(b[3], delay)
                if win and win[0] <= on_wire <= win[1]:
                    in_win[d].append(delay)
                for i, (a, b) in enumerate(phases or ()):
                    if a <= on_wire < b:
                        in_phase[d][i].append(delay)
    out = {"bin_s": BIN_S, "qdelay_ms": {}}
    for d in links:
        keys = sorted(bins[d])
        if not keys:
            out[d] = {"t0_s": 0.0, "mbps": [], "qdelay_ms": [], "qmax_ms": []}
        else:
            span = range(keys[0], keys[-1] + 1)
            empty = [0, 0.0, 0, 0.0]
            out[d] = {"t0_s": round(keys[0] * BIN_S, 3),
                      "mbps": [round(bins[d].get(k, empty)[0] * 8 / BIN_S / 1e6, 3) for k in span],
                      "qdelay_ms": [round(1e3 * b[1] / b[2], 2) if b[2] else None
                                    for b in (bins[d].get(k, empty) for k in span)],
                      "qmax_ms": [round(1e3 * bins[d].get(k, empty)[3], 2) for k in span]}
        xs = sorted(in_win[d])
        out["qdelay_ms"][d] = {"p50_ms": _q(xs, 0.5), "p99_ms": _q(xs, 0.99), "max_ms": _q(xs, 1.0)}
        if phases:
            out.setdefault("phase_qdelay_ms", {})[d] = [
                {"p50_ms": _q(xs, 0.5), "p99_ms": _q(xs, 0.99), "max_ms": _q(xs, 1.0)}
                for xs in map(sorted, in_phase[d])]
        ls = sorted(late[d])
        out.setdefault("wanem_late_ms", {})[d] = {"p50_ms": _q(ls, 0.5), "p99_ms": _q(ls, 0.99)}
    return out


def _rate_at(changes, t, rate):
    """The rate of the last change strictly before t (a packet that starts
    the moment of a change was started by wanem before applying it)."""
    i = bisect.bisect_left(changes[0], t)
    return changes[1][i - 1] if i else rate


def _q(xs, q):
    if not xs:
        return None
    return round(1e3 * xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))], 2)


def drops(path, offset_s, udp_port):
    """[[time_s, dir, ip_len, event]] of the datagrams to or from udp_port that
    the link dropped (random loss, queue): which packet a slow request lost."""
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 7 or not parts[2].startswith("drop") or parts[4] != "17":
                continue
            if str(udp_port) not in (parts[5], parts[6]):
                continue
            out.append([round(int(parts[0]) / 1e6 + offset_s, 4), parts[1], int(parts[3]), parts[2]])
    return out

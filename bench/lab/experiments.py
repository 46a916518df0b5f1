"""The workloads, each run against a list of contenders on one emulated link.

Every function takes the lab (link running), the contenders and its
parameters, and returns plain data for bench/run's JSON: per contender the
raw measurements, and beside them the physical lower bound (bounds.py) of the
same workload, so reports divide one by the other. Contenders are
interleaved inside each repetition (the machine's load drifts), in an order
rotated every repetition.
"""
import json
import os
import random
import subprocess
import time

import bounds
import wwwmodel
from netlab import HOSTS, Sampler, client_ip, in_ns, log
from pages import PAGES

WEBLOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "webload.py")
COLD_SETTLE_S = 1.0  # after a gateway restart: handshake and path MTU search done before the first access


def webload(job, timeout=300):
    job = {**job, "timeout_s": timeout}
    r = subprocess.run(in_ns("client", "/usr/bin/python3", WEBLOAD, json.dumps(job)),
                       capture_output=True, text=True, timeout=timeout + 30)
    if r.returncode != 0:
        raise RuntimeError(f"webload failed ({r.returncode}): {r.stderr.strip()[-800:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def rotated(items, rep):
    k = rep % len(items)
    return items[k:] + items[:k]


def cold(lab, c):
    c.cold(lab)
    if c.key.startswith("egw"):
        time.sleep(COLD_SETTLE_S)


class LinkSampler(Sampler):
    """The link's counters every 50 ms while a workload runs (drops over time)."""

    def __init__(self, lab):
        super().__init__()
        self.lab = lab

    def sample(self):
        s = self.lab.link_stats()
        self.samples.append((time.time(), s["b2a"]["dropped_queue"] + s["b2a"].get("dropped_le", 0),
                             s["a2b"]["dropped_queue"] + s["a2b"].get("dropped_le", 0)))

    def drops_between(self, t0, t1):
        """Queue drops (both directions) between two wall-clock times."""
        inside = [s for s in self.samples if t0 - 0.05 <= s[0] <= t1 + 0.05]
        if len(inside) < 2:
            return None
        return (inside[-1][1] - inside[0][1]) + (inside[-1][2] - inside[0][2])


# ---------------------------------------------------------------- pages (E-TCP)

def pages(lab, contenders, link, pages_, concurrency, reps, idle_s, background=0):
    """Each page fetched cold, then again after idle_s: HTML and page times.
    background: that many application-limited connections (a small request
    every 0.5-2 s each) through the same contender during both fetches."""
    rtt = 2 * link.delay_ms / 1000
    out = {"bounds": {}, "results": {c.key: {} for c in contenders}, "concurrency": concurrency,
           "idle_s": idle_s, "background": background}
    for name in pages_:
        html_lb, page_lb = bounds.page(PAGES[name], rtt, link.rate_bps)
        out["bounds"][name] = {"html_s": html_lb, "page_s": page_lb,
                               "css_js_s": bounds.css_js(PAGES[name], rtt, link.rate_bps)}
    for rep in range(reps):
        for c in rotated(contenders, rep):
            for name in pages_:
                cold(lab, c)
                page = {"target": c.target(), "src": client_ip(), "concurrency": concurrency,
                        "objects": PAGES[name]}
                bg = None
                if background:
                    job = {"kind": "keepalive", "target": c.target(), "src": client_ip(1),
                           "connections": background, "stop_s": 120, "seed": rep, "timeout_s": 150}
                    bg = subprocess.Popen(in_ns("client", "/usr/bin/python3", WEBLOAD, json.dumps(job)),
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    time.sleep(0.5)  # they are open, and some already talk
                runs = []
                try:
                    for access in ("first", "repeat"):
                        if access == "repeat":
                            time.sleep(idle_s)
                        r = webload({"kind": "pages", "pages": [page]})["pages"][0]
                        runs.append(r)
                finally:
                    if bg:
                        bg.terminate()
                        bg.wait(timeout=10)
                cell = out["results"][c.key].setdefault(name, {"first": [], "repeat": [], "errors": 0})
                for access, r in zip(("first", "repeat"), runs):
                    cell[access].append({"html_s": r["html_s"], "page_s": r["page_s"],
                                         "css_js_s": r.get("css_js_s"), "objects": r.get("objects")})
                    cell["errors"] += len(r["errors"])
                b = out["bounds"][name]
                log(f"    {c.key:12s} {name:8s} rep {rep + 1}: first html {runs[0]['html_s']:.3f} s "
                    f"({runs[0]['html_s'] / b['html_s']:.2f}x) page {runs[0]['page_s']:.3f} s "
                    f"({runs[0]['page_s'] / b['page_s']:.2f}x); repeat page {runs[1]['page_s']:.3f} s"
                    + (f"; css+js {runs[0]['css_js_s']:.3f} s ({runs[0]['css_js_s'] / b['css_js_s']:.2f}x)"
                       if b["css_js_s"] and runs[0].get("css_js_s") else "")
                    + (f"; ERRORS {runs[0]['errors'] + runs[1]['errors']}" if runs[0]['errors'] or runs[1]['errors'] else ""))
    return out


# ---------------------------------------------------------------- a short flow joins a long one

def join(lab, contenders, link, reps, long_bytes, short_bytes, join_s):
    """seed 003: a long bulk flow, a short one joining it at join_s."""
    rtt = 2 * link.delay_ms / 1000
    out = {"long_bytes": long_bytes, "short_bytes": short_bytes, "join_s": join_s,
           "bounds": {"short_s": bounds.share(short_bytes, rtt, link.rate_bps, 2),
                      "short_on_link_s": bounds.seconds(bounds.wire_bytes(short_bytes), link.rate_bps)},
           "results": {c.key: [] for c in contenders}}
    for rep in range(reps):
        for c in rotated(contenders, rep):
            # The long flow alone first: what the join costs it is measured against this.
            cold(lab, c)
            alone = webload({"kind": "flows", "sample_bytes": 1 << 20, "flows": [
                {"target": c.target(), "src": client_ip(), "start_s": 0, "bytes": long_bytes}]}, timeout=120)
            alone_s = alone["flows"][0]["end"] - alone["flows"][0]["start"]
            cold(lab, c)
            job = {"kind": "flows", "sample_bytes": 8192, "flows": [
                {"target": c.target(), "src": client_ip(), "start_s": 0, "bytes": long_bytes},
                {"target": c.target(), "src": client_ip(1), "start_s": join_s, "bytes": short_bytes}]}
            with LinkSampler(lab) as ls:
                t_wall = time.time()
                r = webload(job, timeout=120)
            long_f, short_f = r["flows"]
            errors = [f["error"] for f in r["flows"] if "error" in f]
            # Wall-clock origin of the job's times: webload starts within ~100 ms
            # of t_wall; the join window is wide enough for that not to matter.
            drops_join = ls.drops_between(t_wall + join_s, t_wall + short_f["end"] + 0.3)
            drops_before = ls.drops_between(t_wall, t_wall + join_s)
            long_s = long_f["end"] - long_f["start"]
            # 1.0: the long flow lost exactly the short flow's bytes' time on the link, nothing more.
            long_cost = long_s / (alone_s + out["bounds"]["short_on_link_s"])
            res = {"short_s": short_f["end"] - short_f["start"], "long_s": long_s, "long_alone_s": alone_s,
                   "long_vs_alone": long_cost, "errors": errors + [f["error"] for f in alone["flows"] if "error" in f],
                   "drops_during_join": drops_join, "drops_before_join": drops_before,
                   "samples": {"long": long_f["samples"], "short": short_f["samples"]}}
            out["results"][c.key].append(res)
            log(f"    {c.key:12s} join rep {rep + 1}: short {res['short_s']:.3f} s "
                f"({res['short_s'] / out['bounds']['short_s']:.2f}x), long {long_s:.3f} s, alone {alone_s:.3f} s "
                f"(cost {long_cost:.3f}), drops during join {drops_join}"
                + (f"; ERRORS {errors}" if errors else ""))
    return out


# ---------------------------------------------------------------- TCP session: 1..12 host pairs

def pairs(lab, contenders, link, counts, reps, objects=4, object_bytes=10240, spread_s=0.5):
    """n client/server pairs, each fetching `objects` x object_bytes at once, starting at random."""
    rtt = 2 * link.delay_ms / 1000
    out = {"counts": counts, "objects": objects, "object_bytes": object_bytes, "spread_s": spread_s,
           "results": {c.key: {str(n): [] for n in counts} for c in contenders}, "bounds": {}}
    for rep in range(reps):
        for n in counts:
            rnd = random.Random(1000 * rep + n)
            starts = sorted(rnd.uniform(0, spread_s) for _ in range(n))
            lb = bounds.fluid_finish([(s, object_bytes) for s in starts for _ in range(objects)],
                                     rtt, link.rate_bps) - starts[0]
            out["bounds"].setdefault(str(n), []).append(lb)
            for c in rotated(contenders, rep):
                cold(lab, c)
                job = {"kind": "pages", "pages": [
                    {"target": c.target(i), "src": client_ip(i), "start_s": s, "concurrency": 0, "root": False,
                     "objects": [[object_bytes, "image"]] * objects} for i, s in enumerate(starts)]}
                r = webload(job, timeout=120)
                ends = [p["start"] + p["page_s"] for p in r["pages"]]
                total = max(ends) - min(p["start"] for p in r["pages"])
                errors = sum(len(p["errors"]) for p in r["pages"])
                out["results"][c.key][str(n)].append({"total_s": total, "bound_s": lb, "errors": errors,
                                                      "pair_s": [p["page_s"] for p in r["pages"]]})
                log(f"    {c.key:12s} {n:2d} pairs rep {rep + 1}: {total:.3f} s ({total / lb:.2f}x)"
                    + (f"; ERRORS {errors}" if errors else ""))
    return out


# ---------------------------------------------------------------- fairness (EFCM)

def fairness(lab, contenders, link, flow_counts, reps, seconds, idle_members=0, warm_s=2.0):
    """n bulk flows for `seconds`; Jain's index of their rates after warm_s.
    idle_members: that many more connections held open with nothing to send."""
    out = {"flow_counts": flow_counts, "seconds": seconds, "idle_members": idle_members, "warm_s": warm_s,
           "results": {c.key: {str(n): [] for n in flow_counts} for c in contenders}}
    for rep in range(reps):
        for n in flow_counts:
            for c in rotated(contenders, rep):
                cold(lab, c)
                flows = [{"target": c.target(), "src": client_ip(i % 13), "start_s": 0.05 * i,
                          "bytes": 10 ** 9, "stop_s": seconds} for i in range(n)]
                flows += [{"target": c.target(), "src": client_ip(i % 13), "start_s": 0, "idle": True,
                           "bytes": 0, "stop_s": seconds} for i in range(idle_members)]
                r = webload({"kind": "flows", "sample_bytes": 65536, "flows": flows}, timeout=seconds + 60)
                rates = []
                for f in r["flows"][:n]:
                    rates.append(_bytes_at(f["samples"], seconds) - _bytes_at(f["samples"], warm_s))
                rates = [8 * b / (seconds - warm_s) for b in rates]
                errors = [f["error"] for f in r["flows"] if "error" in f]
                res = {"rates_bps": rates, "jain": bounds.jain(rates), "utilisation": sum(rates) / link.rate_bps,
                       "errors": errors}
                out["results"][c.key][str(n)].append(res)
                log(f"    {c.key:12s} {n} flows{f' + {idle_members} idle' if idle_members else ''} rep {rep + 1}: "
                    f"Jain {res['jain']:.4f}, link {res['utilisation']:.1%}" + (f"; ERRORS {errors}" if errors else ""))
    return out


def _bytes_at(samples, t):
    """Bytes received by time t (linear between samples)."""
    prev = (0.0, 0)
    for s in samples:
        if s[0] >= t:
            if s[0] == prev[0]:
                return s[1]
            return prev[1] + (s[1] - prev[1]) * (t - prev[0]) / (s[0] - prev[0])
        prev = s
    return prev[1]


# ---------------------------------------------------------------- burst after idle (fast start)

def bursts(lab, contenders, cross, link, reps, burst_bytes, idle_s, cross_flows):
    """A persistent connection: a burst, idle_s, a second burst (timed). With
    cross_flows, that many direct CUBIC bulk flows start after the first burst
    ("changed load"), so the cached path state is stale."""
    rtt = 2 * link.delay_ms / 1000
    out = {"burst_bytes": burst_bytes, "idle_s": idle_s, "cross_flows": cross_flows,
           "bound_s": bounds.share(burst_bytes, rtt, link.rate_bps, 1),
           "results": {c.key: [] for c in contenders}}
    second_at = 1.0 + idle_s
    for rep in range(reps):
        for c in rotated(contenders, rep):
            cold(lab, c)
            procs = []
            if cross_flows:
                job = {"kind": "flows", "sample_bytes": 1 << 20, "flows": [
                    {"target": cross.target(1), "src": client_ip(2 + i), "start_s": 1.0 + 0.1 * i,
                     "bytes": 10 ** 9, "stop_s": second_at + 4.0} for i in range(cross_flows)], "timeout_s": 60}
                procs.append(subprocess.Popen(in_ns("client", "/usr/bin/python3", WEBLOAD, json.dumps(job)),
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            try:
                r = webload({"kind": "bursts", "target": c.target(), "src": client_ip(), "bytes": burst_bytes,
                             "at_s": [0.0, second_at]}, timeout=60)
            finally:
                for p in procs:  # the cross flows have done their part once the timed burst is over
                    p.terminate()
                    p.wait(timeout=30)
            b = r["bursts"]
            errors = [x["error"] for x in b if "error" in x]
            res = {"first_s": b[0].get("seconds"), "second_s": b[1].get("seconds") if len(b) > 1 else None,
                   "errors": errors}
            out["results"][c.key].append(res)
            log(f"    {c.key:12s} burst rep {rep + 1}: first {res['first_s']}, second {res['second_s']} s"
                + (f"; ERRORS {errors}" if errors else ""))
    return out


# ---------------------------------------------------------------- WWW sessions (EFCM's traffic model)

def www_sessions(lab, contenders, link, reps, seconds, seed, users):
    """A window of EFCM's WWW model (wwwmodel.py) in its steady state: the
    same sessions and pages through every contender, each user on its own
    client and server address. Per page, its time (request to last byte) and
    its lower bound; per run, the link's busy share and its drops."""
    rtt = 2 * link.delay_ms / 1000
    out = {"seconds": seconds, "inter_session_s": wwwmodel.INTER_SESSION_S, "windows": [],
           "results": {c.key: [] for c in contenders}}
    for rep in range(reps):
        used, sessions = wwwmodel.steady_window(seed + 10_000 * rep, seconds, rtt, link.rate_bps, users)
        page_lb = [[wwwmodel.page_bound(b, rtt, link.rate_bps) for _, b in s] for s in sessions]
        out["windows"].append({"seed": used, "sessions": sessions, "bounds_s": page_lb,
                               "offered": wwwmodel.offered(sessions, 0, seconds, link.rate_bps)})
        for c in rotated(contenders, rep):
            cold(lab, c)
            job = {"kind": "sessions", "class": wwwmodel.PAGE_CLASS, "sessions": [
                {"target": c.target(u % HOSTS), "src": client_ip(u % HOSTS), "pages": s}
                for u, s in enumerate(sessions)]}
            before = lab.link_stats()
            r = webload(job, timeout=seconds + 90)
            after = lab.link_stats()
            pages_ = [p for s in r["sessions"] for p in s]
            errors = [p["error"] for p in pages_ if "error" in p]
            span = max(p["end"] for p in pages_) - min(p["start"] for p in pages_)
            drops = sum(after[d][k] - before[d][k] for d in ("a2b", "b2a") for k in ("dropped_queue", "dropped_le"))
            res = {"page_s": [[round(p["end"] - p["start"], 6) for p in s] for s in r["sessions"]],
                   "late_s": [[round(p["start"] - p["at"], 6) for p in s] for s in r["sessions"]],
                   "bytes": sum(p["bytes"] for p in pages_), "span_s": span,
                   "link_busy": bounds.seconds(after["b2a"]["out_bytes"] - before["b2a"]["out_bytes"],
                                               link.rate_bps) / span,
                   "drops": drops, "errors": errors}
            ratios = sorted(t / lb for ts, lbs in zip(res["page_s"], page_lb) for t, lb in zip(ts, lbs))
            out["results"][c.key].append(res)
            log(f"    {c.key:12s} www rep {rep + 1}: {len(ratios)} pages, page/bound median "
                f"{quantile(ratios, 0.5):.2f} p90 {quantile(ratios, 0.9):.2f}, link busy {res['link_busy']:.0%} "
                f"over {span:.1f} s, {res['drops']} drops" + (f"; ERRORS {errors}" if errors else ""))
    return out


def quantile(xs, q):
    """The q-quantile of sorted xs (linear between neighbours)."""
    if not xs:
        return None
    i = q * (len(xs) - 1)
    lo = int(i)
    return xs[lo] if lo + 1 >= len(xs) else xs[lo] + (xs[lo + 1] - xs[lo]) * (i - lo)

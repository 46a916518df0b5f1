"""Issue 20's workloads: full links with short queues.

  full_links  one bulk download AND one bulk upload through the contender at
              once, beside a realtime probe (UDP, 50 packets/s of 200 bytes,
              direct across the WAN: the modem's queue every application
              sees), a small request/response flow through the contender (an
              HTTP exchange every 100 ms) and a page load whose class outranks
              the bulk (cleartext, content types); each measured idle first,
              then under the load (the page: a repeat visit both times).
  bulk        bulk transfers alone (one download; or a download and an upload
              at once): the share of the link they fill after warm_s.
  compete     the contender's download sharing the bottleneck with n direct
              CUBIC downloads outside the tunnel: its rate / one CUBIC flow's.
  changing_rate  one bulk download through the contender, the probe beside
              it, while the downlink's rate steps (LTE, cable, Wi-Fi): per
              rate phase the goodput and the queue; after a step down the
              peak queue and when it drained, after a step up when the
              download had the new rate again.

Every run is traced by wanem (--trace): per direction, the link's rate and
the queue delay every 100 ms (wantrace.py), and wanem's own CPU share, so the
reader sees whether the emulator kept up. Times are wall-clock (the
processes' samples carry it) so the phases line up across processes.
"""
import json
import os
import shutil
import socket
import subprocess
import time

import wantrace
from contenders import PROBE_PORT, sink_dir
from experiments import WEBLOAD, cold, quantile, rotated, webload
from netlab import Sampler, client_ip, in_ns, log, server_ip
from pages import PAGES

PROBE = {"pps": 50, "bytes": 200}
REQUEST_INTERVAL_S = 0.1


class Traced:
    """wanem restarted with a trace for one run; its CPU share and series after."""

    def __init__(self, lab, up, down, seed, path):
        self.lab, self.up, self.down, self.seed, self.path = lab, up, down, seed, path

    def __enter__(self):
        self.lab.start_link(self.up, self.down, seed=self.seed, trace=self.path)
        self.t0 = time.time()  # trace time 0 (wanem prints ready right after opening it)
        self.cpu0 = (cpu_seconds(self.lab.wanem.pid), time.monotonic())
        return self

    def __exit__(self, *exc):
        cpu1 = (cpu_seconds(self.lab.wanem.pid), time.monotonic())
        self.cpu = (cpu1[0] - self.cpu0[0]) / max(1e-9, cpu1[1] - self.cpu0[1])
        self.lab.start_link(self.up, self.down, seed=self.seed)  # stops the traced one: its trace flushed

    def series(self, origin, t_from=None, t_to=None, udp_port=None, phases=None):
        """The trace binned (wantrace.py), times relative to `origin` (wall clock);
        queue delay quantiles over [t_from, t_to] (wall clock) per direction, and
        over each of `phases` ([from, to] wall clock); with udp_port, the random
        drops of that port's datagrams (a tunnel's)."""
        win = None if t_from is None else (t_from - origin, t_to - origin)
        rel = [(a - origin, b - origin) for a, b in phases] if phases else None
        s = wantrace.analyse(self.path, {"a2b": self.up, "b2a": self.down}, self.t0 - origin, win, rel)
        s["wanem_cpu"] = round(self.cpu, 3)
        if udp_port:
            s["tunnel_drops"] = wantrace.drops(self.path, self.t0 - origin, udp_port)
        try:
            keep = os.environ.get("EGW_LAB_KEEP_TRACES")  # a directory: the raw traces, for per-packet study
            if keep:
                os.makedirs(keep, exist_ok=True)
                shutil.move(self.path, os.path.join(keep, os.path.basename(self.path)))
            else:
                os.unlink(self.path)
        except OSError:
            pass
        return s


def quiet(lab, timeout=10.0):
    """Waits until the link carries (almost) nothing: what a previous run left
    sending (a gateway draining, a retransmission) must not load the next one."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        s = lab.link_stats()
        n = s["a2b"]["in_packets"] + s["b2a"]["in_packets"]
        if last is not None and n - last <= 5:
            return
        last = n
        time.sleep(0.3)
    log("    (the link was still busy after the previous run)")


def done(lab, c):
    """A gateway pair restarted after its run: the stream data it still holds
    after the client's reset (the upload's, seen draining > 10 s at 1 Mbit/s)
    must not load the next contender's idle phase."""
    if c.key.startswith("egw"):
        c.cold(lab)


def each_traced(lab, contenders, up, down, seed, reps, prefix, run):
    """Every repetition, the contenders rotated: cold, a quiet link, then
    run(c, tag) on a traced link, and the gateways restarted after it (done);
    yields (rep, c, run's result, the Traced link) for its series."""
    for rep in range(reps):
        for c in rotated(contenders, rep):
            cold(lab, c)
            quiet(lab)
            tag = f"{prefix}-{c.key}-{rep}-{int(time.time())}"
            with Traced(lab, up, down, seed, os.path.join(lab.tmp, f"{tag}.trace")) as tr:
                res = run(c, tag)
            done(lab, c)
            yield rep, c, res, tr


def cpu_seconds(pid):
    """utime + stime of a process, seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def background(job):
    return subprocess.Popen(in_ns("client", "/usr/bin/python3", WEBLOAD, json.dumps({**job, "timeout_s": 600})),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def collect(p, stop=True):
    if stop:
        p.terminate()
    out, err = p.communicate(timeout=60)
    if p.returncode != 0 or not out.strip():
        raise RuntimeError(f"webload failed ({p.returncode}): {err.strip()[-800:]}")
    return json.loads(out.strip().splitlines()[-1])


def bytes_at(samples, t):
    """Bytes by wall-clock time t, linear between [t, bytes] samples."""
    prev = None
    for s in samples:
        if s[0] >= t:
            if prev is None or s[0] == prev[0]:
                return s[1] if prev is None or s[0] == t else prev[1]
            return prev[1] + (s[1] - prev[1]) * (t - prev[0]) / (s[0] - prev[0])
        prev = s
    return prev[1] if prev else 0


def rate_bps(samples, t_from, t_to):
    return 8 * (bytes_at(samples, t_to) - bytes_at(samples, t_from)) / (t_to - t_from)


def wall(flow, t0_wall):
    return [[t0_wall + t, b] for t, b in flow.get("samples", [])]


def sink(lab, name, until, timeout=10.0):
    """The upload's receiver-side samples once they reach wall-clock `until`
    (or timeout later: what arrived by then)."""
    path = os.path.join(sink_dir(lab), f"{name}.txt")
    end = time.monotonic() + timeout
    while True:
        samples = []
        if os.path.exists(path):
            with open(path) as f:
                samples = [[float(t), int(b)] for t, b in (l.split() for l in f if l.endswith("\n"))]
        if (samples and samples[-1][0] >= until) or time.monotonic() > end:
            return samples
        time.sleep(0.2)


def bulk_job(c, directions, seconds, tag, direct_up=None):
    """`direct_up` (a direct contender): the upload is another host's, outside
    the contender (its own source and server), e.g. a CUBIC upload beside a
    gateway's download."""
    flows = []
    if "down" in directions:
        flows.append({"target": c.target(), "src": client_ip(2), "bytes": 10 ** 12, "stop_s": seconds})
    if "up" in directions:
        via = direct_up or c
        flows.append({"target": via.target(1 if direct_up else 0), "src": client_ip(5 if direct_up else 3),
                      "bytes": 0, "upload": tag, "stop_s": seconds,
                      "cc": via.cc})  # direct BBR uploads with BBR (the client sends)
    return {"kind": "flows", "sample_bytes": 65536, "flows": flows}


def bulk_rates(lab, r, directions, tag, t_from, t_to):
    """{"down": bit/s, "up": bit/s} over the window; errors."""
    out, errors, flows = {}, [f["error"] for f in r["flows"] if "error" in f], list(r["flows"])
    if "down" in directions:
        out["down"] = rate_bps(wall(flows.pop(0), r["t0_wall"]), t_from, t_to)
    if "up" in directions:
        flows.pop(0)
        samples = sink(lab, tag, t_to)
        if not samples:
            errors.append("upload: the server saw nothing")
        out["up"] = rate_bps(samples, t_from, t_to) if samples else None
    return out, errors


def window(samples, t_from, t_to):
    return sorted(v for t, v in samples if t_from <= t <= t_to)


def summary(xs):
    return {"n": len(xs), "p50_ms": quantile(xs, 0.5) and 1e3 * quantile(xs, 0.5),
            "p99_ms": quantile(xs, 0.99) and 1e3 * quantile(xs, 0.99)}


# ---------------------------------------------------------------- full links

def full_links(lab, contenders, up, down, seed, reps, p):
    """Per contender: probe and requests idle, a page idle, then bulk both ways
    for p["seconds"] with the page again after p["warm_s"]; see the module doc."""
    page = PAGES[p["page"]]
    out = {"params": p, "results": {c.key: [] for c in contenders}}
    runs = each_traced(lab, contenders, up, down, seed, reps, "fl",
                       lambda c, tag: _full_links_run(lab, c, page, tag, p))
    for rep, c, res, tr in runs:
        res["series"] = tr.series(res.pop("origin"), res["loaded"][0], res["loaded"][1],
                                  getattr(c, "udp", None))
        out["results"][c.key].append(res)
        q = res["probe"]
        log(f"    {c.key:14s} full links rep {rep + 1}: down {fmt_pct(res['down_bps'], down)} up "
            f"{fmt_pct(res['up_bps'], up)}; probe p99 {ms(q['idle']['p99_ms'])} -> {ms(q['loaded']['p99_ms'])}; "
            f"request p99 {ms(res['requests']['idle']['p99_ms'])} -> {ms(res['requests']['loaded']['p99_ms'])}; "
            f"page {res['page_idle_s']:.2f} -> {res['page_loaded_s']:.2f} s; wanem CPU "
            f"{res['series']['wanem_cpu']:.0%}" + (f"; ERRORS {res['errors']}" if res["errors"] else ""))
    return out


def _full_links_run(lab, c, page, tag, p):
    t_start = time.time()
    probe = background({"kind": "probe", "target": [server_ip(0), c.probe_port()], "src": client_ip(0),
                        "stop_s": 500, **PROBE})
    reqs = background({"kind": "requests", "target": c.target(), "src": client_ip(1), "stop_s": 500,
                       "interval_s": REQUEST_INTERVAL_S, "bytes": 200, "class": "json"})
    errors = []
    try:
        time.sleep(p["idle_s"])
        idle = (t_start + 0.5, time.time())
        pg = {"target": c.target(), "src": client_ip(4), "concurrency": p.get("concurrency", 6), "objects": page}
        # Idle and loaded both repeat visits: a first one (a fresh ensemble,
        # an empty cache) would make the loaded page look faster than idle.
        webload({"kind": "pages", "pages": [pg]})
        time.sleep(0.3)
        page_idle = webload({"kind": "pages", "pages": [pg]})["pages"][0]
        time.sleep(0.5)
        t_load = time.time()
        bulk = background(bulk_job(c, ("down", "up"), p["seconds"], tag))
        time.sleep(p["warm_s"])
        page_loaded = webload({"kind": "pages", "pages": [pg]})["pages"][0]
        r = collect(bulk, stop=False)
        loaded = (t_load + p["warm_s"], t_load + p["seconds"])
        rates, errs = bulk_rates(lab, r, ("down", "up"), tag, *loaded)
        errors += errs + page_idle["errors"] + page_loaded["errors"]
    finally:
        pr, rq = collect(probe), collect(reqs)
    errors += rq["errors"]
    losses = c.loss_counters() if hasattr(c, "loss_counters") else None
    sent = pr["sent"]
    carried = c.probe_port() != PROBE_PORT
    if carried:
        n = c.udp_datagrams_carried()
        if n is None or n < sent * 0.9:
            errors.append(f"the probe's datagrams did not take the gateway ({n} of {sent} carried)")
    return {"origin": t_load, "idle": idle, "loaded": loaded, "down_bps": rates["down"], "up_bps": rates["up"],
            "probe": {"idle": summary(window(pr["rtts"], *idle)), "loaded": summary(window(pr["rtts"], *loaded)),
                      "sent": sent, "lost": sent - len(pr["rtts"]), "carried": carried},
            "requests": {"idle": summary(window(rq["requests"], *idle)),
                         "loaded": summary(window(rq["requests"], *loaded)),
                         # [send time relative to the bulk's start, latency]: the
                         # p99 of ~130 samples is the 2nd worst, so each one matters.
                         "each": [[round(t - t_load, 4), lat] for t, lat in rq["requests"]]},
            "gateway_losses": losses,
            "page_idle_s": page_idle["page_s"], "page_loaded_s": page_loaded["page_s"],
            "page_loaded_start": t_load + p["warm_s"] - t_load, "errors": errors}


# ---------------------------------------------------------------- bulk alone

def bulk(lab, contenders, up, down, seed, reps, p, cubic=None):
    """p["directions"] ("down", or "down" and "up" at once) for p["seconds"];
    the rate each keeps after p["warm_s"], per direction. With
    p["direct_upload"] the upload is a direct CUBIC flow (`cubic`) beside the
    contender's download: another host filling the uplink."""
    out = {"params": p, "results": {c.key: [] for c in contenders}}
    dirs = tuple(p["directions"])
    direct_up = cubic if p.get("direct_upload") else None

    def run(c, tag):
        t_load = time.time()
        r = webload(bulk_job(c, dirs, p["seconds"], tag, direct_up), timeout=p["seconds"] + 60)
        win = (t_load + p["warm_s"], t_load + p["seconds"])
        rates, errors = bulk_rates(lab, r, dirs, tag, *win)
        return t_load, win, rates, errors

    for rep, c, (t_load, win, rates, errors), tr in each_traced(lab, contenders, up, down, seed, reps, "bk", run):
        res = {f"{d}_bps": v for d, v in rates.items()}
        res.update({"errors": errors, "series": tr.series(t_load, *win)})
        out["results"][c.key].append(res)
        log(f"    {c.key:14s} bulk rep {rep + 1}: " + ", ".join(
            f"{d} {fmt_pct(rates[d], down if d == 'down' else up)}" for d in dirs)
            + f"; queue delay p99 down {ms(res['series']['qdelay_ms']['b2a']['p99_ms'])} up "
              f"{ms(res['series']['qdelay_ms']['a2b']['p99_ms'])}; wanem CPU {res['series']['wanem_cpu']:.0%}"
            + (f"; ERRORS {errors}" if errors else ""))
    return out


# ---------------------------------------------------------------- competition

def compete(lab, contenders, cubic, up, down, seed, reps, p):
    """The contender's download beside n direct CUBIC downloads (n in p["counts"])
    for p["seconds"]: its rate / the mean CUBIC flow's, after p["warm_s"]."""
    out = {"params": p, "results": {c.key: {str(n): [] for n in p["counts"]} for c in contenders}}
    for rep in range(reps):
        for n in p["counts"]:
            for c in rotated(contenders, rep):
                cold(lab, c)
                quiet(lab)
                flows = [{"target": c.target(), "src": client_ip(2), "bytes": 10 ** 12, "stop_s": p["seconds"]}]
                flows += [{"target": cubic.target(1 + i), "src": client_ip(5 + i), "bytes": 10 ** 12,
                           "stop_s": p["seconds"]} for i in range(n)]  # all at once: no first mover
                tag = f"cp-{c.key}-{n}-{rep}-{int(time.time())}"
                with Traced(lab, up, down, seed, os.path.join(lab.tmp, f"{tag}.trace")) as tr:
                    t_load = time.time()
                    r = webload({"kind": "flows", "sample_bytes": 65536, "flows": flows}, timeout=p["seconds"] + 60)
                done(lab, c)
                win = (t_load + p["warm_s"], t_load + p["seconds"])
                rates = [rate_bps(wall(f, r["t0_wall"]), *win) for f in r["flows"]]
                mine, theirs = rates[0], rates[1:]
                one = sum(theirs) / len(theirs) if theirs else None
                res = {"rate_bps": mine, "cubic_bps": theirs, "share": mine / one if one else None,
                       "errors": [f["error"] for f in r["flows"] if "error" in f],
                       "series": tr.series(t_load, *win)}
                out["results"][c.key][str(n)].append(res)
                log(f"    {c.key:14s} vs {n} CUBIC rep {rep + 1}: {mine / 1e6:.2f} Mbit/s, one CUBIC flow "
                    f"{(one or 0) / 1e6:.2f} Mbit/s, share ratio {res['share'] or 0:.2f}, link "
                    f"{(mine + sum(theirs)) / down.rate_bps:.0%}" + (f"; ERRORS {res['errors']}" if res["errors"] else ""))
    return out


def fmt_pct(bps, link):
    return "–" if bps is None else f"{bps / link.rate_bps:.0%}"


def ms(x):
    return "–" if x is None else f"{x:.0f} ms"


# ---------------------------------------------------------------- changing rate

DRAINED_MS = 20      # a step down's queue is drained once a 100 ms bin's worst packet waits less
REGAINED = 0.8       # a step up is taken once the download moves this share of the new rate ...
REGAIN_WINDOW_S = 0.5  # ... over this long


def changing_rate(lab, contenders, up, down, seed, reps, p):
    """p["steps"]: [[s from the download's start, downlink bit/s], ...], the
    first the link's own rate; the download runs p["seconds"] after p["idle_s"]
    of the probe alone. Per phase: goodput / its rate, the downlink's queue
    delay and the probe's RTT; see the module doc."""
    out = {"params": p, "results": {c.key: [] for c in contenders}}
    runs = each_traced(lab, contenders, up, down, seed, reps, "cr", lambda c, tag: _changing_rate_run(lab, c, p))
    for rep, c, res, tr in runs:
        origin = res.pop("origin")
        bounds_ = [(a, b) for a, b in zip(res["step_at"], res["step_at"][1:] + [res["end"]])]
        halves = [((a + b) / 2, b) for a, b in bounds_]  # settled: the phase's second half
        res["series"] = tr.series(origin, bounds_[0][0], res["end"], getattr(c, "udp", None), bounds_ + halves)
        res["phases"] = _phases(res, p, bounds_, origin)
        del res["samples"], res["probe_rtts"]
        out["results"][c.key].append(res)
        log(f"    {c.key:14s} changing rate rep {rep + 1}: " + "; ".join(
            f"{ph['rate_bps'] / 1e6:g}M {ph['goodput_bps'] / ph['rate_bps']:.0%} q99 "
            f"{ms(ph['qdelay_p99_ms'])}" + (f" drained {secs(ph.get('drained_s'))}" if "drained_s" in ph else "")
            + (f" 80 % {secs(ph.get('regained_s'))}" if "regained_s" in ph else "")
            + (" (competitive)" if "competitive" in ph["law_states"] else "") for ph in res["phases"])
            + f"; wanem CPU {res['series']['wanem_cpu']:.0%}" + (f"; ERRORS {res['errors']}" if res["errors"] else ""))
    return out


class LawSampler(Sampler):
    """The hub's (the download's sender's) window law every 250 ms from its
    status socket (`ensemble-gw status --json`): [wall time, law state,
    bottleneck Mbit/s, cwnd bytes, srtt ms]; nothing for a direct contender."""

    period_s = 0.25

    def __init__(self, lab, c):
        super().__init__()
        self.path = os.path.join(lab.tmp, f"{c.key}-hub.sock") if c.key.startswith("egw") else None

    def sample(self):
        if not self.path:
            return
        try:
            self._one()
        except (OSError, ValueError, KeyError):
            pass  # the hub is starting or gone: that instant has no sample

    def _one(self):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1.0)
            s.connect(self.path)
            s.sendall(b"json\n")
            s.shutdown(socket.SHUT_WR)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        for e in json.loads(data).get("ensembles", []):
            self.samples.append([round(time.time(), 3), e["law_state"],
                                 round(e["bottleneck_bytes_per_second"] * 8e-6, 2), e["cwnd_bytes"],
                                 round(e["srtt_seconds"] * 1e3, 1)])


def _changing_rate_run(lab, c, p):
    probe = background({"kind": "probe", "target": [server_ip(0), c.probe_port()], "src": client_ip(0),
                        "stop_s": 500, **PROBE})
    errors, step_at = [], []
    try:
        with LawSampler(lab, c) as law:
            time.sleep(p["idle_s"])
            idle = (time.time() - p["idle_s"] + 0.5, time.time())
            t_load = time.time()
            # 16 KB samples: at 2 Mbit/s one every 66 ms, fine enough for the regain time.
            bulk = background({"kind": "flows", "sample_bytes": 16384, "flows": [
                {"target": c.target(), "src": client_ip(2), "bytes": 10 ** 12, "stop_s": p["seconds"]}]})
            step_at.append(t_load)
            for t_s, bps in p["steps"][1:]:
                time.sleep(max(0.0, t_load + t_s - time.time()))
                lab.link_command(f"set b2a rate={int(bps)}")
                step_at.append(time.time())
            r = collect(bulk, stop=False)
            end = t_load + p["seconds"]
            flow = r["flows"][0]
            errors += [flow["error"]] if "error" in flow else []
    finally:
        pr = collect(probe)
    carried = c.probe_port() != PROBE_PORT
    if carried:
        n = c.udp_datagrams_carried()
        if n is None or n < pr["sent"] * 0.9:
            errors.append(f"the probe's datagrams did not take the gateway ({n} of {pr['sent']} carried)")
    return {"origin": t_load, "step_at": step_at, "end": end, "samples": wall(flow, r["t0_wall"]),
            "law": [[round(x[0] - t_load, 3), *x[1:]] for x in law.samples],
            "probe_rtts": pr["rtts"], "probe": {"idle": summary(window(pr["rtts"], *idle)), "sent": pr["sent"],
                                                "lost": pr["sent"] - len(pr["rtts"]), "carried": carried},
            "errors": errors}


def _phases(res, p, bounds_, origin):
    """Per phase: goodput, the downlink's queue (p99 over the phase and over
    its second half, from the trace), the probe's RTT (and over the second half); after a step down the
    peak and when the queue first drained below DRAINED_MS after it, after a
    step up when the download first moved REGAINED of the rate."""
    s, down = res["series"], res["series"]["b2a"]
    q = s["phase_qdelay_ms"]["b2a"]
    out = []
    for i, ((a, b), (_, bps)) in enumerate(zip(bounds_, p["steps"])):
        ph = {"rate_bps": bps, "from_s": round(a - origin, 3), "to_s": round(b - origin, 3),
              "goodput_bps": rate_bps(res["samples"], a, b), "qdelay_p99_ms": q[i]["p99_ms"],
              "qdelay_max_ms": q[i]["max_ms"],
              "probe": summary(window(res["probe_rtts"], a, b)),
              "probe_late": summary(window(res["probe_rtts"], (a + b) / 2, b)),
              # the hub's law states seen in the phase, in order (egw contenders)
              "law_states": list(dict.fromkeys(x[1] for x in res["law"] if a - origin <= x[0] < b - origin))}
        # The 100 ms bins inside the phase: [(start s from the step, worst packet's wait ms)].
        bins = [(down["t0_s"] + k * s["bin_s"] - (a - origin), m) for k, m in enumerate(down["qmax_ms"])]
        bins = [(t, m) for t, m in bins if 0 <= t and t + s["bin_s"] <= b - a]
        ph["qdelay_late_p99_ms"] = q[len(bounds_) + i]["p99_ms"]
        if i and bps < p["steps"][i - 1][1] and bins:
            k = max(range(len(bins)), key=lambda j: bins[j][1])
            ph["peak_ms"] = bins[k][1]
            ph["drained_s"] = next((round(t + s["bin_s"], 2) for t, m in bins[k:] if m < DRAINED_MS), None)
        elif i:
            t, ph["regained_s"] = a + REGAIN_WINDOW_S, None
            while t <= b:
                if rate_bps(res["samples"], t - REGAIN_WINDOW_S, t) >= REGAINED * bps:
                    ph["regained_s"] = round(t - a, 2)
                    break
                t += 0.1
        out.append(ph)
    return out


def secs(x):
    return "never" if x is None else f"{x:.1f} s"

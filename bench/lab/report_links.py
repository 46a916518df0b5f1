"""bench/run's output for issue 20's workloads (links.py): tables, goals, plots
of rate and queue delay over time per contender (wanem's trace)."""
import statistics

from contenders import LABELS


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def label(key):
    return LABELS.get(key, key)


def pct(x):
    return "–" if x is None else f"{x:.0%}"


def ms(x):
    return "–" if x is None else f"{x:.0f}"


def link_rates(e):
    down = e["link"]["rate_bps"]
    up = e["link"].get("up", {}).get("rate_bps", down)
    return up, down


def link_text(e):
    l = e["link"]
    up, down = link_rates(e)
    rate = f"{down / 1e6:g} Mbit/s" + (f" down, {up / 1e6:g} Mbit/s up" if up != down else "")
    q = "unlimited queue" if l["queue"] == "0" else f"queue {l['queue'][:-1]} packets"
    loss = f", {l['loss'] * 100:g} % random loss" if l.get("loss") else ""
    return f"{rate}, one-way delay {l['delay_ms']:g} ms, {q}{loss}"


def cpu(runs):
    """wanem's CPU share, and how late its departures were (p99, the later direction)."""
    late = med(max((r["series"].get("wanem_late_ms", {}).get(d, {}).get("p99_ms") or 0) for d in ("a2b", "b2a"))
               for r in runs)
    return f"{pct(med(r['series']['wanem_cpu'] for r in runs))} / {ms(late)}"


# ------------------------------------------------------------------ tables

def probe_lost(runs):
    """The probe's loss over the whole run (idle and loaded), median of the reps."""
    lost = med(r["probe"]["lost"] / r["probe"]["sent"] for r in runs if r["probe"].get("sent"))
    carried = any(r["probe"].get("carried") for r in runs)
    return ("–" if lost is None else f"{lost:.1%}") + (" (gateway)" if carried else "")


def full_links_table(name, e):
    p = e["params"]
    up, down = link_rates(e)
    out = [f"**{name}** ({link_text(e)}): a bulk download and a bulk upload through the contender for "
           f"{p['seconds']:g} s (rates after {p['warm_s']:g} s, goodput / link rate); beside them a UDP probe "
           f"(50 packets/s, 200 bytes; direct, the link's queue, except for a contender that carries it: "
           f"\"gateway\" in the loss column), a 200-byte request every 100 ms through the "
           f"contender (`application/json`), and the `{p['page']}` page (cleartext, {p.get('concurrency', 6)} "
           f"connections), each idle first, then loaded. Queue delay: the link model's (wanem's trace), p99 over the loaded window; wanem late: its "
           f"departures after the model's time (the machine's load). "
           f"{e['reps']} rep(s), medians.", "",
           "| contender | down | up | probe RTT p50 / p99, idle -> loaded (ms) | probe lost | request p99 idle -> loaded (ms) "
           "| page loaded / idle | queue delay p99 down / up (ms) | wanem CPU / late p99 (ms) |", "|---|---|---|---|---|---|---|---|---|"]
    for key, runs in e["results"].items():
        def m(f):
            return med(f(r) for r in runs)
        pi, pl = m(lambda r: r["page_idle_s"]), m(lambda r: r["page_loaded_s"])
        out.append(
            f"| {label(key)} | {pct(m(lambda r: r['down_bps']) and m(lambda r: r['down_bps']) / down)} | "
            f"{pct(m(lambda r: r['up_bps']) and m(lambda r: r['up_bps']) / up)} | "
            f"{ms(m(lambda r: r['probe']['idle']['p50_ms']))} / {ms(m(lambda r: r['probe']['idle']['p99_ms']))} -> "
            f"{ms(m(lambda r: r['probe']['loaded']['p50_ms']))} / {ms(m(lambda r: r['probe']['loaded']['p99_ms']))} | "
            f"{probe_lost(runs)} | "
            f"{ms(m(lambda r: r['requests']['idle']['p99_ms']))} -> {ms(m(lambda r: r['requests']['loaded']['p99_ms']))} | "
            f"{'–' if not (pi and pl) else f'{pl / pi:.2f}x ({pl:.2f} / {pi:.2f} s)'} | "
            f"{ms(m(lambda r: r['series']['qdelay_ms']['b2a']['p99_ms']))} / "
            f"{ms(m(lambda r: r['series']['qdelay_ms']['a2b']['p99_ms']))} | {cpu(runs)} |")
    return "\n".join(out)


def bulk_table(name, e):
    p = e["params"]
    up, down = link_rates(e)
    what = ("one download through the contender" if p["directions"] == ["down"] else
            "a download through the contender beside a direct CUBIC upload (another host's: the up column)"
            if p.get("direct_upload") else "a download and an upload at once through the contender")
    out = [f"**{name}** ({link_text(e)}): {what} for {p['seconds']:g} s; goodput after "
           f"{p['warm_s']:g} s / link rate; queue delay p99 (wanem's trace) over the same window; "
           f"{e['reps']} rep(s), medians.", "",
           "| contender | " + " | ".join(p["directions"]) + " | queue delay p99 down / up (ms) | wanem CPU / late p99 (ms) |",
           "|---|" + "---|" * len(p["directions"]) + "---|---|"]
    for key, runs in e["results"].items():
        cells = [pct(med(r.get(f"{d}_bps") for r in runs) and med(r.get(f"{d}_bps") for r in runs) /
                     (down if d == "down" else up)) for d in p["directions"]]
        out.append(f"| {label(key)} | " + " | ".join(cells) + " | "
                   f"{ms(med(r['series']['qdelay_ms']['b2a']['p99_ms'] for r in runs))} / "
                   f"{ms(med(r['series']['qdelay_ms']['a2b']['p99_ms'] for r in runs))} | {cpu(runs)} |")
    return "\n".join(out)


def sweep_table(results):
    """The bulk-<queue>-loss<x> experiments in one table: down / up % per loss."""
    ex = {n: e for n, e in results["experiments"].items() if is_sweep(n, e)}
    if not ex:
        return ""
    cols = list(ex)
    keys = []
    for e in ex.values():
        keys += [k for k in e["results"] if k not in keys]
    first = next(iter(ex.values()))
    p = first["params"]
    out = [f"**Loss sweep** (20 Mbit/s each way, one-way delay 30 ms; deep = 600 packets, shallow = 25 packets, "
           f"~0.25 BDP): a download and an upload at once through the contender for {p['seconds']:g} s, goodput "
           f"after {p['warm_s']:g} s / link rate, down / up.", "",
           "| contender | " + " | ".join(c[len("bulk-"):] for c in cols) + " |", "|---|" + "---|" * len(cols)]
    for key in keys:
        cells = []
        for c in cols:
            runs = ex[c]["results"].get(key)
            if not runs:
                cells.append("–")
                continue
            d, u = med(r.get("down_bps") for r in runs), med(r.get("up_bps") for r in runs)
            up, down = link_rates(ex[c])
            cells.append(f"{pct(d and d / down)} / {pct(u and u / up)}")
        out.append(f"| {label(key)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def is_sweep(name, e):
    return e["kind"] == "bulk" and name.startswith("bulk-")


def compete_table(name, e):
    p = e["params"]
    counts = [str(n) for n in p["counts"]]
    out = [f"**{name}** ({link_text(e)}): the contender's download beside n direct CUBIC downloads (outside the "
           f"tunnel) for {p['seconds']:g} s; after {p['warm_s']:g} s, the contender's rate / the mean CUBIC flow's "
           f"(1 = one flow's fair share), its rate, and the link's use. {e['reps']} rep(s), medians.", "",
           "| contender | " + " | ".join(f"vs {n} CUBIC" for n in counts) + " |", "|---|" + "---|" * len(counts)]
    down = e["link"]["rate_bps"]
    for key, per in e["results"].items():
        cells = []
        for n in counts:
            runs = per[n]
            s = med(r["share"] for r in runs)
            rate = med(r["rate_bps"] for r in runs)
            use = med((r["rate_bps"] + sum(r["cubic_bps"])) / down for r in runs)
            cells.append(f"{'–' if s is None else f'{s:.2f}'} ({'–' if rate is None else f'{rate / 1e6:.1f}'} "
                         f"Mbit/s, link {pct(use)})")
        out.append(f"| {label(key)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def changing_rate_table(name, e):
    p = e["params"]
    steps = " -> ".join(f"{bps / 1e6:g}" for _, bps in p["steps"])
    at = ", ".join(f"{t:g}" for t, _ in p["steps"][1:])
    out = [f"**{name}** ({link_text(e)}): the downlink steps {steps} Mbit/s (at "
           f"{at} s) while one bulk download runs through the "
           f"contender for {p['seconds']:g} s, the UDP probe (50 packets/s) beside it. Per phase: goodput / the "
           f"phase's rate; the downlink's queue delay p99 over the phase and its second half (wanem's trace); the "
           f"probe's RTT p99 (\"gateway\": the contender carries it); after a step down the worst 100 ms bin's queue and when a bin's worst packet first "
           f"waited < 20 ms after it; after a step up when the download first moved 80 % of the new rate over "
           f"500 ms; \"competitive\": the hub's model law (its status socket, every 250 ms) took a queue for "
           f"a competitor's and ran its CUBIC in that phase. {e['reps']} rep(s), medians (never: the phase's "
           f"length).", "",
           "| contender | phase (s) | rate | goodput | queue p99, phase / 2nd half (ms) | probe RTT p99 (ms) "
           "| after the step |", "|---|---|---|---|---|---|---|"]
    for key, runs in e["results"].items():
        if not runs:
            continue
        for i in range(len(p["steps"])):
            phs = [r["phases"][i] for r in runs]

            def m(f):
                return med(f(ph) for ph in phs)
            rate = phs[0]["rate_bps"]
            span = m(lambda ph: ph["to_s"] - ph["from_s"])
            after = ""
            if "drained_s" in phs[0]:
                d = m(lambda ph: span if ph["drained_s"] is None else ph["drained_s"])
                after = f"peak {ms(m(lambda ph: ph['peak_ms']))} ms, < 20 ms after " + (
                    "never" if all(ph["drained_s"] is None for ph in phs) else f"{d:.1f} s")
            elif "regained_s" in phs[0]:
                g = m(lambda ph: span if ph["regained_s"] is None else ph["regained_s"])
                after = "80 % after " + ("never" if all(ph["regained_s"] is None for ph in phs) else f"{g:.1f} s")
            competing = sum("competitive" in ph.get("law_states", ()) for ph in phs)
            if competing:
                after += f"{'; ' if after else ''}competitive ({competing} of {len(phs)})"
            out.append(f"| {label(key) if i == 0 else ''} | {m(lambda ph: ph['from_s']):.0f}-"
                       f"{m(lambda ph: ph['to_s']):.0f} | {rate / 1e6:g} | "
                       f"{pct(m(lambda ph: ph['goodput_bps']) / rate)} | "
                       f"{ms(m(lambda ph: ph['qdelay_p99_ms']))} / {ms(m(lambda ph: ph['qdelay_late_p99_ms']))} | "
                       f"{ms(m(lambda ph: ph['probe']['p99_ms']))}"
                       f"{' (gateway)' if any(r['probe']['carried'] for r in runs) else ''} | {after} |")
    return "\n".join(out)


TABLES = {"full_links": full_links_table, "bulk": bulk_table, "compete": compete_table,
          "changing_rate": changing_rate_table}


# ------------------------------------------------------------------ goals (issue 20, the defaults)

def goals(results, row, key="egw"):
    ex = results["experiments"]
    for name, e in ex.items():
        runs = e.get("results", {}).get(key)
        if not runs:
            continue
        up, down = link_rates(e)
        if e["kind"] == "full_links":
            d, u = med(r["down_bps"] for r in runs) / down, med(r["up_bps"] or 0 for r in runs) / up
            asym = up != down
            need = 0.85 if asym else 0.90
            row(f"{name}: bulk both ways >= {need:.0%} of the link", f"down {d:.0%}, up {u:.0%}", min(d, u) >= need)
            pi, pl = med(r["page_idle_s"] for r in runs), med(r["page_loaded_s"] for r in runs)
            lim = 1.5 if asym else 1.3
            row(f"{name}: page loaded within {lim}x of idle", f"{pl / pi:.2f}x", pl / pi <= lim)
            if not asym:
                i, l = (med(r["requests"][w]["p99_ms"] for r in runs) for w in ("idle", "loaded"))
                row(f"{name}: request p99 within 15 ms of idle", f"{ms(i)} -> {ms(l)} ms",
                    i is not None and l is not None and l - i <= 15)
        elif e["kind"] == "bulk" and e["params"].get("direct_upload"):
            continue  # no goal of the issue's: measured for the law's reverse-path rule (BENCHMARKS.md)
        elif e["kind"] == "bulk" and (e["params"]["directions"] == ["down"] or e["link"].get("loss", 0) <= 0.01):
            worst = min(med(r.get(f"{dd}_bps") for r in runs) / (down if dd == "down" else up)
                        for dd in e["params"]["directions"])
            row(f"{name}: " + ("one stream" if len(e["params"]["directions"]) == 1 else "bulk both ways")
                + " >= 90 % of the link", f"{worst:.0%}", worst >= 0.9)
        elif e["kind"] == "changing_rate":
            # The simulator's bounds (tests/scenarios/changing_rate_test.cc): a step
            # down's queue drained within the max filter's two cycles (6 s), a step
            # up's rate found within one cycle and its probes (3.5 s).
            steps = e["params"]["steps"]
            for i in range(1, len(steps)):
                phs = [r["phases"][i] for r in runs]
                what = f"{steps[i - 1][1] / 1e6:g} -> {steps[i][1] / 1e6:g} Mbit/s"
                if "drained_s" in phs[0]:
                    d = med(99 if ph["drained_s"] is None else ph["drained_s"] for ph in phs)
                    row(f"{name}: {what}: the queue below 20 ms within 6 s", "never" if d == 99 else f"{d:.1f} s",
                        d <= 6)
                else:
                    g = med(99 if ph["regained_s"] is None else ph["regained_s"] for ph in phs)
                    row(f"{name}: {what}: 80 % of the rate within 3.5 s", "never" if g == 99 else f"{g:.1f} s",
                        g <= 3.5)
        elif e["kind"] == "compete":
            for n, rs in runs.items():
                s = med(r["share"] for r in rs)
                row(f"{name}: share vs {n} CUBIC flow(s) within 0.5-2x of one flow's", f"{s:.2f}", 0.5 <= s <= 2)


# ------------------------------------------------------------------ plots

def plots(plt, name, e, save):
    """Per contender (first repetition), rate and queue delay over time, both
    directions; save(fig, file_stem)."""
    if e["kind"] == "compete":
        for n in e["params"]["counts"]:
            runs = {k: per[str(n)] for k, per in e["results"].items()}
            save(_timeseries(plt, f"{name}: beside {n} CUBIC flow(s)", e, runs), f"{name}-{n}")
    else:
        save(_timeseries(plt, name, e, e["results"]), name)


def _timeseries(plt, title, e, per_key):
    keys = [k for k, runs in per_key.items() if runs]
    fig, axes = plt.subplots(len(keys), 2, figsize=(11, 1.9 * len(keys) + 0.8), sharex=True, squeeze=False)
    up, down = link_rates(e)
    for row, key in zip(axes, keys):
        s = per_key[key][0]["series"]
        for d, name, color, rate in (("b2a", "down", "tab:blue", down), ("a2b", "up", "tab:orange", up)):
            ser = s.get(d) or {}
            ts = [ser.get("t0_s", 0) + i * s["bin_s"] for i in range(len(ser.get("mbps", [])))]
            row[0].plot(ts, ser.get("mbps", []), color=color, linewidth=0.8, label=name)
            phases = per_key[key][0].get("phases")
            if phases and d == "b2a":  # the downlink's rate steps (changing_rate)
                xs = [x for ph in phases for x in (ph["from_s"], ph["to_s"])]
                row[0].plot(xs, [ph["rate_bps"] / 1e6 for ph in phases for _ in (0, 1)], color=color,
                            linestyle="dashed", linewidth=0.5)
            else:
                row[0].axhline(rate / 1e6, color=color, linestyle="dashed", linewidth=0.5)
            row[1].plot(ts, [x if x is not None else float("nan") for x in ser.get("qdelay_ms", [])], color=color,
                        linewidth=0.8, label=name)
        row[0].set_ylabel(label(key), fontsize=7)
        row[1].set_ylabel("ms", fontsize=7)
        for ax in row:
            ax.axvline(0, color="grey", linewidth=0.5)
            ax.tick_params(labelsize=7)
    axes[0][0].set_title("link rate, Mbit/s (dashed: capacity)", fontsize=8)
    axes[0][1].set_title("queue delay, ms (mean per 100 ms)", fontsize=8)
    axes[0][0].legend(fontsize=7)
    axes[-1][0].set_xlabel("s from the start of the bulk transfers")
    axes[-1][1].set_xlabel("s from the start of the bulk transfers")
    fig.suptitle(f"{title} ({link_text(e)})", fontsize=9)
    return fig

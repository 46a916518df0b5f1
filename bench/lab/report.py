"""bench/run's output: Markdown tables, the goals checked, PNG plots.

Every number is a median over the experiment's repetitions unless a column
says otherwise; ratios are to the workload's physical lower bound
(bounds.py), measured in the same run as the contenders.
"""
import os
import re
import shutil
import statistics

import report_h2
import report_links
from contenders import LABELS
from experiments import quantile

BEGIN, END = "<!-- wan-lab:begin (bench/run writes this section) -->", "<!-- wan-lab:end -->"


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def fmt(x, spec=".2f", unit=""):
    return "–" if x is None else f"{x:{spec}}{unit}"


def label(key):
    return LABELS.get(key, key)


def count_errors(results):
    n = 0
    for e in results["experiments"].values():
        for per in e.get("results", {}).values():
            if e["kind"] == "pages":
                n += sum(cell["errors"] for cell in per.values())
            elif e["kind"] in ("join", "bursts", "www", "full_links", "bulk", "h2_page", "changing_rate"):
                n += sum(len(r["errors"]) for r in per)
            else:
                n += sum(len(r["errors"]) if isinstance(r["errors"], list) else r["errors"]
                         for runs in per.values() for r in runs)
    return n


def link_text(e):
    if e["kind"] in report_links.TABLES or e["kind"] in report_h2.TABLES:
        return report_links.link_text(e)
    l = e["link"]
    q = "unlimited queue" if l["queue"] == "0" else f"queue {l['queue'][:-1]} packets"
    loss = f", {l['loss']:.0%} random loss" if l.get("loss") else ""
    rate = f"{l['rate_bps'] / 1e6:g} Mbit/s" if l["rate_bps"] >= 1e6 else f"{l['rate_bps'] / 1e3:g} kbit/s"
    return f"{rate}, RTT {2 * l['delay_ms']:g} ms, {q}{loss}"


# ------------------------------------------------------------------ tables

def pages_table(name, e):
    pages = list(e["bounds"])
    conc = f"concurrency {e['concurrency']}" if e["concurrency"] else "unlimited concurrency"
    if e.get("background"):
        conc += f", beside {e['background']} application-limited connections (a request every 0.5-2 s each)"
    out = [f"**{name}** ({link_text(e)}, {conc}, {e['reps']} rep(s)): page time / lower bound "
           f"(HTML time / lower bound); first access, then the repeat after {e['idle_s']:g} s idle.", "",
           "| contender | access | " + " | ".join(pages) + " |", "|---|---|" + "---|" * len(pages),
           "| lower bound | | " + " | ".join(f"{e['bounds'][p]['page_s']:.2f} s ({e['bounds'][p]['html_s']:.2f} s)"
                                            for p in pages) + " |"]
    for key, per in e["results"].items():
        for access in ("first", "repeat"):
            cells = []
            for p in pages:
                runs = per.get(p, {}).get(access, [])
                pr = med(r["page_s"] for r in runs)
                hr = med(r["html_s"] for r in runs)
                b = e["bounds"][p]
                cells.append(f"{fmt(pr and pr / b['page_s'])} ({fmt(hr and hr / b['html_s'])})")
            out.append(f"| {label(key) if access == 'first' else ''} | {access} | " + " | ".join(cells) + " |")
    if "modern" in pages and e["bounds"]["modern"].get("css_js_s"):
        out += css_js_table(e)
    return "\n".join(out)


def css_js_table(e):
    """Issue 21 item 4: the modern page's render-blocking CSS+JS time / its bound."""
    b = e["bounds"]["modern"]["css_js_s"]
    out = ["", f"Render-blocking CSS+JS of the modern page (its bound {b:.3f} s: the root, then the "
               "stylesheets and scripts first): median time / bound.", "",
           "| contender | first | repeat |", "|---|---|---|"]
    for key, per in e["results"].items():
        cells = [med(r.get("css_js_s") for r in per.get("modern", {}).get(a, [])) for a in ("first", "repeat")]
        out.append(f"| {label(key)} | " + " | ".join(fmt(x and x / b) for x in cells) + " |")
    return out


def join_table(name, e):
    b = e["bounds"]
    out = [f"**{name}** ({link_text(e)}): a {e['long_bytes'] / 1e6:g} MB flow, a {e['short_bytes'] / 1e6:g} MB "
           f"flow joining at {e['join_s']:g} s; {e['reps']} rep(s). Short flow's bound {b['short_s']:.3f} s (half the "
           f"link from its first packet). The long flow's cost: its time / (its time alone + the short flow's "
           f"bytes over the link, {b['short_on_link_s']:.3f} s); 1.000 = it lost exactly the link time the short "
           f"flow used.", "",
           "| contender | short flow | / bound | long flow | alone | cost | queue drops during the join | before it |",
           "|---|---|---|---|---|---|---|---|"]
    for key, runs in e["results"].items():
        s, l = med(r["short_s"] for r in runs), med(r["long_s"] for r in runs)
        out.append(f"| {label(key)} | {fmt(s, '.3f', ' s')} | {fmt(s and s / b['short_s'])} | "
                   f"{fmt(l, '.3f', ' s')} | {fmt(med(r['long_alone_s'] for r in runs), '.3f', ' s')} | "
                   f"{fmt(med(r['long_vs_alone'] for r in runs), '.3f')} | "
                   f"{fmt(med(r['drops_during_join'] for r in runs), 'g')} | "
                   f"{fmt(med(r['drops_before_join'] for r in runs), 'g')} |")
    return "\n".join(out)


def pairs_table(name, e):
    counts = [str(n) for n in e["counts"]]
    out = [f"**{name}** ({link_text(e)}): n client/server pairs, each fetching {e['objects']} x "
           f"{e['object_bytes'] // 1024} KB at once, starts spread at random over {e['spread_s']:g} s; total time "
           f"(first start to last byte) / lower bound, {e['reps']} rep(s).", "",
           "| contender | " + " | ".join(f"{n} pairs" for n in counts) + " |", "|---|" + "---|" * len(counts),
           "| lower bound | " + " | ".join(f"{med(e['bounds'][n]):.2f} s" for n in counts) + " |"]
    for key, per in e["results"].items():
        out.append(f"| {label(key)} | " + " | ".join(
            fmt(med(r["total_s"] / r["bound_s"] for r in per[n])) for n in counts) + " |")
    return "\n".join(out)


def fairness_table(name, e):
    counts = [str(n) for n in e["flow_counts"]]
    idle = f" beside {e['idle_members']} idle connections" if e["idle_members"] else ""
    out = [f"**{name}** ({link_text(e)}): n bulk flows{idle} for {e['seconds']:g} s; Jain's index of their rates "
           f"after {e['warm_s']:g} s (link utilisation), {e['reps']} rep(s).", "",
           "| contender | " + " | ".join(f"{n} flows" for n in counts) + " |", "|---|" + "---|" * len(counts)]
    for key, per in e["results"].items():
        out.append(f"| {label(key)} | " + " | ".join(
            f"{fmt(med(r['jain'] for r in per[n]), '.4f')} ({fmt(med(r['utilisation'] for r in per[n]), '.0%')})"
            for n in counts) + " |")
    return "\n".join(out)


def bursts_table(name, e):
    load = f"{e['cross_flows']} CUBIC bulk flows start after the first burst" if e["cross_flows"] else "no other traffic"
    out = [f"**{name}** ({link_text(e)}): one connection, a {e['burst_bytes'] // 1024} KB burst, {e['idle_s']:g} s "
           f"idle, a second burst; {load}; {e['reps']} run(s). Bound {e['bound_s']:.3f} s.", "",
           "| contender | second burst, mean | / bound | median | first burst, median |", "|---|---|---|---|---|"]
    for key, runs in e["results"].items():
        m = mean(r["second_s"] for r in runs)
        out.append(f"| {label(key)} | {fmt(m, '.3f', ' s')} | {fmt(m and m / e['bound_s'])} | "
                   f"{fmt(med(r['second_s'] for r in runs), '.3f', ' s')} | "
                   f"{fmt(med(r['first_s'] for r in runs), '.3f', ' s')} |")
    return "\n".join(out)


def www_ratios(e, key):
    """Every page's time / its lower bound, over all repetitions, sorted."""
    return sorted(t / lb for w, r in zip(e["windows"], e["results"][key])
                  for ts, lbs in zip(r["page_s"], w["bounds_s"]) for t, lb in zip(ts, lbs))


def www_table(name, e):
    ws = e["windows"]
    pages = sum(len(s) for w in ws for s in w["sessions"])
    out = [f"**{name}** ({link_text(e)}): {e['seconds']:g} s of EFCM's WWW session model in its steady state "
           f"(sessions every {e['inter_session_s']:g} s on average), {len(ws)} window(s) (seed "
           f"{', '.join(str(w['seed']) for w in ws)}): {sum(len(w['sessions']) for w in ws)} users, {pages} pages "
           f"of {fmt(med(b for w in ws for s in w['sessions'] for _, b in s) / 1e3, '.0f')} KB median, offering "
           f"{fmt(mean(w['offered'] for w in ws), '.0%')} of the link. Page time (request to last byte) / the "
           f"page's own lower bound, median and 90th percentile over all pages; link busy = bytes on the link / "
           f"its capacity from the first request to the last byte.", "",
           "| contender | page / bound, median | 90th percentile | link busy | MB | queue drops |",
           "|---|---|---|---|---|---|"]
    for key, runs in e["results"].items():
        rs = www_ratios(e, key)
        out.append(f"| {label(key)} | {fmt(quantile(rs, 0.5))} | {fmt(quantile(rs, 0.9))} | "
                   f"{fmt(mean(r['link_busy'] for r in runs), '.0%')} | "
                   f"{fmt(sum(r['bytes'] for r in runs) / 1e6, '.2f')} | {fmt(sum(r['drops'] for r in runs), 'g')} |")
    return "\n".join(out)


TABLES = {"pages": pages_table, "join": join_table, "pairs": pairs_table, "fairness": fairness_table,
          "bursts": bursts_table, "www": www_table, **report_links.TABLES,
          **report_h2.TABLES}


# ------------------------------------------------------------------ goals

def goals(results):
    ex = results["experiments"]
    rows = []

    def row(goal, measured, ok):
        rows.append(f"| {goal} | {measured} | {'met' if ok else '**missed**'} |")

    e = ex.get("pages-realistic")
    if e and "egw" in e["results"]:
        worst_p = max((med(r["page_s"] for r in e["results"]["egw"][p]["first"]) / e["bounds"][p]["page_s"], p)
                      for p in e["bounds"])
        worst_h = max((med(r["html_s"] for r in e["results"]["egw"][p]["first"]) / e["bounds"][p]["html_s"], p)
                      for p in e["bounds"])
        row("E-TCP realistic: every page within 1.3x of its bound", f"worst {worst_p[0]:.2f}x ({worst_p[1]})",
            worst_p[0] <= 1.3)
        row("E-TCP realistic: HTML within 1.1x", f"worst {worst_h[0]:.2f}x ({worst_h[1]})", worst_h[0] <= 1.1)
        rep_worst = max((med(r["page_s"] for r in e["results"]["egw"][p]["repeat"]) /
                         med(r["page_s"] for r in e["results"]["egw"][p]["first"]), p) for p in e["bounds"])
        row("E-TCP realistic: the repeat never slower than the first",
            f"worst repeat/first {rep_worst[0]:.2f} ({rep_worst[1]})", rep_worst[0] <= 1.0)
        rep_h = max((med(r["html_s"] for r in e["results"]["egw"][p]["repeat"]) / e["bounds"][p]["html_s"], p)
                    for p in e["bounds"])
        row("E-TCP realistic: repeat HTML within 1.1x", f"worst {rep_h[0]:.2f}x ({rep_h[1]})", rep_h[0] <= 1.1)
    e = ex.get("pages-modern")
    if e and "egw" in e["results"] and e["bounds"]["modern"].get("css_js_s"):
        css = {k: med(r.get("css_js_s") for r in v["modern"]["first"]) for k, v in e["results"].items()}
        direct = min((css[k], k) for k in ("cubic", "bbr") if css.get(k)) if css.get("cubic") else None
        b = e["bounds"]["modern"]["css_js_s"]
        row("modern page: render-blocking CSS+JS within 1.2x of its bound", f"{css['egw'] / b:.2f}x",
            css["egw"] / b <= 1.2)
        if direct:
            row("modern page: CSS+JS never later than direct TCP",
                f"egw {css['egw']:.3f} s, {direct[1]} {direct[0]:.3f} s", css["egw"] <= direct[0])
    for name, e in ex.items():
        if e["kind"] != "pages" or "egw" not in e["results"] or "cubic" not in e["results"]:
            continue
        ratios = []
        for p in e["bounds"]:
            for access in ("first", "repeat"):
                ours = med(r["page_s"] for r in e["results"]["egw"][p][access])
                theirs = med(r["page_s"] for r in e["results"]["cubic"][p][access])
                ratios.append((ours / theirs, f"{p} {access}"))
        worst = max(ratios)
        row(f"{name}: defaults faster than direct CUBIC on every page", f"worst egw/cubic {worst[0]:.2f} ({worst[1]})",
            worst[0] < 1.0)
    e = ex.get("join")
    if e and "egw" in e["results"]:
        runs = e["results"]["egw"]
        s = med(r["short_s"] for r in runs) / e["bounds"]["short_s"]
        l = med(r["long_vs_alone"] for r in runs)
        d = med(r["drops_during_join"] for r in runs)
        row("Join: short flow within 1.05x of its fair-share bound", f"{s:.2f}x", s <= 1.05)
        row("Join: no drop caused by the join", f"median {fmt(d, 'g')} queue drops during the join", d == 0)
        row("Join: long flow within 2 % (time vs alone + the short flow's link time)", f"{l:.3f}", l <= 1.02)
    e = ex.get("pairs")
    if e and "egw" in e["results"]:
        worst = max((med(r["total_s"] / r["bound_s"] for r in e["results"]["egw"][n]), n) for n in e["results"]["egw"])
        row("Pairs: total within 1.2x of the bound (1-12 pairs)", f"worst {worst[0]:.2f}x ({worst[1]} pairs)",
            worst[0] <= 1.2)
        if "cubic" in e["results"]:
            big = [n for n in e["results"]["egw"] if int(n) >= 6]
            rel = [(med(r["total_s"] for r in e["results"]["egw"][n]) /
                    med(r["total_s"] for r in e["results"]["cubic"][n]), n) for n in big]
            if rel:
                w = max(rel)
                row("Pairs: faster than independent connections from 6 pairs", f"worst egw/cubic {w[0]:.2f} ({w[1]} pairs)",
                    w[0] < 1.0)
    for name in ("fairness", "fairness-idle"):
        e = ex.get(name)
        if e and "egw" in e["results"]:
            worst = min((med(r["jain"] for r in e["results"]["egw"][n]), n) for n in e["results"]["egw"])
            row(f"{name}: Jain's index among coupled members >= 0.99", f"worst {worst[0]:.4f} ({worst[1]} flows)",
                worst[0] >= 0.99)
    for name, e in ex.items():
        if e["kind"] != "bursts" or "egw" not in e["results"]:
            continue
        m = mean(r["second_s"] for r in e["results"]["egw"])
        if not e["cross_flows"]:
            row(f"{name}: burst after idle within 1.2x of its bound", f"{m / e['bound_s']:.2f}x", m / e["bound_s"] <= 1.2)
        elif "egw-nocache" in e["results"]:
            ss = mean(r["second_s"] for r in e["results"]["egw-nocache"])
            row(f"{name}: changed load, at most 10 % worse than slow start (mean of {e['reps']})",
                f"{m:.3f} s vs {ss:.3f} s ({m / ss - 1:+.0%})", m <= 1.1 * ss)
    for name, e in ex.items():
        if e["kind"] != "www" or "egw" not in e["results"] or "cubic" not in e["results"]:
            continue
        ours, theirs = www_ratios(e, "egw"), www_ratios(e, "cubic")
        m, p = [(quantile(ours, q), quantile(theirs, q)) for q in (0.5, 0.9)]
        row(f"{name}: defaults' median and 90th percentile page/bound below direct CUBIC's",
            f"median {m[0]:.2f} vs {m[1]:.2f}, p90 {p[0]:.2f} vs {p[1]:.2f}", m[0] < m[1] and p[0] < p[1])
    report_links.goals(results, row)
    report_h2.goals(results, row)
    if not rows:
        return ""
    return "\n".join(["| goal | measured | |", "|---|---|---|", *rows])


def markdown(results):
    m = results["meta"]
    out = [f"Run {m['date']}, commit {m['commit']}{' (uncommitted changes)' if m['dirty'] else ''}, "
           f"`bench/run{'' if m['mode'] == 'full' else ' --' + m['mode']}`, {m.get('seconds', '?')} s; {m['machine']}.",
           ""]
    if m["skipped"]:
        out += ["Skipped: " + "; ".join(f"{k}: {v}" for k, v in m["skipped"].items()), ""]
    g = goals(results)
    if g:
        out += ["### Goals (ensemble-gw with its defaults)", "", g, ""]
    for name, e in results["experiments"].items():
        if not report_links.is_sweep(name, e):
            out += [TABLES[e["kind"]](name, e), ""]
    sweep = report_links.sweep_table(results)
    if sweep:
        out += [sweep, ""]
    return "\n".join(out)


# ------------------------------------------------------------------ plots

def plots(results, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: matplotlib missing (python3-matplotlib): no plots")
        return
    os.makedirs(out_dir, exist_ok=True)
    def save(fig, stem):
        fig.savefig(os.path.join(out_dir, f"{stem}.png"), dpi=110, bbox_inches="tight")
        plt.close(fig)
    for name, e in results["experiments"].items():
        if e["kind"] in report_links.TABLES:
            report_links.plots(plt, name, e, save)
            continue
        fn = {"pages": _plot_pages, "join": _plot_join, "fairness": _plot_fairness, "pairs": _plot_pairs,
              "www": _plot_www}.get(e["kind"])
        if fn:
            fig = fn(plt, name, e)
            fig.savefig(os.path.join(out_dir, f"{name}.png"), dpi=110, bbox_inches="tight")
            plt.close(fig)


def _plot_pages(plt, name, e):
    """Like E-TCP Figure 5: per page, bars of page time and HTML time (hatched) per contender."""
    pages, keys = list(e["bounds"]), list(e["results"])
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(pages) * len(keys) / 4), 4.5))
    width = 0.8 / len(keys)
    for i, key in enumerate(keys):
        xs = [j + i * width for j in range(len(pages))]
        page = [med(r["page_s"] for r in e["results"][key][p]["first"]) for p in pages]
        html = [med(r["html_s"] for r in e["results"][key][p]["first"]) for p in pages]
        ax.bar(xs, page, width, label=label(key), color=plt.cm.tab20(i % 20))  # 13 contenders: tab10 would repeat
        ax.bar(xs, html, width, color="none", edgecolor="black", hatch="//", linewidth=0.5)
    for j, p in enumerate(pages):
        ax.hlines(e["bounds"][p]["page_s"], j - width / 2, j + 0.8 - width / 2, colors="black", linestyles="dashed")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(pages))], pages)
    ax.set_ylabel("seconds (first access)")
    conc = f"concurrency {e['concurrency']}" if e["concurrency"] else "unlimited concurrency"
    ax.set_title(f"{name}: page time (bars), HTML time (hatched), lower bound (dashed)\n{link_text(e)}, {conc}, "
                 f"median of {e['reps']}", fontsize=9)
    ax.legend(fontsize=7, ncol=3)
    return fig


def _plot_join(plt, name, e):
    """Like seed 003 Figure 1: bytes received over time, long and short flow, per contender."""
    keys = list(e["results"])
    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 3.2), sharey=True, squeeze=False)
    for ax, key in zip(axes[0], keys):
        run = e["results"][key][0]
        for flow, style in (("long", "-"), ("short", "-")):
            s = run["samples"][flow]
            ax.plot([t for t, _ in s], [b / 1e6 for _, b in s], style, label=flow)
        ax.set_title(label(key), fontsize=8)
        ax.set_xlabel("s")
        ax.axvline(e["join_s"], color="grey", linewidth=0.5)
    axes[0][0].set_ylabel("MB received")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"{name}: time-sequence of a short flow joining at {e['join_s']:g} s ({link_text(e)}; first rep)",
                 fontsize=9)
    return fig


def _plot_fairness(plt, name, e):
    """Like EFCM Figure 5.5: each flow's rate as a share of the fair share, all runs."""
    keys = list(e["results"])
    fig, axes = plt.subplots(1, len(keys), figsize=(3.0 * len(keys), 3.0), sharey=True, squeeze=False)
    for ax, key in zip(axes[0], keys):
        shares = []
        for n, runs in e["results"][key].items():
            for r in runs:
                fair = sum(r["rates_bps"]) / len(r["rates_bps"])
                shares += [x / fair for x in r["rates_bps"]]
        ax.hist(shares, bins=[i / 20 for i in range(0, 41)])
        ax.set_title(label(key), fontsize=8)
        ax.set_xlabel("rate / fair share")
    axes[0][0].set_ylabel("flows")
    fig.suptitle(f"{name}: {', '.join(map(str, e['flow_counts']))} bulk flows, {e['seconds']:g} s "
                 f"({link_text(e)})", fontsize=9)
    return fig


def _plot_pairs(plt, name, e):
    fig, ax = plt.subplots(figsize=(6, 4))
    ns = [int(n) for n in e["counts"]]
    for key, per in e["results"].items():
        ax.plot(ns, [med(r["total_s"] for r in per[str(n)]) for n in ns], "o-", label=label(key))
    ax.plot(ns, [med(e["bounds"][str(n)]) for n in ns], "k--", label="lower bound")
    ax.set_xlabel("client/server pairs")
    ax.set_ylabel("total time, s (median)")
    ax.set_title(f"{name}: {e['objects']} x {e['object_bytes'] // 1024} KB per pair ({link_text(e)})", fontsize=9)
    ax.legend(fontsize=7)
    return fig


def _plot_www(plt, name, e):
    """The CDF of every page's time / its lower bound, per contender."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, key in enumerate(e["results"]):
        rs = www_ratios(e, key)
        ax.step(rs, [(j + 1) / len(rs) for j in range(len(rs))], where="post", label=label(key),
                color=plt.cm.tab20(i % 20))
    ax.axvline(1.0, color="black", linestyle="dashed", linewidth=0.8)
    ax.set_xlabel("page time / its lower bound")
    ax.set_ylabel("share of pages")
    ws = e["windows"]
    ax.set_title(f"{name}: {sum(len(s) for w in ws for s in w['sessions'])} pages of EFCM's WWW model, "
                 f"{e['seconds']:g} s, offering {mean(w['offered'] for w in ws):.0%}\n({link_text(e)})", fontsize=9)
    ax.legend(fontsize=7)
    return fig


# ------------------------------------------------------------------ publishing

def publish(md, plots_dir, benchmarks_md, docs_dir):
    """The tables into BENCHMARKS.md between the markers, the plots into docs/wan-lab/."""
    os.makedirs(docs_dir, exist_ok=True)
    for f in os.listdir(plots_dir):
        shutil.copy(os.path.join(plots_dir, f), os.path.join(docs_dir, f))
    images = "\n".join(f"![{f[:-4]}](docs/wan-lab/{f})" for f in sorted(os.listdir(plots_dir)))
    section = f"{BEGIN}\n{md}\n{images}\n{END}"
    text = open(benchmarks_md).read() if os.path.exists(benchmarks_md) else ""
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: section, text, flags=re.S)
    else:
        text += f"\n## The WAN lab (issue 8)\n\n{section}\n"
    with open(benchmarks_md, "w") as f:
        f.write(text)

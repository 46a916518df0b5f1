"""bench/run's output for issue 21's HTTP/2 page (h2page.py): load time idle
and loaded per contender, the bulk transfers' rates beside it, and for a
gateway the classes its branch gave the bytes (the page `web`, the bulk `bulk`)."""
from report_links import label, link_rates, link_text, med, ms, pct

GOAL = 1.3  # issue 21: the page loaded within 1.3x of its idle load time


def mb(n):
    return f"{n / 1e6:.1f} MB"


def class_text(runs):
    """The first run's branch metrics: bytes per class, the stages that decided."""
    cl = next((r["classes"] for r in runs if r.get("classes")), None)
    if not cl:
        return "–"
    by = ", ".join(f"{c} {mb(b)}" for c, b in sorted(cl["bytes"].items(), key=lambda x: -x[1]))
    st = ", ".join(f"{s} {n}" for s, n in sorted(cl["stages"].items()))
    return f"{by}; stages: {st}" + (f"; {cl['decayed']} decayed" if cl.get("decayed") else "")


def ratio(runs):
    i, l = med(r["idle_s"] for r in runs), med(r["loaded_s"] for r in runs)
    return (l / i if i and l else None), i, l


def h2_page_table(name, e):
    p = e["params"]
    up, down = link_rates(e)
    out = [f"**{name}** ({link_text(e)}): a modern page over HTTPS/2 (nginx, TLS 1.3, `http2`; "
           f"`nghttp -a`: {e['objects']} objects, {e['page_bytes'] / 1e6:.2f} MB, one connection, SNI "
           f"`{e['server_name']}`), {p['loads']} loads idle, then {p['loads']} while a bulk download and a bulk "
           f"upload (cleartext HTTP) run through the same contender for {p['seconds']:g} s (loads from "
           f"{p['warm_s']:g} s on; rates after it). Load time: wall clock of `nghttp`, TCP and TLS handshakes "
           f"included. Queue delay: the link model's (wanem's trace), p99 while the loaded pages ran. Gateway: the branch's `egw_stream_bytes_total` by class and "
           f"`egw_streams_classified_total` by stage over the run. {e['reps']} rep(s), medians.", "",
           "| contender | idle (s) | loaded (s) | loaded / idle | bulk down | bulk up | queue delay p99 down / up (ms) "
           "| gateway: bytes by class |", "|---|---|---|---|---|---|---|---|"]
    for key, runs in e["results"].items():
        x, i, l = ratio(runs)
        d, u = med(r["down_bps"] for r in runs), med(r["up_bps"] for r in runs)
        out.append(f"| {label(key)} | {'–' if i is None else f'{i:.2f}'} | {'–' if l is None else f'{l:.2f}'} | "
                   f"{'–' if x is None else f'{x:.2f}x'} | {pct(d and d / down)} | {pct(u and u / up)} | "
                   f"{ms(med(r.get('qdelay_p99_ms', {}).get('b2a') for r in runs))} / "
                   f"{ms(med(r.get('qdelay_p99_ms', {}).get('a2b') for r in runs))} | {class_text(runs)} |")
    return "\n".join(out)


TABLES = {"h2_page": h2_page_table}


def goals(results, row, key="egw"):
    for name, e in results["experiments"].items():
        runs = e.get("results", {}).get(key)
        if e["kind"] != "h2_page" or not runs:
            continue
        x, _, _ = ratio(runs)
        row(f"{name}: HTTP/2 page loaded within {GOAL}x of idle", "–" if x is None else f"{x:.2f}x",
            x is not None and x <= GOAL)

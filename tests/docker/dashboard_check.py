#!/usr/bin/env python3
"""Keeps docker/grafana-dashboard.json from rotting.

  dashboard_check.py DASHBOARD --source proxy/metrics_exporter.cc   # names exist in the exporter
  dashboard_check.py DASHBOARD --scrape metrics.txt                 # ... and in a live /metrics
  dashboard_check.py DASHBOARD --readme README.md --require NAME    # ... and it shows these

Checks the JSON model (schemaVersion, a Prometheus datasource variable every
panel uses, unique panel ids, an expr per target), then every metric name an
expression queries. With --scrape, also every label an expression names
(selectors, `by (...)`, legends) exists on that metric in the scrape (when it
has samples there), except
`instance` and `job`, which Prometheus adds. With --readme, every metric the
file names (the README promises them on the dashboard) must be queried by a
panel, and so must every --require NAME. Prints what it checked; exit 1
with each problem otherwise.
"""
import argparse
import json
import re
import sys

METRIC = re.compile(r"\begw_[a-z_]+\b")
PROMETHEUS_LABELS = {"instance", "job", "__name__"}


def labels_in(expr, legend):
    names = set()
    for selector in re.findall(r"\{([^}]*)\}", expr):
        names |= set(re.findall(r"([a-z_]+)\s*(?:=~|!~|!=|=)", selector))
    for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        names |= {n.strip() for n in group.split(",") if n.strip()}
    names |= set(re.findall(r"\{\{\s*([a-z_]+)\s*\}\}", legend or ""))
    return names - PROMETHEUS_LABELS


def parse_scrape(text):
    """{metric: set of label names} of the samples in Prometheus text, and the
    names of every family, with samples or not (a counter by reason has none
    until the first)."""
    labels, families = {}, set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            families.add(line.split()[2])
        elif line and not line.startswith("#"):
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?", line)
            if m:
                families.add(m.group(1))
                labels.setdefault(m.group(1), set()).update(re.findall(r"([a-zA-Z_]+)=\"", m.group(3) or ""))
    return labels, families


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dashboard")
    ap.add_argument("--source", action="append", default=[], help="exporter source naming the metrics")
    ap.add_argument("--scrape", help="a /metrics text")
    ap.add_argument("--readme", action="append", default=[],
                    help="a document whose every egw_ metric must be on the dashboard")
    ap.add_argument("--require", action="append", default=[], help="a metric that must be on the dashboard")
    args = ap.parse_args()

    problems = []
    dash = json.load(open(args.dashboard))
    if not 36 <= dash.get("schemaVersion", 0) <= 41:
        problems.append(f"schemaVersion {dash.get('schemaVersion')}: expected 36..41")
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    if ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        problems.append("no datasource variable of type prometheus")

    ids = set()
    targets = []
    for panel in dash.get("panels", []):
        if panel["id"] in ids:
            problems.append(f"panel id {panel['id']} twice")
        ids.add(panel["id"])
        if panel["type"] == "row":
            continue
        if panel.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"panel '{panel['title']}' does not use ${{datasource}}")
        if not panel.get("targets"):
            problems.append(f"panel '{panel['title']}' has no targets")
        for t in panel.get("targets", []):
            if not t.get("expr"):
                problems.append(f"panel '{panel['title']}' target {t.get('refId')} has no expr")
            targets.append((panel["title"], t.get("expr", ""), t.get("legendFormat", "")))
    for v in variables.values():
        q = v.get("query")
        if isinstance(q, dict):
            targets.append((f"variable {v['name']}", q.get("query", ""), ""))

    known = set()
    for path in args.source:
        known |= set(re.findall(r'"(egw_[a-z_]+)"', open(path).read()))
    scraped, families = parse_scrape(open(args.scrape).read()) if args.scrape else (None, set())

    queried = set()
    for title, expr, legend in targets:
        names = set(METRIC.findall(expr))
        queried |= names
        for name in names:
            if args.source and name not in known:
                problems.append(f"'{title}': {name} is not in {', '.join(args.source)}")
            if scraped is not None and name not in families:
                problems.append(f"'{title}': {name} is not in the scrape")
        sampled = [n for n in names if n in (scraped or {})]
        if sampled:  # labels can be checked only on metrics with samples
            have = set().union(*(scraped[n] for n in sampled))
            for label in labels_in(expr, legend) - have:
                problems.append(f"'{title}': label '{label}' is on none of {sorted(sampled)} in the scrape")

    promised = {name: f"--require {name}" for name in args.require}
    for path in args.readme:
        for name in set(METRIC.findall(open(path).read())):
            promised.setdefault(name, f"{path} names it")
    panel_queried = {n for title, expr, _ in targets if not title.startswith("variable ")
                     for n in METRIC.findall(expr)}
    for name, why in sorted(promised.items()):
        if name not in panel_queried:
            problems.append(f"no panel shows {name} ({why})")

    for p in problems:
        print(f"dashboard_check: {p}")
    if not problems:
        where = " and ".join(filter(None, ["the exporter source" if args.source else "",
                                           "the scrape" if args.scrape else ""]))
        print(f"dashboard_check: {len(ids)} panels, {len(targets)} queries, "
              f"{len(queried)} metrics all in {where or 'nothing (no --source or --scrape)'}"
              + (f"; the {len(promised)} promised all shown" if promised else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

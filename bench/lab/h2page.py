"""Issue 21: a modern HTTPS page over HTTP/2 from a real server and client,
idle and while bulk transfers fill the link both ways.

  server   Debian's nginx in the server namespace: TLS 1.3 only, `http2`, a
           self-signed ECDSA certificate made at run time for SERVER_NAME,
           one port per contender (H2_PORT_BASE + the contender's index)
  client   `nghttp -a -n`: the HTML, then every same-origin asset it links
           (CSS, scripts, images) over the one connection, with HTTP/2's
           dependency priorities (html > css > js > images) and a browser's
           receive windows; `:authority` set to SERVER_NAME, which nghttp
           also sends as the TLS SNI
  page     MODERN: a page of today's median weight (HTTP Archive's Web
           Almanac 2022, desktop: ~30 KB HTML, ~70 KB CSS, ~500 KB of
           scripts, ~1 MB of images, tens of requests)

Every contender reaches nginx on its own port: direct TCP routed by branch
and hub, its congestion control set by a policy route on the server's side
(the namespace's default is the host's, and nginx cannot choose one); a
gateway pair through the branch's redirect of that port to its listener. To
the gateway the page is one TLS stream with a name no stage knows
(`classify.unknown_host`: `web`), the bulk transfers cleartext HTTP (the
upload `default`, the download `Content-Type: application/octet-stream`:
`bulk`); the branch's metrics after each run say which class carried how
many bytes, and the report prints them.
"""
import os
import re
import statistics
import subprocess
import time

from contenders import Gateway
from links import bulk_job, bulk_rates, background, collect, each_traced
from netlab import LAN, NET, in_ns, log, nft, nsh, server_ip, wait_until, port_listening

NGINX, NGHTTP = "/usr/sbin/nginx", "/usr/bin/nghttp"
SERVER_NAME = "www.h2lab.test"  # unknown to every detector stage: classify.unknown_host
# A browser's HTTP/2 receive windows (Chrome: 6 MB per stream, 15 MB per
# connection), as nghttp's window bits: nghttp's own 64 KiB would cap the page
# at 64 KiB per round trip, a limit of the client and not of the path.
WINDOW_BITS, CONNECTION_WINDOW_BITS = 23, 24
H2_PORT_BASE = 9001
CC_TABLE_BASE = 210  # the server's policy-route tables that set direct TCP's congestion control
K = 1024


def _spread(n, lo_k, hi_k):
    return [lo_k * K if n == 1 else (lo_k * K + (hi_k - lo_k) * K * i // (n - 1)) for i in range(n)]


# name -> [(path, bytes)]: HTML first, then what it links, in document order.
MODERN = ([("/index.html", 32 * K)]
          + [(f"/css/s{i}.css", b) for i, b in enumerate(_spread(3, 8, 40))]
          + [(f"/js/app{i}.js", b) for i, b in enumerate(_spread(8, 4, 120))]
          + [(f"/img/p{i}.png", b) for i, b in enumerate(_spread(30, 2, 66))])


def page_bytes(page=MODERN):
    return sum(b for _, b in page)


def available():
    """None, or why the scenario cannot run here."""
    missing = [p for p in (NGINX, NGHTTP) if not os.access(p, os.X_OK)]
    if missing:
        return f"{' and '.join(missing)} missing (apt install nginx nghttp2-client; scripts/install-deps.sh)"
    return None


def html(page=MODERN):
    """The HTML document of `page`, padded to its size: links every asset, as a page does."""
    _, size = page[0]
    tags = []
    for path, _ in page[1:]:
        if path.endswith(".css"):
            tags.append(f'<link rel="stylesheet" href="{path}">')
        elif path.endswith(".js"):
            tags.append(f'<script src="{path}"></script>')
        else:
            tags.append(f'<img src="{path}" alt="">')
    head = "<!DOCTYPE html>\n<html><head><title>h2 lab</title>\n" + "\n".join(
        t for t in tags if not t.startswith("<img")) + "\n</head><body>\n"
    body = "\n".join(t for t in tags if t.startswith("<img")) + "\n"
    tail = "</body></html>\n"
    pad = size - len(head) - len(body) - len(tail) - len("<p></p>\n")
    if pad < 0:
        raise ValueError(f"the HTML's {size} bytes cannot hold its {len(tags)} links")
    return head + body + "<p>" + "lorem ipsum " * (pad // 12) + " " * (pad % 12) + "</p>\n" + tail


def write_site(root, page=MODERN):
    for path, size in page:
        full = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(html(page).encode() if path.endswith(".html") else b"\x89" * size)


def nginx_conf(d, ports):
    return f"""daemon off;
user root;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile off;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  types {{ text/html html; text/css css; application/javascript js; image/png png; }}
  server {{
{''.join(f'    listen {p} ssl http2;{chr(10)}' for p in ports)}    server_name {SERVER_NAME};
    ssl_certificate {d}/cert.pem;
    ssl_certificate_key {d}/key.pem;
    ssl_protocols TLSv1.3;
    root {d}/www;
  }}
}}
"""


def h2_port(c):
    return H2_PORT_BASE + (c.port - 8001)


def start(lab, contenders):
    """nginx (once per lab) on every contender's port; the routes and redirects
    that give each its path. Idempotent: later experiments reuse it."""
    if getattr(lab, "h2_started", None) is None:
        lab.h2_started = set()
        d = os.path.join(lab.tmp, "h2")
        os.makedirs(d, exist_ok=True)
        write_site(os.path.join(d, "www"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", f"{d}/key.pem", "-out", f"{d}/cert.pem", "-days", "2",
                        "-subj", f"/CN={SERVER_NAME}", "-addext", f"subjectAltName=DNS:{SERVER_NAME}"],
                       check=True, capture_output=True)
        lab.h2_dir = d
    new = [c for c in contenders if c.key not in lab.h2_started]
    if not new:
        return
    lab.h2_started |= {c.key for c in new}
    lab.h2_contenders = getattr(lab, "h2_contenders", []) + new
    ports = sorted(h2_port(c) for c in lab.h2_contenders)
    with open(os.path.join(lab.h2_dir, "nginx.conf"), "w") as f:
        f.write(nginx_conf(lab.h2_dir, ports))
    lab.spawn("nginx-h2", "server", NGINX, "-c", os.path.join(lab.h2_dir, "nginx.conf"))
    for p in ports:
        wait_until(lambda: port_listening("server", p), 10, f"nginx port {p}")
    for c in new:
        _path(c)


def _path(c):
    """Direct: the server's answers from this port leave by a route that sets
    the contender's congestion control. Gateway: the branch redirects the
    port to the pair's listener, as it does the contender's own port."""
    port = h2_port(c)
    if isinstance(c, Gateway):
        nft("branch", f"""table inet egwl_h2_{c.key.replace('-', '_')} {{
  chain prerouting {{
    type nat hook prerouting priority dstnat; policy accept;
    ip saddr {LAN} tcp dport {port} redirect to :{c.listener}
  }}
}}""")
        return
    table = str(CC_TABLE_BASE + port - H2_PORT_BASE)
    nsh("server", "ip", "route", "replace", LAN, "via", f"10.{NET}.2.1", "dev", "dc0", "congctl", c.cc,
        "table", table)
    nsh("server", "ip", "rule", "add", "ipproto", "tcp", "sport", str(port), "lookup", table)


# ---------------------------------------------------------------- the client

STAT = re.compile(r"^\s*\d+\s+\+?([\d.]+)(us|ms|s)\s+\S+\s+\S+\s+(\d{3})\s+\S+\s+(\S+)\s*$")
UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def parse_stats(text):
    """nghttp -s's request table: [(path, status, responseEnd s after connectEnd)]."""
    out = []
    for line in text.splitlines():
        m = STAT.match(line)
        if m:
            out.append((m.group(4), int(m.group(3)), float(m.group(1)) * UNIT[m.group(2)]))
    return out


def load(c, timeout_s=60, page=MODERN):
    """One page load through contender c: {"page_s": wall clock of the whole
    load (TCP and TLS handshakes included), "after_connect_s": nghttp's last
    responseEnd, "start", "end", "errors"}."""
    url = f"https://{server_ip(0)}:{h2_port(c)}/index.html"
    t0 = time.time()
    r = subprocess.run(in_ns("client", NGHTTP, "-a", "-n", "-s", "-y", "-t", f"{timeout_s}s",
                             "-w", str(WINDOW_BITS), "-W", str(CONNECTION_WINDOW_BITS),
                             "-H", f":authority: {SERVER_NAME}", url),
                       capture_output=True, text=True, timeout=timeout_s + 15)
    t1 = time.time()
    got = parse_stats(r.stdout)
    errors = []
    if r.returncode != 0:
        errors.append(f"nghttp exit {r.returncode}: {r.stderr.strip()[-300:]}")
    bad = [p for p, status, _ in got if status != 200]
    if bad or len(got) != len(page):
        errors.append(f"{len(got)} of {len(page)} objects, not 200: {bad[:5]}")
    return {"page_s": t1 - t0, "after_connect_s": max((t for _, _, t in got), default=None),
            "start": t0, "end": t1, "errors": errors}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def classes(c):
    """A gateway's branch metrics: bytes per class, streams per classifier stage, decays."""
    if not isinstance(c, Gateway):
        return None
    port = 9500 + c.i
    out = nsh("branch", "python3", "-c", "import urllib.request, sys; sys.stdout.write(urllib.request.urlopen("
              f"'http://127.0.0.1:{port}/metrics', timeout=5).read().decode())", capture=True, check=False) or ""
    got = {"bytes": {}, "stages": {}, "decayed": 0}
    for line in out.splitlines():
        m = re.match(r'egw_stream_bytes_total\{.*class="(\w+)".*\}\s+(\S+)', line)
        if m and float(m.group(2)):
            got["bytes"][m.group(1)] = got["bytes"].get(m.group(1), 0) + int(float(m.group(2)))
        m = re.match(r'egw_streams_classified_total\{stage="(\w+)"\}\s+(\S+)', line)
        if m and float(m.group(2)):
            got["stages"][m.group(1)] = int(float(m.group(2)))
        if line.startswith("egw_streams_decayed_total"):
            got["decayed"] = int(float(line.split()[-1]))
    return got


# ---------------------------------------------------------------- the experiment

def h2_page(lab, contenders, up, down, seed, reps, p):
    """Per contender: the page once (a first visit: TLS, a fresh pair),
    p["loads"] times idle, then bulk both ways for p["seconds"] with the page
    p["loads"] times more after p["warm_s"]; medians of each, their ratio."""
    start(lab, contenders)
    out = {"params": p, "page_bytes": page_bytes(), "objects": len(MODERN), "server_name": SERVER_NAME,
           "results": {c.key: [] for c in contenders}}
    def run(c, tag):
        res = _run(lab, c, tag, p)
        res["classes"] = classes(c)  # before each_traced restarts the gateways
        return res

    for rep, c, res, tr in each_traced(lab, contenders, up, down, seed, reps, "h2", run):
        # The link's queue while the loaded pages ran: what made them wait.
        s = tr.series(res["loaded"][0], *res["loaded"])
        res["qdelay_p99_ms"] = {d: s["qdelay_ms"][d]["p99_ms"] for d in ("a2b", "b2a")}
        res["wanem_cpu"] = s["wanem_cpu"]
        out["results"][c.key].append(res)
        cl = res["classes"]
        log(f"    {c.key:14s} h2 page rep {rep + 1}: idle {res['idle_s']:.2f} s, loaded {res['loaded_s']:.2f} s "
            f"({res['loaded_s'] / res['idle_s']:.2f}x); bulk down {fmt_pct(res['down_bps'], down)} up "
            f"{fmt_pct(res['up_bps'], up)}; queue p99 down {ms(res['qdelay_p99_ms']['b2a'])} up "
            f"{ms(res['qdelay_p99_ms']['a2b'])}; loads {' '.join(f'{x:.2f}' for x in res['idle_runs_s'])} / "
            f"{' '.join(f'{x:.2f}' for x in res['loaded_runs_s'])}" + (f"; classes {cl}" if cl else "")
            + (f"; page streams by stage {res['page_stages']}" if cl else "")
            + (f"; ERRORS {res['errors']}" if res["errors"] else ""))
    return out


def classified(c, fn):
    """fn's result, and for a gateway the stage that classified the stream(s)
    it opened and the class their bytes went in (the branch's metrics before
    and after): {"stages": {stage: n}, "bytes": {class: n}}."""
    before = classes(c)
    r = fn()
    after = classes(c)
    if before is not None and after is not None:
        r["classified"] = {k: {x: n - before[k].get(x, 0) for x, n in after[k].items() if n - before[k].get(x, 0)}
                           for k in ("stages", "bytes")}
    return r


def _run(lab, c, tag, p):
    errors = []
    first = classified(c, lambda: load(c))
    errors += first["errors"]
    idle = []
    for _ in range(p["loads"]):
        time.sleep(0.3)
        idle.append(classified(c, lambda: load(c)))
    time.sleep(0.5)
    t_load = time.time()
    bulk = background(bulk_job(c, ("down", "up"), p["seconds"], tag))
    loaded = []
    try:
        time.sleep(p["warm_s"])
        for _ in range(p["loads"]):
            loaded.append(classified(c, lambda: load(c)))
            time.sleep(0.3)
    finally:
        r = collect(bulk, stop=False)
    late = [x for x in loaded if x["end"] > t_load + p["seconds"]]
    if late:
        errors.append(f"{len(late)} loaded page(s) ended after the bulk transfers: raise seconds")
    win = (t_load + p["warm_s"], t_load + p["seconds"])
    rates, errs = bulk_rates(lab, r, ("down", "up"), tag, *win)
    errors += errs + [e for x in idle + loaded for e in x["errors"]]
    pages = (min(x["start"] for x in loaded), max(x["end"] for x in loaded))
    return {"loaded": pages, "first_s": first["page_s"], "idle_s": median(x["page_s"] for x in idle),
            "loaded_s": median(x["page_s"] for x in loaded), "idle_runs_s": [x["page_s"] for x in idle],
            "loaded_runs_s": [x["page_s"] for x in loaded],
            "page_stages": [x.get("classified", {}).get("stages") for x in [first] + idle + loaded],
            "idle_after_connect_s": median(x["after_connect_s"] for x in idle),
            "loaded_after_connect_s": median(x["after_connect_s"] for x in loaded),
            "down_bps": rates["down"], "up_bps": rates["up"], "errors": errors}


def ms(x):
    return "–" if x is None else f"{x:.0f} ms"


def fmt_pct(bps, link):
    return "–" if bps is None else f"{bps / link.rate_bps:.0%}"


"""What a user would run instead, and ensemble-gw's variants, all in one lab at once.

Each contender reaches the web server at its own port (and, for WireGuard, its
own server addresses), so every one of them is up during the whole run and a
workload picks one by its target. All cross the same emulated link.

  cubic, bbr     direct kernel TCP, client to server, routed by branch and hub
                 (the server's listening socket chooses the congestion control)
  wireguard      upstream wireguard-go between branch and hub, kernel TCP
                 (cubic) inside; the server's 10.N.4.x addresses route through it
  kcptun         kcptun client at the branch (nftables redirect of the port),
                 server at the hub; windows raised as its docs advise
  egw-*          an ensemble-gw pair with that variant's `ensemble` /
                 `scheduler` / `temporal_cache` settings; the branch's nftables
                 redirect of the port to the variant's listener
`cold(lab)` before a first access: the kernel's tcp_metrics flushed (Linux
caches ssthresh per destination), an ensemble-gw pair restarted (a new
ensemble, an empty temporal cache).
"""
import os
import subprocess

from netlab import (BUILD, DC, DC_WG, HUB_WAN, LAN, NET, PREFIX, in_ns, nft, nsh, port_listening, server_ip, sh,
                    wait_until)

PEERS = os.path.join(BUILD, "peers", "bin")
GW = os.path.join(BUILD, "ensemble-gw")
KCPTUN_OPTS = ["-mode", "fast3", "-nocomp", "-sndwnd", "2048", "-rcvwnd", "2048",
               "-sockbuf", "16777217", "-crypt", "aes", "-key", "egw-wan-lab", "-quiet"]

# ensemble-gw variants: YAML merged into both gateways' configs. `egw` is the
# product's defaults (nothing overridden).
EGW_VARIANTS = {
    "egw": "",
    "egw-none": "ensemble:\n  coupling: none\n",
    "egw-nflows": "ensemble:\n  coupling: n_flows\n",
    "egw-newreno": "ensemble:\n  window_law: newreno\n",
    "egw-cubic": "ensemble:\n  window_law: cubic\n",
    "egw-fair": "scheduler:\n  policy: fair\n",
    "egw-decay": "scheduler:\n  policy: decay\n",
    "egw-preempt": "scheduler:\n  policy: preempt\n",
    "egw-shares": "scheduler:\n  render_blocking_cap: 0\n",
    "egw-nocache": "temporal_cache:\n  capacity: 0\n",
    "egw-hystart": "ensemble:\n  slow_start: hystart\n",
    "egw-prr": "ensemble:\n  recovery: prr\n",
    "egw-modern": "ensemble:\n  slow_start: hystart\n  recovery: prr\n",
    "egw-joinnow": "ensemble:\n  join: immediate\n",
    "egw-halve": "ensemble:\n  random_loss: congestion\n",
    "egw-notlp": "ensemble:\n  tail_probes: 0\n",
    "egw-nocopy": "ensemble:\n  thin_stream_copies: false\n",
    "egw-nflows-halve": "ensemble:\n  coupling: n_flows\n  random_loss: congestion\n",
    # Issue 20: the delay-aware law, with the WAN's rate configured at ~95 %
    # of the link ({up}/{down}: the branch's uplink and downlink, set per
    # scenario by set_link), and the defaults without pacing.
    "egw-model": "ensemble:\n  window_law: model\n",
    "egw-model-rate": "ensemble:\n  window_law: model\n  max_rate: {{up: {up}, down: {down}}}\n",
    "egw-nopace": "ensemble:\n  pacing: false\n",
    # Issue 21's HTTP/2 page: max_rate with the defaults' law (h2page.py).
    "egw-rate": "ensemble:\n  max_rate: {{up: {up}, down: {down}}}\n",
    # Issue 21: the model law and max_rate, the realtime probe carried by the
    # gateway as a UDP flow of class realtime ({udp}: the branch's or the hub's
    # `udp:` section, Gateway.extra).
    "egw-call": "ensemble:\n  window_law: model\n  max_rate: {{up: {up}, down: {down}}}\n{udp}",
    # The same call with the gateway's defaults (no max_rate): issue 21's
    # "current defaults" row.
    "egw-call-defaults": "{udp}",
    # egw-call with 1,200-byte tunnel datagrams (no PMTU probing above): a
    # full packet's serialisation on a 1 Mbit/s uplink, 9.8 ms instead of 12.
    "egw-call-1200": "max_datagram_bytes: 1200\nensemble:\n  window_law: model\n"
                     "  max_rate: {{up: {up}, down: {down}}}\n{udp}",
    # Issue 20, the asymmetric link: ACK decimation on with the defaults
    # (`auto` turns it on only with max_rate.up), and off beside max_rate
    # (an ACK per 2 packets, the default before session 35).
    "egw-dec": "ensemble:\n  ack_decimation: true\n",
    "egw-model-rate-ack2": "ensemble:\n  window_law: model\n  max_rate: {{up: {up}, down: {down}}}\n"
                           "  ack_decimation: false\n",
    "egw-call-ack2": "ensemble:\n  window_law: model\n  max_rate: {{up: {up}, down: {down}}}\n"
                     "  ack_decimation: false\n{udp}",
    # Issue 20, the asymmetric link: the model law's window over the ACK
    # path's delay (off by default).
    "egw-ackpath": "ensemble:\n  ack_path_window: true\n",
}
RATE_SHARE = 0.95  # max_rate as a share of the emulated link, as SQM users set their shaper
LABELS = {
    "cubic": "direct TCP (CUBIC)", "bbr": "direct TCP (BBR)", "wireguard": "wireguard-go + CUBIC",
    "kcptun": "kcptun", "egw": "ensemble-gw (defaults)", "egw-none": "ensemble-gw, uncoupled",
    "egw-nflows": "ensemble-gw, n_flows", "egw-cubic": "ensemble-gw, cubic law",
    "egw-newreno": "ensemble-gw, NewReno (the defaults before the model law)",
    "egw-fair": "ensemble-gw, fair", "egw-decay": "ensemble-gw, decay",
    "egw-preempt": "ensemble-gw, HTML-preempt",
    "egw-shares": "ensemble-gw, class shares only (render_blocking_cap 0)", "egw-nocache": "ensemble-gw, no temporal cache",
    "egw-hystart": "ensemble-gw, HyStart++", "egw-prr": "ensemble-gw, PRR",
    "egw-modern": "ensemble-gw, HyStart++ and PRR", "egw-joinnow": "ensemble-gw, join: immediate",
    "egw-halve": "ensemble-gw, every loss congestive",
    "egw-nflows-halve": "ensemble-gw, n_flows, every loss congestive",
    "egw-notlp": "ensemble-gw, no tail probe",
    "egw-ackpath": "ensemble-gw, window over the ACK path",
    "egw-model": "ensemble-gw, model law", "egw-model-rate": "ensemble-gw, model law + max_rate 95 %",
    "egw-nopace": "ensemble-gw, no pacing", "egw-rate": "ensemble-gw, max_rate 95 %",
    "egw-call": "ensemble-gw, model law + max_rate, probe as a realtime UDP flow",
    "egw-call-defaults": "ensemble-gw (defaults), probe as a realtime UDP flow",
    "egw-call-1200": "ensemble-gw, model law + max_rate + realtime probe, 1,200-byte datagrams",
    "egw-dec": "ensemble-gw, ACK decimation",
    "egw-model-rate-ack2": "ensemble-gw, model law + max_rate, an ACK per 2 packets",
    "egw-call-ack2": "ensemble-gw, model law + max_rate + realtime probe, an ACK per 2 packets",
}


class Refused(Exception):
    """The gateway refuses this variant's config (a key not there yet): the lab skips it."""


def rate_text(bps):
    """A bit/s figure as the config writes it: 19Mbit, 3800kbit."""
    return f"{bps / 1e6:.0f}Mbit" if bps % 1_000_000 == 0 else f"{bps / 1e3:.0f}kbit"


def wg_keypair():
    priv = sh("wg", "genkey", capture=True).strip()
    pub = subprocess.run(["wg", "pubkey"], input=priv + "\n", text=True, capture_output=True,
                         check=True).stdout.strip()
    return priv, pub


def write_secret(path, text):
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(text + "\n")


class Contender:
    def __init__(self, key, index):
        self.key = key
        self.port = 8001 + index  # the server port this contender's connections go to
        self.cc = "bbr" if key == "bbr" else "cubic"

    @property
    def label(self):
        return LABELS.get(self.key, self.key)

    def target(self, server=0):
        return [server_ip(server, via_wg=self.key == "wireguard"), self.port]

    def probe_port(self):
        """The server's UDP echo port the realtime probe uses: its own port when
        this contender carries the probe, the shared direct one otherwise."""
        return PROBE_PORT

    def setup(self, lab):
        pass

    def set_link(self, lab, up_bps, down_bps):
        pass  # only a gateway with a configured WAN rate cares

    def cold(self, lab):
        for role in ("client", "server"):
            nsh(role, "ip", "tcp_metrics", "flush", check=False, stderr=subprocess.DEVNULL)


class Direct(Contender):
    pass


class WireGuard(Contender):
    DEVS = {"branch": (f"{PREFIX}-wgb", f"10.{NET}.9.1", LAN), "hub": (f"{PREFIX}-wgh", f"10.{NET}.9.2", DC_WG)}

    def setup(self, lab):
        wg_go = os.path.join(PEERS, "wireguard-go")
        keys = {}
        for role, (dev, _, _) in self.DEVS.items():
            priv, pub = wg_keypair()
            path = os.path.join(lab.tmp, f"{dev}.key")
            write_secret(path, priv)
            keys[role] = (path, pub)
            lab.spawn(dev, role, wg_go, "-f", dev, env={"WG_PROCESS_FOREGROUND": "1", "LOG_LEVEL": "error"})
        for dev, _, _ in self.DEVS.values():
            wait_until(lambda: os.path.exists(f"/var/run/wireguard/{dev}.sock"), 5, f"wireguard-go {dev}")
        for role, (dev, ip, _) in self.DEVS.items():
            other = "hub" if role == "branch" else "branch"
            _, oip, onet = self.DEVS[other]
            cmd = ["wg", "set", dev, "private-key", keys[role][0], "listen-port", "51820",
                   "peer", keys[other][1], "allowed-ips", f"{oip}/32,{onet}"]
            if role == "branch":
                cmd += ["endpoint", f"{HUB_WAN}:51820"]
            nsh(role, *cmd)
            nsh(role, "ip", "addr", "add", f"{ip}/24", "dev", dev)
            nsh(role, "ip", "link", "set", dev, "up")
        nsh("branch", "ip", "route", "replace", DC_WG, "dev", f"{PREFIX}-wgb")
        # Replies from the server's WireGuard addresses go back through the tunnel.
        nsh("hub", "ip", "route", "add", LAN, "dev", f"{PREFIX}-wgh", "table", "200")
        nsh("hub", "ip", "rule", "add", "from", DC_WG, "lookup", "200")

    @staticmethod
    def teardown():
        for dev, _, _ in WireGuard.DEVS.values():
            try:
                os.unlink(f"/var/run/wireguard/{dev}.sock")
            except OSError:
                pass


class Kcptun(Contender):
    def setup(self, lab):
        lab.spawn("kcptun-server", "hub", os.path.join(PEERS, "kcptun-server"),
                  "-l", f"{HUB_WAN}:29900", "-t", f"{server_ip(0)}:{self.port}", *KCPTUN_OPTS)
        lab.spawn("kcptun-client", "branch", os.path.join(PEERS, "kcptun-client"),
                  "-l", ":12948", "-r", f"{HUB_WAN}:29900", *KCPTUN_OPTS)
        wait_until(lambda: port_listening("hub", 29900, udp=True), 5, "kcptun-server")
        wait_until(lambda: port_listening("branch", 12948), 5, "kcptun-client")
        nft("branch", f"""table inet egwl_kcptun {{
  chain prerouting {{
    type nat hook prerouting priority dstnat; policy accept;
    ip saddr {LAN} tcp dport {self.port} redirect to :12948
  }}
}}""")

    def cold(self, lab):
        pass  # kcptun keeps no path state: fixed windows


class Gateway(Contender):
    """An ensemble-gw pair; index i uses tunnel port 52000+i, listener 15100+i."""

    def __init__(self, key, index):
        super().__init__(key, index)
        self.i = index
        self.listener = 15100 + index
        self.udp = 52000 + index
        self.template = EGW_VARIANTS[key]
        self.rates = {"up": 20e6, "down": 20e6}  # the link max_rate is derived from (set_link)
        self.keys = None
        self.carries_udp = "{udp}" in self.template
        self.udp_listen = 15300 + index  # the branch's transparent UDP socket (TPROXY target)

    def probe_port(self):
        return 7100 + self.i if self.carries_udp else PROBE_PORT

    def extra(self, role):
        """The variant's YAML for one gateway. max_rate's `up` is what that gateway
        sends: the branch's uplink, the hub's downlink (the link's b2a)."""
        if "{up}" not in self.template and not self.carries_udp:
            return self.template
        rates = self.rates if role == "branch" else {"up": self.rates["down"], "down": self.rates["up"]}
        fields = {d: rate_text(round(RATE_SHARE * bps / 1e3) * 1000) for d, bps in rates.items()}
        fields["udp"] = (f"udp:\n  ports: [{self.probe_port()}]\n  class: realtime\n"
                         f"  listen: 0.0.0.0:{self.udp_listen}\n" if role == "branch" else
                         "udp:\n  idle_timeout_s: 60\n")
        return self.template.format(**fields)

    def _configs(self, lab, log_level="warn"):
        t = lab.tmp
        if self.keys is None:
            self.keys = {}
            for role in ("branch", "hub"):
                priv, pub = wg_keypair()
                write_secret(os.path.join(t, f"{self.key}-{role}.key"), priv)
                self.keys[role] = pub
        keys = self.keys
        common = f"metrics_listen: 127.0.0.1:{9500 + self.i}\nlog_level: {log_level}\n"
        with open(os.path.join(t, f"{self.key}-branch.yaml"), "w") as f:
            f.write(f"""role: branch
private_key_file: {t}/{self.key}-branch.key
peers:
  - name: hub
    public_key: {keys['hub']}
    endpoint: {HUB_WAN}:{self.udp}
interception:
  mode: none
  listen: "0.0.0.0:{self.listener}"
status_socket: {t}/{self.key}-branch.sock
{common}{self.extra("branch")}""")
        with open(os.path.join(t, f"{self.key}-hub.yaml"), "w") as f:
            f.write(f"""role: hub
private_key_file: {t}/{self.key}-hub.key
listen: 0.0.0.0:{self.udp}
peers:
  - name: branch
    public_key: {keys['branch']}
    allow: [{DC}]
status_socket: {t}/{self.key}-hub.sock
{common}{self.extra("hub")}""")

    def check(self, lab):
        """None, or the gateway's first complaint about this variant's configs."""
        for role in ("branch", "hub"):
            r = subprocess.run([GW, "check", "-c", os.path.join(lab.tmp, f"{self.key}-{role}.yaml")],
                               capture_output=True, text=True)
            if r.returncode != 0:
                why = (r.stderr.strip() or r.stdout.strip()).splitlines()
                why = why[-1].replace(lab.tmp + "/", "") if why else f"exit {r.returncode}"
                return f"the {role} refuses its config: {why}"
        return None

    def set_link(self, lab, up_bps, down_bps):
        """A variant with a configured WAN rate follows the scenario's link (a restart)."""
        if "{up}" not in self.template or self.rates == {"up": up_bps, "down": down_bps}:
            return
        self.rates = {"up": up_bps, "down": down_bps}
        self._configs(lab)
        self.cold(lab)

    def setup(self, lab):
        self._configs(lab)
        why = self.check(lab)
        if why:
            raise Refused(why)
        nft("branch", f"""table inet egwl_{self.key.replace('-', '_')} {{
  chain prerouting {{
    type nat hook prerouting priority dstnat; policy accept;
    ip saddr {LAN} tcp dport {self.port} redirect to :{self.listener}
  }}
}}""")
        if self.carries_udp:
            self._udp_interception()
        self.start(lab)

    def udp_datagrams_carried(self):
        """The branch's count of LAN datagrams it put into the tunnel (its
        metrics), or None: proof the probe took the gateway, not the route."""
        port = 9500 + self.i
        out = nsh("branch", "python3", "-c", "import urllib.request, sys; sys.stdout.write(urllib.request.urlopen("
                  f"'http://127.0.0.1:{port}/metrics', timeout=5).read().decode())", capture=True, check=False)
        for line in (out or "").splitlines():
            if line.startswith("egw_udp_datagrams_sent_total"):
                return int(float(line.split()[-1]))
        return None

    def loss_counters(self):
        """Per gateway, its ensembles' lost packets, tail probes and RTOs so far
        (metrics; the loaded run's, since each run starts cold)."""
        port, out = 9500 + self.i, {}
        for role in ("branch", "hub"):
            text = nsh(role, "python3", "-c", "import urllib.request, sys; sys.stdout.write(urllib.request.urlopen("
                       f"'http://127.0.0.1:{port}/metrics', timeout=5).read().decode())", capture=True, check=False)
            out[role] = {}
            for line in (text or "").splitlines():
                name = line.split("{")[0].split(" ")[0]
                if name in ("egw_ensemble_packets_lost_total", "egw_ensemble_tail_probes_total",
                            "egw_ensemble_timeouts_total", "egw_ensemble_retransmitted_bytes_total",
                            "egw_ensemble_thin_stream_copies_total"):
                    out[role][name] = out[role].get(name, 0) + int(float(line.split()[-1]))
        return out

    def _udp_interception(self):
        """What the branch installs itself with `interception.mode: nftables`
        (proxy/nft_render.cc, proxy/udp_route.cc): the probe's port TPROXYed to
        the variant's transparent socket, marked for the policy route to `local`."""
        nft("branch", f"""table inet egwl_{self.key.replace('-', '_')}_udp {{
  chain prerouting {{
    type filter hook prerouting priority mangle; policy accept;
    ip saddr {LAN} udp dport {self.probe_port()} meta mark set {UDP_FWMARK} tproxy ip to :{self.udp_listen} accept
  }}
}}""")
        if str(UDP_ROUTE_TABLE) not in nsh("branch", "ip", "rule", "show", capture=True):
            nsh("branch", "ip", "rule", "add", "fwmark", str(UDP_FWMARK), "lookup", str(UDP_ROUTE_TABLE))
            nsh("branch", "ip", "route", "add", "local", "0.0.0.0/0", "dev", "lo", "table", str(UDP_ROUTE_TABLE))

    def start(self, lab):
        t = lab.tmp
        lab.spawn(f"{self.key}-hub", "hub", GW, "run", "-c", f"{t}/{self.key}-hub.yaml")
        wait_until(lambda: port_listening("hub", self.udp, udp=True), 10, f"{self.key} hub")
        lab.spawn(f"{self.key}-branch", "branch", GW, "run", "-c", f"{t}/{self.key}-branch.yaml")
        wait_until(lambda: port_listening("branch", self.listener), 10, f"{self.key} branch")

    def cold(self, lab):
        lab.stop(f"{self.key}-branch")
        lab.stop(f"{self.key}-hub")
        self.start(lab)


def make(keys):
    out = []
    for i, key in enumerate(keys):
        if key in ("cubic", "bbr"):
            out.append(Direct(key, i))
        elif key == "wireguard":
            out.append(WireGuard(key, i))
        elif key == "kcptun":
            out.append(Kcptun(key, i))
        elif key in EGW_VARIANTS:
            out.append(Gateway(key, i))
        else:
            raise SystemExit(f"unknown contender {key!r} (known: cubic, bbr, wireguard, kcptun, "
                             f"{', '.join(EGW_VARIANTS)})")
    return out


PROBE_PORT = 7000  # webserve's UDP echo: the realtime probe, direct across the WAN
UDP_FWMARK, UDP_ROUTE_TABLE = 0x4547, 17735  # as proxy/udp_route.h's


def sink_dir(lab):
    return os.path.join(lab.tmp, "sink")


def start_server(lab, contenders):
    """The web server, one port per contender with its congestion control;
    the UDP echo; uploads counted into sink_dir(lab)."""
    os.makedirs(sink_dir(lab), exist_ok=True)
    lab.spawn("webserve", "server", "/usr/bin/python3", os.path.join(os.path.dirname(__file__), "webserve.py"),
              "--sink-dir", sink_dir(lab),
              *sorted({f"{c.probe_port()}:udpecho" for c in contenders} | {f"{PROBE_PORT}:udpecho"}),
              *(f"{c.port}:{c.cc}" for c in contenders))
    for c in contenders:
        wait_until(lambda: port_listening("server", c.port), 10, f"web server port {c.port}")


__all__ = ["make", "start_server", "Contender", "LABELS", "EGW_VARIANTS", "Refused", "in_ns"]

"""The WAN lab's network: five namespaces and the emulated link between them.

  client ──LAN── branch ──── wan ──── hub ──DC── server
  10.N.1.2..     10.N.1.1    wanem    10.N.3.2   10.N.2.2.. (direct, tunnels)
                 10.N.0.1             10.N.2.1   10.N.4.2.. (via wireguard-go)

`wan` routes between the branch side and the hub side through bench/wanem
(build/bench/wanem, two TUN devices that bench/wanem/wan-ns.sh creates with
the routing through them): every packet between branch and hub, whatever carries it (plain
IP, the ensemble tunnel, WireGuard, kcptun), crosses the same emulated link,
one Link per direction. Offloads are off on every veth, so queues count real
packets. The client and the server have several addresses each, for the
experiments with several host pairs.
"""
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("EGW_BUILD", os.path.join(ROOT, "build"))  # ctest sets it to its tree
WANEM = os.environ.get("EGW_WANEM", os.path.join(BUILD, "bench", "wanem"))
WAN_NS = os.path.join(ROOT, "bench", "wanem", "wan-ns.sh")

# Another run beside this one needs its own: EGW_LAB_PREFIX=egwk EGW_LAB_NET=97.
PREFIX = os.environ.get("EGW_LAB_PREFIX", "egwl")
NET = int(os.environ.get("EGW_LAB_NET", "96"))
HOSTS = 13  # addresses per end host: client 10.N.1.2-14, server 10.N.2.2-14 and 10.N.4.2-14
LAN = f"10.{NET}.1.0/24"
DC = f"10.{NET}.2.0/24"
DC_WG = f"10.{NET}.4.0/24"  # the server's addresses reached through wireguard-go
HUB_WAN = f"10.{NET}.3.2"
BRANCH_WAN = f"10.{NET}.0.1"


def client_ip(i=0):
    return f"10.{NET}.1.{2 + i}"


def server_ip(i=0, via_wg=False):
    return f"10.{NET}.{4 if via_wg else 2}.{2 + i}"


def log(*a):
    print(*a, flush=True, file=__import__("sys").stderr)


def sh(*cmd, check=True, capture=False, **kw):
    if capture:
        kw["stdout"] = subprocess.PIPE
    r = subprocess.run(list(cmd), check=check, text=True, **kw)
    return r.stdout if capture else r.returncode


def ns(role):
    return f"{PREFIX}-{role}"


def in_ns(role, *cmd):
    return ["ip", "netns", "exec", ns(role), *cmd]


def nsh(role, *cmd, **kw):
    return sh(*in_ns(role, *cmd), **kw)


def nft(role, text):
    subprocess.run(in_ns(role, "nft", "-f", "-"), input=text, text=True, check=True)


def wait_until(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def port_listening(role, port, udp=False):
    out = sh(*in_ns(role, "ss", "-Hln" + ("u" if udp else "t")), capture=True, check=False) or ""
    return any(l.split()[3].endswith(f":{port}") for l in out.splitlines() if len(l.split()) > 3)


class Sampler:
    """Calls sample() every period_s on a thread of its own while a `with`
    block runs (a workload); what it gathers is in self.samples."""

    period_s = 0.05

    def __init__(self):
        self.samples, self._stop = [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self):
        raise NotImplementedError

    def _run(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.period_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class Link:
    """One direction's parameters, in bench/wanem's option syntax."""

    def __init__(self, rate_bps, delay_ms, queue="0", loss=0.0):
        self.rate_bps, self.delay_ms, self.queue, self.loss = rate_bps, delay_ms, queue, loss

    def spec(self):
        return f"rate={int(self.rate_bps)},delay={self.delay_ms:g},queue={self.queue},loss={self.loss:g}"


class Lab:
    """The namespaces and every process started in them; close() removes all of it."""

    def __init__(self):
        self.daemons = {}  # name -> Popen
        self.tmp = tempfile.mkdtemp(prefix="egwl-")
        self.wanem = None
        self._wanem_buf = b""

    # -------------------------------------------------------------- namespaces
    def namespaces(self):
        return [n for n in (sh("ip", "netns", "list", capture=True) or "").split() if n.startswith(PREFIX + "-")]

    def up(self):
        self.down()
        for role in ("client", "branch", "wan", "hub", "server"):
            sh("ip", "netns", "add", ns(role))
            nsh(role, "ip", "link", "set", "lo", "up")
            nsh(role, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")
        n = NET
        self._veth("client", "lan0", [client_ip(i) + "/24" for i in range(HOSTS)], "branch", "lan0", [f"10.{n}.1.1/24"])
        self._veth("branch", "wan0", [f"{BRANCH_WAN}/24"], "wan", "wb", [f"10.{n}.0.254/24"])
        self._veth("wan", "wh", [f"10.{n}.3.254/24"], "hub", "wan0", [f"{HUB_WAN}/24"])
        self._veth("hub", "dc0", [f"10.{n}.2.1/24", f"10.{n}.4.1/24"], "server", "dc0",
                   [server_ip(i) + "/24" for i in range(HOSTS)] + [server_ip(i, True) + "/24" for i in range(HOSTS)])
        nsh("client", "ip", "route", "add", "default", "via", f"10.{n}.1.1")
        nsh("server", "ip", "route", "add", "default", "via", f"10.{n}.2.1")
        for dst in (DC, DC_WG, f"10.{n}.3.0/24"):
            nsh("branch", "ip", "route", "add", dst, "via", f"10.{n}.0.254")
        nsh("hub", "ip", "route", "add", f"10.{n}.0.0/24", "via", f"10.{n}.3.254")
        nsh("hub", "ip", "route", "add", LAN, "via", f"10.{n}.3.254")
        nsh("wan", "ip", "route", "add", LAN, "via", BRANCH_WAN)
        nsh("wan", "ip", "route", "add", DC, "via", HUB_WAN)
        for role in ("branch", "wan", "hub"):
            nsh(role, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        # wanem's TUN devices and the policy routing through them, once:
        # start_link only (re)starts wanem on them.
        sh(WAN_NS, "up", ns("wan"), "wb", "wh", "tua", "tub", "100")
        for role in ("client", "server", "branch", "hub"):
            # Today's defaults stated, not inherited: ssthresh caching on (Linux's
            # own temporal sharing), slow start after idle on (RFC 2861).
            nsh(role, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=0", "net.ipv4.tcp_slow_start_after_idle=1")

    def _veth(self, a, ia, addrs_a, b, ib, addrs_b):
        sh("ip", "link", "add", ia, "netns", ns(a), "type", "veth", "peer", "name", ib, "netns", ns(b))
        for role, dev, addrs in ((a, ia, addrs_a), (b, ib, addrs_b)):
            nsh(role, "ip", "link", "set", dev, "mtu", "1500")
            for addr in addrs:
                nsh(role, "ip", "addr", "add", addr, "dev", dev)
            # Queues must count real packets, not 64 KB super-packets.
            nsh(role, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off",
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            nsh(role, "ip", "link", "set", dev, "up")

    # -------------------------------------------------------------- the link
    def start_link(self, up, down, seed=1, trace=None):
        """(Re)starts wanem with `up` (branch -> hub) and `down` (hub -> branch)."""
        self.stop("wanem")
        cmd = [WANEM, "--dev-a", "tua", "--dev-b", "tub", "--a2b", f"{up.spec()},seed={seed}",
               "--b2a", f"{down.spec()},seed={seed + 1}"]
        if trace:
            cmd += ["--trace", trace]
        self.wanem = self.spawn("wanem", "wan", *cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._wanem_buf = b""
        self._wanem_line("ready", 5)

    def _wanem_line(self, want, timeout):
        fd = self.wanem.stdout.fileno()
        end = time.monotonic() + timeout
        while True:
            while b"\n" in self._wanem_buf:
                line, self._wanem_buf = self._wanem_buf.split(b"\n", 1)
                text = line.decode().strip()
                if (want == "ready" and text == "ready") or (want == "{" and text.startswith("{")):
                    return text
            left = end - time.monotonic()
            if left <= 0 or self.wanem.poll() is not None:
                raise RuntimeError(f"wanem: no {want!r} (exit {self.wanem.poll()}): {self.log_tail('wanem')}")
            r, _, _ = select.select([fd], [], [], min(left, 0.5))
            if r:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError("wanem closed its output")
                self._wanem_buf += chunk

    def link_command(self, cmd):
        self.wanem.stdin.write((cmd + "\n").encode())
        self.wanem.stdin.flush()

    def link_stats(self):
        """{"a2b": {...}, "b2a": {...}}: a2b is branch -> hub (requests), b2a hub -> branch (responses)."""
        self.link_command("stats")
        return json.loads(self._wanem_line("{", 5))

    # -------------------------------------------------------------- processes
    def spawn(self, name, role, *cmd, env=None, **kw):
        self.stop(name)
        logf = open(os.path.join(self.tmp, f"{name}.log"), "ab")
        p = subprocess.Popen(in_ns(role, *cmd), stdout=kw.pop("stdout", logf), stderr=logf,
                             env={**os.environ, **(env or {})}, **kw)
        self.daemons[name] = p
        return p

    def stop(self, name, sig=signal.SIGTERM):
        p = self.daemons.pop(name, None)
        if p and p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def log_tail(self, name, n=2000):
        try:
            with open(os.path.join(self.tmp, f"{name}.log"), errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def down(self):
        for name in list(self.daemons):
            self.stop(name)
        for name in self.namespaces():
            for pid in (sh("ip", "netns", "pids", name, capture=True, check=False) or "").split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
        for name in self.namespaces():
            sh("ip", "netns", "del", name, check=False)

    def close(self, keep_tmp=False):
        self.down()
        if not keep_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)

#!/usr/bin/env python3
"""Captures real clients' first bytes for the host names of hosts.tsv: TLS
ClientHellos from `openssl s_client` and curl, QUIC Initials from aioquic and
Chromium. Every client talks to a listener on 127.0.0.1 that records what it
sent and closes; nothing leaves the machine (curl and Chromium resolve every
name to 127.0.0.1, openssl and aioquic are given the address).

Run by hand, not by CI (it needs the clients); the files it writes are
committed and read by tests/proxy/quic_initial_corpus_test.cc:

    python3 -m venv /tmp/quic-venv && /tmp/quic-venv/bin/pip install aioquic
    apt-get install chromium     # optional: without it there is no quic_chrome.txt
    /tmp/quic-venv/bin/python tests/data/classify/capture.py

(run on Debian 12 with OpenSSL 3.0.19, curl 7.88.1, aioquic 1.7.2 and
Debian's chromium; see each file's header for its client's version.)

Each file has one capture a line, after '#' comments:
    HOST <TAB> ALPN the client offered (comma-separated) <TAB> HEX[,HEX...]
one HEX per TCP stream prefix (TLS) or UDP datagram (QUIC), in the order sent.
Every host gets a TLS ClientHello (openssl and curl in turn) and every
second host QUIC Initials: aioquic for half of those (half of its captures
QUIC v2, a quarter with a ClientHello over two Initials), Chromium for the
other half (its post-quantum key share makes two Initials; a capture keeps
the datagrams of the first flow until it pauses 150 ms, so some also hold
the first retransmission).
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def hosts():
    with open(os.path.join(HERE, "hosts.tsv")) as f:
        return [line.split("\t")[0] for line in f if line.strip() and not line.startswith("#")]


def version(command):
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=20).stdout.splitlines()[0].strip()
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "?"


def kill(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


# --- TLS: a TCP listener that reads one whole ClientHello -------------------

def read_client_hello(connection):
    """The TLS records up to the end of the first handshake message."""
    data = b""
    connection.settimeout(10)
    while True:
        # Records in full, then the handshake message's length (after the first record header).
        at, handshake = 0, b""
        while at + 5 <= len(data):
            length = int.from_bytes(data[at + 3:at + 5], "big")
            if at + 5 + length > len(data):
                break
            handshake += data[at + 5:at + 5 + length]
            at += 5 + length
        if len(handshake) >= 4 and len(handshake) >= 4 + int.from_bytes(handshake[1:4], "big"):
            return data[:at]
        chunk = connection.recv(65536)
        if not chunk:
            raise RuntimeError("client closed before its ClientHello was complete")
        data += chunk


def capture_tls(listener, command):
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        connection, _ = listener.accept()
        with connection:
            hello = read_client_hello(connection)
    finally:
        kill(process)
    if hello[0] != 0x16:
        raise RuntimeError("not a TLS handshake record")
    return [hello]


# --- QUIC: a UDP listener that keeps a client's first flight ----------------

def first_flight(listener, seconds=5.0, gap=0.15):
    """The datagrams of the first flow seen, until it pauses for `gap` s (its
    first flight; retransmissions come later, after a probe timeout)."""
    listener.settimeout(seconds)
    data, source = listener.recvfrom(65536)
    datagrams = [data]
    listener.settimeout(gap)
    try:
        while True:
            data, s = listener.recvfrom(65536)
            if s == source:
                datagrams.append(data)
    except socket.timeout:
        pass
    return datagrams


def drain(listener):
    listener.setblocking(False)
    try:
        while True:
            listener.recvfrom(65536)
    except BlockingIOError:
        pass
    listener.setblocking(True)


def capture_aioquic(listener, host, quic_version, large):
    from aioquic.quic.configuration import QuicConfiguration
    from aioquic.quic.connection import QuicConnection

    configuration = QuicConfiguration(is_client=True, alpn_protocols=["h3"], server_name=host,
                                      quantum_readiness_test=large)
    configuration.supported_versions = [quic_version]
    connection = QuicConnection(configuration=configuration)
    address = listener.getsockname()
    connection.connect(address, now=time.time())
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        for data, _ in connection.datagrams_to_send(now=time.time()):
            client.sendto(data, address)
        return first_flight(listener)


def capture_chrome(listener, host, chromium):
    port = listener.getsockname()[1]
    profile = tempfile.mkdtemp(prefix="egw-capture-chrome-")
    command = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--enable-quic", f"--origin-to-force-quic-on={host}:443",
               f"--host-resolver-rules=MAP * 127.0.0.1:{port}", f"https://{host}/"]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        return first_flight(listener, seconds=30)
    finally:
        kill(process)
        shutil.rmtree(profile, ignore_errors=True)


def write(name, header, rows):
    with open(os.path.join(HERE, name), "w") as f:
        for line in header:
            f.write(f"# {line}\n")
        for host, alpn, datagrams in rows:
            f.write(f"{host}\t{alpn}\t{','.join(d.hex() for d in datagrams)}\n")
    print(f"{name}: {len(rows)} captures", file=sys.stderr)


def main():
    names = hosts()
    chromium = shutil.which("chromium")
    rows = {"tls_openssl.txt": [], "tls_curl.txt": [], "quic_aioquic.txt": [], "quic_chrome.txt": []}
    tcp = socket.create_server(("127.0.0.1", 0))
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    for i, host in enumerate(names):
        if i % 2 == 0:
            command = ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-servername", host,
                       "-alpn", "h2,http/1.1"]
            rows["tls_openssl.txt"].append((host, "h2,http/1.1", capture_tls(tcp, command)))
        else:
            command = ["curl", "-s", "-o", "/dev/null", "--max-time", "10", "--resolve", f"{host}:{port}:127.0.0.1",
                       f"https://{host}:{port}/"]
            rows["tls_curl.txt"].append((host, "h2,http/1.1", capture_tls(tcp, command)))
        drain(udp)
        if i % 4 == 1:
            quic_version = 0x6B3343CF if i % 8 == 1 else 0x00000001  # QUIC v2 for half of aioquic's
            large = i % 16 in (3, 5)
            rows["quic_aioquic.txt"].append((host, "h3", capture_aioquic(udp, host, quic_version, large)))
        elif i % 4 == 3:
            if chromium:
                rows["quic_chrome.txt"].append((host, "h3", capture_chrome(udp, host, chromium)))
            else:
                rows["quic_aioquic.txt"].append((host, "h3", capture_aioquic(udp, host, 0x00000001, True)))
        print(f"{i + 1}/{len(names)} {host}", file=sys.stderr)

    when = time.strftime("%Y-%m-%d", time.gmtime())
    common = [f"Made by tests/data/classify/capture.py on {when}: the client against a local listener.",
              "HOST<TAB>ALPN offered<TAB>HEX[,HEX...] (TLS: the stream up to the end of the ClientHello;",
              "QUIC: the client's first datagrams, in order)."]
    write("tls_openssl.txt", [f"openssl s_client -servername HOST -alpn h2,http/1.1 ({version(['openssl', 'version'])})"]
          + common, rows["tls_openssl.txt"])
    write("tls_curl.txt", [f"curl --resolve HOST:PORT:127.0.0.1 https://HOST:PORT/ ({version(['curl', '--version'])})"]
          + common, rows["tls_curl.txt"])
    import aioquic
    write("quic_aioquic.txt", [f"aioquic {aioquic.__version__} QuicConnection, server_name=HOST, alpn h3, "
                               "QUIC v1 or v2 (the first byte and version say which), some with "
                               "quantum_readiness_test (a ClientHello over two Initials)"] + common,
          rows["quic_aioquic.txt"])
    if rows["quic_chrome.txt"]:
        write("quic_chrome.txt", [f"{version([chromium, '--version'])} --headless --origin-to-force-quic-on=HOST:443 "
                                  "--host-resolver-rules='MAP * 127.0.0.1:PORT'"] + common, rows["quic_chrome.txt"])


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The WAN lab's web server: a real HTTP/1.x server for the page and flow workloads.

  webserve.py [--sink-dir DIR] PORT:CC [PORT:CC ...]   (listens on 0.0.0.0; CC = cubic, bbr, reno,
                                                        or udpecho: a UDP echo for the realtime probe)

GET /obj/<bytes>/<class> answers <bytes> body bytes with the class's
Content-Type (html text/html, script application/javascript, image
image/png, bulk application/octet-stream), so the hub classifies the response
as a browser's server would make it. HTTP/1.0 closes after the response;
HTTP/1.1 keeps the connection for the next request (the burst-after-idle
workload). POST /sink/<id> (HTTP/1.0, a Content-Length as large as the
upload may ever be) takes an upload until the client closes: the receiver's
time-sequence, "wall-clock-s bytes" lines every 64 KiB, goes to
DIR/<id>.txt as it arrives (the lab's bulk uploads, counted where they arrive, not in the
sender's socket buffer). The congestion control is set on the listening socket, so every
accepted connection sends with it. Prints "ready" once every port listens.
"""
import asyncio
import os
import socket
import sys
import time

SINK_DIR = None

TYPES = {"html": "text/html", "script": "application/javascript", "image": "image/png",
         "bulk": "application/octet-stream", "json": "application/json"}
CHUNK = b"x" * 65536


async def serve_one(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
            parts = line[1].split("/") if len(line) == 3 else []
            if line and line[0] == "POST" and len(parts) == 3 and parts[1] == "sink" and SINK_DIR:
                await sink(reader, parts[2])
                break
            if len(parts) != 4 or parts[1] != "obj" or parts[3] not in TYPES:
                writer.write(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                break
            size = int(parts[2])
            keep = line[2] == "HTTP/1.1" and b"connection: close" not in head.lower()
            # The head and the first body bytes in one write: one segment, as a
            # real server's response would leave.
            first = min(size, len(CHUNK))
            writer.write(f"{line[2]} 200 OK\r\nContent-Type: {TYPES[parts[3]]}\r\n"
                         f"Content-Length: {size}\r\n\r\n".encode() + CHUNK[:first])
            left = size - first
            while left > 0:
                n = min(left, len(CHUNK))
                writer.write(CHUNK[:n])
                left -= n
                await writer.drain()
            await writer.drain()
            if not keep:
                break
    except (asyncio.IncompleteReadError, ConnectionError, ValueError, IndexError):
        pass
    finally:
        try:
            writer.close()
            await writer.wait_closed()
        except (ConnectionError, OSError):
            pass


async def sink(reader, name):
    """Counts an upload's bytes as they arrive until EOF, appending "wall-clock s
    bytes" lines to SINK_DIR/<name>.txt every 64 KiB (readable while it runs)."""
    got, nxt = 0, 65536
    with open(os.path.join(SINK_DIR, f"{name}.txt"), "a", buffering=1) as f:
        f.write(f"{time.time():.6f} 0\n")
        try:
            while True:
                chunk = await reader.read(1 << 20)
                if not chunk:
                    break
                got += len(chunk)
                if got >= nxt:
                    f.write(f"{time.time():.6f} {got}\n")
                    nxt = got + 65536
        except ConnectionError:
            pass
        f.write(f"{time.time():.6f} {got}\n")


class Echo(asyncio.DatagramProtocol):
    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        self.transport.sendto(data, addr)


async def main(specs):
    global SINK_DIR
    if specs and specs[0] == "--sink-dir":
        SINK_DIR, specs = specs[1], specs[2:]
    servers = []
    for spec in specs:
        port, cc = spec.split(":")
        if cc == "udpecho":
            await asyncio.get_running_loop().create_datagram_endpoint(Echo, local_addr=("0.0.0.0", int(port)))
            continue
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        s.bind(("0.0.0.0", int(port)))
        s.listen(4096)
        servers.append(await asyncio.start_server(serve_one, sock=s))
    print("ready", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))

#!/usr/bin/python3
"""The WAN lab's client: runs one job (JSON on argv[1]) and prints one JSON result.

Jobs (times in seconds from the job's start; every fetch is a new TCP
connection, HTTP/1.0, unless said otherwise):
  {"kind": "pages", "pages": [PAGE, ...]}
      PAGE = {"target": [ip, port], "src": ip, "start_s": 0, "concurrency": 4 (0 = unlimited),
              "root": true, "objects": [[bytes, class], ...]}
      With root, the first object is fetched alone and the rest once it has
      arrived (E-TCP section 4); without, all at once. At most `concurrency`
      fetches of a page are outstanding. Result per page: html_s (the last
      HTML object done), css_js_s (the last `script` object, CSS or JS,
      done; null without any), page_s (everything done), per object start/end.
  {"kind": "flows", "flows": [FLOW, ...], "sample_bytes": 16384}
      FLOW = {"target": [ip, port], "src": ip, "start_s": 0, "bytes": N, "class": "bulk",
              "stop_s": optional (close the flow then, e.g. bulk flows for fairness),
              "idle": true (connect, send nothing, close at stop_s: an idle member)}
      Result per flow: start, end, bytes, and a time-sequence (t, bytes) every
      sample_bytes (receiver side). With "upload": "ID" the flow sends instead
      (POST /sink/ID, until stop_s, then a reset: nothing left in the socket
      buffer goes on afterwards; "cc": its congestion control): webserve
      counts it where it arrives.
  {"kind": "bursts", "target": [ip, port], "src": ip, "bytes": N, "at_s": [0, 5]}
      One HTTP/1.1 connection, one request per entry of at_s: each burst's
      duration, from request to last byte (TCP fast start's bursty connection).
  {"kind": "keepalive", "target": [ip, port], "src": ip, "connections": 20,
   "interval_s": [0.5, 2.0], "bytes": 200, "stop_s": 60}
      Application-limited connections beside a workload: each sends a request
      now and then over one HTTP/1.1 connection. Result: requests, errors.
  {"kind": "sessions", "sessions": [SESSION, ...], "class": "html"}
      SESSION = {"target": [ip, port], "src": ip, "pages": [[at_s, bytes], ...]}
      A user browsing (wwwmodel.py): each page one fetch, at its at_s or once
      the user's previous page is done, whichever is later, so every
      contender gets the same pages in the same order. Result per session, per
      page: at, start, end, bytes (and error).
  {"kind": "probe", "target": [ip, port], "src": ip, "pps": 50, "bytes": 200, "stop_s": 60}
      A realtime probe: UDP datagrams to webserve's echo at a fixed rate until
      stop_s or SIGTERM. Result: sent, and per echo [wall-clock send s, RTT s].
  {"kind": "requests", "target": [ip, port], "src": ip, "interval_s": 0.1, "bytes": 200,
   "class": "json", "stop_s": 60}
      A small request/response flow: one HTTP/1.1 connection, a request every
      interval_s (or as soon as the previous answer is in, if later), until
      stop_s or SIGTERM. Result: per request [wall-clock start s, latency s], errors.
Every result carries t0_wall: the wall-clock time of the job's time 0.
A fetch that ends early (reset, EOF before Content-Length) is an error in the
result, never a silent short transfer. CC (client sockets): $WEBLOAD_CC, cubic.
"""
import asyncio
import json
import os
import random
import signal
import socket
import struct
import sys
import time

CC = os.environ.get("WEBLOAD_CC", "cubic").encode()
T0 = time.monotonic()
T0_WALL = time.time()


def now():
    return time.monotonic() - T0


async def connect(target, src, cc=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode() if cc else CC)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if src:
        s.bind((src, 0))
    s.setblocking(False)
    await asyncio.get_running_loop().sock_connect(s, tuple(target))
    return await asyncio.open_connection(sock=s, limit=1 << 20)


async def read_response(reader, on_bytes=None):
    """Body bytes of one response; raises on a short or malformed one."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = None
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    if length is None or not head.startswith(b"HTTP/1.") or b" 200 " not in head.split(b"\r\n")[0]:
        raise RuntimeError(f"bad response head {head[:80]!r}")
    got = 0
    while got < length:
        chunk = await reader.read(min(1 << 20, length - got))
        if not chunk:
            raise RuntimeError(f"EOF after {got} of {length} bytes")
        got += len(chunk)
        if on_bytes:
            on_bytes(got)
    return got


async def fetch(target, src, size, cls, on_bytes=None, stop_at=None):
    r = {"start": now(), "bytes": 0}
    writer = None
    try:
        reader, writer = await connect(target, src)
        r["connected"] = now()
        writer.write(f"GET /obj/{size}/{cls} HTTP/1.0\r\nHost: lab\r\n\r\n".encode())

        def seen(n):
            r["bytes"] = n
            if on_bytes:
                on_bytes(n)
        if stop_at is None:
            await read_response(reader, seen)
        else:  # a bulk flow, stopped at stop_at: its bytes so far are the result
            try:
                await asyncio.wait_for(read_response(reader, seen), max(0.0, stop_at - now()))
            except asyncio.TimeoutError:
                r["stopped"] = True
        r["end"] = now()
    except (OSError, RuntimeError, asyncio.IncompleteReadError, ValueError) as e:
        r["error"] = f"{type(e).__name__}: {e}"
        r["end"] = now()
    finally:
        if writer:
            writer.close()
    return r


async def load_page(page):
    await asyncio.sleep(max(0.0, page.get("start_s", 0) - now()))
    t0 = now()
    objs = page["objects"]
    limit = page.get("concurrency", 4) or len(objs)
    sem = asyncio.Semaphore(limit)

    async def one(size, cls):
        async with sem:
            return await fetch(page["target"], page.get("src"), size, cls)

    results = []
    rest = objs
    if page.get("root", True):
        results.append(await one(*objs[0]))
        rest = objs[1:]
    results += await asyncio.gather(*(one(size, cls) for size, cls in rest))
    html_ends = [r["end"] for r, (_, cls) in zip(results, objs) if cls == "html"]
    script_ends = [r["end"] for r, (_, cls) in zip(results, objs) if cls == "script"]
    return {"start": t0, "html_s": (max(html_ends) - t0) if html_ends else None,
            "css_js_s": (max(script_ends) - t0) if script_ends else None,
            "page_s": max(r["end"] for r in results) - t0,
            "errors": [r["error"] for r in results if "error" in r],
            "objects": [{"start": round(r["start"] - t0, 6), "end": round(r["end"] - t0, 6), "bytes": r["bytes"]}
                        for r in results]}


async def hold_idle(flow):
    """A connection that sends nothing until stop_s (an idle member)."""
    r = {"start": now(), "bytes": 0, "samples": []}
    try:
        _, writer = await connect(flow["target"], flow.get("src"))
        await asyncio.sleep(max(0.0, flow["stop_s"] - now()))
        writer.close()
    except OSError as e:
        r["error"] = f"{type(e).__name__}: {e}"
    r["end"] = now()
    return r


async def upload(flow):
    """Sends until stop_s; the bytes are counted by the receiver (webserve's sink)."""
    r = {"start": now(), "bytes": 0, "samples": []}
    writer = None
    try:
        _, writer = await connect(flow["target"], flow.get("src"), flow.get("cc"))
        writer.write(f"POST /sink/{flow['upload']} HTTP/1.0\r\nHost: lab\r\n"
                     f"Content-Length: {10 ** 12}\r\n\r\n".encode())
        chunk = b"u" * 65536
        while now() < flow["stop_s"]:
            writer.write(chunk)
            r["bytes"] += len(chunk)
            try:
                await asyncio.wait_for(writer.drain(), max(0.01, flow["stop_s"] - now()))
            except asyncio.TimeoutError:
                break
    except OSError as e:
        r["error"] = f"{type(e).__name__}: {e}"
    finally:
        if writer:
            # A reset: what still waits in the socket's buffer must not go on
            # loading the link after the flow's end (the next run's idle phase).
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
    r["end"] = now()
    return r


def stopper():
    """An event set at SIGTERM: the open-ended jobs then report what they have."""
    ev = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, ev.set)
    return ev


async def probe(job):
    """UDP datagrams at job['pps'] to the echo; RTT per echo (wall-clock send time)."""
    stop = stopper()
    loop = asyncio.get_running_loop()
    sent, rtts = {}, []

    class Proto(asyncio.DatagramProtocol):
        def datagram_received(self, data, addr):
            seq = struct.unpack_from("!I", data)[0]
            if seq in sent:
                t_send = sent.pop(seq)
                rtts.append([round(T0_WALL + t_send, 6), round(now() - t_send, 6)])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((job.get("src") or "0.0.0.0", 0))
    transport, _ = await loop.create_datagram_endpoint(Proto, sock=s)
    interval, pad, n = 1.0 / job.get("pps", 50), b"p" * max(0, job.get("bytes", 200) - 28 - 4), 0
    while now() < job["stop_s"] and not stop.is_set():
        sent[n] = now()
        transport.sendto(struct.pack("!I", n) + pad, tuple(job["target"]))
        n += 1
        try:
            await asyncio.wait_for(stop.wait(), max(0.0, n * interval - now()))
        except asyncio.TimeoutError:
            pass
    await asyncio.sleep(1.0)  # the last echoes
    transport.close()
    return {"sent": n, "rtts": sorted(rtts)}


async def requests(job):
    """One HTTP/1.1 connection, a small request every interval_s; latency per request."""
    stop = stopper()
    out, errors = [], []
    interval = job.get("interval_s", 0.1)
    try:
        reader, writer = await connect(job["target"], job.get("src"))
        k = 0
        while now() < job["stop_s"] and not stop.is_set():
            t = now()
            writer.write(f"GET /obj/{job.get('bytes', 200)}/{job.get('class', 'json')} HTTP/1.1\r\n"
                         f"Host: lab\r\n\r\n".encode())
            await read_response(reader)
            out.append([round(T0_WALL + t, 6), round(now() - t, 6)])
            k += 1
            try:
                await asyncio.wait_for(stop.wait(), max(0.0, k * interval - now()))
            except asyncio.TimeoutError:
                pass
        writer.close()
    except (OSError, RuntimeError, asyncio.IncompleteReadError, ValueError) as e:
        errors.append(f"{type(e).__name__}: {e}")
    return {"requests": out, "errors": errors}


async def run_flow(flow, sample_bytes):
    await asyncio.sleep(max(0.0, flow.get("start_s", 0) - now()))
    if flow.get("idle"):
        return await hold_idle(flow)
    if flow.get("upload"):
        return await upload(flow)
    samples = [(now(), 0)]
    nxt = [sample_bytes]

    def on_bytes(n):
        if n >= nxt[0]:
            samples.append((now(), n))
            nxt[0] = n + sample_bytes
    r = await fetch(flow["target"], flow.get("src"), flow["bytes"], flow.get("class", "bulk"),
                    on_bytes, flow.get("stop_s"))
    samples.append((r["end"], r["bytes"]))
    r["samples"] = [(round(t, 6), b) for t, b in samples]
    return r


async def run_bursts(job):
    reader, writer = await connect(job["target"], job.get("src"))
    out = []
    try:
        for at in job["at_s"]:
            await asyncio.sleep(max(0.0, at - now()))
            t = now()
            writer.write(f"GET /obj/{job['bytes']}/{job.get('class', 'image')} HTTP/1.1\r\nHost: lab\r\n\r\n".encode())
            n = await read_response(reader)
            out.append({"start": t, "seconds": now() - t, "bytes": n})
    except (OSError, RuntimeError, asyncio.IncompleteReadError, ValueError) as e:
        out.append({"error": f"{type(e).__name__}: {e}"})
    finally:
        writer.close()
    return {"bursts": out}


async def keepalive(job):
    """Long-lived application-limited connections: each sends a small request
    at random intervals and reads the answer, until stop_s (background load)."""
    rnd = random.Random(job.get("seed", 1))
    lo, hi = job.get("interval_s", [0.5, 2.0])
    counts = {"requests": 0, "errors": 0}

    async def one(i):
        await asyncio.sleep(rnd.uniform(0, lo))
        try:
            reader, writer = await connect(job["target"], job.get("src"))
            while now() < job["stop_s"]:
                writer.write(f"GET /obj/{job.get('bytes', 200)}/bulk HTTP/1.1\r\nHost: lab\r\n\r\n".encode())
                await read_response(reader)
                counts["requests"] += 1
                await asyncio.sleep(rnd.uniform(lo, hi))
            writer.close()
        except (OSError, RuntimeError, asyncio.IncompleteReadError, ValueError):
            counts["errors"] += 1
    await asyncio.gather(*(one(i) for i in range(job["connections"])))
    return counts


async def browse(session, cls):
    out = []
    for at, size in session["pages"]:
        await asyncio.sleep(max(0.0, at - now()))
        r = await fetch(session["target"], session.get("src"), size, cls)
        out.append({"at": at, **{k: r[k] for k in ("start", "end", "bytes", "error") if k in r}})
    return out


async def main(job):
    kind = job["kind"]
    if kind == "pages":
        return {"pages": await asyncio.gather(*(load_page(p) for p in job["pages"]))}
    if kind == "flows":
        return {"flows": await asyncio.gather(*(run_flow(f, job.get("sample_bytes", 16384)) for f in job["flows"]))}
    if kind == "bursts":
        return await run_bursts(job)
    if kind == "keepalive":
        return await keepalive(job)
    if kind == "sessions":
        return {"sessions": await asyncio.gather(*(browse(s, job.get("class", "html")) for s in job["sessions"]))}
    if kind == "probe":
        return await probe(job)
    if kind == "requests":
        return await requests(job)
    raise SystemExit(f"webload: unknown job kind {kind!r}")


if __name__ == "__main__":
    job = json.loads(sys.argv[1])
    result = asyncio.run(asyncio.wait_for(main(job), job.get("timeout_s", 300)))
    print(json.dumps({**result, "t0_wall": T0_WALL}))

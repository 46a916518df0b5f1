"""Physical lower bounds of the workloads: what no transport can beat on the link.

Bytes on the link are IP bytes (bench/wanem's rate counts them): a response
of n bytes (HTTP head + body) is at least n plus 52 bytes of IPv4+TCP
(timestamps) header per 1448-byte segment; a request is one packet. A fetch
costs one round trip for the request plus its bytes over the bottleneck: a
transport with no handshake on the WAN and a perfect scheduler would reach it.
"""
import math

SEGMENT = 1448
HEADER = 52
REQUEST_BYTES = 60 + HEADER  # "GET /obj/N/class HTTP/1.0\r\nHost: lab\r\n\r\n" in one packet
RESPONSE_HEAD = 75  # "HTTP/1.0 200 OK\r\nContent-Type: ...\r\nContent-Length: N\r\n\r\n"


def wire_bytes(body):
    n = body + RESPONSE_HEAD
    return n + math.ceil(n / SEGMENT) * HEADER


def seconds(nbytes, rate_bps):
    return nbytes * 8 / rate_bps


def page(objects, rtt_s, rate_bps, root=True):
    """(html_s, page_s) for a page: the root alone, then the rest (E-TCP's client)."""
    req = seconds(REQUEST_BYTES, rate_bps)
    if not root:
        return None, rtt_s + req + seconds(sum(wire_bytes(b) for b, _ in objects), rate_bps)
    first = rtt_s + req + seconds(wire_bytes(objects[0][0]), rate_bps)
    rest = objects[1:]
    if not rest:
        return first, first
    html_rest = [b for b, cls in rest if cls == "html"]
    # A perfect scheduler sends the other HTML parts first.
    html = first + (rtt_s + req + seconds(sum(map(wire_bytes, html_rest)), rate_bps) if html_rest else 0)
    whole = first + rtt_s + req + seconds(sum(wire_bytes(b) for b, _ in rest), rate_bps)
    return html, whole


def css_js(objects, rtt_s, rate_bps):
    """The render-blocking part of a page (its `script` objects: CSS and JS)
    after the root: what a scheduler that sends them first reaches; None
    without any."""
    scripts = [b for b, cls in objects[1:] if cls == "script"]
    if not scripts:
        return None
    req = seconds(REQUEST_BYTES, rate_bps)
    first = rtt_s + req + seconds(wire_bytes(objects[0][0]), rate_bps)
    return first + rtt_s + req + seconds(sum(map(wire_bytes, scripts)), rate_bps)


def fluid_finish(arrivals, rtt_s, rate_bps):
    """Earliest finish of transfers (start_s, bytes) sharing the link: for the
    latest group of starts, their bytes cannot leave before the first of them."""
    best = 0.0
    for s, _ in arrivals:
        later = sum(wire_bytes(b) for t, b in arrivals if t >= s)
        best = max(best, s + rtt_s + seconds(REQUEST_BYTES, rate_bps) + seconds(later, rate_bps))
    return best


def share(body, rtt_s, rate_bps, flows):
    """A transfer that gets 1/flows of the link from its first packet."""
    return rtt_s + seconds(REQUEST_BYTES, rate_bps) + seconds(wire_bytes(body), rate_bps / flows)


def jain(xs):
    xs = [x for x in xs]
    if not xs or sum(xs) == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))

"""EFCM's simplified WWW traffic model (TKN-04-007 Table 3.1, after
Reyes-Lecuona et al., ITC 16): a seeded schedule of browsing sessions.

Sessions arrive at exponential intervals; each has a lognormal number of
pages; a page is one transfer of a Pareto size (the model has a session and a
page level only: no objects inside a page); between two pages the user reads
for a gamma time. The paper's parameters, as means and standard deviations:

  inter-session time  exponential  mean 5.0 s (the load knob: ours is INTER_SESSION_S)
  pages per session   lognormal    mean 25.807, sd 78.752
  reading time        gamma        mean 35.286 s, sd 147.390 s
  page size           Pareto       alpha 1.7584, beta 30458 bytes

Caps (the paper gives none): a page at most PAGE_CAP_BYTES (the Pareto's
variance is infinite; 0.7 % of pages are capped, the mean drops from 70.6 to
65.8 KB), a session at most SESSION_CAP_PAGES pages (1.8 % capped, mean 22.1
instead of 25.8). Reading times are not capped: the gamma's tail is exponential.

A short run must see the model's steady state, not its start: sessions begin
HISTORY_S before the window, each page at its previous page's nominal end
(its lower bound, bounds.py) plus the reading time, and the window keeps the
pages that start inside it, with their sessions (users) already under way.
"""
import math
import random

import bounds

INTER_SESSION_S = 25.0  # 800 kbit/s: 22.1 pages x 68 KB on the wire every 25 s = 60 % of the link
PAGES_MEAN, PAGES_SD = 25.807, 78.752
READ_MEAN_S, READ_SD_S = 35.286, 147.390
PAGE_ALPHA, PAGE_BETA_BYTES = 1.7584, 30458
PAGE_CAP_BYTES = 500_000  # 5 s of an 800 kbit/s link
SESSION_CAP_PAGES = 200
HISTORY_S = 6 * 3600  # longer than nearly every session (200 pages x 36 s = 2 h)
PAGE_CLASS = "html"  # one response per page: the server labels it as a page

_LN_SIGMA2 = math.log(1 + (PAGES_SD / PAGES_MEAN) ** 2)
_LN_MU, _LN_SIGMA = math.log(PAGES_MEAN) - _LN_SIGMA2 / 2, math.sqrt(_LN_SIGMA2)
_GAMMA_SHAPE, _GAMMA_SCALE_S = (READ_MEAN_S / READ_SD_S) ** 2, READ_SD_S ** 2 / READ_MEAN_S


def session_pages(rnd):
    return min(SESSION_CAP_PAGES, max(1, round(rnd.lognormvariate(_LN_MU, _LN_SIGMA))))


def page_bytes(rnd):
    return min(PAGE_CAP_BYTES, round(PAGE_BETA_BYTES * rnd.paretovariate(PAGE_ALPHA)))


def reading_s(rnd):
    return rnd.gammavariate(_GAMMA_SHAPE, _GAMMA_SCALE_S)


def window(seed, seconds, rtt_s, rate_bps, inter_session_s=INTER_SESSION_S):
    """The sessions with a page starting in [0, seconds): [[(at_s, bytes), ...], ...]."""
    rnd = random.Random(seed)
    sessions = []
    t = -HISTORY_S
    while True:
        t += rnd.expovariate(1 / inter_session_s)
        if t >= seconds:
            return sessions
        at, inside = t, []
        for _ in range(session_pages(rnd)):
            if at >= seconds:
                break
            size = page_bytes(rnd)
            if at >= 0:
                inside.append((round(at, 3), size))
            at += page_bound(size, rtt_s, rate_bps) + reading_s(rnd)
        if inside:
            sessions.append(inside)


def page_bound(size, rtt_s, rate_bps):
    """The page's lower bound: one dependency level (bounds.py)."""
    return bounds.page([[size, PAGE_CLASS]], rtt_s, rate_bps)[1]


def offered(sessions, t0, t1, rate_bps):
    """The link's share the pages starting in [t0, t1) ask for (IP bytes)."""
    wire = sum(bounds.wire_bytes(b) for s in sessions for at, b in s if t0 <= at < t1)
    return bounds.seconds(wire, rate_bps) / (t1 - t0)


def steady_window(seed, seconds, rtt_s, rate_bps, users=5, load=(0.5, 0.7), slices=5,
                  inter_session_s=INTER_SESSION_S):
    """(seed, sessions) of the first window from `seed` on with at least
    `users` sessions that offers `load` of the link and never more than all
    of it in any 1/slices of the window. A few tens of seconds of this
    heavy-tailed model offer anything from 0 to 190 % of the link, and the
    windows that offer 50-70 % hold 3 to 9 users (median 5 in 25 s): the
    choice looks at the demand only, never at a contender's results."""
    step = seconds / slices
    for s in range(seed, seed + 10_000):
        sessions = window(s, seconds, rtt_s, rate_bps, inter_session_s)
        if (len(sessions) >= users and load[0] <= offered(sessions, 0, seconds, rate_bps) <= load[1]
                and all(offered(sessions, i * step, (i + 1) * step, rate_bps) <= 1.0 for i in range(slices))):
            return s, sessions
    raise RuntimeError(f"no window of {users} users offering {load} of the link from seed {seed}")

#!/usr/bin/python3
"""bench/lab/wwwmodel.py: the samplers have EFCM Table 3.1's moments, the caps
hold, a seed gives one schedule, and a steady window keeps its promises."""
import math
import os
import random
import statistics
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "lab"))

import bounds  # noqa: E402
import wwwmodel as w  # noqa: E402

RTT_S, RATE_BPS = 0.1, 800e3
N = 200_000


class Distributions(unittest.TestCase):
    def test_lognormal_and_gamma_parameters_give_the_papers_moments(self):
        s2 = w._LN_SIGMA ** 2
        self.assertAlmostEqual(math.exp(w._LN_MU + s2 / 2), 25.807, places=3)
        self.assertAlmostEqual(math.sqrt(math.exp(s2) - 1) * 25.807, 78.752, places=3)
        self.assertAlmostEqual(w._GAMMA_SHAPE * w._GAMMA_SCALE_S, 35.286, places=3)
        self.assertAlmostEqual(math.sqrt(w._GAMMA_SHAPE) * w._GAMMA_SCALE_S, 147.390, places=3)

    def test_reading_time_mean(self):
        rnd = random.Random(1)
        self.assertAlmostEqual(statistics.fmean(w.reading_s(rnd) for _ in range(N)), 35.286, delta=0.05 * 35.286)

    def test_page_size_pareto_median_and_cap(self):
        rnd = random.Random(2)
        xs = [w.page_bytes(rnd) for _ in range(N)]
        self.assertAlmostEqual(statistics.median(xs), 30458 * 2 ** (1 / 1.7584), delta=0.02 * 45140)
        self.assertGreaterEqual(min(xs), 30458)
        self.assertEqual(max(xs), w.PAGE_CAP_BYTES)
        # Pareto tail beyond the cap: (beta / cap) ^ alpha = 0.72 %.
        self.assertAlmostEqual(sum(x == w.PAGE_CAP_BYTES for x in xs) / N, 0.0072, delta=0.001)

    def test_pages_per_session_median_and_cap(self):
        rnd = random.Random(3)
        xs = [w.session_pages(rnd) for _ in range(N)]
        self.assertAlmostEqual(statistics.median(xs), 8, delta=1)
        self.assertEqual((min(xs), max(xs)), (1, w.SESSION_CAP_PAGES))


class Windows(unittest.TestCase):
    def test_a_seed_is_one_schedule(self):
        self.assertEqual(w.window(7, 25, RTT_S, RATE_BPS), w.window(7, 25, RTT_S, RATE_BPS))
        self.assertNotEqual(w.window(7, 25, RTT_S, RATE_BPS), w.window(8, 25, RTT_S, RATE_BPS))

    def test_long_run_load_is_the_documented_60_percent(self):
        loads = [w.offered(w.window(seed, 20_000, RTT_S, RATE_BPS), 0, 20_000, RATE_BPS) for seed in range(5)]
        self.assertAlmostEqual(statistics.fmean(loads), 0.60, delta=0.05)

    def test_steady_window_keeps_its_promises(self):
        seed, sessions = w.steady_window(1, 25, RTT_S, RATE_BPS, users=5)
        self.assertEqual(sessions, w.window(seed, 25, RTT_S, RATE_BPS))
        self.assertGreaterEqual(len(sessions), 5)
        self.assertTrue(0.5 <= w.offered(sessions, 0, 25, RATE_BPS) <= 0.7)
        for i in range(5):
            self.assertLessEqual(w.offered(sessions, 5 * i, 5 * i + 5, RATE_BPS), 1.0)
        for s in sessions:
            for (at, size), (nxt, _) in zip(s, s[1:]):
                # The next page never before this one's bound (rounding: 1 ms).
                self.assertGreaterEqual(nxt - at, w.page_bound(size, RTT_S, RATE_BPS) - 0.001)
            self.assertTrue(all(0 <= at < 25 for at, _ in s))

    def test_page_bound_is_one_dependency_level(self):
        self.assertAlmostEqual(w.page_bound(50_000, RTT_S, RATE_BPS),
                               RTT_S + bounds.seconds(bounds.REQUEST_BYTES + bounds.wire_bytes(50_000), RATE_BPS))


if __name__ == "__main__":
    unittest.main()

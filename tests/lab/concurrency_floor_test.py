#!/usr/bin/python3
"""bench/lab/concurrency_floor.py: without a connection limit the floor is the
lower bound (bounds.page), a limit never makes it lower, and a page of many
small objects behind 4 connections pays request round trips no transport can
save."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "lab"))

import bounds  # noqa: E402
from concurrency_floor import floor_s  # noqa: E402
from pages import PAGES  # noqa: E402

RTT_S, RATE_BPS = 0.1, 800e3


class ConcurrencyFloor(unittest.TestCase):
    def test_unlimited_connections_give_the_lower_bound(self):
        for name, objects in PAGES.items():
            _, bound = bounds.page(objects, RTT_S, RATE_BPS)
            self.assertAlmostEqual(floor_s(objects, RTT_S, RATE_BPS, 0), bound, delta=1e-6, msg=name)

    def test_a_limit_never_lowers_the_floor(self):
        for name, objects in PAGES.items():
            _, bound = bounds.page(objects, RTT_S, RATE_BPS)
            for n in (1, 2, 4, 8):
                self.assertGreaterEqual(floor_s(objects, RTT_S, RATE_BPS, n), bound - 1e-6, msg=f"{name} {n}")

    def test_small_objects_behind_few_connections_cost_round_trips(self):
        # Ten 1 KB objects, one connection: ten request round trips after the root.
        objects = [[1024, "html"]] + [[1024, "image"]] * 10
        _, bound = bounds.page(objects, RTT_S, RATE_BPS)
        one = floor_s(objects, RTT_S, RATE_BPS, 1)
        self.assertGreater(one, bound + 9 * RTT_S)
        self.assertLess(floor_s(objects, RTT_S, RATE_BPS, 4), one)


if __name__ == "__main__":
    unittest.main()

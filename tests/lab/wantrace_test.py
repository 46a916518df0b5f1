#!/usr/bin/python3
"""bench/lab/wantrace.py: wanem's trace read back as rate and queue delay. A
synthetic trace on a 12 Mbit/s link with 10 ms delay: packets that found the
wire idle wait nothing, a back-to-back burst waits one serialisation more per
packet, a queue drop and an LE eviction do not shift the FIFO matching."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "lab"))

from netlab import Link  # noqa: E402
from wantrace import analyse  # noqa: E402

LINK = Link(rate_bps=12e6, delay_ms=10)  # 1500 bytes = 1 ms on the wire
SER_US, DELAY_US = 1000, 10_000


def trace(lines):
    f = tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False)
    f.write("# time_us dir event ip_len proto src_port dst_port\n" + "\n".join(lines) + "\n")
    f.close()
    return f.name


class WanTrace(unittest.TestCase):
    def setUp(self):
        lines = []
        # Five packets at once (a burst): the k-th leaves the wire after (k+1) ms.
        for k in range(5):
            lines.append(f"0 b2a enq 1500 6 80 {1000 + k}")
        lines.append("0 b2a drop_queue 1500 6 80 2000")  # not queued: no deq will match it
        lines.append("1 b2a enq 1500 6 80 3000")  # an LE packet, evicted before it left
        lines.append("2 b2a drop_le 1500 6 80 3000")
        for k in range(5):
            lines.append(f"{(k + 1) * SER_US + DELAY_US} b2a deq 1500 6 80 {1000 + k}")
        # One packet up, alone: no queue.
        lines.append("200000 a2b enq 1500 17 5 6")
        lines.append(f"{200000 + SER_US + DELAY_US} a2b deq 1500 17 5 6")
        self.path = trace(lines)

    def tearDown(self):
        os.unlink(self.path)

    def test_queue_delay_is_the_wait_before_the_wire(self):
        s = analyse(self.path, {"a2b": LINK, "b2a": LINK}, 0.0, (0.0, 1.0))
        q = s["qdelay_ms"]["b2a"]
        self.assertAlmostEqual(q["p50_ms"], 2.0, places=3)  # waits 0, 1, 2, 3, 4 ms
        self.assertAlmostEqual(q["max_ms"], 4.0, places=3)
        self.assertAlmostEqual(s["qdelay_ms"]["a2b"]["max_ms"], 0.0, places=3)

    def test_wanem_waking_late_is_not_queue_delay(self):
        lines = ["0 b2a enq 1500 6 80 1", f"{SER_US + DELAY_US + 3000} b2a deq 1500 6 80 1"]
        path = trace(lines)
        try:
            s = analyse(path, {"a2b": LINK, "b2a": LINK}, 0.0, (0.0, 1.0))
        finally:
            os.unlink(path)
        self.assertAlmostEqual(s["qdelay_ms"]["b2a"]["max_ms"], 0.0, places=3)
        self.assertAlmostEqual(s["wanem_late_ms"]["b2a"]["p99_ms"], 3.0, places=3)

    def test_rate_per_bin_counts_the_bytes_on_the_wire(self):
        s = analyse(self.path, {"a2b": LINK, "b2a": LINK}, 0.0)
        self.assertEqual(s["b2a"]["t0_s"], 0.0)
        self.assertAlmostEqual(s["b2a"]["mbps"][0], 5 * 1500 * 8 / 0.1 / 1e6, places=3)
        self.assertEqual(s["a2b"]["t0_s"], 0.2)
        self.assertIsNone(s["qdelay_ms"]["b2a"]["p50_ms"])  # no window given

    def test_a_rate_change_applies_to_packets_that_start_after_it(self):
        # Three back to back at 12 Mbit/s (1 ms each); at 0.5 ms the rate
        # drops to 3 Mbit/s (4 ms each): the first keeps its 1 ms, the
        # second waits 1 ms, the third 1 + 4 = 5 ms.
        lines = [f"0 b2a enq 1500 6 80 {k}" for k in range(3)]
        lines.append("500 b2a rate 3000000 - - -")
        lines += [f"{f + DELAY_US} b2a deq 1500 6 80 {k}" for k, f in enumerate((1000, 5000, 9000))]
        path = trace(lines)
        try:
            s = analyse(path, {"a2b": LINK, "b2a": LINK}, 0.0, (0.0, 1.0))
        finally:
            os.unlink(path)
        self.assertAlmostEqual(s["qdelay_ms"]["b2a"]["max_ms"], 5.0, places=3)
        self.assertAlmostEqual(s["wanem_late_ms"]["b2a"]["p99_ms"], 0.0, places=3)

    def test_offset_moves_the_origin(self):
        s = analyse(self.path, {"a2b": LINK, "b2a": LINK}, -0.15)
        self.assertAlmostEqual(s["a2b"]["t0_s"], 0.0, places=6)


if __name__ == "__main__":
    unittest.main()

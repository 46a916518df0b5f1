#!/usr/bin/python3
"""bench/lab/h2page.py and report_h2.py: the modern page's HTML links every
asset at its size, nghttp's request table is read back (a missing or failed
object is an error, never a fast load), and the report's table and goal say
what the branch classified. No network: the lab runs under bench/run."""
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "lab"))

import h2page  # noqa: E402
import report_h2  # noqa: E402

STATS = """***** Statistics *****

id  responseEnd requestStart  process code size request path
 13    +62.34ms       +523us  61.81ms  200  32K /index.html
 15   +130.68ms     +63.40ms  67.27ms  200  19K /css/s0.css
 17      +1.02s     +63.40ms    958ms  404  29K /js/app0.js
 19     +950us      +63.40ms    842us  200   4K /img/p0.png
"""


class ModernPage(unittest.TestCase):
    def test_html_links_every_asset_at_its_size(self):
        doc = h2page.html()
        self.assertEqual(len(doc.encode()), h2page.MODERN[0][1])
        linked = re.findall(r'(?:href|src)="([^"]+)"', doc)
        self.assertEqual(linked, [p for p, _ in h2page.MODERN[1:]])

    def test_weight_is_todays_median_page(self):
        kinds = {}
        for path, size in h2page.MODERN:
            kinds[path.rsplit(".", 1)[1]] = kinds.get(path.rsplit(".", 1)[1], 0) + size
        self.assertTrue(1.4e6 < h2page.page_bytes() < 2.5e6)
        self.assertGreater(kinds["png"], kinds["js"])
        self.assertGreater(kinds["js"], kinds["css"])
        self.assertGreaterEqual(len(h2page.MODERN), 40)

    def test_site_written_as_served(self):
        with tempfile.TemporaryDirectory() as d:
            h2page.write_site(d)
            for path, size in h2page.MODERN:
                self.assertEqual(os.path.getsize(os.path.join(d, path.lstrip("/"))), size)
            conf = h2page.nginx_conf(d, [9001, 9002])
        self.assertIn("listen 9001 ssl http2;", conf)
        self.assertIn("ssl_protocols TLSv1.3;", conf)


class NghttpStats(unittest.TestCase):
    def test_request_table_parsed_with_units(self):
        got = h2page.parse_stats(STATS)
        self.assertEqual([p for p, _, _ in got], ["/index.html", "/css/s0.css", "/js/app0.js", "/img/p0.png"])
        self.assertEqual([s for _, s, _ in got], [200, 200, 404, 200])
        self.assertAlmostEqual(got[0][2], 0.06234)
        self.assertAlmostEqual(got[2][2], 1.02)
        self.assertAlmostEqual(got[3][2], 0.00095)


def experiment(egw_loaded_s):
    classes = {"bytes": {"web": 8_000_000, "bulk": 17_000_000}, "stages": {"unknown_host": 5, "default": 2},
               "decayed": 0}
    run = {"idle_s": 1.0, "loaded_s": 1.2, "down_bps": 18e6, "up_bps": 9e6, "errors": [], "classes": None,
           "qdelay_p99_ms": {"a2b": 1180.0, "b2a": 4.2}}
    return {"kind": "h2_page", "reps": 1, "objects": 42, "page_bytes": 1_660_000, "server_name": "www.h2lab.test",
            "params": {"loads": 2, "seconds": 20.0, "warm_s": 3.0},
            "link": {"rate_bps": 20e6, "delay_ms": 30, "queue": "600p", "loss": 0.002},
            "results": {"cubic": [run], "egw": [{**run, "loaded_s": egw_loaded_s, "classes": classes}]}}


class Report(unittest.TestCase):
    def goals(self, e):
        rows = []
        report_h2.goals({"experiments": {"h2-page-lossy": e}}, lambda *r: rows.append(r))
        return rows

    def test_goal_is_the_defaults_loaded_over_idle(self):
        self.assertEqual(self.goals(experiment(1.29)), [("h2-page-lossy: HTTP/2 page loaded within 1.3x of idle",
                                                         "1.29x", True)])
        self.assertFalse(self.goals(experiment(1.31))[0][2])

    def test_table_prints_the_branch_classes(self):
        t = report_h2.h2_page_table("h2-page-lossy", experiment(1.2))
        self.assertIn("| direct TCP (CUBIC) | 1.00 | 1.20 | 1.20x | 90% | 45% | 4 / 1180 | – |", t)
        self.assertIn("bulk 17.0 MB, web 8.0 MB; stages: default 2, unknown_host 5", t)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/python3
"""bench/gateway/run's arithmetic, without a lab: issue 22's goal ratios
against the best encrypted peer of the run, Mbit/s per tunnel core, and the
perf reports read back (the crypto libraries' stripped symbols count as AEAD,
kernel and user copies apart, outer frames left out). No network, < 1 s."""
import importlib.machinery
import importlib.util
import os
import unittest

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gateway", "run")
_loader = importlib.machinery.SourceFileLoader("gateway_run", RUN)
_spec = importlib.util.spec_from_loader("gateway_run", _loader)
run = importlib.util.module_from_spec(_spec)
_loader.exec_module(run)


def bulk(mbit, tunnel_cpu_s=None, seconds=8.0):
    r = {"mbit_per_s": mbit, "bytes": int(mbit * 1e6 / 8 * seconds), "seconds": seconds, "machine_busy_s": 1.0,
         "daemon_cpu_s": {}, "client_cpu_s": 0.5, "others_busy_frac": 0.0}
    if tunnel_cpu_s:
        r["mbit_per_tunnel_core"] = round(mbit / (tunnel_cpu_s / seconds), 1)
    return r


def contender(mbit, mbit8, cpu_s, p50_us):
    res = {"bulk": [bulk(m, cpu_s) for m in mbit], "bulk8": [bulk(mbit8, cpu_s)],
           "loaded": [{"p50_us": p50_us, "p99_us": p50_us * 3, "bulk_mbit_per_s": mbit[0]}],
           "rr_idle": [{"p50_us": 50.0, "p99_us": 90.0}], "ttfb_veth": [], "ttfb_wan": [],
           "tunnel_processes": ["x-branch", "x-hub"] if cpu_s else []}
    run.summarize(res)
    return res


FLAT = """\
# Samples: 1000  of event 'cpu-clock:ppp'
#
    20.00%  libcrypto.so.3     [.] 0x0000000000138da5
    10.00%  libcrypto.so.3     [.] EVP_CIPHER_CTX_ctrl
    10.00%  libc.so.6          [.] __memmove_avx512_unaligned_erms
     5.00%  [kernel.kallsyms]  [k] _copy_to_iter
     4.00%  [kernel.kallsyms]  [k] kmem_cache_alloc_node_noprof
     3.00%  libc.so.6          [.] _int_malloc
     2.00%  ensemble-gw        [.] egw::tunnel::crypto::ChaChaPolyKey::seal_with_nonce
     1.00%  [kernel.kallsyms]  [k] entry_SYSCALL_64
     1.00%  ensemble-gw        [.] egw::tunnel::Connection::Impl::poll_transmit
"""

CHILDREN = """\
   100.00%     0.00%  [.] main
    98.00%     0.00%  [.] egw::proxy::run_gateway
    44.00%     0.20%  [.] egw::tunnel::crypto::ChaChaPolyKey::seal
    27.00%     0.00%  [k] entry_SYSCALL_64_after_hwframe
    12.50%     0.00%  [k] __x64_sys_sendmmsg
     9.00%     0.00%  [.] __recvmmsg
     5.00%     0.00%  [.] egw::tunnel::ByteRing::write_at (inlined)
"""


class GatewayBench(unittest.TestCase):
    def test_per_core_and_medians(self):
        s = contender([900, 1000, 5000], 1200, cpu_s=4.0, p50_us=100)["summary"]
        self.assertEqual(s["mbit_per_s"], 1000)  # the median, not the mean
        self.assertEqual(s["bulk8_mbit_per_s"], 1200)
        self.assertEqual(s["mbit_per_tunnel_core"], 2000)  # 1,000 Mbit/s on 4 CPU s in 8 s = half a core
        self.assertEqual(s["loaded_p50_us"], 100)
        self.assertEqual(s["rr_idle_p50_us"], 50)

    def test_goals_against_the_best_encrypted_peer(self):
        results = {"a": contender([20000], 20000, 0, 20), "f": contender([10000], 11000, 1.0, 40),
                   "g": contender([3000], 3200, 8.0, 150), "h": contender([2000], 4000, 8.0, 100),
                   "c": contender([1500], 1500, 12.0, 4000), "b": contender([3900], 3800, 8.0, 300)}
        lines = "\n".join(run.goal_lines(results))
        # The relay (f) and the plain path (a) are no peers; the best one per metric is.
        self.assertIn("(b) 1 stream: 1.30x the best encrypted peer, (g)", lines)
        self.assertIn("(b) 8 streams: 0.95x the best encrypted peer, (h)", lines)
        self.assertIn("(b) per tunnel core: 1.30x the best encrypted peer, (g)", lines)
        self.assertIn("(b) request/response p50 beside a bulk transfer: 3.00x (h)", lines)
        table = "\n".join(run.dataplane_table(results, [k for k in run.ORDER if k in results]))
        self.assertIn("| (a) direct (routed) | 20,000 (20,000) | 20,000 | - |", table)
        self.assertIn("| (f) haproxy, splice, no crypto | 10,000 (10,000) | 11,000 | 80,000 / 88,000 |", table)

    def test_perf_self_time_groups(self):
        p = run.parse_self_time(FLAT)
        g = p["groups"]
        self.assertEqual(g["AEAD"]["user"], 32.0)  # libcrypto's stripped assembly and EVP, and our wrapper
        self.assertEqual(g["copies"], {"user": 10.0, "kernel": 5.0})
        self.assertEqual(g["allocation"], {"user": 3.0, "kernel": 4.0})
        self.assertEqual(g["syscall entry/exit"]["kernel"], 1.0)
        self.assertEqual(g["other"]["user"], 1.0)
        self.assertEqual(list(p["by_object"])[0], "libcrypto.so.3")

    def test_perf_inclusive(self):
        i = run.parse_inclusive(CHILDREN)
        self.assertNotIn("main", i)
        self.assertNotIn("egw::proxy::run_gateway", i)  # >= 95 %: every sample
        self.assertEqual(i["egw::tunnel::crypto::ChaChaPolyKey::seal"], 44.0)
        self.assertEqual(i["entry_SYSCALL_64_after_hwframe"], 27.0)
        self.assertEqual(i["__x64_sys_sendmmsg"], 12.5)
        self.assertEqual(i["egw::tunnel::ByteRing::write_at"], 5.0)
        self.assertNotIn("__recvmmsg", i)


if __name__ == "__main__":
    unittest.main()

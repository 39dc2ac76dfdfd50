"""Test of render_ha on a made-up measurement (no processes started).

Run: cd bench && python3 -m unittest cairnbench.test_render_ha
"""
import unittest

from .render_ha import SECTION_TITLE, render_ha


def data(three_create_16):
    fig = [
        (["ha", "one", "cairn bench nn", "create", 16], [1000.0, 1100.0, 1050.0]),
        (["ha", "three", "cairn bench nn", "create", 16], three_create_16),
        (["hacpu", "one", "cairn bench nn", "create", 16], [40.0, 42.0, 41.0]),
        (["hacpu", "three", "cairn bench nn", "create", 16], [95.0, 90.0, 99.0]),
        (["ha", "one", "NNThroughputBenchmark", "delete", 64], [2000.0, 2000.0, 2000.0]),
        (["ha", "three", "NNThroughputBenchmark", "delete", 64], [1500.0, 1600.0, 1700.0]),
    ]
    return {"params": {"reps": 3, "nn_files": 20000}, "started": "2026-11-26T22:00:00+00:00",
            "finished": "2026-11-26T22:20:00+00:00", "commit": "abc1234", "dirty": False,
            "figures": [{"key": k, "values": v} for k, v in fig],
            "failed": [{"what": "cairn bench nn --op mkdirs --threads 64", "why": "rc 1: refused"}]}


class RenderHaTest(unittest.TestCase):
    def test_rows_ratios_goal_and_failures(self):
        md = render_ha(data([600.0, 650.0, 700.0]))
        self.assertTrue(md.startswith(SECTION_TITLE))
        self.assertIn("| cairn bench nn | create | 16 | 1,050 (1,000–1,100) | 650 (600–700) | 0.62× | 41.0 "
                      "(40.0–42.0) | 95.0 (90.0–99.0) |", md)
        self.assertIn("| NNThroughputBenchmark | delete | 64 | 2,000 (2,000–2,000) | 1,600 (1,500–1,700) | 0.80× |", md)
        self.assertIn("Below it: cairn bench nn create at 16 threads (0.62×).", md)
        self.assertIn("20,000 operations per run", md)
        self.assertIn("median of 3 runs", md)
        self.assertIn("`cairn bench nn --op mkdirs --threads 64: rc 1: refused`", md)
        self.assertIn("spent 2.3× one NameNode's CPU per operation", md)
        # rows nobody measured are left out
        self.assertNotIn("| mkdirs |", md)

    def test_goal_met(self):
        md = render_ha(data([900.0, 1000.0, 950.0]))
        self.assertIn("Met in every row above.", md)

    def test_no_failures_said(self):
        d = data([900.0, 1000.0, 950.0])
        d["failed"] = []
        self.assertIn("Failed runs of this mode: none.", render_ha(d))
        self.assertNotIn("Failed runs of this mode: none.", render_ha(data([900.0, 1000.0, 950.0])))

    def test_same_input_same_output(self):
        self.assertEqual(render_ha(data([1.0, 2.0, 3.0])), render_ha(data([1.0, 2.0, 3.0])))


if __name__ == "__main__":
    unittest.main()

"""Test of render_scale on a made-up measurement (no processes started).

Run: cd bench && python3 -m unittest cairnbench.test_render_scale
"""
import unittest

from .render_scale import render_scale, SECTION_TITLE

MIB = 1 << 20


def scale_rep(files, rss_growth, heap_growth, restart, image_s, image_bytes):
    r = {"files": files, "dirs": files // 4, "threads": 16, "restart_empty_s": 1.0, "restart_full_s": 1.0 + restart,
         "before": {"rss": 100 * MIB}, "after": {"rss": 100 * MIB + rss_growth * files},
         "create": {"ops_per_sec": 5000.0, "rss_end_of_timed_phase": 100 * MIB + rss_growth * files},
         "saves": [{"image_s": image_s}, {"image_s": image_s + 1}, {"image_s": image_s - 1}],
         "image_s_logged": [image_s], "image_bytes": image_bytes}
    if heap_growth is not None:
        r["before"]["heap"] = 50 * MIB
        r["after"]["heap"] = 50 * MIB + heap_growth * files
    return r


def cpu_run(us, ops_per_sec, ops=20000):
    return {"ops": ops, "cpu_us_per_op": us, "ops_per_sec": ops_per_sec}


class RenderScaleTest(unittest.TestCase):
    def data(self):
        n = 500000
        return {
            "command": "bench/measure-scale --reps 2", "started": "2026-11-26T15:00:00+00:00",
            "finished": "2026-11-26T15:30:00+00:00",
            "config": {"files": n, "dirs": n // 4, "cpu_files": 20000, "threads": 16, "reps": 2,
                       "ops": ["create", "open"]},
            "facts": {"CPUs": "2"},
            "scale": {"HDFS": [scale_rep(n, 1886, 479, 4.0, 2.0, 100 * n), scale_rep(n, 1886, 481, 6.0, 2.0, 100 * n)],
                      "Cairn": [scale_rep(n, 805, None, 2.0, 1.0, 178 * n)]},
            "cpu": {"HDFS": {"create": [cpu_run(300.0, 4000), cpu_run(310.0, 4100)], "open": [cpu_run(100.0, 9000)]},
                    "Cairn": {"create": [cpu_run(45.0, 8000), cpu_run(44.0, 8100)], "open": []}},
            "cpu_rust": {"HDFS": {"create": [cpu_run(90.0, 18000)], "open": [cpu_run(40.0, 50000)]},
                         "Cairn": {"create": [cpu_run(30.0, 30000)], "open": [cpu_run(6.0, 160000)]}},
            "failures": ["NNThroughputBenchmark -op open on Cairn: rc 1"],
        }

    def row(self, md, start):
        rows = [line for line in md.splitlines() if line.startswith("| " + start)]
        self.assertEqual(len(rows), 1, "one row starting %r in:\n%s" % (start, md))
        return [c.strip() for c in rows[0].strip("|").split("|")]

    def test_table_ratios_and_failures(self):
        md = render_scale(self.data())
        self.assertTrue(md.startswith(SECTION_TITLE))
        # Cairn's RSS growth against HDFS's live heap (median of 479 and 481 = 480).
        self.assertEqual(self.row(md, "Memory per file, bytes: Cairn RSS"), [
            "Memory per file, bytes: Cairn RSS ÷ HDFS live heap after a full GC", "480 (479–481)", "805", "1.68×"])
        self.assertEqual(self.row(md, "Memory per file, bytes: RSS (resident")[1:], ["1,886", "805", "0.43×"])
        # (restart with files - empty) per million: HDFS 4 and 6 s at 0.5M -> 8 and 12 s, median 10.
        self.assertEqual(self.row(md, "Restart per million")[1:], ["10.00 (8.00–12.00)", "4.00", "0.40×"])
        self.assertEqual(self.row(md, "Image write per million files, s: saveNamespace")[1:],
                         ["4.00", "2.00", "0.50×"])
        self.assertEqual(self.row(md, "Image size per file")[1:], ["100", "178", "1.78×"])
        nntb, rust = md.split("### CPU time per operation, `cairn bench nn`")
        self.assertEqual(self.row(nntb, "create |"), ["create", "305.0 (300.0–310.0)", "44.5 (44.0–45.0)", "0.15×",
                                                          "4,050 (4,000–4,100)", "8,050 (8,000–8,100)", "1.99×"])
        # An op with no Cairn run shows dashes, and the failure is listed.
        self.assertEqual(self.row(nntb, "open |")[2:4], ["–", "–"])
        self.assertIn("* `NNThroughputBenchmark -op open on Cairn: rc 1`", md)
        self.assertIn("Cairn: 1 of 2 scale repetitions, at least 0 of 2 per operation (`cairn bench nn`: 1 of 2)", md)
        # The second client's table, from its own runs.
        self.assertEqual(self.row(rust, "create |"), ["create", "90.0", "30.0", "0.33×", "18,000", "30,000", "1.67×"])
        self.assertEqual(self.row(rust, "open |")[1:4], ["40.0", "6.0", "0.15×"])

    def test_empty_measurement_renders(self):
        md = render_scale({"config": {}, "failures": []})
        self.assertIn("Failed runs: none.", md)
        self.assertIn("| Memory per file, bytes: RSS (resident memory) of both | – | – | – |", md)


if __name__ == "__main__":
    unittest.main()

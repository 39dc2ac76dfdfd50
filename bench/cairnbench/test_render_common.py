"""Test of what render_common says about a run's order of systems (no processes started).

Run: cd bench && python3 -m unittest cairnbench.test_render_common
"""
import unittest

from .render_common import Run
from .runner import in_turn


def run(params):
    return Run({"params": params, "started": "2026-12-02T07:00:00+00:00", "finished": "2026-12-02T07:30:00+00:00"})


class OrderTest(unittest.TestCase):
    def test_a_run_that_turned_the_order_says_so(self):
        self.assertIn("the order turns each repetition (HDFS then Cairn, then Cairn then HDFS",
                      run({"reps": 3, "order_turns": True}).order_sentence())

    def test_an_older_run_keeps_its_fixed_order_sentence(self):
        s = run({"reps": 3}).order_sentence()
        self.assertIn("(HDFS, Cairn, HDFS, Cairn, …)", s)
        self.assertNotIn("turns", s)

    def test_the_wait_for_deletions_is_said_only_where_it_was_made(self):
        self.assertIn("starts only once the cluster's directory has shrunk back",
                      run({"reps": 3, "order_turns": True, "settle": True}).order_sentence())
        self.assertEqual(run({"reps": 3}).settle_sentence(), "")

    def test_in_turn_reverses_on_odd_repetitions(self):
        systems = [("HDFS", 1), ("Cairn", 2)]
        self.assertEqual([s for s, _ in in_turn(systems, 0)], ["HDFS", "Cairn"])
        self.assertEqual([s for s, _ in in_turn(systems, 1)], ["Cairn", "HDFS"])
        self.assertEqual([s for s, _ in in_turn(systems, 2)], ["HDFS", "Cairn"])


if __name__ == "__main__":
    unittest.main()

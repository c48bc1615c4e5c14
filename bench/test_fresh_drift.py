"""The fresh-state and drift benchmarks' own logic: their configurations
and how they read the sim store's read log and durations."""

import tempfile
import unittest
from pathlib import Path

import drift
import fresh


class FreshDriftTest(unittest.TestCase):
    def test_the_fresh_config_paces_each_process_below_the_account(self):
        text = fresh.config("/s", 10, 100)
        self.assertIn("account_reads_per_second = 100", text)
        self.assertIn("rate_limit_per_second    = 95", text)
        self.assertIn("count = 10", text)

    def test_the_drift_config_limits_the_account_and_sets_a_size_to_change(self):
        text = drift.config("/s", 5, 1250)
        self.assertIn("account_reads_per_second = 1250", text)
        self.assertIn("size  = 3", text)

    def test_durations_read_as_the_coordinator_takes_them(self):
        self.assertEqual(drift.seconds("240s"), 240)
        self.assertEqual(drift.seconds("4m"), 240)
        self.assertEqual(drift.seconds("1h"), 3600)

    def test_the_read_log_gives_its_timestamps_in_order(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "reads.log").write_text("a 1000\nb 1500\nbroken\nc 2500\n")
            self.assertEqual(drift.read_times(Path(d)), [1000, 1500, 2500])


if __name__ == "__main__":
    unittest.main()

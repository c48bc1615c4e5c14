"""Tests of bench/network.py's reading of its chains: round trips per link
and the floor set against each link. Run by tests/run.sh."""

import argparse
import unittest

import network


def phase(name, hop):
    return {"phase": name, "kind": name, "wall_s": hop, "links": 1000, "hop_ms": hop, "calls_ms": 1.0,
            "to_worker_ms": 0.5, "claim_wait_ms": 0.0, "back_ms": 0.2}


def chains(at0, at50):
    return {0: {"phases": [phase(p, v) for p, v in at0.items()]},
            50: {"phases": [phase(p, v) for p, v in at50.items()]}}


class RoundTrips(unittest.TestCase):
    def test_a_link_five_round_trips_longer_costs_five(self):
        c = chains({"apply": 9.0}, {"apply": 259.0})
        self.assertAlmostEqual(network.round_trips(c, 50, "apply"), 5.0)

    def test_no_round_trips_without_a_delay_or_a_baseline(self):
        c = chains({"apply": 9.0}, {"apply": 259.0})
        self.assertIsNone(network.round_trips(c, 0, "apply"))
        self.assertIsNone(network.round_trips({50: c[50]}, 50, "apply"))
        self.assertIsNone(network.round_trips(c, 50, "plan"))

    def test_the_report_sets_each_link_against_its_design_floor(self):
        c = chains({"plan": 2.0, "apply": 9.0}, {"plan": 103.0, "apply": 270.0})
        out = {"date": "d", "machine": "m", "command": "c",
               "rtts": {r: {"chain": v, "independent": {"error": "not run"}} for r, v in c.items()}}
        text = network.report(argparse.Namespace(chain=1000, independent=10000, bin_dir="b"), out)
        # Through the queue (results that do not say): plan 2 round trips
        # by design, apply 5, on top of the 0 ms link.
        self.assertIn("| 50 | plan | 103.00 | 103.00 | 102.00 |", text)
        self.assertIn("| 50 | apply | 270.00 | 270.00 | 259.00 |", text)
        self.assertIn("| 50 | failed: not run |", text)
        # Sent directly: an apply link costs 3.
        text = network.report(argparse.Namespace(chain=1000, independent=10000, bin_dir="b"),
                              dict(out, direct_dispatch=True))
        self.assertIn("| 50 | apply | 270.00 | 270.00 | 159.00 |", text)
        self.assertIn("apply links 3", text)

    def test_independent_instances_are_set_against_their_floor(self):
        row = {"phase": "apply", "wall_s": 30.0, "per_s": 333.3}
        out = {"date": "d", "machine": "m", "command": "c",
               "rtts": {50: {"chain": {"error": "not run"}, "independent": {"rows": [row]}}}}
        text = network.report(argparse.Namespace(chain=1000, independent=10000, bin_dir="b"), out)
        # 10,000 creates of 5 round trips of 50 ms, 128 at once.
        self.assertIn("| 50 | apply | 30.00 | 19.53 | 333 |", text)


if __name__ == "__main__":
    unittest.main()

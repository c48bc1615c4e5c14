"""Tests of bench/hops.py's reading of a traced chain, on spans shaped as
fleetform exports them (see tests/tests/traces.rs for the shape itself on
a real fleet). Run by tests/run.sh."""

import unittest

import hops

MS = 1_000_000  # ns


def chain(run, kind, starts, call_ms, wait_ms=0.0, numbered=True):
    """Spans of a chain whose link i is dispatched at starts[i] ms, taken by
    a worker 0.3 ms later, calls its provider for `call_ms` (of which
    `wait_ms` waiting for its claim), and ends 0.1 ms after that. Task ids
    as the coordinator makes them: `<run>.<n>:plan:<addr>` for planning,
    `<run>:apply:<addr>` for applying (`numbered=False`)."""
    out = []
    for i, t in enumerate(starts):
        head = f"{run}.{i}" if numbered else run
        task_id = f"{head}:{kind}:sim_object.c{i}"
        d, task, call, wait = f"d-{run}-{i}", f"t-{run}-{i}", f"c-{run}-{i}", f"w-{run}-{i}"
        w0 = (t + 0.3) * MS
        c1 = w0 + call_ms * MS
        out += [
            ("fleetform-coordinator", "dispatch", d, "", t * MS, t * MS, {"task_id": task_id}),
            ("fleetform-worker", "task", task, d, w0, c1 + 0.1 * MS, {"task_id": task_id}),
            ("fleetform-worker", "provider call", call, task, w0, c1, {}),
        ]
        if wait_ms:
            out.append(("fleetform-worker", "claim wait", wait, call, c1 - wait_ms * MS, c1, {}))
    return [(s, n, i, p, int(a), int(b), at) for s, n, i, p, a, b, at in out]


class LinksTest(unittest.TestCase):
    def test_a_link_is_split_into_provider_calls_and_what_fleetform_adds(self):
        # Links 2 ms apart, 0.5 ms of provider calls each.
        rows = hops.links(chain("r1", "plan", [0, 2, 4, 6], 0.5))[("r1", "plan")]
        s = hops.summarize(rows)
        self.assertEqual(s["links"], 4)
        self.assertAlmostEqual(s["hop_ms"], 2.0)
        self.assertAlmostEqual(s["calls_ms"], 0.5)
        self.assertAlmostEqual(s["overhead_ms"], 1.5)
        self.assertAlmostEqual(s["to_worker_ms"], 0.3)
        # Worker's end at t + 0.3 + 0.5 + 0.1, next dispatch at t + 2.
        self.assertAlmostEqual(s["back_ms"], 1.1)
        self.assertAlmostEqual(s["calls_total_s"], 0.002)

    def test_a_claim_wait_counts_as_fleetforms_not_the_providers(self):
        rows = hops.links(chain("r2", "apply", [0, 3, 6], 1.0, wait_ms=0.25, numbered=False))[("r2", "apply")]
        s = hops.summarize(rows)
        self.assertAlmostEqual(s["calls_ms"], 0.75)
        self.assertAlmostEqual(s["claim_wait_ms"], 0.25)
        self.assertAlmostEqual(s["overhead_ms"], 2.25)

    def test_runs_are_matched_to_commands_in_the_order_they_started(self):
        spans = (chain("late", "destroy", [100, 101, 102], 0.2, numbered=False)
                 + chain("late", "plan-destroy", [90, 90, 90], 0.2)
                 + chain("first", "plan", [0, 1, 2], 0.2)
                 + chain("mid", "apply", [50, 52, 54], 0.2, numbered=False))
        phases = hops.phase_links(hops.links(spans), 3)
        self.assertEqual([(p["phase"], p["kind"]) for p in phases],
                         [("plan", "plan"), ("apply", "apply"), ("destroy", "destroy")])
        self.assertAlmostEqual(phases[1]["hop_ms"], 2.0)

    def test_missing_links_are_an_error_not_a_shorter_table(self):
        spans = (chain("a", "plan", [0, 1, 2], 0.2) + chain("b", "apply", [5, 6], 0.2, numbered=False)
                 + chain("c", "destroy", [9, 10, 11], 0.2, numbered=False))
        with self.assertRaisesRegex(RuntimeError, "apply: traces of 2 apply tasks, expected 3"):
            hops.phase_links(hops.links(spans), 3)
        with self.assertRaisesRegex(RuntimeError, "traces of 2 runs, expected 3"):
            hops.phase_links(hops.links(chain("a", "plan", [0, 1, 2], 0.2) + chain("b", "apply", [5, 6, 7], 0.2)), 3)


if __name__ == "__main__":
    unittest.main()

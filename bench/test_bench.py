"""Tests of bench/bench.py's saved-plan phases: which phases are recorded,
and how the apply of a saved plan is set against its floor. Run by
tests/run.sh."""

import unittest
from unittest import mock

import bench

KEY = {"shape": "independent", "latency_ms": 50, "cpu_ms": 0, "n": 1000, "system": "fleetform"}


def kinds(main_cpu, provider_cpu):
    return {"main": {"peak_rss_mb": 50, "cpu_s": main_cpu},
            "provider": {"processes": 2, "peak_rss_mb": 10, "cpu_s": provider_cpu}}


class SavedPlanPhases(unittest.TestCase):
    def run_phases(self, found):
        """run_phases over the latency scenario's phases, each command
        taking 0.5 s; `found(phase)`: the sim's objects after it."""
        results, ran = [], []

        def fake_run(cmd, cwd, env, timeout, fleet=None):
            ran.append(cmd)
            return 0.5, kinds(0.3, 0.2)

        phases = bench.PHASES + bench.SAVED_PHASES
        seen = iter(phases)
        with mock.patch.object(bench, "run", fake_run), \
                mock.patch.object(bench, "objects", lambda store: found(next(seen), KEY["n"])):
            ok = bench.run_phases(results, KEY, "label", lambda p: bench.FF[p], None, {}, None, KEY["n"], None,
                                  {}, "fleetform", 256, phases=phases)
        return ok, results, ran

    def test_unrecorded_phases_run_and_are_checked_but_not_recorded(self):
        ok, results, ran = self.run_phases(lambda phase, n: bench.EXPECTED[phase](n))
        self.assertTrue(ok)
        self.assertEqual(len(ran), 7)
        self.assertIn("-out=saved.tfplan", ran[4])
        self.assertEqual(ran[5][-1], "saved.tfplan")
        self.assertEqual([r["phase"] for r in results], ["plan", "apply", "replan", "destroy", "apply-saved"])

    def test_a_wrong_object_count_after_an_unrecorded_phase_fails_the_run(self):
        # The destroy after the saved plan's apply leaves objects behind.
        ok, results, _ = self.run_phases(lambda phase, n: 5 if phase == "_destroy" else bench.EXPECTED[phase](n))
        self.assertFalse(ok)
        self.assertEqual(results[-1]["phase"], "_destroy")
        self.assertIn("5 objects after _destroy", results[-1]["error"])

    def test_the_saved_apply_is_set_against_the_larger_floor(self):
        rows = [
            dict(KEY, phase="apply", wall_s=9.0, concurrency=256, main_cpu_s=1, provider_cpu_s=1),
            # Latency floor 1000 × 50 ms / 256 = 0.195 s; CPU floor 0.2 + 0.1 + 0.3 over 2 cores = 0.3 s.
            dict(KEY, phase="apply-saved", wall_s=0.6, concurrency=256, main_cpu_s=0.2, provider_cpu_s=0.1,
                 coordinator_cpu_s=0.3),
        ]
        lines = bench.saved_plan_note(rows, 50, 2)
        notes = [line for line in lines if line.startswith("- ")]
        self.assertEqual(len(notes), 1)
        self.assertIn("took 0.60 s", notes[0])
        self.assertIn("the latency's floor is 0.20 s (3.07×)", notes[0])
        self.assertIn("all CPU over 2 cores 0.30 s; 2.00× the larger, 0.30 s", notes[0])
        self.assertEqual(bench.saved_plan_note(rows[:1], 50, 2), [])


class TerraformFound(unittest.TestCase):
    def fake(self, stdout, rc=0):
        return mock.patch.object(bench.subprocess, "run",
                                 lambda *a, **k: mock.Mock(returncode=rc, stdout=stdout))

    def test_the_default_must_be_1_11(self):
        with mock.patch.object(bench.shutil, "which", lambda _: "/bin/terraform"), \
                self.fake("Terraform v1.11.4\non linux_amd64\n"):
            path, version, why = bench.find_terraform()
        self.assertEqual((version, why), ("Terraform v1.11.4 on linux_amd64", None))
        with mock.patch.object(bench.shutil, "which", lambda _: "/bin/terraform"), self.fake("Terraform v1.5.7\n"):
            self.assertIn("not 1.11", bench.find_terraform()[2])
        with mock.patch.object(bench.shutil, "which", lambda _: None):
            self.assertIn("no terraform on PATH", bench.find_terraform()[2])

    def test_a_named_terraform_may_be_0_15_with_its_o_prefix(self):
        with self.fake("o:Terraform v0.15.0-rc2\no:on linux_amd64\n"), mock.patch("sys.stderr"):
            _, version, why = bench.find_terraform("/x/terraform")
        self.assertEqual((version, why), ("Terraform v0.15.0-rc2 on linux_amd64", None))

    def test_the_header_says_skip_when_missing(self):
        self.assertEqual(bench.terraform_header(None, None, "no terraform on PATH"), "SKIP (no terraform on PATH)")
        self.assertEqual(bench.terraform_header("/t", "Terraform v1.11.4", None), "Terraform v1.11.4 (`/t`)")


if __name__ == "__main__":
    unittest.main()

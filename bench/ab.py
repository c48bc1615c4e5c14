#!/usr/bin/env python3
"""Two fleetform builds side by side: embedded apply (then destroy) of the
same generated configuration, the builds taking turns, so that this VM's
slow and fast moments fall on both. Prints each apply's wall time, CPU
(fleetform and its provider processes, children included) and peak RSS,
then the means and the median peak RSS (the largest of fleetform and its
provider processes, per apply).

    bench/ab.py OLD_FLEETFORM NEW_FLEETFORM [--shape independent] [--n 10000] [--pairs 3]

Build the old one first and copy it aside (`cp target/release/fleetform
/tmp/fleetform.old`). The sim provider comes from --provider-dir (the
release build's by default) for both, so only fleetform differs. To
compare two builds of the sim provider instead, give the same fleetform
twice and the old provider's directory as --old-provider-dir. The
first pair runs on a cold configuration; --warm-up applies and destroys
once before it (the figures of 2026-11-27 in docs/benchmarks.md left the cold
pair out by hand).
"""

import argparse
import os
import tempfile
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--shape", default="independent")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--warm-up", action="store_true")
    ap.add_argument("--provider-dir", default=str(bench.REPO / "target/release"))
    ap.add_argument("--old-provider-dir", default=None,
                    help="the sim provider of the OLD side, to compare provider builds (default: --provider-dir)")
    ap.add_argument("--work", default="/tmp/fleetform-ab")
    args = ap.parse_args()
    # Run from the configuration's directory: the paths are made absolute.
    args.old, args.new = (str(Path(b).resolve()) for b in (args.old, args.new))
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rcs = {}
    for side, pdir in (("old", args.old_provider_dir or args.provider_dir), ("new", args.provider_dir)):
        rcs[side] = bench.write_cli_config(work, pdir, f"terraformrc-{side}")
    d = work / "cfg"
    bench.generate(args.shape, args.n, d)
    store = bench.sim_store(d)
    env = dict(os.environ, TF_VAR_store=str(store),
               TF_VAR_latency_ms="0", TF_VAR_cpu_ms="0")
    env.pop("FLEETFORM_COORDINATOR", None)

    def phase(binary, name, side):
        # Output to files (a pipe nobody reads while waiting could fill);
        # wait4 gives this run's own usage: its CPU and the largest RSS of
        # it and the provider processes it waited for.
        with tempfile.TemporaryFile() as out:
            t0 = time.monotonic()
            p = subprocess.Popen([binary] + bench.FF[name], cwd=d, stdout=out, stderr=subprocess.STDOUT,
                                 env=dict(env, TF_CLI_CONFIG_FILE=str(rcs[side])))
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            wall = time.monotonic() - t0
            if p.returncode != 0:
                out.seek(0)
                sys.exit(f"{binary} {name} exited {p.returncode}:\n{out.read().decode()[-4000:]}")
        cpu = usage.ru_utime + usage.ru_stime
        return wall, cpu, usage.ru_maxrss / 1024

    if args.warm_up:
        phase(args.old, "apply", "old")
        phase(args.old, "destroy", "old")
    sums = {"old": [0.0, 0.0], "new": [0.0, 0.0]}
    peaks = {"old": [], "new": []}
    per_pair = []  # (old wall, old CPU, new wall, new CPU)
    for i in range(args.pairs):
        order = [("old", args.old), ("new", args.new)] if i % 2 == 0 else [("new", args.new), ("old", args.old)]
        got = {}
        for label, binary in order:
            wall, cpu, rss = phase(binary, "apply", label)
            got[label] = (wall, cpu)
            phase(binary, "destroy", label)
            if bench.objects(store) != 0:
                sys.exit(f"{label}: objects left after destroy")
            sums[label][0] += wall
            sums[label][1] += cpu
            peaks[label].append(rss)
            print(f"pair {i + 1} {label}: apply {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {rss:.0f} MB", flush=True)
        per_pair.append(got["old"] + got["new"])
    for label, (wall, cpu) in sums.items():
        print(f"{label}: mean apply {wall / args.pairs:.2f} s, CPU {cpu / args.pairs:.2f} s, "
              f"median peak RSS {statistics.median(peaks[label]):.0f} MB ({args.shape}, {args.n})")
    # This VM's speed drifts by tens of percent within minutes: the pairs'
    # own ratios, and how many pairs went the new build's way, say more
    # than the means.
    if per_pair:
        wall_r = statistics.median(nw / ow for ow, _, nw, _ in per_pair)
        cpu_r = statistics.median(nc / oc for _, oc, _, nc in per_pair)
        fewer = sum(1 for _, oc, _, nc in per_pair if nc < oc)
        print(f"new/old, median of the pairs: wall {wall_r:.3f}, CPU {cpu_r:.3f}; "
              f"new used less CPU in {fewer} of {len(per_pair)} pairs")


if __name__ == "__main__":
    main()

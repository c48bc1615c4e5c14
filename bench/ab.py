#!/usr/bin/env python3
"""Two fleetform builds side by side: embedded apply (then destroy) of the
same generated configuration, the builds taking turns, so that this VM's
slow and fast moments fall on both. Prints each apply's wall time, CPU
(fleetform and its provider processes, children included) and peak RSS,
then the means.

    bench/ab.py OLD_FLEETFORM NEW_FLEETFORM [--shape independent] [--n 10000] [--pairs 3]

Build the old one first and copy it aside (`cp target/release/fleetform
/tmp/fleetform.old`). The sim provider comes from --provider-dir (the
release build's by default) for both, so only fleetform differs. The
first pair runs on a cold configuration; --warm-up applies and destroys
once before it (the figures of 2026-11-27 in the README left the cold
pair out by hand).
"""

import argparse
import os
import resource
import shutil
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
    ap.add_argument("--work", default="/tmp/fleetform-ab")
    args = ap.parse_args()
    # Run from the configuration's directory: the paths are made absolute.
    args.old, args.new = (str(Path(b).resolve()) for b in (args.old, args.new))
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rc = work / "terraformrc"
    rc.write_text(
        'provider_installation {\n  dev_overrides {\n'
        f'    "fleetform/sim" = "{Path(args.provider_dir).resolve()}"\n  }}\n  direct {{}}\n}}\n'
    )
    d = work / "cfg"
    bench.generate(args.shape, args.n, d)
    store = bench.sim_store(d)
    env = dict(os.environ, TF_CLI_CONFIG_FILE=str(rc), TF_VAR_store=str(store),
               TF_VAR_latency_ms="0", TF_VAR_cpu_ms="0")
    env.pop("FLEETFORM_COORDINATOR", None)

    def phase(binary, name):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        r = subprocess.run([binary] + bench.FF[name], cwd=d, env=env, capture_output=True)
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            sys.exit(f"{binary} {name} exited {r.returncode}:\n{r.stdout.decode()[-2000:]}{r.stderr.decode()[-2000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        # ru_maxrss of children is the largest of any child so far: shown
        # as an upper bound.
        return wall, cpu, after.ru_maxrss / 1024

    if args.warm_up:
        phase(args.old, "apply")
        phase(args.old, "destroy")
    sums = {"old": [0.0, 0.0], "new": [0.0, 0.0]}
    for i in range(args.pairs):
        order = [("old", args.old), ("new", args.new)] if i % 2 == 0 else [("new", args.new), ("old", args.old)]
        for label, binary in order:
            wall, cpu, rss = phase(binary, "apply")
            phase(binary, "destroy")
            if bench.objects(store) != 0:
                sys.exit(f"{label}: objects left after destroy")
            sums[label][0] += wall
            sums[label][1] += cpu
            print(f"pair {i + 1} {label}: apply {wall:.2f} s, CPU {cpu:.2f} s, peak RSS so far <= {rss:.0f} MB", flush=True)
    for label, (wall, cpu) in sums.items():
        print(f"{label}: mean apply {wall / args.pairs:.2f} s, CPU {cpu / args.pairs:.2f} s ({args.shape}, {args.n})")


if __name__ == "__main__":
    main()

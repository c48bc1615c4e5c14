#!/usr/bin/env python3
"""Drift found in the background, before anyone plans (issue 34).

A fleet keeps a workspace's state fresh by itself: its coordinator, started
with `--refresh-every E --refresh-rate R`, runs the workspace's latest apply
again as a refresh-only plan every E, reading at most R objects a second
(a share of the cloud account's limit, which the `sim` provider enforces:
`account_reads_per_second = A`, shared by every provider process).

1. The fleet (nats-server, moto, the coordinator, W workers) applies N
   `sim_object` instances.
2. The background refresh's first cycle reads every object (applying
   forgets the reads of what it wrote). The sim store's read log times it.
3. Then 1% of the objects change outside fleetform (their `size`,
   written in the sim store) at t0, and `fleetform drift` is asked every
   2 s until it lists every one of them: how long after t0, against the
   length of a cycle. The next cycle starts at most E after the one before
   started, and reads the objects whose read is older than E / 2.

A cycle's floor is N / R seconds (the rate the coordinator keeps to);
what a cycle takes beyond it is fleetform's. Usage:

    bench/drift.py [--n 100000] [--account 1250] [--rate 1000]
                   [--every 240s] [--workers 4] [--bin-dir target/release]

Writes bench/results/drift.md and drift.json.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench

REPO = Path(__file__).resolve().parent.parent


def config(store, n, account):
    return bench.REQUIRED + f'''

provider "sim" {{
  store_dir                = "{store}"
  account_reads_per_second = {account}
}}

resource "sim_object" "x" {{
  count = {n}
  name  = "x-${{count.index}}"
  size  = 3
}}
'''


def read_times(store):
    """The read log's timestamps (unix ms), in order."""
    out = []
    for line in (store / "reads.log").read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            out.append(int(parts[1]))
    return out


def seconds(text):
    """`240s`, `4m`, `1h` → seconds."""
    unit = {"s": 1, "m": 60, "h": 3600}[text[-1]]
    return float(text[:-1]) * unit


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--account", type=float, default=1250, help="the account's reads per second")
    ap.add_argument("--rate", type=float, default=1000, help="the background refresh's reads per second (--refresh-rate)")
    ap.add_argument("--every", default="240s", help="--refresh-every")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--drift", type=float, default=0.01, help="share of the objects changed outside")
    ap.add_argument("--bin-dir", default=str(REPO / "target/release"))
    ap.add_argument("--tools", default=os.environ.get("FLEETFORM_TEST_TOOLS", str(REPO / ".test-tools/venv/bin")))
    ap.add_argument("--out", default=str(REPO / "bench/results"))
    args = ap.parse_args()
    bins = Path(args.bin_dir).resolve()
    n, every = args.n, seconds(args.every)
    floor = n / args.rate
    work = Path(tempfile.mkdtemp(prefix="fleetform-drift-"))
    cfg = work / "cfg"
    cfg.mkdir()
    store = bench.sim_store(cfg)
    (store / "reads.log").write_text("")
    (cfg / "main.tf").write_text(config(store, n, args.account))
    env = dict(os.environ)
    env["PATH"] = f"{bins}:{env['PATH']}"
    ff = str(bins / "fleetform")
    fleet = bench.Fleet(bins, args.tools, work / "fleet", args.workers, env,
                        coordinator_args=f"--refresh-every {args.every} --refresh-rate {args.rate:g}")
    results = {"n": n, "account_reads_per_second": args.account, "refresh_rate": args.rate,
               "refresh_every_s": every, "workers": args.workers, "floor_s": round(floor, 1),
               "bin_dir": str(bins)}
    try:
        cenv = fleet.client_env(env)
        start = time.monotonic()
        out = subprocess.run([ff, "apply", "-auto-approve", "-no-color"], cwd=cfg, env=cenv,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"apply failed:\n{(out.stdout + out.stderr)[-3000:]}")
        results["apply_s"] = round(time.monotonic() - start, 1)
        print(f"applied {n} in {results['apply_s']} s", file=sys.stderr)

        # The first cycle: every object read once.
        deadline = time.monotonic() + every + 3 * floor + 120
        while len(read_times(store)) < n:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the first cycle read {len(read_times(store))} of {n} objects in time")
            time.sleep(2)
        first = read_times(store)[:n]
        results["cycle1_s"] = round((first[-1] - first[0]) / 1000, 1)
        print(f"first cycle: {results['cycle1_s']} s", file=sys.stderr)

        # 1% drifts outside.
        step = max(1, round(1 / args.drift))
        changed = 0
        for p in store.iterdir():
            if p.suffix != ".json":
                continue
            doc = json.loads(p.read_text())
            idx = int(doc["name"].split("-")[1])
            if idx % step == 0:
                doc["size"] = 9
                p.write_text(json.dumps(doc))
                changed += 1
        t0 = time.time()
        results["drifted"] = changed
        print(f"{changed} objects changed outside", file=sys.stderr)
        deadline = time.monotonic() + 2 * every + 3 * floor + 120
        seen = 0
        while True:
            out = subprocess.run([ff, "drift"], cwd=cfg, env=cenv, capture_output=True, text=True)
            seen = sum(1 for l in out.stdout.splitlines() if l.startswith("  sim_object.x["))
            if seen >= changed:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"drift listed {seen} of {changed} objects in time")
            time.sleep(2)
        results["detected_s"] = round(time.time() - t0, 1)
        later = [t for t in read_times(store) if t >= t0 * 1000]
        if later:
            results["cycle2_reads"] = len(later)
            results["cycle2_s"] = round((later[-1] - later[0]) / 1000, 1)
        print(f"all {changed} listed by `fleetform drift` {results['detected_s']} s after they changed", file=sys.stderr)
    finally:
        fleet.stop()

    out_dir = Path(args.out)
    (out_dir / "drift.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# Drift found in the background, before anyone plans",
        "",
        f"A fleet (nats-server, moto, a coordinator, {args.workers} workers, on this machine) applies {n} `sim_object` "
        f"instances; the account allows {args.account:g} reads a second; the coordinator refreshes in the background "
        f"(`--refresh-every {args.every} --refresh-rate {args.rate:g}`). Binaries: `{bins}` (at {bench.head()}). "
        f"Generated by `bench/drift.py --n {n} --account {args.account:g} --rate {args.rate:g} --every {args.every} --workers {args.workers}`.",
        "",
        "| measure | seconds | floor s |",
        "| --- | ---: | ---: |",
        f"| apply of {n} | {results['apply_s']} | |",
        f"| first background cycle (reads every object; first read to last) | {results['cycle1_s']} | {floor:.0f} |",
        f"| {results['drifted']} objects changed outside, until `fleetform drift` lists them all | {results['detected_s']} | |",
    ]
    if "cycle2_s" in results:
        lines.append(f"| the cycle that found them ({results['cycle2_reads']} reads; first read to last) | {results['cycle2_s']} | {results['cycle2_reads'] / args.rate:.0f} |")
    (out_dir / "drift.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

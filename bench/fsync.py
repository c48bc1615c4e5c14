#!/usr/bin/env python3
"""JetStream's fsync policy, measured: a fleet (nats-server, moto, a
coordinator, 2 workers) applies N independent sim instances with the
server's default (`sync_interval` 2 min: acknowledged writes can be lost
on an OS crash or power loss) and with `sync_interval: always` (each write
fsynced before its ack). Prints fleet operations per second for each.

    bench/fsync.py [--n 1000] [--bin-dir target/release] [--runs 1]
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

POLICIES = [("default", ""), ("always", "sync_interval: always")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--bin-dir", default=str(bench.REPO / "target/release"))
    ap.add_argument("--tools", default=os.environ.get("FLEETFORM_TEST_TOOLS", str(bench.REPO / ".test-tools/venv/bin")))
    args = ap.parse_args()
    bin_dir = Path(args.bin_dir).resolve()
    ff = str(bin_dir / "fleetform")
    work = Path(tempfile.mkdtemp(prefix="fsync-bench-"))
    cli_config = bench.write_cli_config(work, bin_dir)
    try:
        for run in range(args.runs):
            for name, js in POLICIES:
                d = work / f"{name}-{run}"
                bench.generate("independent", args.n, d)
                store = bench.sim_store(d)
                env = dict(os.environ, TF_CLI_CONFIG_FILE=str(cli_config), TF_IN_AUTOMATION="1",
                           TF_VAR_store=str(store), TF_VAR_latency_ms="0", TF_VAR_cpu_ms="0",
                           CHECKPOINT_DISABLE="1")
                env.pop("FLEETFORM_COORDINATOR", None)
                fleet = bench.Fleet(str(bin_dir), args.tools, work / f"{name}-{run}-fleet", 2, env, jetstream=js)
                try:
                    env = fleet.client_env(env)
                    t0 = time.monotonic()
                    bench.run([ff] + bench.FF["apply"], d, env, timeout=900)
                    took = time.monotonic() - t0
                    made = bench.objects(store)
                    print(f"{name:8} n={args.n} apply {took:6.1f} s  {args.n / took:7.1f} ops/s  objects={made}",
                          flush=True)
                finally:
                    fleet.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

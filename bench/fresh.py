#!/usr/bin/env python3
"""Plans that do not wait on the cloud's rate limit (issue 34), side by
side with Terraform 1.11.

A cloud account allows so many reads a second, and every plan refreshes
every object. This benchmark models such an account with the `sim`
provider: `account_reads_per_second = R` (shared by every provider process
on the store; over it a call is refused with a throttling error and a
retry-after) and `rate_limit_per_second = 0.95 R` (each process waits for
its slot before a call, as cloud SDKs pace their calls a little below the
account's limit: Terraform does not retry a throttled read, and its one
provider process paced at exactly R was refused at the edge of a second).

1. fleetform (embedded) creates N `sim_object` instances (creates are not
   limited).
2. Terraform 1.11 plans with nothing to change, from the same state
   (`fleetform state pull` as its terraform.tfstate) against the same
   objects: it reads every object, at R a second.
3. fleetform plans with nothing to change, reading every object (the
   default, as Terraform).
4. fleetform plans again with `-refresh-max-age=10m`: the reads step 3
   recorded are young enough, so it reads none.

The floor of step 3 is (N - R) / R seconds (the account's limit, which
lets one second's worth through at once); Terraform's in step 2 is
N / 0.95 R (its one provider process's pace); step 4 has no read to wait
for. Usage:

    bench/fresh.py [--n 10000] [--reads 100] [--bin-dir target/release]

Writes bench/results/fresh.md and fresh.json; wall times depend on the
machine's load (the note says what else ran).
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


def config(store, n, reads):
    return bench.REQUIRED + f'''

provider "sim" {{
  store_dir                = "{store}"
  account_reads_per_second = {reads}
  rate_limit_per_second    = {reads * 0.95:g}
}}

resource "sim_object" "x" {{
  count = {n}
  name  = "x-${{count.index}}"
}}
'''


def timed(cmd, cwd, env, expect=(0,)):
    """Runs `cmd`, returns (wall seconds, output); fails unless its exit
    code is in `expect`."""
    start = time.monotonic()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    if out.returncode not in expect:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {out.returncode}:\n{(out.stdout + out.stderr)[-3000:]}")
    return wall, out.stdout + out.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--reads", type=float, default=100, help="the account's reads per second")
    ap.add_argument("--bin-dir", default=str(REPO / "target/release"))
    ap.add_argument("--terraform", default=shutil.which("terraform"))
    ap.add_argument("--out", default=str(REPO / "bench/results"))
    args = ap.parse_args()
    bins = Path(args.bin_dir).resolve()
    n, reads = args.n, args.reads
    work = Path(tempfile.mkdtemp(prefix="fleetform-fresh-"))
    store = work / "store"
    store.mkdir()
    ours = work / "fleetform"
    ours.mkdir()
    (ours / "main.tf").write_text(config(store, n, reads))
    env = dict(os.environ)
    env["PATH"] = f"{bins}:{env['PATH']}"
    ff = str(bins / "fleetform")
    # The account lets a second's worth through at once, then R a second.
    floor = max(0.0, n - reads) / reads
    results = {"n": n, "reads_per_second": reads, "floor_s": round(floor, 1),
               "bin_dir": str(bins), "rows": []}

    def row(system, step, wall, note=""):
        results["rows"].append({"system": system, "step": step, "wall_s": round(wall, 2), "note": note})
        print(f"{system:10} {step:40} {wall:8.2f} s  {note}", file=sys.stderr)

    wall, _ = timed([ff, "apply", "-auto-approve", "-no-color"], ours, env)
    row("fleetform", f"apply (creates {n})", wall, "not a target: each provider process paces its creates too")
    state = subprocess.run([ff, "state", "pull"], cwd=ours, env=env, capture_output=True, text=True, check=True).stdout

    if args.terraform:
        theirs = work / "terraform"
        theirs.mkdir()
        (theirs / "main.tf").write_text(config(store, n, reads))
        (theirs / "terraform.tfstate").write_text(state)
        rc = bench.write_cli_config(work, bins, "cli.tfrc")
        tenv = dict(os.environ, TF_CLI_CONFIG_FILE=str(rc), CHECKPOINT_DISABLE="1")
        version = subprocess.run([args.terraform, "version"], capture_output=True, text=True).stdout.split("\n")[0]
        results["terraform_version"] = version
        # The account's bucket refills in a second: start from a full one.
        time.sleep(1.5)
        wall, out = timed([args.terraform, "plan", "-detailed-exitcode", "-no-color", "-input=false"],
                          theirs, tenv)
        assert "No changes." in out, out[-2000:]
        row("terraform", "plan, nothing to change (reads all)", wall, version)
    else:
        print("SKIP: no terraform on PATH", file=sys.stderr)

    time.sleep(1.5)
    wall, out = timed([ff, "plan", "-detailed-exitcode", "-no-color"], ours, env)
    assert "No changes." in out, out[-2000:]
    row("fleetform", "plan, nothing to change (reads all)", wall)

    wall, out = timed([ff, "plan", "-detailed-exitcode", "-no-color", "-refresh-max-age=10m"], ours, env)
    assert "No changes." in out, out[-2000:]
    reused = next((l.strip() for l in out.splitlines() if l.strip().startswith("Reused ")), "")
    row("fleetform", "plan, -refresh-max-age=10m (fresh state)", wall, reused)

    out_dir = Path(args.out)
    (out_dir / "fresh.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# Plans that do not wait on the cloud's rate limit",
        "",
        f"{n} `sim_object` instances; the account allows {reads:g} reads a second "
        f"(`account_reads_per_second`; `rate_limit_per_second = {reads * 0.95:g}` paces each provider process): "
        f"reading every object takes at least {floor:.0f} s. Binaries: `{bins}` (at {bench.head()}); "
        f"{results.get('terraform_version', 'no Terraform')}. Generated by `bench/fresh.py --n {n} --reads {reads:g}`.",
        "",
        "| system | step | wall s | floor s | note |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for r in results["rows"]:
        shown = ""
        if "reads all" in r["step"]:
            shown = f"{n / (0.95 * reads):.0f}" if r["system"] == "terraform" else f"{floor:.0f}"
        lines.append(f"| {r['system']} | {r['step']} | {r['wall_s']} | {shown} | {r['note']} |")
    (out_dir / "fresh.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Failure isolation side by side with Terraform 1.11 (issue 34): a layer
of N `sim_object` instances feeding a second layer of N instance by
instance (`sim_object.a[count.index]`), with a share of the first layer's
creates refused by the simulated cloud (a name starting with `refused-`) in the first
apply only. Counts how many objects each tool creates in that apply, then
applies again with the names fixed until a plan has no changes: how many
applies it takes, and what each created.

Usage: bench/isolation.py [--n 1000] [--fail 0.05] [--bin-dir target/release]
Writes bench/results/isolation.md and isolation.json. Counts do not depend
on the machine's load; the wall times beside them do, and the note says on
what they were taken.
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


def config(store, n, bad):
    bad_list = ", ".join(str(i) for i in sorted(bad))
    return f'''
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir = "{store}"
}}

locals {{
  bad = [{bad_list}]
}}

resource "sim_object" "a" {{
  count = {n}
  name  = contains(local.bad, count.index) ? "refused-a-${{count.index}}" : "a-${{count.index}}"
}}

resource "sim_object" "b" {{
  count = {n}
  name  = "b-of-${{sim_object.a[count.index].name}}"
}}
'''


def layers(store):
    a = b = 0
    for p in store.iterdir():
        if p.suffix != ".json":
            continue
        name = json.loads(p.read_text()).get("name", "")
        if name.startswith("b-of-"):
            b += 1
        else:
            a += 1
    return a, b


def apply(cmd, cwd, env):
    start = time.monotonic()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return out.returncode, time.monotonic() - start, out.stdout + out.stderr


def converge(name, base_cmd, init_cmd, d, env, store, n, bad):
    """Applies with `bad` refused once, then with every name valid until
    nothing is left to do. Returns one row per apply."""
    rows = []
    (d / "main.tf").write_text(config(store, n, bad))
    if init_cmd:
        subprocess.run(init_cmd, cwd=d, env=env, capture_output=True, check=False)
    code, wall, out = apply(base_cmd, d, env)
    a, b = layers(store)
    rows.append({"apply": 1, "exit": code, "wall_s": round(wall, 2), "a": a, "b": b})
    (d / "main.tf").write_text(config(store, n, []))
    for i in range(2, 6):
        before = layers(store)
        code, wall, out = apply(base_cmd, d, env)
        a, b = layers(store)
        rows.append({"apply": i, "exit": code, "wall_s": round(wall, 2), "a": a, "b": b,
                     "created": (a - before[0]) + (b - before[1])})
        if code == 0 and a == n and b == n:
            break
    print(f"{name}: {rows}", file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--fail", type=float, default=0.05, help="share of the first layer refused in the first apply")
    ap.add_argument("--bin-dir", default=str(REPO / "target/release"))
    ap.add_argument("--terraform", default=shutil.which("terraform"))
    ap.add_argument("--out", default=str(REPO / "bench/results"))
    args = ap.parse_args()
    bins = Path(args.bin_dir).resolve()
    n = args.n
    step = max(1, round(1 / args.fail)) if args.fail > 0 else n + 1
    bad = [i for i in range(n) if i % step == step // 2]
    work = Path(tempfile.mkdtemp(prefix="fleetform-isolation-"))
    results = {"n": n, "failing": len(bad), "bin_dir": str(bins), "systems": {}}

    # fleetform, embedded.
    d = work / "fleetform"
    d.mkdir()
    store = work / "fleetform-store"
    store.mkdir()
    env = dict(os.environ)
    env["PATH"] = f"{bins}:{env['PATH']}"
    results["systems"]["fleetform"] = converge(
        "fleetform", [str(bins / "fleetform"), "apply", "-auto-approve", "-no-color"], None, d, env, store, n, bad)

    # Terraform 1.11 with the same provider binary, default parallelism.
    if args.terraform:
        d = work / "terraform"
        d.mkdir()
        store = work / "terraform-store"
        store.mkdir()
        rc = bench.write_cli_config(work, bins, "cli.tfrc")
        tenv = dict(os.environ, TF_CLI_CONFIG_FILE=str(rc), CHECKPOINT_DISABLE="1")
        version = subprocess.run([args.terraform, "version"], capture_output=True, text=True).stdout.split("\n")[0]
        results["terraform_version"] = version
        results["systems"]["terraform"] = converge(
            "terraform", [args.terraform, "apply", "-auto-approve", "-no-color"], None, d, tenv, store, n, bad)
    else:
        print("SKIP: no terraform on PATH", file=sys.stderr)

    out = Path(args.out)
    (out / "isolation.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# Failure isolation: one failed instance, what else is held back",
        "",
        f"{n} `sim_object.a` feeding {n} `sim_object.b` instance by instance; {len(bad)} creates of `a` refused in the first apply only "
        f"(binaries: `{bins}`; {results.get('terraform_version', 'no Terraform')}). Generated by `bench/isolation.py`.",
        "",
        "| system | apply | exit | a objects | b objects | created | wall s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, rows in results["systems"].items():
        for r in rows:
            lines.append(f"| {name} | {r['apply']} | {r['exit']} | {r['a']} | {r['b']} | {r.get('created', r['a'] + r['b'])} | {r['wall_s']} |")
    (out / "isolation.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A fleet whose hosts are milliseconds apart.

    bench/network.py [--rtts 0,5,50] [--chain 1000] [--independent 10000]
                     [--terraform [--terraform-only]] [--bin-dir target/release]
                     [--out bench/results/network]

Every other benchmark runs the fleet on loopback: its coordinator, workers,
NATS and object store answer each other in microseconds. Here each of them
is a "host" of its own, `RTT` milliseconds from the others: every
connection of the coordinator (to NATS, to the object store) and of each
of the 2 workers (to NATS) goes through a link of its own in
`fleetform-linkproxy` (the tests crate's simulated link: each chunk of
bytes delivered half the round trip later, in each direction, in order).
This machine's kernel has no `netem`, so the proxy is the network. The CLI
stays on the coordinator's host.

For each round trip it measures:
- a chain of `--chain` links (each instance reads the one before), planned,
  applied (the saved plan) and destroyed, traced: each link's time and
  what it is made of (bench/hops.py), and from those the number of round
  trips a link costs (its time's growth over the 0 ms link, over the
  round trip);
- `--independent` instances, planned, applied (the saved plan) and
  destroyed, untimed by traces: wall time and throughput.

With `--terraform`, Terraform 1.11 plans and applies the same chain on one
host (it has no network between a coordinator and workers: only its
provider's API calls, which have no latency here), as the peer; with
`--terraform-only` too, only that, added to the results already in --out.

It writes RESULTS.md and results.json under --out.
"""

import argparse
import datetime
import functools
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import bench
import hops

PHASES = [
    ("plan", ["plan", "-input=false", "-out=net.tfplan"]),
    ("apply", ["apply", "-input=false", "net.tfplan"]),
    ("destroy", ["destroy", "-auto-approve", "-input=false"]),
]
EXPECTED = {"plan": lambda n: 0, "apply": lambda n: n, "destroy": lambda n: 0}


def base_env(work, bin_dir):
    env = dict(os.environ, TF_CLI_CONFIG_FILE=str(bench.write_cli_config(work, bin_dir)), TF_IN_AUTOMATION="1",
               CHECKPOINT_DISABLE="1")
    env.pop("TF_LOG", None)
    env.pop("FLEETFORM_COORDINATOR", None)
    return env


class PhaseFailed(RuntimeError):
    """A phase failed or ran out of time; `rows` are those done before it."""

    def __init__(self, message, rows):
        super().__init__(message)
        self.rows = rows


def phases(cmd_prefix, d, env, store, count, fleet=None, names=PHASES):
    """Runs each phase; a list of {phase, wall_s, per_s, coordinator and
    worker CPU}, or raises PhaseFailed with the rows done so far."""
    out = []
    try:
        return run_phases(cmd_prefix, d, env, store, count, fleet, names, out)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        raise PhaseFailed(str(e), out) from e


def run_phases(cmd_prefix, d, env, store, count, fleet, names, out):
    for phase, args in names:
        wall, kinds = bench.run(cmd_prefix + args, d, env, timeout=bench.TERRAFORM_LIMIT_S, fleet=fleet)
        found = bench.objects(store)
        if found != EXPECTED[phase](count):
            raise RuntimeError(f"{found} objects after {phase}, expected {EXPECTED[phase](count)}")
        row = {"phase": phase, "wall_s": round(wall, 3), "per_s": round(count / wall, 1)}
        for part in ("coordinator", "worker", "nats", "provider", "link", "main"):
            if part in kinds:
                row[f"{part}_cpu_s"] = round(kinds[part]["cpu_s"], 2)
        out.append(row)
        print(f"  {phase:8} {wall:8.2f} s  {row['per_s']:8.1f}/s  "
              f"coordinator cpu {row.get('coordinator_cpu_s', 0):.2f} s  workers cpu {row.get('worker_cpu_s', 0):.2f} s",
              flush=True)
    return out


def failed(e):
    print(f"  FAILED: {str(e)[-300:]}", flush=True)
    return {"error": str(e)[-500:], "rows": getattr(e, "rows", [])}


def independent(args, work, env, rtt):
    d = work / f"independent-{args.independent}-{rtt}"
    bench.generate("independent", args.independent, d)
    store = bench.sim_store(d)
    env = dict(env, TF_VAR_store=str(store), TF_VAR_latency_ms="0", TF_VAR_cpu_ms="0")
    fleet = None
    try:
        fleet = bench.Fleet(args.bin_dir, args.tools, work / f"independent-{rtt}-fleet", 2, env, rtt_ms=rtt,
                            coordinator_args="--no-direct-dispatch" if args.no_direct_dispatch else "")
        return {"rows": phases([args.ff], d, fleet.client_env(env), store, args.independent, fleet)}
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        return failed(e)
    finally:
        if fleet:
            fleet.stop()
            shutil.rmtree(fleet.root, ignore_errors=True)
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(store, ignore_errors=True)


def terraform_chain(args, work, env):
    """Terraform's plan and apply of the chain. Its destroy is not timed:
    the destroy of a 1,000-link chain did not end within 10 minutes here
    (2026-11-29), and the sim store is thrown away instead."""
    d = work / f"terraform-chain-{args.chain}"
    bench.generate("chain", args.chain, d)
    store = bench.sim_store(d)
    env = dict(env, TF_VAR_store=str(store), TF_VAR_latency_ms="0", TF_VAR_cpu_ms="0")
    try:
        bench.run([args.terraform, "get", "-no-color"], d, env, timeout=300)
        return {"rows": phases([args.terraform], d, env, store, args.chain, names=PHASES[:2])}
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        return failed(e)
    finally:
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(store, ignore_errors=True)


# Round trips between hosts on the critical path of one link, by design:
# every link is dispatched (coordinator -> NATS -> worker: 1) and its
# result comes back (worker -> NATS -> coordinator: 1); a create or an
# update also claims its task. Through the queue the worker asks for the
# claim (worker -> NATS -> coordinator: 1, the claim's batch written to
# the object store: 1, the answer back through NATS: 1); sent directly to
# the worker that ran the link before (the default), the coordinator
# writes the claim before it sends the task (1).
def design_round_trips(direct):
    return {"plan": 2, "apply": 3 if direct else 5, "destroy": 2}

# Independent instances: the round trips of each instance's tasks in a
# command (a plan: its plan task; an apply of the saved plan: its create;
# a destroy: its refresh, the provider's plan of its destroy, its delete),
# spread over the tasks in flight at once: 2 workers, 64 each by default.
INDEPENDENT_ROUND_TRIPS = {"plan": 2, "apply": 5, "destroy": 6}
SLOTS = 2 * 64


def round_trips(chains, rtt, phase):
    """How many round trips a link of `phase` costs at `rtt`: its median's
    growth over the 0 ms link's, over the round trip."""
    if not rtt or 0 not in chains:
        return None
    at = lambda r: next((p["hop_ms"] for p in chains[r].get("phases", []) if p["phase"] == phase), None)  # noqa: E731
    if at(rtt) is None or at(0) is None:
        return None
    return (at(rtt) - at(0)) / rtt


def report(args, out):
    lines = [f"# A fleet whose hosts are milliseconds apart, {out['date']}", "",
             f"Machine: {out['machine']}. Binaries: `{args.bin_dir}`. Regenerate: `{out['command']}`.", "",
             "The coordinator, 2 workers, NATS and the object store (moto) are hosts `RTT` apart: each connection "
             "of the coordinator (to NATS, to the store) and of each worker (to NATS) goes through a link of its own "
             "in `fleetform-linkproxy` (half the round trip each way). RTT 0 is through the same proxies with no "
             "delay; the `sim` provider answers at once (latency 0), so what is left is fleetform's.", ""]
    chains = {r: v["chain"] for r, v in out["rtts"].items()}
    # Results from before direct dispatch say nothing of it: queue only.
    direct = out.get("direct_dispatch", False)
    design = design_round_trips(direct)
    tf = out.get("terraform")
    tf_apply = None
    if tf:
        tf_apply = next((r["wall_s"] for r in tf.get("rows", []) if r["phase"] == "apply"), None)
    lines += [f"## A chain of {args.chain:,} links", "",
              "Each link: dispatch → worker (the task over NATS), claim wait (a create waits for its claim from "
              "the coordinator, asked alongside its plan call), provider calls, the worker's end (its result's "
              "PubAck) to the next dispatch. Medians in ms, from the spans fleetform exports (traced runs). "
              "Round trips per link: the link's growth over the 0 ms link, divided by the RTT. Floor: the 0 ms "
              "link plus the round trips of the design (below) times the RTT.", "",
              "Round trips a link costs by design: every link is dispatched (coordinator → NATS → worker: 1) and "
              "its result comes back (worker → NATS → coordinator: 1); a create or an update also has its task "
              "claimed, which keeps a task that JetStream delivers twice from running twice (docs/durability.md). "
              + ("Here each link after the first is sent to the worker that ran the link before, its claim "
                 "written to the object store first (1; that write is in the last column, before the next "
                 "dispatch): plan and destroy links cost 2, apply links 3."
                 if direct else
                 "Here (`--no-direct-dispatch`) every task goes through the queue and the worker asks for the "
                 "claim (worker → NATS → coordinator, the claim's batch written to the object store, the answer "
                 "back: 3): plan and destroy links cost 2, apply links 5."), "",
              "| RTT ms | command | wall s | link ms | floor ms | dispatch → worker ms | claim wait ms | "
              "provider calls ms | worker end → next dispatch ms | round trips per link | vs Terraform's apply |",
              "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for rtt, h in sorted(chains.items()):
        if "error" in h:
            lines.append(f"| {rtt} | failed: {h['error'][-200:]} | | | | | | | | | |")
            continue
        for p in h["phases"]:
            n = round_trips(chains, rtt, p["phase"])
            ratio = f"{tf_apply / p['wall_s']:.2f}×" if tf_apply and p["phase"] == "apply" else ""
            base = next((q["hop_ms"] for q in chains.get(0, {}).get("phases", []) if q["phase"] == p["phase"]), None)
            floor = "" if base is None else f"{base + design[p['phase']] * rtt:.2f}"
            lines.append(f"| {rtt} | {p['phase']} | {p['wall_s']:.2f} | {p['hop_ms']:.2f} | {floor} | {p['to_worker_ms']:.2f} | "
                         f"{p.get('claim_wait_ms', 0):.2f} | {p['calls_ms']:.2f} | {p['back_ms']:.2f} | "
                         f"{'' if n is None else f'{n:.2f}'} | {ratio} |")
    if tf:
        done = ", ".join(f"{r['phase']} {r['wall_s']:.2f} s" for r in tf.get("rows", []))
        when = f", measured {tf['date']} by `{tf.get('command', '')}`" if "date" in tf else ""
        lines += ["", f"{tf.get('version', 'Terraform')} on one host, the same chain and provider "
                  f"(`-parallelism=10`; its destroy not timed{when}): {done or 'nothing'}"
                  + (f"; failed: {tf['error'][-200:]}" if "error" in tf else "") + "."]
    lines += ["", f"## {args.independent:,} independent instances", "",
              "Floor: each instance's round trips (a plan 2; an apply of the saved plan 5, a create's; a destroy 6: "
              f"its refresh, the provider's plan of its destroy, its delete) times the RTT, over the {SLOTS} tasks "
              "the two workers run at once by default (`--concurrency` 64 each).", "",
              "| RTT ms | command | wall s | floor s | instances/s | coordinator CPU s | workers CPU s | NATS CPU s | links CPU s |",
              "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for rtt, v in sorted(out["rtts"].items()):
        ind = v["independent"]
        if "error" in ind:
            lines.append(f"| {rtt} | failed: {ind['error'][-200:]} | | | | | | | |")
            continue
        for r in ind["rows"]:
            floor = args.independent * INDEPENDENT_ROUND_TRIPS[r["phase"]] * rtt / 1000 / SLOTS
            lines.append(f"| {rtt} | {r['phase']} | {r['wall_s']:.2f} | {floor:.2f} | {r['per_s']:.0f} | "
                         f"{r.get('coordinator_cpu_s', 0):.2f} | {r.get('worker_cpu_s', 0):.2f} | "
                         f"{r.get('nats_cpu_s', 0):.2f} | {r.get('link_cpu_s', 0):.2f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtts", default="0,5,50", help="round trips between hosts, in ms")
    ap.add_argument("--chain", type=int, default=1000)
    ap.add_argument("--independent", type=int, default=10000)
    ap.add_argument("--terraform", nargs="?", const="", default=None,
                    help="also run Terraform 1.11 (the one on PATH, or this path) on the chain")
    ap.add_argument("--terraform-only", action="store_true",
                    help="run only Terraform's chain and put it into the results already in --out")
    ap.add_argument("--report-only", action="store_true",
                    help="write RESULTS.md again from the results.json in --out, running nothing")
    ap.add_argument("--no-direct-dispatch", action="store_true",
                    help="run the coordinator with --no-direct-dispatch: every task through the queue")
    ap.add_argument("--bin-dir", default=str(bench.REPO / "target/release"))
    ap.add_argument("--tools", default=str(bench.REPO / ".test-tools/venv/bin"))
    ap.add_argument("--out", default=str(bench.REPO / "bench/results/network"))
    args = ap.parse_args()
    if args.report_only:
        dest = Path(args.out)
        out = json.loads((dest / "results.json").read_text())
        out["rtts"] = {float(k) if "." in k else int(k): v for k, v in out["rtts"].items()}
        (dest / "RESULTS.md").write_text(report(args, out))
        print(f"wrote {dest / 'RESULTS.md'}")
        return
    for b in ("fleetform", "fleetform-coordinator", "fleetform-worker", "fleetform-linkproxy"):
        if not (Path(args.bin_dir) / b).exists():
            raise SystemExit(f"no {b} in {args.bin_dir}: cargo build --release --workspace --bins")
    if args.terraform_only and args.terraform is None:
        raise SystemExit("--terraform-only runs Terraform's chain: give --terraform too")
    args.ff = str((Path(args.bin_dir) / "fleetform").resolve())
    work = bench.REPO / "bench/work/network"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = base_env(work, args.bin_dir)
    out = {"date": datetime.date.today().isoformat(),
           "machine": f"{platform.node()}, {os.cpu_count()} cores, Linux {platform.release()}",
           "command": "bench/network.py " + " ".join(sys.argv[1:]), "rtts": {},
           "direct_dispatch": not args.no_direct_dispatch}
    coordinator_args = "--no-direct-dispatch" if args.no_direct_dispatch else ""
    if args.terraform is not None:
        binary, version, missing = bench.find_terraform(args.terraform or None)
        if binary:
            args.terraform = binary
            print(f"terraform chain {args.chain} ({version})", flush=True)
            out["terraform"] = dict(terraform_chain(args, work, env), version=version)
        else:
            print(f"SKIP: {missing}", flush=True)
    dest = Path(args.out)
    if args.terraform_only:
        if "terraform" not in out:
            raise SystemExit("--terraform-only: Terraform did not run (see above)")
        earlier = json.loads((dest / "results.json").read_text())
        earlier["terraform"] = dict(out["terraform"], date=out["date"], command=out["command"])
        out = earlier
        out["rtts"] = {float(k) if "." in k else int(k): v for k, v in out["rtts"].items()}
        args.rtts = ""
    for rtt in [float(x) if "." in x else int(x) for x in args.rtts.split(",") if x]:
        print(f"rtt {rtt} ms: chain {args.chain}", flush=True)
        fleet = functools.partial(bench.Fleet, rtt_ms=rtt, coordinator_args=coordinator_args)
        h = hops.measure(fleet, args, args.ff, work, env, bench.generate,
                         bench.sim_store, bench.objects, args.chain)
        for p in h.get("phases", []):
            print(f"  {p['phase']:8} {p['wall_s']:8.2f} s  link {p['hop_ms']:.2f} ms  to worker {p['to_worker_ms']:.2f}"
                  f"  claim wait {p.get('claim_wait_ms', 0):.2f}  calls {p['calls_ms']:.2f}  back {p['back_ms']:.2f}",
                  flush=True)
        if "error" in h:
            print(f"  FAILED: {h['error'][-300:]}", flush=True)
        print(f"rtt {rtt} ms: independent {args.independent}", flush=True)
        out["rtts"][rtt] = {"chain": h, "independent": independent(args, work, env, rtt)}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "results.json").write_text(json.dumps(out, indent=1, default=str) + "\n")
    (dest / "RESULTS.md").write_text(report(args, out))
    print(f"wrote {dest / 'RESULTS.md'}")


if __name__ == "__main__":
    main()

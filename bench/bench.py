#!/usr/bin/env python3
"""fleetform's benchmark: the same configurations and provider binaries
through fleetform (embedded mode) and Terraform 0.15, side by side.

    bench/bench.py [--quick] [--sizes 1000,10000] [--shapes independent,chain]
                   [--latencies 0,50] [--systems fleetform,terraform,terraform-p256]
                   [--bin-dir target/release] [--out bench/results]

For every shape, size and provider latency it generates a configuration
of `sim_object` instances (bench/work/...), then for each system runs, in
order, a plan with no state, an apply, a plan with nothing to change and a
destroy. Each command runs in its own session; a sampler reads /proc every
20 ms for every process of that session (the CLI or Terraform, and the
provider plugins they start) and keeps each one's peak RSS (VmHWM) and CPU
time. Terraform is skipped where its time, extrapolated quadratically from
the size before (its graph walk grows so), would pass 10 minutes.

It writes bench/results/RESULTS.md (a table per shape and latency, with
the ratio to Terraform at its default -parallelism=10), results.json, and
a plot of apply time against size (log axes, one line per system), drawn
with matplotlib from a venv the script makes in .test-tools/bench-venv.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
TERRAFORM_LIMIT_S = 600
# A command whose processes hold more than this (resident, together) is
# stopped and reported, before the kernel's OOM killer picks a victim on
# the machine (planning ten 1,000-long chains once took 24 GB here).
MEMORY_LIMIT = int(os.environ.get("BENCH_MEMORY_LIMIT_GB", "12")) * 2**30

SIM = """terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "store" { type = string }
variable "latency_ms" {
  type    = number
  default = 0
}
variable "cpu_ms" {
  type    = number
  default = 0
}

provider "sim" {
  store_dir  = var.store
  latency_ms = var.latency_ms
  cpu_ms     = var.cpu_ms
}
"""

# Every module names its providers' sources, as Terraform requires.
REQUIRED = """terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}
"""

CHAIN_MODULE = REQUIRED + """variable "chain" { type = number }
variable "length" { type = number }
"""


def chain_module(length):
    """A module of `length` resources, each depending on the one before."""
    out = [CHAIN_MODULE]
    for i in range(length):
        prev = f'\n  tags = {{ prev = sim_object.c{i - 1}.id }}' if i else ""
        out.append(
            f'resource "sim_object" "c{i}" {{\n  name = "chain-${{var.chain}}-{i}"{prev}\n}}\n'
        )
    return "".join(out)


def generate(shape, n, root):
    """Writes the configuration of `shape` with `n` instances under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    body = SIM
    if shape == "independent":
        body += f'resource "sim_object" "x" {{\n  count = {n}\n  name  = "x-${{count.index}}"\n}}\n'
    elif shape == "fanout":
        body += 'resource "sim_object" "net" {\n  name = "net"\n}\n'
        body += (
            f'resource "sim_object" "server" {{\n  count = {n - 1}\n'
            '  name  = "server-${count.index}"\n  tags  = { net = sim_object.net.id }\n}\n'
        )
    elif shape == "fanin":
        body += f'resource "sim_object" "x" {{\n  count = {n - 1}\n  name  = "x-${{count.index}}"\n}}\n'
        body += (
            'resource "sim_object" "all" {\n  name = "all"\n'
            "  tags = { n = length(sim_object.x) }\n  depends_on = [sim_object.x]\n}\n"
        )
    elif shape == "chain":
        length = min(n, 1000)
        (root / "chain").mkdir(exist_ok=True)
        (root / "chain" / "main.tf").write_text(chain_module(length))
        body += (
            f'module "chain" {{\n  source = "./chain"\n  count  = {n // length}\n'
            f"  chain  = count.index\n  length = {length}\n}}\n"
        )
    elif shape == "mix":
        # A shared network, services by for_each (10 instances each, in a
        # module) referencing it, and one instance reading them all.
        services = max(1, (n - 2) // 10)
        (root / "svc").mkdir(exist_ok=True)
        (root / "svc" / "main.tf").write_text(
            REQUIRED + 'variable "net" { type = string }\nvariable "name" { type = string }\n'
            'resource "sim_object" "i" {\n  count = 10\n  name  = "${var.name}-${count.index}"\n'
            "  tags  = { net = var.net, port = tostring(8000 + count.index) }\n}\n"
            'output "first" { value = sim_object.i[0].id }\n'
        )
        body += 'resource "sim_object" "net" {\n  name = "net"\n}\n'
        body += (
            f'module "svc" {{\n  source   = "./svc"\n  for_each = {{ for i in range({services}) : "s${{i}}" => i }}\n'
            "  net      = sim_object.net.id\n  name     = each.key\n}\n"
        )
        body += (
            'resource "sim_object" "catalog" {\n  name = "catalog"\n'
            "  tags = { services = tostring(length(module.svc)) }\n}\n"
        )
    else:
        raise SystemExit(f"unknown shape {shape}")
    (root / "main.tf").write_text(body)


def instances(shape, n):
    if shape == "chain":
        length = min(n, 1000)
        return (n // length) * length
    if shape == "mix":
        return 2 + max(1, (n - 2) // 10) * 10
    return n


class Sampler(threading.Thread):
    """Peak RSS and CPU time of every process in session `sid`."""

    def __init__(self, sid):
        super().__init__(daemon=True)
        self.sid = sid
        self.procs = {}  # pid -> [name, peak_rss_bytes, cpu_ticks]
        self.stop = threading.Event()
        self.over_limit = None

    def sample(self):
        resident = 0
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = open(f"/proc/{entry.name}/stat").read()
                rest = stat[stat.rindex(")") + 2 :].split()
                if int(rest[3]) != self.sid:  # field 6: session id
                    continue
                name = stat[stat.index("(") + 1 : stat.rindex(")")]
                cpu = int(rest[11]) + int(rest[12])  # utime + stime
                hwm = 0
                for line in open(f"/proc/{entry.name}/status"):
                    if line.startswith("VmHWM:"):
                        hwm = int(line.split()[1]) * 1024
                    elif line.startswith("VmRSS:"):
                        resident += int(line.split()[1]) * 1024
            except (OSError, ValueError, IndexError):
                continue
            p = self.procs.setdefault(int(entry.name), [name, 0, 0])
            p[1] = max(p[1], hwm)
            p[2] = max(p[2], cpu)
        if resident > MEMORY_LIMIT and self.over_limit is None:
            self.over_limit = resident
            try:
                os.killpg(self.sid, signal.SIGKILL)
            except OSError:
                pass

    def run(self):
        while not self.stop.is_set():
            self.sample()
            time.sleep(0.02)


def run(cmd, cwd, env, timeout):
    """Runs `cmd`; returns wall seconds and per-kind process figures."""
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    sampler = Sampler(proc.pid)
    sampler.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    wall = time.monotonic() - start
    sampler.stop.set()
    sampler.join()
    if sampler.over_limit is not None:
        raise RuntimeError(f"stopped after {wall:.0f} s: its processes held {sampler.over_limit / 2**30:.1f} GB (BENCH_MEMORY_LIMIT_GB)")
    if proc.returncode != 0:
        tail = out.decode(errors="replace")[-3000:]
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{tail}")
    kinds = {}
    for name, rss, cpu in sampler.procs.values():
        kind = "provider" if name.startswith("terraform-provi") else "main"
        k = kinds.setdefault(kind, {"processes": 0, "peak_rss_mb": 0.0, "cpu_s": 0.0})
        k["processes"] += 1
        k["peak_rss_mb"] = max(k["peak_rss_mb"], rss / 2**20)
        k["cpu_s"] += cpu / TICK
    return wall, kinds


def systems(args, terraform):
    """(name, command for a phase, concurrency, extra environment)."""
    ff = str((Path(args.bin_dir) / "fleetform").resolve())
    out = []
    for s in args.systems:
        if s == "fleetform":
            out.append((s, lambda phase: [ff] + FF[phase], 256, {}))
        elif s == "fleetform-1proc":
            # One provider process, as before --provider-processes.
            out.append((s, lambda phase: [ff] + FF[phase], 256, {"FLEETFORM_PROVIDER_PROCESSES": "1"}))
        elif s.startswith("terraform") and terraform:
            p = int(s.split("-p")[1]) if "-p" in s else 10
            out.append((s, lambda phase, p=p: [terraform] + TF[phase] + [f"-parallelism={p}"], p, {}))
    return out


FF = {
    "plan": ["plan", "-input=false"],
    "apply": ["apply", "-auto-approve", "-input=false"],
    "replan": ["plan", "-input=false", "-detailed-exitcode"],
    "destroy": ["destroy", "-auto-approve", "-input=false"],
}
TF = {
    "plan": ["plan", "-input=false", "-lock=false", "-no-color"],
    "apply": ["apply", "-auto-approve", "-input=false", "-lock=false", "-no-color"],
    "replan": ["plan", "-input=false", "-lock=false", "-no-color", "-detailed-exitcode"],
    "destroy": ["destroy", "-auto-approve", "-input=false", "-lock=false", "-no-color"],
}
# In this order; the re-plan must find nothing to do (-detailed-exitcode
# exits 2 when it finds changes, which fails the run).
PHASES = ["plan", "apply", "replan", "destroy"]
# Objects in the sim store after each phase, for `n` instances.
EXPECTED = {"plan": lambda n: 0, "apply": lambda n: n, "replan": lambda n: n, "destroy": lambda n: 0}


def objects(store):
    """Objects in a sim store: one JSON file each."""
    return sum(1 for p in store.iterdir() if p.suffix == ".json")


def find_terraform():
    out = subprocess.run(
        ["bash", str(REPO / "tests/terraform_0_15.sh")], capture_output=True, text=True
    )
    last = (out.stdout.strip().splitlines() or [""])[-1]
    if out.returncode != 0 or last.startswith("SKIP") or not last:
        print(f"Terraform 0.15 not available: {last or out.stderr.strip()}", file=sys.stderr)
        return None
    return last


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a short form, under 5 minutes: 1,000 and 10,000 independent and chained instances, 1,000 at 50 ms, 1,000 with a CPU-bound provider")
    ap.add_argument("--sizes", default="1000,10000,50000,100000")
    ap.add_argument("--shapes", default="independent,fanout,fanin,chain,mix")
    ap.add_argument("--latencies", default="0,50")
    ap.add_argument("--cpu-ms", default="2", help="provider CPU per call of the CPU-bound scenario (independent instances, sizes up to 10,000); 0: none")
    ap.add_argument("--systems", default="fleetform,fleetform-1proc,terraform,terraform-p256")
    ap.add_argument("--bin-dir", default=str(REPO / "target/release"))
    ap.add_argument("--out", default=str(REPO / "bench/results"))
    ap.add_argument("--work", default=str(REPO / "bench/work"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cpu = int(args.cpu_ms)
    # Scenarios: (shape, latency ms, provider CPU ms per call, sizes, systems).
    systems_all = args.systems.split(",")
    plain = [x for x in systems_all if x != "fleetform-1proc"]
    if args.quick:
        scenarios = [
            ("independent", 0, 0, [1000, 10000], plain),
            # Terraform 0.15 took 339 s to apply one 1,000-long chain here
            # and did not destroy it in 8 minutes: the full form only.
            ("chain", 0, 0, [1000, 10000], ["fleetform"]),
            ("independent", 50, 0, [1000], plain),
            ("independent", 0, 2, [1000], systems_all),
        ]
    else:
        scenarios = [
            (shape, latency, 0, sizes, plain)
            for shape in args.shapes.split(",")
            for latency in (int(x) for x in args.latencies.split(","))
        ]
        if cpu:
            scenarios.append(("independent", 0, cpu, [n for n in sizes if n <= 10000], systems_all))
    args.systems = systems_all
    if not (Path(args.bin_dir) / "fleetform").exists():
        raise SystemExit(f"no fleetform in {args.bin_dir}: cargo build --release --workspace --bins")
    terraform = find_terraform() if any(s.startswith("terraform") for s in args.systems) else None
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    cli_config = work / "terraformrc"
    work.mkdir(parents=True)
    cli_config.write_text(
        'provider_installation {\n  dev_overrides {\n'
        f'    "fleetform/sim" = "{Path(args.bin_dir).resolve()}"\n  }}\n  direct {{}}\n}}\n'
    )
    results = []
    for shape, latency, cpu_ms, ns, names in scenarios:
        tf_time = {}
        for n in ns:
            count = instances(shape, n)
            for name, command, concurrency, extra_env in systems(args, terraform):
                if name not in names:
                    continue
                key = {"shape": shape, "latency_ms": latency, "cpu_ms": cpu_ms, "n": count, "system": name}
                label = f"{shape:11} {latency:3} ms {cpu_ms:2} cpu {count:7} {name:15}"
                if name.startswith("terraform") and name in tf_time:
                    prev_n, prev_t = tf_time[name]
                    guess = prev_t * (count / prev_n) ** 2
                    if guess > TERRAFORM_LIMIT_S:
                        results.append(dict(key, skipped=f"about {guess / 60:.0f} min expected (quadratic from {prev_n})"))
                        print(f"{label} skipped (~{guess / 60:.0f} min)", flush=True)
                        continue
                d = work / f"{shape}-{count}-{latency}-{cpu_ms}-{name}"
                generate(shape, n, d)
                store = d / "store"
                store.mkdir()
                env = dict(os.environ, TF_CLI_CONFIG_FILE=str(cli_config), TF_IN_AUTOMATION="1",
                           TF_VAR_store=str(store), TF_VAR_latency_ms=str(latency), TF_VAR_cpu_ms=str(cpu_ms),
                           CHECKPOINT_DISABLE="1", **extra_env)
                env.pop("TF_LOG", None)
                env.pop("FLEETFORM_COORDINATOR", None)
                if name.startswith("terraform") and shape in ("chain", "mix"):
                    # Local modules: Terraform wants them "installed"
                    # (`get`, not `init`, which would look the
                    # dev_overrides provider up in its registry). Not timed.
                    run([terraform, "get", "-no-color"], d, env, timeout=300)
                for phase in PHASES:
                    try:
                        wall, kinds = run(command(phase), d, env, timeout=TERRAFORM_LIMIT_S)
                    except subprocess.TimeoutExpired:
                        results.append(dict(key, phase=phase, error=f"did not finish within {TERRAFORM_LIMIT_S} s"))
                        print(f"{label} {phase:8} did not finish within {TERRAFORM_LIMIT_S} s", flush=True)
                        break
                    except RuntimeError as e:
                        results.append(dict(key, phase=phase, error=str(e)[-500:]))
                        print(f"{label} {phase:8} FAILED: {str(e)[-300:]}", flush=True)
                        break
                    found = objects(store)
                    if found != EXPECTED[phase](count):
                        results.append(dict(key, phase=phase, error=f"{found} objects after {phase}, expected {EXPECTED[phase](count)}"))
                        print(f"{label} {phase:8} WRONG: {found} objects", flush=True)
                        break
                    main_ = kinds.get("main", {})
                    prov = kinds.get("provider", {})
                    r = dict(key, phase=phase, wall_s=round(wall, 3), per_s=round(count / wall, 1),
                             main_rss_mb=round(main_.get("peak_rss_mb", 0), 1), main_cpu_s=round(main_.get("cpu_s", 0), 2),
                             provider_processes=prov.get("processes", 0),
                             provider_rss_mb=round(prov.get("peak_rss_mb", 0), 1), provider_cpu_s=round(prov.get("cpu_s", 0), 2),
                             concurrency=concurrency)
                    results.append(r)
                    print(f"{label} {phase:8} {wall:8.2f} s  rss {r['main_rss_mb']:7.1f} MB  cpu {r['main_cpu_s']:6.2f} s  "
                          f"providers {r['provider_processes']} cpu {r['provider_cpu_s']:6.2f} s", flush=True)
                    if name.startswith("terraform") and phase == "apply":
                        tf_time[name] = (count, wall)
                shutil.rmtree(d, ignore_errors=True)
    report(args, results, terraform)


def report(args, results, terraform):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    machine = f"{platform.node()}, {os.cpu_count()} cores, {platform.machine()}, Linux {platform.release()}"
    date = datetime.date.today().isoformat()
    (out / "results.json").write_text(json.dumps({"date": date, "machine": machine, "results": results}, indent=1))
    lines = [f"# fleetform benchmark, {date}", "", f"Machine: {machine}. Binaries: `{args.bin_dir}`.",
             f"Terraform: {terraform or 'not run'}. Regenerate: `bench/bench.py {' '.join(sys.argv[1:])}`.", "",
             "Wall time of each command; ratio = Terraform (-parallelism=10) time / this system's time on the same phase;",
             "RSS = peak of the CLI (or Terraform) process, CPU = its CPU seconds; providers: their summed CPU.",
             "Limit = the physical floor: N × latency / concurrency, and provider CPU / the cores its processes can use.", ""]
    cores = os.cpu_count() or 1
    groups = {}
    for r in results:
        groups.setdefault((r["shape"], r["latency_ms"], r["cpu_ms"]), []).append(r)
    for (shape, latency, cpu_ms), rs in groups.items():
        cpu_note = f", provider CPU {cpu_ms} ms per call under one lock per process" if cpu_ms else ""
        lines += [f"## {shape}, provider latency {latency} ms{cpu_note}", "",
                  "| N | system | phase | wall s | ratio | inst/s | RSS MB | CPU s | providers | provider CPU s | limit s |",
                  "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        tf = {(r["n"], r["phase"]): r["wall_s"] for r in rs if r["system"] == "terraform" and "wall_s" in r}
        for r in rs:
            if "skipped" in r:
                lines.append(f"| {r['n']} | {r['system']} | all | skipped: {r['skipped']} | | | | | | | |")
                continue
            if "error" in r:
                lines.append(f"| {r['n']} | {r['system']} | {r['phase']} | failed: {r['error'][:80]} | | | | | | | |")
                continue
            t = tf.get((r["n"], r["phase"]))
            ratio = f"{t / r['wall_s']:.1f}×" if t else ""
            ops = r["n"] if r["phase"] in ("apply", "destroy") else 0
            # Provider CPU spreads over at most as many cores as processes.
            limit = max(ops * latency / 1000 / r["concurrency"],
                        r["provider_cpu_s"] / max(1, min(cores, r["provider_processes"])))
            lines.append(f"| {r['n']} | {r['system']} | {r['phase']} | {r['wall_s']:.2f} | {ratio} | {r['per_s']:.0f} | "
                         f"{r['main_rss_mb']:.0f} | {r['main_cpu_s']:.2f} | {r['provider_processes']} | {r['provider_cpu_s']:.2f} | {limit:.2f} |")
        lines.append("")
    (out / "RESULTS.md").write_text("\n".join(lines))
    plot(out, results)
    print(f"wrote {out / 'RESULTS.md'}")


def plot(out, results):
    venv = REPO / ".test-tools/bench-venv"
    py = venv / "bin/python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin/pip"), "install", "--quiet", "--disable-pip-version-check", "matplotlib==3.*"], check=True)
    script = r"""
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
doc = json.load(open(sys.argv[1]))
rs = [r for r in doc["results"] if r.get("phase") == "apply" and "wall_s" in r and not r.get("cpu_ms")]
fig, axes = plt.subplots(1, 2, figsize=(12, 5))
for ax, latency in zip(axes, (0, 50)):
    for shape in sorted({r["shape"] for r in rs}):
        for system in sorted({r["system"] for r in rs}):
            pts = sorted((r["n"], r["wall_s"]) for r in rs if r["system"] == system and r["shape"] == shape and r["latency_ms"] == latency)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{system}, {shape}")
    ax.set_xscale("log"); ax.set_yscale("log")
    ax.set_xlabel("instances"); ax.set_ylabel("apply wall time (s)")
    ax.set_title(f"apply, provider latency {latency} ms ({doc['date']})")
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines: ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
"""
    subprocess.run([str(py), "-c", script, str(out / "results.json"), str(out / "apply.png")], check=True)


if __name__ == "__main__":
    main()

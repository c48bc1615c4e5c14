"""Where a link of a dependency chain spends its time in a fleet.

A chain of N dependent instances goes through a fleet one link at a time:
the coordinator dispatches the link's task over NATS, a worker runs it
through the provider and publishes the result, the coordinator records it
and dispatches the next link. `measure` plans, applies (the saved plan)
and destroys such a chain on a 2-worker fleet whose coordinator and
workers export their OpenTelemetry traces to a receiver here, then splits
each link from the spans fleetform itself emits:

- `dispatch` (coordinator): the task is published;
- `task` (worker): from the task's delivery to its result's PubAck;
- `provider call` (worker, inside `task`): the task's calls to the
  provider plugin (ValidateResourceConfig, PlanResourceChange,
  ApplyResourceChange over gRPC);
- `claim wait` (inside `provider call`): a create or an update waiting,
  before ApplyResourceChange, for its claim in the queue's key-value
  bucket, which was made alongside the plan call. That is the queue's
  time, and is counted as fleetform's, not the provider's.

A link's time is from one dispatch to the next; what fleetform adds to
it is that time less the link's provider calls. These runs are traced, so
a little slower than the untraced ones of the main tables.
"""

import http.server
import json
import shutil
import statistics
import subprocess
import threading
import time


class Receiver:
    """An OTLP/HTTP (JSON) trace receiver on a free port, in a thread."""

    def __init__(self):
        self.bodies = []
        lock = threading.Lock()
        bodies = self.bodies

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                try:
                    doc = json.loads(body)
                except ValueError:
                    doc = None
                if doc is not None:
                    with lock:
                        bodies.append(doc)
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self):
        """Every span received: (service, name, span id, parent id, start ns,
        end ns, attributes)."""
        out = []
        for doc in list(self.bodies):
            for rs in doc.get("resourceSpans", []):
                service = next((a["value"].get("stringValue") for a in rs.get("resource", {}).get("attributes", [])
                                if a["key"] == "service.name"), "")
                for ss in rs.get("scopeSpans", []):
                    for s in ss.get("spans", []):
                        attrs = {a["key"]: next(iter(a["value"].values()), None) for a in s.get("attributes", [])}
                        out.append((service, s["name"], s["spanId"], s.get("parentSpanId", ""),
                                    int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"]), attrs))
        return out

    def stop(self):
        self.server.shutdown()


def links(spans):
    """Per run and task kind (`plan`, `apply`, `destroy`, ...): the links in
    dispatch order, each (dispatched ns, worker start ns, worker end ns,
    provider calls ns, claim wait ns); the provider calls less the claim
    wait within them."""
    tasks = {}
    calls = {}
    call_task = {}
    waits = {}
    for service, name, sid, parent, t0, t1, attrs in spans:
        if name == "provider call":
            calls[parent] = calls.get(parent, 0) + (t1 - t0)
            call_task[sid] = parent
            continue
        if name == "claim wait":
            waits[parent] = waits.get(parent, 0) + (t1 - t0)
            continue
        task_id = attrs.get("task_id")
        if not task_id or ":" not in task_id:
            continue
        t = tasks.setdefault(task_id, {})
        if name == "dispatch" and service == "fleetform-coordinator":
            t["dispatched"] = t0
        elif name == "task" and service == "fleetform-worker":
            t["span"], t["start"], t["end"] = sid, t0, t1
    wait_of_task = {}
    for call, wait in waits.items():
        if call in call_task:
            task = call_task[call]
            wait_of_task[task] = wait_of_task.get(task, 0) + wait
    runs = {}
    for task_id, t in tasks.items():
        if "dispatched" not in t or "span" not in t:
            continue
        # `<run>.<n>:plan:<addr>`, `<run>:apply:<addr>`, ...
        head, kind = task_id.split(":")[:2]
        run = head.split(".")[0]
        runs.setdefault((run, kind), []).append(
            (t["dispatched"], t["start"], t["end"], calls.get(t["span"], 0) - wait_of_task.get(t["span"], 0),
             wait_of_task.get(t["span"], 0)))
    return {k: sorted(v) for k, v in runs.items()}


def summarize(rows):
    """Medians (and the 90th percentile of the overhead) of a chain's links,
    in ms; the last link has no next dispatch and is left out."""
    if len(rows) < 3:
        return None
    hop, calls, over, to_worker, back, wait = [], [], [], [], [], []
    for (d, start, end, c, w), (next_d, *_) in zip(rows, rows[1:]):
        hop.append(next_d - d)
        calls.append(c)
        wait.append(w)
        over.append(next_d - d - c)
        to_worker.append(start - d)
        back.append(next_d - end)
    ms = lambda xs: statistics.median(xs) / 1e6  # noqa: E731
    over_sorted = sorted(over)
    return {
        "links": len(rows),
        "span_s": round((rows[-1][2] - rows[0][0]) / 1e9, 3),
        "hop_ms": round(ms(hop), 3),
        "calls_ms": round(ms(calls), 3),
        "overhead_ms": round(ms(over), 3),
        "overhead_p90_ms": round(over_sorted[int(len(over_sorted) * 0.9)] / 1e6, 3),
        "to_worker_ms": round(ms(to_worker), 3),
        "back_ms": round(ms(back), 3),
        "claim_wait_ms": round(ms(wait), 3),
        "calls_total_s": round(sum(r[3] for r in rows) / 1e9, 3),
    }


# Each command, and the kind of task whose links it is timed by (a
# destroy's run also refreshes every object first, all at once).
PHASES = [
    ("plan", ["plan", "-input=false", "-out=chain.tfplan"], "plan"),
    ("apply", ["apply", "-input=false", "chain.tfplan"], "apply"),
    ("destroy", ["destroy", "-auto-approve", "-input=false"], "destroy"),
]

# One chain, so that each dispatch waits for the one before: longer
# configurations of the chain shape are several chains side by side.
MAX_LENGTH = 1000


def phase_links(by_run, length):
    """`links`' result split by command: the runs in the order they started,
    one per entry of PHASES, each summarized by its kind's links. Raises if
    a run or its links are missing (spans lost, or task ids no longer of
    the form this reads)."""
    starts = {}
    for (run, _), rows in by_run.items():
        starts[run] = min(starts.get(run, rows[0][0]), rows[0][0])
    runs = sorted(starts, key=starts.get)
    if len(runs) != len(PHASES):
        raise RuntimeError(f"traces of {len(runs)} runs, expected {len(PHASES)} (one per command)")
    out = []
    for (phase, _, kind), run in zip(PHASES, runs):
        rows = by_run.get((run, kind), [])
        if len(rows) != length:
            raise RuntimeError(f"{phase}: traces of {len(rows)} {kind} tasks, expected {length}")
        out.append(dict(summarize(rows), phase=phase, kind=kind))
    return out


def measure(fleet_class, args, ff, work, env, generate, sim_store, objects, length):
    """The traced chain of `length` (3 to MAX_LENGTH) on a fresh 2-worker
    fleet: a dict with each phase's wall time and its links' summary, or
    {"error": ...}."""
    if not 3 <= length <= MAX_LENGTH:
        raise ValueError(f"a chain of 3 to {MAX_LENGTH} links, not {length}")
    d = work / f"hops-chain-{length}"
    generate("chain", length, d)
    store = sim_store(d)
    receiver = Receiver()
    fenv = dict(env, TF_VAR_store=str(store), TF_VAR_latency_ms="0", TF_VAR_cpu_ms="0",
                OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
                # Every span kept (the SDK's queue holds 2,048 by default)
                # and sent soon.
                OTEL_BSP_MAX_QUEUE_SIZE="100000", OTEL_BSP_SCHEDULE_DELAY="200")
    fleet = None
    out = {"length": length, "phases": []}
    try:
        # A fresh directory: the fleet counts as up once its logs say so.
        shutil.rmtree(work / "hops-fleet", ignore_errors=True)
        fleet = fleet_class(args.bin_dir, args.tools, work / "hops-fleet", 2, fenv)
        cenv = fleet.client_env(fenv)
        walls = {}
        for phase, cmd, _ in PHASES:
            start = time.monotonic()
            p = subprocess.run([ff] + cmd, cwd=d, env=cenv, capture_output=True, timeout=600)
            walls[phase] = time.monotonic() - start
            if p.returncode != 0:
                raise RuntimeError(f"{phase} exited {p.returncode}: {(p.stdout + p.stderr).decode(errors='replace')[-400:]}")
            found = objects(store)
            want = length if phase == "apply" else 0
            if found != want:
                raise RuntimeError(f"{found} objects after {phase}, expected {want}")
        # The batch processors send what they hold within their delay.
        time.sleep(2)
        for p in phase_links(links(receiver.spans()), length):
            out["phases"].append(dict(p, wall_s=round(walls[p["phase"]], 3)))
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        out["error"] = str(e)[-500:]
    finally:
        if fleet:
            fleet.stop()
            shutil.rmtree(fleet.root, ignore_errors=True)
        receiver.stop()
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(store, ignore_errors=True)
    return out


def report(h):
    """RESULTS.md lines for `measure`'s result."""
    lines = [f"## A chain of {h['length']:,} through a fleet (2 workers), link by link (traced)", "",
             "Each link: its task dispatched over NATS, run by a worker through the provider, its result back "
             "and the next link dispatched. From the spans fleetform exports (OpenTelemetry): a link's time, from "
             "one dispatch to the next; its provider calls (the worker's `provider call` span: the gRPC calls to "
             "the plugin, less a create's wait for its claim); what fleetform adds (the link's time less its "
             "provider calls); of that, dispatch to the worker's start, a create's wait for its claim after its "
             "plan call (made alongside it), and the worker's end (its result's PubAck) to the next dispatch. "
             "Medians in ms; these runs are traced, so a little slower than the untraced ones above. The apply "
             "is of the saved plan.", ""]
    if "error" in h:
        return lines + [f"Failed: {h['error']}", ""]
    lines += ["| command | tasks | wall s | links | link ms | provider calls ms | fleetform adds ms | p90 adds ms | "
              "dispatch → worker ms | claim wait ms | worker end → next dispatch ms | provider calls, all links s |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for p in h["phases"]:
        lines.append(f"| {p['phase']} | {p['kind']} | {p['wall_s']:.2f} | {p['links']} | {p['hop_ms']:.2f} | "
                     f"{p['calls_ms']:.2f} | {p['overhead_ms']:.2f} | {p['overhead_p90_ms']:.2f} | "
                     f"{p['to_worker_ms']:.2f} | {p.get('claim_wait_ms', 0):.2f} | {p['back_ms']:.2f} | "
                     f"{p['calls_total_s']:.2f} |")
    return lines + [""]

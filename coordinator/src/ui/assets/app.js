// fleetform's live view. Everything shown comes from the coordinator's
// /api endpoints; text is always set as text, never parsed as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function $(id) { return document.getElementById(id); }

function duration(ms) {
  if (ms < 1000) return ms + " ms";
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + " s";
  const m = Math.floor(s / 60);
  return m + " min " + Math.round(s - m * 60) + " s";
}

// ---- the runs list ----------------------------------------------------

async function loadRuns() {
  const resp = await fetch("/api/runs", { credentials: "same-origin" });
  if (resp.status === 401) { location.href = "/login?next=/"; return; }
  if (!resp.ok) {
    const err = $("runs-error");
    err.hidden = false;
    err.textContent = (await resp.text()).trim();
    return;
  }
  const runs = await resp.json();
  const body = document.querySelector("#runs tbody");
  body.replaceChildren();
  for (const r of runs) {
    const tr = el("tr", { "data-run": r.run_id });
    const idCell = el("td", { class: "addr" });
    if (r.live) idCell.appendChild(el("a", { href: "/runs/" + r.run_id }, r.run_id));
    else idCell.textContent = r.run_id;
    tr.appendChild(idCell);
    tr.appendChild(el("td", {}, r.workspace));
    tr.appendChild(el("td", {}, r.operation + (r.resumed ? " (resumed)" : "")));
    tr.appendChild(el("td", {}, "")).appendChild(el("span", { class: "badge status-" + r.status }, r.status));
    tr.appendChild(el("td", {}, r.started_at));
    body.appendChild(tr);
  }
  $("runs-empty").hidden = runs.length > 0;
}

// ---- drift ------------------------------------------------------------------

async function loadDrift() {
  const resp = await fetch("/api/drift", { credentials: "same-origin" });
  if (!resp.ok) return;
  const workspaces = await resp.json();
  const body = document.querySelector("#drift tbody");
  body.replaceChildren();
  let n = 0;
  const now = Date.now();
  for (const w of workspaces) {
    for (const o of w.objects) {
      const tr = el("tr", { "data-drift": o.address });
      tr.appendChild(el("td", {}, w.workspace));
      tr.appendChild(el("td", { class: "addr" }, o.address));
      tr.appendChild(el("td", {}, o.gone ? "deleted" : "changed"));
      tr.appendChild(el("td", {}, duration(Math.max(0, now - o.read_at_ms)) + " ago"));
      body.appendChild(tr);
      n++;
    }
  }
  $("drift-empty").hidden = n > 0;
}

// ---- one run ------------------------------------------------------------

const NODE_W = 250, NODE_H = 48, COL_GAP = 70, ROW_GAP = 12, PAD = 10;

function groupState(c) {
  if (c.failed > 0) return "failed";
  if (c.running > 0) return "running";
  if (c.total === 0) return "unchanged";
  if (c.done >= c.total) return "done";
  return "pending";
}

function shorten(s, n) { return s.length > n ? "…" + s.slice(s.length - n + 1) : s; }

function drawGraph(snap, expand, toggle) {
  const byDepth = new Map();
  snap.groups.forEach((g, i) => {
    if (!byDepth.has(g.depth)) byDepth.set(g.depth, []);
    byDepth.get(g.depth).push(i);
  });
  const pos = [];
  let rows = 0;
  for (const [depth, list] of byDepth) {
    list.forEach((g, row) => {
      pos[g] = { x: PAD + depth * (NODE_W + COL_GAP), y: PAD + row * (NODE_H + ROW_GAP) };
    });
    rows = Math.max(rows, list.length);
  }
  const cols = byDepth.size ? Math.max(...byDepth.keys()) + 1 : 0;
  const width = PAD * 2 + cols * NODE_W + Math.max(0, cols - 1) * COL_GAP;
  const height = PAD * 2 + rows * NODE_H + Math.max(0, rows - 1) * ROW_GAP;
  const root = svg("svg", { width: Math.max(width, 200), height: Math.max(height, 60), role: "img", "aria-label": "dependency graph" });
  for (const [i, g] of snap.groups.entries()) {
    for (const d of g.deps) {
      const a = pos[d], b = pos[i];
      if (!a || !b) continue;
      const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2;
      const mx = (x1 + x2) / 2;
      root.appendChild(svg("path", { class: "edge", "data-from": snap.groups[d].id, "data-to": g.id, d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}` }));
    }
  }
  for (const [i, g] of snap.groups.entries()) {
    const p = pos[i];
    const c = g.counts;
    const node = svg("g", { class: "node st-" + groupState(c) + (expand.has(g.id) ? " open" : ""), "data-group": g.id, "data-state": groupState(c), transform: `translate(${p.x},${p.y})` });
    node.appendChild(svg("title", {}, g.id));
    node.appendChild(svg("rect", { class: "box", width: NODE_W, height: NODE_H, rx: 5 }));
    node.appendChild(svg("text", { x: 8, y: 17 }, shorten(g.id, 32)));
    const acts = Object.entries(g.actions).map(([k, v]) => v + " " + k).join(", ");
    const sub = c.total ? `${c.done}/${c.total} done` + (c.failed ? ` · ${c.failed} failed` : "") + (c.running ? ` · ${c.running} running` : "") : "no changes";
    node.appendChild(svg("text", { class: "sub", x: 8, y: 32 }, `${g.instances}× · ${sub}`));
    if (acts) node.firstChild.textContent = `${g.id}\n${g.instances} instances: ${acts}`;
    // The bar: done, failed, running, in that order, over all operations.
    const bw = NODE_W - 16;
    let x = 8;
    node.appendChild(svg("rect", { x: 8, y: 38, width: bw, height: 5, rx: 2, fill: "#e4e8ec" }));
    for (const [k, color] of [["done", "#2e9d5b"], ["failed", "#d13c3c"], ["running", "#2f7fd8"]]) {
      if (!c.total || !c[k]) continue;
      const w = Math.max(1, bw * c[k] / c.total);
      node.appendChild(svg("rect", { x, y: 38, width: w, height: 5, fill: color }));
      x += w;
    }
    node.addEventListener("click", () => toggle(g.id));
    root.appendChild(node);
  }
  $("graph").replaceChildren(root);
}

function fillTable(id, rows) {
  const body = document.querySelector("#" + id + " tbody");
  body.replaceChildren();
  for (const cells of rows) {
    const tr = el("tr");
    cells.forEach(([text, cls]) => tr.appendChild(el("td", cls ? { class: cls } : {}, text)));
    body.appendChild(tr);
  }
}

function render(snap, expand, toggle) {
  document.title = "fleetform · " + snap.operation + " " + snap.run_id.slice(0, 8);
  $("run-id").textContent = snap.run_id;
  $("workspace").textContent = snap.workspace;
  $("operation").textContent = snap.operation;
  const phase = $("phase");
  phase.textContent = snap.phase;
  phase.className = "badge " + snap.phase.replace(/ /g, "-");
  const status = $("status");
  status.textContent = snap.status || "–";
  status.className = "badge " + (snap.status || "");
  $("elapsed").textContent = duration(Math.round(snap.elapsed_s * 1000));
  const c = snap.counts;
  for (const k of ["total", "pending", "running", "done", "failed"]) $("count-" + k).textContent = c[k];
  $("rate").textContent = snap.rate.toFixed(1);
  $("eta").textContent = snap.eta_s == null ? "–" : duration(Math.round(snap.eta_s * 1000));
  const bar = $("bar").children;
  const pct = (n) => (c.total ? (100 * n / c.total) : 0) + "%";
  // Widths through the CSSOM (allowed by the page's CSP, markup styles are not).
  bar[0].style.width = pct(c.done);
  bar[1].style.width = pct(c.failed);
  bar[2].style.width = pct(c.running);
  const planning = $("planning");
  planning.hidden = !(snap.phase === "planning" && snap.planning);
  if (snap.planning) planning.textContent = `Planning: ${snap.planning.done} of ${snap.planning.total} instances`;

  drawGraph(snap, expand, toggle);

  const exp = $("expanded");
  exp.replaceChildren();
  for (const [gid, list] of Object.entries(snap.expanded)) {
    const box = el("div", { class: "inst", "data-expanded": gid });
    box.appendChild(el("h3", {}, gid + " — " + list.length + " instance" + (list.length === 1 ? "" : "s") + (list.length >= 500 ? " (first 500)" : "")));
    const t = el("table");
    const head = el("tr");
    for (const h of ["Instance", "Action", "Status", "Time", "Worker", "Error"]) head.appendChild(el("th", {}, h));
    t.appendChild(el("thead")).appendChild(head);
    const tb = el("tbody");
    for (const i of list) {
      const tr = el("tr", { "data-instance": i.addr });
      tr.appendChild(el("td", { class: "addr" }, i.addr));
      tr.appendChild(el("td", {}, i.action));
      tr.appendChild(el("td", { class: "st-" + i.status.replace(/ /g, "-") }, i.status));
      tr.appendChild(el("td", {}, i.elapsed_ms ? duration(i.elapsed_ms) : ""));
      tr.appendChild(el("td", {}, i.worker));
      tr.appendChild(el("td", {}, i.error || ""));
      tb.appendChild(tr);
    }
    t.appendChild(tb);
    box.appendChild(el("div", { class: "scroll" })).appendChild(t);
    exp.appendChild(box);
  }

  const errors = $("errors");
  errors.replaceChildren();
  for (const e of snap.errors) {
    const li = el("li");
    li.appendChild(el("strong", {}, e.summary));
    if (e.addr) li.appendChild(el("div", { class: "addr" }, "on " + e.addr));
    if (e.location) li.appendChild(el("div", { class: "muted" }, "at " + e.location));
    if (e.detail) li.appendChild(el("pre", {}, e.detail));
    errors.appendChild(li);
  }
  $("no-errors").hidden = snap.errors.length > 0;
  fillTable("slowest", snap.slowest.map((t) => [[t.addr, "addr"], [t.op], [duration(t.ms)], [t.worker]]));
  fillTable("running", snap.running_longest.map((t) => [[t.addr, "addr"], [t.op], [duration(t.ms)]]));

  const fin = $("finished");
  fin.hidden = snap.phase !== "finished";
  if (snap.summary) {
    const s = snap.summary;
    const planned = `${s.add} to add, ${s.change} to change, ${s.destroy} to destroy` + (s.import ? `, ${s.import} to import` : "") + (s.forget ? `, ${s.forget} to forget` : "");
    $("summary").textContent = snap.status === "succeeded"
      ? `${snap.status}: ${s.add} added, ${s.change} changed, ${s.destroy} destroyed` + (s.import ? `, ${s.import} imported` : "") + (s.forget ? `, ${s.forget} forgotten` : "") + "."
      : `${snap.status}: ${c.done} of ${c.total} operations done, ${c.failed} failed (the plan had ${planned}).`;
  }
  $("outputs").textContent = snap.outputs.length ? "Outputs: " + snap.outputs.join(", ") + " (values with `fleetform output`)" : "";
}

function watchRun() {
  const id = decodeURIComponent(location.pathname.split("/").pop());
  $("run-id").textContent = id;
  const expand = new Set();
  let source = null;
  let last = null;
  const connect = () => {
    if (source) source.close();
    const q = expand.size ? "?expand=" + encodeURIComponent([...expand].join(",")) : "";
    source = new EventSource("/api/runs/" + encodeURIComponent(id) + "/events" + q);
    source.addEventListener("snapshot", (ev) => {
      last = JSON.parse(ev.data);
      render(last, expand, toggle);
      // The stream ends with the run; do not let the browser reconnect.
      if (last.phase === "finished") source.close();
    });
    source.onerror = async () => {
      if (last && last.phase === "finished") return;
      // A refusal or an unknown run: say why instead of retrying.
      const resp = await fetch("/api/runs/" + encodeURIComponent(id), { credentials: "same-origin" });
      if (resp.status === 401) { location.href = "/login?next=" + encodeURIComponent(location.pathname); return; }
      if (!resp.ok) {
        source.close();
        const gone = $("gone");
        gone.hidden = false;
        gone.textContent = (await resp.text()).trim();
      }
    };
  };
  const toggle = (gid) => {
    if (expand.has(gid)) {
      expand.delete(gid);
    } else {
      // The server sends the instances of at most 20 boxes: the oldest
      // one opened closes.
      if (expand.size >= 20) expand.delete(expand.values().next().value);
      expand.add(gid);
    }
    connect();
  };
  connect();
}

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  if (page === "runs") {
    loadRuns();
    loadDrift();
    setInterval(loadRuns, 2000);
    setInterval(loadDrift, 2000);
  } else if (page === "run") {
    watchRun();
  }
});

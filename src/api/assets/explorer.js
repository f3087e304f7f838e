// diagtop's process explorer: the table of GET /api/processes refreshing live, sortable and filterable, and a
// detail panel (General, Memory, Modules, FDs, Threads, Environment, History) with Stack, GC, Dump and Profile. Everything
// the server sends is shown through textContent, never parsed as HTML.
"use strict";

const state = {
  rows: [], sortKey: "cpu_percent", sortDesc: true, filter: "", selected: null, tab: "general",
  info: null, timer: null, busy: false,
};
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function bytes(n) {
  if (n === null || n === undefined) return "–";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0, v = Number(n);
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(1) : String(v)) + " " + u[i];
}

async function api(method, path) {
  const r = await fetch(path, { method, headers: { Accept: "application/json" }, cache: "no-store" });
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = { error: text }; }
  if (!r.ok && r.status !== 202) {
    const err = new Error((body && body.error) || r.status + " " + r.statusText);
    err.status = r.status;
    throw err;
  }
  return { status: r.status, body, headers: r.headers };
}

function setStatus(text, bad) {
  const s = $("status");
  s.textContent = text;
  s.className = bad ? "error" : "muted";
}

// ---- the table ----

async function refresh() {
  try {
    const { body } = await api("GET", "/api/processes");
    state.rows = body.processes;
    const s = body.system, m = s.memory, c = s.cpu;
    $("summary").textContent =
      `up ${(s.uptime_seconds / 3600).toFixed(1)} h · load ${s.load_average.join(" ")} · ` +
      `CPU ${(100 - c.idle_percent).toFixed(1)}% · memory ${bytes(m.used_bytes)} of ${bytes(m.total_bytes)} · ` +
      `${s.tasks.total} processes`;
    setStatus("updated " + new Date().toLocaleTimeString());
    render();
    if (state.selected !== null && state.tab === "history") showTab("history", true);
  } catch (e) {
    setStatus("refresh failed: " + e.message, true);
  }
}

function compare(a, b) {
  const k = state.sortKey;
  let x = a[k], y = b[k];
  if (x === null || x === undefined) x = typeof y === "number" ? -Infinity : "";
  if (y === null || y === undefined) y = typeof x === "number" ? -Infinity : "";
  let d = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
  if (d === 0) d = a.pid - b.pid;
  return state.sortDesc ? -d : d;
}

function matches(p, f) {
  if (!f) return true;
  return String(p.pid) === f || (p.name || "").toLowerCase().includes(f) ||
    (p.cmdline || "").toLowerCase().includes(f) || (p.user || "").toLowerCase().includes(f);
}

function render() {
  const f = state.filter.trim().toLowerCase();
  const rows = state.rows.filter((p) => matches(p, f)).sort(compare);
  const tbody = $("proc-table").tBodies[0];
  const out = document.createDocumentFragment();
  for (const p of rows) {
    const tr = el("tr", { "data-pid": p.pid },
      el("td", { class: "num", text: p.pid }), el("td", { text: p.name }), el("td", { text: p.user ?? "–" }),
      el("td", { text: p.state }), el("td", { class: "num", text: p.cpu_percent.toFixed(1) }),
      el("td", { class: "num", text: p.mem_percent.toFixed(2) }), el("td", { class: "num", text: bytes(p.rss_bytes) }),
      el("td", { class: "num", text: p.threads }), el("td", { text: p.runtime ?? "–" }),
      el("td", { text: p.start_time.replace("T", " ").replace("Z", "") }),
      el("td", { class: "cmd", text: p.cmdline ?? "[" + p.name + "]", title: p.cmdline ?? "" }));
    if (p.pid === state.selected) tr.classList.add("selected");
    out.append(tr);
  }
  tbody.replaceChildren(out);
  $("count").textContent = `${rows.length} of ${state.rows.length}`;
  for (const th of document.querySelectorAll("#proc-table th")) {
    th.classList.toggle("sorted-asc", th.dataset.key === state.sortKey && !state.sortDesc);
    th.classList.toggle("sorted-desc", th.dataset.key === state.sortKey && state.sortDesc);
  }
}

function live() {
  clearInterval(state.timer);
  state.timer = $("live").checked ? setInterval(refresh, 2000) : null;
}

// ---- the detail panel ----

function dl(pairs) {
  const d = el("dl");
  for (const [k, v] of pairs) d.append(el("dt", { text: k }), el("dd", { text: v === null || v === undefined ? "–" : v }));
  return d;
}

function table(headers, rows) {
  const t = el("table", {}, el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { text: h })))));
  const b = el("tbody");
  for (const r of rows) b.append(el("tr", {}, ...r.map((c) => el("td", { text: c === null || c === undefined ? "–" : c }))));
  t.append(b);
  return t;
}

const tabs = {
  general: { path: "", show(i) {
    const g = i.general || {};
    return dl([["PID", i.id], ["Name", i.name], ["Parent", g.ppid], ["User", g.user], ["State", g.state],
      ["Started", i.start_time], ["Age", g.age_seconds + " s"], ["CPU time", i.total_cpu_time + " s (user " +
        i.user_cpu_time + ", system " + i.privileged_cpu_time + ")"], ["Threads", i.thread_count],
      ["Handles", i.handle_count], ["Modules", i.module_count], ["Executable", g.exe], ["Working directory", g.cwd],
      ["Command line", g.cmdline], ["cgroup", g.cgroup], ["Container", g.container && [g.container.runtime, g.container.id, g.container.pod_uid && "pod " + g.container.pod_uid].filter(Boolean).join(" ")],
      ["NSpid", g.nspid && g.nspid.join(" ")],
      ["Namespaces not diagtop's", g.namespaces_differing && (g.namespaces_differing.join(" ") || "none")], ["Nice", g.nice],
      ["OOM score", g.oom_score]]);
  } },
  memory: { path: "", show(i) {
    return dl([["Working set", bytes(i.working_set)], ["Peak working set", bytes(i.peak_working_set)],
      ["Private (USS)", bytes(i.private_memory)], ["Virtual", bytes(i.virtual_memory)],
      ["Peak virtual", bytes(i.peak_virtual_memory)], ["Paged (swap)", bytes(i.paged_memory)],
      ...Object.entries(i.memory || {}).map(([k, v]) => [k, bytes(v)])]);
  } },
  modules: { path: "/modules", show(i) {
    return table(["Path", "Start", "Mapped", "Perms"], (i.modules || []).map((m) => [m.path, m.start, bytes(m.mapped_bytes), m.perms]));
  } },
  fds: { path: "/fds", show(i) {
    return table(["FD", "Type", "Target"], ((i.fds || {}).open || []).map((f) => [f.fd, f.type, f.target]));
  } },
  threads: { path: "/threads", show(i) {
    return table(["TID", "Name", "S", "CPU %", "User s", "System s", "Waiting in"],
      (i.threads || []).map((t) => [t.tid, t.name, t.state, t.cpu_percent, t.user_cpu_time, t.system_cpu_time, t.wchan]));
  } },
  environment: { path: "/environment", show(i) {
    const masked = new Set(i.environment_masked || []);
    return table(["Name", "Value"], Object.entries(i.environment || {}).map(([k, v]) => [k, masked.has(k) ? "(masked)" : v]));
  } },
  history: { path: "/history", show: historyCharts },
};

// ---- the History tab: one SVG chart a field of GET .../history, redrawn with the live table ----

const SVG_NS = "http://www.w3.org/2000/svg";
const HISTORY_FIELDS = [
  ["cpu_percent", "CPU %", (v) => v.toFixed(1) + "%"],
  ["res_bytes", "Resident memory", bytes],
  ["disk_read_bytes_per_second", "Disk read", (v) => bytes(Math.round(v)) + "/s"],
  ["disk_write_bytes_per_second", "Disk write", (v) => bytes(Math.round(v)) + "/s"],
  ["net_received_bytes_per_second", "TCP received", (v) => bytes(Math.round(v)) + "/s"],
  ["net_sent_bytes_per_second", "TCP sent", (v) => bytes(Math.round(v)) + "/s"],
  ["wait_percent", "Waiting for a CPU", (v) => v.toFixed(1) + "%"],
];

function svg(tag, attrs) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// A line over the samples' times; a sample that did not read the field breaks the line.
function chart(times, values, percent) {
  const w = 480, h = 64, t0 = times[0], t1 = Math.max(times[times.length - 1], t0 + 1);
  const known = values.filter((v) => v !== null);
  const lo = percent ? 0 : Math.min(...known), hi = Math.max(percent ? 100 : 0, ...known);
  const span = hi > lo ? hi - lo : 1;
  const g = svg("svg", { class: "chart", viewBox: `0 0 ${w} ${h}`, width: w, height: h, preserveAspectRatio: "none" });
  g.append(svg("rect", { x: 0, y: 0, width: w, height: h, class: "chart-bg" }));
  let run = [];
  const flush = () => {
    if (run.length) g.append(svg("polyline", { points: run.join(" "), class: "chart-line" }));
    run = [];
  };
  values.forEach((v, i) => {
    if (v === null) return flush();
    run.push(`${(((times[i] - t0) / (t1 - t0)) * w).toFixed(1)},${(h - 2 - ((v - lo) / span) * (h - 4)).toFixed(1)}`);
  });
  flush();
  return g;
}

function historyCharts(doc) {
  const n = doc.samples, box = el("div", { class: "history" });
  const when = n > 1 ? `${n} samples over ${Math.round(doc.time[n - 1] - doc.time[0])} s, one every ${doc.interval_seconds} s`
    : `${n} sample${n === 1 ? "" : "s"}`;
  box.append(el("p", { class: "muted", text: `${when} (up to ${doc.kept_at_most} kept; the server samples when asked)` }));
  for (const [key, label, fmt] of HISTORY_FIELDS) {
    const vals = doc.fields[key] || [], known = vals.filter((v) => v !== null);
    const head = known.length
      ? `${label}: last ${fmt(known[known.length - 1])} · min ${fmt(Math.min(...known))} · max ${fmt(Math.max(...known))}`
      : `${label}: not read yet`;
    box.append(el("div", { class: "chart-head", "data-field": key, text: head }));
    if (known.length) box.append(chart(doc.time, vals, key.endsWith("_percent")));
  }
  return box;
}

async function showTab(name, quiet) {
  state.tab = name;
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === name);
  const body = $("tab-body"), pid = state.selected;
  if (!quiet) body.replaceChildren(el("span", { class: "muted", text: "loading…" }));
  try {
    const { body: info } = await api("GET", `/api/processes/${pid}${tabs[name].path}`);
    if (pid !== state.selected || name !== state.tab) return;
    if (name === "general") $("detail-title").textContent = `${info.name} (${info.id})`;
    body.replaceChildren(tabs[name].show(info));
  } catch (e) {
    body.replaceChildren(el("span", { class: "error", text: e.message }));
  }
}

function select(pid) {
  state.selected = pid;
  $("detail").hidden = false;
  $("action-output").hidden = true;
  $("detail-title").textContent = String(pid);
  render();
  showTab(state.tab);
}

function output(...nodes) {
  const o = $("action-output");
  o.hidden = false;
  o.replaceChildren(...nodes);
}

function stackText(doc) {
  const lines = [];
  for (const cycle of doc.deadlocks || []) {
    lines.push("Deadlock found by the JVM:");
    for (const e of cycle) lines.push(`    "${e.thread}" ${e.how} <${e.address}> (a ${e.class ?? "?"}), held by "${e.held_by}"`);
    lines.push("");
  }
  for (const t of doc.threads || []) {
    lines.push(`${doc.provider ? "#" + t.id : "thread " + t.tid} ${t.name ?? ""} (${t.state})`);
    if (t.read_unstopped) lines.push("    (in uninterruptible sleep: not stopped)");
    if (t.wait) {
      const w = t.wait, peers = w.futex_waiters && w.futex_waiters.length > 1 ? `, waiters ${w.futex_waiters.join(" ")}` : "";
      lines.push(`    waiting in ${w.call}${w.object ? " on " + w.object : ""}${peers}`);
      for (const k of w.kernel_stack || []) lines.push("      kernel: " + k);
    }
    if (t.waiting_for) {
      const w = t.waiting_for, by = w.held_by ? `, held by "${w.held_by.name}"` : "";
      lines.push(`    ${w.how} <${w.address}> (a ${w.class ?? "?"})${by}`);
    }
    for (const f of t.frames || [])
      lines.push("    " + (f.function ?? f.pc ?? "?") + (f.file ? `  ${f.file}:${f.line ?? "?"}` : f.module ? `  [${f.module}]` : ""));
    if (t.error) lines.push("    (" + t.error + ")");
    lines.push("");
  }
  return lines.join("\n");
}

async function action(button, fn) {
  if (state.busy) return;
  state.busy = true;
  for (const b of document.querySelectorAll(".actions button")) b.disabled = true;
  try { await fn(); } catch (e) { output(el("span", { class: "error", text: e.message })); }
  state.busy = false;
  for (const b of document.querySelectorAll(".actions button")) b.disabled = false;
}

async function doStack() {
  output(el("span", { class: "muted", text: "capturing…" }));
  const { body } = await api("GET", `/api/processes/${state.selected}/stack`);
  const head = body.provider ? `${body.threads.length} threads from ${body.provider}` :
    `${body.threads.length} threads, stopped for ${body.stopped_ms} ms`;
  output(el("div", { id: "stack-summary", class: "muted", text: head }), el("pre", { id: "stack-output", text: stackText(body) }));
}

async function doGc() {
  output(el("span", { class: "muted", text: "collecting…" }));
  const { body } = await api("POST", `/api/processes/${state.selected}/gc`);
  output(el("pre", { text: `${body.provider}: heap ${bytes(body.heap_before)} → ${bytes(body.heap_after)}\n${body.message ?? ""}` }));
}

async function doDump() {
  const { body, headers } = await api("POST", `/api/processes/${state.selected}/dump`);
  const loc = headers.get("Location") || body.location;
  for (;;) {
    const { body: st } = await api("GET", loc + "/status");
    if (st.state === "done") {
      output(el("span", { text: `dump written: ${bytes(st.allocated_bytes)} on disk, the process was stopped ${st.stopped_ms} ms · ` }),
        el("a", { id: "dump-link", href: loc, download: st.file, text: "download " + st.file }));
      return;
    }
    if (st.state !== "running") throw new Error("dump " + st.state + ": " + (st.error ?? ""));
    output(el("span", { class: "muted", text: `writing the dump: ${(st.progress * 100).toFixed(0)}% (${bytes(st.bytes_done)} of ${bytes(st.bytes_total)})` }));
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function doProfile() {
  const secs = Math.max(1, Math.min(300, Number($("profile-seconds").value) || 10));
  output(el("span", { class: "muted", text: `profiling for ${secs} s…` }));
  const r = await fetch(`/api/processes/${state.selected}/profile?seconds=${secs}`, { method: "POST", cache: "no-store" });
  if (!r.ok) {
    let msg = r.status + " " + r.statusText;
    try { msg = (await r.json()).error; } catch (e) { /* not JSON */ }
    throw new Error(msg);
  }
  const blob = await r.blob();
  const name = ((r.headers.get("Content-Disposition") || "").match(/filename="([^"]+)"/) || [])[1] || "profile.pb.gz";
  const url = URL.createObjectURL(blob);
  output(el("span", { text: `profile of ${secs} s: ${bytes(blob.size)} (pprof) · ` }),
    el("a", { id: "profile-link", href: url, download: name, text: "download " + name }));
}

function init() {
  for (const th of document.querySelectorAll("#proc-table th")) {
    th.addEventListener("click", () => {
      const k = th.dataset.key;
      if (state.sortKey === k) state.sortDesc = !state.sortDesc;
      else { state.sortKey = k; state.sortDesc = !["name", "user", "cmdline", "runtime", "state", "pid"].includes(k); }
      render();
    });
  }
  $("filter").addEventListener("input", (e) => { state.filter = e.target.value; render(); });
  $("live").addEventListener("change", live);
  $("proc-table").tBodies[0].addEventListener("click", (e) => {
    const tr = e.target.closest("tr");
    if (tr) select(Number(tr.dataset.pid));
  });
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => showTab(b.dataset.tab));
  $("btn-close").addEventListener("click", () => { $("detail").hidden = true; state.selected = null; render(); });
  $("btn-stack").addEventListener("click", () => action("stack", doStack));
  $("btn-gc").addEventListener("click", () => action("gc", doGc));
  $("btn-dump").addEventListener("click", () => action("dump", doDump));
  $("btn-profile").addEventListener("click", () => action("profile", doProfile));
  refresh();
  live();
}

document.addEventListener("DOMContentLoaded", init);

// mpsched operator dashboard: polls the controller's REST API about once a second, keeps up to
// 10 minutes of per-path history in the page and draws it with plain SVG. Writes go through the
// same API with the write token, and reads too where the controller asks for a token
// (--read-token): the token comes from the form or from the address the operator opens,
// /ui/#token=<token> (the fragment never leaves the browser; it is removed from the address bar
// at once), and is kept in sessionStorage only, sent as "Authorization: Bearer". The page is
// served with a Content-Security-Policy of its own files only: no inline script or style here
// (styles set from JS go through the CSSOM, `el`'s style object). A path weight, which replaces
// the default class's policy, is confirmed first, and a path's weight and admin state are no
// controls on a fabric (links are: fabric.js). Warnings in a write's answer are shown.
"use strict";

const POLL_MS = 1000;
const HISTORY_S = 600;
const MAX_DECISIONS = 500;
const SHOWN_DECISIONS = 40;
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
  "#17becf"];
const SVG_NS = "http://www.w3.org/2000/svg";
const SVG_TAGS = new Set(["svg", "g", "path", "line", "rect", "text", "title"]);

const state = {
  series: {},      // path id -> direction -> [snapshot, ...] (oldest first)
  lastT: 0,        // newest snapshot time seen: the next GET /telemetry?since=
  decisions: [],   // oldest first
  decisionsT: 0,
  paths: [], switches: [], classes: [], mptcp: null, loop: null, policies: [],
  polling: null,
  // a fabric's (fabric.js): GET /links, GET /pairs, the selected pair's decisions, the edge
  // a pick by clicks started at
  links: [], pairs: [], pairDecisions: null, pickFrom: null,
  connHover: null, connPick: null,  // the MPTCP connection (id) hovered, clicked
  openReasons: new Set(),  // the decisions whose coefficients are shown (decisionKey)
  seriesOf: null,  // in a fabric: the pair `series` holds (only its direction is fetched)
};
// What tests and `make bench-ui` read: when the first full render happened (ms since navigation).
window.mpschedUi = { firstRenderMs: null, renders: 0, errors: 0 };

// -- helpers ------------------------------------------------------------------------------

function $(id) { return document.getElementById(id); }

function el(tag, attrs = {}, ...children) {
  const node = SVG_TAGS.has(tag) ? document.createElementNS(SVG_NS, tag)
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else if (k === "style") Object.assign(node.style, v);  // CSSOM: allowed by the CSP
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function fmt(v, digits = 2) {
  if (v === null || v === undefined) return "–";
  if (typeof v !== "number" || Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 1000 ? v.toFixed(0) : v.toFixed(digits);
}

// A fraction 0..1 in percent ("0.012"), "–" when unknown.
function percent(v) {
  if (typeof v !== "number") return "–";
  const pct = 100 * v;
  return pct === 0 ? "0" : pct.toFixed(Math.abs(pct) >= 1 ? 1 : 3);
}

// Bytes in kB (1000 bytes, one decimal), "–" when unknown.
function kilo(v) { return typeof v === "number" ? (v / 1000).toFixed(1) : "–"; }

function clock(t) { return new Date(t * 1000).toLocaleTimeString([], { hour12: false }); }

function direction() { return $("direction").value; }

function windowS() { return Number($("window").value); }

function token() { return sessionStorage.getItem("mpsched-token") || ""; }

function authHeaders() { return token() ? { Authorization: "Bearer " + token() } : {}; }

// A token in the address's fragment (#token=...) is kept for this tab and removed from the
// address, so it is neither in the history nor on screen.
function tokenFromAddress() {
  const given = new URLSearchParams(location.hash.slice(1)).get("token");
  if (given === null) return;
  sessionStorage.setItem("mpsched-token", given.trim());
  history.replaceState(null, "", location.pathname + location.search);
}

function pathColor(id) { return COLORS[(Number(id) - 1) % COLORS.length]; }

function showMessage(text, isError, isWarning = false) {
  const box = $("message");
  box.textContent = text;
  box.className = "message " + (isError ? "error" : isWarning ? "warn" : "ok");
  box.hidden = false;
}

// What a write's answer says beyond "done": the pairs an admin change left without a usable
// path (`warnings`), the parameters a change of policy dropped (`dropped_params`).
function answerNotes(data) {
  const dropped = data.dropped_params || [];
  return [...(data.warnings || []),
    ...(dropped.length ? [`dropped parameters the new policy does not take: ${dropped.join(", ")}`]
      : [])];
}

// Keeps one row per key in a table body: `build` makes a new row, rows of gone keys go.
function syncRows(tbody, keys, build) {
  const rows = new Map([...tbody.rows].map((r) => [r.dataset.key, r]));
  keys.forEach((key, i) => {
    let row = rows.get(key);
    if (!row) { row = build(key); row.dataset.key = key; }
    if (tbody.rows[i] !== row) tbody.insertBefore(row, tbody.rows[i] || null);
    rows.delete(key);
  });
  for (const row of rows.values()) row.remove();
  return keys.map((k) => [...tbody.rows].find((r) => r.dataset.key === k));
}

function setCells(row, values) {
  values.forEach((v, i) => { if (row.cells[i].textContent !== v) row.cells[i].textContent = v; });
}

// -- REST ---------------------------------------------------------------------------------

async function getJson(path) {
  const r = await fetch(path, { cache: "no-store", headers: authHeaders() });
  if (r.status === 401 || r.status === 403) {
    throw new Error(`GET ${path}: HTTP ${r.status}: this controller needs a token for reads: `
      + "enter it above, or open /ui/#token=<token>");
  }
  if (!r.ok) throw new Error(`GET ${path}: HTTP ${r.status}`);
  return r.json();
}

// PUT through the API; a refusal shows the API's {"error", "field"} and returns null.
async function put(path, body) {
  const headers = { "Content-Type": "application/json", ...authHeaders() };
  let r;
  try {
    r = await fetch(path, { method: "PUT", headers, body: JSON.stringify(body) });
  } catch (e) {
    showMessage(`PUT ${path} failed: ${e.message}`, true);
    return null;
  }
  const data = await r.json().catch(() => ({ error: r.statusText, field: null }));
  if (!r.ok) {
    const field = data.field ? ` (field: ${data.field})` : "";
    showMessage(`PUT ${path} refused, HTTP ${r.status}: ${data.error}${field}`, true);
    return null;
  }
  const notes = answerNotes(data);
  showMessage(`PUT ${path}: done` + notes.map((n) => `; warning: ${n}`).join(""), false,
    notes.length > 0);
  (state.polling || Promise.resolve()).then(poll);  // a poll that started after the write
  return data;
}

function mergeTelemetry(tel) {
  for (const [pid, dirs] of Object.entries(tel.paths)) {
    for (const [dir, snaps] of Object.entries(dirs)) {
      const series = ((state.series[pid] ||= {})[dir] ||= []);
      const last = series.length ? series[series.length - 1].t : 0;
      for (const s of snaps) if (s.t > last) series.push(s);
      for (const s of snaps) state.lastT = Math.max(state.lastT, s.t);
    }
  }
  const oldest = state.lastT - HISTORY_S;
  for (const dirs of Object.values(state.series)) {
    for (const series of Object.values(dirs)) {
      let drop = 0;
      while (drop < series.length && series[drop].t < oldest) drop++;
      if (drop) series.splice(0, drop);
    }
  }
}

function mergeDecisions(dec) {
  for (const d of dec.decisions) if (d.t > state.decisionsT) state.decisions.push(d);
  if (state.decisions.length) state.decisionsT = state.decisions[state.decisions.length - 1].t;
  const extra = state.decisions.length - MAX_DECISIONS;
  if (extra > 0) state.decisions.splice(0, extra);
  state.loop = dec.loop;
}

// In a fabric only the picked pair's direction is fetched (GET /telemetry?direction=): a new
// pick starts its history afresh.
function telemetryPath() {
  if (!isFabric()) return `/telemetry?since=${state.lastT}`;
  const pair = direction();
  if (pair !== state.seriesOf) Object.assign(state, { series: {}, lastT: 0, seriesOf: pair });
  return `/telemetry?since=${state.lastT}&direction=${encodeURIComponent(pair)}`;
}

// A fabric's GETs (known from the previous poll, or start()) go in the same round as the rest.
function fabricGets() {
  if (!isFabric()) return [null, null];
  const pair = state.pairs.length ? direction() : "";
  return [getJson("/pairs"), pair
    ? getJson(`/decisions?pair=${encodeURIComponent(pair)}&limit=${SHOWN_DECISIONS}`) : null];
}

async function pollOnce() {
  const telPath = telemetryPath();
  const seriesOf = state.seriesOf;
  const [paths, tel, switches, classes, dec, mptcp, links, pairs, pairDec] = await Promise.all([
    getJson("/paths"),
    getJson(telPath),
    getJson("/switches"),
    getJson("/classes"),
    getJson(`/decisions?since=${state.decisionsT}&limit=1000`),
    getJson("/mptcp/connections"),
    getJson("/links"),
    ...fabricGets(),
  ]);
  Object.assign(state, { paths, switches, classes, mptcp, links });
  if (seriesOf === state.seriesOf) mergeTelemetry(tel);  // not if the pick changed meanwhile
  if (pairs) Object.assign(state, { pairs, pairDecisions: pairDec });
  mergeDecisions(dec);
  render();
}

// One poll at a time: a call while one is in flight returns that one.
function poll() {
  state.polling ||= pollOnce()
    .then(() => { $("status").textContent = "live"; $("status").className = "status ok"; })
    .catch((e) => {
      window.mpschedUi.errors++;
      $("status").textContent = `not reachable: ${e.message}`;
      $("status").className = "status bad";
    })
    .finally(() => { state.polling = null; });
  return state.polling;
}

// -- views --------------------------------------------------------------------------------

// A fabric (GET /links lists links) is drawn by fabric.js; two edges as below.
function isFabric() { return state.links.length > 0; }

function render() {
  renderDirections();
  renderTopology();
  renderPaths();
  renderCharts();
  renderClasses();
  renderDecisions();
  renderSwitches();
  renderMptcp();
  const ui = window.mpschedUi;
  ui.renders++;
  if (ui.firstRenderMs === null) {
    ui.firstRenderMs = performance.now();
    document.body.dataset.rendered = "1";
  }
}

function renderDirections() {
  if (isFabric()) { renderPairSelect(); return; }
  const select = $("direction");
  const dirs = [...new Set(state.paths.flatMap((p) => Object.keys(p.telemetry || {})))].sort();
  if (dirs.join() === [...select.options].map((o) => o.value).join()) return;
  const keep = select.value;
  select.replaceChildren(...dirs.map((d) => el("option", { value: d, text: d })));
  if (dirs.includes(keep)) select.value = keep;
}

function current(p) { return (p.telemetry || {})[direction()] || {}; }

function renderTopology() {
  if (isFabric()) { renderFabric(); return; }
  const svg = $("topology");
  const names = state.switches.map((s) => s.name);
  const [a, b] = [names[0] || "s1", names[1] || "s2"];
  const n = Math.max(state.paths.length, 1);
  const rowH = Math.max(30, 40 * n);
  svg.setAttribute("viewBox", `0 0 720 ${rowH + 20}`);
  const box = (x, name) => el("g", {},
    el("rect", { x: x - 30, y: 10, width: 60, height: rowH, rx: 6, fill: "#e8eef5",
      stroke: "#1d3557" }),
    el("text", { x, y: 14 + rowH / 2, "text-anchor": "middle", text: name }));
  const lines = state.paths.map((p, i) => {
    const y = 10 + rowH * (i + 0.5) / n;
    const t = current(p);
    const down = p.admin === "down";
    const dead = t.alive === false;
    const mbps = (p.rate_bps || 0) / 1e6;
    const rate = p.configured_rate_mbps ? ` · ${p.configured_rate_mbps} Mbit/s` : "";
    const label = `path ${p.id}${rate} · ${down ? "admin down" : dead ? "dead" : "up"}`
      + ` · ${mbps.toFixed(2)} Mbit/s placed`;
    return el("g", { class: "path", "data-path": p.id, "data-admin": p.admin,
      "data-alive": String(t.alive), "data-mbps": mbps.toFixed(3),
      "data-inflight": String(t.inflight_bytes) },
    el("line", { x1: 90, x2: 630, y1: y, y2: y, "stroke-width": 2 + Math.min(8, mbps),
      stroke: down || dead ? "#c0392b" : pathColor(p.id),
      "stroke-dasharray": down ? "6 4" : dead ? "2 3" : null }),
    el("text", { x: 360, y: y - 6, "text-anchor": "middle", text: label }));
  });
  svg.replaceChildren(box(60, a), box(660, b), ...lines);
}

function renderPaths() {
  for (const th of document.querySelectorAll("#paths th.control")) th.hidden = isFabric();
  const rows = syncRows($("paths").tBodies[0], state.paths.map((p) => String(p.id)), (id) => {
    const path = state.paths.find((p) => String(p.id) === id);
    const weight = el("input", { type: "number", min: 0, max: 255, value: path.weight });
    const admin = el("button", { class: "admin", onclick: (e) => {
      const up = e.target.dataset.next === "up";
      put(`/paths/${id}/admin`, { state: up ? "up" : "down" });
    } });
    const set = el("button", { class: "set-weight", text: "set", onclick: () => {
      // a weight replaces the default class's policy by wcmp (docs/rest.md): asked first
      const now = state.classes.find((c) => c.id === 0)?.policy.name;
      if (now !== "wcmp" && !window.confirm(`A path weight makes the default class run wcmp `
        + `with the weights of every path, in place of ${now}. Set it?`)) return;
      put(`/paths/${id}/weight`, { weight: Number(weight.value) });
    } });
    const row = el("tr", {});
    for (let i = 0; i < 9; i++) row.append(el("td", { class: i >= 4 ? "num" : "" }));
    row.append(el("td", {}, weight, set), el("td", {}, admin));
    return row;
  });
  state.paths.forEach((p, i) => {
    const t = current(p);
    const row = rows[i];
    const rate = p.configured_rate_mbps ? `${p.configured_rate_mbps} Mbit/s` : "–";
    const alive = t.alive === undefined ? "–" : t.alive ? "alive" : "dead";
    setCells(row, [String(p.id), rate, p.admin, alive,
      fmt((p.rate_bps || 0) / 1e6), fmt(t.goodput_mbps), fmt(t.srtt_ms), percent(t.loss),
      kilo(t.inflight_bytes)]);
    row.cells[2].className = p.admin;
    row.cells[3].className = t.alive ? "alive" : "dead";
    // on a fabric path N is a different route for every pair: links are taken down instead
    row.cells[9].hidden = row.cells[10].hidden = isFabric();
    const button = row.cells[10].firstChild;
    button.dataset.next = p.admin === "down" ? "up" : "down";
    button.textContent = p.admin === "down" ? "set up" : "set down";
  });
}

function renderDecisions() {
  const loop = state.loop;
  if (loop) {
    $("loop").textContent = `control loop p50 ${fmt(loop.latency_ms_p50)} ms, p99 `
      + `${fmt(loop.latency_ms_p99)} ms, ${loop.iterations} iterations, ${loop.writes} writes, `
      + `period ${loop.control_period_ms} ms`;
  }
  const fabricPair = isFabric() && state.pairDecisions;
  $("decisions-title").textContent = fabricPair ? `Decisions of ${direction()}` : "Decisions";
  const shown = fabricPair ? state.pairDecisions.decisions.slice().reverse()
    : state.decisions.slice(-SHOWN_DECISIONS).reverse();
  const kv = (o) => Object.entries(o || {}).map(([k, v]) => `${k}:${fmt(v, 3)}`).join(" ");
  const keys = new Set(shown.map(decisionKey));
  state.openReasons = new Set([...state.openReasons].filter((k) => keys.has(k)));
  $("decisions").tBodies[0].replaceChildren(...shown.map((d) => el("tr",
    { "data-key": decisionKey(d) },
    ...[clock(d.t), d.switch, d.class_id, d.policy, kv(d.weights), d.mode]
      .map((v) => el("td", { text: String(v) })), reasonCell(d, kv))));
}

function decisionKey(d) { return `${d.t}|${d.switch}|${d.class_id}`; }

// The reason in words (reasons.js), the policy's own line and scores on demand: a details
// element that stays open across polls (the rows are redrawn every poll).
function reasonCell(d, kv) {
  const words = reasonWords(d);
  const key = decisionKey(d);
  const details = el("details", { class: "coefficients", open: state.openReasons.has(key)
    ? "" : null, ontoggle: (e) => {
    if (e.target.open) state.openReasons.add(key); else state.openReasons.delete(key);
  } },
  el("summary", { text: "coefficients" }),
  el("div", { class: "raw", text: d.reason }),
  el("div", { class: "raw", text: `scores: ${kv(d.scores) || "–"}` }));
  return el("td", { class: "reason" }, el("div", { class: "summary", text: words.summary }),
    ...(words.lines.length ? [el("ul", {}, ...words.lines.map((l) => el("li", { text: l })))]
      : []),
    details);
}

function renderSwitches() {
  $("switches").tBodies[0].replaceChildren(...state.switches.map((s) => {
    const prog = s.programmed ? `${s.programmed.how} (${s.programmed.detail})` : "–";
    const drops = Object.entries(s.drops || {}).filter(([, v]) => v)
      .map(([k, v]) => `${k}: ${v} packets`).join(", ") || "none";
    return el("tr", { "data-switch": s.name },
      ...[s.name, s.state + (s.error ? `: ${s.error}` : ""), prog, drops]
        .map((v) => el("td", { text: v })));
  }));
}

function renderMptcp() {
  const m = state.mptcp || { connections: [] };
  $("steering").textContent = `steering ${m.steering ? "on" : "off"}`;
  const rows = m.connections.flatMap((c) => c.subflows.map((s, i) => el("tr", {},
    ...[i ? "" : String(c.id), i ? "" : `${c.server_token} / ${c.client_token}`,
      `${s.src}:${s.sport} → ${s.dst}:${s.dport}${s.initial ? " (initial)" : ""}`,
      s.path_id ?? "unpinned", s.packets, fmt(s.idle_s, 1)]
      .map((v) => el("td", { text: String(v) })))));
  $("mptcp").tBodies[0].replaceChildren(...rows);
}

// -- start --------------------------------------------------------------------------------

async function start() {
  tokenFromAddress();
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem("mpsched-token", $("token").value.trim());
    $("token").value = "";
    $("token-state").textContent = token() ? "token set (this tab only)" : "no token";
    // the first reads may have been refused for want of it: start again (the token stays)
    if (!state.policies.length) location.reload(); else poll();
  });
  $("token-state").textContent = token() ? "token set (this tab only)" : "no token";
  $("window").addEventListener("change", renderCharts);
  $("direction").addEventListener("change", () => { render(); if (isFabric()) poll(); });
  try {
    const [params, links] = await Promise.all([getJson("/params"), getJson("/links")]);
    state.policies = Object.keys(params.schema.policies).sort();
    // a fabric: the pairs first, so that the first poll fetches one pair's history only
    state.links = links;
    if (isFabric()) { state.pairs = await getJson("/pairs"); renderPairSelect(); }
  } catch (e) {
    showMessage(e.message, true);
  }
  const loop = async () => { await poll(); setTimeout(loop, POLL_MS); };
  loop();
}

start();

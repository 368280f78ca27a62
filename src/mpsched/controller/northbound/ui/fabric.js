// mpsched operator dashboard, the fabric view (app.js calls it when GET /links lists links):
// the switches laid out in layers (edges in the bottom row, every other switch a row above its
// nearest edge: a leaf-spine's spines above its leaves), each link as two lines, one per
// direction, coloured by its live utilisation (GET /links; labelled with it, or with a pair
// picked, only its paths' links; every link's numbers in its tooltip), admin-down links
// red and dashed, links the controller holds failed (inferred) red and finely dashed, unused
// ones dotted. A click on a link takes it admin down or up (PUT /links/{name}/admin); clicking
// two edges, or the pair select, picks a pair: its paths are highlighted, the charts and the
// paths table show its direction, the decisions table its decisions (GET /decisions?pair=).
// The pair's MPTCP connections (GET /mptcp/connections, either direction) are listed with
// their subflows' paths; hovering or clicking one marks the paths its subflows are pinned to.
"use strict";

const FABRIC_ROW_H = 140;
const FABRIC_COL_W = 90;
const BOX_W = 58, BOX_H = 24;

function naturalSort(names) {
  return [...names].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
}

function fabricEdges() {
  return new Set(state.pairs.flatMap((p) => [p.ingress, p.egress]));
}

// {name: {x, y, layer}}: edges in layer 0, every other switch in its BFS distance from the
// nearest edge; within a row edges by name, others by the mean position of their neighbours
// one row below (fewer crossings), then name.
function fabricLayout(links, edges, minWidth) {
  const adj = new Map();
  const add = (a, b) => { if (!adj.has(a)) adj.set(a, []); adj.get(a).push(b); };
  for (const l of links) { add(l.a, l.b); add(l.b, l.a); }
  for (const e of edges) if (!adj.has(e)) adj.set(e, []);
  const layer = new Map([...edges].map((e) => [e, 0]));
  let frontier = [...edges];
  while (frontier.length) {
    const next = [];
    for (const s of frontier) {
      for (const n of adj.get(s)) {
        if (!layer.has(n)) { layer.set(n, layer.get(s) + 1); next.push(n); }
      }
    }
    frontier = next;
  }
  for (const s of adj.keys()) if (!layer.has(s)) layer.set(s, 1);  // not reachable from an edge
  const depth = Math.max(...layer.values());
  const rows = Array.from({ length: depth + 1 }, () => []);
  for (const [s, l] of layer) rows[l].push(s);
  const widest = Math.max(...rows.map((r) => r.length));
  const width = Math.max(minWidth, widest * FABRIC_COL_W);
  const height = (depth + 1) * FABRIC_ROW_H;
  const pos = {};
  rows.forEach((row, l) => {
    let order = naturalSort(row);
    if (l > 0) {
      const mean = (s) => {
        const below = adj.get(s).filter((n) => layer.get(n) === l - 1).map((n) => pos[n].x);
        return below.length ? below.reduce((x, y) => x + y, 0) / below.length : 0;
      };
      const keys = new Map(order.map((s) => [s, mean(s)]));
      order = order.sort((a, b) => keys.get(a) - keys.get(b));
    }
    order.forEach((s, i) => {
      pos[s] = { x: width * (i + 0.5) / order.length,
        y: height - FABRIC_ROW_H / 2 - l * FABRIC_ROW_H, layer: l };
    });
  });
  return { pos, width, height };
}

function utilColor(u) {
  if (u === null || u === undefined) return "#9aa5b1";
  const hue = 120 * (1 - Math.min(1, Math.max(0, u)));
  return `hsl(${hue.toFixed(0)}, 70%, 38%)`;
}

function loadText(d) {
  if (d.mbps === null || d.mbps === undefined) return "–";
  return d.utilisation === null || d.utilisation === undefined ? `${fmt(d.mbps, 1)} Mbit/s`
    : `${(100 * d.utilisation).toFixed(0)}%`;
}

function loadTitle(d) {
  const rate = d.rate_mbps ? ` of ${d.rate_mbps} Mbit/s` : "";
  return `${d.src} → ${d.dst} (port ${d.port}): ${fmt(d.mbps)} Mbit/s${rate}`;
}

// A line from p to q shifted `off` pixels to its left (seen from p).
function shifted(p, q, off) {
  const dx = q.x - p.x, dy = q.y - p.y, len = Math.hypot(dx, dy) || 1;
  const nx = -dy / len * off, ny = dx / len * off;
  return { x1: p.x + nx, y1: p.y + ny, x2: q.x + nx, y2: q.y + ny };
}

function linkGroup(l, pos, onPair) {
  const a = pos[l.a], b = pos[l.b];
  const failed = l.inferred === "down";
  const down = l.admin === "down" || failed;
  const dash = l.admin === "down" ? "6 4" : failed ? "3 2" : l.alive ? null : "2 3";
  const dir = (d, p, q, cls) => {
    const u = d.utilisation ?? null;
    return el("line", { class: `dir ${cls}`, ...shifted(p, q, 2.5), stroke: down ? "#c0392b"
      : utilColor(u), "stroke-width": 2 + 4 * Math.min(1, u || 0), "stroke-dasharray": dash },
    el("title", { text: loadTitle(d) }));
  };
  const label = (d, p, q, side) => {
    const s = shifted(p, q, side * 9);
    return el("text", { class: "load", x: s.x1 + (s.x2 - s.x1) * 0.3,
      y: s.y1 + (s.y2 - s.y1) * 0.3 + 3, "text-anchor": "middle", text: loadText(d) });
  };
  const name = l.name;
  const hit = el("line", { class: "link-hit", x1: a.x, y1: a.y, x2: b.x, y2: b.y,
    onclick: () => put(`/links/${encodeURIComponent(name)}/admin`,
      { state: l.admin === "down" ? "up" : "down" }) },
  el("title", { text: `${name}: admin ${l.admin}, inferred ${l.inferred}, ${l.paths} paths; click: set `
    + (l.admin === "down" ? "up" : "down") }));
  return el("g", { class: "link" + (onPair ? " on-pair" : ""), "data-link": name, "data-admin": l.admin,
    "data-inferred": l.inferred, "data-alive": String(l.alive), "data-forward-mbps": String(l.forward.mbps),
    "data-reverse-mbps": String(l.reverse.mbps) },
  dir(l.forward, a, b, "forward"), dir(l.reverse, b, a, "reverse"),
  label(l.forward, a, b, 1), label(l.reverse, b, a, 1), hit);
}

// The selected pair's paths: a halo per path under the links it crosses, side by side.
function pairHalos(pair, pos) {
  if (!pair) return [];
  const n = pair.paths.length;
  return pair.paths.flatMap((p, i) => p.links.map((name, j) => {
    const s = pos[p.switches[j]], t = pos[p.switches[j + 1]];
    if (!s || !t) return null;
    return el("line", { class: "pair-path", "data-path": p.id, "data-link": name,
      ...shifted(s, t, (i - (n - 1) / 2) * 5), stroke: pathColor(p.id),
      "stroke-width": 10, "stroke-opacity": 0.55, "stroke-linecap": "round" });
  }).filter(Boolean));
}

// Clicking an edge starts a pick; a second edge picks the pair first -> second.
function pickEdge(name) {
  if (!state.pickFrom || state.pickFrom === name) {
    state.pickFrom = state.pickFrom === name ? null : name;
  } else {
    const key = `${state.pickFrom}->${name}`;
    state.pickFrom = null;
    if (state.pairs.some((p) => p.id === key)) selectPair(key);
  }
  renderFabric();
}

function selectPair(key) {
  $("direction").value = key;
  render();
  poll();  // its decisions
}

function switchBox(name, p, edge, pair) {
  const ends = pair ? [pair.ingress, pair.egress] : [];
  const picked = state.pickFrom === name;
  return el("g", { class: "switch" + (edge ? " edge" : ""), "data-switch": name,
    "data-role": edge ? "edge" : "transit",
    onclick: edge ? () => pickEdge(name) : null },
  el("rect", { x: p.x - BOX_W / 2, y: p.y - BOX_H / 2, width: BOX_W, height: BOX_H, rx: 5,
    fill: picked ? "#ffe8a3" : edge ? "#e8eef5" : "#eef0e6",
    stroke: "#1d3557", "stroke-width": ends.includes(name) ? 3 : 1 }),
  el("text", { x: p.x, y: p.y + 4, "text-anchor": "middle", text: name }));
}

// The MPTCP connections with a subflow in either direction of the pair.
function pairConnections(pair) {
  if (!pair) return [];
  const ids = [pair.id, `${pair.egress}->${pair.ingress}`];
  return (state.mptcp?.connections || [])
    .filter((c) => c.subflows.some((s) => ids.includes(s.pair)));
}

// The path a subflow is pinned to, in its own direction's pair; null while unpinned.
function subflowPath(s) {
  const pair = state.pairs.find((p) => p.id === s.pair);
  return pair?.paths.find((p) => p.id === s.path_id) || null;
}

// The focused connection of the pair: a dashed line along each link of each subflow's path.
function connectionMarks(pos, pair) {
  const id = state.connHover ?? state.connPick;
  const conn = pairConnections(pair).find((c) => c.id === id);
  if (!conn) return [];
  return conn.subflows.flatMap((s, k) => {
    const path = subflowPath(s);
    if (!path) return [];
    return path.links.map((name, j) => {
      const a = pos[path.switches[j]], b = pos[path.switches[j + 1]];
      if (!a || !b) return null;
      return el("line", { class: "mptcp-path", "data-conn": conn.id, "data-subflow": k,
        "data-path": path.id, "data-link": name, ...shifted(a, b, 0),
        stroke: pathColor(path.id) },
      el("title", { text: `connection ${conn.id}: ${s.src}:${s.sport} → ${s.dst}:${s.dport}`
        + ` on path ${path.id}` }));
    }).filter(Boolean);
  });
}

// A hover redraws the drawing only: rows replaced under the pointer would be entered again.
function focusConnection(id, pick) {
  if (pick) {
    state.connPick = state.connPick === id ? null : id;
    renderFabric();
  } else if (state.connHover !== id) {
    state.connHover = id;
    drawFabric();
  }
}

// The table's body stays (its rows are redrawn every poll): it handles the pointer for them.
function bindPairMptcp(body) {
  const conn = (e) => {
    const tr = e.target.closest("tr[data-conn]");
    return tr ? Number(tr.dataset.conn) : null;
  };
  body.addEventListener("mouseover", (e) => focusConnection(conn(e), false));
  body.addEventListener("mouseleave", () => focusConnection(null, false));
  body.addEventListener("click", (e) => { if (conn(e) !== null) focusConnection(conn(e), true); });
  body.dataset.bound = "1";
}

// The pair's MPTCP connections: a row per subflow with its pair and path (switches).
function renderPairMptcp(pair) {
  const table = $("pair-mptcp");
  if (!table.tBodies[0].dataset.bound) bindPairMptcp(table.tBodies[0]);
  const conns = pairConnections(pair);
  table.hidden = !pair;
  $("pair-mptcp-title").textContent = pair ? `MPTCP connections of ${pair.id} (either way)`
    + (conns.length ? "; hover or click one: its subflows' paths" : ": none") : "";
  table.tBodies[0].replaceChildren(...conns.flatMap((c) => c.subflows.map((s, k) => {
    const path = subflowPath(s);
    return el("tr", { "data-conn": c.id, "data-subflow": k,
      class: c.id === state.connPick ? "picked" : null },
    ...[k ? "" : String(c.id), `${s.src}:${s.sport} → ${s.dst}:${s.dport}`, s.pair ?? "–",
      path ? String(path.id) : "unpinned", path ? path.switches.join(" → ") : ""]
      .map((v, i) => el("td", { text: v, style: i === 3 && path
        ? { color: pathColor(path.id), fontWeight: "600" } : null })));
  })));
}

function renderFabric() {
  drawFabric();
  renderPairMptcp(state.pairs.find((p) => p.id === direction()));
}

function drawFabric() {
  const svg = $("topology");
  const edges = fabricEdges();
  // one SVG unit a pixel: the boxes and labels keep their size whatever the page's width
  const { pos, width, height } = fabricLayout(state.links, edges, svg.clientWidth || 720);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("height", height);
  const pair = state.pairs.find((p) => p.id === direction());
  const onPair = new Set(pair ? pair.paths.flatMap((p) => p.links) : []);
  svg.classList.add("fabric");
  svg.classList.toggle("has-pair", Boolean(pair));
  $("topology-view").classList.add("fabric");
  svg.replaceChildren(
    ...pairHalos(pair, pos),
    ...state.links.map((l) => linkGroup(l, pos, onPair.has(l.name))),
    ...connectionMarks(pos, pair),
    ...Object.entries(pos).map(([name, p]) => switchBox(name, p, edges.has(name), pair)));
  const hint = state.pickFrom ? ` · from ${state.pickFrom}: click the destination edge`
    : " · click a link: admin down/up; two edges: their pair";
  $("topology-title").textContent = `Fabric${pair ? ": pair " + pair.id : ""}${hint}`;
}

function renderPairSelect() {
  const select = $("direction");
  const ids = state.pairs.map((p) => p.id);
  if (ids.join() === [...select.options].map((o) => o.value).join()) return;
  const keep = select.value;
  select.replaceChildren(...ids.map((d) => el("option", { value: d, text: d })));
  if (ids.includes(keep)) select.value = keep;
  $("direction-label").firstChild.textContent = "pair ";
}

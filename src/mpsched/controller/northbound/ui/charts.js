// mpsched operator dashboard, the charts over time (app.js draws them every poll): one SVG per
// metric, a line per path. The time axis fits the history the page has (it grows, in round
// steps, up to the window the operator picked: a page opened 45 s ago spans 45 s, not 5 min);
// every axis names its unit. The pure helpers (timeSpan, agoText, unitFor) need no page: the
// unit tests run them in Node (tests/unit/controller/northbound/test_ui_js.py).
"use strict";

// key, title, unit: a fixed unit ("ms"), or "%" of a fraction, or "bytes" (B, kB or MB by
// the largest value shown).
const METRICS = [
  ["goodput_mbps", "goodput", "Mbit/s"],
  ["srtt_ms", "srtt", "ms"],
  ["owd_ms", "queueing delay (one-way)", "ms"],
  ["loss", "loss", "%"],
  ["inflight_bytes", "in flight", "bytes"],
];
// The axis' spans (s): the shortest one holding the history, capped by the window; a span
// leaves at most a third of the axis empty (45 s of history: 45 s, 50 s of it: 60 s).
const SPANS_S = [10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 420, 600];

// The time axis' span for `historyS` seconds of history in a `windowS` window.
function timeSpan(historyS, windowS) {
  const fit = SPANS_S.find((s) => s >= historyS) ?? SPANS_S[SPANS_S.length - 1];
  return Math.min(windowS, fit);
}

// "-45 s", "-2 min", "-1.5 min": how long before the newest sample a tick is.
function agoText(s) {
  if (s < 120) return `-${Math.round(s)} s`;
  const min = s / 60;
  return `-${Number.isInteger(min) ? min : min.toFixed(1)} min`;
}

// How values of `unit` are shown when the largest is `max`: {unit, scale} (value * scale).
function unitFor(unit, max) {
  if (unit === "%") return { unit: "%", scale: 100 };
  if (unit !== "bytes") return { unit, scale: 1 };
  if (max >= 1e6) return { unit: "MB", scale: 1e-6 };
  if (max >= 1e3) return { unit: "kB", scale: 1e-3 };
  return { unit: "B", scale: 1 };
}

// The oldest sample time of the shown direction within the window (null: no samples).
function oldestShown(now, windowS) {
  let oldest = null;
  for (const dirs of Object.values(state.series)) {
    for (const s of dirs[direction()] || []) {
      if (s.t >= now - windowS && (oldest === null || s.t < oldest)) oldest = s.t;
    }
  }
  return oldest;
}

function chart(metric, now, span) {
  const [key, title, baseUnit] = metric;
  const W = 300, H = 110, L = 44, B = 16;
  const lines = [];
  let max = 0;
  for (const [pid, dirs] of Object.entries(state.series)) {
    const pts = (dirs[direction()] || []).filter((s) => s.t >= now - span);
    for (const s of pts) if (typeof s[key] === "number") max = Math.max(max, s[key]);
    lines.push([pid, pts]);
  }
  const shown = unitFor(baseUnit, max);
  max = max > 0 ? max * 1.1 : 1;
  const x = (t) => L + (W - L - 4) * (t - (now - span)) / span;
  const y = (v) => 4 + (H - B - 8) * (1 - v / max);
  const paths = lines.map(([pid, pts]) => {
    let d = "", pen = "M";
    for (const s of pts) {
      if (typeof s[key] !== "number") { pen = "M"; continue; }
      d += `${pen}${x(s.t).toFixed(1)},${y(s[key]).toFixed(1)}`;
      pen = "L";
    }
    return el("path", { class: "series", d: d || "M0,0", fill: "none", stroke: pathColor(pid),
      "stroke-width": 1.5, "data-path": pid, "data-empty": d ? null : "1" });
  });
  const top = max * shown.scale;
  return el("svg", { class: "chart", "data-metric": key, "data-span-s": span,
    "data-unit": shown.unit, viewBox: `0 0 ${W} ${H}` },
  el("text", { x: L, y: 10, text: `${title}, ${shown.unit}` }),
  el("line", { x1: L, x2: L, y1: 4, y2: H - B, stroke: "#999" }),
  el("line", { class: "x-axis", x1: L, x2: W - 4, y1: H - B, y2: H - B, stroke: "#999" }),
  el("text", { x: L - 3, y: 12, "text-anchor": "end", text: fmt(top, top < 1 ? 3 : 1) }),
  el("text", { x: L - 3, y: H - B, "text-anchor": "end", text: "0" }),
  el("text", { x: L, y: H - 3, text: agoText(span) }),
  el("text", { x: (L + W - 4) / 2, y: H - 3, "text-anchor": "middle", text: agoText(span / 2) }),
  el("text", { x: W - 4, y: H - 3, "text-anchor": "end", text: "now" }),
  ...paths);
}

function renderCharts() {
  const now = state.lastT || Date.now() / 1000;
  const oldest = oldestShown(now, windowS());
  const span = timeSpan(oldest === null ? 0 : now - oldest, windowS());
  $("charts").replaceChildren(...METRICS.map((m) => chart(m, now, span)));
  $("legend").replaceChildren(...Object.keys(state.series).map((pid) =>
    el("span", { style: { color: pathColor(pid) }, text: `━ path ${pid}` })));
}

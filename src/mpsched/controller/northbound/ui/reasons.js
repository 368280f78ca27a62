// mpsched operator dashboard, a decision's reason in words (app.js shows them in the decisions
// table, the policy's own reason line and scores behind "coefficients"). From the decision's
// weights, mode and `inputs` (GET /decisions: per path alive and the measurements the policy
// decided on) it says where the traffic goes and what sets the favoured path apart from the
// others: "path 2: lower queueing delay (12 ms vs 30 ms on path 1)". Pure functions, no page:
// the unit tests run them in Node (tests/unit/controller/northbound/test_ui_js.py).
"use strict";

// key, words, unit, scale (shown = value * scale), the least difference that counts (in the
// shown unit; a difference must also be 10 % of the larger value), which way is better.
const MEASURES = {
  owd_ms: ["queueing delay", "ms", 1, 1, "lower"],
  loss: ["loss", "%", 100, 0.1, "lower"],
  srtt_ms: ["srtt", "ms", 1, 1, "lower"],
  spare_mbps: ["spare capacity", "Mbit/s", 1, 1, "higher"],
};
// The measures a policy weighs, most first (its module in src/mpsched/controller/policies/ says how);
// a policy not named here: DEFAULT_MEASURES.
const POLICY_MEASURES = {
  minrtt: ["srtt_ms"],
  cmtla: ["loss", "srtt_ms"],
  "cmtla-ca": ["loss", "srtt_ms", "owd_ms"],
  llhd: ["spare_mbps", "srtt_ms", "loss"],
  "llhd-ca": ["owd_ms", "spare_mbps", "loss"],
};
const DEFAULT_MEASURES = ["owd_ms", "loss", "srtt_ms", "spare_mbps"];
// Policies that place by a rule, not by measurements: what they do.
const RULES = {
  ecmp: "equal weights over the alive paths, flows hashed",
  rr: "packets in turn over the alive paths",
  letflow: "each flowlet on a random alive path",
  wcmp: "the configured weights",
};
const UNIT_OF_MODE = { hash: "flows", flowlet: "flowlets", rr: "packets", vq: "flowlets",
  ca: "flowlets" };

function listIds(ids) {
  return (ids.length > 1 ? "paths " : "path ") + ids.join(", ");
}

function shown(value, unit) {
  const digits = Math.abs(value) >= 10 ? 0 : Math.abs(value) >= 1 ? 1 : 2;
  return `${value.toFixed(digits)} ${unit}`;
}

// A path's measure, null when not measured (spare capacity: capacity less goodput).
function measure(input, key) {
  if (!input) return null;
  if (key === "spare_mbps") {
    return typeof input.capacity_mbps === "number" && typeof input.goodput_mbps === "number"
      ? Math.max(0, input.capacity_mbps - input.goodput_mbps) : null;
  }
  return typeof input[key] === "number" ? input[key] : null;
}

function span(values, unit) {
  const lo = Math.min(...values), hi = Math.max(...values);
  return lo === hi ? shown(lo, unit) : `${shown(lo, unit).split(" ")[0]}–${shown(hi, unit)}`;
}

// What path `best` does better than the `others` (input of each by id), up to two measures in
// the policy's order, in words: "lower srtt (12 ms vs 30–41 ms on paths 1, 3)"; and the others
// it does nothing better than.
function advantages(inputs, best, others, keys) {
  const out = [];
  const beaten = new Set();
  for (const key of keys) {
    const [words, unit, scale, least, better] = MEASURES[key];
    const va = measure(inputs[best], key);
    if (va === null) continue;
    const sa = va * scale;
    const worse = others.filter((o) => {
      const vb = measure(inputs[o], key);
      if (vb === null) return false;
      const sb = vb * scale;
      const gain = better === "lower" ? sb - sa : sa - sb;
      return gain >= least && gain >= 0.1 * Math.max(Math.abs(sa), Math.abs(sb));
    });
    if (!worse.length) continue;
    worse.forEach((o) => beaten.add(o));
    const theirs = span(worse.map((o) => measure(inputs[o], key) * scale), unit);
    out.push(`${better} ${words} (${shown(sa, unit)} vs ${theirs} on ${listIds(worse)})`);
    if (out.length === 2) break;
  }
  return { words: out, alike: others.filter((o) => !beaten.has(o)) };
}

function baseName(policy) { return String(policy || "").replace(/\+lm3$/, ""); }

// Where the traffic goes: {favoured, others} path ids (others: alive, compared with it) and
// the sentence.
function placement(d, alive) {
  const weights = Object.entries(d.weights || {}).map(([p, w]) => [p, Number(w)]);
  const active = weights.filter(([, w]) => w > 0).map(([p]) => p);
  const unit = UNIT_OF_MODE[d.mode] || "traffic";
  if (d.mode === "ca" || d.mode === "vq") {
    const by = d.mode === "ca" ? "least live cost" : "least virtual-queue time";
    // mode ca's scores are the estimated costs (lower is better); vq's say nothing here
    const scored = d.mode === "ca" ? active.filter((p) => typeof d.scores?.[p] === "number")
      : [];
    const favoured = scored.length ? scored.reduce((x, y) => (d.scores[y] < d.scores[x] ? y : x))
      : null;
    return { favoured, others: active.filter((p) => p !== favoured && alive.includes(p)),
      text: `the switch sends each new flowlet on the path of ${by} among ${listIds(active)}`
        + (favoured ? ` (now path ${favoured})` : "") };
  }
  if (!active.length) return { favoured: null, others: [], text: "no path has a weight" };
  const top = Math.max(...active.map((p) => d.weights[p]));
  const low = Math.min(...active.map((p) => d.weights[p]));
  const favoured = active.find((p) => d.weights[p] === top);
  const others = weights.filter(([p, w]) => p !== favoured && w < top && alive.includes(p))
    .sort((x, y) => x[1] - y[1]).map(([p]) => p);
  if (active.length === 1) return { favoured, others, text: `all ${unit} on path ${favoured}` };
  if (low === top) return { favoured: null, others: [],
    text: `${unit} spread evenly over ${listIds(active)}` };
  const even = low / top >= 0.9 ? "almost evenly " : "";
  const most = active.filter((p) => d.weights[p] === top);
  return { favoured, others, text: `${unit} spread ${even}over ${listIds(active)}, most on `
    + listIds(most) };
}

// {summary, lines}: a decision (an entry of GET /decisions) in words.
function reasonWords(d) {
  const name = baseName(d.policy);
  const inputs = d.inputs || {};
  if (String(d.reason || "").includes("no path alive")) {
    return { summary: "no path alive: equal weights, the switches' failover decides", lines: [] };
  }
  const alive = Object.keys(inputs).filter((p) => inputs[p].alive);
  const where = placement(d, alive.length ? alive : Object.keys(d.weights || {}));
  const lines = [];
  if (RULES[name]) {
    lines.push(`${name}: ${RULES[name]}; measurements are not used`);
  } else if (where.favoured !== null && Object.keys(inputs).length) {
    const keys = POLICY_MEASURES[name] || DEFAULT_MEASURES;
    const { words, alike } = advantages(inputs, where.favoured, where.others, keys);
    if (words.length) lines.push(`path ${where.favoured}: ${words.join(", ")}`);
    if (alike.length) {
      lines.push(`path ${where.favoured} and ${listIds(alike)} measure alike: the policy's `
        + "scores decide (coefficients)");
    }
  }
  const dead = Object.keys(inputs).filter((p) => !inputs[p].alive);
  if (dead.length) lines.push(`${listIds(dead)} not alive (or admin down): no traffic`);
  const unmeasured = alive.filter((p) => measure(inputs[p], "srtt_ms") === null
    && measure(inputs[p], "owd_ms") === null);
  if (unmeasured.length && !RULES[name]) {
    lines.push(`${listIds(unmeasured)}: no delay measured yet`);
  }
  if (String(d.policy).endsWith("+lm3")) {
    lines.push("LM3 takes a path out while it reorders too much (coefficients)");
  }
  return { summary: where.text, lines };
}

// Node (the unit tests) loads this file as a module; the page as a plain script.
if (typeof module !== "undefined") module.exports = { reasonWords, advantages, placement };
